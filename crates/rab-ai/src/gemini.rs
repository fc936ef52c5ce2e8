//! Google Gemini API: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`.
//!
//! Tools are declared with `parametersJsonSchema` (standard JSON Schema, so rab's
//! schemas pass unchanged). Thought summaries arrive as parts with `thought: true`;
//! every part that carried a `thoughtSignature` is replayed with it to the same model,
//! as Gemini 3 and later reject function calls whose signature is missing. A call in
//! the current turn without one (from another model) gets the placeholder Google
//! documents for that case (ai.google.dev/gemini-api/docs/thought-signatures, FAQ,
//! read 2026-11-24). The Gemini API sends
//! each function call whole (argument streaming is Vertex-only), so a call's arguments
//! arrive as one fragment.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::assemble::Builder;
use crate::model::{Api, Model, ThinkingFormat};
use crate::provider::{
    Decoder, HttpRequest, StreamOptions, Wire, WireError, join_url, max_tokens, parse_json,
};
use crate::sse::SseEvent;
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ThinkingLevel, Usage,
};

pub(crate) struct GeminiWire;

/// The streaming URL for a host-root base URL (a base ending in `/v1beta` or `/v1` is
/// used as is).
pub fn stream_url(base: &str, model: &str) -> String {
    let base = base.trim_end_matches('/');
    let root = if base.ends_with("/v1beta") || base.ends_with("/v1") {
        base.to_owned()
    } else {
        join_url(base, "v1beta")
    };
    format!("{root}/models/{model}:streamGenerateContent?alt=sse")
}

fn user_parts(content: &[Content]) -> Vec<Value> {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text } => json!({"text": text}),
            Content::Image { mime_type, data } => {
                json!({"inlineData": {"mimeType": mime_type, "data": data}})
            }
        })
        .collect()
}

fn with_signature(mut part: Value, signature: &Option<String>, same_model: bool) -> Value {
    if let (true, Some(sig)) = (same_model, signature) {
        part["thoughtSignature"] = json!(sig);
    }
    part
}

fn model_parts(
    a: &AssistantMessage,
    model: &Model,
    server_ids: &mut HashMap<String, String>,
) -> Vec<Value> {
    // Signatures are bound to the model that produced them.
    let same_model = a.api == Api::GoogleGenerativeAi && a.model == model.id;
    let mut parts = Vec::new();
    for block in &a.content {
        match block {
            AssistantBlock::Thinking { thinking, signature, .. } => {
                if same_model && (!thinking.is_empty() || signature.is_some()) {
                    let part = json!({"text": thinking, "thought": true});
                    parts.push(with_signature(part, signature, same_model));
                }
            }
            AssistantBlock::Text { text, signature, .. } => {
                if !text.is_empty() || (same_model && signature.is_some()) {
                    parts.push(with_signature(json!({"text": text}), signature, same_model));
                }
            }
            AssistantBlock::ToolCall(call) => {
                let mut fc = Map::new();
                fc.insert("name".into(), json!(call.name));
                fc.insert("args".into(), call.arguments.clone());
                if let Some(id) = &call.item_id {
                    fc.insert("id".into(), json!(id));
                    server_ids.insert(call.id.clone(), id.clone());
                }
                let part = json!({"functionCall": Value::Object(fc)});
                parts.push(with_signature(part, &call.signature, same_model));
            }
            // Grounding is response-only: Google's own searches stay in the answer
            // they grounded; another provider's go back as text.
            AssistantBlock::WebSearch(search) => {
                if a.api != Api::GoogleGenerativeAi {
                    parts.push(json!({"text": crate::types::search_note(search)}));
                }
            }
        }
    }
    parts
}

/// The signature Google accepts on a function call it did not produce (the Gemini API
/// and Vertex both document this one).
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// Whether a user content surely starts a turn: it holds no function response. (One
/// that holds a response and text, an image or a system update may or may not count
/// for Google; signing a call of an earlier turn does no harm, missing one of the
/// current turn fails the request.)
fn starts_turn(content: &Value) -> bool {
    content["role"] == "user"
        && content["parts"].as_array().is_some_and(|parts| {
            !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_none())
        })
}

/// Gives the first function call of each step of the current turn (everything after
/// the last user content that starts a turn) a signature, as the API validates those.
fn sign_current_turn(contents: &mut [Value]) {
    let start = contents.iter().rposition(starts_turn).map_or(0, |i| i + 1);
    for content in contents.iter_mut().skip(start).filter(|c| c["role"] == "model") {
        let Some(parts) = content["parts"].as_array_mut() else { continue };
        if let Some(call) = parts.iter_mut().find(|p| p.get("functionCall").is_some())
            && call.get("thoughtSignature").is_none()
        {
            call["thoughtSignature"] = json!(SKIP_SIGNATURE);
        }
    }
}

/// A system update as a text part of the user content before it (with function
/// responses, if that is what it holds).
fn push_update(contents: &mut Vec<Value>, text: &str) {
    let part = json!({"text": format!("<system_update>\n{text}\n</system_update>")});
    match contents.last_mut() {
        Some(last) if last["role"] == "user" => {
            if let Some(parts) = last["parts"].as_array_mut() {
                parts.push(part);
            }
        }
        _ => contents.push(json!({"role": "user", "parts": [part]})),
    }
}

