//! The Markdown export: the active branch as a transcript for pasting into an issue
//! or a chat. Text is kept as written; tool calls, tool output and diffs go in fences
//! long enough that their contents cannot close them; huge output is cut.

use rab_ai::{AssistantBlock, AssistantMessage, Content, Message, ToolResultMessage};
use serde_json::Value;

use crate::{Entry, EntryBody, Tape};

/// Tool output, arguments and diffs longer than this are cut, with a note.
const MAX_LINES: usize = 200;
/// A cap for output made of few, very long lines.
const MAX_CHARS: usize = 20_000;

/// The whole document.
pub(super) fn document(tape: &Tape) -> String {
    let header = tape.header();
    let branch = tape.active_branch();
    let mut out = format!("# Session {}\n\n", header.id);
    out.push_str(&format!("- **cwd:** `{}`\n", header.cwd));
    out.push_str(&format!("- **created:** {}\n", header.timestamp));
    if let Some(parent) = &header.parent_session {
        out.push_str(&format!("- **continued from:** `{parent}`\n"));
    }
    let models = models(&branch);
    if !models.is_empty() {
        out.push_str(&format!("- **models:** {}\n", models.join(", ")));
    }
    for entry in &branch {
        out.push('\n');
        entry_md(&mut out, entry);
    }
    // A text file ends with a line feed (and `cat` leaves the prompt on its own line).
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Models used on the branch, in order of first use: switches recorded by
/// `model_change`, else the models named by assistant messages.
fn models(branch: &[&Entry]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in branch {
        let name = match &e.body {
            EntryBody::ModelChange { provider, model_id } => format!("{provider}/{model_id}"),
            EntryBody::Message { message: Message::Assistant(a), .. } => {
                format!("{}/{}", a.provider, a.model)
            }
            EntryBody::Message { .. }
            | EntryBody::ThinkingLevelChange { .. }
            | EntryBody::Compaction { .. }
            | EntryBody::Context { .. }
            | EntryBody::Label { .. }
            | EntryBody::Custom { .. } => continue,
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn entry_md(out: &mut String, entry: &Entry) {
    match &entry.body {
        EntryBody::Message { message: Message::User(u), .. } => {
            out.push_str("## User\n\n");
            push_block(out, &user_text(&u.content));
        }
        EntryBody::Message { message: Message::Assistant(a), .. } => assistant(out, a),
        EntryBody::Message { message: Message::ToolResult(r), details } => {
            tool_result(out, r, details.as_ref());
        }
        EntryBody::Message { message: Message::System(s), .. } => {
            out.push_str("## System update\n\n");
            push_block(out, &system_text(s));
        }
        EntryBody::ModelChange { provider, model_id } => {
            out.push_str(&format!("_Model: {provider}/{model_id}_\n"));
        }
        EntryBody::ThinkingLevelChange { thinking_level } => {
            out.push_str(&format!("_Thinking level: {thinking_level}_\n"));
        }
        EntryBody::Compaction { summary, tokens_before, tokens_after, .. } => {
            out.push_str(&format!(
                "## Compaction\n\n_Earlier conversation summarised \
                 ({tokens_before} → {tokens_after} tokens):_\n\n"
            ));
            push_block(out, summary);
        }
        EntryBody::Label { target_id, label } => match label {
            Some(label) => out.push_str(&format!("_Label “{label}” on entry {target_id}_\n")),
            None => out.push_str(&format!("_Label removed from entry {target_id}_\n")),
        },
        EntryBody::Custom { custom_type, .. } => {
            out.push_str(&format!("_Extension data: {custom_type}_\n"));
        }
        EntryBody::Context { system_prompt, tools } => {
            out.push_str(&format!(
                "_Context: a {}-character system prompt and {} tools_\n",
                system_prompt.chars().count(),
                tools.len()
            ));
        }
    }
}

/// What a system update changed, in words: tools, thinking level, then its text.
pub(super) fn system_text(s: &rab_ai::SystemMessage) -> String {
    let mut parts = Vec::new();
    if !s.tools_added.is_empty() {
        let names: Vec<&str> = s.tools_added.iter().map(|t| t.name.as_str()).collect();
        parts.push(format!("Tools added: {}", names.join(", ")));
    }
    if !s.tools_removed.is_empty() {
        parts.push(format!("Tools removed: {}", s.tools_removed.join(", ")));
    }
    if let Some((from, to)) = s.thinking {
        parts.push(format!("Thinking: {from} → {to}"));
    }
    let note = s.note();
    if !note.is_empty() {
        parts.push(note);
    }
    parts.join("\n\n")
}

/// Text blocks of user or tool content joined by blank lines; images as a note.
pub(super) fn user_text(content: &[Content]) -> String {
    let parts: Vec<String> = content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.clone(),
            Content::Image { mime_type, .. } => format!("_[image: {mime_type}]_"),
        })
        .collect();
    parts.join("\n\n")
}

fn assistant(out: &mut String, a: &AssistantMessage) {
    out.push_str("## Assistant\n");
    for block in &a.content {
        out.push('\n');
        match block {
            AssistantBlock::Text { text, citations, .. } => {
                push_block(out, text);
                if !citations.is_empty() {
                    out.push_str("\nSources:\n");
                    for c in citations {
                        out.push_str(&format!("- {} <{}>\n", c.title, c.url));
                    }
                }
            }
            AssistantBlock::WebSearch(w) => {
                out.push_str(&format!("**Web search:** {}\n", w.queries.join("; ")));
                if let Some(e) = &w.error {
                    out.push_str(&format!("\n_failed: {e}_\n"));
                }
                for r in &w.results {
                    out.push_str(&format!("- {} <{}>\n", r.title, r.url));
                }
            }
            AssistantBlock::Thinking { thinking, redacted, .. } => {
                if *redacted || thinking.trim().is_empty() {
                    out.push_str("> **Thinking** _(redacted)_\n");
                } else {
                    out.push_str("> **Thinking**\n>\n");
                    for line in thinking.trim_end().lines() {
                        out.push_str(if line.is_empty() { ">" } else { "> " });
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            AssistantBlock::ToolCall(call) => {
                out.push_str(&format!("**Tool call:** `{}`\n\n", call.name));
                let args = match &call.invalid_arguments {
                    Some(raw) => raw.clone(),
                    None => serde_json::to_string_pretty(&call.arguments)
                        .unwrap_or_else(|_| call.arguments.to_string()),
                };
                let lang = if call.invalid_arguments.is_some() { "" } else { "json" };
                fenced(out, lang, &args);
            }
        }
    }
    if let Some(error) = &a.error_message {
        out.push_str(&format!("\n**Error:** {error}\n"));
    }
}

fn tool_result(out: &mut String, r: &ToolResultMessage, details: Option<&Value>) {
    let error = if r.is_error { " (error)" } else { "" };
    out.push_str(&format!("### Tool result: `{}`{error}\n\n", r.tool_name));
    let text = user_text(&r.content);
    match diff_of(details) {
        // The result's text carries the diff too (edit's): shown once, as a diff.
        Some(diff) => {
            fenced(out, "", &without_diff(&text, diff));
            out.push('\n');
            fenced(out, "diff", diff);
        }
        None => fenced(out, "", &text),
    }
}

/// `text` with the diff it repeats taken out (edit results say what they did, then
/// give the diff that the details also hold).
pub(super) fn without_diff(text: &str, diff: &str) -> String {
    let diff = diff.trim_end();
    if diff.is_empty() || !text.contains(diff) {
        return text.to_owned();
    }
    text.replacen(diff, "", 1).trim_end().to_owned()
}

/// The unified diff an `edit` or `write` result carries in its details.
pub(super) fn diff_of(details: Option<&Value>) -> Option<&str> {
    details?.get("diff")?.as_str().filter(|d| !d.trim().is_empty())
}

/// `text` followed by one newline.
fn push_block(out: &mut String, text: &str) {
    out.push_str(text.trim_end());
    out.push('\n');
}

/// `text` in a fence longer than any backtick run inside it, cut when huge.
fn fenced(out: &mut String, lang: &str, text: &str) {
    let (kept, dropped) = super::truncate(text.trim_end_matches('\n'), MAX_LINES, MAX_CHARS);
    let longest = kept.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    out.push_str(&format!("{fence}{lang}\n{kept}\n{fence}\n"));
    if dropped > 0 {
        out.push_str(&format!("\n_… {dropped} more lines not shown_\n"));
    }
}
