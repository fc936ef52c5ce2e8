//! Typed lines and what they lead to: commands and their outcomes, shell lines, session
//! operations, reloads and scheduled prompts — carried out here, once, for every front
//! end.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Actor, BUSY, Event, Replaced, View, state_of};
use rab_agent::StopCause;

use crate::Approval;
use crate::CommandOutcome as Outcome;
use crate::input::{LineKind, ShellLine, classify};
use crate::session::AgentSession;
use crate::setup::Setup;
use crate::shell_line::ShellResult;

/// A session operation that talks to the model: run off the actor like a run, so events
/// flow and `Op::Abort` cancels it.
pub(super) enum SessionOp {
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// `/tree N [summary]`: continue after an entry, maybe summarising what is left.
    Branch(Option<String>, bool),
    /// `/handoff [focus]`.
    Handoff(Option<String>),
}

/// How a session operation ended well: what to say, and whether the session file
/// changed.
pub(super) struct OpDone {
    pub(super) info: String,
    pub(super) replaced: Option<Replaced>,
}

/// Work done off the actor, reporting back.
pub(super) enum Inner {
    /// A command's slow part finished.
    Later(u64, Outcome),
    /// Something to show while a command goes on (a sign-in's address).
    Info(u64, String),
    /// A shell line's output.
    ShellOutput(u64, String),
    /// A shell line ended.
    ShellEnded(u64, ShellLine, ShellResult),
}

pub(super) const NO_SETUP: &str =
    "this runtime was started without a set-up: it takes prompts only";

impl Actor {
    fn setup(&self) -> Result<Arc<Setup>, String> {
        self.setup.clone().ok_or_else(|| NO_SETUP.to_owned())
    }

    /// Why a run cannot start: the model's provider needs a key and there is none (the
    /// UI opens without one, for /login). Nothing is sent unauthenticated.
    pub(super) fn missing_key(&self) -> Option<String> {
        let (setup, session) = (self.setup.as_ref()?, self.session.as_ref()?);
        let config = session.agent().config();
        let p = &config.model.provider;
        let needs = setup.registry.provider(p).is_some_and(|p| p.requires_key);
        (needs && config.options.api_key.is_none() && config.options.credential.is_none()).then(
            || {
                format!(
                    "No API key for {p}, so nothing was sent. Type /login {p} to store one (or \
                     /login to see every provider), or set its environment variable and restart."
                )
            },
        )
    }

    /// `/init`: the run goes in plan mode (read-only tools and commands); its end is
    /// [`Actor::init_ended`].
    fn start_init(&mut self, id: u64, setup: &Setup) -> Result<(), String> {
        let before = setup.gate.mode().get();
        setup.gate.mode().set(crate::permissions::PermissionMode::Plan);
        let started = self.start_run(id, crate::init::PROMPT.to_owned(), Vec::new(), true);
        match started {
            Ok(()) => self.init = Some((id, before)),
            Err(_) => setup.gate.mode().set(before),
        }
        started
    }

