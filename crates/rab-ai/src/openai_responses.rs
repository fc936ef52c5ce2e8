//! OpenAI Responses API: `POST {base}/responses` with `stream: true`, `store: false`.
//!
//! Stateless use as the API reference describes it: every request carries the whole
//! history as input items, and reasoning items come back with `encrypted_content`
//! (requested through `include`) so they can be replayed to the same model without
//! `previous_response_id`. `prompt_cache_key` keeps one conversation on one cache.
//! Assistant messages go back with the `phase` they came with, as OpenAI asks
//! (developers.openai.com/api/docs/guides/reasoning, "phase parameter", read
//! 2026-11-24). System updates are `developer` messages; on models that take
//! `configuration_update` items a changed effort is one, and the request-level effort
//! stays the conversation's first, so the cached prefix holds.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::assemble::Builder;
use crate::model::{Api, Model, ThinkingFormat};
use crate::provider::{
    Decoder, HttpRequest, StreamOptions, Wire, WireError, join_url, max_tokens, parse_json,
};
use crate::sse::SseEvent;
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, SystemMessage,
    ThinkingLevel, Usage,
};

pub(crate) struct ResponsesWire;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    instructions: &'a str,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    stream: bool,
    store: bool,
    max_output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

fn user_content(content: &[Content]) -> Vec<Value> {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text } => json!({"type": "input_text", "text": text}),
            Content::Image { mime_type, data } => {
                json!({"type": "input_image", "image_url": data_url(mime_type, data)})
            }
        })
        .collect()
}

/// The effort in effect at the conversation's start: before the first recorded change,
/// or the one asked for now when nothing changed.
fn first_level(messages: &[Message], now: ThinkingLevel) -> ThinkingLevel {
    messages
        .iter()
        .find_map(|m| match m {
            Message::System(SystemMessage { thinking: Some((from, _)), .. }) => Some(*from),
            Message::User(_)
            | Message::Assistant(_)
            | Message::ToolResult(_)
            | Message::System(_) => None,
        })
        .unwrap_or(now)
}

fn push_assistant(input: &mut Vec<Value>, a: &AssistantMessage, model: &Model, free: &[&str]) {
    // Reasoning items (and the item ids that refer to them) are only valid for the
    // model that produced them; a call's item id goes back only with its reasoning
    // (the API refuses an item whose reasoning is missing).
    let same_model = a.api == Api::OpenaiResponses && a.model == model.id;
    let has_reasoning = same_model
        && a.content.iter().any(|b| {
            matches!(b, AssistantBlock::Thinking { signature: Some(_), item_id: Some(_), .. })
        });
    for block in &a.content {
        match block {
            AssistantBlock::Thinking { thinking, signature, item_id, .. } => {
                if let (true, Some(enc), Some(id)) = (same_model, signature, item_id) {
                    let summary: Vec<Value> = if thinking.is_empty() {
                        Vec::new()
                    } else {
                        vec![json!({"type": "summary_text", "text": thinking})]
                    };
                    input.push(json!({
                        "type": "reasoning",
                        "id": id,
                        "summary": summary,
                        "encrypted_content": enc,
                    }));
                }
            }
            AssistantBlock::Text { text, phase, .. } => {
                if !text.is_empty() {
                    let mut item = json!({"role": "assistant", "content": text});
                    // A message without its label (cut off before it came, or from
                    // another model) gets the one its place implies.
                    let inferred = || {
                        let label = if a.tool_calls().next().is_some() {
                            "commentary"
                        } else {
                            "final_answer"
                        };
                        model.compat.phases.then(|| label.to_owned())
                    };
                    if let Some(phase) = phase.clone().or_else(inferred) {
                        item["phase"] = json!(phase);
                    }
                    input.push(item);
                }
            }
            AssistantBlock::ToolCall(call) => {
                let free_input = call.arguments.get("input").and_then(Value::as_str);
                let mut item = match free_input {
                    // A free-form call goes back as the model wrote it.
                    Some(text) if free.contains(&call.name.as_str()) => json!({
                        "type": "custom_tool_call",
                        "call_id": call.id,
                        "name": call.name,
                        "input": text,
                    }),
                    _ => {
                        let arguments = match &call.invalid_arguments {
                            Some(raw) => raw.clone(),
                            None => call.arguments.to_string(),
                        };
                        json!({
                            "type": "function_call",
                            "call_id": call.id,
                            "name": call.name,
                            "arguments": arguments,
                        })
                    }
                };
                if let (true, Some(id)) = (has_reasoning, &call.item_id) {
                    item["id"] = json!(id);
                }
                input.push(item);
            }
            // A search goes back as its `web_search_call` item with the reasoning
            // around it (item ids only with their reasoning); another provider's as
            // text.
            AssistantBlock::WebSearch(search) => {
                if has_reasoning {
                    input.extend(search.raw.iter().cloned());
                } else if a.api != Api::OpenaiResponses {
                    let note = crate::types::search_note(search);
                    input.push(json!({"role": "assistant", "content": note}));
                }
            }
        }
    }
}

