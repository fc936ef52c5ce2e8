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
/// a reply, one `user` line with the `tool_result` blocks of a tool's result, and with
/// `--include-partial-messages` the reply's stream as `stream_event` lines.
pub(crate) struct Stream {
    session_id: String,
    /// The last reply's stop reason, for the result line.
    last_stop: Option<&'static str>,
    /// Milliseconds spent waiting for the model (from each request to its reply).
    pub(crate) api_ms: u64,
    request_started: Option<std::time::Instant>,
    /// `--output-format json --verbose`: every line so far, printed with the result as
    /// one JSON array (as Claude Code does).
    kept: Option<Vec<Value>>,
    /// `--include-partial-messages`: the reply being streamed, if any.
    partial: Option<Partial>,
}

/// A reply streamed as the Messages API's events (`stream_event` lines).
#[derive(Default)]
struct Partial {
    /// The model the next `message_start` names.
    model: String,
    /// The id of the reply under way (`None`: no `message_start` sent yet).
    message: Option<String>,
    /// The index and kind (`text`, `thinking`) of the open content block.
    block: Option<(usize, &'static str)>,
    /// The index the next content block gets.
    next: usize,
    /// The id of the reply that just ended, for its `assistant` lines when the provider
    /// gave it none.
    ended: Option<String>,
}

impl Stream {
    /// For the session with this id.
    pub(crate) fn new(session_id: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            last_stop: None,
            api_ms: 0,
            request_started: None,
            kept: None,
            partial: None,
        }
    }

    /// Keeps every line, for one JSON array at the end (`json --verbose`), starting
    /// with `first`.
    pub(crate) fn keep_all(mut self, first: Value) -> Self {
        self.kept = Some(vec![first]);
        self
    }

    /// Streams each reply as `stream_event` lines too (`--include-partial-messages`);
    /// `model` is the model the replies come from.
    pub(crate) fn with_partials(mut self, model: &str) -> Self {
        self.partial = Some(Partial { model: model.to_owned(), ..Partial::default() });
        self
    }

    /// The output of `json`: the result object, or with `--verbose` every line and the
    /// result as one array.
    pub(crate) fn json_output(&self, result: Value) -> Value {
        match &self.kept {
            Some(lines) => {
                let mut all = lines.clone();
                all.push(result);
                Value::Array(all)
            }
            None => result,
        }
    }

    /// The lines for `event` (none for most events).
    pub(crate) fn lines(&mut self, event: &AgentEvent) -> Vec<Value> {
        let mut lines = self.stream_events(event);
        lines.extend(self.messages(event));
        if let Some(kept) = &mut self.kept {
            kept.extend(lines.iter().cloned());
        }
        lines
    }

    /// A `stream_event` line.
    fn stream_event(&self, event: Value) -> Value {
        json!({
            "type": "stream_event",
            "event": event,
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": uuid(),
        })
    }

    /// `--include-partial-messages`: the Messages API's stream events for `event`.
    /// rab's providers stream text and thinking as they come; a reply's tool calls are
    /// sent whole when the reply ends, each as one `input_json_delta`.
    fn stream_events(&mut self, event: &AgentEvent) -> Vec<Value> {
        let Some(p) = self.partial.as_mut() else { return Vec::new() };
        let mut events = Vec::new();
        let start_message = |p: &mut Partial, events: &mut Vec<Value>| {
            if p.message.is_none() {
                let id = format!("msg_{}", uuid());
                events.push(json!({
                    "type": "message_start",
                    "message": {
                        "id": id,
                        "type": "message",
                        "role": "assistant",
                        "model": p.model,
                        "content": [],
                        "stop_reason": null,
                        "stop_sequence": null,
                        "usage": usage(&Usage::default()),
                    },
                }));
                p.message = Some(id);
                p.block = None;
                p.next = 0;
            }
        };
        let close_block = |p: &mut Partial, events: &mut Vec<Value>| {
            if let Some((index, _)) = p.block.take() {
                events.push(json!({ "type": "content_block_stop", "index": index }));
            }
        };
        match event {
            AgentEvent::TextDelta { delta } | AgentEvent::ThinkingDelta { delta } => {
                let kind =
                    if matches!(event, AgentEvent::TextDelta { .. }) { "text" } else { "thinking" };
                start_message(p, &mut events);
                if p.block.is_none_or(|(_, k)| k != kind) {
                    close_block(p, &mut events);
                    let index = p.next;
                    p.next += 1;
                    p.block = Some((index, kind));
                    let block = if kind == "text" {
                        json!({ "type": "text", "text": "" })
                    } else {
                        json!({ "type": "thinking", "thinking": "", "signature": "" })
                    };
                    events.push(json!({
                        "type": "content_block_start", "index": index, "content_block": block,
                    }));
                }
                let index = p.block.map_or(0, |(i, _)| i);
                let delta = if kind == "text" {
                    json!({ "type": "text_delta", "text": delta })
                } else {
                    json!({ "type": "thinking_delta", "thinking": delta })
                };
                events
                    .push(json!({ "type": "content_block_delta", "index": index, "delta": delta }));
            }
            AgentEvent::MessageEnd { message: Message::Assistant(a) } => {
                start_message(p, &mut events);
                close_block(p, &mut events);
                for call in a.tool_calls() {
                    let index = p.next;
                    p.next += 1;
                    events.push(json!({
                        "type": "content_block_start",
                        "index": index,
                        "content_block": { "type": "tool_use", "id": call.id, "name": call.name, "input": {} },
                    }));
                    events.push(json!({
                        "type": "content_block_delta",
                        "index": index,
                        "delta": { "type": "input_json_delta", "partial_json": call.arguments.to_string() },
                    }));
                    events.push(json!({ "type": "content_block_stop", "index": index }));
                }
                events.push(json!({
                    "type": "message_delta",
                    "delta": { "stop_reason": stop_reason(a.stop_reason), "stop_sequence": null },
                    "usage": { "output_tokens": a.usage.output },
                }));
                events.push(json!({ "type": "message_stop" }));
                p.ended = p.message.take();
            }
            // The partial reply is dropped: the next one starts with its own
            // `message_start`.
            AgentEvent::Retry { discarded: true, .. } => p.message = None,
            AgentEvent::Fallback { to, .. } => {
                p.message = None;
                p.model = to.split_once('/').map_or(to.as_str(), |(_, m)| m).to_owned();
            }
            _ => {}
        }
        events.into_iter().map(|e| self.stream_event(e)).collect()
    }

