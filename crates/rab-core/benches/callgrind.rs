//! Instruction counts of the runtime's hot paths under Valgrind's callgrind (gungraun),
//! for the performance gate (`bench/gate.py` compares them with `bench/budgets.toml`):
//! - one turn of the agent loop: a prompt, a reply calling `read` on a small file, the
//!   call run and recorded, the next request and its text answer, each entry written to
//!   the tape (the provider answers in memory, so no network is counted);
//! - the permission check of a bash pipeline against 50 rules;
//! - appending a 2 KB tool result to a tape of 1,000 entries;
//! - the edit engine on a 1 MB file: an exact match, and a tolerant one (the text
//!   retyped with spaces for tabs and ASCII quotes for curly ones).
//!
//! Run: `cargo bench -p rab-core --bench callgrind` (needs valgrind and gungraun-runner
//! 0.20.0 on PATH or in GUNGRAUN_RUNNER; `.ci/run` installs both).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use gungraun::{library_benchmark, library_benchmark_group, main};
use rab_agent::{AgentConfig, AgentTool, DrainMode, StopCause, ToolLevel};
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Context, EventStream, Message, Model, Provider,
    StopReason, StreamEvent, StreamOptions, ToolCall, ToolResultMessage,
};
use rab_core::AgentSession;
use rab_core::permissions::{PermissionMode, Policy};
use rab_session::{EntryBody, Tape};
use rab_tools::Workspace;
use rab_tools::edit::{Replacement, edit_text};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

mod common;

/// Calls `read` on `notes.txt` once, then answers with text; nothing leaves memory.
struct OneToolCall;

impl Provider for OneToolCall {
    fn stream(
        &self,
        model: &Model,
        cx: &Context,
        _: &StreamOptions,
        _: CancellationToken,
    ) -> EventStream {
        let mut a = AssistantMessage::empty(model.api, &model.provider, &model.id);
        if matches!(cx.messages.last(), Some(Message::ToolResult(_))) {
            a.content.push(AssistantBlock::text("The notes say hello."));
        } else {
            a.stop_reason = StopReason::ToolUse;
            a.content.push(AssistantBlock::text("Reading the notes."));
            a.content.push(AssistantBlock::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: json!({"path": "notes.txt"}),
                invalid_arguments: None,
                signature: None,
                item_id: None,
            }));
        }
        Box::pin(futures_util::stream::iter([StreamEvent::Done(a)]))
    }
}

fn turn_session() -> (TempDir, Runtime, AgentSession) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n".repeat(40)).unwrap();
    let ws = Workspace::new(dir.path());
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(rab_tools::read::Read::new(ws))];
    let tape = Tape::create(&dir.path().join("sessions"), dir.path(), None);
    let config = AgentConfig {
        model: Model::custom("bench", "bench", Api::AnthropicMessages, "http://127.0.0.1:9"),
        options: StreamOptions::default(),
        max_turns: None,
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    };
    let (session, _) =
        AgentSession::new(Arc::new(OneToolCall), config, "system".into(), tools, tape).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    (dir, rt, session)
}

#[library_benchmark]
#[bench::read_then_answer(setup = turn_session)]
fn agent_turn(input: (TempDir, Runtime, AgentSession)) -> (TempDir, AgentSession) {
    let (dir, rt, mut session) = input;
    let stop =
        rt.block_on(session.prompt("what do the notes say?".into(), CancellationToken::new()));
    assert!(matches!(stop, StopCause::Done), "{stop:?}");
    (dir, session)
}

fn rules() -> (Policy, Value) {
    let cmd = "cargo test 2>&1 | grep -v warning && echo \"done at $(date)\"";
    (common::policy(), json!({ "command": cmd }))
}

#[library_benchmark]
#[bench::bash_pipeline_50_rules(setup = rules)]
fn permission_check(input: (Policy, Value)) {
    let (policy, args) = input;
    black_box(policy.check(PermissionMode::Default, "bash", ToolLevel::Execute, &args));
}

fn tape_of(entries: usize) -> (TempDir, Tape, Message) {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/work/project"), None);
    for i in 0..entries {
        tape.append(EntryBody::Message {
            message: Message::user(format!("step {i}")),
            details: None,
        })
        .unwrap();
    }
    let result = Message::ToolResult(ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        content: vec![Content::text("fn example() -> usize { 42 }\n".repeat(70))],
        is_error: false,
    });
    (dir, tape, result)
}

#[library_benchmark]
#[bench::tool_result_2kb(setup = tape_of, args = (1_000))]
fn tape_append(input: (TempDir, Tape, Message)) -> (TempDir, Tape) {
    let (dir, mut tape, message) = input;
    tape.append(EntryBody::Message { message, details: None }).unwrap();
    (dir, tape)
}

/// A 1 MB source file with tabs and curly quotes, and one replacement for a function
/// in its middle: typed as the file has it (`exact`) or retyped with spaces and ASCII
/// quotes (`tolerant`: every line normalised, the match written faithfully).
fn big_file(tolerant: bool) -> (String, Vec<Replacement>) {
    let mut content = String::with_capacity(1 << 20);
    let mut i = 0;
    while content.len() < 1 << 20 {
        content.push_str(&format!(
            "fn f{i}() {{\n\tlet v = compute(\u{201c}item {i}\u{201d}, {i});\n}}\n"
        ));
        i += 1;
    }
    let m = i / 2;
    let (old_text, new_text) = if tolerant {
        (
            format!("fn f{m}() {{\n    let v = compute(\"item {m}\", {m});"),
            format!("fn f{m}() {{\n    let v = compute(\"item {m}\", {m} + 1);"),
        )
    } else {
        (
            format!("compute(\u{201c}item {m}\u{201d}, {m})"),
            format!("compute(\u{201c}item {m}\u{201d}, {m} + 1)"),
        )
    };
    (content, vec![Replacement { old_text, new_text, replace_all: None }])
}

#[library_benchmark]
#[bench::exact_1mb(setup = big_file, args = (false))]
#[bench::tolerant_1mb(setup = big_file, args = (true))]
fn edit_match(input: (String, Vec<Replacement>)) -> String {
    let (content, edits) = input;
    black_box(edit_text(&content, Path::new("big.rs"), &edits).unwrap())
}

library_benchmark_group!(
    name = runtime;
    benchmarks = agent_turn, permission_check, tape_append, edit_match
);

main!(library_benchmark_groups = runtime);
