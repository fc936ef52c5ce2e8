use super::*;
use crate::bench::decode;
use pretty_assertions::assert_eq;

#[test]
fn function_calls_get_unique_ids_and_keep_their_signature() {
    let sse = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"plan\",\"thought\":true}]}}]}\r\n\r\n",
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"ls\",\"args\":{\"p\":1}},\"thoughtSignature\":\"S\"},{\"functionCall\":{\"name\":\"ls\",\"args\":{}}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":3,\"thoughtsTokenCount\":2,\"cachedContentTokenCount\":4}}\r\n\r\n",
    );
    let (msg, _) = decode(Api::GoogleGenerativeAi, sse.as_bytes(), 9).unwrap();
    let calls: Vec<_> = msg.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(calls[0].signature.as_deref(), Some("S"));
    assert_eq!(calls[1].signature, None);
    assert_eq!(msg.stop_reason, StopReason::ToolUse);
    assert_eq!(
        msg.usage,
        Usage { input: 6, output: 5, cache_read: 4, cache_write: 0, reasoning: 2, web_searches: 0 }
    );
}

#[test]
fn a_safety_stop_is_an_error_and_a_cut_stream_is_incomplete() {
    let blocked = "data: {\"candidates\":[{\"finishReason\":\"SAFETY\"}]}\n\n";
    let err = decode(Api::GoogleGenerativeAi, blocked.as_bytes(), 64).unwrap_err();
    assert!(err.contains("SAFETY"), "{err}");
    let cut = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}\n\n";
    assert!(decode(Api::GoogleGenerativeAi, cut.as_bytes(), 64).is_err());
}

#[test]
fn function_responses_carry_server_ids_and_group_per_turn() {
    let model = Model::custom("g", "google", Api::GoogleGenerativeAi, "http://h");
    let mut a = AssistantMessage::empty(Api::GoogleGenerativeAi, "google", "g");
    for (id, server) in [("c1", Some("srv1")), ("c2", None)] {
        a.content.push(AssistantBlock::ToolCall(crate::types::ToolCall {
            id: id.into(),
            name: "ls".into(),
            arguments: json!({}),
            invalid_arguments: None,
            signature: None,
            item_id: server.map(str::to_owned),
        }));
    }
    let result = |id: &str| {
        Message::ToolResult(crate::types::ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "ls".into(),
            content: vec![Content::text("r")],
            is_error: id == "c2",
        })
    };
    let contents = convert_contents(&[Message::Assistant(a), result("c1"), result("c2")], &model);
    assert_eq!(contents.len(), 2);
    assert_eq!(contents[1]["parts"][0]["functionResponse"]["id"], "srv1");
    assert_eq!(contents[1]["parts"][1]["functionResponse"]["response"], json!({"error": "r"}));
    assert_eq!(
        stream_url("https://x.com/v1beta", "m"),
        "https://x.com/v1beta/models/m:streamGenerateContent?alt=sse"
    );
}
