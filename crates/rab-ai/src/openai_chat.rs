//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with `stream: true`.
//!
//! One adapter serves OpenAI, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio, DeepSeek,
//! Groq, Mistral and any compatible server, so the decoder is tolerant of their known
//! differences: tool-call fragments without `index`, an empty `id` on later fragments,
//! reasoning in `reasoning_content` or `reasoning`, or as Mistral's typed content chunks
//! (`delta.content` an array of `thinking` and `text` chunks, per
//! docs.mistral.ai/capabilities/reasoning, read 2026-11-24), usage in the last chunk,
//! in the finish chunk or not at all, DeepSeek's cache fields, and a missing `[DONE]`.
//! DeepSeek needs `reasoning_content` back on every assistant message with tool calls
//! (api-docs.deepseek.com/guides/thinking_mode#tool-calls, read 2026-11-24).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::assemble::Builder;
use crate::model::{Api, MaxTokensField, Model, ThinkingFormat};
use crate::provider::{
    Decoder, HttpRequest, StreamOptions, Wire, WireError, join_url, max_tokens, parse_json,
};
use crate::sse::SseEvent;
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, Usage,
};

pub(crate) struct ChatWire;

/// The URL of the Chat Completions endpoint under an OpenAI-style base (with `/v1`).
pub fn chat_url(base: &str) -> String {
    join_url(base, "chat/completions")
}

fn image_part(mime: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

fn user_content(content: &[Content]) -> Value {
    if let [Content::Text { text }] = content {
        return Value::String(text.clone());
    }
    Value::Array(
        content
            .iter()
            .map(|c| match c {
                Content::Text { text } => json!({"type": "text", "text": text}),
                Content::Image { mime_type, data } => image_part(mime_type, data),
            })
            .collect(),
    )
}

fn assistant_message(a: &AssistantMessage, model: &Model) -> Option<Value> {
    let mut text = a.text();
    // Chat Completions has no search blocks: another API's searches go back as text.
    if a.api != Api::OpenaiCompletions {
        for b in &a.content {
            if let AssistantBlock::WebSearch(search) = b {
                text = format!("{}\n\n{text}", crate::types::search_note(search));
            }
        }
    }
    let calls: Vec<Value> = a
        .tool_calls()
        .map(|c| {
            let arguments = match &c.invalid_arguments {
                Some(raw) => raw.clone(),
                None => c.arguments.to_string(),
            };
            let id = wire_id(&c.id, model);
            json!({"id": id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    // Reasoning goes back only to the provider that wrote it.
    let is_ours = a.api == Api::OpenaiCompletions && a.provider == model.provider;
    let reasoning: String = if is_ours {
        a.content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
                AssistantBlock::Text { .. }
                | AssistantBlock::ToolCall(_)
                | AssistantBlock::WebSearch(_) => None,
            })
            .collect()
    } else {
        String::new()
    };
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    let content = if model.compat.thinking_chunks && !reasoning.is_empty() {
        // Mistral: the whole reply, thinking chunk first, as its docs ask.
        let mut parts =
            vec![json!({"type": "thinking", "thinking": [{"type": "text", "text": reasoning}]})];
        if !text.is_empty() {
            parts.push(json!({"type": "text", "text": text}));
        }
        Value::Array(parts)
    } else if text.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    m.insert("content".into(), content);
    let has_calls = !calls.is_empty();
    if has_calls {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    // OpenRouter: the reasoning's typed blocks go back unchanged (Gemini's tool calls
    // are refused without them), only to the model that wrote them (they are encoded
    // for it).
    if is_ours && a.model == model.id && model.compat.thinking == ThinkingFormat::Openrouter {
        let details: Vec<Value> = a
            .content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Thinking { signature: Some(s), .. } if s.starts_with('[') => {
                    serde_json::from_str::<Vec<Value>>(s).ok()
                }
                _ => None,
            })
            .flatten()
            .collect();
        if !details.is_empty() {
            m.insert("reasoning_details".into(), Value::Array(details));
        }
    }
    // DeepSeek rejects an assistant message with tool calls that lacks the field, on
    // every later request; a reply from elsewhere has no reasoning to send, so it goes
    // back empty.
    if let Some(field) = &model.compat.reasoning_replay_field
        && (has_calls || !reasoning.is_empty())
    {
        m.insert(field.clone(), Value::String(reasoning));
    }
    Some(Value::Object(m))
}

/// A tool-call id as `model`'s server takes it: as is, or for a server that takes only
/// 9 letters or digits (Mistral), such an id made from it by a stable hash (FNV-1a, in
/// base 62), so a call and its result agree on every request and across sessions.
fn wire_id<'a>(id: &'a str, model: &Model) -> std::borrow::Cow<'a, str> {
    let fits = id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric());
    if !model.compat.short_tool_ids || fits {
        return std::borrow::Cow::Borrowed(id);
    }
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut hash = id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let mut out = String::with_capacity(9);
    for _ in 0..9 {
        out.push(char::from(DIGITS[(hash % 62) as usize]));
        hash /= 62;
    }
    std::borrow::Cow::Owned(out)
}

