//! One runtime under the front ends: typed [`Op`]s in, one stream of [`Event`]s out,
//! questions included. The runtime owns the [`AgentSession`]: a run takes it to a task
//! and gives it back; while it runs, the front end can steer, queue a follow-up, abort
//! or answer a question, and still ask for the state and the messages. A question
//! (permission, `ask_user`, a plan) comes as [`Event::ApprovalRequested`], answered by
//! [`Op::Answer`] — the front end never looks at a tool's name to decide how to ask.
//!
//! Built with a [`Setup`] ([`start_with`]), it also takes typed lines ([`Op::Line`]:
//! `/cmd`, `,cmd`, `!cmd`, or a prompt — classified once, here), carries out commands
//! and session operations itself, runs shell lines, fires scheduled prompts and reloads;
//! a front end renders what comes out and asks its user when a [`View`] needs a choice.

mod lines;
mod state;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rab_agent::{AgentEvent, Queues, StopCause};
use rab_ai::{Message, Model, ThinkingLevel};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::gate::{Approval, ApprovalRequest};
use crate::session::AgentSession;
use crate::setup::Setup;
use state::state_of;
pub use state::{Aborter, EventApprover, Replaced, State, View};

/// Why an op that needs the session is refused while a run goes on.
const BUSY: &str = "a run is going on: steer, follow up or abort it first";

/// What a front end asks of the runtime.
#[derive(Debug)]
pub enum Op {
    /// A line as typed: a command (`/name`, `,name`), a shell line (`!cmd`, `!!cmd`,
    /// `,cmd`, `,,cmd`) or a prompt (with the output of earlier `!cmd` lines). Needs a
    /// runtime made with [`start_with`].
    Line {
        /// The line.
        text: String,
    },
    /// A typed line with images pasted into it: as [`Op::Line`], the images sent with
    /// the prompt (a command or shell line leaves them out, with a warning).
    LineWithImages {
        /// The line.
        text: String,
        /// `Content::Image` blocks.
        images: Vec<rab_ai::Content>,
    },
    /// Starts a run with this prompt, after the output of earlier `!cmd` lines (refused
    /// while one runs: steer or follow up).
    Prompt {
        /// The prompt.
        text: String,
        /// Images sent with it (`Content::Image`).
        images: Vec<rab_ai::Content>,
    },
    /// A message for the running agent, delivered at its next step.
    Steer {
        /// The message.
        text: String,
        /// Images sent with it (`Content::Image`).
        images: Vec<rab_ai::Content>,
    },
    /// A message for after the running agent would stop.
    FollowUp {
        /// The message.
        text: String,
        /// Images sent with it (`Content::Image`).
        images: Vec<rab_ai::Content>,
    },
    /// Stops the run (its tool calls end as interrupted; the tape stays whole).
    Abort,
    /// The answer to [`Event::ApprovalRequested`] `id`.
    Answer {
        /// The question.
        id: u64,
        /// The answer.
        approval: Approval,
    },
    /// The state now ([`Event::State`]).
    GetState,
    /// The conversation now ([`Event::Messages`]).
    GetMessages,
    /// Another model (and its key) from the next run on; refused while one runs.
    SetModel {
        /// The model.
        model: Box<Model>,
        /// Its key.
        api_key: Option<String>,
        /// What to say when the key is rejected.
        auth_hint: Option<String>,
    },
    /// Another thinking level from the next run on.
    SetThinking(ThinkingLevel),
    /// Compacts the conversation now; refused while a run goes on.
    Compact {
        /// What the summary should keep.
        focus: Option<String>,
    },
    /// Continues from entry `entry` (`None`: from the start) on a new branch;
    /// `summarise` summarises the branch left behind.
    Branch {
        /// The entry to continue after.
        entry: Option<String>,
        /// Summarise the abandoned branch.
        summarise: bool,
    },
    /// Summarises the session and continues in a fresh one linked to it.
    Handoff {
        /// What the summary should keep.
        focus: Option<String>,
    },
    /// A new session in the same directory; `parent`: the session file it comes from
    /// (recorded in its header).
    NewSession {
        /// The parent session's file.
        parent: Option<String>,
    },
    /// Continues the session in this file.
    SwitchSession {
        /// The session file.
        path: PathBuf,
    },
    /// Copies the active branch into a new session and continues there.
    Fork,
    /// Reads skills, commands, agents, settings and MCP servers again; the session goes
    /// on with them.
    Reload,
    /// Stores an API key (the answer to [`View::Login`]).
    StoreKey {
        /// The provider.
        provider: String,
        /// The key.
        key: String,
    },
    /// Runs `f` on the session between runs (refused while a run or a session operation
    /// goes on); what it returns comes as [`Event::Data`]. A front end's own queries and
    /// settings (statistics, fork points, an export, a name) go through it. When `f`
    /// moved the session to another file (a fork), [`Event::SessionReplaced`] follows.
    WithSession(SessionFn),
    /// Stops the shell lines (`!cmd`) going on; their output so far ends them.
    AbortShell,
}

