use std::path::Path;

use pretty_assertions::assert_eq;
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall,
    ToolResultMessage,
};
use serde_json::json;

use super::*;
use crate::EntryBody;

const DIFF: &str = "--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n";

fn user(text: &str) -> EntryBody {
    EntryBody::Message { message: Message::user(text), details: None }
}

fn assistant(blocks: Vec<AssistantBlock>) -> EntryBody {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-x");
    a.content = blocks;
    a.stop_reason = StopReason::Stop;
    EntryBody::Message { message: Message::Assistant(a), details: None }
}

fn text(t: &str) -> AssistantBlock {
    AssistantBlock::text(t)
}

fn tool_result(name: &str, output: &str, details: Option<serde_json::Value>) -> EntryBody {
    EntryBody::Message {
        message: Message::ToolResult(ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: name.into(),
            content: vec![Content::text(output)],
            is_error: false,
        }),
        details,
    }
}

/// Ids of the sample's entries the tests look for.
struct Sample {
    _dir: tempfile::TempDir,
    tape: Tape,
    first_user: String,
    branch_a: String,
    branch_b: String,
}

/// A model change, a user message with markup in it, an assistant turn with thinking,
/// text and an `edit` call, its result with a diff, then two answers after the result
/// (branch A, then the active branch B with a label, a compaction and a user message).
fn sample() -> Sample {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/work/p"), None);
    tape.append(EntryBody::ModelChange {
        provider: "anthropic".into(),
        model_id: "claude-x".into(),
    })
    .unwrap();
    let first_user =
        tape.append(user("fix the <script>alert(1)</script> test")).unwrap().id.clone();
    let call = ToolCall {
        id: "call_1".into(),
        name: "edit".into(),
        arguments: json!({"path": "a.rs", "old": "two", "new": "2"}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    };
    tape.append(assistant(vec![
        AssistantBlock::Thinking {
            thinking: "The test expects 2.".into(),
            signature: None,
            item_id: None,
            redacted: false,
        },
        text("Changing `two` to **2**:\n\n- in `a.rs`\n- nowhere else"),
        AssistantBlock::ToolCall(call),
    ]))
    .unwrap();
    let result = tape
        .append(tool_result("edit", "Edited a.rs", Some(json!({"path": "a.rs", "diff": DIFF}))))
        .unwrap()
        .id
        .clone();
    let branch_a = tape.append(assistant(vec![text("Done on branch A.")])).unwrap().id.clone();
    tape.branch_from(Some(&result)).unwrap();
    let branch_b = tape.append(assistant(vec![text("Done on branch B.")])).unwrap().id.clone();
    tape.append(EntryBody::Label { target_id: first_user.clone(), label: Some("start".into()) })
        .unwrap();
    tape.append(EntryBody::Compaction {
        summary: "The user fixed a test in `a.rs`.".into(),
        first_kept_entry_id: branch_b.clone(),
        tokens_before: 1200,
        tokens_after: 300,
    })
    .unwrap();
    tape.append(user("now run the tests")).unwrap();
    Sample { _dir: dir, tape, first_user, branch_a, branch_b }
}

fn html(s: &Sample) -> String {
    export(&s.tape, ExportFormat::Html).unwrap()
}

/// The `<section>` opening tag of an entry.
fn section_tag<'a>(page: &'a str, id: &str) -> &'a str {
    let at = page.find(&format!("id=\"e-{id}\"")).unwrap();
    let start = page[..at].rfind("<section").unwrap();
    let end = at + page[at..].find('>').unwrap();
    &page[start..=end]
}

#[test]
fn html_loads_nothing_from_the_network() {
    let page = html(&sample());
    for needle in ["<link", "<script src", "src=\"http", "src=http", "url(", "@import", "<iframe"] {
        assert!(!page.contains(needle), "page contains {needle}");
    }
    assert!(page.contains("default-src 'none'"), "a CSP forbids loads");
    assert_eq!(page.matches("<script").count(), 1, "only the inline script");
}

#[test]
fn html_escapes_message_text() {
    let page = html(&sample());
    assert!(!page.contains("<script>alert(1)"));
    assert!(page.contains("fix the &lt;script&gt;alert(1)&lt;/script&gt; test"));
}