fn convert_contents(messages: &[Message], model: &Model) -> Vec<Value> {
    let mut contents: Vec<Value> = Vec::with_capacity(messages.len());
    let mut server_ids: HashMap<String, String> = HashMap::new();
    let mut in_results = false;
    for message in messages {
        match message {
            Message::User(u) => {
                in_results = false;
                if !u.content.is_empty() {
                    contents.push(json!({"role": "user", "parts": user_parts(&u.content)}));
                }
            }
            Message::Assistant(a) => {
                in_results = false;
                let parts = model_parts(a, model, &mut server_ids);
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::ToolResult(r) => {
                let key = if r.is_error { "error" } else { "output" };
                let mut response = Map::new();
                response.insert("name".into(), json!(r.tool_name));
                response.insert("response".into(), json!({ key: r.text() }));
                if let Some(id) = server_ids.get(&r.tool_call_id) {
                    response.insert("id".into(), json!(id));
                }
                let mut parts = vec![json!({"functionResponse": Value::Object(response)})];
                for c in &r.content {
                    if let Content::Image { mime_type, data } = c {
                        parts.push(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
                    }
                }
                // All responses to one model turn go into one user content.
                match contents.last_mut().and_then(|c| c.get_mut("parts")) {
                    Some(Value::Array(existing)) if in_results => existing.extend(parts),
                    _ => contents.push(json!({"role": "user", "parts": parts})),
                }
                in_results = true;
            }
            Message::System(s) => {
                let note = s.note();
                if !note.is_empty() {
                    push_update(&mut contents, &note);
                    in_results = false;
                }
            }
        }
    }
    sign_current_turn(&mut contents);
    contents
}

fn thinking_budget(level: ThinkingLevel) -> u64 {
    match level {
        ThinkingLevel::Off => 0,
        ThinkingLevel::Minimal => 512,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        ThinkingLevel::High => 24_576,
    }
}

impl Wire for GeminiWire {
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String> {
        let mut body = Map::new();
        body.insert("contents".into(), Value::Array(convert_contents(&context.messages, model)));
        if !context.system_prompt.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": context.system_prompt}]}),
            );
        }
        let current = context.current_tools();
        let searches = current.iter().any(|t| t.server.is_some());
        let decls: Vec<Value> = current
            .into_iter()
            .filter(|t| t.server.is_none())
            .map(|t| {
                json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters})
            })
            .collect();
        let mut tools = Vec::new();
        if !decls.is_empty() {
            tools.push(json!({"functionDeclarations": decls}));
        }
        // Google Search grounding: the search the model may run (it takes no domains).
        if searches {
            tools.push(json!({"google_search": {}}));
        }
        if !tools.is_empty() {
            body.insert("tools".into(), Value::Array(tools));
        }
        let mut config = Map::new();
        config.insert("maxOutputTokens".into(), json!(max_tokens(model, options)));
        let format = if model.reasoning { model.compat.thinking } else { ThinkingFormat::None };
        match format {
            ThinkingFormat::GeminiLevel => {
                let level = model.compat.effort(options.thinking);
                config.insert(
                    "thinkingConfig".into(),
                    json!({"thinkingLevel": level, "includeThoughts": true}),
                );
            }
            ThinkingFormat::GeminiBudget => {
                let budget = thinking_budget(options.thinking);
                config.insert(
                    "thinkingConfig".into(),
                    json!({"thinkingBudget": budget, "includeThoughts": budget > 0}),
                );
            }
            ThinkingFormat::None
            | ThinkingFormat::AnthropicBudget
            | ThinkingFormat::AnthropicAdaptive
            | ThinkingFormat::OpenaiEffort
            | ThinkingFormat::Openrouter
            | ThinkingFormat::Deepseek => {}
        }
        if let Some(t) = options.temperature {
            config.insert("temperature".into(), json!(t));
        }
        body.insert("generationConfig".into(), Value::Object(config));
        let body = serde_json::to_vec(&Value::Object(body)).map_err(|e| e.to_string())?;
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
        ];
        if let Some(key) = &options.api_key {
            headers.push(("x-goog-api-key", key.clone()));
        }
        Ok(HttpRequest {
            url: stream_url(&model.base_url, &model.id),
            headers,
            body: body.into(),
            prefix_hash: None,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(GeminiDecoder::default())
    }
}

/// Which kind of block the last part went into, for merging consecutive parts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(usize),
    Thought(usize),
}

/// Decoder state for one Gemini stream.
#[derive(Default)]
pub(crate) struct GeminiDecoder {
    open: Option<Open>,
    finished: bool,
    /// The last non-empty grounding metadata (the search behind the answer).
    grounding: Option<Value>,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    candidates: Vec<Candidate<'a>>,
    #[serde(rename = "usageMetadata", default)]
    usage: Option<UsageMetadata>,
    #[serde(rename = "responseId", borrow, default)]
    response_id: Option<Cow<'a, str>>,
    #[serde(rename = "promptFeedback", default)]
    prompt_feedback: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Candidate<'a> {
    #[serde(borrow, default)]
    content: Option<CandidateContent<'a>>,
    #[serde(rename = "finishReason", borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(rename = "finishMessage", default)]
    finish_message: Option<String>,
    #[serde(rename = "groundingMetadata", default)]
    grounding: Option<Value>,
}