/// What [`SessionFn`] runs: the session, and the set-up it was made from (none for a
/// bare runtime).
pub type SessionWork =
    dyn FnOnce(&mut AgentSession, Option<&Setup>) -> Result<serde_json::Value, String> + Send;

/// A front end's work on the session ([`Op::WithSession`]).
pub struct SessionFn(pub Box<SessionWork>);

impl std::fmt::Debug for SessionFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionFn")
    }
}

/// What the runtime tells the front end.
#[derive(Debug)]
pub enum Event {
    /// A step of a run, as the session records it.
    Agent(AgentEvent),
    /// A question for the user; answer with [`Op::Answer`].
    ApprovalRequested {
        /// Its id.
        id: u64,
        /// The question ([`ApprovalRequest::kind`] says which kind).
        request: ApprovalRequest,
    },
    /// Answer to [`Op::GetState`] `submission`.
    State {
        /// The submission answered.
        submission: u64,
        /// The state.
        state: State,
    },
    /// What [`Op::WithSession`] `submission` returned.
    Data {
        /// The submission answered.
        submission: u64,
        /// The value.
        value: serde_json::Value,
    },
    /// Answer to [`Op::GetMessages`] `submission`.
    Messages {
        /// The submission answered.
        submission: u64,
        /// The conversation.
        messages: Vec<Message>,
    },
    /// A submission was carried out (a prompt: its run started) or refused.
    Done {
        /// The submission.
        submission: u64,
        /// `Err` says why it was refused.
        result: Result<(), String>,
    },
    /// What a command says.
    Info {
        /// The submission.
        submission: u64,
        /// The text (may have several lines).
        text: String,
    },
    /// Something for the front end to show or ask.
    Show {
        /// The submission.
        submission: u64,
        /// What.
        view: View,
    },
    /// Another session took the place of the current one (new, resumed, forked,
    /// reloaded); [`Op::GetMessages`] has its conversation.
    SessionReplaced {
        /// The submission.
        submission: u64,
        /// The new session's id.
        id: String,
        /// How.
        reason: Replaced,
    },
    /// Output of a running shell line.
    ShellOutput {
        /// The line's submission.
        submission: u64,
        /// New output.
        chunk: String,
    },
    /// A shell line ended.
    ShellEnded {
        /// The line's submission.
        submission: u64,
        /// The command.
        command: String,
        /// Its output (tail-truncated like the bash tool's).
        output: String,
        /// It failed or was refused.
        is_error: bool,
        /// It goes to the model: with the next prompt (`!cmd`), or now (`,,cmd`).
        is_shared: bool,
    },
    /// The session's state changed (after a run, an operation, a new model).
    StateChanged(State),
    /// A question is no longer asked (its call was interrupted): take it off the screen.
    QuestionClosed {
        /// The question.
        id: u64,
    },
    /// A shell line started.
    ShellStarted {
        /// The line's submission.
        submission: u64,
        /// The command.
        command: String,
    },
    /// A session operation that talks to the model started (compact, branch with a
    /// summary, handoff): `Op::Abort` cancels it; its `Done` comes when it ends.
    OpStarted {
        /// The submission.
        submission: u64,
        /// What it does, for a status line.
        label: String,
    },
    /// A run started (for a prompt, a prompt line, a prompt command, a shared `,,cmd`,
    /// or a scheduled prompt: submission 0).
    RunStarted {
        /// The submission that started it.
        submission: u64,
    },
    /// A prompt scheduled with cron_create came due: it runs now, or after the run going
    /// on.
    CronFired {
        /// The job.
        job: String,
        /// When it runs, in words.
        schedule: String,
        /// Its prompt.
        prompt: String,
    },
    /// A service of an extension (an MCP server) changed state: ready, failed, crashed.
    /// Its commands (an MCP server's prompts) may have changed with it.
    ServiceStatus(crate::ServiceStatus),
    /// The set-up was made again (`/reload`): commands, tools and settings may differ.
    SetupChanged(Arc<Setup>),
    /// Something the user should know (a reload's warnings).
    Warning(String),
    /// Files and folders a typed prompt's `@` mentions attached to it, one line each
    /// (`src/main.rs (120 lines)`), before its run starts.
    Attached {
        /// The prompt's submission.
        submission: u64,
        /// What was attached.
        files: Vec<String>,
    },
    /// `/quit`: the front end should end.
    Quit {
        /// The submission.
        submission: u64,
    },
    /// A run ended (after its [`AgentEvent::AgentEnd`]).
    RunEnded {
        /// The prompt's submission.
        submission: u64,
        /// Why it stopped.
        stop: StopCause,
    },
}