    /// After an `/init` run: the mode is what it was, and the proposed AGENTS.md is
    /// shown as a question (a `write` of it) and written only when allowed.
    pub(super) fn init_ended(&mut self, submission: u64, stop: &StopCause) {
        let Some((id, before)) = self.init.take_if(|(s, _)| *s == submission) else { return };
        let Some(setup) = self.setup.clone() else { return };
        setup.gate.mode().set(before);
        let answer = self.session.as_ref().and_then(crate::commands::last_answer);
        let proposal = answer.as_deref().and_then(crate::init::proposal);
        let content = match (proposal, stop) {
            (Some(content), StopCause::Done) => content,
            (None, StopCause::Done) => {
                let text = "/init: the answer is not an AGENTS.md (no ```markdown block, and it \
                            does not begin with a heading); nothing written. Run /init again, \
                            or ask for the file in a ```markdown block.";
                self.emit(Event::Info { submission: id, text: text.into() });
                return;
            }
            _ => {
                self.emit(Event::Info { submission: id, text: "/init: nothing written".into() });
                return;
            }
        };
        // An existing file is merged, never replaced: the sections the proposal
        // dropped stay, and the question shows the change as a diff.
        let (content, preview, reason) = match crate::init::existing(&setup.cwd) {
            Some(old) => {
                let (merged, kept) = crate::init::merge(&old, &content);
                if merged == old {
                    let text = "/init: the proposal is the AGENTS.md you have; nothing written";
                    self.emit(Event::Info { submission: id, text: text.into() });
                    return;
                }
                let diff = rab_tools::unified_diff(&old, &merged, "AGENTS.md", 3);
                let (added, removed) = diff_counts(&diff);
                let mut reason =
                    format!("/init proposes changes to your AGENTS.md (+{added} −{removed} lines)");
                if !kept.is_empty() {
                    reason
                        .push_str(&format!("; kept the sections it dropped: {}", kept.join(", ")));
                }
                (merged, diff, reason)
            }
            None => {
                let reason =
                    format!("/init proposes this AGENTS.md ({} lines)", content.lines().count());
                (content.clone(), content, reason)
            }
        };
        let request = crate::ApprovalRequest {
            kind: crate::ApprovalKind::Permission,
            tool: "write".into(),
            call_id: format!("init-{id}"),
            level: rab_agent::ToolLevel::Edit,
            arguments: serde_json::json!({"path": "AGENTS.md", "content": content}),
            preview: Some(preview),
            reason,
            rule: "write(AGENTS.md)".into(),
            advice: None,
        };
        let (approver, tx, cwd) = (self.approver.clone(), self.inner.clone(), setup.cwd.clone());
        tokio::spawn(async move {
            let cancel = CancellationToken::new();
            let answer = crate::Approver::approve(approver.as_ref(), request, &cancel).await;
            let text = match answer {
                Approval::Once | Approval::Always => match crate::init::write(&cwd, &content) {
                    Ok(path) => format!("/init wrote {}", path.display()),
                    Err(e) => format!("/init: {e}"),
                },
                _ => "/init: AGENTS.md not written (the proposal is the answer above)".into(),
            };
            let _ = tx.send(Inner::Info(id, text));
        });
    }

    /// A typed line: classified, then run as a command, a shell line or a prompt.
    pub(super) async fn line(&mut self, id: u64, text: String, images: Vec<rab_ai::Content>) {
        let setup = match self.setup() {
            Ok(s) => s,
            Err(e) => return self.done(id, Err(e)),
        };
        let text = text.trim_end().to_owned();
        if text.trim().is_empty() {
            return self.done(id, Ok(()));
        }
        let kind = classify(&text, &setup.extensions);
        if !images.is_empty() && kind != LineKind::Prompt {
            self.emit(Event::Warning(format!(
                "{} pasted image(s) left out: only a prompt takes images",
                images.len()
            )));
        }
        match kind {
            LineKind::Command => {
                let Some(session) = self.session.as_mut() else {
                    return self.done(id, Err(BUSY.to_owned()));
                };
                match setup.extensions.run(&text, session, setup.as_ref()) {
                    Some(outcome) => self.outcome(id, outcome).await,
                    None => self.done(id, Ok(())),
                }
            }
            LineKind::Shell(line) => self.shell(id, line, &setup),
            LineKind::Memory(m) => {
                let home = setup.paths.home().to_path_buf();
                let result = crate::memory::remember(&m, &setup.cwd, &home).map(|path| {
                    self.emit(Event::Info {
                        submission: id,
                        text: format!(
                            "Remembered in {}; /reload or the next session reads it",
                            path.display()
                        ),
                    });
                });
                self.done(id, result);
            }
            LineKind::Prompt => {
                // `@file` mentions: read now, under the model's read rules.
                let found = crate::mentions::attach(&text, &setup).await;
                for problem in &found.problems {
                    self.emit(Event::Warning(problem.clone()));
                }
                if !found.attached.is_empty() {
                    self.emit(Event::Attached { submission: id, files: found.attached });
                }
                let mut content = images;
                content.extend(found.content);
                let result = self.start_prompt(id, text, content);
                self.done(id, result);
            }
        }
    }

    /// Starts a run of `text` after the output of earlier `!cmd` lines.
    pub(super) fn start_prompt(
        &mut self,
        id: u64,
        text: String,
        images: Vec<rab_ai::Content>,
    ) -> Result<(), String> {
        let mut prompt = self.shared_output.join("\n\n");
        if !prompt.is_empty() && !text.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(&text);
        self.start_run(id, prompt, images, false)?;
        self.shared_output.clear();
        Ok(())
    }

