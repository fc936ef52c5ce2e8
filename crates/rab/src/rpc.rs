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
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::launch::Launch;

/// A request line.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
enum Request {
    Prompt {
        message: String,
    },
    Steer {
        message: String,
    },
    FollowUp {
        message: String,
    },
    Abort {},
    GetState {},
    GetMessages {},
    SetModel {
        provider: Option<String>,
        model_id: String,
    },
    SetThinkingLevel {
        level: rab_ai::ThinkingLevel,
    },
    Compact {
        custom_instructions: Option<String>,
    },
    Answer {
        question_id: u64,
        decision: Option<String>,
        reason: Option<String>,
        text: Option<String>,
    },
}

/// A request in flight: what to answer it with.
struct Pending {
    command: String,
    id: Option<Value>,
    data: Option<Value>,
}

/// Runs the mode until stdin ends; the exit code.
pub async fn run(launch: Launch, session: AgentSession) -> u8 {
    let (handle, approver) = rab_core::runtime::start(session);
    launch.approver.install(approver);
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut input = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = input.next_line().await {
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
                            Some(line) => request(&launch, h, &line, &mut pending),
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
        self::event(event, &mut pending);
    }
    crate::EXIT_OK
}

fn write(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

fn response(command: &str, id: Option<Value>, result: Result<Option<Value>, String>) {
    let mut line = json!({"type": "response", "command": command, "success": result.is_ok()});
    match result {
        Ok(Some(data)) => line["data"] = data,
        Ok(None) => {}
        Err(e) => line["error"] = json!(e),
    }
    if let Some(id) = id {
        line["id"] = id;
    }
    write(&line);
}

/// Reads one request line and submits what it asks.
fn request(
    launch: &Launch,
    handle: &rab_core::runtime::RuntimeHandle,
    line: &str,
    pending: &mut HashMap<u64, Pending>,
) {
    if line.trim().is_empty() {
        return;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return response("parse", None, Err(format!("not JSON: {e}"))),
    };
    let id = value.get("id").cloned();
    let command = value.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    if command.is_empty() {
        return response("parse", id, Err("a request needs a \"type\"".into()));
    }
    let request: Request = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => {
            let what = e.to_string();
            let why = if what.starts_with("unknown variant") {
                format!("unknown request type \"{command}\"")
            } else {
                format!("bad \"{command}\" request: {what}")
            };
            return response(&command, id, Err(why));
        }
    };
    let op = match request {
        Request::Prompt { message } => Op::Prompt { text: message },
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
        Request::SetThinkingLevel { level } => Op::SetThinking(level),
        Request::Compact { custom_instructions } => Op::Compact { focus: custom_instructions },
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
        Event::Agent(e) => write(&serde_json::to_value(&e).unwrap_or(Value::Null)),
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
        Event::RunEnded { .. } => {}
    }
}

/// A question as a line: what kind, and what the client needs to ask it.
fn question(id: u64, r: &ApprovalRequest) -> Value {
    let mut line = json!({
        "type": "question",
        "questionId": id,
        "tool": r.tool,
        "arguments": r.arguments,
        "reason": r.reason,
    });
    match &r.kind {
        ApprovalKind::Permission => {
            line["kind"] = json!("permission");
            line["preview"] = json!(r.preview);
            line["rule"] = json!(r.rule);
        }
        ApprovalKind::Question { question, options } => {
            line["kind"] = json!("question");
            line["question"] = json!(question);
            line["options"] = json!(options);
        }
        ApprovalKind::Plan { plan } => {
            line["kind"] = json!("plan");
            line["plan"] = json!(plan);
        }
    }
    line
}