/// A system update as text: mid-conversation system messages break many chat
/// templates, a separate user message breaks those that want roles to alternate, and
/// some servers refuse a user message right after a tool message (Mistral), so it
/// joins the user or tool message before it when there is one.
fn push_update(out: &mut Vec<Value>, text: &str) {
    let text = format!("<system_update>\n{text}\n</system_update>");
    if let Some(last) = out.last_mut().filter(|m| m["role"] == "user" || m["role"] == "tool") {
        match &mut last["content"] {
            Value::String(s) => {
                s.push_str("\n\n");
                s.push_str(&text);
            }
            Value::Array(parts) => parts.push(json!({"type": "text", "text": text})),
            other => *other = Value::String(text),
        }
        return;
    }
    out.push(json!({"role": "user", "content": text}));
}

fn convert_messages(context: &Context, model: &Model) -> Vec<Value> {
    let mut out = Vec::with_capacity(context.messages.len() + 1);
    if !context.system_prompt.is_empty() {
        let role = if model.compat.developer_role { "developer" } else { "system" };
        out.push(json!({"role": role, "content": context.system_prompt}));
    }
    // Tool messages carry text only; images from tool results follow as one user message.
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &context.messages {
        if !matches!(message, Message::ToolResult(_)) && !pending_images.is_empty() {
            let mut parts =
                vec![json!({"type": "text", "text": "Images from the tool results above:"})];
            parts.append(&mut pending_images);
            out.push(json!({"role": "user", "content": parts}));
        }
        match message {
            Message::User(u) => {
                if !u.content.is_empty() {
                    out.push(json!({"role": "user", "content": user_content(&u.content)}));
                }
            }
            Message::Assistant(a) => out.extend(assistant_message(a, model)),
            Message::ToolResult(r) => {
                for c in &r.content {
                    if let Content::Image { mime_type, data } = c {
                        pending_images.push(image_part(mime_type, data));
                    }
                }
                let text = r.text();
                let text = if text.is_empty() { "(no output)".to_owned() } else { text };
                let id = wire_id(&r.tool_call_id, model);
                out.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
            }
            Message::System(s) => {
                let note = s.note();
                if !note.is_empty() {
                    push_update(&mut out, &note);
                }
            }
        }
    }
    if !pending_images.is_empty() {
        let mut parts =
            vec![json!({"type": "text", "text": "Images from the tool results above:"})];
        parts.append(&mut pending_images);
        out.push(json!({"role": "user", "content": parts}));
    }
    out
}

