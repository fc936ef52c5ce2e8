//! Resuming a 100k-entry tape: a realistic mix of user prompts, assistant replies with
//! tool calls, and tool results of a few hundred bytes to a few KB. Measures what
//! `AgentSession::new` does with a tape (open, then the active branch's messages with
//! their entry ids, freeing the loaded text) for time, and — in a fresh child process, so the building of the tape does
//! not count — the peak memory it adds, against the size of the active branch's lines.
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
        a.content.push(AssistantBlock::text("Let me read the file first."));
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
        done.content
            .push(AssistantBlock::text(format!("Fixed module {i}: the off-by-one in compute.")));
        tape.append(EntryBody::Message { message: Message::Assistant(done), details: None })
            .unwrap();
        i += 4;
    }
    tape.path().unwrap().to_owned()
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// In the child: resume once and print `baseline peak` in bytes.
fn measure(path: &Path) {
    let before = peak_rss().unwrap_or(0);
    let (mut tape, _) = Tape::open(path).unwrap();
    let (_, messages) = tape.take_conversation();
    let after = peak_rss().unwrap_or(0);
    assert_eq!(messages.len(), 100_000);
    println!("{before} {after}");
    drop((tape, messages));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        measure(Path::new(&args[i + 1]));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), 100_000);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut times = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        let (mut tape, warnings) = Tape::open(&path).unwrap();
        let (_, messages) = tape.take_conversation();
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
    // Every entry is on the active branch here, so its lines are the whole file.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--measure")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let figures: Vec<u64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    if let [before, after] = figures[..] {
        let added = after.saturating_sub(before);
        println!(
            "memory while resuming: {:.1} MB added to a {:.1} MB process ({:.2}x the active branch's {:.1} MB of lines)",
            added as f64 / 1e6,
            before as f64 / 1e6,
            added as f64 / size as f64,
            size as f64 / 1e6
        );
    } else {
        println!("memory while resuming: not measured ({text})");
    }
}
