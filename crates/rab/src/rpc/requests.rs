//! Each request as the op that carries it out (or an answer made here), and how its
//! response is made ([`Then`]).

use rab_core::runtime::{Op, RuntimeHandle, SessionFn};
use rab_core::{AgentSession, Approval};
use serde_json::{Value, json};

use super::{Image, Line, Pending, Request, Rpc, Then, decode, pi, response};

/// The thinking levels in the order `cycle_thinking_level` goes through them.
const LEVELS: [rab_ai::ThinkingLevel; 5] = [
    rab_ai::ThinkingLevel::Off,
    rab_ai::ThinkingLevel::Minimal,
    rab_ai::ThinkingLevel::Low,
    rab_ai::ThinkingLevel::Medium,
    rab_ai::ThinkingLevel::High,
];

impl Rpc {
    /// Reads one request line and submits what it asks (or answers it).
    pub(super) fn request(&mut self, handle: &RuntimeHandle, line: &str) {
        let Line { command, id, request } = match decode(line) {
            None => return,
            Some(Ok(line)) => line,
            Some(Err((command, id, why))) => return response(&command, id, Err(why)),
        };
        let (op, then) = match self.translate(request) {
            Ok(Some(pair)) => pair,
            // pi's answer to an extension's dialog: nothing to answer.
            Ok(None) => return,
            Err(Answer::Now(data)) => return response(&command, id, Ok(data)),
            Err(Answer::Refused(why)) => return response(&command, id, Err(why)),
        };
        let submission = handle.submit(op);
        self.pending.insert(submission, Pending { then, ..Pending::new(command, id) });
    }

