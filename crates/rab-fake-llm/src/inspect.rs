//! Reads a request body of any wire format into one neutral [`Transcript`], checks it
//! the way the real APIs do (every tool call answered, no result without a call,
//! thinking replayed unchanged), and gives tests easy access to what was sent.

use serde_json::Value;

use crate::Wire;
use crate::script::signature_for;

/// One item of a conversation as the fake server understood it.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// User text (images are noted as `[image]`).
    User(String),
    /// A model turn.
    Assistant {
        /// Visible text.
        text: String,
        /// `(text, signature)` of each thinking block.
        thinking: Vec<(String, Option<String>)>,
        /// `(id, name, arguments)` of each tool call.
        calls: Vec<(String, String, Value)>,
    },
    /// A system message inside the history (Anthropic `role: "system"`, OpenAI
    /// `developer` or `system` items after the first message): its text.
    System(String),
    /// A tool result.
    ToolResult {
        /// Call id it answers (Gemini: the function name when no id was sent).
        id: String,
        /// Tool name when the format carries it.
        name: String,
        /// Result text.
        text: String,
        /// Marked as an error.
        is_error: bool,
    },
}

/// A request body in neutral form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// System prompt text.
    pub system: String,
    /// History in order.
    pub items: Vec<Item>,
    /// Names of the tools offered.
    pub tools: Vec<String>,
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                    Some("image" | "image_url" | "input_image") => Some("[image]".to_owned()),
                    _ => p.get("text").and_then(Value::as_str).map(str::to_owned),
                })
                .collect();
            texts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn s(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn args_of(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(raw)) => serde_json::from_str(raw).unwrap_or(Value::String(raw.clone())),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

fn array<'a>(body: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    body.get(key).and_then(Value::as_array).ok_or_else(|| format!("`{key}` must be an array"))
}

/// Reads a request body into a transcript; fails like the real API on a wrong shape.
pub fn parse(wire: Wire, body: &Value) -> Result<Transcript, String> {
    match wire {
        Wire::Anthropic => parse_anthropic(body),
        Wire::OpenaiResponses => parse_responses(body),
        Wire::OpenaiChat => parse_chat(body),
        Wire::Gemini => parse_gemini(body),
    }
}

fn parse_anthropic(body: &Value) -> Result<Transcript, String> {
    let mut t = Transcript {
        system: text_of(body.get("system").unwrap_or(&Value::Null)),
        ..Default::default()
    };
    t.tools = tool_names(body, |tool| s(tool, "name"));
    for m in array(body, "messages")? {
        let role = s(m, "role");
        let content = m.get("content").ok_or("every message needs `content`")?;
        let blocks: Vec<Value> = match content {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(b) => b.clone(),
            _ => return Err("`content` must be a string or an array".to_owned()),
        };
        if role == "system" {
            let mut text = Vec::new();
            for b in &blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_addition") => text.push(format!("+{}", s(&b["tool"], "name"))),
                    Some("tool_removal") => text.push(format!("-{}", s(&b["tool"], "name"))),
                    _ => text.push(s(b, "text")),
                }
            }
            t.items.push(Item::System(text.join("\n")));
        } else if role == "assistant" {
            let mut text = String::new();
            let mut thinking = Vec::new();
            let mut calls = Vec::new();
            for b in &blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => text.push_str(&s(b, "text")),
                    Some("thinking") => thinking.push((s(b, "thinking"), Some(s(b, "signature")))),
                    Some("tool_use") => {
                        calls.push((s(b, "id"), s(b, "name"), args_of(b.get("input"))))
                    }
                    _ => {}
                }
            }
            t.items.push(Item::Assistant { text, thinking, calls });
        } else {
            let mut text = Vec::new();
            for b in &blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_result") => t.items.push(Item::ToolResult {
                        id: s(b, "tool_use_id"),
                        name: String::new(),
                        text: text_of(b.get("content").unwrap_or(&Value::Null)),
                        is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    }),
                    Some("image") => text.push("[image]".to_owned()),
                    _ => text.push(s(b, "text")),
                }
            }
            if !text.is_empty() {
                t.items.push(Item::User(text.join("\n")));
            }
        }
    }
    Ok(t)
}

fn tool_names(body: &Value, name: impl Fn(&Value) -> String) -> Vec<String> {
    body.get("tools")
        .and_then(Value::as_array)
        .map(|ts| ts.iter().map(&name).collect())
        .unwrap_or_default()
}

fn push_assistant(t: &mut Transcript) -> &mut Item {
    if !matches!(t.items.last(), Some(Item::Assistant { .. })) {
        t.items.push(Item::Assistant {
            text: String::new(),
            thinking: Vec::new(),
            calls: Vec::new(),
        });
    }
    let last = t.items.len() - 1;
    &mut t.items[last]
}

