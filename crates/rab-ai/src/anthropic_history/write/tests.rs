//! A request written with a memo is the request built whole, through everything a
//! conversation does between requests; and the memo is what it is written from.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::anthropic::AnthropicWire;
use crate::model::{Api, Model, ThinkingFormat};
use crate::provider::{StreamOptions, Wire};
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Context, Message, RequestMemo, StopReason,
    SystemMessage, ThinkingLevel, ToolCall, ToolResultMessage, ToolSpec,
};

/// A model with everything that shapes the history: thinking bound to its prefix,
/// system messages, tool changes and per-message effort.
fn model() -> Model {
    let mut m = Model::custom("claude-opus-4-7", "anthropic", Api::AnthropicMessages, "http://h");
    m.reasoning = true;
    m.compat.thinking = ThinkingFormat::AnthropicAdaptive;
    m.compat.preserved_thinking = true;
    m.compat.system_messages = true;
    m.compat.tool_changes = true;
    m.compat.effort_updates = true;
    m
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object"}),
        grammar: None,
        server: None,
    }
}

/// A reply with thinking and `calls` tool calls, recording `prefix_hash`.
fn reply(turn: usize, calls: usize, prefix_hash: Option<String>) -> Message {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-opus-4-7");
    a.content.push(AssistantBlock::Thinking {
        thinking: format!("step {turn}"),
        signature: Some(format!("sig{turn}")),
        item_id: None,
        redacted: false,
    });
    for c in 0..calls {
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: format!("toolu_{turn}_{c}"),
            name: "bash".into(),
            arguments: json!({"command": format!("echo \"{turn}\" {c}")}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
    }
    a.stop_reason = if calls > 0 { StopReason::ToolUse } else { StopReason::Stop };
    a.prefix_hash = prefix_hash;
    Message::Assistant(a)
}

fn result(turn: usize, c: usize) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: format!("toolu_{turn}_{c}"),
        tool_name: "bash".into(),
        content: vec![Content::text(format!("{turn} {c}\n"))],
        is_error: c == 1,
    })
}

/// The request for `ctx`, with its memo and without one: they must be the same.
fn both(model: &Model, ctx: &Context, opts: &StreamOptions) -> (Value, Option<String>) {
    let with = AnthropicWire.build(model, ctx, opts).unwrap();
    let whole = Context { memo: None, ..ctx.clone() };
    let without = AnthropicWire.build(model, &whole, opts).unwrap();
    let body: Value = serde_json::from_slice(&with.body).unwrap();
    let want: Value = serde_json::from_slice(&without.body).unwrap();
    assert_eq!(body, want);
    assert_eq!(with.body[..], without.body[..]);
    assert_eq!(with.prefix_hash, without.prefix_hash);
    (body, with.prefix_hash)
}

/// A conversation that remembers its requests in `memo`.
fn start(memo: &RequestMemo) -> Context {
    Context {
        system_prompt: "Be brief.".into(),
        messages: vec![Message::user("start")],
        tools: vec![spec("bash")],
        memo: Some(memo.clone()),
    }
}

fn kept(memo: &RequestMemo) -> usize {
    memo.lock().as_ref().map_or(0, |m| m.kept.len())
}

/// Twelve turns of everything between requests: tool rounds with one and two results,
/// prompts, tools added and withdrawn, thinking levels changed, a failed request (a
/// prompt with no reply), a reply without a fingerprint; each request written with the
/// memo equals it built whole, and the memo keeps all but the last turns.
#[test]
fn a_memo_writes_the_request_the_whole_history_would() {
    let model = model();
    let memo = RequestMemo::new();
    let mut ctx = start(&memo);
    let mut opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
    for turn in 0..12 {
        let (body, hash) = both(&model, &ctx, &opts);
        let calls = turn % 3;
        ctx.messages.push(reply(turn, calls, if turn == 4 { None } else { hash }));
        for c in 0..calls {
            ctx.messages.push(result(turn, c));
        }
        match turn {
            2 => ctx.messages.push(Message::System(SystemMessage {
                text: "The project moved.".into(),
                tools_added: vec![spec("grep")],
                ..Default::default()
            })),
            5 => {
                ctx.messages.push(Message::System(SystemMessage {
                    tools_removed: vec!["grep".into()],
                    thinking: Some((ThinkingLevel::High, ThinkingLevel::Low)),
                    ..Default::default()
                }));
                opts.thinking = ThinkingLevel::Low;
            }
            7 => {
                // A request that failed: the prompt stays, with no reply after it.
                ctx.messages.push(Message::user("first try"));
                let _ = both(&model, &ctx, &opts);
            }
            _ => {}
        }
        if calls == 0 {
            ctx.messages.push(Message::user(format!("prompt {turn}")));
        }
        let sent = body["messages"].as_array().unwrap().len();
        if turn >= 3 {
            assert!(
                kept(&memo) > 0 && kept(&memo) + 6 >= sent,
                "turn {turn}: kept {} of {sent}: {:#}",
                kept(&memo),
                body["messages"]
            );
        }
    }
}

/// What the memo cannot see in the messages is checked: a changed system prompt
/// (the thinking before it is left out), another model, other tools.
#[test]
fn a_memo_gives_way_to_changes_outside_the_messages() {
    let model = model();
    let memo = RequestMemo::new();
    let mut ctx = start(&memo);
    let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
    let mut hash = None;
    for turn in 0..6 {
        (_, hash) = both(&model, &ctx, &opts);
        ctx.messages.push(reply(turn, 1, hash.clone()));
        ctx.messages.push(result(turn, 0));
    }
    assert!(kept(&memo) > 0);
    ctx.system_prompt = "Be thorough.".into();
    let (body, _) = both(&model, &ctx, &opts);
    let thinking = |body: &Value| {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant" && m["content"][0]["type"] == "thinking")
            .count()
    };
    assert_eq!(thinking(&body), 0, "a changed prefix leaves the thinking out");
    let mut other = model.clone();
    other.id = "claude-opus-4-8".into();
    both(&other, &ctx, &opts);
    ctx.tools.push(spec("read"));
    both(&model, &ctx, &opts);
    assert!(hash.is_some());
}

/// The memo is what the request is written from: an owner that changed a message it
/// sent without making a new memo would send the message as it was (the contract the
/// agent keeps by making a new memo when it replaces its messages).
#[test]
fn a_request_is_written_from_its_memo() {
    let model = model();
    let memo = RequestMemo::new();
    let mut ctx = Context {
        system_prompt: "S".into(),
        messages: vec![Message::user("the first prompt")],
        tools: vec![spec("bash")],
        memo: Some(memo.clone()),
    };
    let opts = StreamOptions::default();
    for turn in 0..4 {
        both(&model, &ctx, &opts);
        ctx.messages.push(reply(turn, 1, None));
        ctx.messages.push(result(turn, 0));
    }
    ctx.messages[0] = Message::user("changed behind its back");
    let sent = |ctx: &Context| {
        String::from_utf8(AnthropicWire.build(&model, ctx, &opts).unwrap().body.to_vec()).unwrap()
    };
    assert!(sent(&ctx).contains("the first prompt"));
    ctx.memo = Some(RequestMemo::new());
    assert!(sent(&ctx).contains("changed behind its back"));
}