    /// The op for `request` and how its response is made; `Err` answers it at once.
    fn translate(&mut self, request: Request) -> Result<Option<(Op, Then)>, Answer> {
        let refuse = |why: String| Err(Answer::Refused(why));
        let pair = match request {
            Request::Prompt { message, images, streaming_behavior } => {
                let images = images.into_iter().map(Image::content).collect();
                match (self.running, streaming_behavior.as_deref()) {
                    (true, Some("steer")) => {
                        (Op::Steer { text: message.clone(), images }, Then::Queued(message, true))
                    }
                    (true, Some("followUp")) => (
                        Op::FollowUp { text: message.clone(), images },
                        Then::Queued(message, false),
                    ),
                    (_, Some(b)) if b != "steer" && b != "followUp" => {
                        return refuse(format!(
                            "unknown streamingBehavior \"{b}\": steer or followUp"
                        ));
                    }
                    // A prompt naming a command runs it (`/review src`), as pi runs its
                    // templates, skills and extension commands.
                    _ if self.names_command(&message) => {
                        (Op::LineWithImages { text: message, images }, Then::Nothing)
                    }
                    // A run may have started since this front end last heard: the
                    // runtime's refusal sends it as the behaviour says.
                    (false, Some(b)) => {
                        let then = Then::PromptOr(b == "steer", message.clone(), images.clone());
                        (Op::Prompt { text: message, images }, then)
                    }
                    _ => (Op::Prompt { text: message, images }, Then::Nothing),
                }
            }
            Request::Steer { message, images } => {
                let images = images.into_iter().map(Image::content).collect();
                (Op::Steer { text: message.clone(), images }, Then::Queued(message, true))
            }
            Request::FollowUp { message, images } => {
                let images = images.into_iter().map(Image::content).collect();
                (Op::FollowUp { text: message.clone(), images }, Then::Queued(message, false))
            }
            Request::Abort {} => (Op::Abort, Then::Aborted),
            Request::NewSession { parent_session } => (
                Op::NewSession { parent: parent_session },
                Then::Fixed(json!({"cancelled": false})),
            ),
            Request::GetState {} => (Op::GetState, Then::State),
            Request::SetModel { provider, model_id } => {
                let query = match provider {
                    Some(p) => format!("{p}/{model_id}"),
                    None => model_id,
                };
                self.switch_model(&query, |model| model)?
            }
            Request::CycleModel {} => {
                let state = &self.state;
                let models: Vec<&rab_ai::Model> = self
                    .launch
                    .registry
                    .models()
                    .iter()
                    .filter(|m| m.provider == state.provider)
                    .collect();
                if models.len() < 2 {
                    return Err(Answer::Now(Some(Value::Null)));
                }
                let i = models.iter().position(|m| m.id == state.model).map_or(0, |i| i + 1);
                let next = models[i % models.len()];
                let query = format!("{}/{}", next.provider, next.id);
                let level = state.thinking_level;
                self.switch_model(
                    &query,
                    |model| json!({"model": model, "thinkingLevel": level, "isScoped": false}),
                )?
            }
            Request::GetAvailableModels {} => {
                let models: Vec<Value> =
                    available_models(&self.launch).iter().map(|m| pi::model(m)).collect();
                return Err(Answer::Now(Some(json!({"models": models}))));
            }
            Request::SetThinkingLevel { level } => {
                let parsed = serde_json::from_value::<rab_ai::ThinkingLevel>(json!(level))
                    .map_err(|_| {
                        Answer::Refused(format!(
                            "unknown level \"{level}\": off, minimal, low, medium or high"
                        ))
                    })?;
                (Op::SetThinking(parsed), Then::Thinking(parsed, false))
            }
            Request::CycleThinkingLevel {} => {
                if !self.state.model_info.reasoning {
                    return Err(Answer::Now(Some(Value::Null)));
                }
                let now = LEVELS.iter().position(|l| *l == self.state.thinking_level);
                let next = LEVELS[now.map_or(0, |i| (i + 1) % LEVELS.len())];
                (Op::SetThinking(next), Then::Thinking(next, true))
            }
            Request::SetSteeringMode { mode } => {
                let mode = drain_mode(&mode).map_err(Answer::Refused)?;
                (with(move |s, _| done(|| s.set_drain_modes(Some(mode), None))), Then::Nothing)
            }
            Request::SetFollowUpMode { mode } => {
                let mode = drain_mode(&mode).map_err(Answer::Refused)?;
                (with(move |s, _| done(|| s.set_drain_modes(None, Some(mode)))), Then::Nothing)
            }
            Request::Compact { custom_instructions } => {
                (Op::Compact { focus: custom_instructions }, Then::Compact)
            }
            Request::SetAutoCompaction { enabled } => (
                with(move |s, _| s.set_auto_compaction(enabled).map(|()| Value::Null)),
                Then::Nothing,
            ),
            Request::SetAutoRetry { enabled } => {
                if !enabled && self.state.max_retries > 0 {
                    self.retries = self.state.max_retries;
                }
                let retries = if enabled { self.retries } else { 0 };
                (with(move |s, _| done(|| s.set_max_retries(retries))), Then::Nothing)
            }
            Request::AbortRetry {} => {
                if !self.stream.is_retrying() {
                    return Err(Answer::Now(None));
                }
                (Op::Abort, Then::Aborted)
            }
            Request::Bash { command } => {
                if command.trim().is_empty() {
                    return refuse("bash needs a command".into());
                }
                // As `!cmd`: a leading `!` of the command itself is kept.
                (Op::Line { text: format!("! {command}") }, Then::Bash)
            }
            Request::AbortBash {} => (Op::AbortShell, Then::Nothing),
            Request::GetSessionStats {} => (Op::GetMessages, Then::Stats),
            Request::ExportHtml { output_path } => {
                let f = move |s: &mut AgentSession, setup: Option<&rab_core::setup::Setup>| {
                    let setup = setup.ok_or("no set-up to export with")?;
                    let format = rab_session::export::ExportFormat::Html;
                    let path = rab_core::commands::export_session(
                        s,
                        setup,
                        format,
                        output_path.map(Into::into),
                    )?;
                    Ok(json!({"path": path}))
                };
                (with(f), Then::Data)
            }
            Request::SwitchSession { session_path } => (
                Op::SwitchSession { path: session_path.into() },
                Then::Fixed(json!({"cancelled": false})),
            ),
            Request::Fork { entry_id: None } => (Op::Fork, Then::Info),
            Request::Fork { entry_id: Some(entry) } => {
                (with(move |s, setup| fork(s, setup, &entry)), Then::Data)
            }
            Request::Clone {} => (Op::Fork, Then::Fixed(json!({"cancelled": false}))),
            Request::GetForkMessages {} => (with(|s, _| Ok(fork_messages(s))), Then::Data),
            Request::GetLastAssistantText {} => (Op::GetMessages, Then::LastText),
            Request::SetSessionName { name } => {
                let name = name.trim().to_owned();
                if name.is_empty() {
                    return refuse("Session name cannot be empty".into());
                }
                if name.contains('\n') {
                    return refuse("a session name is one line".into());
                }
                let named = name.clone();
                (with(move |s, _| s.set_name(&named).map(|()| Value::Null)), Then::Named(name))
            }
            Request::GetMessages {} => (Op::GetMessages, Then::Messages),
            Request::GetCommands {} => return Err(Answer::Now(Some(commands(&self.launch)))),
            Request::ExtensionUiResponse {} => return Ok(None),
            Request::Reload {} => (Op::Reload, Then::Info),
            Request::Answer { question_id, decision, reason, text } => {
                let approval = match (decision.as_deref(), text) {
                    (_, Some(text)) => Approval::Answer(text),
                    (Some("allow" | "once" | "yes"), None) => Approval::Once,
                    (Some("always"), None) => Approval::Always,
                    (Some("deny" | "no"), None) => Approval::Deny(reason),
                    _ => {
                        return refuse(
                            "an answer needs \"decision\": allow, always or deny (or \"text\")"
                                .into(),
                        );
                    }
                };
                (Op::Answer { id: question_id, approval }, Then::Nothing)
            }
        };
        Ok(Some(pair))
    }

