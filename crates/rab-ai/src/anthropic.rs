//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.
//!
//! Request: system prompt as text blocks, `tool_use`/`tool_result` blocks, thinking
//! blocks replayed with their signatures while the prefix they are bound to holds
//! (see [`crate::anthropic_history`]), and `cache_control` breakpoints on the system
//! prompt (which caches the tools before it) and on the last message, so each turn
//! reads the previous turn's prefix from cache. Adaptive thinking asks for summarized
//! thinking text (the default display omits it, and with it the notes models write
//! between tool calls) and for blocks whose prefix changed to be dropped rather than
//! fail the request. Response events: `message_start`, `content_block_start|delta|stop`,
//! `message_delta`, `message_stop`, `ping`, `error`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::anthropic_history::{
    Block, EPHEMERAL, Memo, MemoKey, Shape, TOOL_CHANGES_BETA, Tool, Unwritten, Writer,
    breakpoint_targets, messages_from, start_fingerprint, tools, uses_tool_changes, write_messages,
};
use crate::assemble::Builder;
use crate::model::{Model, ThinkingFormat};
use crate::provider::{
    Decoder, HttpRequest, StreamOptions, Wire, WireError, join_url, max_tokens, parse_json,
};
use crate::sse::SseEvent;
use crate::types::{Context, Message, StopReason, ThinkingLevel, Usage};
use crate::web_search;

/// API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Beta header of `thinking.block_binding` and `input_transformations`.
const BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";

/// Beta header of per-message effort: an effort-only `role: "system"` message changes
/// the effort from the next user turn on, the top-level effort staying as it was
/// (platform.claude.com/docs/en/build-with-claude/effort-per-message, read 2026-11-28).
const EFFORT_BETA: &str = "mid-conversation-output-config-2026-07-01";

/// Whether an effort name (from [`crate::model::Compat::effort`]) runs adaptive
/// thinking, rather than switching thinking off (`none`, `between_tools`).
pub(crate) fn is_adaptive(effort: &str) -> bool {
    !matches!(effort, "none" | "between_tools")
}

/// The effort of the system message for a change to `level`: its own, or, for a level
/// that turns thinking off (the top-level `thinking` says so while it lasts), the
/// lowest effort, so a later turn never runs at an effort `disabled` refuses.
pub(crate) fn message_effort(model: &Model, level: ThinkingLevel) -> &str {
    let effort = model.compat.effort(level);
    if is_adaptive(effort) { effort } else { model.compat.effort(ThinkingLevel::Minimal) }
}

/// The level behind the top-level effort of a conversation whose later changes go in as
/// effort-only system messages: the first level with adaptive thinking it asked for
/// (from its recorded changes, then `now`). It stays the same for the whole
/// conversation, so the cached prefix holds.
fn base_level(model: &Model, context: &Context, now: ThinkingLevel) -> ThinkingLevel {
    context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System(s) => s.thinking,
            Message::User(_) | Message::Assistant(_) | Message::ToolResult(_) => None,
        })
        .flat_map(|(from, to)| [from, to])
        .chain(std::iter::once(now))
        .find(|l| is_adaptive(model.compat.effort(*l)))
        .unwrap_or(now)
}

pub(crate) struct AnthropicWire;

/// The messages URL for a base URL that is the host root (`ANTHROPIC_BASE_URL`), also
/// accepting a base that already ends in `/v1`.
pub fn messages_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") { join_url(base, "messages") } else { join_url(base, "v1/messages") }
}

/// Fields in the order the prompt cache reads them (tools, system, messages), after the
/// per-request settings: each request's body then starts with the previous request's
/// bytes up to its last message (cache breakpoint markers aside), which makes cache hits
/// easy to check on the wire. `messages`, last, is written after these by
/// [`write_messages`], which hashes each message's bytes as it writes them, so the
/// history is serialised once per request.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
    max_tokens: u64,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Block<'a>>,
}

/// Thinking budget per level for models that take `budget_tokens`.
fn budget(level: ThinkingLevel) -> u64 {
    match level {
        ThinkingLevel::Off => 0,
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 4096,
        ThinkingLevel::Medium => 10_240,
        ThinkingLevel::High => 32_000,
    }
}

