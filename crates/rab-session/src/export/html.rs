//! The HTML export: one page holding every entry of the tree in file order, with the
//! active branch shown and a sidebar of branches. Each entry names its parent and the
//! newest leaf below it (`data-parent`, `data-tip`), so the inline script can show any
//! branch by walking parents from a leaf, with no server and no network.

use rab_ai::{AssistantBlock, AssistantMessage, Content, Message, ToolCall, ToolResultMessage};
use serde_json::Value;

use super::markdown::{diff_of, without_diff};
use super::markup::{diff, escape, escape_into, markdown, pre};
use super::tree::Tree;
use crate::{EntryBody, Tape};

const TEMPLATE: &str = include_str!("../export_assets/page.html");
const STYLE: &str = include_str!("../export_assets/style.css");
const SCRIPT: &str = include_str!("../export_assets/app.js");

/// Output longer than this many lines (or [`FOLD_CHARS`]) starts folded.
const FOLD_LINES: usize = 30;
const FOLD_CHARS: usize = 3000;
/// Diffs are the point of the page: shown open unless really long.
const FOLD_DIFF_LINES: usize = 400;

/// The whole page.
pub(super) fn page(tape: &Tape) -> String {
    let tree = Tree::new(tape);
    let first_user = tape.active_branch().into_iter().find_map(|e| match e.message() {
        Some(Message::User(u)) => Some(super::markdown::user_text(&u.content)),
        Some(Message::Assistant(_) | Message::ToolResult(_) | Message::System(_)) | None => None,
    });
    let title = match first_user {
        Some(text) => format!("rab session: {}", super::snippet(&text, 80)),
        None => format!("rab session {}", tape.id()),
    };
    let mut header = String::new();
    header_html(&mut header, tape, &tree);
    let mut sidebar = String::new();
    sidebar_html(&mut sidebar, &tree);
    let mut entries = String::new();
    for i in 0..tree.entries.len() {
        entry_html(&mut entries, &tree, i);
        entries.push('\n');
    }
    fill(
        TEMPLATE,
        &[
            ("title", &escape(&title)),
            ("style", STYLE),
            ("script", SCRIPT),
            ("header", &header),
            ("sidebar", &sidebar),
            ("entries", &entries),
        ],
    )
}

/// Replaces each `{{name}}` of the template once; inserted text is not scanned again.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let extra: usize = values.iter().map(|(_, v)| v.len()).sum();
    let mut out = String::with_capacity(template.len() + extra);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = &after[..end];
        match values.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn header_html(out: &mut String, tape: &Tape, tree: &Tree<'_>) {
    let h = tape.header();
    out.push_str("<h1>Session <code>");
    escape_into(out, &h.id);
    out.push_str("</code></h1><dl class=\"info\"><dt>cwd</dt><dd><code>");
    escape_into(out, &h.cwd);
    out.push_str("</code></dd><dt>created</dt><dd>");
    escape_into(out, &h.timestamp);
    out.push_str("</dd>");
    if let Some(parent) = &h.parent_session {
        out.push_str("<dt>continued from</dt><dd><code>");
        escape_into(out, parent);
        out.push_str("</code></dd>");
    }
    let (n, b) = (tree.entries.len(), tree.branch_count());
    out.push_str(&format!("<dt>entries</dt><dd>{n} in {b} branch"));
    out.push_str(if b == 1 { "</dd>" } else { "es</dd>" });
    let changes: Vec<usize> =
        (0..n).filter(|&i| matches!(tree.entries[i].body, EntryBody::ModelChange { .. })).collect();
    if !changes.is_empty() {
        out.push_str("<dt>models</dt><dd><ul class=\"models\">");
        for i in changes {
            let e = tree.entries[i];
            if let EntryBody::ModelChange { provider, model_id } = &e.body {
                out.push_str("<li>");
                link(out, &e.id, &format!("{provider}/{model_id}"));
                out.push_str(" <time>");
                escape_into(out, &e.timestamp);
                out.push_str("</time></li>");
            }
        }
        out.push_str("</ul></dd>");
    }
    out.push_str("</dl>");
}

/// `<a href="#e-ID">text</a>`: the script switches to a branch holding the entry.
fn link(out: &mut String, id: &str, text: &str) {
    out.push_str("<a href=\"#e-");
    escape_into(out, id);
    out.push_str("\">");
    escape_into(out, text);
    out.push_str("</a>");
}

