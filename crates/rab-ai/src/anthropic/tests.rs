use super::*;
use crate::bench::decode;
use crate::model::Api;
use crate::types::{AssistantBlock, Message};
use pretty_assertions::assert_eq;

#[test]
fn redacted_thinking_keeps_its_data_for_replay() {
    let sse = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"s\",\"name\":\"web_search\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi \\\"there\\\"\"}}\n\n",
        "event: some_future_event\ndata: {\"type\":\"some_future_event\"}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":7}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let (msg, _) = decode(Api::AnthropicMessages, sse.as_bytes(), 7).unwrap();
    assert_eq!(
        msg.content[0],
        AssistantBlock::Thinking {
            thinking: String::new(),
            signature: Some("opaque".into()),
            item_id: None,
            redacted: true
        }
    );
    assert_eq!(msg.text(), "hi \"there\"");
    assert_eq!(msg.stop_reason, StopReason::Length);
    assert_eq!((msg.usage.input, msg.usage.output), (5, 7));
    assert_eq!(msg.response_id.as_deref(), Some("m1"));
}

#[test]
fn a_stream_without_message_stop_is_incomplete() {
    let sse =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n";
    let err = decode(Api::AnthropicMessages, sse.as_bytes(), 64).unwrap_err();
    assert!(err.contains("message_stop"), "{err}");
}

#[test]
fn messages_url_accepts_a_base_with_or_without_v1() {
    assert_eq!(messages_url("http://h:1"), "http://h:1/v1/messages");
    assert_eq!(messages_url("http://h:1/v1/"), "http://h:1/v1/messages");
}

#[test]
fn budget_thinking_stays_below_max_tokens() {
    let mut model =
        Model::custom("claude-haiku-4-5", "anthropic", Api::AnthropicMessages, "http://h");
    model.reasoning = true;
    model.max_output = 64_000;
    model.compat.thinking = ThinkingFormat::AnthropicBudget;
    let ctx = Context { messages: vec![Message::user("hi")], ..Default::default() };
    let opts = StreamOptions {
        thinking: ThinkingLevel::High,
        max_tokens: Some(8000),
        temperature: Some(0.5),
        ..Default::default()
    };
    let req = AnthropicWire.build(&model, &ctx, &opts).unwrap();
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let max = body["max_tokens"].as_u64().unwrap();
    let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
    assert!(budget < max && budget >= 1024, "{budget} < {max}");
    assert!(body.get("temperature").is_none(), "temperature is not allowed with thinking");
    // A hard output cap (a spending limit's) is never passed to make room for thinking.
    let capped = StreamOptions { output_cap: Some(6000), ..opts };
    let req = AnthropicWire.build(&model, &ctx, &capped).unwrap();
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let max = body["max_tokens"].as_u64().unwrap();
    let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
    assert!(max == 6000 && budget < max, "{budget} < {max}");
}

/// The body written in one pass (each message serialised once and hashed as written)
/// equals serialising the marked messages whole, and its fingerprint equals the one
/// computed over the unmarked messages.
#[test]
fn one_pass_body_and_fingerprint_match_serialising_twice() {
    use crate::anthropic_history::{Shape, bind_thinking, messages};
    let mut model =
        Model::custom("claude-haiku-4-5", "anthropic", Api::AnthropicMessages, "http://h");
    model.reasoning = true;
    model.compat.thinking = ThinkingFormat::AnthropicBudget;
    model.compat.preserved_thinking = true;
    let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
    let mut ctx = Context {
        system_prompt: "be brief".into(),
        messages: vec![Message::user("hi")],
        ..Default::default()
    };
    for turn in 0..6 {
        let req = AnthropicWire.build(&model, &ctx, &opts).unwrap();
        let body: Value = serde_json::from_slice(&req.body).unwrap();

        let changes = uses_tool_changes(&model, &ctx);
        let tools = tools(&ctx, changes);
        let system = vec![Block::Text { text: &ctx.system_prompt, cache_control: None }];
        let declared: Vec<&str> = tools.iter().map(|t| t.name).collect();
        let mut msgs = messages(&ctx, &model, changes, &declared, false);
        let shapes: Vec<Shape> = msgs.iter().map(Shape::of).collect();
        let want = bind_thinking(&tools, &system, &mut msgs, true, false, true);
        for i in breakpoint_targets(&shapes) {
            if let Some(slot) = msgs[i].content.iter_mut().rev().find_map(Block::cache_slot) {
                *slot = Some(EPHEMERAL);
            }
        }
        assert_eq!(body["messages"], serde_json::to_value(&msgs).unwrap(), "turn {turn}");
        assert_eq!(req.prefix_hash, want, "turn {turn}");
        assert!(want.is_some());

        let mut reply = crate::types::AssistantMessage::empty(
            Api::AnthropicMessages,
            "anthropic",
            "claude-haiku-4-5",
        );
        reply.content.push(AssistantBlock::Thinking {
            thinking: format!("step {turn}"),
            signature: Some(format!("sig{turn}")),
            item_id: None,
            redacted: false,
        });
        reply.content.push(AssistantBlock::text(format!("answer {turn}")));
        // Turn 3's reply records a fingerprint that matches nothing: its thinking is
        // left out; later replies were written after that, so theirs holds.
        reply.prefix_hash = if turn == 3 { Some("0000".into()) } else { req.prefix_hash };
        ctx.messages.push(Message::Assistant(reply));
        ctx.messages.push(Message::user(format!("more {turn}")));
    }
    let body: Value =
        serde_json::from_slice(&AnthropicWire.build(&model, &ctx, &opts).unwrap().body).unwrap();
    let kept: Vec<bool> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"][0]["type"] == "thinking")
        .collect();
    assert_eq!(kept, [true, true, true, false, true, true]);
}

#[test]
fn thinking_tokens_are_read_from_the_usage_details() {
    let sse = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"ok\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":41,\"output_tokens_details\":{\"thinking_tokens\":34}}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let (msg, _) = decode(Api::AnthropicMessages, sse.as_bytes(), 64).unwrap();
    assert_eq!((msg.usage.output, msg.usage.reasoning), (41, 34));
}