/// The history as input items; `free`: the free-form tools, whose calls and results go
/// as custom tool items.
fn convert_input(
    messages: &[Message],
    model: &Model,
    effort_updates: bool,
    free: &[&str],
) -> Vec<Value> {
    let mut input: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(u) => {
                if !u.content.is_empty() {
                    input.push(json!({"role": "user", "content": user_content(&u.content)}));
                }
            }
            Message::Assistant(a) => push_assistant(&mut input, a, model, free),
            Message::ToolResult(r) => {
                let has_image = r.content.iter().any(|c| matches!(c, Content::Image { .. }));
                let output = if has_image {
                    Value::Array(user_content(&r.content))
                } else {
                    Value::String(r.text())
                };
                let kind = if free.contains(&r.tool_name.as_str()) {
                    "custom_tool_call_output"
                } else {
                    "function_call_output"
                };
                input.push(json!({"type": kind, "call_id": r.tool_call_id, "output": output}));
            }
            Message::System(s) => {
                let note = s.note();
                if !note.is_empty() {
                    input.push(json!({"role": "developer", "content": note}));
                }
                if let (true, Some((_, to))) = (effort_updates, s.thinking) {
                    let item = json!({
                        "type": "configuration_update",
                        "reasoning": {"effort": model.compat.effort(to)},
                    });
                    // The API rejects two updates in a row: the later one stands.
                    match input.last_mut() {
                        Some(last) if last["type"] == "configuration_update" => *last = item,
                        _ => input.push(item),
                    }
                }
            }
        }
    }
    input
}

/// The URL of the Responses endpoint under an OpenAI-style base (which includes `/v1`).
pub fn responses_url(base: &str) -> String {
    join_url(base, "responses")
}

impl Wire for ResponsesWire {
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String> {
        let thinks = model.reasoning && model.compat.thinking != ThinkingFormat::None;
        let effort_updates = thinks && model.compat.effort_updates;
        let level = if effort_updates {
            first_level(&context.messages, options.thinking)
        } else {
            options.thinking
        };
        let effort = thinks.then(|| model.compat.effort(level));
        let reasoning = effort.map(|e| json!({"effort": e, "summary": "auto"}));
        // Sampling parameters only while no reasoning is asked for, at the request
        // level or by an update.
        let now = thinks.then(|| model.compat.effort(options.thinking));
        let samples = effort.is_none_or(|e| e == "none") && now.is_none_or(|e| e == "none");
        let tools = context.current_tools();
        // Free-form tools go as custom tools where the server takes them; their calls
        // and results in the history too.
        let free: Vec<&str> = tools
            .iter()
            .filter(|t| t.grammar.is_some() && model.compat.custom_tools)
            .map(|t| t.name.as_str())
            .collect();
        let body = Body {
            model: &model.id,
            instructions: &context.system_prompt,
            input: convert_input(&context.messages, model, effort_updates, &free),
            tools: tools
                .iter()
                .map(|t| match &t.grammar {
                    _ if t.server.is_some() => {
                        crate::web_search::responses_tool(t).unwrap_or_default()
                    }
                    Some(grammar) if model.compat.custom_tools => json!({
                        "type": "custom",
                        "name": t.name,
                        "description": t.description,
                        "format": {"type": "grammar", "syntax": "lark", "definition": grammar},
                    }),
                    _ => json!({
                        "type": "function",
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                        "strict": false,
                    }),
                })
                .collect(),
            stream: true,
            store: false,
            max_output_tokens: max_tokens(model, options),
            include: {
                let mut include = Vec::new();
                if reasoning.is_some() {
                    include.push("reasoning.encrypted_content");
                }
                // Each search's pages (its action's sources) only come when asked for.
                if tools.iter().any(|t| t.server.is_some()) {
                    include.push("web_search_call.action.sources");
                }
                include
            },
            reasoning,
            prompt_cache_key: options.session_id.as_deref(),
            temperature: if samples { options.temperature } else { None },
        };
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
        ];
        if let Some(key) = &options.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        Ok(HttpRequest {
            url: responses_url(&model.base_url),
            headers,
            body: body.into(),
            prefix_hash: None,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(ResponsesDecoder::default())
    }
}

/// Decoder state for one Responses stream.
#[derive(Default)]
pub(crate) struct ResponsesDecoder {
    /// `output_index` → builder block index.
    items: Vec<Option<usize>>,
    /// Free-form calls under way: block index and the input so far.
    custom: Vec<(usize, String)>,
    finished: bool,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default)]
    output_index: usize,
    #[serde(borrow, default)]
    delta: Cow<'a, str>,
    #[serde(default)]
    summary_index: usize,
}