#[derive(Deserialize)]
struct CandidateContent<'a> {
    #[serde(borrow, default)]
    parts: Vec<Part<'a>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: bool,
    #[serde(rename = "thoughtSignature", borrow, default)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(rename = "functionCall", default)]
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    #[serde(default)]
    name: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}

impl UsageMetadata {
    fn usage(&self) -> Usage {
        Usage {
            input: self.prompt_token_count.saturating_sub(self.cached_content_token_count),
            output: self.candidates_token_count + self.thoughts_token_count,
            cache_read: self.cached_content_token_count,
            cache_write: 0,
            reasoning: self.thoughts_token_count,
            web_searches: 0,
        }
    }
}

/// A call id unique across the conversation for calls the server sent without one.
fn generated_call_id() -> String {
    format!("call_{:016x}", fastrand::u64(..))
}

impl GeminiDecoder {
    fn part(&mut self, part: Part<'_>, out: &mut Builder) {
        let signature = part.thought_signature.as_deref();
        if let Some(fc) = part.function_call {
            self.open = None;
            let id = fc.id.clone().filter(|i| !i.is_empty()).unwrap_or_else(generated_call_id);
            let i = out.start_tool(&id, &fc.name);
            if let Some(server_id) = fc.id.filter(|i| !i.is_empty()) {
                out.tool_item_id(i, &server_id);
            }
            let args = fc.args.unwrap_or_else(|| json!({}));
            out.tool_args(i, &args.to_string());
            if let Some(sig) = signature {
                out.signature(i, sig);
            }
            out.end_tool(i);
            return;
        }
        let Some(text) = part.text else {
            if let (Some(sig), Some(Open::Text(i) | Open::Thought(i))) = (signature, self.open) {
                out.signature(i, sig);
            }
            return;
        };
        // A signed part stays its own block so it is replayed exactly as received.
        let block = match (self.open, part.thought, signature.is_some()) {
            (Some(Open::Thought(i)), true, false) => i,
            (Some(Open::Text(i)), false, false) => i,
            (_, true, _) => out.start_thinking(),
            (_, false, _) => out.start_text(),
        };
        if part.thought {
            out.thinking(block, &text);
            self.open = Some(Open::Thought(block));
        } else {
            out.text(block, &text);
            self.open = Some(Open::Text(block));
        }
        if let Some(sig) = signature {
            out.signature(block, sig);
            self.open = None;
        }
    }
}

fn error_of(v: &Value) -> WireError {
    let message = v
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| v.to_string());
    let code = v.get("status").and_then(Value::as_str).map(str::to_owned);
    WireError::Api { code, message }
}

impl Decoder for GeminiDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Builder) -> Result<(), WireError> {
        let chunk: Chunk<'_> = parse_json("chunk", event.data)?;
        if let Some(err) = &chunk.error {
            return Err(error_of(err));
        }
        if let Some(reason) = chunk.prompt_feedback.as_ref().and_then(|f| f.get("blockReason")) {
            return Err(WireError::Api {
                code: reason.as_str().map(str::to_owned),
                message: "the prompt was blocked by the provider's safety filter".to_owned(),
            });
        }
        if let Some(id) = &chunk.response_id {
            out.response_id(id);
        }
        for candidate in chunk.candidates {
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                self.part(part, out);
            }
            if let Some(g) =
                candidate.grounding.filter(|g| g.as_object().is_some_and(|o| !o.is_empty()))
            {
                self.grounding = Some(g);
            }
            if let Some(reason) = candidate.finish_reason {
                self.finished = true;
                match &*reason {
                    "STOP" | "FINISH_REASON_UNSPECIFIED" => out.stop(StopReason::Stop),
                    "MAX_TOKENS" => out.stop(StopReason::Length),
                    other => {
                        let detail = candidate.finish_message.unwrap_or_default();
                        return Err(WireError::Api {
                            code: Some(other.to_owned()),
                            message: format!("the response was stopped ({other}) {detail}")
                                .trim_end()
                                .to_owned(),
                        });
                    }
                }
            }
        }
        if let Some(usage) = chunk.usage {
            out.usage(usage.usage());
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Builder) -> Result<(), WireError> {
        // Google's search and the pages supporting the answer, after the answer.
        if let Some((search, citations)) =
            self.grounding.take().and_then(|g| crate::web_search::gemini_grounding(&g, 0))
        {
            let text = out.last_text();
            out.web_search(search);
            for c in citations {
                if let Some(i) = text {
                    out.cite(i, c);
                }
            }
        }
        if self.finished {
            Ok(())
        } else {
            Err(WireError::Incomplete("the stream ended before a finishReason".to_owned()))
        }
    }
}

#[cfg(test)]
mod tests;
