//! Anthropic conversations through the fake server, which binds each thinking block to
//! its prefix as the API does (platform.claude.com/docs/en/build-with-claude/
//! preserved-thinking and …/prefix-checks, read 2026-11-24).

use pretty_assertions::assert_eq;
use rab_ai::{AssistantMessage, Context, Message, Model, SystemMessage, ThinkingLevel, ToolSpec};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::super::harness::{options, run};
use super::{model, read_tool, result};

fn thinking_blocks(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "thinking")
        .count()
}

async fn reply(model: &Model, context: &Context, level: ThinkingLevel) -> AssistantMessage {
    let mut opts = options();
    opts.thinking = level;
    run(model, context, &opts).await.message().clone()
}

#[tokio::test]
async fn conformance_anthropic_thinking_survives_appends_and_updates_and_is_left_out_after_a_rewrite()
 {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a"})).with_thinking("Read a first."),
        Turn::text("Done.").with_thinking("It says hello."),
        Turn::text("Still here.").with_thinking("Tools arrived."),
        Turn::text("New day.").with_thinking("The prompt changed."),
    ]);
    let m = model("claude-sonnet-5-5", &llm);
    let mut ctx = Context {
        system_prompt: "You are rab.\n\nCurrent date: 2026-11-24".into(),
        messages: vec![Message::user("read a")],
        tools: vec![read_tool()],
        memo: None,
    };
    let first = reply(&m, &ctx, ThinkingLevel::High).await;
    assert!(first.prefix_hash.is_some(), "the reply records its prefix");
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(result("toolu_1_0"));
    let second = reply(&m, &ctx, ThinkingLevel::High).await;
    assert_eq!(second.text(), "Done.");
    ctx.messages.push(Message::Assistant(second));

    // A tool arrives and the date changes: appended, never rewritten.
    ctx.messages.push(Message::user("more"));
    ctx.messages.push(Message::System(SystemMessage {
        text: "Current date: 2026-11-25".into(),
        tools_added: vec![ToolSpec { name: "late".into(), ..read_tool() }],
        ..SystemMessage::default()
    }));
    let third = reply(&m, &ctx, ThinkingLevel::High).await;
    assert_eq!(third.text(), "Still here.");
    let requests = llm.requests();
    assert_eq!(thinking_blocks(&requests[2].body), 2, "every earlier block went back");
    assert!(requests.iter().all(|r| r.transformations.is_empty()), "nothing was dropped");
    ctx.messages.push(Message::Assistant(third));

    // A rewritten system prompt: rab leaves out the thinking it would invalidate, so the
    // request neither fails nor relies on the API dropping blocks.
    ctx.messages.push(Message::user("again"));
    ctx.system_prompt = "You are rab.\n\nCurrent date: 2026-11-25".into();
    let fourth = reply(&m, &ctx, ThinkingLevel::High).await;
    assert_eq!(fourth.text(), "New day.");
    let last = &llm.requests()[3];
    assert_eq!(thinking_blocks(&last.body), 0);
    assert!(last.transformations.is_empty());
}

#[tokio::test]
async fn conformance_the_fake_server_rejects_or_drops_a_block_behind_a_changed_prefix() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("one").with_thinking("First."), Turn::text("x"), Turn::text("x")]);
    let m = model("claude-sonnet-5-5", &llm);
    let mut ctx = Context {
        system_prompt: "S1".into(),
        messages: vec![Message::user("hi")],
        ..Context::default()
    };
    let mut first = reply(&m, &ctx, ThinkingLevel::High).await;
    // A client that keeps a block behind a changed prompt: its fingerprint forged to
    // match the new prefix, so rab sends it.
    ctx.system_prompt = "S2".into();
    let forged = rab_ai::bench::build(&m, &ctx, &options()).unwrap().1;
    first.prefix_hash = forged;
    ctx.messages.push(Message::Assistant(first));
    ctx.messages.push(Message::user("again"));

    // With adaptive thinking rab asks for drop_block: the request goes through and the
    // server reports the dropped block.
    let out = reply(&m, &ctx, ThinkingLevel::High).await;
    assert_eq!(out.text(), "x");
    let dropped = &llm.requests()[1].transformations;
    assert_eq!(
        dropped,
        &vec![json!({"type": "thinking_dropped", "path": "messages.1.content.0",
                     "reason": "prefix_binding_mismatch"})]
    );

    // between_tools takes no block_binding: the API's 400, naming the block and what
    // changed.
    let mut opts = options();
    opts.thinking = ThinkingLevel::Off;
    let err = run(&m, &ctx, &opts).await.error().to_string();
    assert!(
        err.contains(
            "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation."
        ) && err.contains("The `system` prompt differs from when the block was created."),
        "{err}"
    );
}