#[derive(Deserialize)]
struct ItemEvent<'a> {
    #[serde(default)]
    output_index: usize,
    #[serde(borrow)]
    item: Item<'a>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    call_id: Cow<'a, str>,
    #[serde(borrow, default)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    encrypted_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    summary: Vec<SummaryPart<'a>>,
    #[serde(borrow, default)]
    phase: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SummaryPart<'a> {
    #[serde(borrow, default)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
struct ArgsDone<'a> {
    #[serde(default)]
    output_index: usize,
    #[serde(borrow, default)]
    arguments: Cow<'a, str>,
}

#[derive(Deserialize)]
struct InputDone<'a> {
    #[serde(default)]
    output_index: usize,
    #[serde(borrow, default)]
    input: Cow<'a, str>,
}

#[derive(Deserialize)]
struct ResponseEvent<'a> {
    #[serde(borrow)]
    response: ResponseBody<'a>,
}

#[derive(Deserialize)]
struct ResponseBody<'a> {
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    incomplete_details: Option<Incomplete<'a>>,
    #[serde(default)]
    error: Option<ApiError>,
}

#[derive(Deserialize)]
struct Incomplete<'a> {
    #[serde(borrow, default)]
    reason: Cow<'a, str>,
}

#[derive(Deserialize, Default)]
struct ApiError {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct ErrorEvent {
    #[serde(default)]
    error: Option<ApiError>,
    #[serde(flatten)]
    flat: ApiError,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
    #[serde(default)]
    cache_write_tokens: u64,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        let (read, write) = self
            .input_tokens_details
            .as_ref()
            .map_or((0, 0), |d| (d.cached_tokens, d.cache_write_tokens));
        Usage {
            input: self.input_tokens.saturating_sub(read + write),
            output: self.output_tokens,
            cache_read: read,
            cache_write: write,
            reasoning: self.output_tokens_details.as_ref().map_or(0, |d| d.reasoning_tokens),
            web_searches: 0,
        }
    }
}

fn api_error(e: ApiError) -> WireError {
    let code = e.code.map(|c| match c {
        Value::String(s) => s,
        other => other.to_string(),
    });
    WireError::Api { code, message: e.message }
}

impl ResponsesDecoder {
    fn item(&self, output_index: usize) -> Option<usize> {
        self.items.get(output_index).copied().flatten()
    }

    fn set_item(&mut self, output_index: usize, index: usize) -> Result<(), WireError> {
        let output_index = crate::provider::stream_index("output item", output_index)?;
        if self.items.len() <= output_index {
            self.items.resize(output_index + 1, None);
        }
        self.items[output_index] = Some(index);
        Ok(())
    }

    /// The text block of a message item, opened on its first text.
    fn text_block(&mut self, output_index: usize, out: &mut Builder) -> Result<usize, WireError> {
        match self.item(output_index) {
            Some(i) => Ok(i),
            None => {
                crate::provider::stream_index("output item", output_index)?;
                let i = out.start_text();
                self.set_item(output_index, i)?;
                Ok(i)
            }
        }
    }

    fn item_done(&mut self, e: ItemEvent<'_>, out: &mut Builder) {
        let item = e.item;
        let Some(i) = self.item(e.output_index) else { return };
        match &*item.kind {
            "reasoning" => {
                if let Some(enc) = &item.encrypted_content {
                    out.signature(i, enc);
                }
                let summary: Vec<&str> = item.summary.iter().map(|p| &*p.text).collect();
                out.set_thinking(i, &summary.join("\n\n"));
            }
            "function_call" => {
                if let Some(args) = &item.arguments {
                    out.tool_args_final(i, args);
                }
                out.end_tool(i);
            }
            "custom_tool_call" => {
                let so_far = self.custom.iter().position(|(b, _)| *b == i);
                let streamed = so_far.map(|p| self.custom.swap_remove(p).1).unwrap_or_default();
                let text = item.input.as_deref().map_or(streamed, str::to_owned);
                out.tool_args_final(i, &json!({"input": text}).to_string());
                out.end_tool(i);
            }
            _ => {}
        }
    }

    /// Input text of a free-form call under way.
    fn custom_input(&mut self, output_index: usize, text: &str, whole: bool) {
        let Some(i) = self.item(output_index) else { return };
        match self.custom.iter_mut().find(|(b, _)| *b == i) {
            Some((_, so_far)) if whole => *so_far = text.to_owned(),
            Some((_, so_far)) => so_far.push_str(text),
            None => self.custom.push((i, text.to_owned())),
        }
    }

