//! Embedding rab: a session with one custom tool and a custom event sink, one prompt,
//! recorded on a session file. Runs offline against the in-repo fake model:
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
//! [`rab_core::AgentSession`], which records every message before acting on it and sends
//! every event to its subscribers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rab_agent::{AgentConfig, AgentEvent, AgentTool, DrainMode, Tool, ToolContext, ToolError};
use rab_agent::{ToolLevel, ToolOutput};
use rab_ai::{Client, ModelQuery, Registry, RetryPolicy, StreamOptions};
use rab_core::AgentSession;
use rab_session::Tape;
use tokio_util::sync::CancellationToken;

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
    let (mut session, _) = AgentSession::new(
        Arc::new(Client::new()),
        config,
        "You are terse.".to_owned(),
        tools,
        tape,
    )
    .unwrap();

    // A custom event sink: print what happens as it happens.
    let mut events = session.subscribe();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                AgentEvent::TextDelta { delta } => print!("{delta}"),
                AgentEvent::ToolCall { call } => {
                    println!("[tool] {} {}", call.name, call.arguments)
                }
                AgentEvent::ToolResult { result, .. } => println!("[result] {}", result.text()),
                AgentEvent::AgentEnd { .. } => println!(),
                _ => {}
            }
        }
    });
    let stop = session.prompt(prompt, CancellationToken::new()).await;
    drop(session);
    printer.await.unwrap();
    println!("stopped: {stop:?}");
}