#[tokio::test]
async fn conformance_anthropic_a_block_left_out_of_the_middle_breaks_the_ones_after_it() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("a").with_thinking("One."),
        Turn::text("b").with_thinking("Two."),
        Turn::text("c"),
    ]);
    let m = model("claude-opus-5-5", &llm);
    let mut ctx = Context {
        system_prompt: "S".into(),
        messages: vec![Message::user("1")],
        ..Context::default()
    };
    let a = reply(&m, &ctx, ThinkingLevel::High).await;
    ctx.messages.push(Message::Assistant(a));
    ctx.messages.push(Message::user("2"));
    let b = reply(&m, &ctx, ThinkingLevel::High).await;
    ctx.messages.push(Message::Assistant(b));
    ctx.messages.push(Message::user("3"));
    // Take the first block out by hand, keep the second.
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.content.retain(|b| !matches!(b, rab_ai::AssistantBlock::Thinking { .. }));
    }
    reply(&m, &ctx, ThinkingLevel::High).await;
    let body = &llm.requests()[2];
    // rab saw the first reply change and left out the second block too.
    assert_eq!(thinking_blocks(&body.body), 0);
    assert!(body.transformations.is_empty());
}

/// The bytes of a request's `messages` with the cache markers taken out (they move
/// from turn to turn by design).
fn unmarked(body: &Value) -> String {
    let mut messages = body["messages"].clone();
    for m in messages.as_array_mut().unwrap() {
        for b in m["content"].as_array_mut().into_iter().flatten() {
            if let Some(b) = b.as_object_mut() {
                b.remove("cache_control");
            }
        }
    }
    let text = messages.to_string();
    text[..text.len() - 1].to_owned()
}

#[tokio::test]
async fn conformance_anthropic_a_changed_effort_is_a_system_message_and_the_prefix_holds() {
    // Opus 5 and Haiku 5.5 (whose thinking is bound to its prefix) switch it off.
    for id in ["claude-opus-5", "claude-haiku-5-5"] {
        changed_efforts(id).await;
    }
}

async fn changed_efforts(id: &str) {
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("First.").with_thinking("Plan."),
        Turn::text("Second.").with_thinking("Less."),
        Turn::text("Third."),
        Turn::text("Fourth.").with_thinking("Back."),
    ]);
    let m = model(id, &llm);
    let mut ctx = Context {
        system_prompt: "You are rab.".into(),
        messages: vec![Message::user("a")],
        tools: vec![read_tool()],
        memo: None,
    };
    let mut level = ThinkingLevel::High;
    for (next, prompt) in
        [(ThinkingLevel::Low, "b"), (ThinkingLevel::Off, "c"), (ThinkingLevel::Medium, "d")]
    {
        let answer = reply(&m, &ctx, level).await;
        ctx.messages.push(Message::Assistant(answer));
        ctx.messages.push(Message::System(SystemMessage {
            thinking: Some((level, next)),
            ..SystemMessage::default()
        }));
        ctx.messages.push(Message::user(prompt));
        level = next;
    }
    assert_eq!(reply(&m, &ctx, level).await.text(), "Fourth.");
    let requests = llm.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200; 4], "{id}: the fake server took every request");
    let effort = |i: usize| requests[i].body["output_config"]["effort"].clone();
    assert_eq!([effort(0), effort(1), effort(3)], ["high", "high", "high"], "the top level stays");
    // Low: an effort-only message after the new prompt; the earlier request's messages
    // are a prefix of it, so the cache and the thinking bound to it hold.
    let second = &requests[1].body["messages"];
    assert_eq!(
        second[3],
        json!({"role": "system", "content": [], "output_config": {"effort": "low"}})
    );
    assert!(unmarked(&requests[1].body).starts_with(&unmarked(&requests[0].body)));
    assert!(
        requests[1]
            .header("anthropic-beta")
            .unwrap()
            .contains("mid-conversation-output-config-2026-07-01")
    );
    assert_eq!(thinking_blocks(&requests[1].body), 1);
    // Off: thinking disabled at the top, without an effort; the change is still a
    // message (at the lowest effort), so nothing sent before moves.
    assert_eq!(requests[2].body["thinking"], json!({"type": "disabled"}));
    assert!(requests[2].body.get("output_config").is_none());
    assert!(unmarked(&requests[2].body).starts_with(&unmarked(&requests[1].body)));
    // Medium again: every change is in place, each where it was.
    assert!(unmarked(&requests[3].body).starts_with(&unmarked(&requests[2].body)));
    let fourth = requests[3].body["messages"].as_array().unwrap();
    let efforts: Vec<&Value> =
        fourth.iter().filter_map(|m| m.get("output_config")).map(|c| &c["effort"]).collect();
    assert_eq!(efforts, [&json!("low"), &json!("low"), &json!("medium")]);
    assert!(requests.iter().all(|r| r.transformations.is_empty()), "nothing was dropped");
}