    /// Carries out what a command asked for; `Done` when it is finished.
    pub(super) async fn outcome(&mut self, id: u64, outcome: Outcome) {
        let setup = match self.setup() {
            Ok(s) => s,
            Err(e) => return self.done(id, Err(e)),
        };
        let result = match outcome {
            Outcome::Info(text) => {
                self.emit(Event::Info { submission: id, text });
                Ok(())
            }
            Outcome::Error(text) => Err(text),
            Outcome::Quit => {
                self.emit(Event::Quit { submission: id });
                Ok(())
            }
            Outcome::Clear => self.show(id, View::Clear),
            Outcome::Hotkeys => self.show(id, View::Hotkeys),
            Outcome::Memory { files, open } => self.show(id, View::Memory { files, open }),
            Outcome::Settings(text) => self.show(id, View::Settings(text)),
            Outcome::PickModel => self.show(id, View::Models),
            Outcome::Tree => match &self.session {
                Some(s) => self.show(id, View::Tree(s.tree())),
                None => Err(BUSY.to_owned()),
            },
            Outcome::Resume(None) => {
                let dir = rab_session::session_dir(&setup.paths.sessions_dir(), &setup.cwd);
                self.show(id, View::Sessions(rab_session::list_sessions(&dir)))
            }
            Outcome::Resume(Some(arg)) => {
                // A number from the list `/resume` shows, or a path.
                let dir = rab_session::session_dir(&setup.paths.sessions_dir(), &setup.cwd);
                let listed = arg.parse::<usize>().ok().and_then(|n| {
                    rab_session::list_sessions(&dir).get(n.checked_sub(1)?).map(|s| s.path.clone())
                });
                return self.switch_session(id, listed.unwrap_or_else(|| setup.cwd.join(&arg)));
            }
            Outcome::NewSession => return self.new_session(id, None),
            Outcome::Compact(focus) => return self.start_op(id, SessionOp::Compact(focus)),
            Outcome::Branch(entry, summary) => {
                let entry = (!entry.is_empty()).then_some(entry);
                return self.start_op(id, SessionOp::Branch(entry, summary));
            }
            Outcome::Handoff(focus) => return self.start_op(id, SessionOp::Handoff(focus)),
            Outcome::Search(query) => {
                let (root, home) = (setup.paths.sessions_dir(), setup.paths.home().to_owned());
                let tx = self.inner.clone();
                tokio::spawn(async move {
                    let found = tokio::task::spawn_blocking(move || {
                        crate::commands::search(&query, &root, &home)
                    })
                    .await;
                    let outcome = match found {
                        Ok(Ok(text)) => Outcome::Info(text),
                        Ok(Err(e)) => Outcome::Error(e),
                        Err(e) => Outcome::Error(format!("the search failed: {e}")),
                    };
                    let _ = tx.send(Inner::Later(id, outcome));
                });
                return;
            }
            Outcome::Prompt(request) => match self.session.as_mut() {
                Some(s) => match crate::commands::apply_prompt(&request, s, &setup) {
                    Ok(()) => self.start_run(id, request.text, Vec::new(), true),
                    Err(e) => Err(e),
                },
                None => Err(BUSY.to_owned()),
            },
            Outcome::Init => self.start_init(id, &setup),
            Outcome::Reload => return self.reload(id, None),
            Outcome::Profile(profile) => return self.reload(id, Some(profile)),
            Outcome::Rewind(point, what) => {
                let store = crate::checkpoint::store(setup.paths.home());
                let session = self.session.as_mut().ok_or_else(|| BUSY.to_owned());
                session.and_then(|s| s.rewind_to(&store, point.as_deref(), what)).map(|text| {
                    self.emit(Event::Info { submission: id, text });
                    self.settle();
                })
            }
            Outcome::Login(provider) => {
                match crate::commands::login::check_provider(&setup, &provider) {
                    Ok(()) => self.show(id, View::Login { provider }),
                    Err(e) => Err(e),
                }
            }
            Outcome::SignIn(provider) => {
                // The browser takes its time: the sign-in runs off the actor, shows its
                // address at once, and reloads when done so the session uses it.
                let (tx, path, env) =
                    (self.inner.clone(), setup.paths.auth_file(), setup.env.clone());
                tokio::spawn(async move {
                    let info = tx.clone();
                    let mut show = move |url: &str| {
                        let text = format!(
                            "Open this address in a browser on this machine to sign in (5 \
                             minutes):\n{url}"
                        );
                        let _ = info.send(Inner::Info(id, text));
                    };
                    let signed = if provider == "openai" {
                        let issuer = crate::signin::issuer(&env);
                        crate::signin::sign_in_chatgpt(&path, &issuer, &mut show).await
                    } else {
                        let site = crate::signin::openrouter_site(&env);
                        crate::signin::sign_in_openrouter(&path, &site, &mut show).await
                    };
                    let outcome = match signed {
                        Ok(text) => {
                            let _ = tx.send(Inner::Info(id, text));
                            Outcome::Reload
                        }
                        Err(e) => Outcome::Error(e),
                    };
                    let _ = tx.send(Inner::Later(id, outcome));
                });
                return;
            }
            Outcome::Later(work) => {
                // A slow part (an MCP prompt being fetched) finishes off the actor.
                let tx = self.inner.clone();
                tokio::spawn(async move {
                    let _ = tx.send(Inner::Later(id, work.await));
                });
                return;
            }
        };
        self.settle();
        self.done(id, result);
    }