/// The `thinking` and `output_config` fields, the output limit and the beta headers
/// they need, per the thinking page (platform.claude.com/docs/en/build-with-claude/
/// thinking, read 2026-11-24): `display` and `block_binding` only with adaptive
/// thinking (both are rejected with `disabled` and `between_tools`).
struct ThinkingConfig {
    thinking: Option<Value>,
    output_config: Option<Value>,
    max_tokens: u64,
    betas: Vec<&'static str>,
    /// Changed levels go in as effort-only system messages (per-message effort).
    effort_messages: bool,
}

fn thinking_config(model: &Model, context: &Context, options: &StreamOptions) -> ThinkingConfig {
    let mut max = max_tokens(model, options);
    let level = if model.reasoning { options.thinking } else { ThinkingLevel::Off };
    let mut out = ThinkingConfig {
        thinking: None,
        output_config: None,
        max_tokens: max,
        betas: Vec::new(),
        effort_messages: false,
    };
    let format = if model.reasoning { model.compat.thinking } else { ThinkingFormat::None };
    // Every change goes in as an effort message, also while thinking is off: a message
    // once sent stays where it is (the history is append-only).
    out.effort_messages =
        format == ThinkingFormat::AnthropicAdaptive && model.compat.effort_updates;
    match format {
        ThinkingFormat::AnthropicAdaptive => match model.compat.effort(level) {
            "none" => out.thinking = Some(serde_json::json!({"type": "disabled"})),
            "between_tools" => out.thinking = Some(serde_json::json!({"type": "between_tools"})),
            effort => {
                let mut thinking = serde_json::json!({"type": "adaptive", "display": "summarized"});
                // Only models with preserved thinking run prefix checks (the prefix-check
                // page lists them, read 2026-11-28); the others get no binding controls.
                if model.compat.preserved_thinking {
                    thinking["block_binding"] =
                        serde_json::json!({"prefix_mismatch_behavior": "drop_block"});
                    out.betas.push(BINDING_BETA);
                }
                out.thinking = Some(thinking);
                // On models with per-message effort the top level keeps the
                // conversation's first effort and each change is a system message.
                let effort = if model.compat.effort_updates {
                    model.compat.effort(base_level(model, context, level))
                } else {
                    effort
                };
                out.output_config = Some(serde_json::json!({"effort": effort}));
            }
        },
        ThinkingFormat::AnthropicBudget if level != ThinkingLevel::Off => {
            // budget_tokens must stay below max_tokens; grow max_tokens within the
            // model's limit to leave room for the answer, never past a hard output cap
            // (a spending limit's: what the request may bill at most).
            let want = budget(level);
            max = (max + want)
                .min(model.max_output.max(max))
                .min(options.output_cap.unwrap_or(u64::MAX))
                .max(1);
            let budget = want.min(max.saturating_sub(1024)).max(1024);
            if budget < max {
                out.thinking =
                    Some(serde_json::json!({"type": "enabled", "budget_tokens": budget}));
            }
            out.max_tokens = max;
            if !context.current_tools().is_empty() {
                out.betas.push("interleaved-thinking-2025-05-14");
            }
        }
        ThinkingFormat::AnthropicBudget
        | ThinkingFormat::None
        | ThinkingFormat::OpenaiEffort
        | ThinkingFormat::Openrouter
        | ThinkingFormat::GeminiBudget
        | ThinkingFormat::GeminiLevel
        | ThinkingFormat::Deepseek => {}
    }
    out
}

