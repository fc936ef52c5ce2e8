//! `rab --mode rpc`: pi's RPC protocol on stdin and stdout, so a program written for pi
//! (pi's own `RpcClient`, editors' pi integrations, bots) drives rab unchanged. Each
//! request is one line (`{"id"?, "type", …}` with pi's request types and field names);
//! each gets one `{"type": "response", "command", "success", "data"?, "error"?, "id"?}`
//! line with pi's result shapes; a run streams pi's `AgentSessionEvent`s
//! ([`stream`]) with messages in pi's format ([`pi`]). rab's additions are lines and
//! fields a pi client ignores: questions (`{"type": "question", …}`, answered with an
//! `answer` request), service status, cron, warnings, `reload`. A line that is not a
//! request gets an error response and rab goes on. The front end only translates: the
//! runtime (`rab_core::runtime`) does the work. See docs/rpc.md.

mod pi;
mod requests;
mod stream;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use rab_core::runtime::{Event, Op, RuntimeHandle, State};
use rab_core::{AgentSession, ApprovalKind, ApprovalRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use rab_core::setup::Setup as Launch;

/// A request line (`id`, any JSON value, is echoed in its response). pi's request
/// types, then rab's own (`reload`, `answer`).
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
enum Request {
    /// Starts a run. While one runs it is refused, unless `streamingBehavior` says to
    /// steer (`steer`) or to queue it (`followUp`). A prompt that starts with the name
    /// of a command (`/review src`) runs the command.
    Prompt {
        /// The prompt.
        message: String,
        /// Images sent with it.
        #[serde(default)]
        images: Vec<Image>,
        /// While a run goes on: `steer` or `followUp`.
        streaming_behavior: Option<String>,
    },
    /// A message for the running agent, delivered at its next step.
    Steer {
        /// The message.
        message: String,
        /// Images sent with it.
        #[serde(default)]
        images: Vec<Image>,
    },
    /// A message for when the running agent would stop.
    FollowUp {
        /// The message.
        message: String,
        /// Images sent with it.
        #[serde(default)]
        images: Vec<Image>,
    },
    /// Stops the run (and a compaction going on).
    Abort {},
    /// A new session in this directory: `data.cancelled` (always false).
    NewSession {
        /// The session it comes from (recorded in the new session's header).
        parent_session: Option<String>,
    },
    /// pi's `RpcSessionState` (`model` is a model object), with rab's fields beside.
    GetState {},
    /// Another model from the next run on: `data` is the model.
    SetModel {
        /// The provider (else inferred from the model id).
        provider: Option<String>,
        /// The model's id.
        model_id: String,
    },
    /// The next model of the same provider: `data` `{model, thinkingLevel, isScoped}`,
    /// or null when there is no other.
    CycleModel {},
    /// `data.models`: the models whose provider has a key (or needs none).
    GetAvailableModels {},
    /// Another thinking level from the next run on.
    SetThinkingLevel {
        /// off, minimal, low, medium or high.
        level: String,
    },
    /// The next thinking level: `data.level`, or null for a model that does not reason.
    CycleThinkingLevel {},
    /// How steering messages are taken: `all` or `one-at-a-time`.
    SetSteeringMode {
        /// `all` or `one-at-a-time`.
        mode: String,
    },
    /// How follow-up messages are taken: `all` or `one-at-a-time`.
    SetFollowUpMode {
        /// `all` or `one-at-a-time`.
        mode: String,
    },
    /// Compacts the conversation now: `data` `{summary, firstKeptEntryId, tokensBefore}`.
    Compact {
        /// What the summary should keep.
        custom_instructions: Option<String>,
    },
    /// Turns automatic compaction on or off.
    SetAutoCompaction {
        /// On or off.
        enabled: bool,
    },
    /// Turns the retries of failed model requests on or off.
    SetAutoRetry {
        /// On or off.
        enabled: bool,
    },
    /// Stops a retry that is waiting (the run ends).
    AbortRetry {},
    /// Runs a shell command as `!cmd` does (its output goes to the model with the next
    /// prompt): `data` `{output, exitCode, cancelled, truncated}`.
    Bash {
        /// The command.
        command: String,
    },
    /// Stops the shell commands going on.
    AbortBash {},
    /// pi's `SessionStats`: message and tool counts, tokens, cost, context use.
    GetSessionStats {},
    /// Writes the session as a web page: `data.path`.
    ExportHtml {
        /// Where (default: beside the session file).
        output_path: Option<String>,
    },
    /// Continues the session in this file: `data.cancelled` (always false).
    SwitchSession {
        /// The session file.
        session_path: String,
    },
    /// A new session holding the conversation before this user message:
    /// `data` `{text, cancelled}`, `text` being the message (to edit and send again).
    /// Without `entryId`, rab copies the whole branch (as `clone`).
    Fork {
        /// A user message's entry id (`get_fork_messages`).
        entry_id: Option<String>,
    },
    /// Copies the active branch into a new session and continues there.
    Clone {},
    /// `data.messages`: the user messages of the active branch, `{entryId, text}`.
    GetForkMessages {},
    /// `data.text`: the last assistant text (null when there is none).
    GetLastAssistantText {},
    /// Names the session.
    SetSessionName {
        /// The name.
        name: String,
    },
    /// `data.messages`: the conversation in pi's message format.
    GetMessages {},
    /// `data.commands`: the commands a prompt can start with (`/name args`).
    GetCommands {},
    /// pi's answer to an extension's dialog: rab asks none, so it is ignored.
    ExtensionUiResponse {},
    /// rab: reads skills, commands, agents, settings and MCP servers again.
    Reload {},
    /// rab: the answer to a question.
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

impl Image {
    fn content(self) -> rab_ai::Content {
        rab_ai::Content::Image { mime_type: self.mime_type, data: self.data }
    }
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

/// How a request's response is made when its submission is done.
enum Then {
    /// Success, no data.
    Nothing,
    /// This data.
    Fixed(Value),
    /// `{text}` from what the runtime said (rab's `reload`, `fork` without an entry).
    Info,
    /// pi's session state.
    State,
    /// The conversation in pi's format.
    Messages,
    /// The last assistant text.
    LastText,
    /// pi's session statistics.
    Stats,
    /// What [`Op::WithSession`] returned.
    Data,
    /// The compaction just made, read from the session next.
    Compact,
    /// The shell command's result.
    Bash,
    /// A new model (its data): runs use it from now on.
    Model(Box<rab_ai::Model>, Value),
    /// A new thinking level: `thinking_level_changed`, and `data` when cycled.
    Thinking(rab_ai::ThinkingLevel, bool),
    /// A message queued: `queue_update`.
    Queued(String, bool),
    /// The session's new name: `session_info_changed`.
    Named(String),
    /// An abort: the queues were emptied.
    Aborted,
    /// A prompt with a `streamingBehavior`: refused because a run had started meanwhile,
    /// it is sent again as a steering (`true`) or follow-up message.
    PromptOr(bool, String, Vec<rab_ai::Content>),
}

/// A request in flight: what to answer it with, and what came for it.
struct Pending {
    command: String,
    id: Option<Value>,
    then: Then,
    data: Option<Value>,
    info: Option<String>,
    state: Option<State>,
    messages: Option<Vec<rab_ai::Message>>,
    shell: Option<(String, bool)>,
}

/// The front end: the runtime, the requests in flight, and what it knows of the
/// session.
struct Rpc {
    launch: Arc<Launch>,
    pending: HashMap<u64, Pending>,
    stream: stream::Stream,
    /// The state as last reported.
    state: State,
    /// A run is going on.
    running: bool,
    /// The retries to restore when `set_auto_retry` turns them on again.
    retries: u32,
}

/// Runs the mode until stdin ends; the exit code.
pub async fn run(launch: Launch, session: AgentSession) -> u8 {
    let launch = Arc::new(launch);
    let state = State::of(&session);
    let retries = if state.max_retries > 0 { state.max_retries } else { 3 };
    let mut rpc = Rpc {
        launch: launch.clone(),
        pending: HashMap::new(),
        stream: stream::Stream::new(&state.model_info, state.max_retries),
        state,
        running: false,
        retries,
    };
    let handle = rab_core::runtime::start_with(launch, session);
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
    let mut handle = Some(handle);
    let mut events = None;
    loop {
        let event = match (&mut handle, &mut events) {
            (Some(h), _) => {
                tokio::select! {
                    line = lines.recv() => {
                        match line {
                            Some(Ok(line)) => rpc.request(h, &line),
                            Some(Err(why)) => response("parse", None, Err(why)),
                            None => events = handle.take().map(RuntimeHandle::shutdown),
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
        rpc.event(handle.as_ref(), event);
    }
    crate::EXIT_OK
}

/// Writes one line (already JSON) to stdout.
fn line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
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

impl Rpc {
    /// Writes one runtime event; a submission done gets its response.
    fn event(&mut self, handle: Option<&RuntimeHandle>, event: Event) {
        match event {
            Event::Agent(e) => self.stream.event(&e, &mut |l: &str| line(l)),
            Event::ApprovalRequested { id, request } => write(&question(id, &request)),
            Event::State { submission, state } => {
                self.state = state.clone();
                if let Some(p) = self.pending.get_mut(&submission) {
                    p.state = Some(state);
                }
            }
            Event::StateChanged(state) => {
                self.stream.set_model(&state.model_info);
                self.stream.max_retries = state.max_retries;
                self.state = state;
            }
            Event::Messages { submission, messages } => {
                if let Some(p) = self.pending.get_mut(&submission) {
                    p.messages = Some(messages);
                }
            }
            Event::Data { submission, value } => {
                if let Some(p) = self.pending.get_mut(&submission) {
                    p.data = Some(value);
                }
            }
            Event::Info { submission, text } => {
                if let Some(p) = self.pending.get_mut(&submission) {
                    p.info = Some(text);
                }
            }
            Event::ShellEnded { submission, output, is_error, .. } => {
                if let Some(p) = self.pending.get_mut(&submission) {
                    p.shell = Some((output, is_error));
                }
            }
            Event::Done { submission, result } => {
                if let Some(p) = self.pending.remove(&submission) {
                    self.done(handle, p, result);
                }
            }
            Event::RunStarted { .. } => self.running = true,
            Event::RunEnded { .. } => self.running = false,
            Event::SessionReplaced { id, .. } => {
                write(&json!({"type": "session_replaced", "sessionId": id}));
            }
            Event::CronFired { job, prompt, .. } => {
                write(&json!({"type": "cron_fired", "job": job, "prompt": prompt}));
            }
            Event::Warning(message) => write(&json!({"type": "warning", "message": message})),
            Event::Attached { files, .. } => write(&json!({"type": "attached", "files": files})),
            Event::SetupChanged(fresh) => self.launch = fresh,
            Event::Show { .. }
            | Event::ShellOutput { .. }
            | Event::Quit { .. }
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

    /// A submission is done: its response, made as its request asked.
    fn done(&mut self, handle: Option<&RuntimeHandle>, p: Pending, result: Result<(), String>) {
        if let Err(e) = result {
            if let (Then::PromptOr(steering, text, images), Some(h)) = (p.then, handle)
                && e.starts_with("a run is going on")
            {
                let op = if steering {
                    Op::Steer { text: text.clone(), images }
                } else {
                    Op::FollowUp { text: text.clone(), images }
                };
                let next =
                    Pending { then: Then::Queued(text, steering), ..Pending::new(p.command, p.id) };
                self.pending.insert(h.submit(op), next);
                return;
            }
            return response(&p.command, p.id, Err(e));
        }
        let data = match p.then {
            Then::Nothing => Ok(None),
            Then::Fixed(v) => Ok(Some(v)),
            Then::Info => Ok(p.info.map(|text| json!({"text": text}))),
            Then::State => Ok(p.state.as_ref().map(pi::state)),
            Then::Messages => {
                let cost = &self.stream.cost;
                let messages: Vec<Value> = p
                    .messages
                    .unwrap_or_default()
                    .iter()
                    .map(|m| pi::message(m, cost, 0))
                    .collect();
                Ok(Some(json!({"messages": messages})))
            }
            Then::LastText => {
                let text = pi::last_assistant_text(&p.messages.unwrap_or_default());
                Ok(Some(json!({"text": text})))
            }
            Then::Stats => {
                Ok(Some(pi::session_stats(&p.messages.unwrap_or_default(), &self.state)))
            }
            Then::Data => Ok(p.data),
            Then::Compact => {
                // The summary and the first entry kept, as the session recorded them.
                if let Some(h) = handle {
                    let submission = h.submit(Op::WithSession(requests::last_compaction()));
                    let next = Pending { then: Then::Data, ..Pending::new(p.command, p.id) };
                    self.pending.insert(submission, next);
                    return;
                }
                Ok(None)
            }
            Then::Bash => Ok(Some(requests::bash_result(p.shell))),
            Then::Model(model, data) => {
                self.stream.set_model(&model);
                Ok(Some(data))
            }
            Then::Thinking(level, cycled) => {
                write(&json!({"type": "thinking_level_changed", "level": level}));
                Ok(cycled.then(|| json!({"level": level})))
            }
            Then::Queued(text, steering) => {
                self.stream.queued(text, steering, &mut |l: &str| line(l));
                Ok(None)
            }
            Then::Named(name) => {
                write(&json!({"type": "session_info_changed", "name": name}));
                Ok(None)
            }
            Then::Aborted => {
                self.stream.queue_cleared(&mut |l: &str| line(l));
                Ok(None)
            }
            Then::PromptOr(..) => Ok(None),
        };
        response(&p.command, p.id, data);
    }
}

impl Pending {
    fn new(command: String, id: Option<Value>) -> Self {
        Pending {
            command,
            id,
            then: Then::Nothing,
            data: None,
            info: None,
            state: None,
            messages: None,
            shell: None,
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