/// The branch tree (segments nested at branch points) and the labels. Built with an
/// explicit stack: a deeply forked session must not overflow the call stack.
fn sidebar_html(out: &mut String, tree: &Tree<'_>) {
    enum Step {
        Open(usize),
        Close,
    }
    out.push_str("<h2>Branches</h2><ul class=\"tree\">");
    let mut stack: Vec<Step> = tree.roots.iter().rev().map(|&r| Step::Open(r)).collect();
    while let Some(step) = stack.pop() {
        let start = match step {
            Step::Open(start) => start,
            Step::Close => {
                out.push_str("</ul></details></li>");
                continue;
            }
        };
        let segment = tree.segment(start);
        let id = &tree.entries[start].id;
        let current = if tree.is_active[start] { " current" } else { "" };
        out.push_str(&format!("<li><a class=\"seg{current}\" href=\"#e-"));
        escape_into(out, id);
        out.push_str("\">");
        escape_into(out, &tree.title(&segment));
        out.push_str(&format!("</a> <span class=\"count\">{}</span>", segment.members.len()));
        let end = segment.members.last().copied().unwrap_or(start);
        let forks = &tree.children[end];
        if forks.len() < 2 {
            out.push_str("</li>");
            continue;
        }
        out.push_str(&format!("<details open><summary>{} branches</summary><ul>", forks.len()));
        stack.push(Step::Close);
        stack.extend(forks.iter().rev().map(|&c| Step::Open(c)));
    }
    out.push_str("</ul>");
    let mut labels: Vec<(&str, &str)> = tree.labels.iter().map(|(t, l)| (*t, *l)).collect();
    if labels.is_empty() {
        return;
    }
    labels.sort_by(|a, b| a.1.cmp(b.1));
    out.push_str("<h2>Labels</h2><ul class=\"labels\">");
    for (target, label) in labels {
        out.push_str("<li>");
        link(out, target, label);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

fn entry_html(out: &mut String, tree: &Tree<'_>, i: usize) {
    let e = tree.entries[i];
    let kind = match &e.body {
        EntryBody::Message { message: Message::User(_), .. } => "user",
        EntryBody::Message { message: Message::Assistant(_), .. } => "assistant",
        EntryBody::Message { message: Message::ToolResult(_), .. } => "tool",
        EntryBody::Message { message: Message::System(_), .. } => "note",
        EntryBody::Compaction { .. } => "compaction",
        EntryBody::ModelChange { .. }
        | EntryBody::ThinkingLevelChange { .. }
        | EntryBody::Context { .. }
        | EntryBody::Label { .. }
        | EntryBody::Custom { .. } => "note",
    };
    let off = if tree.is_active[i] { "" } else { " off" };
    out.push_str(&format!("<section class=\"entry {kind}{off}\" id=\"e-"));
    escape_into(out, &e.id);
    out.push('"');
    if let Some(parent) = &e.parent_id {
        out.push_str(" data-parent=\"e-");
        escape_into(out, parent);
        out.push('"');
    }
    out.push_str(" data-tip=\"e-");
    escape_into(out, &tree.entries[tree.newest_leaf[i]].id);
    out.push_str("\"><div class=\"meta\"><span class=\"who\">");
    match &e.body {
        EntryBody::Message { message: Message::User(u), .. } => {
            out.push_str("User</span>");
            meta_tail(out, tree, i);
            content_html(out, &u.content, true);
        }
        EntryBody::Message { message: Message::Assistant(a), .. } => {
            out.push_str("Assistant</span>");
            assistant_meta(out, a);
            meta_tail(out, tree, i);
            assistant_html(out, a);
        }
        EntryBody::Message { message: Message::ToolResult(r), details } => {
            out.push_str("Tool result</span> <code>");
            escape_into(out, &r.tool_name);
            out.push_str("</code>");
            if r.is_error {
                out.push_str(" <span class=\"err\">error</span>");
            }
            meta_tail(out, tree, i);
            tool_result_html(out, r, details.as_ref());
        }
        EntryBody::Message { message: Message::System(s), .. } => {
            out.push_str("System update</span>");
            meta_tail(out, tree, i);
            markdown(out, &super::markdown::system_text(s));
        }
        EntryBody::Compaction { summary, tokens_before, tokens_after, .. } => {
            out.push_str(&format!(
                "Compaction</span> <span class=\"dim\">earlier conversation summarised, \
                 {tokens_before} → {tokens_after} tokens</span>"
            ));
            meta_tail(out, tree, i);
            markdown(out, summary);
        }
        EntryBody::ModelChange { .. }
        | EntryBody::ThinkingLevelChange { .. }
        | EntryBody::Context { .. }
        | EntryBody::Label { .. }
        | EntryBody::Custom { .. } => {
            note_html(out, &e.body);
            meta_tail(out, tree, i);
        }
    }
    fork_html(out, tree, i);
    out.push_str("</section>");
}

/// The label badge, id link and time that end every entry's meta line.
fn meta_tail(out: &mut String, tree: &Tree<'_>, i: usize) {
    let e = tree.entries[i];
    if let Some(label) = tree.labels.get(e.id.as_str()) {
        out.push_str(" <span class=\"label\">");
        escape_into(out, label);
        out.push_str("</span>");
    }
    out.push_str(" <span class=\"stamp\">");
    link(out, &e.id, &e.id);
    out.push_str(" <time title=\"");
    escape_into(out, &e.timestamp);
    out.push_str("\">");
    escape_into(out, e.timestamp.get(11..19).unwrap_or(&e.timestamp));
    out.push_str("</time></span></div>");
}

fn note_html(out: &mut String, body: &EntryBody) {
    match body {
        EntryBody::ModelChange { provider, model_id } => {
            out.push_str("Model</span> ");
            escape_into(out, &format!("{provider}/{model_id}"));
        }
        EntryBody::ThinkingLevelChange { thinking_level } => {
            out.push_str("Thinking</span> ");
            escape_into(out, thinking_level.as_str());
        }
        EntryBody::Label { target_id, label } => {
            out.push_str("Label</span> ");
            match label {
                Some(label) => escape_into(out, &format!("“{label}” on ")),
                None => out.push_str("removed from "),
            }
            link(out, target_id, target_id);
        }
        EntryBody::Custom { custom_type, .. } => {
            out.push_str("Extension</span> ");
            escape_into(out, custom_type);
        }
        EntryBody::Context { system_prompt, tools } => {
            out.push_str("Context</span> ");
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            escape_into(
                out,
                &format!(
                    "system prompt of {} characters; tools: {}",
                    system_prompt.chars().count(),
                    names.join(", ")
                ),
            );
        }
        EntryBody::Message { .. } | EntryBody::Compaction { .. } => out.push_str("</span>"),
    }
}

/// Links to the branches that start after entry `i`, when there are several.
fn fork_html(out: &mut String, tree: &Tree<'_>, i: usize) {
    let children = &tree.children[i];
    if children.len() < 2 {
        return;
    }
    out.push_str(&format!("<nav class=\"fork\">{} branches continue here:", children.len()));
    for (n, &c) in children.iter().enumerate() {
        let title = tree.title(&tree.segment(c));
        out.push(' ');
        link(out, &tree.entries[c].id, &format!("{}. {title}", n + 1));
    }
    out.push_str("</nav>");
}

fn assistant_meta(out: &mut String, a: &AssistantMessage) {
    out.push_str(" <span class=\"dim\">");
    escape_into(out, &format!("{}/{}", a.provider, a.model));
    let u = &a.usage;
    if u.total() > 0 {
        out.push_str(&format!(" · {} in, {} out", u.total_input(), u.output));
    }
    out.push_str("</span>");
}

fn assistant_html(out: &mut String, a: &AssistantMessage) {
    for block in &a.content {
        match block {
            AssistantBlock::Text { text, citations, .. } => {
                markdown(out, text);
                if !citations.is_empty() {
                    out.push_str("<p class=\"dim\">Sources:</p><ul class=\"dim\">");
                    for c in citations {
                        page_item(out, &c.title, &c.url);
                    }
                    out.push_str("</ul>");
                }
            }
            AssistantBlock::WebSearch(w) => {
                out.push_str("<div class=\"call\"><div class=\"call-name\">Web search <code>");
                escape_into(out, &w.queries.join("; "));
                out.push_str("</code></div>");
                if let Some(e) = &w.error {
                    out.push_str("<p class=\"err\">");
                    escape_into(out, e);
                    out.push_str("</p>");
                }
                out.push_str("<ul>");
                for r in &w.results {
                    page_item(out, &r.title, &r.url);
                }
                out.push_str("</ul></div>");
            }
            AssistantBlock::Thinking { thinking, redacted, .. } => {
                if *redacted || thinking.trim().is_empty() {
                    out.push_str("<p class=\"dim\">Thinking (redacted)</p>");
                } else {
                    out.push_str("<details class=\"thinking\"><summary>Thinking</summary>");
                    markdown(out, thinking);
                    out.push_str("</details>");
                }
            }
            AssistantBlock::ToolCall(call) => tool_call_html(out, call),
        }
    }
    if let Some(error) = &a.error_message {
        out.push_str("<p class=\"err\">");
        escape_into(out, error);
        out.push_str("</p>");
    }
}

/// A page as a list item: a link only for http and https addresses (a page a search
/// found may be hostile), its title or address as text.
fn page_item(out: &mut String, title: &str, url: &str) {
    out.push_str("<li>");
    let label = if title.is_empty() { url } else { title };
    if url.starts_with("https://") || url.starts_with("http://") {
        out.push_str("<a href=\"");
        escape_into(out, url);
        out.push_str("\" rel=\"noreferrer noopener\">");
        escape_into(out, label);
        out.push_str("</a>");
    } else {
        escape_into(out, label);
    }
    out.push_str("</li>");
}

fn tool_call_html(out: &mut String, call: &ToolCall) {
    out.push_str("<div class=\"call\"><div class=\"call-name\">Tool call <code>");
    escape_into(out, &call.name);
    out.push_str("</code></div>");
    let args = match &call.invalid_arguments {
        Some(raw) => raw.clone(),
        None => serde_json::to_string_pretty(&call.arguments)
            .unwrap_or_else(|_| call.arguments.to_string()),
    };
    if call.invalid_arguments.is_some() {
        out.push_str("<p class=\"err\">invalid JSON arguments</p>");
    }
    folded(out, "json", "Arguments", &args, FOLD_LINES);
    out.push_str("</div>");
}

fn tool_result_html(out: &mut String, r: &ToolResultMessage, details: Option<&Value>) {
    if let Some(text) = diff_of(details) {
        let lines = text.lines().count();
        if lines > FOLD_DIFF_LINES {
            out.push_str(&format!("<details><summary>Diff · {lines} lines</summary>"));
            diff(out, text);
            out.push_str("</details>");
        } else {
            diff(out, text);
        }
    }
    match diff_of(details) {
        // Edit's text repeats the diff shown above: shown once.
        Some(d) => {
            let content: Vec<Content> = r
                .content
                .iter()
                .map(|c| match c {
                    Content::Text { text } => Content::text(without_diff(text, d)),
                    other => other.clone(),
                })
                .collect();
            content_html(out, &content, false);
        }
        None => content_html(out, &r.content, false),
    }
    // The rest of the details (exit codes, paths) is worth a look, not the space.
    let rest = details.and_then(Value::as_object).map(|o| {
        o.iter()
            .filter(|(k, v)| *k != "diff" && !v.is_null())
            .collect::<std::collections::BTreeMap<_, _>>()
    });
    if let Some(rest) = rest.filter(|m| !m.is_empty()) {
        let text = serde_json::to_string_pretty(&rest).unwrap_or_default();
        out.push_str("<details class=\"extra\"><summary>Details</summary>");
        pre(out, "json", &text);
        out.push_str("</details>");
    }
}

/// User content as Markdown, tool output as preformatted text; images inline.
fn content_html(out: &mut String, content: &[Content], is_markdown: bool) {
    for c in content {
        match c {
            Content::Text { text } if is_markdown => markdown(out, text),
            Content::Text { text } if text.is_empty() => {}
            Content::Text { text } => folded(out, "out", "Output", text, FOLD_LINES),
            Content::Image { mime_type, data } => image_html(out, mime_type, data),
        }
    }
}

/// `<pre>`, inside a closed `<details>` when long.
fn folded(out: &mut String, class: &str, what: &str, text: &str, max_lines: usize) {
    let lines = text.lines().count();
    if lines <= max_lines && text.len() <= FOLD_CHARS {
        pre(out, class, text);
        return;
    }
    out.push_str(&format!("<details><summary>{what} · {lines} lines</summary>"));
    pre(out, class, text);
    out.push_str("</details>");
}

/// An image as a `data:` URL, only for raster types and clean base64: anything else
/// could smuggle markup through the attribute or the SVG parser.
fn image_html(out: &mut String, mime: &str, data: &str) {
    let is_raster = matches!(mime, "image/png" | "image/jpeg" | "image/gif" | "image/webp");
    let is_base64 =
        data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if is_raster && is_base64 {
        out.push_str(&format!("<img class=\"shot\" alt=\"image\" src=\"data:{mime};base64,"));
        out.push_str(data);
        out.push_str("\">");
    } else {
        out.push_str("<p class=\"dim\">[image: ");
        escape_into(out, mime);
        out.push_str("]</p>");
    }
}