impl Wire for AnthropicWire {
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String> {
        let mut config = thinking_config(model, context, options);
        let tool_changes = uses_tool_changes(model, context);
        if tool_changes {
            config.betas.push(TOOL_CHANGES_BETA);
        }
        let tools = tools(context, tool_changes);
        let mut system = if context.system_prompt.is_empty() {
            Vec::new()
        } else {
            vec![Block::Text { text: &context.system_prompt, cache_control: None }]
        };
        let declared: Vec<&str> = tools.iter().map(|t| t.name).collect();
        // What the conversation's last request kept, when it fits this one.
        let mut memo = context.memo.as_ref().map(|m| m.lock());
        let key = || MemoKey {
            model: model.clone(),
            tool_changes,
            declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            efforts: config.effort_messages,
        };
        let fits = |m: &Memo| {
            m.fits_model(model, tool_changes, &declared, config.effort_messages)
                && m.source() <= context.messages.len()
        };
        let kept: Option<&Memo> = memo.as_deref().and_then(Option::as_ref).filter(|m| fits(m));
        let from = kept.map_or(0, Memo::source);
        let used_memo = kept.is_some();
        let build = |from| {
            messages_from(context, model, tool_changes, &declared, config.effort_messages, from)
        };
        let mut messages = build(from);
        let shapes: Vec<Shape> = kept
            .map(|m| m.shapes().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain(messages.iter().map(Shape::of))
            .collect();
        if shapes.iter().any(|s| s.effort) {
            config.betas.push(EFFORT_BETA);
        }
        let drops_blocks = config.betas.contains(&BINDING_BETA);
        let binds = model.compat.preserved_thinking;
        let reply_may_think = config.thinking.as_ref().is_some_and(|t| t["type"] != "disabled");
        let marks = breakpoint_targets(&shapes);
        // The fingerprint covers the system prompt without its breakpoint marker.
        let fingerprint = start_fingerprint(&tools, &system, &shapes, binds, reply_may_think);
        for block in &mut system {
            if let Some(slot) = block.cache_slot() {
                *slot = Some(EPHEMERAL);
            }
        }
        let head = Head {
            model: &model.id,
            max_tokens: config.max_tokens,
            system,
            tools,
            stream: true,
            // Not with thinking, nor to models that fix their own sampling.
            temperature: if config.thinking.is_some() || model.compat.preserved_thinking {
                None
            } else {
                options.temperature
            },
            thinking: config.thinking,
            output_config: config.output_config,
        };
        let hint = kept.map_or(0, |m| m.len());
        let mut body = Vec::with_capacity(hint + hint / 8 + 128);
        serde_json::to_writer(&mut body, &head).map_err(|e| e.to_string())?;
        // `{…}` becomes `{…,"messages":[…]}`.
        body.pop();
        body.extend_from_slice(b",\"messages\":[");
        let start = body.len();
        let mut writer = Writer::new(fingerprint.clone(), &marks, binds, drops_blocks);
        let keep = memo.is_some();
        let written = match write_messages(&mut body, &mut writer, kept, &mut messages, keep) {
            Err(Unwritten::Stale) => {
                // Written whole, as without a memo; the memo starts again from this one.
                tracing::debug!("request memo is stale: writing the history whole");
                body.truncate(start);
                messages = build(0);
                writer = Writer::new(fingerprint, &marks, binds, drops_blocks);
                if let Some(slot) = memo.as_deref_mut() {
                    *slot = None;
                }
                write_messages(&mut body, &mut writer, None, &mut messages, keep)
            }
            other => other,
        }
        .map_err(|e| match e {
            Unwritten::Json(e) => e.to_string(),
            Unwritten::Stale => "request memo is stale".to_owned(),
        })?;
        if let Some(slot) = memo.as_deref_mut() {
            let kept_now = slot.as_ref().is_some_and(fits);
            let m = if kept_now { slot.as_mut() } else { Some(slot.insert(Memo::new(key()))) };
            if let Some(m) = m {
                m.extend(&body, &messages, &written, &shapes, &marks);
            }
        }
        drop(memo);
        let prefix_hash = writer.finish();
        body.extend_from_slice(b"]}");
        if cfg!(debug_assertions) && !cfg!(test) && used_memo {
            // Debug builds (every test of another crate) check that the memo changed
            // nothing; this crate's tests compare on their own.
            let whole = Context { memo: None, ..context.clone() };
            let again = self.build(model, &whole, options)?;
            debug_assert!(
                again.body[..] == body[..] && again.prefix_hash == prefix_hash,
                "the request written with a memo differs from the one built whole"
            );
        }
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
            ("anthropic-version", ANTHROPIC_VERSION.to_owned()),
        ];
        if let Some(key) = &options.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        if !config.betas.is_empty() {
            headers.push(("anthropic-beta", config.betas.join(",")));
        }
        Ok(HttpRequest {
            url: messages_url(&model.base_url),
            headers,
            body: body.into(),
            prefix_hash,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AnthropicDecoder::default())
    }
}

/// Decoder state for one Anthropic response.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    /// Anthropic block index → builder block index (`None` for blocks rab ignores).
    blocks: Vec<Option<usize>>,
    stopped: bool,
    /// Web searches whose `server_tool_use` block is streaming: builder index, the
    /// block as it started, and its input so far.
    searches: Vec<(usize, Value, String)>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    /// `{"thinking_tokens": N}`: the part of `output_tokens` spent thinking.
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
    /// `{"web_search_requests": N}`: searches run on the server.
    #[serde(default)]
    server_tool_use: Option<ServerToolUsage>,
}

