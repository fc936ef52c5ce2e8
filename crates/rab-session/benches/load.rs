//! Load time of a 100k-entry tape: a realistic mix of user prompts, assistant replies
//! with tool calls, and tool results of a few hundred bytes to a few KB.
//!
//! Run: `cargo bench -p rab-session --bench load`
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall,
    ToolResultMessage,
};
use rab_session::{EntryBody, Tape};
use serde_json::json;

fn build(dir: &Path, entries: usize) -> std::path::PathBuf {
    let mut tape = Tape::create(dir, Path::new("/work/project"), None);
    let mut i = 0;
    while i < entries {
        tape.append(EntryBody::Message {
            message: Message::user(format!(
                "please look at module {i} and fix the failing test in it"
            )),
            details: None,
        })
        .unwrap();
        let mut a =
            AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-sonnet-5-5");
        a.stop_reason = StopReason::ToolUse;
        a.content.push(AssistantBlock::Text {
            text: "Let me read the file first.".into(),
            signature: None,
        });
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: format!("toolu_{i}"),
            name: "read".into(),
            arguments: json!({"path": format!("src/module_{i}.rs")}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
        tape.append(EntryBody::Message { message: Message::Assistant(a), details: None }).unwrap();
        let body: String =
            (1..40).map(|n| format!("{n}\tlet value_{n} = compute({n}); // line {n}\n")).collect();
        tape.append(EntryBody::Message {
            message: Message::ToolResult(ToolResultMessage {
                tool_call_id: format!("toolu_{i}"),
                tool_name: "read".into(),
                content: vec![Content::text(body)],
                is_error: false,
            }),
            details: None,
        })
        .unwrap();
        let mut done =
            AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-sonnet-5-5");
        done.content.push(AssistantBlock::Text {
            text: format!("Fixed module {i}: the off-by-one in compute."),
            signature: None,
        });
        tape.append(EntryBody::Message { message: Message::Assistant(done), details: None })
            .unwrap();
        i += 4;
    }
    tape.path().unwrap().to_owned()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), 100_000);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut times = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        let (tape, warnings) = Tape::open(&path).unwrap();
        let messages = tape.messages();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(warnings.is_empty());
        assert_eq!(messages.len(), 100_000);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "load of a 100k-entry tape ({:.1} MB): median {:.0} ms (min {:.0}, max {:.0}) — open + active branch + messages",
        size as f64 / 1e6,
        times[3],
        times[0],
        times[6]
    );
}
