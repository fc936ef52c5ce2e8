use super::*;
use crate::types::{AssistantMessage, StopReason, SystemMessage, ToolCall, ToolResultMessage};
use pretty_assertions::assert_eq;
use serde_json::json;

fn model(id: &str, system_messages: bool, tool_changes: bool) -> Model {
    let mut m = Model::custom(id, "anthropic", Api::AnthropicMessages, "http://h");
    m.compat.system_messages = system_messages;
    m.compat.tool_changes = tool_changes;
    m.compat.preserved_thinking = true;
    m
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({}),
        grammar: None,
        server: None,
    }
}

fn reply(thinking: &str, prefix_hash: Option<String>) -> Message {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-x");
    a.content.push(AssistantBlock::Thinking {
        thinking: thinking.into(),
        signature: Some(format!("sig-{thinking}")),
        item_id: None,
        redacted: false,
    });
    a.content.push(AssistantBlock::text("ok"));
    a.stop_reason = StopReason::Stop;
    a.prefix_hash = prefix_hash;
    Message::Assistant(a)
}

/// The fingerprint a reply to `context` would record.
fn fingerprint(context: &Context, model: &Model) -> String {
    let changes = uses_tool_changes(model, context);
    let tools = tools(context, changes);
    let system = vec![Block::Text { text: &context.system_prompt, cache_control: None }];
    let declared: Vec<&str> = tools.iter().map(|t| t.name).collect();
    let mut messages = messages(context, model, changes, &declared, false);
    bind_thinking(&tools, &system, &mut messages, model.compat.preserved_thinking, true, true)
        .unwrap()
}

fn sent(context: &Context, model: &Model) -> Value {
    sent_with(context, model, true)
}

fn sent_with(context: &Context, model: &Model, keep_unknown: bool) -> Value {
    let changes = uses_tool_changes(model, context);
    let tools = tools(context, changes);
    let system = vec![Block::Text { text: &context.system_prompt, cache_control: None }];
    let declared: Vec<&str> = tools.iter().map(|t| t.name).collect();
    let mut messages = messages(context, model, changes, &declared, false);
    let binds = model.compat.preserved_thinking;
    bind_thinking(&tools, &system, &mut messages, binds, keep_unknown, true);
    json!({"tools": serde_json::to_value(&tools).unwrap(), "messages": serde_json::to_value(&messages).unwrap()})
}

fn thinking_kept(body: &Value) -> Vec<bool> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"][0]["type"] == "thinking")
        .collect()
}

#[test]
fn thinking_goes_back_while_its_prefix_holds_and_not_after_a_change() {
    let m = model("claude-x", true, true);
    let mut ctx = Context {
        system_prompt: "Be brief.".into(),
        messages: vec![Message::user("one")],
        tools: vec![spec("read")],
        memo: None,
    };
    let h1 = fingerprint(&ctx, &m);
    ctx.messages.push(reply("first", Some(h1)));
    ctx.messages.push(Message::user("two"));
    let h2 = fingerprint(&ctx, &m);
    ctx.messages.push(reply("second", Some(h2)));
    ctx.messages.push(Message::user("three"));
    assert_eq!(thinking_kept(&sent(&ctx, &m)), [true, true], "append-only: all kept");

    // Appending a system message (new instructions, new tools) keeps everything.
    let mut appended = ctx.clone();
    appended.messages.push(Message::System(SystemMessage {
        text: "Current date: 2026-11-25".into(),
        tools_added: vec![spec("mcp__s__t")],
        ..SystemMessage::default()
    }));
    let body = sent(&appended, &m);
    assert_eq!(thinking_kept(&body), [true, true]);
    assert_eq!(
        body["tools"][1],
        json!({"name": "mcp__s__t", "description": "mcp__s__t tool", "input_schema": {}, "defer_loading": true})
    );
    assert_eq!(
        body["messages"][5],
        json!({"role": "system", "content": [
            {"type": "text", "text": "Current date: 2026-11-25"},
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "mcp__s__t"}}
        ]})
    );

    // A rewritten system prompt: every reply's thinking is left out.
    let mut rebuilt = ctx.clone();
    rebuilt.system_prompt = "Be brief. Current date: 2026-11-25".into();
    assert_eq!(thinking_kept(&sent(&rebuilt, &m)), [false, false]);

    // A changed message: the reply after it loses its thinking, and so does every later
    // one (a gap would invalidate them anyway).
    let mut edited = ctx.clone();
    edited.messages[2] = Message::user("two, edited");
    assert_eq!(thinking_kept(&sent(&edited, &m)), [true, false]);

    // A tool appended to `tools` without tool changes rewrites the prefix.
    let plain = model("claude-sonnet-5", false, false);
    let mut ctx_plain = Context { messages: vec![Message::user("one")], ..ctx.clone() };
    let h = fingerprint(&ctx_plain, &plain);
    ctx_plain.messages.push(reply("first", Some(h)));
    ctx_plain.messages.push(Message::System(SystemMessage {
        tools_added: vec![spec("late")],
        ..SystemMessage::default()
    }));
    let body = sent(&ctx_plain, &plain);
    assert_eq!(thinking_kept(&body), [false], "without tool changes the tools list changed");
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
}

