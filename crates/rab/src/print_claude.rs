//! Print mode's JSON in Claude Code's schema (`--output-compat claude`), so scripts and
//! CI wrappers written for `claude -p --output-format json|stream-json` read rab's
//! output unchanged. rab's own schema (`print_json.rs`) stays the default.
//!
//! The shapes are taken from Claude Code's own SDK types and CLI, not from what rab
//! writes elsewhere: `@anthropic-ai/claude-agent-sdk` 0.3.337 `sdk.d.ts`
//! (`SDKSystemMessage`, `SDKAssistantMessage`, `SDKUserMessage`, `SDKResultSuccess`,
//! `SDKResultError`, `PermissionMode`), `@anthropic-ai/claude-code` 2.1.110 `cli.js`
//! (key order, one assistant line per content block, the zero `usage`), and the Python
//! `claude-agent-sdk` 0.2.190 message parser (which keys a consumer requires); read
//! 2026-12-07. What differs, on purpose: tool names are rab's (`read`, `bash`), and the
//! exit code is rab's (docs/stream-json.md), which is 0 exactly when `is_error` is false
//! except for a run whose tool calls were refused (exit 5, `success`).

use rab_agent::{AgentEvent, StopCause};
use rab_ai::{AssistantBlock, Content, Message, Usage};
use rab_core::AgentSession;
use serde_json::{Map, Value, json};

/// A fresh UUID for a line's `uuid`.
fn uuid() -> String {
    rab_session::session_id()
}

/// The `system`/`init` line that opens the stream.
pub(crate) fn init(session: &AgentSession, cwd: &std::path::Path) -> Value {
    let model = &session.agent().config().model;
    let mode = session.gate().map_or("bypassPermissions", |g| g.mode().get().claude_name());
    json!({
        "type": "system",
        "subtype": "init",
        "cwd": cwd.display().to_string(),
        "session_id": session.tape().id(),
        "tools": session.agent().tool_specs().iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        "mcp_servers": [],
        "model": model.id,
        "permissionMode": mode,
        "slash_commands": [],
        "apiKeySource": "none",
        "claude_code_version": env!("CARGO_PKG_VERSION"),
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
        "uuid": uuid(),
    })
}

/// Anthropic's usage object for `usage`.
fn usage(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
        "output_tokens": u.output,
        "server_tool_use": { "web_search_requests": u.web_searches, "web_fetch_requests": 0 },
        "service_tier": "standard",
    })
}

fn stop_reason(r: rab_ai::StopReason) -> Option<&'static str> {
    match r {
        rab_ai::StopReason::Stop => Some("end_turn"),
        rab_ai::StopReason::Length => Some("max_tokens"),
        rab_ai::StopReason::ToolUse => Some("tool_use"),
        rab_ai::StopReason::Error | rab_ai::StopReason::Aborted => None,
    }
}

/// The lines an event becomes in the stream: one `assistant` line per content block of
/// a reply, one `user` line with the `tool_result` blocks of a tool's result.
pub(crate) struct Stream {
    session_id: String,
    /// The last reply's stop reason, for the result line.
    last_stop: Option<&'static str>,
    /// Milliseconds spent waiting for the model (from each request to its reply).
    pub(crate) api_ms: u64,
    request_started: Option<std::time::Instant>,
}

impl Stream {
    /// For the session with this id.
    pub(crate) fn new(session_id: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            last_stop: None,
            api_ms: 0,
            request_started: None,
        }
    }

    /// The lines for `event` (none for most events).
    pub(crate) fn lines(&mut self, event: &AgentEvent) -> Vec<Value> {
        match event {
            AgentEvent::TurnStart { .. } => {
                self.request_started = Some(std::time::Instant::now());
                Vec::new()
            }
            AgentEvent::MessageEnd { message: Message::Assistant(a) } => {
                if let Some(t) = self.request_started.take() {
                    self.api_ms += u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
                }
                self.last_stop = stop_reason(a.stop_reason);
                let id = a.response_id.clone().unwrap_or_else(|| format!("msg_{}", uuid()));
                let blocks: Vec<Value> = a.content.iter().filter_map(block).collect();
                let last = blocks.len();
                blocks
                    .into_iter()
                    .enumerate()
                    .map(|(n, block)| {
                        // As Claude Code does: one line per block, all with the reply's id;
                        // the stop reason on the last.
                        let stop = if n + 1 == last { self.last_stop } else { None };
                        json!({
                            "type": "assistant",
                            "message": {
                                "id": id,
                                "type": "message",
                                "role": "assistant",
                                "model": a.model,
                                "content": [block],
                                "stop_reason": stop,
                                "stop_sequence": null,
                                "usage": usage(&a.usage),
                            },
                            "parent_tool_use_id": null,
                            "session_id": self.session_id,
                            "uuid": uuid(),
                        })
                    })
                    .collect()
            }
            AgentEvent::ToolResult { result, .. } => {
                let content: Vec<Value> = result
                    .content
                    .iter()
                    .map(|c| match c {
                        Content::Text { text } => json!({ "type": "text", "text": text }),
                        Content::Image { mime_type, data } => json!({
                            "type": "image",
                            "source": { "type": "base64", "media_type": mime_type, "data": data },
                        }),
                    })
                    .collect();
                vec![json!({
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{
                            "tool_use_id": result.tool_call_id,
                            "type": "tool_result",
                            "content": content,
                            "is_error": result.is_error,
                        }],
                    },
                    "parent_tool_use_id": null,
                    "session_id": self.session_id,
                    "uuid": uuid(),
                })]
            }
            _ => Vec::new(),
        }
    }

    /// The last reply's stop reason.
    pub(crate) fn stop_reason(&self) -> Option<&'static str> {
        self.last_stop
    }
}