#[derive(Deserialize)]
struct ServerToolUsage {
    #[serde(default)]
    web_search_requests: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    thinking_tokens: Option<u64>,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        Usage {
            input: self.input_tokens.unwrap_or(0),
            output: self.output_tokens.unwrap_or(0),
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
            cache_write: self.cache_creation_input_tokens.unwrap_or(0),
            reasoning: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.thinking_tokens)
                .unwrap_or(0),
            web_searches: self
                .server_tool_use
                .as_ref()
                .and_then(|s| s.web_search_requests)
                .unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow)]
    message: StartMessage<'a>,
}

#[derive(Deserialize)]
struct StartMessage<'a> {
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    usage: Option<WireUsage>,
    #[serde(default)]
    input_transformations: Vec<Transformation>,
}

/// What the API changed in the request before the model read it (a thinking block
/// dropped because its prefix or model did not match).
#[derive(Deserialize)]
struct Transformation {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    reason: String,
}

fn report(transformations: &[Transformation]) {
    for t in transformations {
        // A model switch drops the old model's blocks by design; a prefix mismatch
        // means rab sent a changed history, which the fingerprints should prevent.
        if t.reason == "model_binding_mismatch" {
            tracing::debug!(kind = %t.kind, path = %t.path, "thinking from another model left out");
        } else {
            tracing::warn!(kind = %t.kind, path = %t.path, reason = %t.reason, "the API changed the request");
        }
    }
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    index: usize,
    #[serde(borrow)]
    content_block: StartBlock<'a>,
}

#[derive(Deserialize)]
struct StartBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Cow<'a, str>,
    #[serde(borrow, default)]
    thinking: Cow<'a, str>,
    #[serde(borrow, default)]
    signature: Cow<'a, str>,
    #[serde(borrow, default)]
    data: Cow<'a, str>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: usize,
    #[serde(borrow)]
    delta: Delta<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Cow<'a, str>,
    #[serde(borrow, default)]
    thinking: Cow<'a, str>,
    #[serde(borrow, default)]
    signature: Cow<'a, str>,
    #[serde(borrow, default)]
    partial_json: Cow<'a, str>,
    /// A `citations_delta`'s citation.
    #[serde(default)]
    citation: Option<Value>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: usize,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(borrow)]
    delta: MessageDeltaInner<'a>,
    usage: Option<WireUsage>,
    #[serde(default)]
    input_transformations: Vec<Transformation>,
}

#[derive(Deserialize)]
struct MessageDeltaInner<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(borrow)]
    error: ErrorBody<'a>,
}

#[derive(Deserialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Cow<'a, str>,
}

#[derive(Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        "refusal" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

impl AnthropicDecoder {
    fn block(&self, index: usize) -> Option<usize> {
        self.blocks.get(index).copied().flatten()
    }