#[test]
fn after_a_drop_legacy_replies_lose_thinking_too() {
    let m = model("claude-x", true, true);
    let mut ctx = Context {
        system_prompt: "S".into(),
        messages: vec![
            Message::user("one"),
            reply("a", Some("0000000000000000".into())),
            Message::user("two"),
            reply("b", None),
            Message::user("three"),
        ],
        tools: vec![],
        memo: None,
    };
    assert_eq!(thinking_kept(&sent(&ctx, &m)), [false, false]);
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.prefix_hash = None;
    }
    assert_eq!(
        thinking_kept(&sent(&ctx, &m)),
        [true, true],
        "unknown prefixes are kept when the API drops what does not match"
    );
    assert_eq!(
        thinking_kept(&sent_with(&ctx, &m, false)),
        [false, false],
        "and left out when a mismatch would fail the request (between_tools)"
    );
}

#[test]
fn an_empty_thinking_block_with_a_signature_goes_back() {
    // With `display` omitted the text is empty; the signature carries the reasoning.
    let m = model("claude-x", true, true);
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-x");
    a.content.push(AssistantBlock::Thinking {
        thinking: String::new(),
        signature: Some("EqQB".into()),
        item_id: None,
        redacted: false,
    });
    a.content.push(AssistantBlock::ToolCall(ToolCall {
        id: "t1".into(),
        name: "read".into(),
        arguments: json!({}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    }));
    let ctx = Context {
        messages: vec![
            Message::user("go"),
            Message::Assistant(a),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "t1".into(),
                tool_name: "read".into(),
                content: vec![Content::text("x")],
                is_error: false,
            }),
        ],
        ..Context::default()
    };
    let body = sent(&ctx, &m);
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "", "signature": "EqQB"})
    );
}

#[test]
fn without_system_messages_an_update_is_text_at_the_end_of_the_user_turn() {
    let m = model("claude-sonnet-5", false, false);
    let ctx = Context {
        messages: vec![
            Message::user("hi"),
            Message::System(SystemMessage {
                text: "Current date: 2026-11-25".into(),
                ..SystemMessage::default()
            }),
        ],
        ..Context::default()
    };
    let body = sent(&ctx, &m);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hi"},
            {"type": "text", "text": "<system_update>\nCurrent date: 2026-11-25\n</system_update>"}
        ]}])
    );
}

#[test]
fn a_tool_that_comes_back_with_another_spec_rebuilds_the_tools_list() {
    let m = model("claude-x", true, true);
    let mut changed = spec("read");
    changed.description = "Read, differently.".into();
    let ctx = Context {
        messages: vec![
            Message::user("hi"),
            Message::System(SystemMessage { tools_added: vec![changed], ..Default::default() }),
        ],
        tools: vec![spec("read")],
        ..Context::default()
    };
    assert!(!uses_tool_changes(&m, &ctx));
    let body = sent(&ctx, &m);
    assert_eq!(body["tools"][0]["description"], "Read, differently.");
}

#[test]
fn tool_ids_from_other_providers_are_made_valid() {
    assert_eq!(tool_id("call_abc|fc_1"), "call_abc_fc_1");
    assert_eq!(tool_id(""), "call");
    assert_eq!(tool_id(&"x".repeat(100)).len(), 64);
}

