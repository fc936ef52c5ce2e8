use super::*;
use crate::bench::decode;
use pretty_assertions::assert_eq;

fn ev(kind: &str, data: &str) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

#[test]
fn reasoning_summary_and_encrypted_content_come_from_item_done() {
    let sse = [
        ev("response.created", r#"{"response":{"id":"r1"}}"#),
        ev("response.output_item.added", r#"{"output_index":0,"item":{"type":"reasoning","id":"rs_1"}}"#),
        ev("response.output_item.done", r#"{"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"text":"a"},{"text":"b"}],"encrypted_content":"E"}}"#),
        ev("response.output_item.added", r#"{"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"ls"}}"#),
        ev("response.function_call_arguments.done", r#"{"output_index":1,"arguments":"{\"p\":1}"}"#),
        ev("response.output_item.done", r#"{"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"ls","arguments":"{\"p\":1}"}}"#),
        ev("response.completed", r#"{"response":{"id":"r1","usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":20},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":4}}}}"#),
    ]
    .concat();
    let (msg, _) = decode(Api::OpenaiResponses, sse.as_bytes(), 11).unwrap();
    assert_eq!(
        msg.content[0],
        AssistantBlock::Thinking {
            thinking: "a\n\nb".into(),
            signature: Some("E".into()),
            item_id: Some("rs_1".into()),
            redacted: false
        }
    );
    let call = msg.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), call.item_id.as_deref(), call.arguments.clone()),
        ("c1", Some("fc_1"), serde_json::json!({"p": 1}))
    );
    assert_eq!(msg.stop_reason, StopReason::ToolUse);
    assert_eq!((msg.usage.input, msg.usage.cache_read, msg.usage.reasoning), (30, 20, 4));
}

#[test]
fn a_failed_response_is_an_api_error() {
    let sse = ev(
        "response.failed",
        r#"{"response":{"id":"r","error":{"code":"server_error","message":"boom"}}}"#,
    );
    let err = decode(Api::OpenaiResponses, sse.as_bytes(), 64).unwrap_err();
    assert!(err.contains("boom"), "{err}");
}

#[test]
fn reasoning_items_of_another_model_are_not_sent() {
    let mut model = Model::custom("gpt-b", "openai", Api::OpenaiResponses, "http://h/v1");
    model.reasoning = true;
    let mut old = crate::types::AssistantMessage::empty(Api::OpenaiResponses, "openai", "gpt-a");
    old.content.push(AssistantBlock::Thinking {
        thinking: "t".into(),
        signature: Some("E".into()),
        item_id: Some("rs".into()),
        redacted: false,
    });
    old.content.push(AssistantBlock::ToolCall(crate::types::ToolCall {
        id: "c".into(),
        name: "ls".into(),
        arguments: serde_json::json!({}),
        invalid_arguments: None,
        signature: None,
        item_id: Some("fc".into()),
    }));
    let input = convert_input(&[Message::Assistant(old)], &model, false);
    assert_eq!(
        input,
        vec![
            serde_json::json!({"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"})
        ]
    );
}