/// A content block as the Messages API writes it.
fn block(b: &AssistantBlock) -> Option<Value> {
    Some(match b {
        AssistantBlock::Text { text, .. } => json!({ "type": "text", "text": text }),
        AssistantBlock::Thinking { thinking, signature, redacted, .. } if !redacted => json!({
            "type": "thinking",
            "thinking": thinking,
            "signature": signature.clone().unwrap_or_default(),
        }),
        AssistantBlock::Thinking { .. } => json!({ "type": "redacted_thinking", "data": "" }),
        AssistantBlock::ToolCall(call) => json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.arguments,
        }),
        AssistantBlock::WebSearch(_) => return None,
    })
}

/// How the run ended, for the result line.
pub(crate) struct Ending<'a> {
    /// What stopped the model (`None`: the run ended before it ran).
    pub stop: Option<&'a StopCause>,
    /// rab's exit code.
    pub code: u8,
    /// What went wrong, if anything.
    pub message: Option<String>,
    /// The final answer.
    pub final_text: &'a str,
    /// Wall time of the run.
    pub duration_ms: u64,
    /// Time spent waiting for the model.
    pub api_ms: u64,
    /// The last reply's stop reason.
    pub stop_reason: Option<&'static str>,
}

/// The `result` object: the whole output of `json`, the last line of `stream-json`.
pub(crate) fn result(session: Option<&AgentSession>, end: &Ending<'_>) -> Value {
    let subtype = match end.stop {
        Some(StopCause::Done) => "success",
        None if end.code == crate::EXIT_OK => "success",
        Some(StopCause::MaxTurns { .. }) => "error_max_turns",
        Some(StopCause::Budget { .. }) => "error_max_budget_usd",
        _ => "error_during_execution",
    };
    let is_error = subtype != "success" || (end.stop.is_none() && end.code != crate::EXIT_OK);
    let mut total = Usage::default();
    let (mut cost, mut turns, mut session_id, mut model_usage) =
        (0.0, 0u64, String::new(), Map::new());
    let mut denials = Vec::new();
    if let Some(session) = session {
        let totals = session.totals();
        let sub = session.sub_agents();
        total = totals.usage;
        for (field, add) in [
            (&mut total.input, sub.usage.input),
            (&mut total.output, sub.usage.output),
            (&mut total.cache_read, sub.usage.cache_read),
            (&mut total.cache_write, sub.usage.cache_write),
        ] {
            *field += add;
        }
        cost = totals.cost + sub.cost;
        turns = u64::from(totals.turns);
        session_id = session.tape().id().to_owned();
        let model = &session.agent().config().model;
        model_usage.insert(
            model.id.clone(),
            json!({
                "inputTokens": total.input,
                "outputTokens": total.output,
                "cacheReadInputTokens": total.cache_read,
                "cacheCreationInputTokens": total.cache_write,
                "webSearchRequests": total.web_searches,
                "costUSD": cost,
                "contextWindow": model.context_window,
                "maxOutputTokens": model.max_output,
            }),
        );
        denials = session
            .gate()
            .map(|g| g.denials().0)
            .unwrap_or_default()
            .into_iter()
            .map(|d| json!({ "tool_name": d.tool, "tool_use_id": "", "tool_input": { "input": d.input } }))
            .collect();
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("result"));
    out.insert("subtype".into(), json!(subtype));
    out.insert("is_error".into(), json!(is_error));
    out.insert("duration_ms".into(), json!(end.duration_ms));
    out.insert("duration_api_ms".into(), json!(end.api_ms));
    out.insert("num_turns".into(), json!(turns));
    if subtype == "success" {
        out.insert("result".into(), json!(end.final_text));
    }
    out.insert("stop_reason".into(), json!(end.stop_reason));
    out.insert("session_id".into(), json!(session_id));
    out.insert("total_cost_usd".into(), json!(cost));
    out.insert("usage".into(), usage(&total));
    out.insert("modelUsage".into(), Value::Object(model_usage));
    out.insert("permission_denials".into(), Value::Array(denials));
    out.insert("uuid".into(), json!(uuid()));
    if subtype != "success" || is_error {
        let message = end.message.clone().unwrap_or_else(|| "the run failed".to_owned());
        out.insert("errors".into(), json!([message]));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys the Python SDK's parser requires of a result (`data["x"]`).
    #[test]
    fn a_result_without_a_session_has_every_required_key() {
        let end = Ending {
            stop: None,
            code: 2,
            message: Some("bad flag".into()),
            final_text: "",
            duration_ms: 3,
            api_ms: 0,
            stop_reason: None,
        };
        let r = result(None, &end);
        for key in
            ["subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "session_id"]
        {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
        assert_eq!(r["subtype"], "error_during_execution");
        assert_eq!(r["is_error"], true);
        assert_eq!(r["errors"], json!(["bad flag"]));
        assert!(r.get("result").is_none());
    }
}