#[test]
fn html_colours_diff_lines() {
    let page = html(&sample());
    for line in [
        "<span class=\"diff-file\">--- a/a.rs\n</span>",
        "<span class=\"diff-hunk\">@@ -1,2 +1,2 @@\n</span>",
        "<span class=\"diff-ctx\"> one\n</span>",
        "<span class=\"diff-del\">-two\n</span>",
        "<span class=\"diff-add\">+2\n</span>",
    ] {
        assert!(page.contains(line), "missing {line}");
    }
}

#[test]
fn html_holds_every_branch_and_shows_the_active_one() {
    let s = sample();
    let page = html(&s);
    assert!(page.contains("Done on branch A.") && page.contains("Done on branch B."));
    assert!(section_tag(&page, &s.branch_a).contains(" off\""), "branch A hidden");
    assert!(!section_tag(&page, &s.branch_b).contains(" off"), "branch B shown");
    let newest = &s.tape.leaf().unwrap().id;
    let tip = format!("data-tip=\"e-{newest}\"");
    assert!(section_tag(&page, &s.first_user).contains(&tip), "the newest leaf below");
    let tip_a = format!("data-tip=\"e-{}\"", s.branch_a);
    assert!(section_tag(&page, &s.branch_a).contains(&tip_a), "a leaf is its own tip");
    assert!(page.contains("<nav class=\"fork\">2 branches continue here:"));
    assert!(page.contains(&format!("href=\"#e-{}\">1. Done on branch A.</a>", s.branch_a)));
    assert!(page.contains("<details open><summary>2 branches</summary>"), "sidebar tree");
    assert!(page.contains(&format!("<a class=\"seg current\" href=\"#e-{}\"", s.branch_b)));
    assert!(page.contains(&format!("<a class=\"seg\" href=\"#e-{}\"", s.branch_a)));
}

#[test]
fn html_shows_thinking_calls_compaction_labels_and_models() {
    let s = sample();
    let page = html(&s);
    assert!(page.contains("<details class=\"thinking\"><summary>Thinking</summary>"));
    assert!(page.contains("Tool call <code>edit</code>"));
    assert!(page.contains("&quot;path&quot;: &quot;a.rs&quot;"), "pretty JSON arguments");
    assert!(page.contains("Changing <code>two</code> to <strong>2</strong>:"));
    assert!(page.contains("<ul><li>in <code>a.rs</code></li><li>nowhere else</li></ul>"));
    assert!(page.contains("1200 → 300 tokens"));
    assert!(page.contains("The user fixed a test in <code>a.rs</code>."));
    let first = section_tag(&page, &s.first_user);
    let badge = "<span class=\"label\">start</span>";
    let after_first = &page[page.find(first).unwrap()..];
    assert!(after_first[..after_first.find("</section>").unwrap()].contains(badge));
    assert!(page.contains(&format!(
        "<h2>Labels</h2><ul class=\"labels\"><li><a href=\"#e-{}\">start</a>",
        s.first_user
    )));
    assert!(page.contains("anthropic/claude-x</a>"), "model change in the header");
}

#[test]
fn markdown_is_the_active_branch_with_fenced_calls_and_diffs() {
    let md = export(&sample().tape, ExportFormat::Markdown).unwrap();
    assert!(md.contains("## User\n\nfix the <script>alert(1)</script> test\n"));
    assert!(md.contains(&format!("```diff\n{DIFF}```\n")));
    assert!(md.contains(
        "**Tool call:** `edit`\n\n```json\n{\n  \"path\": \"a.rs\",\n  \"old\": \"two\","
    ));
    assert!(md.contains("Done on branch B.") && !md.contains("Done on branch A."));
}

#[test]
fn markdown_snapshot() {
    let s = sample();
    let md = export(&s.tape, ExportFormat::Markdown).unwrap();
    let md = md
        .replace(s.tape.id(), "SESSION-ID")
        .replace(&s.tape.header().timestamp, "CREATED")
        .replace(&s.first_user, "FIRST-USER");
    insta::assert_snapshot!("markdown", md);
}

#[test]
fn markdown_cuts_huge_tool_output_and_outfences_backticks() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    let long: Vec<String> = (1..=500).map(|n| format!("line {n}")).collect();
    tape.append(tool_result("bash", &long.join("\n"), None)).unwrap();
    tape.append(tool_result("read", "```rust\nfn f() {}\n```", None)).unwrap();
    let md = export(&tape, ExportFormat::Markdown).unwrap();
    assert!(md.contains("line 200\n```\n\n_… 300 more lines not shown_\n"));
    assert!(!md.contains("line 201"));
    assert!(md.contains("````\n```rust\nfn f() {}\n```\n````\n"));
}