impl Wire for ChatWire {
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String> {
        let mut body = Map::new();
        body.insert("model".into(), json!(model.id));
        body.insert("messages".into(), Value::Array(convert_messages(context, model)));
        let current = context.current_tools();
        if !current.is_empty() {
            let tools: Vec<Value> = current
                .into_iter()
                .map(|t| match crate::web_search::openrouter_tool(t) {
                    Some(search) => search,
                    None => json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters,
                    }}),
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        body.insert("stream".into(), json!(true));
        if model.compat.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        let field = match model.compat.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body.insert(field.into(), json!(max_tokens(model, options)));
        let format = if model.reasoning { model.compat.thinking } else { ThinkingFormat::None };
        let effort = model.compat.effort(options.thinking);
        let mut samples = true;
        match format {
            ThinkingFormat::OpenaiEffort => {
                body.insert("reasoning_effort".into(), json!(effort));
                samples = effort == "none";
            }
            ThinkingFormat::Openrouter => {
                if effort == "none" {
                    body.insert("reasoning".into(), json!({"enabled": false}));
                } else {
                    body.insert("reasoning".into(), json!({"effort": effort}));
                    samples = false;
                }
            }
            ThinkingFormat::Deepseek => {
                if effort == "none" {
                    body.insert("thinking".into(), json!({"type": "disabled"}));
                } else {
                    body.insert("thinking".into(), json!({"type": "enabled"}));
                    body.insert("reasoning_effort".into(), json!(effort));
                    samples = false;
                }
            }
            ThinkingFormat::None
            | ThinkingFormat::AnthropicBudget
            | ThinkingFormat::AnthropicAdaptive
            | ThinkingFormat::GeminiBudget
            | ThinkingFormat::GeminiLevel => {}
        }
        if let (true, Some(t)) = (samples, options.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        let body = serde_json::to_vec(&Value::Object(body)).map_err(|e| e.to_string())?;
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
        ];
        if let Some(key) = &options.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        if let (true, Some(id)) = (model.compat.session_header, &options.session_id) {
            headers.push(("x-opencode-session", id.clone()));
        }
        Ok(HttpRequest {
            url: chat_url(&model.base_url),
            headers,
            body: body.into(),
            prefix_hash: None,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(ChatDecoder::default())
    }
}

/// Decoder state for one Chat Completions stream.
#[derive(Default)]
pub(crate) struct ChatDecoder {
    text: Option<usize>,
    thinking: Option<usize>,
    /// `(wire index, call id, builder index)` of each tool call seen.
    calls: Vec<(Option<usize>, String, usize)>,
    finished: bool,
    done: bool,
    /// OpenRouter's `reasoning_details`, merged by `index` as they stream; kept on the
    /// thinking block (as its signature, a JSON array) when the reply ends.
    details: Vec<Value>,
    /// OpenRouter's web search citations, for the search and the answer at the end.
    citations: Vec<crate::types::Citation>,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<ChoiceDelta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

/// `delta.content`: text, or (Mistral with reasoning) typed chunks.
#[derive(Deserialize)]
#[serde(untagged)]
enum DeltaContent<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Chunks(#[serde(borrow)] Vec<ContentChunk<'a>>),
}

#[derive(Deserialize)]
struct ContentChunk<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Vec<ContentChunk<'a>>,
}

#[derive(Deserialize)]
struct ChoiceDelta<'a> {
    #[serde(borrow, default)]
    content: Option<DeltaContent<'a>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    /// OpenRouter: the reasoning as typed blocks (text, summary, encrypted), which must
    /// go back unchanged on later requests.
    #[serde(default)]
    reasoning_details: Option<Vec<Value>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolDelta<'a>>>,
    /// OpenRouter: the pages a web search found, as `url_citation` annotations.
    #[serde(default)]
    annotations: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(default)]
    index: Option<usize>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FnDelta<'a>>,
}

#[derive(Deserialize)]
struct FnDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek reports cache hits here instead of `cached_tokens`.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl ChatUsage {
    fn usage(&self) -> Usage {
        let details = self.prompt_tokens_details.as_ref();
        let read = self
            .prompt_cache_hit_tokens
            .or_else(|| details.and_then(|d| d.cached_tokens))
            .unwrap_or(0);
        let write = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
        Usage {
            input: self.prompt_tokens.saturating_sub(read + write),
            output: self.completion_tokens,
            cache_read: read,
            cache_write: write,
            reasoning: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            web_searches: 0,
        }
    }
}