#[test]
fn a_reply_written_after_a_gap_keeps_its_thinking() {
    let m = model("claude-x", true, true);
    let mut ctx = Context {
        system_prompt: "S".into(),
        messages: vec![Message::user("one"), reply("a", Some("0000000000000000".into()))],
        tools: vec![],
        memo: None,
    };
    ctx.messages.push(Message::user("two"));
    // The next reply was written with the first one's thinking already left out.
    let h = fingerprint(&ctx, &m);
    ctx.messages.push(reply("b", Some(h)));
    ctx.messages.push(Message::user("three"));
    assert_eq!(thinking_kept(&sent(&ctx, &m)), [false, true]);
}

#[test]
fn thinking_that_is_not_bound_goes_back_as_it_was() {
    // Budget thinking (Haiku 4.5) is not bound to a prefix, and a tool round must
    // start with its thinking: a changed tools list leaves it as it was.
    let mut m = model("claude-haiku-4-5", false, false);
    m.compat.preserved_thinking = false;
    let mut ctx = Context {
        system_prompt: "S".into(),
        messages: vec![Message::user("one")],
        tools: vec![],
        memo: None,
    };
    let h = fingerprint(&ctx, &m);
    ctx.messages.push(reply("a", Some(h)));
    ctx.messages.push(Message::System(SystemMessage {
        tools_added: vec![spec("late")],
        ..Default::default()
    }));
    assert_eq!(thinking_kept(&sent(&ctx, &m)), [true]);
}

#[test]
fn a_system_message_whose_request_failed_moves_past_the_next_user_turn() {
    // [user, system, user] is refused: the update goes before the next reply.
    let m = model("claude-x", true, true);
    let note = |t: &str| Message::System(SystemMessage { text: t.into(), ..Default::default() });
    let ctx = Context {
        messages: vec![Message::user("one"), note("first"), Message::user("two"), note("second")],
        ..Context::default()
    };
    let body = sent(&ctx, &m);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one"}]},
            {"role": "user", "content": [{"type": "text", "text": "two"}]},
            {"role": "system", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]}
        ])
    );
}

#[test]
fn a_removal_of_a_tool_no_longer_declared_is_left_out() {
    // The addition was summarised away; its removal must not name an undeclared tool.
    let m = model("claude-x", true, true);
    let ctx = Context {
        messages: vec![
            Message::user("one"),
            Message::System(SystemMessage { tools_added: vec![spec("b")], ..Default::default() }),
            reply("x", None),
            Message::user("two"),
            Message::System(SystemMessage {
                tools_removed: vec!["a".into(), "b".into()],
                ..Default::default()
            }),
        ],
        tools: vec![spec("read")],
        ..Context::default()
    };
    let body = sent(&ctx, &m);
    let last = &body["messages"][4]["content"];
    assert_eq!(
        last,
        &json!([{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "b"}}])
    );
}

#[test]
fn the_fingerprint_is_computed_only_as_far_as_needed() {
    let model = model("claude-x", true, true);
    let build = |context: &Context, may_think: bool| {
        let changes = uses_tool_changes(&model, context);
        let tools = tools(context, changes);
        let system = vec![Block::Text { text: &context.system_prompt, cache_control: None }];
        let declared: Vec<&str> = tools.iter().map(|t| t.name).collect();
        let mut messages = messages(context, &model, changes, &declared, false);
        let hash = bind_thinking(&tools, &system, &mut messages, true, true, may_think);
        (hash, serde_json::to_value(&messages).unwrap())
    };
    // A reply that cannot think records no fingerprint.
    let mut context = Context::default();
    context.messages.push(Message::user("hi"));
    assert_eq!(build(&context, false).0, None);
    assert!(build(&context, true).0.is_some());
    // Checking earlier thinking does not depend on whether this reply may think: a
    // reply whose prefix changed loses its thinking either way.
    let mut changed = context.clone();
    changed.messages.push(reply("deep", Some("0000000000000000".into())));
    changed.messages.push(Message::user("and?"));
    let (none, body_off) = build(&changed, false);
    let (some, body_on) = build(&changed, true);
    assert_eq!(none, None);
    assert!(some.is_some());
    assert_eq!(body_off, body_on);
    assert_eq!(thinking_kept(&json!({"messages": body_off})), [false]);
}
