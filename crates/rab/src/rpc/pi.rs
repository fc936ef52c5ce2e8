//! rab's types in the shapes of pi's RPC protocol (`@mariozechner/pi-ai` and
//! `pi-agent-core`): messages with roles `user`, `assistant`, `toolResult` (and
//! `custom` for rab's system messages), content blocks `text`, `thinking`, `toolCall`
//! and `image`, usage with its cost, and models. What pi has no field for is left out;
//! what rab adds beside pi's fields (a web search block) a pi client ignores.

use rab_ai::{
    AssistantBlock, AssistantMessage, Content, Message, Model, ModelCost, StopReason,
    ToolResultMessage, Usage,
};
use serde_json::{Value, json};

/// Milliseconds since the epoch, as pi stamps its messages.
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A model as pi's `Model` (`{id, name, api, provider, baseUrl, reasoning, input,
/// cost, contextWindow, maxTokens}`), prices in dollars per million tokens.
pub(super) fn model(m: &Model) -> Value {
    let input = if m.images { json!(["text", "image"]) } else { json!(["text"]) };
    json!({
        "id": m.id,
        "name": m.name,
        "api": m.api,
        "provider": m.provider,
        "baseUrl": m.base_url,
        "reasoning": m.reasoning,
        "input": input,
        "cost": {
            "input": m.cost.input,
            "output": m.cost.output,
            "cacheRead": m.cost.cache_read,
            "cacheWrite": m.cost.cache_write,
        },
        "contextWindow": m.context_window,
        "maxTokens": m.max_output,
    })
}

/// Usage as pi's `Usage`, its cost split as pi splits it.
pub(super) fn usage(u: &Usage, cost: &ModelCost) -> Value {
    let rates = cost.rates(u.total_input());
    let part = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
    json!({
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.total(),
        "cost": {
            "input": part(u.input, rates.input),
            "output": part(u.output, rates.output),
            "cacheRead": part(u.cache_read, rates.cache_read),
            "cacheWrite": part(u.cache_write, rates.cache_write),
            "total": cost.of(u),
        },
    })
}

/// pi's name of a stop reason.
pub(super) fn stop_reason(r: StopReason) -> &'static str {
    match r {
        StopReason::Stop => "stop",
        StopReason::Length => "length",
        StopReason::ToolUse => "toolUse",
        StopReason::Error => "error",
        StopReason::Aborted => "aborted",
    }
}

/// User or tool-result content as pi's blocks.
pub(super) fn content(blocks: &[Content]) -> Value {
    Value::Array(
        blocks
            .iter()
            .map(|c| match c {
                Content::Text { text } => json!({"type": "text", "text": text}),
                Content::Image { mime_type, data } => {
                    json!({"type": "image", "data": data, "mimeType": mime_type})
                }
            })
            .collect(),
    )
}

/// One assistant block as pi's block.
pub(super) fn block(b: &AssistantBlock) -> Value {
    match b {
        AssistantBlock::Text { text, signature, .. } => {
            let mut v = json!({"type": "text", "text": text});
            if let Some(s) = signature {
                v["textSignature"] = json!(s);
            }
            v
        }
        AssistantBlock::Thinking { thinking, signature, redacted, .. } => {
            let mut v = json!({"type": "thinking", "thinking": thinking});
            if let Some(s) = signature {
                v["thinkingSignature"] = json!(s);
            }
            if *redacted {
                v["redacted"] = json!(true);
            }
            v
        }
        AssistantBlock::ToolCall(c) => tool_call(c),
        // pi has no server-side search block: rab's own, which a pi client skips.
        AssistantBlock::WebSearch(search) => json!({"type": "webSearch", "search": search}),
    }
}

/// A tool call as pi's `toolCall` block.
pub(super) fn tool_call(c: &rab_ai::ToolCall) -> Value {
    let mut v = json!({"type": "toolCall", "id": c.id, "name": c.name, "arguments": c.arguments});
    if let Some(s) = &c.signature {
        v["thoughtSignature"] = json!(s);
    }
    v
}

/// An assistant message as pi's `AssistantMessage`.
pub(super) fn assistant(m: &AssistantMessage, cost: &ModelCost, timestamp: u64) -> Value {
    let mut v = json!({
        "role": "assistant",
        "content": m.content.iter().map(block).collect::<Vec<_>>(),
        "api": m.api,
        "provider": m.provider,
        "model": m.model,
        "usage": usage(&m.usage, cost),
        "stopReason": stop_reason(m.stop_reason),
        "timestamp": timestamp,
    });
    if let Some(e) = &m.error_message {
        v["errorMessage"] = json!(e);
    }
    if let Some(id) = &m.response_id {
        v["responseId"] = json!(id);
    }
    v
}

/// A tool result as pi's `ToolResultMessage`.
pub(super) fn tool_result(r: &ToolResultMessage, details: Option<&Value>, timestamp: u64) -> Value {
    let mut v = json!({
        "role": "toolResult",
        "toolCallId": r.tool_call_id,
        "toolName": r.tool_name,
        "content": content(&r.content),
        "isError": r.is_error,
        "timestamp": timestamp,
    });
    if let Some(d) = details {
        v["details"] = d.clone();
    }
    v
}

