//! Embedding rab: a session with one custom tool, run by rab's runtime with a custom
//! event sink, one prompt, recorded on a session file. Runs offline against the in-repo fake model:
//!
//! ```sh
//! cargo run -p rab-core --example embed -- --fake "count the words of 'to be or not to be'"
//! ```
//!
//! or against Anthropic with `ANTHROPIC_API_KEY` set (drop `--fake`).
//!
//! The pieces: a model from the registry ([`rab_ai::Registry`]), a provider client
//! ([`rab_ai::Client`]), the agent's configuration ([`rab_agent::AgentConfig`]), tools
//! (anything implementing [`rab_agent::Tool`]), a tape ([`rab_session::Tape`]) and
//! [`rab_core::AgentSession`], which records every message before acting on it; and
//! [`rab_core::runtime`], which runs it behind typed ops (`Op::Prompt`, `Op::Steer`,
//! `Op::Abort`, `Op::Answer`, …) and one stream of events — the same runtime rab's terminal
//! UI, REPL, print mode, RPC mode and editor protocol drive. (With a full
//! [`rab_core::setup::Setup`], built from `RuntimeOptions`, `runtime::start_with` also
//! takes typed lines: commands, shell lines, session operations.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rab_agent::{AgentConfig, AgentEvent, AgentTool, DrainMode, Tool, ToolContext, ToolError};
use rab_agent::{ToolLevel, ToolOutput};
use rab_ai::{Client, ModelQuery, Registry, RetryPolicy, StreamOptions};
use rab_core::AgentSession;
use rab_core::runtime::{Event, Op};
use rab_session::Tape;

/// Arguments of the custom tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CountArgs {
    /// The text to count the words of.
    text: String,
}

/// A custom tool: counts words.
struct WordCount;

impl Tool for WordCount {
    type Args = CountArgs;
    const NAME: &'static str = "word_count";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Count the words of a text.".to_owned()
    }

    async fn run(&self, args: CountArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text.split_whitespace().count().to_string()))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let fake = args.first().is_some_and(|a| a == "--fake");
    if fake {
        args.remove(0);
    }
    let prompt = if args.is_empty() {
        "count the words of 'hello world'".to_owned()
    } else {
        args.join(" ")
    };

    // The model: Anthropic's default, or the fake server scripted to call the tool.
    let server = fake.then(|| {
        let llm = rab_fake_llm::FakeLlm::start();
        llm.script([
            rab_fake_llm::Turn::tool_call(
                "word_count",
                serde_json::json!({"text": "to be or not to be"}),
            ),
            rab_fake_llm::Turn::text("It has 6 words."),
        ]);
        llm
    });
    let registry = Registry::builtin();
    let mut model = registry
        .resolve(&ModelQuery { provider: Some("anthropic"), ..ModelQuery::default() })
        .expect("the built-in registry has an Anthropic model")
        .model;
    if let Some(llm) = &server {
        model.base_url = llm.url();
    }
    let api_key =
        if fake { Some("fake".to_owned()) } else { std::env::var("ANTHROPIC_API_KEY").ok() };
    let config = AgentConfig {
        model,
        options: StreamOptions {
            api_key,
            retry: RetryPolicy::default(),
            ..StreamOptions::default()
        },
        max_turns: Some(10),
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    };

    // The session, recorded in a temporary directory.
    let dir = tempfile::tempdir().unwrap();
    let tape = Tape::create(dir.path(), dir.path(), None);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(WordCount)];
    let (session, _) = AgentSession::new(
        Arc::new(Client::new()),
        config,
        "You are terse.".to_owned(),
        tools,
        tape,
    )
    .unwrap();

    // The runtime owns the session; the custom event sink prints what happens.
    let (mut rt, _questions) = rab_core::runtime::start(session);
    rt.submit(Op::Prompt { text: prompt, images: Vec::new() });
    while let Some(event) = rt.events.recv().await {
        match event {
            Event::Agent(AgentEvent::TextDelta { delta }) => print!("{delta}"),
            Event::Agent(AgentEvent::ToolCall { call }) => {
                println!("[tool] {} {}", call.name, call.arguments)
            }
            Event::Agent(AgentEvent::ToolResult { result, .. }) => {
                println!("[result] {}", result.text())
            }
            // This session has no permission gate; with one, questions come here and are
            // answered with `Op::Answer { id, approval }`.
            Event::ApprovalRequested { id, .. } => {
                rt.submit(Op::Answer { id, approval: rab_core::Approval::Once });
            }
            Event::RunEnded { stop, .. } => {
                println!("\nstopped: {stop:?}");
                break;
            }
            _ => {}
        }
    }
    // The session comes back, recorded.
    let session = rt.finish().await.unwrap();
    println!("recorded {} messages", session.agent().messages().len());
}