/// The front end's side of a runtime: submit ops, read events.
pub struct RuntimeHandle {
    ops: mpsc::UnboundedSender<(u64, Op)>,
    /// Every event, in order.
    pub events: mpsc::UnboundedReceiver<Event>,
    next: AtomicU64,
    task: JoinHandle<Option<AgentSession>>,
}

impl RuntimeHandle {
    /// Submits `op`; its id comes back in [`Event::Done`] (and the answers to it).
    pub fn submit(&self, op: Op) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let _ = self.ops.send((id, op));
        id
    }

    /// Something that can abort the run from elsewhere (a signal handler).
    pub fn aborter(&self) -> Aborter {
        Aborter(self.ops.downgrade())
    }

    /// Ends the runtime: a run going on is aborted; the events still to come can be read
    /// from the receiver returned, which ends when the runtime has.
    pub fn shutdown(self) -> mpsc::UnboundedReceiver<Event> {
        drop(self.ops);
        self.events
    }

    /// Ends the runtime (a run going on is aborted) and gives the session back, for
    /// what comes after (totals, the session's end).
    pub async fn finish(self) -> Option<AgentSession> {
        drop(self.ops);
        self.task.await.ok().flatten()
    }
}

/// A run under way.
/// A session operation under way (compact, branch, handoff).
struct Busy {
    submission: u64,
    cancel: CancellationToken,
    task: JoinHandle<(AgentSession, Result<lines::OpDone, String>)>,
}

struct Running {
    submission: u64,
    /// Grants of a prompt command end with the run.
    resets_grants: bool,
    cancel: CancellationToken,
    queues: Queues,
    task: JoinHandle<(AgentSession, StopCause)>,
}

/// Starts the runtime for `session` on the current tokio runtime: its handle, and the
/// approver that turns the gate's questions into events (install it where the session's
/// gate looks for one). Without a set-up it takes no lines and no session operations.
pub fn start(session: AgentSession) -> (RuntimeHandle, Arc<EventApprover>) {
    spawn(None, session)
}

/// Starts the runtime for `session` made by `setup`, which it keeps (and replaces on
/// `/reload`). The questions of the set-up's gate come as events from now on.
pub fn start_with(setup: Arc<Setup>, session: AgentSession) -> RuntimeHandle {
    spawn(Some(setup), session).0
}

fn spawn(
    setup: Option<Arc<Setup>>,
    mut session: AgentSession,
) -> (RuntimeHandle, Arc<EventApprover>) {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (asks_tx, asks_rx) = mpsc::unbounded_channel();
    let (inner_tx, inner_rx) = mpsc::unbounded_channel();
    let approver = Arc::new(EventApprover { asks: asks_tx });
    if let Some(s) = &setup {
        s.approver.install(approver.clone());
    }
    let (agent_tx, agent_events) = mpsc::unbounded_channel();
    session.subscribe_to(agent_tx.clone());
    let actor = Actor {
        agent_tx,
        messages: session.agent().messages().to_vec(),
        state: state_of(&session, false),
        session: Some(session),
        running: None,
        held: Vec::new(),
        init: None,
        busy: None,
        pending: HashMap::new(),
        next_question: 1,
        events: events_tx,
        setup,
        approver: approver.clone(),
        inner: inner_tx,
        shared_output: Vec::new(),
        shells: HashMap::new(),
        watched: Vec::new(),
        reported: Vec::new(),
    };
    let task = tokio::spawn(actor.run(ops_rx, agent_events, asks_rx, inner_rx));
    let handle = RuntimeHandle { ops: ops_tx, events: events_rx, next: AtomicU64::new(1), task };
    (handle, approver)
}