/// Any message as pi's `AgentMessage`: rab's system messages (what changed after the
/// conversation began) as pi's `custom` messages, not displayed.
pub(super) fn message(m: &Message, cost: &ModelCost, timestamp: u64) -> Value {
    match m {
        Message::User(u) => {
            json!({"role": "user", "content": content(&u.content), "timestamp": timestamp})
        }
        Message::Assistant(a) => assistant(a, cost, timestamp),
        Message::ToolResult(r) => tool_result(r, None, timestamp),
        Message::System(s) => json!({
            "role": "custom",
            "customType": "rab:system",
            "content": s.text,
            "display": false,
            "details": s,
            "timestamp": timestamp,
        }),
    }
}

/// The text of a user message (its text blocks joined), for matching queued messages.
pub(super) fn user_text(m: &Message) -> Option<String> {
    match m {
        Message::User(u) => Some(Content::join_text(&u.content)),
        _ => None,
    }
}

/// The text of the last assistant message that has any, as pi's
/// `get_last_assistant_text` answers.
pub(super) fn last_assistant_text(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) => {
            let text: Vec<&str> = a
                .content
                .iter()
                .filter_map(|b| match b {
                    AssistantBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let text = text.join("");
            (!text.trim().is_empty()).then_some(text)
        }
        _ => None,
    })
}

/// pi's `SessionStats` from the conversation and the state.
pub(super) fn session_stats(messages: &[Message], state: &rab_core::runtime::State) -> Value {
    let (mut user, mut assistant, mut calls, mut results) = (0, 0, 0, 0);
    let mut total = Usage::default();
    for m in messages {
        match m {
            Message::User(_) => user += 1,
            Message::Assistant(a) => {
                assistant += 1;
                calls +=
                    a.content.iter().filter(|b| matches!(b, AssistantBlock::ToolCall(_))).count();
                total.add(&a.usage);
            }
            Message::ToolResult(_) => results += 1,
            Message::System(_) => {}
        }
    }
    let percent = if state.context_window > 0 {
        json!(state.context_tokens as f64 * 100.0 / state.context_window as f64)
    } else {
        Value::Null
    };
    json!({
        "sessionFile": state.session_file,
        "sessionId": state.session_id,
        "userMessages": user,
        "assistantMessages": assistant,
        "toolCalls": calls,
        "toolResults": results,
        "totalMessages": messages.len(),
        "tokens": {
            "input": total.input,
            "output": total.output,
            "cacheRead": total.cache_read,
            "cacheWrite": total.cache_write,
            "total": total.total(),
        },
        "cost": state.cost,
        "contextUsage": {
            "tokens": state.context_tokens,
            "contextWindow": state.context_window,
            "percent": percent,
        },
    })
}

/// pi's `RpcSessionState`, with rab's own fields beside pi's.
pub(super) fn state(s: &rab_core::runtime::State) -> Value {
    json!({
        "model": model(&s.model_info),
        "thinkingLevel": s.thinking_level,
        "isStreaming": s.is_streaming,
        "isCompacting": s.is_compacting,
        "steeringMode": s.steering_mode,
        "followUpMode": s.follow_up_mode,
        "sessionFile": s.session_file,
        "sessionId": s.session_id,
        "sessionName": s.session_name,
        "autoCompactionEnabled": s.auto_compaction,
        "messageCount": s.message_count,
        "pendingMessageCount": s.pending_messages,
        // rab's own.
        "provider": s.provider,
        "autoRetryEnabled": s.max_retries > 0,
        "contextWindow": s.context_window,
        "contextTokens": s.context_tokens,
        "inputTokens": s.input_tokens,
        "outputTokens": s.output_tokens,
        "cacheReadTokens": s.cache_read_tokens,
        "cost": s.cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_take_pis_roles_blocks_and_stop_reasons() {
        let mut a = AssistantMessage::empty(rab_ai::Api::AnthropicMessages, "anthropic", "m");
        a.content = vec![
            AssistantBlock::Thinking {
                thinking: "hmm".into(),
                signature: Some("sig".into()),
                item_id: None,
                redacted: false,
            },
            AssistantBlock::Text {
                text: "hi".into(),
                signature: None,
                phase: None,
                citations: Vec::new(),
            },
            AssistantBlock::ToolCall(rab_ai::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                invalid_arguments: None,
                signature: None,
                item_id: None,
            }),
        ];
        a.stop_reason = StopReason::ToolUse;
        a.usage = Usage { input: 1_000_000, output: 10, ..Usage::default() };
        let cost = ModelCost { input: 3.0, output: 15.0, ..ModelCost::default() };
        let v = message(&Message::Assistant(a), &cost, 7);
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["stopReason"], "toolUse");
        assert_eq!(
            v["content"][0],
            json!({"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"})
        );
        assert_eq!(v["content"][1], json!({"type": "text", "text": "hi"}));
        assert_eq!(v["content"][2]["type"], "toolCall");
        assert_eq!(v["content"][2]["arguments"], json!({"path": "a"}));
        assert_eq!(v["usage"]["totalTokens"], 1_000_010);
        assert_eq!(v["usage"]["cost"]["input"], 3.0);
        assert_eq!(v["timestamp"], 7);
        let r = ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![Content::text("x")],
            is_error: true,
        };
        let v = message(&Message::ToolResult(r), &cost, 8);
        assert_eq!(v["role"], "toolResult");
        assert_eq!(v["isError"], true);
        assert_eq!(v["content"], json!([{"type": "text", "text": "x"}]));
    }
}