    /// A message item is done: its `phase` (read here, as the `added` copy may lack it)
    /// labels its text block.
    fn message_done(&mut self, e: &ItemEvent<'_>, out: &mut Builder) -> Result<(), WireError> {
        if let Some(phase) = &e.item.phase {
            let i = self.text_block(e.output_index, out)?;
            out.text_phase(i, phase);
        }
        Ok(())
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Builder) -> Result<(), WireError> {
        let owned;
        let kind = if event.event.is_empty() {
            owned = parse_json::<Value>("event", event.data)?
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            owned.as_str()
        } else {
            event.event
        };
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let d: Delta<'_> = parse_json(kind, event.data)?;
                let i = self.text_block(d.output_index, out)?;
                out.text(i, &d.delta);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let d: Delta<'_> = parse_json(kind, event.data)?;
                if let Some(i) = self.item(d.output_index) {
                    out.thinking(i, &d.delta);
                }
            }
            "response.reasoning_summary_part.added" => {
                let d: Delta<'_> = parse_json(kind, event.data)?;
                if let (Some(i), true) = (self.item(d.output_index), d.summary_index > 0) {
                    out.thinking(i, "\n\n");
                }
            }
            "response.function_call_arguments.delta" => {
                let d: Delta<'_> = parse_json(kind, event.data)?;
                if let Some(i) = self.item(d.output_index) {
                    out.tool_args(i, &d.delta);
                }
            }
            "response.custom_tool_call_input.delta" => {
                let d: Delta<'_> = parse_json(kind, event.data)?;
                self.custom_input(d.output_index, &d.delta, false);
            }
            "response.custom_tool_call_input.done" => {
                let d: InputDone<'_> = parse_json(kind, event.data)?;
                self.custom_input(d.output_index, &d.input, true);
            }
            "response.function_call_arguments.done" => {
                let d: ArgsDone<'_> = parse_json(kind, event.data)?;
                if let Some(i) = self.item(d.output_index) {
                    out.tool_args_final(i, &d.arguments);
                }
            }
            "response.output_item.added" => {
                let e: ItemEvent<'_> = parse_json(kind, event.data)?;
                let item = &e.item;
                match &*item.kind {
                    "reasoning" => {
                        let i = out.start_thinking();
                        out.thinking_meta(i, Some(&item.id), false);
                        self.set_item(e.output_index, i)?;
                    }
                    "function_call" | "custom_tool_call" => {
                        let i = out.start_tool(&item.call_id, &item.name);
                        if !item.id.is_empty() {
                            out.tool_item_id(i, &item.id);
                        }
                        self.set_item(e.output_index, i)?;
                    }
                    _ => {}
                }
            }
            "response.output_text.annotation.added" => {
                let v: Value = parse_json(kind, event.data)?;
                let index = v["output_index"].as_u64().unwrap_or_default() as usize;
                if let Some(c) = crate::web_search::url_citation(&v["annotation"]) {
                    let i = self.text_block(index, out)?;
                    out.cite(i, c);
                }
            }
            "response.output_item.done" => {
                let e: ItemEvent<'_> = parse_json(kind, event.data)?;
                if e.item.kind == "web_search_call" {
                    let v: Value = parse_json(kind, event.data)?;
                    out.web_search(crate::web_search::responses_search(&v["item"]));
                } else if e.item.kind == "message" {
                    self.message_done(&e, out)?;
                } else {
                    self.item_done(e, out);
                }
            }
            "response.created" | "response.in_progress" => {
                let r: ResponseEvent<'_> = parse_json(kind, event.data)?;
                out.response_id(&r.response.id);
            }
            "response.completed" | "response.incomplete" => {
                let r: ResponseEvent<'_> = parse_json(kind, event.data)?;
                out.response_id(&r.response.id);
                if let Some(u) = &r.response.usage {
                    out.usage(u.usage());
                }
                let reason = match r.response.incomplete_details {
                    Some(d) if d.reason == "max_output_tokens" => StopReason::Length,
                    Some(_) if kind == "response.incomplete" => StopReason::Length,
                    Some(_) | None => StopReason::Stop,
                };
                out.stop(reason);
                self.finished = true;
            }
            "response.failed" => {
                let r: ResponseEvent<'_> = parse_json(kind, event.data)?;
                let error = r.response.error.unwrap_or_else(|| ApiError {
                    code: None,
                    message: "the response failed without an error message".to_owned(),
                });
                return Err(api_error(error));
            }
            "error" => {
                // Documented flat (`code`, `message`) and sent nested (`error: {…}`).
                let e: ErrorEvent = parse_json(kind, event.data)?;
                return Err(api_error(e.error.unwrap_or(e.flat)));
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Builder) -> Result<(), WireError> {
        if self.finished {
            Ok(())
        } else {
            Err(WireError::Incomplete("the stream ended before response.completed".to_owned()))
        }
    }
}

#[cfg(test)]
mod tests;