    /// The op that switches to the model `query` names (with its key), and the response
    /// `data` makes of it (pi's model object).
    fn switch_model(
        &self,
        query: &str,
        data: impl FnOnce(Value) -> Value,
    ) -> Result<(Op, Then), Answer> {
        let t = self.launch.resolve_model(query).map_err(Answer::Refused)?;
        let data = data(pi::model(&t.model));
        let model = Box::new(t.model);
        let op =
            Op::SetModel { model: model.clone(), api_key: t.api_key, auth_hint: Some(t.auth_hint) };
        Ok((op, Then::Model(model, data)))
    }

    /// Whether `message` starts with `/name` of a command rab knows.
    fn names_command(&self, message: &str) -> bool {
        let Some(rest) = message.strip_prefix('/') else { return false };
        let name = rest.split_whitespace().next().unwrap_or("");
        !name.is_empty() && self.launch.extensions.command(name).is_some()
    }
}

/// A request answered at once: with this data, or refused.
pub(super) enum Answer {
    Now(Option<Value>),
    Refused(String),
}

/// Does `f`; nothing to return.
fn done(f: impl FnOnce()) -> Result<Value, String> {
    f();
    Ok(Value::Null)
}

/// An [`Op::WithSession`] of `f`.
fn with(
    f: impl FnOnce(&mut AgentSession, Option<&rab_core::setup::Setup>) -> Result<Value, String>
    + Send
    + 'static,
) -> Op {
    Op::WithSession(SessionFn(Box::new(f)))
}

fn drain_mode(mode: &str) -> Result<rab_agent::DrainMode, String> {
    serde_json::from_value(json!(mode))
        .map_err(|_| format!("unknown mode \"{mode}\": all or one-at-a-time"))
}

/// The compaction the session recorded last: pi's `CompactionResult`.
pub(super) fn last_compaction() -> SessionFn {
    SessionFn(Box::new(|s, _| {
        let entry = s.tape().last_on_branch(rab_session::EntryKind::Compaction);
        match entry.map(|e| &e.body) {
            Some(rab_session::EntryBody::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                ..
            }) => Ok(json!({
                "summary": summary,
                "firstKeptEntryId": first_kept_entry_id,
                "tokensBefore": tokens_before,
            })),
            _ => Err("nothing was compacted".into()),
        }
    }))
}

