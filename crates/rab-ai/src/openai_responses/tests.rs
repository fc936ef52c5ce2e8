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
    let input = convert_input(&[Message::Assistant(old)], &model, false, &[]);
    assert_eq!(
        input,
        vec![
            serde_json::json!({"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"})
        ]
    );
}

#[test]
fn a_custom_tool_call_streams_its_input_as_raw_text() {
    let sse = [
        ev("response.created", r#"{"response":{"id":"r1"}}"#),
        ev("response.output_item.added", r#"{"output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"c1","name":"apply_patch","input":""}}"#),
        ev("response.custom_tool_call_input.delta", r#"{"output_index":0,"item_id":"ctc_1","delta":"*** Begin Patch\n"}"#),
        ev("response.custom_tool_call_input.delta", r#"{"output_index":0,"item_id":"ctc_1","delta":"*** End Patch\n"}"#),
        ev("response.custom_tool_call_input.done", r#"{"output_index":0,"item_id":"ctc_1","input":"*** Begin Patch\n*** End Patch\n"}"#),
        ev("response.output_item.done", r#"{"output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}}"#),
        ev("response.completed", r#"{"response":{"id":"r1"}}"#),
    ]
    .concat();
    let (msg, _) = decode(Api::OpenaiResponses, sse.as_bytes(), 17).unwrap();
    let call = msg.tool_calls().next().unwrap();
    assert_eq!(call.name, "apply_patch");
    assert_eq!(call.arguments, serde_json::json!({"input": "*** Begin Patch\n*** End Patch\n"}));
    assert_eq!(call.invalid_arguments, None);
    // Replayed as the custom call it was, with its result as a custom output.
    let model = Model::custom("gpt-x", "openai", Api::OpenaiResponses, "http://h/v1");
    let result = crate::types::ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "apply_patch".into(),
        content: vec![Content::Text { text: "ok".into() }],
        is_error: false,
    };
    let history = [Message::Assistant(msg), Message::ToolResult(result)];
    let input = convert_input(&history, &model, false, &["apply_patch"]);
    assert_eq!(input[0]["type"], "custom_tool_call");
    assert_eq!(input[0]["input"], "*** Begin Patch\n*** End Patch\n");
    assert_eq!(
        input[1],
        serde_json::json!({"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"})
    );
    // Without custom tools it is an ordinary function call.
    let input = convert_input(&history, &model, false, &[]);
    assert_eq!(input[0]["type"], "function_call");
    assert_eq!(input[1]["type"], "function_call_output");
}
