//! The state a front end can ask for, what only it can show, how a session took the
//! place of another, and the approver that turns the gate's questions into events.

use rab_ai::ThinkingLevel;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Op;
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::session::AgentSession;
use crate::session_ops::TreeItem;
use rab_agent::BoxFuture;

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
    /// The session's id.
    pub session_id: String,
    /// The session's name (`/name`), if it has one.
    pub session_name: Option<String>,
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Estimated tokens of the conversation now.
    pub context_tokens: u64,
    /// Input tokens of the session (cache reads and writes included).
    pub input_tokens: u64,
    /// Output tokens of the session.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Dollars spent by the session and its sub-agents.
    pub cost: f64,
    /// The model itself (its prices, window, wire format, whether it reasons).
    #[serde(skip)]
    pub model_info: Box<rab_ai::Model>,
    /// How steering messages are taken: one at a time or all at once.
    pub steering_mode: rab_agent::DrainMode,
    /// How follow-up messages are taken.
    pub follow_up_mode: rab_agent::DrainMode,
    /// Whether the conversation is compacted automatically before it overflows.
    pub auto_compaction: bool,
    /// Retries of a failed model request (0: automatic retries are off).
    pub max_retries: u32,
    /// A compaction (or another session operation that talks to the model) is going on.
    pub is_compacting: bool,
    /// Steering and follow-up messages waiting for the run.
    pub pending_messages: usize,
}

/// Aborts the run of a runtime ([`RuntimeHandle::aborter`](super::RuntimeHandle::aborter)). It does not keep the
/// runtime alive: once the handle is gone, aborting does nothing.
#[derive(Clone)]
pub struct Aborter(pub(super) mpsc::WeakUnboundedSender<(u64, Op)>);

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
    pub(super) asks: mpsc::UnboundedSender<(ApprovalRequest, oneshot::Sender<Approval>)>,
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

impl State {
    /// The state of `session` (not running).
    pub fn of(session: &AgentSession) -> State {
        state_of(session, false)
    }
}

pub(super) fn state_of(session: &AgentSession, is_streaming: bool) -> State {
    let config = session.agent().config();
    let model = &config.model;
    let totals = session.totals();
    State {
        model: model.id.clone(),
        provider: model.provider.clone(),
        thinking_level: session.thinking(),
        is_streaming,
        session_file: session.tape().path().map(|p| p.display().to_string()),
        message_count: session.agent().messages().len(),
        session_id: session.tape().id().to_owned(),
        session_name: session.name(),
        context_window: model.context_window,
        context_tokens: session.context_tokens(),
        input_tokens: totals.usage.total_input(),
        output_tokens: totals.usage.output,
        cache_read_tokens: totals.usage.cache_read,
        cost: totals.cost + session.sub_agents().cost,
        model_info: Box::new(model.clone()),
        steering_mode: config.steering_mode,
        follow_up_mode: config.follow_up_mode,
        auto_compaction: session.auto_compaction(),
        max_retries: config.options.retry.max_retries,
        is_compacting: false,
        pending_messages: 0,
    }
}

/// How a session took the place of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replaced {
    /// `/new`.
    New,
    /// `/resume`: an earlier session, whose conversation the front end may show.
    Resumed,
    /// `/fork`.
    Forked,
    /// `/handoff`.
    HandedOff,
    /// `/reload`: the same session with the new set-up.
    Reloaded,
}

/// What only a front end can show: a choice for its user, or its screen.
#[derive(Debug)]
pub enum View {
    /// Pick a model (from the set-up's registry); then [`Op::SetModel`] or a `/model`
    /// line.
    Models,
    /// Pick a session to resume (newest first); then [`Op::SwitchSession`].
    Sessions(Vec<rab_session::SessionInfo>),
    /// The messages of every branch; `/tree N` continues from one.
    Tree(Vec<TreeItem>),
    /// The keyboard shortcuts.
    Hotkeys,
    /// The instruction files `/memory` offers; `open`: the one to edit at once.
    Memory {
        /// The files, in the order listed.
        files: Vec<crate::memory::MemoryFile>,
        /// The one to open in the editor now.
        open: Option<usize>,
    },
    /// The settings in effect, as text (a front end may open its settings editor).
    Settings(String),
    /// Clear the screen (the session goes on).
    Clear,
    /// Ask for an API key without showing it; then [`Op::StoreKey`].
    Login {
        /// The provider.
        provider: String,
    },
}