    /// Starts a session operation off the actor; its `Done` comes when it ends.
    pub(super) fn start_op(&mut self, id: u64, op: SessionOp) {
        let Some(mut session) = self.session.take() else {
            return self.done(id, Err(BUSY.to_owned()));
        };
        let dir =
            self.setup.as_ref().map(|s| rab_session::session_dir(&s.paths.sessions_dir(), &s.cwd));
        let label = match &op {
            SessionOp::Compact(_) => "Compacting…",
            SessionOp::Branch(_, true) => "Summarising the branch left behind…",
            SessionOp::Branch(_, false) => "Branching…",
            SessionOp::Handoff(_) => "Summarising for the handoff…",
        };
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            let result = match op {
                SessionOp::Compact(focus) => session
                    .compact(focus, token)
                    .await
                    .map(|()| OpDone { info: "Compacted.".into(), replaced: None }),
                SessionOp::Branch(entry, summary) => {
                    match session.branch_to(entry.as_deref(), summary, token).await {
                        Ok(()) => {
                            let n = session.agent().messages().len();
                            let info =
                                format!("Continuing on a new branch ({n} messages of context).");
                            Ok(OpDone { info, replaced: None })
                        }
                        Err(e) => Err(e),
                    }
                }
                SessionOp::Handoff(focus) => match dir {
                    Some(dir) => {
                        session.handoff(focus.as_deref(), &dir, token).await.map(|path| OpDone {
                            info: format!(
                                "Handed off to {}: continuing in a fresh session.",
                                path.display()
                            ),
                            replaced: Some(Replaced::HandedOff),
                        })
                    }
                    None => Err(super::lines::NO_SETUP.to_owned()),
                },
            };
            (session, result)
        });
        self.busy = Some(super::Busy { submission: id, cancel, task });
        self.emit(Event::OpStarted { submission: id, label: label.to_owned() });
    }

    /// A session operation ended: the session is back.
    pub(super) fn op_ended(
        &mut self,
        id: u64,
        session: AgentSession,
        result: Result<OpDone, String>,
    ) {
        let new_id = session.tape().id().to_owned();
        self.session = Some(session);
        match result {
            Ok(done) => {
                if let Some(reason) = done.replaced {
                    self.emit(Event::SessionReplaced { submission: id, id: new_id, reason });
                }
                self.settle();
                self.emit(Event::Info { submission: id, text: done.info });
                self.done(id, Ok(()));
            }
            Err(e) => {
                self.settle();
                self.done(id, Err(e));
            }
        }
    }

    fn show(&self, submission: u64, view: View) -> Result<(), String> {
        self.emit(Event::Show { submission, view });
        Ok(())
    }

    /// The state and messages again from the session (after a run or an operation on
    /// it), and the state to the front end.
    pub(super) fn settle(&mut self) {
        if let Some(s) = &self.session {
            self.state = state_of(s, false);
            self.messages = s.agent().messages().to_vec();
            self.emit(Event::StateChanged(self.state.clone()));
        }
    }

    /// Work done off the actor came back.
    pub(super) async fn inner(&mut self, work: Inner) {
        match work {
            Inner::Later(id, outcome) => Box::pin(self.outcome(id, outcome)).await,
            Inner::Info(id, text) => self.emit(Event::Info { submission: id, text }),
            Inner::ShellOutput(id, chunk) => {
                self.emit(Event::ShellOutput { submission: id, chunk });
            }
            Inner::ShellEnded(id, line, result) => {
                self.shells.remove(&id);
                let context =
                    crate::input::shell_context(&line.command, &result.output, result.is_error);
                self.emit(Event::ShellEnded {
                    submission: id,
                    command: line.command,
                    output: result.output,
                    is_error: result.is_error,
                    is_shared: line.share,
                });
                let outcome = match (line.share, line.gated) {
                    (true, false) => {
                        self.shared_output.push(context);
                        Ok(())
                    }
                    // `,,cmd`: the command and its output go to the model now, or after
                    // the run going on.
                    (true, true) => match &self.running {
                        Some(r) => {
                            r.queues.follow_up(rab_ai::Message::user(context));
                            Ok(())
                        }
                        None => self.start_run(id, context, Vec::new(), false),
                    },
                    (false, _) => Ok(()),
                };
                self.done(id, outcome);
            }
        }
    }

    /// Runs a shell line off the actor, its output as events.
    fn shell(&mut self, id: u64, line: ShellLine, setup: &Arc<Setup>) {
        self.emit(Event::ShellStarted { submission: id, command: line.command.clone() });
        let setup = setup.clone();
        let tx = self.inner.clone();
        let cancel = CancellationToken::new();
        self.shells.insert(id, cancel.clone());
        tokio::spawn(async move {
            let (sink, mut rx) = rab_agent::UpdateSink::channel("shell");
            let forward_tx = tx.clone();
            let forward = tokio::spawn(async move {
                while let Some((_, chunk)) = rx.recv().await {
                    let _ = forward_tx.send(Inner::ShellOutput(id, chunk));
                }
            });
            let result = crate::shell_line::run(&setup, &line, cancel, sink).await;
            let _ = forward.await;
            let _ = tx.send(Inner::ShellEnded(id, line, result));
        });
    }

    /// A scheduled prompt came due: it runs now, or after the run going on.
    pub(super) fn cron(&mut self, job: crate::cron::Job) {
        self.emit(Event::CronFired {
            job: job.id.clone(),
            schedule: job.schedule_text().to_owned(),
            prompt: job.prompt.clone(),
        });
        match &self.running {
            Some(r) => r.queues.follow_up(rab_ai::Message::user(job.prompt)),
            None => {
                let _ = self.start_run(0, job.prompt, Vec::new(), false);
            }
        }
    }

    /// Puts `session` in the place of the current one.
    fn replace(&mut self, id: u64, mut session: AgentSession, reason: Replaced) {
        session.subscribe_to(self.agent_tx.clone());
        let new_id = session.tape().id().to_owned();
        self.session = Some(session);
        self.shared_output.clear();
        self.emit(Event::SessionReplaced { submission: id, id: new_id, reason });
        self.settle();
    }

    /// `/new`.
    pub(super) fn new_session(&mut self, id: u64, parent: Option<String>) {
        let result = self.setup().and_then(|setup| {
            if self.session.is_none() {
                return Err(BUSY.to_owned());
            }
            let tape = match parent {
                None => setup.new_tape(),
                Some(parent) => rab_session::Tape::create(
                    &rab_session::session_dir(&setup.paths.sessions_dir(), &setup.cwd),
                    &setup.cwd,
                    Some(parent),
                ),
            };
            let (session, _) = setup.session(tape).map_err(|e| e.message)?;
            let text = format!("new session {}", session.tape().id());
            self.replace(id, session, Replaced::New);
            self.emit(Event::Info { submission: id, text });
            Ok(())
        });
        self.done(id, result);
    }

    /// `/resume`: the session in `path`.
    pub(super) fn switch_session(&mut self, id: u64, path: PathBuf) {
        let result = self.setup().and_then(|setup| {
            if self.session.is_none() {
                return Err(BUSY.to_owned());
            }
            let (mut tape, _) = rab_session::Tape::open(&path).map_err(|e| e.to_string())?;
            tape.claim().map_err(|e| e.to_string())?;
            let (session, _) = setup.session(tape).map_err(|e| e.message)?;
            let text = format!(
                "resumed {} ({} messages)",
                session.tape().id(),
                session.agent().messages().len()
            );
            self.replace(id, session, Replaced::Resumed);
            self.emit(Event::Info { submission: id, text });
            Ok(())
        });
        self.done(id, result);
    }

    /// [`Op::WithSession`](super::Op::WithSession): `f` on the session, between runs.
    pub(super) fn with_session(&mut self, id: u64, f: super::SessionFn) {
        let Some(session) = self.session.as_mut() else {
            return self.done(id, Err(BUSY.to_owned()));
        };
        let before = session.tape().id().to_owned();
        let result = (f.0)(session, self.setup.as_deref());
        let after = session.tape().id().to_owned();
        if let Ok(value) = &result {
            self.emit(Event::Data { submission: id, value: value.clone() });
        }
        if after != before {
            self.emit(Event::SessionReplaced {
                submission: id,
                id: after,
                reason: Replaced::Forked,
            });
        }
        self.settle();
        self.done(id, result.map(|_| ()));
    }

    /// `/fork`.
    pub(super) fn fork(&mut self, id: u64) {
        let result = self.setup().and_then(|setup| {
            let session = self.session.as_mut().ok_or(BUSY)?;
            let dir = rab_session::session_dir(&setup.paths.sessions_dir(), &setup.cwd);
            let path = session.fork(&dir)?;
            let new_id = session.tape().id().to_owned();
            self.emit(Event::Info {
                submission: id,
                text: format!("forked into {}", path.display()),
            });
            self.emit(Event::SessionReplaced {
                submission: id,
                id: new_id,
                reason: Replaced::Forked,
            });
            self.settle();
            Ok(())
        });
        self.done(id, result);
    }

    /// `/reload`: the set-up made again from the files; the session goes on with it.
    /// `profile`: `/profile`'s choice of settings profile (else the one in effect).
    pub(super) fn reload(&mut self, id: u64, profile: Option<Option<String>>) {
        let result = self.setup().and_then(|setup| {
            let session = self.session.as_ref().ok_or(BUSY)?;
            let path = session
                .tape()
                .path()
                .ok_or("/reload needs a saved session (not --no-session); restart rab instead")?
                .to_owned();
            let fresh = match profile.clone() {
                Some(p) => setup.with_profile(p),
                None => setup.reload(),
            }
            .map_err(|e| format!("reload failed, nothing changed: {}", e.message))?;
            // A session with nothing written yet has no file: it starts afresh.
            let tape = if path.exists() {
                rab_session::Tape::open(&path).map_err(|e| e.to_string())?.0
            } else {
                fresh.new_tape()
            };
            // The session goes on: what it spent (summaries and sub-agents included)
            // stays counted against its budget and in `/cost`.
            let (session, _) = match self.session.as_ref() {
                Some(old) => fresh.session_after(tape, old),
                None => fresh.session(tape),
            }
            .map_err(|e| e.message)?;
            fresh.approver.install(self.approver.clone());
            for w in &fresh.warnings {
                self.emit(Event::Warning(w.clone()));
            }
            let what = match (&profile, &fresh.profile) {
                (Some(_), Some(p)) => format!("Profile {p} applied"),
                (Some(_), None) => "No profile".to_owned(),
                (None, _) => "Reloaded".to_owned(),
            };
            let text = format!(
                "{what}: {} commands, {} tools; the session goes on ({} messages).",
                fresh.extensions.commands().len(),
                session.agent().tools().len(),
                session.agent().messages().len()
            );
            let fresh = Arc::new(fresh);
            self.setup = Some(fresh.clone());
            self.watch_services();
            self.report_services();
            self.emit(Event::SetupChanged(fresh));
            self.replace(id, session, Replaced::Reloaded);
            self.emit(Event::Info { submission: id, text });
            Ok(())
        });
        self.done(id, result);
    }

    /// Stores a key typed for `/login`.
    pub(super) fn store_key(&mut self, id: u64, provider: &str, key: &str) {
        let result = self.setup().and_then(|setup| {
            let mut text = crate::commands::login::store(&setup, provider, key)?;
            // The session's model is this provider's: it takes the key at once.
            if let Some(session) = self.session.as_mut()
                && session.agent().config().model.provider == provider
            {
                let model = session.agent().config().model.clone();
                let hint = session.agent().config().options.auth_hint.clone();
                text.push_str(&format!("; {} uses it from now on", model.id));
                session.set_model(model, Some(key.trim().to_owned()), hint);
            }
            self.emit(Event::Info { submission: id, text });
            Ok(())
        });
        self.done(id, result);
    }
}

/// Lines added and removed in a unified diff.
fn diff_counts(diff: &str) -> (usize, usize) {
    let count = |sign: char, header: &str| {
        diff.lines().filter(|l| l.starts_with(sign) && !l.starts_with(header)).count()
    };
    (count('+', "+++"), count('-', "---"))
}
