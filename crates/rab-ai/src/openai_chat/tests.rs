use super::*;
use crate::bench::decode;
use pretty_assertions::assert_eq;

fn stream(chunks: &[&str]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

#[test]
fn tolerates_missing_index_and_empty_later_ids() {
    let sse = stream(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"read","arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"","function":{"arguments":"th\":1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"ls","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let (msg, _) = decode(Api::OpenaiCompletions, sse.as_bytes(), 5).unwrap();
    let calls: Vec<_> =
        msg.tool_calls().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        [("a", "read", serde_json::json!({"path": 1})), ("b", "ls", serde_json::json!({}))]
    );
    assert_eq!(msg.stop_reason, StopReason::ToolUse);
}

#[test]
fn reads_reasoning_from_either_field_and_deepseek_cache_usage() {
    let sse = stream(&[
        r#"{"choices":[{"delta":{"reasoning":"hmm "}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_content":"ok","content":null}}]}"#,
        r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":60}}"#,
    ]);
    let (msg, _) = decode(Api::OpenaiCompletions, sse.as_bytes(), 64).unwrap();
    assert!(
        matches!(&msg.content[0], AssistantBlock::Thinking { thinking, .. } if thinking == "hmm ok")
    );
    assert_eq!(msg.text(), "hi");
    assert_eq!((msg.usage.input, msg.usage.cache_read, msg.usage.output), (40, 60, 5));
}

#[test]
fn a_stream_without_done_but_with_finish_is_complete_and_without_either_is_not() {
    let ok = stream(&[r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]}"#]);
    let (msg, _) = decode(Api::OpenaiCompletions, ok.as_bytes(), 64).unwrap();
    assert_eq!(msg.stop_reason, StopReason::Length);
    let cut = stream(&[r#"{"choices":[{"delta":{"content":"x"}}]}"#]);
    assert!(decode(Api::OpenaiCompletions, cut.as_bytes(), 64).is_err());
}

#[test]
fn an_error_chunk_is_an_api_error() {
    let sse = stream(&[r#"{"error":{"message":"upstream died","code":502}}"#]);
    let err = decode(Api::OpenaiCompletions, sse.as_bytes(), 64).unwrap_err();
    assert!(err.contains("upstream died") && err.contains("502"), "{err}");
}

#[test]
fn tool_result_images_follow_as_a_user_message() {
    let model = Model::custom("m", "p", Api::OpenaiCompletions, "http://h/v1");
    let ctx = Context {
        messages: vec![Message::ToolResult(crate::types::ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![Content::Image { mime_type: "image/png".into(), data: "AAAA".into() }],
            is_error: false,
        })],
        ..Default::default()
    };
    let msgs = convert_messages(&ctx, &model);
    assert_eq!(msgs[0]["role"], "tool");
    assert_eq!(msgs[0]["content"], "(no output)");
    assert_eq!(msgs[1]["role"], "user");
    assert_eq!(msgs[1]["content"][1]["image_url"]["url"], "data:image/png;base64,AAAA");
}

#[test]
fn a_server_that_takes_only_nine_character_ids_gets_them_the_same_for_call_and_result() {
    let mut model = Model::custom("mistral-large", "mistral", Api::OpenaiCompletions, "http://h");
    model.compat.short_tool_ids = true;
    let call = |id: &str| {
        let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude");
        a.content = vec![AssistantBlock::ToolCall(crate::types::ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: serde_json::json!({}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        })];
        Message::Assistant(a)
    };
    let result = |id: &str| {
        Message::ToolResult(crate::types::ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![Content::text("x")],
            is_error: false,
        })
    };
    let ids = ["toolu_01XyZ", "call_abc-123", "Ab3dE6gH9"];
    let mut messages = Vec::new();
    for id in ids {
        messages.extend([call(id), result(id)]);
    }
    let ctx = Context { messages, ..Default::default() };
    let msgs = convert_messages(&ctx, &model);
    let sent: Vec<(&str, &str)> = msgs
        .chunks(2)
        .map(|pair| {
            (
                pair[0]["tool_calls"][0]["id"].as_str().unwrap(),
                pair[1]["tool_call_id"].as_str().unwrap(),
            )
        })
        .collect();
    for (i, (call_id, result_id)) in sent.iter().enumerate() {
        assert_eq!(call_id, result_id);
        assert!(
            call_id.len() == 9 && call_id.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{call_id}"
        );
        println!("{} -> {call_id}", ids[i]);
    }
    // An id that already fits is kept; the others differ from each other.
    assert_eq!(sent[2].0, "Ab3dE6gH9");
    assert_ne!(sent[0].0, sent[1].0);
    // Other servers get the ids as they are.
    model.compat.short_tool_ids = false;
    assert_eq!(convert_messages(&ctx, &model)[0]["tool_calls"][0]["id"], "toolu_01XyZ");
}
