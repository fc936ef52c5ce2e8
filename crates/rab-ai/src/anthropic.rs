//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.
//!
//! Request: system prompt as text blocks, `tool_use`/`tool_result` blocks, thinking
//! blocks replayed with their signatures to the model that produced them, and
//! `cache_control` breakpoints on the system prompt (which caches the tools before it)
//! and on the last message, so each turn reads the previous turn's prefix from cache.
//! Response events: `message_start`, `content_block_start|delta|stop`, `message_delta`,
//! `message_stop`, `ping`, `error`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::assemble::Builder;
use crate::model::{Api, Model, ThinkingFormat};
use crate::provider::{
    Decoder, HttpRequest, StreamOptions, Wire, WireError, join_url, max_tokens, parse_json,
};
use crate::sse::SseEvent;
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ThinkingLevel, Usage,
};

/// API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

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
/// easy to check on the wire.
#[derive(Serialize)]
struct Body<'a> {
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
    messages: Vec<Msg<'a>>,
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// Anthropic tool ids must match `^[a-zA-Z0-9_-]{1,64}$`; ids from other providers
/// are mapped into that alphabet the same way for the call and its result.
fn tool_id(id: &str) -> String {
    let mut out: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if out.is_empty() {
        out.push_str("call");
    }
    out
}

fn user_blocks(content: &[Content]) -> Vec<Block<'_>> {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } if text.is_empty() => None,
            Content::Text { text } => Some(Block::Text { text, cache_control: None }),
            Content::Image { mime_type, data } => Some(Block::Image {
                source: ImageSource { kind: "base64", media_type: mime_type, data },
                cache_control: None,
            }),
        })
        .collect()
}

fn assistant_blocks<'a>(m: &'a AssistantMessage, model: &Model) -> Vec<Block<'a>> {
    // Signatures are only valid for the model that produced them.
    let same_model = m.api == Api::AnthropicMessages && m.model == model.id;
    m.content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text { text, .. } if text.is_empty() => None,
            AssistantBlock::Text { text, .. } => Some(Block::Text { text, cache_control: None }),
            AssistantBlock::Thinking { redacted: true, signature: Some(data), .. }
                if same_model =>
            {
                Some(Block::RedactedThinking { data })
            }
            AssistantBlock::Thinking {
                thinking, signature: Some(sig), redacted: false, ..
            } if same_model && !sig.is_empty() => {
                Some(Block::Thinking { thinking, signature: sig })
            }
            AssistantBlock::Thinking { .. } => None,
            AssistantBlock::ToolCall(call) => Some(Block::ToolUse {
                id: tool_id(&call.id),
                name: &call.name,
                input: &call.arguments,
                cache_control: None,
            }),
        })
        .collect()
}

fn convert_messages<'a>(messages: &'a [Message], model: &Model) -> Vec<Msg<'a>> {
    let mut out: Vec<Msg<'a>> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(u) => {
                let content = user_blocks(&u.content);
                if !content.is_empty() {
                    out.push(Msg { role: "user", content });
                }
            }
            Message::Assistant(a) => {
                let content = assistant_blocks(a, model);
                if !content.is_empty() {
                    out.push(Msg { role: "assistant", content });
                }
            }
            Message::ToolResult(r) => {
                let mut content = user_blocks(&r.content);
                if content.is_empty() {
                    content.push(Block::Text { text: "(no output)", cache_control: None });
                }
                let block = Block::ToolResult {
                    tool_use_id: tool_id(&r.tool_call_id),
                    content,
                    is_error: r.is_error,
                    cache_control: None,
                };
                // All results of one assistant turn go into one user message.
                match out.last_mut() {
                    Some(last)
                        if last.role == "user"
                            && matches!(last.content.first(), Some(Block::ToolResult { .. })) =>
                    {
                        last.content.push(block);
                    }
                    _ => out.push(Msg { role: "user", content: vec![block] }),
                }
            }
        }
    }
    out
}

