//! A run's events as pi's `AgentSessionEvent` stream: `agent_start`, `turn_start`,
//! `message_start` / `message_update` (with the assistant message event inside) /
//! `message_end`, `tool_execution_start` / `_update` / `_end`, `turn_end`,
//! `agent_end`, `compaction_start` / `_end`, `auto_retry_start` / `_end` and
//! `queue_update`. rab's events with no pi counterpart (a fallback to another model, a
//! wait for the provider, a web search, an error) keep their own lines, which a pi
//! client ignores.
//!
//! pi sends the whole message so far with every update (twice: as `message` and as the
//! event's `partial`); the partial is serialised once per update and spliced into both.

use std::collections::HashMap;

use rab_agent::{AgentEvent, StopCause};
use rab_ai::{Message, ModelCost};
use serde_json::{Value, json};

use super::pi;

/// A block of the assistant message being streamed, with its text escaped for JSON as
/// it grows (escaping is per character, so the escaped deltas add up): each update
/// copies the message so far instead of serialising it again.
enum Block {
    /// The text and its escaped form.
    Text(String, String),
    /// The thinking and its escaped form.
    Thinking(String, String),
    /// A finished block (a tool call), serialised as pi shows it.
    Done(String),
}

impl Block {
    fn push_json(&self, out: &mut String) {
        let (head, escaped) = match self {
            Block::Text(_, e) => ("{\"type\":\"text\",\"text\":\"", e),
            Block::Thinking(_, e) => ("{\"type\":\"thinking\",\"thinking\":\"", e),
            Block::Done(json) => return out.push_str(json),
        };
        out.push_str(head);
        out.push_str(escaped);
        out.push_str("\"}");
    }
}