struct Actor {
    session: Option<AgentSession>,
    /// A session operation going on (the session is away meanwhile).
    busy: Option<Busy>,
    /// What sessions are made from (`None`: a bare session, no lines).
    setup: Option<Arc<Setup>>,
    /// The approver installed in the set-up (again after a reload).
    approver: Arc<EventApprover>,
    /// Work done off the actor reports back here.
    inner: mpsc::UnboundedSender<lines::Inner>,
    /// Output of `!cmd` lines for the next prompt.
    shared_output: Vec<String>,
    /// Shell lines going on, by submission: what stops each.
    shells: HashMap<u64, CancellationToken>,
    /// Where sessions send their events (each session the runtime takes on).
    agent_tx: mpsc::UnboundedSender<AgentEvent>,
    /// The extensions' services, watched for changes.
    watched: Vec<(Arc<dyn crate::Services>, tokio::sync::watch::Receiver<u64>)>,
    /// Each service's state last reported.
    reported: Vec<crate::ServiceStatus>,
    running: Option<Running>,
    /// Steering and follow-up messages sent while a session operation (not a run) had
    /// the session: they start a run when it ends.
    held: Vec<Message>,
    /// An `/init` run: its submission and the permission mode to return to.
    init: Option<(u64, crate::permissions::PermissionMode)>,
    /// The conversation as the events told it (the session is away during a run).
    messages: Vec<Message>,
    state: State,
    pending: HashMap<u64, oneshot::Sender<Approval>>,
    next_question: u64,
    events: mpsc::UnboundedSender<Event>,
}

