//! OpenAI, DeepSeek, Mistral and Gemini conversations through the fake server, which
//! enforces their replay rules (see rab-fake-llm's `rules.rs`).

use pretty_assertions::assert_eq;
use rab_ai::{AssistantBlock, Context, Message, Model, SystemMessage, ThinkingLevel};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::super::harness::{options, run};
use super::{model, read_tool, result};

fn start(prompt: &str) -> Context {
    Context {
        system_prompt: "S".into(),
        messages: vec![Message::user(prompt)],
        tools: vec![read_tool()],
        memo: None,
    }
}

/// Plays the scripted tool round and answer, feeding each reply back.
async fn round_trip(m: &Model, llm: &FakeLlm, level: ThinkingLevel) -> Context {
    let mut ctx = start("read a");
    let mut opts = options();
    opts.thinking = level;
    let first = run(m, &ctx, &opts).await.message().clone();
    let id = first.tool_calls().next().expect("a tool call").id.clone();
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(result(&id));
    let second = run(m, &ctx, &opts).await;
    let statuses: Vec<u16> = llm.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200], "{:?}", second.events.last());
    ctx.messages.push(Message::Assistant(second.message().clone()));
    ctx
}

#[tokio::test]
async fn conformance_openai_phase_goes_back_and_a_changed_effort_is_an_update() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a"})).with_thinking("Look first."),
        Turn::text("It says hello."),
        Turn::text("Thinking harder now."),
    ]);
    let m = model("gpt-6.1-sol", &llm);
    let mut ctx = round_trip(&m, &llm, ThinkingLevel::Low).await;
    let phases: Vec<Option<String>> = ctx
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => a.content.iter().find_map(|b| match b {
                AssistantBlock::Text { phase, .. } => Some(phase.clone()),
                AssistantBlock::Thinking { .. }
                | AssistantBlock::ToolCall(_)
                | AssistantBlock::WebSearch(_) => None,
            }),
            Message::User(_) | Message::ToolResult(_) | Message::System(_) => None,
        })
        .collect();
    assert_eq!(phases, [Some("final_answer".to_owned())], "the answer is labelled");
    // The user raises the thinking level: an update before the next prompt.
    ctx.messages.push(Message::System(SystemMessage {
        thinking: Some((ThinkingLevel::Low, ThinkingLevel::High)),
        ..SystemMessage::default()
    }));
    ctx.messages.push(Message::user("think harder"));
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    assert_eq!(run(&m, &ctx, &opts).await.message().text(), "Thinking harder now.");
    let body = &llm.requests()[2].body;
    assert_eq!(body["reasoning"]["effort"], "low", "the request-level effort stays the first");
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[input.len() - 2],
        json!({"type": "configuration_update", "reasoning": {"effort": "high"}})
    );
}

#[tokio::test]
async fn conformance_deepseek_gets_reasoning_back_on_every_tool_call() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a"})).with_thinking("Read it."),
        Turn::text("Done."),
        Turn::text("Again."),
    ]);
    let m = model("deepseek-flash", &llm);
    let mut ctx = round_trip(&m, &llm, ThinkingLevel::High).await;
    // Later requests (here after a switch to the other DeepSeek model) still carry it.
    ctx.messages.push(Message::user("more"));
    let pro = model("deepseek-v4-pro", &llm);
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    assert_eq!(run(&pro, &ctx, &opts).await.message().text(), "Again.");
    let body = &llm.requests()[2].body;
    assert_eq!(body["messages"][2]["reasoning_content"], "Read it.");
}

#[tokio::test]
async fn conformance_mistral_thinking_chunks_are_read_and_sent_back() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("It is 4.").with_thinking("Two plus two.").quirk("mistralThinking"),
        Turn::text("It is 6."),
    ]);
    let m = model("mistral-medium-latest", &llm);
    let mut ctx = start("2+2?");
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    let first = run(&m, &ctx, &opts).await.message().clone();
    assert_eq!(first.text(), "It is 4.");
    assert_eq!(
        first.content[0],
        AssistantBlock::Thinking {
            thinking: "Two plus two.".into(),
            signature: None,
            item_id: None,
            redacted: false
        }
    );
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(Message::user("3+3?"));
    run(&m, &ctx, &opts).await.message();
    let sent = &llm.requests()[1].body["messages"][2];
    assert_eq!(
        sent["content"],
        json!([{"type": "thinking", "thinking": [{"type": "text", "text": "Two plus two."}]},
               {"type": "text", "text": "It is 4."}])
    );
}