fn parse_responses(body: &Value) -> Result<Transcript, String> {
    let mut t = Transcript { system: s(body, "instructions"), ..Default::default() };
    t.tools = tool_names(body, |tool| s(tool, "name"));
    let items = match body.get("input") {
        Some(Value::String(text)) => {
            t.items.push(Item::User(text.clone()));
            return Ok(t);
        }
        Some(Value::Array(items)) => items,
        _ => return Err("`input` must be a string or an array".to_owned()),
    };
    for it in items {
        let kind = it.get("type").and_then(Value::as_str).unwrap_or("message");
        match (kind, s(it, "role").as_str()) {
            ("function_call", _) => {
                if let Item::Assistant { calls, .. } = push_assistant(&mut t) {
                    calls.push((s(it, "call_id"), s(it, "name"), args_of(it.get("arguments"))));
                }
            }
            ("reasoning", _) => {
                let summary: Vec<String> = it
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|p| p.iter().map(|x| s(x, "text")).collect())
                    .unwrap_or_default();
                let enc = it.get("encrypted_content").and_then(Value::as_str).map(str::to_owned);
                if let Item::Assistant { thinking, .. } = push_assistant(&mut t) {
                    thinking.push((summary.join("\n\n"), enc));
                }
            }
            ("custom_tool_call", _) => {
                if let Item::Assistant { calls, .. } = push_assistant(&mut t) {
                    let input = serde_json::json!({"input": s(it, "input")});
                    calls.push((s(it, "call_id"), s(it, "name"), input));
                }
            }
            ("function_call_output" | "custom_tool_call_output", _) => {
                t.items.push(Item::ToolResult {
                    id: s(it, "call_id"),
                    name: String::new(),
                    text: text_of(it.get("output").unwrap_or(&Value::Null)),
                    is_error: false,
                })
            }
            ("message", "assistant") => {
                let content = text_of(it.get("content").unwrap_or(&Value::Null));
                if let Item::Assistant { text, .. } = push_assistant(&mut t) {
                    text.push_str(&content);
                }
            }
            ("message", "system" | "developer") => {
                t.items.push(Item::System(text_of(it.get("content").unwrap_or(&Value::Null))));
            }
            ("message", _) => {
                t.items.push(Item::User(text_of(it.get("content").unwrap_or(&Value::Null))))
            }
            _ => {}
        }
    }
    Ok(t)
}

fn parse_chat(body: &Value) -> Result<Transcript, String> {
    let mut t = Transcript {
        tools: tool_names(body, |tool| s(tool.get("function").unwrap_or(&Value::Null), "name")),
        ..Transcript::default()
    };
    for m in array(body, "messages")? {
        let content = text_of(m.get("content").unwrap_or(&Value::Null));
        match s(m, "role").as_str() {
            "system" | "developer" => t.system.push_str(&content),
            "assistant" => {
                let calls = m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map(|cs| {
                        cs.iter()
                            .map(|c| {
                                let f = c.get("function").unwrap_or(&Value::Null);
                                (s(c, "id"), s(f, "name"), args_of(f.get("arguments")))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let thinking = m
                    .get("reasoning_content")
                    .and_then(Value::as_str)
                    .map(|r| vec![(r.to_owned(), None)])
                    .unwrap_or_default();
                t.items.push(Item::Assistant { text: content, thinking, calls });
            }
            "tool" => t.items.push(Item::ToolResult {
                id: s(m, "tool_call_id"),
                name: String::new(),
                text: content,
                is_error: false,
            }),
            _ => t.items.push(Item::User(content)),
        }
    }
    Ok(t)
}

fn parse_gemini(body: &Value) -> Result<Transcript, String> {
    let system = body
        .get("systemInstruction")
        .and_then(|si| si.get("parts"))
        .map(text_of)
        .unwrap_or_default();
    let mut t = Transcript { system, ..Default::default() };
    t.tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .flat_map(|tool| {
                    tool.get("functionDeclarations")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                })
                .map(|d| s(&d, "name"))
                .collect()
        })
        .unwrap_or_default();
    for c in array(body, "contents")? {
        let parts =
            c.get("parts").and_then(Value::as_array).ok_or("every content needs `parts`")?;
        if s(c, "role") == "model" {
            let mut text = String::new();
            let mut thinking = Vec::new();
            let mut calls = Vec::new();
            for p in parts {
                let sig = p.get("thoughtSignature").and_then(Value::as_str).map(str::to_owned);
                if let Some(fc) = p.get("functionCall") {
                    let id = fc
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| s(fc, "name"), str::to_owned);
                    calls.push((id, s(fc, "name"), args_of(fc.get("args"))));
                } else if p.get("thought").and_then(Value::as_bool).unwrap_or(false) {
                    thinking.push((s(p, "text"), sig));
                } else {
                    text.push_str(&s(p, "text"));
                }
            }
            t.items.push(Item::Assistant { text, thinking, calls });
        } else {
            let mut text = Vec::new();
            for p in parts {
                if let Some(fr) = p.get("functionResponse") {
                    let response = fr.get("response").unwrap_or(&Value::Null);
                    let is_error = response.get("error").is_some();
                    let body = response
                        .get("output")
                        .or_else(|| response.get("error"))
                        .unwrap_or(response);
                    let id = fr
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| s(fr, "name"), str::to_owned);
                    t.items.push(Item::ToolResult {
                        id,
                        name: s(fr, "name"),
                        text: text_of(body),
                        is_error,
                    });
                } else if p.get("inlineData").is_some() {
                    text.push("[image]".to_owned());
                } else {
                    text.push(s(p, "text"));
                }
            }
            if !text.is_empty() {
                t.items.push(Item::User(text.join("\n")));
            }
        }
    }
    Ok(t)
}