impl Actor {
    /// Serves ops until the front end drops its handle; the session at the end.
    async fn run(
        mut self,
        mut ops: mpsc::UnboundedReceiver<(u64, Op)>,
        mut agent: mpsc::UnboundedReceiver<AgentEvent>,
        mut asks: mpsc::UnboundedReceiver<(ApprovalRequest, oneshot::Sender<Approval>)>,
        mut inner: mpsc::UnboundedReceiver<lines::Inner>,
    ) -> Option<AgentSession> {
        self.watch_services();
        self.report_services();
        loop {
            let mut watches: Vec<_> = self.watched.iter().map(|(_, rx)| rx.clone()).collect();
            let services_changed = async move {
                if watches.is_empty() {
                    return std::future::pending().await;
                }
                let changes = watches.iter_mut().map(|w| Box::pin(w.changed()));
                let _ = futures_util::future::select_all(changes).await;
            };
            let finished = async {
                match self.running.as_mut() {
                    Some(r) => (&mut r.task).await,
                    None => std::future::pending().await,
                }
            };
            let op_finished = async {
                match self.busy.as_mut() {
                    Some(b) => (&mut b.task).await,
                    None => std::future::pending().await,
                }
            };
            let scheduler =
                self.setup.as_ref().filter(|s| s.schedules()).map(|s| s.scheduler.clone());
            let due = async {
                match scheduler {
                    Some(s) => s.next_due().await,
                    None => std::future::pending().await,
                }
            };
            // Agent events first: a question never overtakes the tool call it is about.
            tokio::select! {
                biased;
                Some(event) = agent.recv() => self.agent_event(event),
                Some((request, reply)) = asks.recv() => {
                    let id = self.next_question;
                    self.next_question += 1;
                    self.pending.insert(id, reply);
                    self.emit(Event::ApprovalRequested { id, request });
                }
                joined = finished => {
                    // Events the run sent before it ended go out before its end.
                    while let Ok(event) = agent.try_recv() {
                        self.agent_event(event);
                    }
                    let Some(r) = self.running.take() else { continue };
                    if r.resets_grants && let Some(s) = &self.setup {
                        let _ = s.gate.grant(&[]);
                    }
                    match joined {
                        Ok((session, stop)) => {
                            let leftover = session.queues().clear();
                            self.session = Some(session);
                            self.settle();
                            self.close_questions();
                            self.emit(Event::RunEnded { submission: r.submission, stop: stop.clone() });
                            self.init_ended(r.submission, &stop);
                            // Messages queued too late for the run (or sent after an
                            // error or an abort ended it) go in a run of their own.
                            self.deliver(r.submission, leftover);
                        }
                        Err(e) => {
                            let stop = StopCause::Error { message: format!("the run failed: {e}") };
                            self.emit(Event::RunEnded { submission: r.submission, stop });
                            return None;
                        }
                    }
                }
                joined = op_finished => {
                    while let Ok(event) = agent.try_recv() {
                        self.agent_event(event);
                    }
                    let Some(b) = self.busy.take() else { continue };
                    match joined {
                        Ok((session, result)) => {
                            self.op_ended(b.submission, session, result);
                            let held = std::mem::take(&mut self.held);
                            self.deliver(b.submission, held);
                        }
                        Err(e) => {
                            self.done(b.submission, Err(format!("the operation failed: {e}")));
                            return None;
                        }
                    }
                }
                Some(work) = inner.recv() => self.inner(work).await,
                job = due => self.cron(job),
                () = services_changed => self.report_services(),
                op = ops.recv() => match op {
                    Some((id, op)) => self.op(id, op).await,
                    None => {
                        // The front end is gone: stop what runs and end.
                        if let Some(r) = &self.running {
                            r.cancel.cancel();
                        }
                        if let Some(b) = self.busy.take() {
                            b.cancel.cancel();
                            if let Ok((session, _)) = b.task.await {
                                self.session = Some(session);
                            }
                        }
                        if let Some(r) = self.running.take()
                            && let Ok((session, _)) = r.task.await
                        {
                            self.session = Some(session);
                        }
                        while let Ok(event) = agent.try_recv() {
                            self.agent_event(event);
                        }
                        return self.session.take();
                    }
                },
            }
        }
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    fn agent_event(&mut self, event: AgentEvent) {
        if let AgentEvent::MessageEnd { message } = &event {
            self.messages.push(message.clone());
            self.state.message_count = self.messages.len();
        }
        self.emit(Event::Agent(event));
    }

    fn done(&self, submission: u64, result: Result<(), String>) {
        self.emit(Event::Done { submission, result });
    }

    /// Watches the services of the set-up's extensions (again after a reload).
    fn watch_services(&mut self) {
        self.watched = self
            .setup
            .iter()
            .flat_map(|s| s.extensions.iter().filter_map(|e| e.services()).collect::<Vec<_>>())
            .map(|s| {
                let rx = s.watch();
                (s, rx)
            })
            .collect();
    }

    /// Reports each service whose state changed since it was last reported.
    fn report_services(&mut self) {
        // A service whose watch is gone (its manager replaced) is no longer watched.
        self.watched.retain_mut(|(_, rx)| {
            let alive = rx.has_changed().is_ok();
            rx.borrow_and_update();
            alive
        });
        let now: Vec<crate::ServiceStatus> =
            self.watched.iter().flat_map(|(s, _)| s.statuses()).collect();
        for status in &now {
            if !self.reported.contains(status) {
                self.emit(Event::ServiceStatus(status.clone()));
            }
        }
        self.reported = now;
    }

    /// Questions nobody waits for any more (their call was interrupted).
    fn close_questions(&mut self) {
        let closed: Vec<u64> =
            self.pending.iter().filter(|(_, r)| r.is_closed()).map(|(id, _)| *id).collect();
        for id in closed {
            self.pending.remove(&id);
            self.emit(Event::QuestionClosed { id });
        }
    }

    /// Starts a run of messages that were queued for a run that has ended; a run that
    /// cannot start says why they were not sent rather than dropping them silently.
    fn deliver(&mut self, submission: u64, messages: Vec<Message>) {
        if messages.is_empty() {
            return;
        }
        let texts: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => Some(rab_ai::Content::join_text(&u.content)),
                Message::Assistant(_) | Message::ToolResult(_) | Message::System(_) => None,
            })
            .collect();
        if let Err(why) = self.start_messages(submission, messages, false) {
            self.emit(Event::Warning(format!(
                "queued messages were not sent ({why}); send them again: {}",
                texts.join(" / ")
            )));
        }
    }

    /// Starts a run of `text` (and `images`) for `submission`; refused while one runs.
    fn start_run(
        &mut self,
        submission: u64,
        text: String,
        images: Vec<rab_ai::Content>,
        resets_grants: bool,
    ) -> Result<(), String> {
        self.start_messages(submission, vec![user_message(text, images)], resets_grants)
    }

    /// Starts a run of `messages` for `submission`; refused while one runs.
    fn start_messages(
        &mut self,
        submission: u64,
        messages: Vec<Message>,
        resets_grants: bool,
    ) -> Result<(), String> {
        if let Some(why) = self.missing_key() {
            return Err(why);
        }
        let Some(mut session) = self.session.take() else { return Err(BUSY.to_owned()) };
        let cancel = CancellationToken::new();
        let queues = session.queues();
        let run_cancel = cancel.clone();
        let task = tokio::spawn(async move {
            let stop = session.run(messages, run_cancel).await;
            (session, stop)
        });
        self.state.is_streaming = true;
        self.running = Some(Running { submission, resets_grants, cancel, queues, task });
        self.emit(Event::RunStarted { submission });
        Ok(())
    }

    async fn op(&mut self, id: u64, op: Op) {
        let busy = || Err(BUSY.to_owned());
        match op {
            Op::Prompt { text, images } => {
                let result = self.start_prompt(id, text, images);
                self.done(id, result);
            }
            Op::Line { text } => self.line(id, text, Vec::new()).await,
            Op::LineWithImages { text, images } => self.line(id, text, images).await,
            Op::NewSession { parent } => self.new_session(id, parent),
            Op::Handoff { focus } => {
                self.outcome(id, crate::CommandOutcome::Handoff(focus)).await;
            }
            Op::Branch { entry, summarise } => {
                let outcome = crate::CommandOutcome::Branch(entry.unwrap_or_default(), summarise);
                self.outcome(id, outcome).await;
            }
            Op::SwitchSession { path } => self.switch_session(id, path),
            Op::Fork => self.fork(id),
            Op::Reload => self.reload(id, None),
            Op::StoreKey { provider, key } => self.store_key(id, &provider, &key),
            // Nothing runs: the message starts a run, or waits for the session
            // operation going on (a compaction) and starts one when it ends. Never lost.
            Op::Steer { text, images } | Op::FollowUp { text, images }
                if self.running.is_none() =>
            {
                let result = match self.busy {
                    Some(_) => {
                        self.held.push(user_message(text, images));
                        Ok(())
                    }
                    None => self.start_prompt(id, text, images),
                };
                self.done(id, result);
            }
            Op::Steer { text, images } => {
                if let Some(r) = &self.running {
                    r.queues.steer(user_message(text, images));
                }
                self.done(id, Ok(()));
            }
            Op::FollowUp { text, images } => {
                if let Some(r) = &self.running {
                    r.queues.follow_up(user_message(text, images));
                }
                self.done(id, Ok(()));
            }
            Op::Abort => {
                if let Some(r) = &self.running {
                    // What was queued for the run is the front end's again.
                    r.queues.clear();
                    r.cancel.cancel();
                }
                if let Some(b) = &self.busy {
                    b.cancel.cancel();
                }
                self.held.clear();
                self.done(id, Ok(()));
            }
            Op::Answer { id: question, approval } => match self.pending.remove(&question) {
                Some(reply) => {
                    let _ = reply.send(approval);
                    self.done(id, Ok(()));
                }
                None => self.done(id, Err(format!("no open question {question}"))),
            },
            Op::GetState => {
                let mut state = self.state.clone();
                state.is_compacting = self.busy.is_some();
                state.pending_messages = self.running.as_ref().map_or(0, |r| r.queues.len());
                self.emit(Event::State { submission: id, state });
                self.done(id, Ok(()));
            }
            Op::GetMessages => {
                let messages = self.messages.clone();
                self.emit(Event::Messages { submission: id, messages });
                self.done(id, Ok(()));
            }
            Op::SetModel { model, api_key, auth_hint } => match self.session.as_mut() {
                Some(s) => {
                    s.set_model(*model, api_key, auth_hint);
                    self.settle();
                    self.done(id, Ok(()));
                }
                None => self.done(id, busy()),
            },
            Op::SetThinking(level) => match self.session.as_mut() {
                Some(s) => {
                    s.set_thinking(level);
                    self.settle();
                    self.done(id, Ok(()));
                }
                None => self.done(id, busy()),
            },
            Op::Compact { focus } => self.start_op(id, lines::SessionOp::Compact(focus)),
            Op::WithSession(f) => self.with_session(id, f),
            Op::AbortShell => {
                self.shells.values().for_each(CancellationToken::cancel);
                self.done(id, Ok(()));
            }
        }
    }
}

/// A user message of `text` and `images`.
fn user_message(text: String, images: Vec<rab_ai::Content>) -> Message {
    let mut content = vec![rab_ai::Content::text(text)];
    content.extend(images);
    Message::User(rab_ai::UserMessage { content })
}

#[cfg(test)]
mod tests;
