//! Compaction overhead without the model call: a session whose conversation fills a
//! 200k-token window past the default threshold (~190k tokens in 2,400 messages) is
//! compacted by hand with a
//! provider that answers at once. What is timed is everything rab does around the
//! summary request: the token estimate, the cut point, the transcript sent for
//! summarising, the new conversation, the compaction entry written to the tape, and
//! the message-to-entry map. Each round starts from a fresh copy of the session.
//!
//! Run: `cargo bench -p rab-core --bench compaction`
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rab_agent::{AgentConfig, DrainMode};
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Context, EventStream, Message, Model, Provider,
    StopReason, StreamEvent, StreamOptions, ToolCall, ToolResultMessage,
};
use rab_config::CompactionSettings;
use rab_core::AgentSession;
use rab_session::{EntryBody, Tape};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Answers every request with the same summary, without I/O.
struct Instant_;

impl Provider for Instant_ {
    fn stream(
        &self,
        model: &Model,
        _: &Context,
        _: &StreamOptions,
        _: CancellationToken,
    ) -> EventStream {
        let mut a = AssistantMessage::empty(model.api, &model.provider, &model.id);
        a.content.push(AssistantBlock::text("## Goal\nKeep going.\n## Open tasks\n- the rest"));
        Box::pin(futures_util::stream::iter([StreamEvent::Done(a)]))
    }
}

fn model() -> Model {
    let mut m = Model::custom("bench", "bench", Api::AnthropicMessages, "http://127.0.0.1:9");
    m.context_window = 200_000;
    m
}

/// A tape of `turns` tool-using turns, ~420 bytes of text per message on average.
fn build(dir: &Path, turns: usize) -> std::path::PathBuf {
    let mut tape = Tape::create(dir, Path::new("/work/project"), None);
    let line = "    let total = items.iter().map(|i| i.price * i.count).sum::<u64>();\n";
    for i in 0..turns {
        let append = |tape: &mut Tape, message| {
            tape.append(EntryBody::Message { message, details: None }).unwrap();
        };
        append(&mut tape, Message::user(format!("step {i}: tidy the pricing code in module {i}")));
        let mut a = AssistantMessage::empty(Api::AnthropicMessages, "bench", "bench");
        a.stop_reason = StopReason::ToolUse;
        a.content.push(AssistantBlock::text("Reading it first."));
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: format!("call_{i}"),
            name: "read".into(),
            arguments: json!({"path": format!("src/pricing_{i}.rs")}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
        append(&mut tape, Message::Assistant(a));
        append(
            &mut tape,
            Message::ToolResult(ToolResultMessage {
                tool_call_id: format!("call_{i}"),
                tool_name: "read".into(),
                content: vec![Content::text(line.repeat(16))],
                is_error: false,
            }),
        );
        let mut done = AssistantMessage::empty(Api::AnthropicMessages, "bench", "bench");
        done.content.push(AssistantBlock::text(format!("Module {i} now sums in one pass.")));
        append(&mut tape, Message::Assistant(done));
    }
    tape.path().unwrap().to_owned()
}

fn session(path: &Path) -> AgentSession {
    let (tape, _) = Tape::open(path).unwrap();
    let config = AgentConfig {
        model: model(),
        options: StreamOptions::default(),
        max_turns: None,
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    };
    let (mut s, _) =
        AgentSession::new(Arc::new(Instant_), config, "system".into(), vec![], tape).unwrap();
    s.enable_compaction(CompactionSettings::default());
    s
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let original = build(dir.path(), 600);
    let size = std::fs::metadata(&original).unwrap().len();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mut times = Vec::new();
    let mut shape = String::new();
    for round in 0..15 {
        let copy = dir.path().join(format!("round-{round}.jsonl"));
        std::fs::copy(&original, &copy).unwrap();
        let mut s = session(&copy);
        let before = s.agent().messages().len();
        let tokens = s.context_tokens();
        let start = Instant::now();
        rt.block_on(s.compact(None, CancellationToken::new())).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        shape = format!(
            "{before} messages (~{tokens} tokens, {:.0} KB of JSONL) -> {} messages (~{} tokens)",
            size as f64 / 1e3,
            s.agent().messages().len(),
            s.context_tokens()
        );
    }
    times.sort_by(f64::total_cmp);
    println!("compaction of {shape}");
    println!(
        "overhead without the model call: median {:.2} ms (min {:.2}, max {:.2}) over {} rounds",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len()
    );
}
