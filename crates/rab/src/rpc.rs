//! `rab --mode rpc`: JSON lines on stdin and stdout for a program driving rab, in the
//! shape of pi's RPC mode where the concepts match. Each request is one line
//! (`{"id"?, "type": "prompt" | "steer" | "follow_up" | "abort" | "get_state" |
//! "get_messages" | "set_model" | "set_thinking_level" | "compact" | "answer", …}`);
//! each gets one `{"type": "response", "command", "success", "data"?, "error"?, "id"?}`
//! line; the session's events and its questions (`{"type": "question", "questionId",
//! "kind", …}`) are lines of their own. A line that is not a request gets an error
//! response and rab goes on. The front end only translates: the runtime
//! (`rab_core::runtime`) does the work. See docs/rpc.md.

use std::collections::HashMap;
use std::io::Write;

use rab_core::runtime::{Event, Op};
use rab_core::{AgentSession, Approval, ApprovalKind, ApprovalRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use rab_core::setup::Setup as Launch;

/// A request line (`id`, any JSON value, is echoed in its response).
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
enum Request {
    /// Starts a run (refused while one runs: steer, follow up or abort).
    Prompt {
        /// The prompt.
        message: String,
        /// Images sent with it.
        #[serde(default)]
        images: Vec<Image>,
    },
    /// A message for the running agent, delivered at its next step.
    Steer {
        /// The message.
        message: String,
    },
    /// A message for when the running agent would stop.
    FollowUp {
        /// The message.
        message: String,
    },
    /// Stops the run.
    Abort {},
    /// The state: model, provider, thinking level, whether a run goes on, the session
    /// file, the number of messages.
    GetState {},
    /// The conversation.
    GetMessages {},
    /// Another model from the next run on.
    SetModel {
        /// The provider (else inferred from the model id).
        provider: Option<String>,
        /// The model's id.
        model_id: String,
    },
    /// Another thinking level from the next run on.
    SetThinkingLevel {
        /// off, minimal, low, medium or high.
        level: String,
    },
    /// Compacts the conversation now.
    Compact {
        /// What the summary should keep.
        custom_instructions: Option<String>,
    },
    /// A new session in this directory (refused while a run goes on).
    NewSession {},
    /// Continues the session in this file.
    SwitchSession {
        /// The session file.
        session_path: String,
    },
    /// Copies the active branch into a new session and continues there.
    Fork {},
    /// Reads skills, commands, agents, settings and MCP servers again.
    Reload {},
    /// The answer to a question.
    Answer {
        /// The question's `questionId`.
        question_id: u64,
        /// allow (this time), always (and add the suggested rule) or deny.
        decision: Option<String>,
        /// Why, with deny: the model reads it.
        reason: Option<String>,
        /// A free answer (to a `question` kind); for a permission it is a refusal.
        text: Option<String>,
    },
}

/// An image sent with a prompt.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Image {
    /// Base64 data, without a `data:` prefix.
    data: String,
    /// Its MIME type, e.g. `image/png`.
    mime_type: String,
}

/// The response line every request gets.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ResponseLine {
    /// Always `response`.
    r#type: &'static str,
    /// The request's type (`parse` for a line that is not a request).
    command: String,
    /// Whether it was carried out (a prompt: its run started).
    success: bool,
    /// What `get_state` and `get_messages` return.
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    /// Why it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The request's `id`, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
}

/// A question line: answer it with an `answer` request.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct QuestionLine {
    /// Always `question`.
    r#type: &'static str,
    /// Its id, for the answer.
    question_id: u64,
    /// `permission` (may this call run?), `question` (ask_user) or `plan`.
    kind: &'static str,
    /// The tool that asks.
    tool: String,
    /// The id of the call that asks (as in its `tool_call` event).
    tool_call_id: String,
    /// The call's arguments.
    arguments: Value,
    /// Why it asks.
    reason: String,
    /// What the call would do (a diff, a command), for a permission.
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<String>,
    /// The rule `always` would add, for a permission.
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    /// The question, for a `question`.
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<String>,
    /// Its options (may be empty: any text), for a `question`.
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Vec<String>>,
    /// The plan (markdown), for a `plan`.
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<String>,
}

/// The JSON Schema of the requests, the responses and the questions
/// (docs/rpc.schema.json, checked by a test).
#[cfg(test)]
fn schema() -> Value {
    json!({
        "request": schemars::schema_for!(Request),
        "response": schemars::schema_for!(ResponseLine),
        "question": schemars::schema_for!(QuestionLine),
    })
}

/// A request in flight: what to answer it with.
struct Pending {
    command: String,
    id: Option<Value>,
    data: Option<Value>,
}