/// `text` escaped for a JSON string, without the quotes.
fn escape(text: &str) -> String {
    let quoted = Value::from(text).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// The assistant message being streamed.
struct Partial {
    blocks: Vec<Block>,
    /// The last block is still growing.
    open: bool,
    timestamp: u64,
    /// The message's JSON after its content (model, usage, stop reason, timestamp).
    tail: String,
}

/// A tool call that is running: its name, arguments and output so far.
struct Running {
    name: String,
    args: Value,
    output: String,
}

/// How much of a running tool's output goes in each `tool_execution_update` (the tail).
const UPDATE_TAIL: usize = 64 * 1024;

/// The translator: rab's events in, pi's lines out.
pub(super) struct Stream {
    /// The model of the run (for the partial message and the cost of its usage).
    pub api: rab_ai::Api,
    pub provider: String,
    pub model: String,
    pub cost: ModelCost,
    /// The run's new messages, as pi's `agent_end` lists them.
    run: Vec<Value>,
    turn_open: bool,
    partial: Option<Partial>,
    /// The turn's assistant message and tool results, for `turn_end`.
    turn_message: Option<Value>,
    turn_results: Vec<Value>,
    tools: HashMap<String, Running>,
    /// The attempt of a retry under way.
    retrying: Option<u32>,
    /// Retries after the first attempt.
    pub max_retries: u32,
    compaction: &'static str,
    /// Messages waiting to be delivered: steering, then follow-up.
    queued: (Vec<String>, Vec<String>),
}

impl Stream {
    /// A translator for runs of `model`.
    pub(super) fn new(model: &rab_ai::Model, max_retries: u32) -> Self {
        Self {
            api: model.api,
            provider: model.provider.clone(),
            model: model.id.clone(),
            cost: model.cost.clone(),
            run: Vec::new(),
            turn_open: false,
            partial: None,
            turn_message: None,
            turn_results: Vec::new(),
            tools: HashMap::new(),
            retrying: None,
            max_retries,
            compaction: "manual",
            queued: (Vec::new(), Vec::new()),
        }
    }

    /// The model runs use from now on.
    pub(super) fn set_model(&mut self, model: &rab_ai::Model) {
        self.api = model.api;
        self.provider = model.provider.clone();
        self.model = model.id.clone();
        self.cost = model.cost.clone();
    }

    /// A retry is waiting or under way.
    pub(super) fn is_retrying(&self) -> bool {
        self.retrying.is_some()
    }

    /// A message was queued (steering or follow-up): pi's `queue_update`.
    pub(super) fn queued(&mut self, text: String, steering: bool, out: &mut dyn FnMut(&str)) {
        if steering {
            self.queued.0.push(text);
        } else {
            self.queued.1.push(text);
        }
        self.queue_update(out);
    }

    /// The queues were emptied (an abort gives their messages back).
    pub(super) fn queue_cleared(&mut self, out: &mut dyn FnMut(&str)) {
        if !self.queued.0.is_empty() || !self.queued.1.is_empty() {
            self.queued = (Vec::new(), Vec::new());
            self.queue_update(out);
        }
    }

    fn queue_update(&self, out: &mut dyn FnMut(&str)) {
        let line =
            json!({"type": "queue_update", "steering": self.queued.0, "followUp": self.queued.1});
        out(&line.to_string());
    }

    /// Translates one event; each line goes to `out`.
    pub(super) fn event(&mut self, event: &AgentEvent, out: &mut dyn FnMut(&str)) {
        let mut emit = |v: Value| out(&v.to_string());
        match event {
            AgentEvent::AgentStart => {
                self.run.clear();
                self.turn_open = false;
                emit(json!({"type": "agent_start"}));
            }
            AgentEvent::TurnStart { .. } => self.open_turn(&mut emit),
            AgentEvent::TextDelta { delta } => self.delta(delta, false, out),
            AgentEvent::ThinkingDelta { delta } => self.delta(delta, true, out),
            AgentEvent::MessageEnd { message } => self.message_end(message, out),
            AgentEvent::ToolCall { call } => {
                self.tools.insert(
                    call.id.clone(),
                    Running {
                        name: call.name.clone(),
                        args: call.arguments.clone(),
                        output: String::new(),
                    },
                );
                emit(json!({
                    "type": "tool_execution_start",
                    "toolCallId": call.id,
                    "toolName": call.name,
                    "args": call.arguments,
                }));
            }
            AgentEvent::ToolUpdate { call_id, chunk } => {
                let Some(t) = self.tools.get_mut(call_id) else { return };
                t.output.push_str(chunk);
                if t.output.len() > 2 * UPDATE_TAIL {
                    let mut cut = t.output.len() - UPDATE_TAIL;
                    while !t.output.is_char_boundary(cut) {
                        cut += 1;
                    }
                    t.output.drain(..cut);
                }
                emit(json!({
                    "type": "tool_execution_update",
                    "toolCallId": call_id,
                    "toolName": t.name,
                    "args": t.args,
                    "partialResult": {"content": [{"type": "text", "text": t.output}], "details": {}},
                }));
            }
            AgentEvent::ToolResult { result, details, duration_ms } => {
                let running = self.tools.remove(&result.tool_call_id);
                let details = details.clone().unwrap_or_else(|| json!({}));
                emit(json!({
                    "type": "tool_execution_end",
                    "toolCallId": result.tool_call_id,
                    "toolName": result.tool_name,
                    "result": {"content": pi::content(&result.content), "details": details},
                    "isError": result.is_error,
                    "durationMs": duration_ms,
                    "args": running.map(|r| r.args),
                }));
                let message = pi::tool_result(result, Some(&details), pi::now_ms());
                emit(json!({"type": "message_start", "message": message}));
                emit(json!({"type": "message_end", "message": message}));
                self.run.push(message.clone());
                self.turn_results.push(message);
            }
            AgentEvent::TurnEnd { turn } => self.close_turn(Some(*turn), &mut emit),
            AgentEvent::AgentEnd { stop } => {
                if self.partial.is_some() {
                    // Cut off before its message was recorded: ended as pi ends one.
                    let reason =
                        if matches!(stop, StopCause::Aborted) { "aborted" } else { "error" };
                    let mut message = self.partial_value();
                    message["stopReason"] = json!(reason);
                    self.partial = None;
                    emit(json!({"type": "message_end", "message": message}));
                    self.turn_message = Some(message);
                }
                self.close_turn(None, &mut emit);
                self.end_retry(stop, &mut emit);
                let run = std::mem::take(&mut self.run);
                emit(json!({"type": "agent_end", "messages": run, "stop": stop}));
            }
            AgentEvent::Retry { attempt, delay, message, discarded } => {
                if *discarded {
                    self.fail_partial(message, &mut emit);
                }
                self.retrying = Some(*attempt);
                emit(json!({
                    "type": "auto_retry_start",
                    "attempt": attempt,
                    "maxAttempts": self.max_retries,
                    "delayMs": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    "errorMessage": message,
                }));
            }
            AgentEvent::CompactionStart { reason, tokens } => {
                self.compaction = match reason {
                    rab_agent::CompactReason::Manual { .. } => "manual",
                    rab_agent::CompactReason::Overflow => "overflow",
                    rab_agent::CompactReason::Threshold => "threshold",
                };
                emit(
                    json!({"type": "compaction_start", "reason": self.compaction, "tokens": tokens}),
                );
            }
            AgentEvent::CompactionEnd {
                summary, tokens_before, tokens_after, is_fallback, ..
            } => {
                emit(json!({
                    "type": "compaction_end",
                    "reason": self.compaction,
                    "result": {"summary": summary, "tokensBefore": tokens_before},
                    "aborted": false,
                    "willRetry": false,
                    "tokensAfter": tokens_after,
                    "isFallback": is_fallback,
                }));
            }
            AgentEvent::CompactionFailed { message, is_disabled } => {
                let aborted = message.contains("interrupted") || message.contains("cancel");
                emit(json!({
                    "type": "compaction_end",
                    "reason": self.compaction,
                    "aborted": aborted,
                    "willRetry": false,
                    "errorMessage": message,
                    "isDisabled": is_disabled,
                }));
            }
            // rab's own lines, as stream-json writes them.
            AgentEvent::Usage { .. } => {}
            AgentEvent::WebSearch { .. }
            | AgentEvent::Fallback { .. }
            | AgentEvent::Waiting { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::Error { .. } => {
                if let AgentEvent::Fallback { to, cost, message, .. } = event {
                    self.fail_partial(message, &mut emit);
                    if let Some((provider, model)) = to.split_once('/') {
                        self.provider = provider.to_owned();
                        self.model = model.to_owned();
                        self.cost = cost.clone();
                    }
                }
                if let Ok(v) = serde_json::to_value(event) {
                    emit(v);
                }
            }
        }
    }

    /// The attempt streaming the message failed and its text is discarded (a retry, a
    /// fallback to another model): the message ends as pi ends a failed one, and the
    /// next attempt starts a new one.
    fn fail_partial(&mut self, why: &str, emit: &mut dyn FnMut(Value)) {
        if self.partial.is_none() {
            return;
        }
        let mut message = self.partial_value();
        message["stopReason"] = json!("error");
        message["errorMessage"] = json!(why);
        self.partial = None;
        emit(json!({"type": "message_end", "message": message}));
    }

    fn open_turn(&mut self, emit: &mut dyn FnMut(Value)) {
        if !self.turn_open {
            self.turn_open = true;
            self.turn_message = None;
            self.turn_results.clear();
            emit(json!({"type": "turn_start"}));
        }
    }

    fn close_turn(&mut self, turn: Option<u32>, emit: &mut dyn FnMut(Value)) {
        if self.turn_open {
            self.turn_open = false;
            let results = std::mem::take(&mut self.turn_results);
            let message = self.turn_message.take().unwrap_or(Value::Null);
            emit(
                json!({"type": "turn_end", "message": message, "toolResults": results, "turn": turn}),
            );
        }
    }

    /// A retry that was under way ended: it worked, or the run ends with its error.
    fn end_retry(&mut self, stop: &StopCause, emit: &mut dyn FnMut(Value)) {
        let Some(attempt) = self.retrying.take() else { return };
        match stop {
            StopCause::Error { message } => emit(json!({
                "type": "auto_retry_end", "success": false, "attempt": attempt, "finalError": message,
            })),
            _ => emit(json!({"type": "auto_retry_end", "success": true, "attempt": attempt})),
        }
    }

    /// The partial message as pi shows it.
    fn partial_value(&self) -> Value {
        self.partial_json().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(Value::Null)
    }

    /// The partial message's JSON, copied together from its blocks' cached JSON.
    fn partial_json(&self) -> Option<String> {
        let p = self.partial.as_ref()?;
        let mut partial = String::with_capacity(
            p.tail.len()
                + 64
                + p.blocks
                    .iter()
                    .map(|b| match b {
                        Block::Text(_, e) | Block::Thinking(_, e) => e.len() + 40,
                        Block::Done(j) => j.len() + 1,
                    })
                    .sum::<usize>(),
        );
        partial.push_str("{\"role\":\"assistant\",\"content\":[");
        for (i, b) in p.blocks.iter().enumerate() {
            if i > 0 {
                partial.push(',');
            }
            b.push_json(&mut partial);
        }
        partial.push(']');
        partial.push_str(&p.tail);
        Some(partial)
    }

    /// Writes a `message_update` whose assistant event is `kind` with `fields`; the
    /// partial is serialised once for both places it goes.
    fn update(&self, kind: &str, fields: &[(&str, &Value)], out: &mut dyn FnMut(&str)) {
        let Some(partial) = self.partial_json() else { return };
        let mut line = String::with_capacity(2 * partial.len() + 160);
        line.push_str("{\"type\":\"message_update\",\"message\":");
        line.push_str(&partial);
        line.push_str(",\"assistantMessageEvent\":{\"type\":");
        line.push_str(&Value::from(kind).to_string());
        for (k, v) in fields {
            line.push(',');
            line.push_str(&Value::from(*k).to_string());
            line.push(':');
            line.push_str(&v.to_string());
        }
        line.push_str(",\"partial\":");
        line.push_str(&partial);
        line.push_str("}}");
        out(&line);
    }

    /// The JSON of a partial message after its content.
    fn tail(&self, timestamp: u64) -> String {
        let rest = json!({
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": pi::usage(&rab_ai::Usage::default(), &self.cost),
            "stopReason": "stop",
            "timestamp": timestamp,
        })
        .to_string();
        // `{"api":…}` as `,"api":…}`.
        format!(",{}", &rest[1..])
    }

    /// Starts the assistant message when its first event comes.
    fn ensure_partial(&mut self, out: &mut dyn FnMut(&str)) {
        if self.retrying.is_some() {
            let attempt = self.retrying.take().unwrap_or(0);
            out(&json!({"type": "auto_retry_end", "success": true, "attempt": attempt}).to_string());
        }
        if self.partial.is_none() {
            let mut emit = |v: Value| out(&v.to_string());
            self.open_turn(&mut emit);
            let timestamp = pi::now_ms();
            let tail = self.tail(timestamp);
            self.partial = Some(Partial { blocks: Vec::new(), open: false, timestamp, tail });
            let message = self.partial_value();
            out(&json!({"type": "message_start", "message": message}).to_string());
        }
    }

    /// Ends the growing block (`text_end`, `thinking_end`).
    fn close_block(&mut self, out: &mut dyn FnMut(&str)) {
        let Some(p) = self.partial.as_mut() else { return };
        if !p.open {
            return;
        }
        p.open = false;
        let index = p.blocks.len() - 1;
        let (kind, text) = match &p.blocks[index] {
            Block::Text(t, _) => ("text_end", t.clone()),
            Block::Thinking(t, _) => ("thinking_end", t.clone()),
            Block::Done(_) => return,
        };
        self.update(kind, &[("contentIndex", &json!(index)), ("content", &json!(text))], out);
    }

    fn delta(&mut self, delta: &str, thinking: bool, out: &mut dyn FnMut(&str)) {
        self.ensure_partial(out);
        let same = self.partial.as_ref().is_some_and(|p| {
            p.open
                && matches!(
                    (p.blocks.last(), thinking),
                    (Some(Block::Thinking(..)), true) | (Some(Block::Text(..)), false)
                )
        });
        if !same {
            self.close_block(out);
            let Some(p) = self.partial.as_mut() else { return };
            p.blocks.push(if thinking {
                Block::Thinking(String::new(), String::new())
            } else {
                Block::Text(String::new(), String::new())
            });
            p.open = true;
            let index = json!(p.blocks.len() - 1);
            let start = if thinking { "thinking_start" } else { "text_start" };
            self.update(start, &[("contentIndex", &index)], out);
        }
        let Some(p) = self.partial.as_mut() else { return };
        let index = p.blocks.len() - 1;
        match p.blocks.last_mut() {
            Some(Block::Text(t, e) | Block::Thinking(t, e)) => {
                t.push_str(delta);
                e.push_str(&escape(delta));
            }
            _ => return,
        }
        let kind = if thinking { "thinking_delta" } else { "text_delta" };
        self.update(kind, &[("contentIndex", &json!(index)), ("delta", &json!(delta))], out);
    }

    fn message_end(&mut self, message: &Message, out: &mut dyn FnMut(&str)) {
        match message {
            Message::Assistant(a) => {
                self.ensure_partial(out);
                self.close_block(out);
                // Tool calls arrive whole: each as a start and an end.
                let streamed = self.partial.as_ref().map_or(0, |p| p.blocks.len());
                for (index, block) in a.content.iter().enumerate() {
                    let rab_ai::AssistantBlock::ToolCall(call) = block else { continue };
                    if index < streamed {
                        continue;
                    }
                    let value = pi::tool_call(call);
                    if let Some(p) = self.partial.as_mut() {
                        p.blocks.push(Block::Done(value.to_string()));
                    }
                    let index = json!(index);
                    self.update("toolcall_start", &[("contentIndex", &index)], out);
                    self.update(
                        "toolcall_end",
                        &[("contentIndex", &index), ("toolCall", &value)],
                        out,
                    );
                }
                let timestamp = self.partial.take().map_or_else(pi::now_ms, |p| p.timestamp);
                let value = pi::assistant(a, &self.cost, timestamp);
                out(&json!({"type": "message_end", "message": value}).to_string());
                self.run.push(value.clone());
                self.turn_message = Some(value);
            }
            Message::User(_) => {
                let mut emit = |v: Value| out(&v.to_string());
                self.open_turn(&mut emit);
                if let Some(text) = pi::user_text(message) {
                    let before = (self.queued.0.len(), self.queued.1.len());
                    if let Some(i) = self.queued.0.iter().position(|q| *q == text) {
                        self.queued.0.remove(i);
                    } else if let Some(i) = self.queued.1.iter().position(|q| *q == text) {
                        self.queued.1.remove(i);
                    }
                    if before != (self.queued.0.len(), self.queued.1.len()) {
                        self.queue_update(out);
                    }
                }
                let value = pi::message(message, &self.cost, pi::now_ms());
                out(&json!({"type": "message_start", "message": value}).to_string());
                out(&json!({"type": "message_end", "message": value}).to_string());
                self.run.push(value);
            }
            Message::ToolResult(_) | Message::System(_) => {
                let value = pi::message(message, &self.cost, pi::now_ms());
                out(&json!({"type": "message_start", "message": value}).to_string());
                out(&json!({"type": "message_end", "message": value}).to_string());
                self.run.push(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rab_ai::{AssistantBlock, AssistantMessage, StopReason};

    fn run(events: Vec<AgentEvent>) -> Vec<Value> {
        let model = rab_ai::Registry::builtin().models()[0].clone();
        let mut stream = Stream::new(&model, 3);
        let mut lines = Vec::new();
        for e in &events {
            stream.event(e, &mut |l: &str| lines.push(serde_json::from_str(l).unwrap()));
        }
        lines
    }

    fn kind(v: &Value) -> String {
        match v["assistantMessageEvent"]["type"].as_str() {
            Some(step) => format!("update:{step}"),
            None => v["type"].as_str().unwrap_or("").to_owned(),
        }
    }

    fn answer(text: &str, call: Option<rab_ai::ToolCall>) -> Message {
        let mut a = AssistantMessage::empty(rab_ai::Api::AnthropicMessages, "anthropic", "m");
        a.content.push(AssistantBlock::Text {
            text: text.into(),
            signature: None,
            phase: None,
            citations: Vec::new(),
        });
        a.stop_reason = StopReason::Stop;
        if let Some(c) = call {
            a.content.push(AssistantBlock::ToolCall(c));
            a.stop_reason = StopReason::ToolUse;
        }
        Message::Assistant(a)
    }

    #[test]
    fn a_run_comes_out_in_pis_order_and_a_discarded_attempt_ends_its_message() {
        let call = rab_ai::ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            arguments: json!({"path": "."}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        };
        let result = rab_ai::ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "ls".into(),
            content: vec![rab_ai::Content::text("a.txt")],
            is_error: false,
        };
        let lines = run(vec![
            AgentEvent::AgentStart,
            AgentEvent::MessageEnd { message: Message::user("hi") },
            AgentEvent::TurnStart { turn: 1 },
            AgentEvent::TextDelta { delta: "Wr".into() },
            AgentEvent::Retry {
                attempt: 1,
                delay: std::time::Duration::from_millis(5),
                message: "overloaded".into(),
                discarded: true,
            },
            AgentEvent::TextDelta { delta: "Lo\"ok".into() },
            AgentEvent::MessageEnd { message: answer("Lo\"ok", Some(call.clone())) },
            AgentEvent::ToolCall { call },
            AgentEvent::ToolUpdate { call_id: "c1".into(), chunk: "a.t".into() },
            AgentEvent::ToolResult { result, details: None, duration_ms: 3 },
            AgentEvent::TurnEnd { turn: 1 },
            AgentEvent::AgentEnd { stop: StopCause::Done },
        ]);
        let kinds: Vec<String> = lines.iter().map(kind).collect();
        assert_eq!(
            kinds,
            [
                "agent_start",
                "turn_start",
                "message_start",
                "message_end",
                "message_start",
                "update:text_start",
                "update:text_delta",
                "message_end",
                "auto_retry_start",
                "auto_retry_end",
                "message_start",
                "update:text_start",
                "update:text_delta",
                "update:text_end",
                "update:toolcall_start",
                "update:toolcall_end",
                "message_end",
                "tool_execution_start",
                "tool_execution_update",
                "tool_execution_end",
                "message_start",
                "message_end",
                "turn_end",
                "agent_end",
            ]
        );
        // The discarded attempt ended as failed; the partial is spliced whole, escapes and all.
        assert_eq!(lines[7]["message"]["stopReason"], "error");
        assert_eq!(lines[12]["message"]["content"][0]["text"], "Lo\"ok");
        assert_eq!(lines[12]["assistantMessageEvent"]["partial"], lines[12]["message"]);
        assert_eq!(lines[15]["assistantMessageEvent"]["toolCall"]["name"], "ls");
        assert_eq!(lines[18]["partialResult"]["content"][0]["text"], "a.t");
        assert_eq!(lines[22]["toolResults"][0]["toolCallId"], "c1");
        let roles: Vec<&str> = lines[23]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "toolResult"]);
        assert_eq!(lines[23]["stop"]["reason"], "done");
    }
}