/// Marks cache breakpoints on the last message and on the user-role message before it:
/// the latter was the last message of the previous request, so the previous request's
/// bytes up to and including it (breakpoint marker too) recur unchanged, and its cache
/// entry is read back. With the system prompt's breakpoint that makes three of the
/// four Anthropic allows.
fn mark_breakpoints(messages: &mut [Msg<'_>]) {
    let users: Vec<usize> =
        messages.iter().enumerate().filter(|(_, m)| m.role == "user").map(|(i, _)| i).collect();
    let mut targets = vec![messages.len().saturating_sub(1)];
    if let Some(&prev) = users.iter().rev().find(|&&i| i + 1 < messages.len()) {
        targets.push(prev);
    }
    for i in targets {
        let Some(m) = messages.get_mut(i) else { continue };
        for block in m.content.iter_mut().rev() {
            let slot = match block {
                Block::Text { cache_control, .. }
                | Block::Image { cache_control, .. }
                | Block::ToolUse { cache_control, .. }
                | Block::ToolResult { cache_control, .. } => cache_control,
                Block::Thinking { .. } | Block::RedactedThinking { .. } => continue,
            };
            *slot = Some(EPHEMERAL);
            break;
        }
    }
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

impl Wire for AnthropicWire {
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String> {
        let mut max = max_tokens(model, options);
        let level = if model.reasoning { options.thinking } else { ThinkingLevel::Off };
        let mut thinking = None;
        let mut output_config = None;
        let mut needs_interleaved_beta = false;
        let format = if model.reasoning { model.compat.thinking } else { ThinkingFormat::None };
        match format {
            ThinkingFormat::AnthropicAdaptive => match model.compat.effort(level) {
                "none" => thinking = Some(serde_json::json!({"type": "disabled"})),
                "between_tools" => thinking = Some(serde_json::json!({"type": "between_tools"})),
                effort => {
                    thinking = Some(serde_json::json!({"type": "adaptive"}));
                    output_config = Some(serde_json::json!({"effort": effort}));
                }
            },
            ThinkingFormat::AnthropicBudget if level != ThinkingLevel::Off => {
                // budget_tokens must stay below max_tokens; grow max_tokens within the
                // model's limit to leave room for the answer.
                let want = budget(level);
                max = (max + want).min(model.max_output.max(max));
                let budget = want.min(max.saturating_sub(1024)).max(1024);
                thinking = Some(serde_json::json!({"type": "enabled", "budget_tokens": budget}));
                needs_interleaved_beta = true;
            }
            ThinkingFormat::AnthropicBudget
            | ThinkingFormat::None
            | ThinkingFormat::OpenaiEffort
            | ThinkingFormat::Openrouter
            | ThinkingFormat::GeminiBudget
            | ThinkingFormat::GeminiLevel
            | ThinkingFormat::Deepseek => {}
        }
        let mut messages = convert_messages(&context.messages, model);
        mark_breakpoints(&mut messages);
        let system = if context.system_prompt.is_empty() {
            Vec::new()
        } else {
            vec![Block::Text { text: &context.system_prompt, cache_control: Some(EPHEMERAL) }]
        };
        let body = Body {
            model: &model.id,
            max_tokens: max,
            system,
            messages,
            tools: context
                .tools
                .iter()
                .map(|t| Tool {
                    name: &t.name,
                    description: &t.description,
                    input_schema: &t.parameters,
                })
                .collect(),
            stream: true,
            temperature: if thinking.is_some() { None } else { options.temperature },
            thinking,
            output_config,
        };
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
            ("anthropic-version", ANTHROPIC_VERSION.to_owned()),
        ];
        if let Some(key) = &options.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        if needs_interleaved_beta && !context.tools.is_empty() {
            headers.push(("anthropic-beta", "interleaved-thinking-2025-05-14".to_owned()));
        }
        Ok(HttpRequest { url: messages_url(&model.base_url), headers, body })
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
}

impl WireUsage {
    fn usage(&self) -> Usage {
        Usage {
            input: self.input_tokens.unwrap_or(0),
            output: self.output_tokens.unwrap_or(0),
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
            cache_write: self.cache_creation_input_tokens.unwrap_or(0),
            reasoning: 0,
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

    fn set_block(&mut self, index: usize, builder_index: Option<usize>) {
        if self.blocks.len() <= index {
            self.blocks.resize(index + 1, None);
        }
        self.blocks[index] = builder_index;
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
                    "input_json_delta" => out.tool_args(i, &d.delta.partial_json),
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
                    // Server tools (web search results and the like) are not rab's to run.
                    _ => None,
                };
                self.set_block(s.index, index);
            }
            "content_block_stop" => {
                let s: BlockStop = parse_json(kind, event.data)?;
                if let Some(i) = self.block(s.index) {
                    out.end_tool(i);
                }
            }
            "message_start" => {
                let s: MessageStart<'_> = parse_json(kind, event.data)?;
                out.response_id(&s.message.id);
                if let Some(u) = s.message.usage {
                    out.usage(u.usage());
                }
            }
            "message_delta" => {
                let d: MessageDelta<'_> = parse_json(kind, event.data)?;
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
#[path = "anthropic_tests.rs"]
mod tests;