/// pi's `BashResult` from a shell line's output (`exit code N` leads a failure's
/// output, as the bash tool writes it).
pub(super) fn bash_result(shell: Option<(String, bool)>) -> Value {
    let (output, is_error) = shell.unwrap_or_default();
    let first = output.lines().next().unwrap_or("");
    let exit_code = if !is_error {
        Some(0)
    } else {
        first.strip_prefix("exit code ").and_then(|n| n.trim().parse::<i32>().ok())
    };
    let cancelled = is_error && first.starts_with(rab_agent::ABORTED);
    let body = match exit_code {
        Some(_) if is_error => output.split_once('\n').map_or("", |(_, b)| b).to_owned(),
        _ => output.clone(),
    };
    // The bash tool's note, when it kept only the tail.
    let note = body.lines().last().filter(|l| l.starts_with("[output truncated: "));
    let full = note
        .and_then(|n| n.split_once("full output in "))
        .map(|(_, p)| p.trim_end_matches(']').to_owned());
    let mut v = json!({
        "output": body,
        "exitCode": exit_code,
        "cancelled": cancelled,
        "truncated": note.is_some(),
    });
    if let Some(path) = full {
        v["fullOutputPath"] = json!(path);
    }
    v
}

/// pi's fork: a new session holding what came before user message `entry`; its text.
fn fork(
    s: &mut AgentSession,
    setup: Option<&rab_core::setup::Setup>,
    entry: &str,
) -> Result<Value, String> {
    let setup = setup.ok_or("no set-up to fork with")?;
    let found = s.tape().entry(entry).ok_or_else(|| {
        format!("no entry \"{entry}\" in this session (get_fork_messages lists them)")
    })?;
    let text = match found.message() {
        Some(m @ rab_ai::Message::User(_)) => pi::user_text(m).unwrap_or_default(),
        _ => return Err(format!("entry \"{entry}\" is not a user message")),
    };
    let parent = found.parent_id.clone();
    let dir = rab_session::session_dir(&setup.paths.sessions_dir(), &setup.cwd);
    s.fork_at(&dir, parent.as_deref(), None)?;
    Ok(json!({"text": text, "cancelled": false}))
}

/// The user messages of the active branch, `{entryId, text}`, oldest first.
fn fork_messages(s: &AgentSession) -> Value {
    let messages: Vec<Value> = s
        .tape()
        .active_branch()
        .iter()
        .filter_map(|e| match e.message() {
            Some(m @ rab_ai::Message::User(_)) if !m.is_summary() => {
                Some(json!({"entryId": e.id, "text": pi::user_text(m)}))
            }
            _ => None,
        })
        .collect();
    json!({"messages": messages})
}

/// The models whose provider has a key (or needs none).
fn available_models(launch: &rab_core::setup::Setup) -> Vec<&rab_ai::Model> {
    let auth = rab_config::Auth::load(&launch.paths.auth_file()).unwrap_or_default();
    let has_key = |name: &str| {
        let Some(p) = launch.registry.provider(name) else { return false };
        let cli = (name == launch.target.model.provider)
            .then_some(launch.options.model.api_key.as_deref())
            .flatten();
        !p.requires_key
            || auth.credential(name).is_some()
            || rab_config::resolve_key(p, cli, &launch.env, &auth).is_some()
    };
    launch.registry.models().iter().filter(|m| has_key(&m.provider)).collect()
}

/// The commands a prompt can start with, as pi's `RpcSlashCommand`s.
fn commands(launch: &rab_core::setup::Setup) -> Value {
    use rab_core::CommandSource;
    let commands: Vec<Value> = launch
        .extensions
        .commands()
        .iter()
        .map(|c| {
            let (source, path, owner) = match &c.source {
                CommandSource::Prompt(p) => ("prompt", p.display().to_string(), "rab"),
                CommandSource::Skill(p) => ("skill", p.display().to_string(), "rab"),
                CommandSource::Builtin => ("extension", "<builtin>".to_owned(), "rab"),
                CommandSource::Extension(name) => ("extension", format!("<{name}>"), "extension"),
            };
            let scope = if path.starts_with(&launch.cwd.display().to_string()) {
                "project"
            } else {
                "user"
            };
            json!({
                "name": c.name,
                "description": c.description,
                "source": source,
                "sourceInfo": {"path": path, "source": owner, "scope": scope, "origin": "top-level"},
            })
        })
        .collect();
    json!({"commands": commands})
}
