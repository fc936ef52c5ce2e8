//! Live tests against the real providers; run them all with keys in the environment:
//! `cargo test -p rab-ai -- --ignored live`. Without a provider's key its tests return
//! early. Each provider gets a plain reply and a tool round trip with thinking on,
//! replayed as rab replays it (thinking, signatures, phases, reasoning content), then
//! one more request after a system update, which is what the conformance rules are
//! about.

use rab_ai::{
    Context, Message, Model, ModelQuery, Registry, StreamOptions, SystemMessage, ThinkingLevel,
    ToolResultMessage, ToolSpec,
};
use serde_json::json;

use super::harness::{context, run};

fn setup(provider: &str, env: &str) -> Option<(Model, StreamOptions)> {
    let Ok(key) = std::env::var(env) else {
        eprintln!("{env} not set; skipping the live {provider} test");
        return None;
    };
    let registry = Registry::builtin();
    let resolved = registry
        .resolve(&ModelQuery { provider: Some(provider), ..Default::default() })
        .expect("default model");
    Some((resolved.model, StreamOptions { api_key: Some(key), ..Default::default() }))
}

async fn pong(provider: &str, env: &str) {
    let Some((model, mut opts)) = setup(provider, env) else { return };
    opts.max_tokens = Some(256);
    let out = run(&model, &context("Reply with the single word: pong"), &opts).await;
    let text = out.message().text().to_lowercase();
    assert!(text.contains("pong"), "{provider}: {text}");
}

/// A tool call with thinking on, its result, the answer, then a system update and one
/// more answer: every request must be accepted.
async fn round_trip(provider: &str, env: &str) {
    let Some((model, mut opts)) = setup(provider, env) else { return };
    opts.thinking = ThinkingLevel::Medium;
    opts.max_tokens = Some(4096);
    let add = ToolSpec {
        name: "add".into(),
        description: "Add two integers and return the sum.".into(),
        parameters: json!({"type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]}),
        grammar: None,
        server: None,
    };
    let mut ctx = Context {
        system_prompt: "You are a careful assistant. Use the add tool for arithmetic.".into(),
        messages: vec![Message::user("What is 1234 + 4321? Call the add tool, then answer.")],
        tools: vec![add],
        memo: None,
    };
    let first = run(&model, &ctx, &opts).await.message().clone();
    let call = first.tool_calls().next().cloned().unwrap_or_else(|| {
        panic!("{provider}: no tool call in {:?}", first.content);
    });
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: call.id,
        tool_name: call.name,
        content: vec![rab_ai::Content::text("5555")],
        is_error: false,
    }));
    let second = run(&model, &ctx, &opts).await.message().clone();
    assert!(
        second.text().contains("5555") || second.text().contains("5,555"),
        "{provider}: {}",
        second.text()
    );
    ctx.messages.push(Message::Assistant(second));
    ctx.messages.push(Message::user("And what is that minus 5? Answer with the number."));
    ctx.messages.push(Message::System(SystemMessage {
        text: "Answer in one short sentence.".into(),
        ..SystemMessage::default()
    }));
    let third = run(&model, &ctx, &opts).await.message().clone();
    assert!(
        third.text().contains("5550") || third.text().contains("5,550"),
        "{provider}: {}",
        third.text()
    );
}

#[tokio::test]
#[ignore = "live"]
async fn live_anthropic_says_pong() {
    pong("anthropic", "ANTHROPIC_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_openai_says_pong() {
    pong("openai", "OPENAI_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_anthropic_tool_round_trip_with_thinking() {
    round_trip("anthropic", "ANTHROPIC_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_openai_tool_round_trip_with_thinking() {
    round_trip("openai", "OPENAI_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_google_tool_round_trip_with_thinking() {
    round_trip("google", "GEMINI_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_deepseek_tool_round_trip_with_thinking() {
    round_trip("deepseek", "DEEPSEEK_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_mistral_tool_round_trip_with_thinking() {
    round_trip("mistral", "MISTRAL_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_xai_tool_round_trip_with_thinking() {
    round_trip("xai", "XAI_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_openrouter_tool_round_trip_with_thinking() {
    round_trip("openrouter", "OPENROUTER_API_KEY").await;
}