/// Checks the history as the real APIs do; the error text is the 400 response message.
pub fn validate(wire: Wire, t: &Transcript) -> Result<(), String> {
    let mut pending: Vec<(String, String)> = Vec::new();
    let unanswered = |pending: &[(String, String)]| {
        let ids: Vec<String> = pending.iter().map(|(id, name)| format!("{id} ({name})")).collect();
        format!(
            "tool call without a result: {}; each tool call must be answered by a tool result",
            ids.join(", ")
        )
    };
    for item in &t.items {
        match item {
            Item::Assistant { calls, thinking, .. } => {
                if !pending.is_empty() {
                    return Err(unanswered(&pending));
                }
                check_thinking(wire, thinking)?;
                pending = calls.iter().map(|(id, name, _)| (id.clone(), name.clone())).collect();
            }
            Item::ToolResult { id, .. } => match pending.iter().position(|(pid, _)| pid == id) {
                Some(i) => {
                    pending.remove(i);
                }
                None => {
                    return Err(format!(
                        "tool result for '{id}' has no matching tool call in the preceding assistant message"
                    ));
                }
            },
            Item::User(_) | Item::System(_) => {
                if !pending.is_empty() {
                    return Err(unanswered(&pending));
                }
            }
        }
    }
    if !pending.is_empty() {
        return Err(unanswered(&pending));
    }
    Ok(())
}

fn check_thinking(wire: Wire, thinking: &[(String, Option<String>)]) -> Result<(), String> {
    // Anthropic's signatures are checked with their binding (`crate::binding`).
    if wire != Wire::OpenaiResponses {
        return Ok(());
    }
    for (text, sig) in thinking {
        if sig.as_deref() != Some(signature_for(text).as_str()) {
            return Err(format!("invalid signature in thinking block (thinking {text:?})"));
        }
    }
    Ok(())
}

/// A request as the server received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// Wire format, from the path (`None` for unknown paths).
    pub wire: Option<Wire>,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// Body as JSON (`Null` when it was not JSON).
    pub body: Value,
    /// Body bytes.
    pub raw: Vec<u8>,
    /// Status the server answered.
    pub status: u16,
    /// Anthropic `input_transformations` reported for it (thinking blocks dropped
    /// because their prefix changed).
    pub transformations: Vec<Value>,
}

impl RecordedRequest {
    /// A header value by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body in neutral form (empty when it could not be read).
    pub fn transcript(&self) -> Transcript {
        self.wire.and_then(|w| parse(w, &self.body).ok()).unwrap_or_default()
    }

    /// `(call id, text)` of every tool result in the history, in order.
    pub fn tool_results(&self) -> Vec<(String, String)> {
        self.transcript()
            .items
            .into_iter()
            .filter_map(|i| match i {
                Item::ToolResult { id, text, .. } => Some((id, text)),
                Item::User(_) | Item::Assistant { .. } | Item::System(_) => None,
            })
            .collect()
    }

    /// The system prompt.
    pub fn system(&self) -> String {
        self.transcript().system
    }

    /// The texts of the user items, in order.
    pub fn user_texts(&self) -> Vec<String> {
        self.transcript()
            .items
            .into_iter()
            .filter_map(|i| match i {
                Item::User(t) => Some(t),
                Item::Assistant { .. } | Item::ToolResult { .. } | Item::System(_) => None,
            })
            .collect()
    }

    /// The text of the last user item.
    pub fn last_user_text(&self) -> Option<String> {
        self.transcript().items.into_iter().rev().find_map(|i| match i {
            Item::User(t) => Some(t),
            Item::Assistant { .. } | Item::ToolResult { .. } | Item::System(_) => None,
        })
    }

    /// The model named in the body or, for Gemini, in the path.
    pub fn model(&self) -> String {
        match self.body.get("model").and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None => self
                .path
                .split("/models/")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .unwrap_or_default()
                .to_owned(),
        }
    }
}