#[tokio::test]
async fn conformance_gemini_signs_calls_from_another_model_in_the_current_turn() {
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("read", json!({"path": "a"})), Turn::text("Done.")]);
    let claude = {
        let mut m = model("claude-sonnet-5-5", &llm);
        m.base_url = llm.url();
        m
    };
    // A tool call from Claude, then the conversation moves to Gemini mid-turn.
    let mut ctx = start("read a");
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    let first = run(&claude, &ctx, &opts).await.message().clone();
    let id = first.tool_calls().next().unwrap().id.clone();
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(result(&id));
    let gemini = model("gemini-4-argon", &llm);
    assert_eq!(run(&gemini, &ctx, &opts).await.message().text(), "Done.");
    let part = &llm.requests()[1].body["contents"][1]["parts"][0];
    assert_eq!(part["thoughtSignature"], "skip_thought_signature_validator");
    // Gemini's own calls carry their own signature.
    let mut ctx = start("read b");
    llm.script([Turn::tool_call("read", json!({"path": "b"})), Turn::text("ok")]);
    let own = run(&gemini, &ctx, &opts).await.message().clone();
    let call = own.tool_calls().next().unwrap().clone();
    assert!(call.signature.is_some(), "Gemini 4 signs its calls");
    ctx.messages.push(Message::Assistant(own));
    ctx.messages.push(result(&call.id));
    run(&gemini, &ctx, &opts).await.message();
    let last = llm.requests().pop().unwrap();
    let part = &last.body["contents"][1]["parts"][0];
    assert_eq!(part["thoughtSignature"], call.signature.unwrap().as_str());
}

/// openrouter.ai/docs/guides/best-practices/reasoning-tokens ("Preserving reasoning
/// blocks", read 2026-11-28): Gemini's tool calls through OpenRouter are refused unless
/// the `reasoning_details` streamed with them come back unchanged.
#[tokio::test]
async fn conformance_openrouter_gemini_gets_its_reasoning_details_back() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a"})).with_thinking("Read it."),
        Turn::text("Done."),
    ]);
    let m = model("openrouter/google/gemini-3.8-flash", &llm);
    let ctx = round_trip(&m, &llm, ThinkingLevel::High).await;
    let sent = &llm.requests()[1].body["messages"];
    let assistant = sent.as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap();
    // The two streamed pieces merged by index, every field kept.
    assert_eq!(
        assistant["reasoning_details"],
        json!([{"type": "reasoning.encrypted", "data": "sig-1-end", "index": 0,
                "id": "tool_call_1_0", "format": "google-gemini-v1"}])
    );
    assert_eq!(ctx.messages.len(), 4);
}

#[tokio::test]
async fn conformance_llamacpp_gets_the_reasoning_of_a_tool_loop_back() {
    // llama.cpp's server takes `reasoning_content` on assistant messages (pull 18994):
    // GPT-OSS reasons across its tool calls and does worse without its reasoning.
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a"})).with_thinking("Read a first."),
        Turn::text("Done."),
    ]);
    let mut m = rab_ai::Registry::builtin()
        .resolve(&rab_ai::ModelQuery {
            provider: Some("llamacpp"),
            model: Some("gpt-oss-20b"),
            ..Default::default()
        })
        .unwrap()
        .model;
    m.base_url = llm.openai_url();
    round_trip(&m, &llm, ThinkingLevel::Off).await;
    let body = &llm.requests()[1].body;
    assert_eq!(body["messages"][2]["role"], "assistant");
    assert_eq!(body["messages"][2]["reasoning_content"], "Read a first.");
}
