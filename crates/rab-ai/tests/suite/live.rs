//! Live tests against the real providers; run with `cargo test -- --ignored` and a key
//! in the environment. Without a key they return early.

use rab_ai::{ModelQuery, Registry, StreamOptions};

use super::harness::{context, run};

async fn live(provider: &str, env: &str) {
    let Ok(key) = std::env::var(env) else {
        eprintln!("{env} not set; skipping the live {provider} test");
        return;
    };
    let registry = Registry::builtin();
    let resolved = registry
        .resolve(&ModelQuery { provider: Some(provider), ..Default::default() })
        .expect("default model");
    let opts = StreamOptions { api_key: Some(key), max_tokens: Some(64), ..Default::default() };
    let out = run(&resolved.model, &context("Reply with the single word: pong"), &opts).await;
    let text = out.message().text().to_lowercase();
    assert!(text.contains("pong"), "{provider}: {text}");
}

#[tokio::test]
#[ignore = "live"]
async fn live_anthropic_says_pong() {
    live("anthropic", "ANTHROPIC_API_KEY").await;
}

#[tokio::test]
#[ignore = "live"]
async fn live_openai_says_pong() {
    live("openai", "OPENAI_API_KEY").await;
}