#[test]
fn json_reads_back_as_the_same_entries() {
    #[derive(serde::Deserialize)]
    struct Doc {
        header: crate::Header,
        entries: Vec<crate::Entry>,
    }
    let s = sample();
    let text = export(&s.tape, ExportFormat::Json).unwrap();
    let doc: Doc = serde_json::from_str(&text).unwrap();
    assert_eq!(&doc.header, s.tape.header());
    let stored: Vec<crate::Entry> = s.tape.entries().into_iter().cloned().collect();
    assert_eq!(doc.entries, stored);
    assert!(text.starts_with("{\n  \"header\": {"), "pretty-printed");
}

fn md_html(text: &str) -> String {
    let mut out = String::new();
    markup::markdown(&mut out, text);
    out
}

#[test]
fn markup_never_passes_html_or_script_links_through() {
    let out = md_html(
        "<img src=x onerror=alert(1)> [a](javascript:alert(1)) `<b>`\n\n```\n</pre><script>\n```",
    );
    assert!(
        !out.contains("<img") && !out.contains("<script") && !out.contains("href=\"javascript")
    );
    assert!(out.contains("<code>&lt;b&gt;</code>"));
    assert!(out.contains("<pre class=\"code\"><code>&lt;/pre&gt;&lt;script&gt;</code></pre>"));
    let link = md_html("see [docs](https://example.com/a?b=\"c\")");
    assert!(link.contains(
        "<a href=\"https://example.com/a?b=&quot;c&quot;\" rel=\"noopener noreferrer\">docs</a>"
    ));
}

#[test]
fn markup_renders_common_blocks() {
    assert_eq!(
        md_html(
            "# Title\n\none\ntwo\n\n1. a\n   - b\n2. c\n\n> quoted\n\n| x | y |\n|---|---|\n| 1 | 2 |"
        ),
        "<div class=\"md\"><h3>Title</h3><p>one\ntwo</p>\
         <ol><li>a<ul><li>b</li></ul></li><li>c</li></ol>\
         <blockquote><p>quoted</p></blockquote>\
         <table><thead><tr><th>x</th><th>y</th></tr></thead>\
         <tbody><tr><td>1</td><td>2</td></tr></tbody></table></div>"
    );
    assert_eq!(
        md_html("snake_case_name and *em* and 2 * 3 * 4 and ~~gone~~"),
        "<div class=\"md\"><p>snake_case_name and <em>em</em> and 2 * 3 * 4 and <del>gone</del></p></div>"
    );
    assert!(md_html("```diff\n+a\n-b\n```").contains("<span class=\"diff-add\">+a\n</span>"));
}

#[test]
fn truncate_counts_the_lines_left_out() {
    assert_eq!(truncate("a\nb\nc", 2, 100), ("a\nb", 1));
    assert_eq!(truncate("a\nb", 2, 100), ("a\nb", 0));
    assert_eq!(truncate("ééé", 5, 3), ("é", 1));
}

/// Found by fuzzing: an emphasis marker followed by a multi-byte character was sliced
/// inside that character.
#[test]
fn issue_19_a_marker_before_a_wide_character_is_text() {
    for text in ["*\u{fffd}", "_\u{fffd}x_", "~é~", "**é**"] {
        let out = md_html(text);
        assert!(out.contains('\u{fffd}') || out.contains('é'), "{text}: {out}");
    }
}

#[test]
fn an_edit_results_diff_is_shown_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/work/p"), None);
    tape.append(user("change it")).unwrap();
    // As the edit tool reports it: what it did, then the diff its details also hold.
    let output = format!("edited a.rs (1 edit)\n{}", DIFF.trim_end());
    tape.append(tool_result("edit", &output, Some(json!({"path": "a.rs", "diff": DIFF})))).unwrap();
    let md = export(&tape, ExportFormat::Markdown).unwrap();
    assert_eq!(md.matches("+2\n").count(), 1, "{md}");
    assert!(md.contains("```\nedited a.rs (1 edit)\n```"), "{md}");
    let html = export(&tape, ExportFormat::Html).unwrap();
    assert_eq!(html.matches("@@ -1,2 +1,2 @@").count(), 1, "{html}");
    assert!(html.contains("edited a.rs (1 edit)"), "{html}");
}