/// Runs the mode until stdin ends; the exit code.
pub async fn run(launch: Launch, session: AgentSession) -> u8 {
    let mut launch = std::sync::Arc::new(launch);
    let handle = rab_core::runtime::start_with(launch.clone(), session);
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<Result<String, String>>();
    tokio::spawn(async move {
        let mut input = tokio::io::BufReader::new(tokio::io::stdin());
        loop {
            let mut bytes = Vec::new();
            match input.read_until(b'\n', &mut bytes).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                bytes.pop();
            }
            // A line that is not UTF-8 gets an error, and the next line is read.
            let line = String::from_utf8(bytes).map_err(|e| {
                format!(
                    "the line is not UTF-8 (at byte {}); requests are JSON objects in UTF-8, \
                     one per line",
                    e.utf8_error().valid_up_to()
                )
            });
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut pending: HashMap<u64, Pending> = HashMap::new();
    let mut handle = Some(handle);
    let mut events = None;
    loop {
        let event = match (&mut handle, &mut events) {
            (Some(h), _) => {
                tokio::select! {
                    line = lines.recv() => {
                        match line {
                            Some(Ok(line)) => request(&launch, h, &line, &mut pending),
                            Some(Err(why)) => response("parse", None, Err(why)),
                            None => events = handle.take().map(|h| h.shutdown()),
                        }
                        continue;
                    }
                    event = h.events.recv() => event,
                }
            }
            (None, Some(rx)) => rx.recv().await,
            (None, None) => None,
        };
        let Some(event) = event else { break };
        if let Event::SetupChanged(fresh) = &event {
            launch = fresh.clone();
        }
        self::event(event, &mut pending);
    }
    crate::EXIT_OK
}

fn write(value: &impl Serialize) {
    let mut out = std::io::stdout().lock();
    // Straight to the pipe: no intermediate JSON value per event.
    if serde_json::to_writer(&mut out, value).is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn response(command: &str, id: Option<Value>, result: Result<Option<Value>, String>) {
    let (data, error) = match result {
        Ok(data) => (data, None),
        Err(e) => (None, Some(e)),
    };
    let line = ResponseLine {
        r#type: "response",
        command: command.to_owned(),
        success: error.is_none(),
        data,
        error,
        id,
    };
    write(&line);
}

/// A request line read: its `type`, its `id` and the request.
struct Line {
    command: String,
    id: Option<Value>,
    request: Request,
}

/// A line that is not a request: the `command` and `id` of its error response, and why.
type Refused = (String, Option<Value>, String);

/// Reads one line; `None` for a blank one (no response).
fn decode(line: &str) -> Option<Result<Line, Refused>> {
    if line.trim().is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(Err(("parse".into(), None, format!("not JSON: {e}")))),
    };
    let id = value.get("id").cloned();
    let command = value.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    if command.is_empty() {
        return Some(Err(("parse".into(), id, "a request needs a \"type\"".into())));
    }
    Some(match serde_json::from_value(value) {
        Ok(request) => Ok(Line { command, id, request }),
        Err(e) => {
            let what = e.to_string();
            let why = if what.starts_with("unknown variant") {
                format!("unknown request type \"{command}\"")
            } else {
                format!("bad \"{command}\" request: {what}")
            };
            Err((command, id, why))
        }
    })
}

/// [`decode`] for the fuzz targets: the request's type, or the error it gets.
pub(crate) fn decode_line(line: &str) -> Option<Result<String, String>> {
    decode(line).map(|read| read.map(|l| l.command).map_err(|(_, _, why)| why))
}

/// Reads one request line and submits what it asks.
fn request(
    launch: &std::sync::Arc<Launch>,
    handle: &rab_core::runtime::RuntimeHandle,
    line: &str,
    pending: &mut HashMap<u64, Pending>,
) {
    let Line { command, id, request } = match decode(line) {
        None => return,
        Some(Ok(line)) => line,
        Some(Err((command, id, why))) => return response(&command, id, Err(why)),
    };
    let op = match request {
        Request::Prompt { message, images } => Op::Prompt {
            text: message,
            images: images
                .into_iter()
                .map(|i| rab_ai::Content::Image { mime_type: i.mime_type, data: i.data })
                .collect(),
        },
        Request::Steer { message } => Op::Steer { text: message },
        Request::FollowUp { message } => Op::FollowUp { text: message },
        Request::Abort {} => Op::Abort,
        Request::GetState {} => Op::GetState,
        Request::GetMessages {} => Op::GetMessages,
        Request::SetModel { provider, model_id } => {
            let query = match provider {
                Some(p) => format!("{p}/{model_id}"),
                None => model_id,
            };
            match launch.resolve_model(&query) {
                Ok(t) => Op::SetModel {
                    model: Box::new(t.model),
                    api_key: t.api_key,
                    auth_hint: Some(t.auth_hint),
                },
                Err(e) => return response(&command, id, Err(e)),
            }
        }
        Request::SetThinkingLevel { level } => {
            match serde_json::from_value::<rab_ai::ThinkingLevel>(json!(level)) {
                Ok(level) => Op::SetThinking(level),
                Err(_) => {
                    let why =
                        format!("unknown level \"{level}\": off, minimal, low, medium or high");
                    return response(&command, id, Err(why));
                }
            }
        }
        Request::Compact { custom_instructions } => Op::Compact { focus: custom_instructions },
        Request::NewSession {} => Op::NewSession,
        Request::SwitchSession { session_path } => Op::SwitchSession { path: session_path.into() },
        Request::Fork {} => Op::Fork,
        Request::Reload {} => Op::Reload,
        Request::Answer { question_id, decision, reason, text } => {
            let approval = match (decision.as_deref(), text) {
                (_, Some(text)) => Approval::Answer(text),
                (Some("allow" | "once" | "yes"), None) => Approval::Once,
                (Some("always"), None) => Approval::Always,
                (Some("deny" | "no"), None) => Approval::Deny(reason),
                _ => {
                    let why = "an answer needs \"decision\": allow, always or deny (or \"text\")";
                    return response(&command, id, Err(why.into()));
                }
            };
            Op::Answer { id: question_id, approval }
        }
    };
    let submission = handle.submit(op);
    pending.insert(submission, Pending { command, id, data: None });
}

/// Writes one runtime event.
fn event(event: Event, pending: &mut HashMap<u64, Pending>) {
    match event {
        Event::Agent(e) => write(&e),
        Event::ApprovalRequested { id, request } => write(&question(id, &request)),
        Event::State { submission, state } => {
            if let Some(p) = pending.get_mut(&submission) {
                p.data = serde_json::to_value(&state).ok();
            }
        }
        Event::Messages { submission, messages } => {
            if let Some(p) = pending.get_mut(&submission) {
                p.data = Some(json!({"messages": messages}));
            }
        }
        Event::Done { submission, result } => {
            if let Some(p) = pending.remove(&submission) {
                response(&p.command, p.id, result.map(|()| p.data));
            }
        }
        Event::Info { submission, text } => {
            if let Some(p) = pending.get_mut(&submission) {
                p.data = Some(json!({"text": text}));
            }
        }
        Event::SessionReplaced { id, .. } => {
            write(&json!({"type": "session_replaced", "sessionId": id}));
        }
        Event::CronFired { job, prompt, .. } => {
            write(&json!({"type": "cron_fired", "job": job, "prompt": prompt}));
        }
        Event::Warning(message) => write(&json!({"type": "warning", "message": message})),
        Event::Attached { files, .. } => write(&json!({"type": "attached", "files": files})),
        Event::RunEnded { .. }
        | Event::RunStarted { .. }
        | Event::Show { .. }
        | Event::ShellOutput { .. }
        | Event::ShellEnded { .. }
        | Event::SetupChanged(_)
        | Event::Quit { .. }
        | Event::StateChanged(_)
        | Event::ShellStarted { .. }
        | Event::OpStarted { .. } => {}
        Event::ServiceStatus(s) => {
            let detail = match &s.state {
                rab_core::ServiceState::Failed(why) | rab_core::ServiceState::Crashed(why) => {
                    Some(why.clone())
                }
                _ => None,
            };
            write(&json!({
                "type": "service_status",
                "kind": s.kind.as_str(),
                "name": s.name,
                "state": s.state.label(),
                "tools": s.tools,
                "detail": detail,
            }));
        }
        Event::QuestionClosed { id } => {
            write(&json!({"type": "question_closed", "questionId": id}));
        }
    }
}

/// A question as a line: what kind, and what the client needs to ask it.
fn question(id: u64, r: &ApprovalRequest) -> Value {
    let mut line = QuestionLine {
        r#type: "question",
        question_id: id,
        kind: "permission",
        tool: r.tool.clone(),
        tool_call_id: r.call_id.clone(),
        arguments: r.arguments.clone(),
        reason: r.reason.clone(),
        preview: None,
        rule: None,
        question: None,
        options: None,
        plan: None,
    };
    match &r.kind {
        ApprovalKind::Permission => {
            line.preview = r.preview.clone();
            line.rule = Some(r.rule.clone());
        }
        ApprovalKind::Question { question, options } => {
            line.kind = "question";
            line.question = Some(question.clone());
            line.options = Some(options.clone());
        }
        ApprovalKind::Plan { plan } => {
            line.kind = "plan";
            line.plan = Some(plan.clone());
        }
    }
    serde_json::to_value(&line).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/rpc.schema.json is generated from these types: `RAB_UPDATE_SCHEMA=1 cargo
    /// test -p rab rpc_schema` writes it again after a change.
    #[test]
    fn rpc_schema_is_up_to_date() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rpc.schema.json");
        let now = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
        if std::env::var_os("RAB_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == now,
            "docs/rpc.schema.json is stale: run RAB_UPDATE_SCHEMA=1 cargo test -p rab rpc_schema"
        );
    }

    #[test]
    fn a_line_decodes_to_its_request_or_the_error_its_response_carries() {
        let read = decode_line;
        assert_eq!(read("   "), None);
        assert_eq!(
            read(r#"{"id": 1, "type": "prompt", "message": "hi"}"#),
            Some(Ok("prompt".into()))
        );
        assert!(matches!(read("{oops"), Some(Err(e)) if e.starts_with("not JSON")));
        assert_eq!(read(r#"{"id": 2}"#), Some(Err("a request needs a \"type\"".into())));
        assert_eq!(
            read(r#"{"type": "dance"}"#),
            Some(Err("unknown request type \"dance\"".into()))
        );
        assert!(
            matches!(read(r#"{"type": "prompt"}"#), Some(Err(e)) if e.starts_with("bad \"prompt\" request"))
        );
    }
}