fn finish_reason(s: &str) -> StopReason {
    match s {
        "length" | "max_tokens" => StopReason::Length,
        "tool_calls" | "function_call" | "tool_use" => StopReason::ToolUse,
        "content_filter" | "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

impl ChatDecoder {
    fn thinking(&mut self, delta: &str, out: &mut Builder) {
        if !delta.is_empty() {
            let i = *self.thinking.get_or_insert_with(|| out.start_thinking());
            out.thinking(i, delta);
        }
    }

    fn text(&mut self, delta: &str, out: &mut Builder) {
        if !delta.is_empty() {
            let i = *self.text.get_or_insert_with(|| out.start_text());
            out.text(i, delta);
        }
    }

    /// Finds or opens the builder block of a tool-call fragment. Fragments are matched
    /// by `index` when the server sends one, else by a new non-empty `id`, else they
    /// continue the last call.
    fn call_block(&mut self, delta: &ToolDelta<'_>, out: &mut Builder) -> usize {
        let id = delta.id.as_deref().unwrap_or_default();
        let name = delta.function.as_ref().and_then(|f| f.name.as_deref()).unwrap_or_default();
        let existing = match delta.index {
            Some(ix) => self.calls.iter().find(|(i, _, _)| *i == Some(ix)),
            None if id.is_empty() => self.calls.last(),
            None => self.calls.iter().find(|(_, cid, _)| cid == id),
        };
        if let Some(&(_, _, block)) = existing
            && out.is_tool_open(block)
        {
            out.tool_identity(block, id, name);
            return block;
        }
        let block = out.start_tool(id, name);
        self.calls.push((delta.index, id.to_owned(), block));
        block
    }

    fn close_calls(&mut self, out: &mut Builder) {
        for (_, _, block) in &self.calls {
            out.end_tool(*block);
        }
        self.keep_details(out);
    }

    /// Merges streamed `reasoning_details` pieces: a piece with the `index` of one seen
    /// before continues its text, summary or data and fills in its other fields.
    fn add_details(&mut self, pieces: Vec<Value>) {
        for piece in pieces {
            let Value::Object(piece) = piece else { continue };
            let index = piece.get("index").and_then(Value::as_u64);
            let known = index.and_then(|ix| {
                self.details.iter_mut().find(|d| d.get("index").and_then(Value::as_u64) == Some(ix))
            });
            let Some(Value::Object(known)) = known else {
                self.details.push(Value::Object(piece));
                continue;
            };
            for (key, value) in piece {
                match (key.as_str(), known.get_mut(&key), &value) {
                    (
                        "text" | "summary" | "data",
                        Some(Value::String(have)),
                        Value::String(more),
                    ) => {
                        have.push_str(more);
                    }
                    (_, _, Value::Null) => {}
                    _ => {
                        known.insert(key, value);
                    }
                }
            }
        }
    }

    /// Keeps the merged `reasoning_details` on the reply's thinking block (opening an
    /// empty one when only encrypted reasoning came), to send back unchanged.
    fn keep_details(&mut self, out: &mut Builder) {
        if self.details.is_empty() {
            return;
        }
        let details = Value::Array(std::mem::take(&mut self.details)).to_string();
        let i = *self.thinking.get_or_insert_with(|| out.start_thinking());
        out.signature(i, &details);
    }
}

impl Decoder for ChatDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Builder) -> Result<(), WireError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            self.close_calls(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk<'_> = parse_json("chunk", data)?;
        if let Some(err) = chunk.error {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| err.to_string());
            let code =
                err.get("code").map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned));
            return Err(WireError::Api { code, message });
        }
        if let Some(id) = &chunk.id {
            out.response_id(id);
        }
        for choice in chunk.choices {
            if let Some(delta) = choice.delta {
                if let Some(r) = delta.reasoning_content.or(delta.reasoning) {
                    self.thinking(&r, out);
                }
                if let Some(details) = delta.reasoning_details {
                    self.add_details(details);
                }
                for a in delta.annotations.iter().flatten() {
                    self.citations.extend(crate::web_search::url_citation(a));
                }
                match delta.content {
                    Some(DeltaContent::Text(text)) => self.text(&text, out),
                    Some(DeltaContent::Chunks(chunks)) => {
                        for chunk in chunks {
                            match &*chunk.kind {
                                "thinking" => {
                                    for part in chunk.thinking {
                                        self.thinking(
                                            part.text.as_deref().unwrap_or_default(),
                                            out,
                                        );
                                    }
                                }
                                "text" => self.text(chunk.text.as_deref().unwrap_or_default(), out),
                                // Images, references and chunk types added later.
                                _ => {}
                            }
                        }
                    }
                    None => {}
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    let block = self.call_block(&call, out);
                    if let Some(args) = call.function.as_ref().and_then(|f| f.arguments.as_deref())
                    {
                        out.tool_args(block, args);
                    }
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                out.stop(finish_reason(&reason));
                self.finished = true;
                self.close_calls(out);
            }
        }
        if let Some(usage) = chunk.usage {
            out.usage(usage.usage());
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Builder) -> Result<(), WireError> {
        // Some servers close the stream after the finish chunk without `[DONE]`.
        if self.done || self.finished {
            self.close_calls(out);
            self.keep_details(out);
            if !self.citations.is_empty() {
                let text = out.last_text();
                out.web_search(crate::web_search::cited_search(&self.citations));
                for c in std::mem::take(&mut self.citations) {
                    if let Some(i) = text {
                        out.cite(i, c);
                    }
                }
            }
            Ok(())
        } else {
            Err(WireError::Incomplete(
                "the stream ended before a finish_reason or [DONE]".to_owned(),
            ))
        }
    }
}

#[cfg(test)]
mod tests;
