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
}