    /// The `assistant` and `user` lines for `event`.
    fn messages(&mut self, event: &AgentEvent) -> Vec<Value> {
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
                let id = a
                    .response_id
                    .clone()
                    .or_else(|| self.partial.as_mut().and_then(|p| p.ended.take()))
                    .unwrap_or_else(|| format!("msg_{}", uuid()));
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

/// `modelUsage`: what each model spent in the session, main agent and sub-agents
/// together, as the session's ledger counted it. What the ledger cannot name a model
/// for (a resumed session's earlier sub-agents: the tape keeps only their dollars) is
/// counted to the current model, so the entries add up to `usage` and `total_cost_usd`.
fn models_used(session: &AgentSession, total: &Usage, cost: f64) -> Map<String, Value> {
    let current = &session.agent().config().model;
    let mut models =
        session.agent().config().spend.as_ref().map(|s| s.ledger().by_model()).unwrap_or_default();
    let (mut counted, mut counted_cost) = (Usage::default(), 0.0);
    for (_, s) in &models {
        counted.add(&s.usage);
        counted_cost += s.cost;
    }
    let rest = Usage {
        input: total.input.saturating_sub(counted.input),
        output: total.output.saturating_sub(counted.output),
        cache_read: total.cache_read.saturating_sub(counted.cache_read),
        cache_write: total.cache_write.saturating_sub(counted.cache_write),
        reasoning: total.reasoning.saturating_sub(counted.reasoning),
        web_searches: total.web_searches.saturating_sub(counted.web_searches),
    };
    let rest_cost = (cost - counted_cost).max(0.0);
    if rest.total() > 0 || rest.web_searches > 0 || rest_cost > 1e-12 || models.is_empty() {
        let at = models.iter().position(|(id, _)| *id == current.id).unwrap_or_else(|| {
            models.push((current.id.clone(), rab_agent::Spending::default()));
            models.len() - 1
        });
        let spent = &mut models[at].1;
        spent.usage.add(&rest);
        spent.cost += rest_cost;
    }
    // The limits of a model other than the current one (a fallback, a sub-agent's) come
    // from the built-in table; 0 when it is not there.
    let builtin = (models.len() > 1).then(rab_ai::Registry::builtin);
    models
        .into_iter()
        .map(|(id, s)| {
            let limits = if id == current.id {
                Some((current.context_window, current.max_output))
            } else {
                builtin
                    .as_ref()
                    .and_then(|r| r.models().iter().find(|m| m.id == id))
                    .map(|m| (m.context_window, m.max_output))
            };
            let (context_window, max_output) = limits.unwrap_or_default();
            let u = &s.usage;
            let entry = json!({
                "inputTokens": u.input,
                "outputTokens": u.output,
                "cacheReadInputTokens": u.cache_read,
                "cacheCreationInputTokens": u.cache_write,
                "webSearchRequests": u.web_searches,
                "costUSD": s.cost,
                "contextWindow": context_window,
                "maxOutputTokens": max_output,
            });
            (id, entry)
        })
        .collect()
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
    let (mut denials, mut left_out) = (Vec::new(), 0);
    if let Some(session) = session {
        let totals = session.totals();
        let sub = session.sub_agents();
        total = totals.usage;
        total.add(&sub.usage);
        cost = totals.cost + sub.cost;
        turns = u64::from(totals.turns);
        session_id = session.tape().id().to_owned();
        model_usage = models_used(session, &total, cost);
        let (kept, count) = session.gate().map(|g| g.denials()).unwrap_or_default();
        left_out = count.saturating_sub(kept.len());
        denials = kept
            .into_iter()
            .map(|d| {
                // The call's arguments as the model wrote them, as Claude Code gives them;
                // a large one (a `write` of a big file) in short.
                let input = d.arguments.unwrap_or_else(|| json!({ "input": d.input }));
                json!({ "tool_name": d.tool, "tool_use_id": d.call_id, "tool_input": input })
            })
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
    if left_out > 0 {
        // rab keeps the first refusals only; a reader must not take the list as all.
        out.insert("permission_denials_left_out".into(), json!(left_out));
    }
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
