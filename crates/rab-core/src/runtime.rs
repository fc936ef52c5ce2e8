//! One runtime under the front ends: typed [`Op`]s in, one stream of [`Event`]s out,
//! questions included. The runtime owns the [`AgentSession`]: a run takes it to a task
//! and gives it back; while it runs, the front end can steer, queue a follow-up, abort
//! or answer a question, and still ask for the state and the messages. A question
//! (permission, `ask_user`, a plan) comes as [`Event::ApprovalRequested`], answered by
//! [`Op::Answer`] — the front end never looks at a tool's name to decide how to ask.
//!
//! Used by `rab --mode rpc` today; the terminal UI, the REPL and print mode move onto it
//! next (issue 16).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rab_agent::{AgentEvent, BoxFuture, Queues, StopCause};
use rab_ai::{Message, Model, ThinkingLevel};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::session::AgentSession;

/// What a front end asks of the runtime.
#[derive(Debug)]
pub enum Op {
    /// Starts a run with this prompt (refused while one runs: steer or follow up).
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
    },
    /// A message for after the running agent would stop.
    FollowUp {
        /// The message.
        text: String,
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
}

/// The state of a session.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// The model's id and provider.
    pub model: String,
    /// The provider.
    pub provider: String,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// A run is going on.
    pub is_streaming: bool,
    /// The session file (`None` without one).
    pub session_file: Option<String>,
    /// Messages in the conversation.
    pub message_count: usize,
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

/// Aborts the run of a runtime ([`RuntimeHandle::aborter`]). It does not keep the
/// runtime alive: once the handle is gone, aborting does nothing.
#[derive(Clone)]
pub struct Aborter(mpsc::WeakUnboundedSender<(u64, Op)>);

impl Aborter {
    /// Stops the run going on, if any.
    pub fn abort(&self) {
        if let Some(ops) = self.0.upgrade() {
            let _ = ops.send((0, Op::Abort));
        }
    }
}

/// Asks questions as events: install it where the session's gate looks for an approver.
pub struct EventApprover {
    asks: mpsc::UnboundedSender<(ApprovalRequest, oneshot::Sender<Approval>)>,
}

impl Approver for EventApprover {
    fn approve<'a>(
        &'a self,
        request: ApprovalRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Approval> {
        let (tx, rx) = oneshot::channel();
        let sent = self.asks.send((request, tx)).is_ok();
        Box::pin(async move {
            if !sent {
                return Approval::Unavailable;
            }
            tokio::select! {
                answer = rx => answer.unwrap_or(Approval::Unavailable),
                () = cancel.cancelled() => Approval::Deny(Some("interrupted".into())),
            }
        })
    }
}

/// A run under way.
struct Running {
    submission: u64,
    cancel: CancellationToken,
    queues: Queues,
    task: JoinHandle<(AgentSession, StopCause)>,
}

/// Starts the runtime for `session` on the current tokio runtime: its handle, and the
/// approver that turns the gate's questions into events.
pub fn start(mut session: AgentSession) -> (RuntimeHandle, Arc<EventApprover>) {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (asks_tx, asks_rx) = mpsc::unbounded_channel();
    let agent_events = session.subscribe();
    let actor = Actor {
        messages: session.agent().messages().to_vec(),
        state: state_of(&session, false),
        session: Some(session),
        running: None,
        pending: HashMap::new(),
        next_question: 1,
        events: events_tx,
    };
    let task = tokio::spawn(actor.run(ops_rx, agent_events, asks_rx));
    let handle = RuntimeHandle { ops: ops_tx, events: events_rx, next: AtomicU64::new(1), task };
    (handle, Arc::new(EventApprover { asks: asks_tx }))
}

fn state_of(session: &AgentSession, is_streaming: bool) -> State {
    let model = &session.agent().config().model;
    State {
        model: model.id.clone(),
        provider: model.provider.clone(),
        thinking_level: session.thinking(),
        is_streaming,
        session_file: session.tape().path().map(|p| p.display().to_string()),
        message_count: session.agent().messages().len(),
    }
}

struct Actor {
    session: Option<AgentSession>,
    running: Option<Running>,
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
    ) -> Option<AgentSession> {
        loop {
            let finished = async {
                match self.running.as_mut() {
                    Some(r) => (&mut r.task).await,
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
                    match joined {
                        Ok((session, stop)) => {
                            self.state = state_of(&session, false);
                            self.messages = session.agent().messages().to_vec();
                            self.session = Some(session);
                            self.emit(Event::RunEnded { submission: r.submission, stop });
                        }
                        Err(e) => {
                            let stop = StopCause::Error { message: format!("the run failed: {e}") };
                            self.emit(Event::RunEnded { submission: r.submission, stop });
                            return None;
                        }
                    }
                }
                op = ops.recv() => match op {
                    Some((id, op)) => self.op(id, op).await,
                    None => {
                        // The front end is gone: stop what runs and end.
                        if let Some(r) = &self.running {
                            r.cancel.cancel();
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

    async fn op(&mut self, id: u64, op: Op) {
        let busy = || Err("a run is going on: steer, follow up or abort it first".to_owned());
        match op {
            Op::Prompt { text, images } => {
                let Some(mut session) = self.session.take() else { return self.done(id, busy()) };
                let cancel = CancellationToken::new();
                let queues = session.queues();
                let run_cancel = cancel.clone();
                let task = tokio::spawn(async move {
                    let mut content = vec![rab_ai::Content::text(text)];
                    content.extend(images);
                    let message = Message::User(rab_ai::UserMessage { content });
                    let stop = session.run(vec![message], run_cancel).await;
                    (session, stop)
                });
                self.state.is_streaming = true;
                self.running = Some(Running { submission: id, cancel, queues, task });
                self.done(id, Ok(()));
            }
            Op::Steer { text } | Op::FollowUp { text } if self.running.is_none() => {
                let _ = text;
                self.done(id, Err("nothing is running: send a prompt".into()));
            }
            Op::Steer { text } => {
                if let Some(r) = &self.running {
                    r.queues.steer(Message::user(text));
                }
                self.done(id, Ok(()));
            }
            Op::FollowUp { text } => {
                if let Some(r) = &self.running {
                    r.queues.follow_up(Message::user(text));
                }
                self.done(id, Ok(()));
            }
            Op::Abort => {
                if let Some(r) = &self.running {
                    r.cancel.cancel();
                }
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
                let state = self.state.clone();
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
                    self.state = state_of(s, false);
                    self.done(id, Ok(()));
                }
                None => self.done(id, busy()),
            },
            Op::SetThinking(level) => match self.session.as_mut() {
                Some(s) => {
                    s.set_thinking(level);
                    self.state = state_of(s, false);
                    self.done(id, Ok(()));
                }
                None => self.done(id, busy()),
            },
            Op::Compact { focus } => match self.session.as_mut() {
                Some(s) => {
                    let result = s.compact(focus, CancellationToken::new()).await;
                    self.messages = s.agent().messages().to_vec();
                    self.state = state_of(s, false);
                    self.done(id, result);
                }
                None => self.done(id, busy()),
            },
        }
    }
}