    fn set_block(&mut self, index: usize, builder_index: Option<usize>) -> Result<(), WireError> {
        let index = crate::provider::stream_index("content block", index)?;
        if self.blocks.len() <= index {
            self.blocks.resize(index + 1, None);
        }
        self.blocks[index] = builder_index;
        Ok(())
    }
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Builder) -> Result<(), WireError> {
        // The `event:` name equals the payload's `type`; fall back to the payload for
        // proxies that drop the event line.
        let owned;
        let kind = if event.event.is_empty() {
            owned = parse_json::<TypeOnly<'_>>("event", event.data)?.kind.into_owned();
            owned.as_str()
        } else {
            event.event
        };
        match kind {
            "content_block_delta" => {
                let d: BlockDelta<'_> = parse_json(kind, event.data)?;
                let Some(i) = self.block(d.index) else { return Ok(()) };
                match &*d.delta.kind {
                    "text_delta" => out.text(i, &d.delta.text),
                    "thinking_delta" => out.thinking(i, &d.delta.thinking),
                    "signature_delta" => out.signature(i, &d.delta.signature),
                    "input_json_delta" => match self.searches.iter_mut().find(|s| s.0 == i) {
                        Some((_, _, input)) => input.push_str(&d.delta.partial_json),
                        None => out.tool_args(i, &d.delta.partial_json),
                    },
                    "citations_delta" => {
                        if let Some(c) =
                            d.delta.citation.as_ref().and_then(web_search::anthropic_citation)
                        {
                            out.cite(i, c);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_start" => {
                let s: BlockStart<'_> = parse_json(kind, event.data)?;
                let b = &s.content_block;
                let index = match &*b.kind {
                    "text" => {
                        let i = out.start_text();
                        out.text(i, &b.text);
                        Some(i)
                    }
                    "thinking" => {
                        let i = out.start_thinking();
                        out.thinking(i, &b.thinking);
                        if !b.signature.is_empty() {
                            out.signature(i, &b.signature);
                        }
                        Some(i)
                    }
                    "redacted_thinking" => {
                        let i = out.start_thinking();
                        out.thinking_meta(i, None, true);
                        out.signature(i, &b.data);
                        Some(i)
                    }
                    "tool_use" => Some(out.start_tool(&b.id, &b.name)),
                    // The server's web search: its query streams, its results come whole.
                    "server_tool_use" if b.name == "web_search" => {
                        let block: Value = parse_json::<Value>(kind, event.data)?
                            .get_mut("content_block")
                            .map(Value::take)
                            .unwrap_or_default();
                        let i = out.start_search(&b.id);
                        self.searches.push((i, block, String::new()));
                        Some(i)
                    }
                    "web_search_tool_result" => {
                        let block: Value = parse_json::<Value>(kind, event.data)?
                            .get_mut("content_block")
                            .map(Value::take)
                            .unwrap_or_default();
                        let id = block["tool_use_id"].as_str().unwrap_or_default();
                        if let Some(i) = out.search_index(id) {
                            if let Some(search) = out.search_at(i) {
                                web_search::anthropic_result(search, &block);
                                search.raw.push(block);
                            }
                            out.search_done(i);
                        }
                        None
                    }
                    // Other server tools are not offered.
                    _ => None,
                };
                self.set_block(s.index, index)?;
            }
            "content_block_stop" => {
                let s: BlockStop = parse_json(kind, event.data)?;
                if let Some(i) = self.block(s.index) {
                    match self.searches.iter().position(|s| s.0 == i) {
                        Some(k) => {
                            let (i, mut block, input) = self.searches.remove(k);
                            let input: Value = serde_json::from_str(&input).unwrap_or_default();
                            if let Some(search) = out.search_at(i) {
                                search.queries = input["query"]
                                    .as_str()
                                    .map(str::to_owned)
                                    .into_iter()
                                    .collect();
                                block["input"] = input;
                                search.raw.insert(0, block);
                            }
                        }
                        None => out.end_tool(i),
                    }
                }
            }
            "message_start" => {
                let s: MessageStart<'_> = parse_json(kind, event.data)?;
                out.response_id(&s.message.id);
                report(&s.message.input_transformations);
                if let Some(u) = s.message.usage {
                    out.usage(u.usage());
                }
            }
            "message_delta" => {
                let d: MessageDelta<'_> = parse_json(kind, event.data)?;
                report(&d.input_transformations);
                if let Some(reason) = d.delta.stop_reason {
                    out.stop(stop_reason(&reason));
                }
                if let Some(u) = d.usage {
                    out.usage(u.usage());
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let e: ErrorEvent<'_> = parse_json(kind, event.data)?;
                return Err(WireError::Api {
                    code: e.error.kind.map(Cow::into_owned),
                    message: e.error.message.into_owned(),
                });
            }
            // `ping` and event types added after this adapter was written.
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Builder) -> Result<(), WireError> {
        if self.stopped {
            Ok(())
        } else {
            Err(WireError::Incomplete("the stream ended before message_stop".to_owned()))
        }
    }
}

#[cfg(test)]
mod tests;
