//! `AgentSession`: the agent, its tape and its subscribers. Every event passes here;
//! messages and tool results are written to the tape first, then broadcast to every
//! subscriber (print mode, the UI, RPC clients).

pub(crate) mod compaction;
pub(crate) mod ops;
mod spending;

use std::sync::Arc;

use rab_agent::{Agent, AgentConfig, AgentEvent, AgentTool, Queues, StopCause};
use rab_ai::{Message, Provider, ThinkingLevel, Usage};
use rab_session::{EntryBody, EntryKind, Tape};

use crate::compaction::ModelCompactor;
use crate::gate::Gate;
use crate::hooks::HookEvent;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How many times Stop hooks may send the agent back to work in one run.
const MAX_STOP_CONTINUES: u32 = 3;

/// Totals over a session's runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// Summed usage of every response.
    pub usage: Usage,
    /// Dollar cost from the model's prices.
    pub cost: f64,
    /// Model requests made.
    pub turns: u32,
}

/// The agent, the tape it records to, and who listens.
pub struct AgentSession {
    pub(crate) agent: Agent,
    pub(crate) tape: Tape,
    /// For each message of the agent's conversation, the tape entry it came from.
    pub(crate) ids: Vec<Option<String>>,
    subscribers: Vec<mpsc::UnboundedSender<AgentEvent>>,
    pub(crate) totals: Totals,
    /// Per-turn usage and cost, in order.
    pub(crate) turns: Vec<TurnCost>,
    thinking: ThinkingLevel,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) compactor: Option<Arc<ModelCompactor>>,
    gate: Option<Arc<Gate>>,
    /// Context from SessionStart hooks, added to the next prompt.
    start_context: Vec<String>,
    /// The bash tool comma lines in the model's answers run with (opt-in routing).
    router: Option<Arc<dyn AgentTool>>,
    /// Extensions told about the session's life.
    extensions: Option<Arc<crate::extension::Extensions>>,
    /// The system prompt built for this launch. A conversation that began with
    /// another keeps sending that one; the difference goes in as a system message.
    prompt: String,
    /// Takes checkpoints of the files tools change (`checkpoint.rs`).
    checkpointer: Option<Arc<crate::checkpoint::Checkpointer>>,
}

/// Usage and cost of one model request.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnCost {
    /// Token usage.
    pub usage: Usage,
    /// Dollars.
    pub cost: f64,
    /// A summary request (compaction, handoff, abandoned branch), not a turn.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_summary: bool,
}

/// How many requests the per-request list keeps at least: a long-lived session drops
/// the oldest half when it holds twice as many, so its memory stays flat (the totals
/// keep counting them).
pub const LISTED_REQUESTS: usize = 1000;

/// Adds one request's usage to the totals and the per-request list.
pub(crate) fn add_request(
    totals: &mut Totals,
    turns: &mut Vec<TurnCost>,
    usage: &Usage,
    price: &rab_ai::ModelCost,
    is_summary: bool,
) {
    totals.usage.add(usage);
    let cost = price.of(usage);
    totals.cost += cost;
    totals.turns += 1;
    if turns.len() >= 2 * LISTED_REQUESTS {
        turns.drain(..LISTED_REQUESTS);
    }
    turns.push(TurnCost { usage: *usage, cost, is_summary });
}

/// What resuming a tape found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resumed {
    /// Tool calls given an "interrupted" result because rab had been killed.
    pub repaired: usize,
}

impl AgentSession {
    /// A session over `tape`: its active branch becomes the conversation (after
    /// recording results for tool calls a crash left unanswered).
    pub fn new(
        provider: Arc<dyn Provider>,
        config: AgentConfig,
        system_prompt: String,
        tools: Vec<Arc<dyn AgentTool>>,
        mut tape: Tape,
    ) -> Result<(Self, Resumed), rab_session::Error> {
        let repaired = tape.repair()?;
        let thinking = config.options.thinking;
        let prompt = system_prompt.clone();
        let mut agent = Agent::new(provider.clone(), config, system_prompt, tools);
        let (ids, messages) = tape.take_conversation();
        agent.set_messages(messages);
        let mut session = Self {
            agent,
            tape,
            ids,
            subscribers: Vec::new(),
            totals: Totals::default(),
            turns: Vec::new(),
            thinking,
            provider,
            compactor: None,
            gate: None,
            start_context: Vec::new(),
            router: None,
            extensions: None,
            prompt,
            checkpointer: None,
        };
        session.restore_context();
        Ok((session, Resumed { repaired }))
    }

    /// Gives the agent the system prompt and tools the branch's conversation began
    /// with (recorded by its first request), with what changed since as a note for the
    /// next request; a conversation that recorded none starts afresh with this
    /// launch's prompt.
    pub(crate) fn restore_context(&mut self) {
        let stored = match self.tape.last_on_branch(EntryKind::Context).map(|e| &e.body) {
            Some(EntryBody::Context { system_prompt, tools }) => {
                Some((system_prompt.clone(), tools.clone()))
            }
            _ => None,
        };
        match stored {
            Some((prompt, tools)) => {
                // Said once: a later resume finds the same note already in the history.
                let note = crate::prompt::prompt_update(&prompt, &self.prompt).filter(|note| {
                    !self
                        .agent
                        .messages()
                        .iter()
                        .any(|m| matches!(m, Message::System(s) if s.text == *note))
                });
                self.agent.set_note(note);
                self.agent.set_system_prompt(prompt);
                self.agent.set_declared_tools(Some(tools));
            }
            None => {
                self.agent.set_note(None);
                self.agent.set_system_prompt(self.prompt.clone());
                self.agent.set_declared_tools(None);
            }
        }
        let level = match self.tape.last_on_branch(EntryKind::ThinkingLevelChange).map(|e| &e.body)
        {
            Some(EntryBody::ThinkingLevelChange { thinking_level }) => Some(*thinking_level),
            _ => None,
        };
        let has_history = !self.agent.messages().is_empty();
        self.agent.set_level_sent(level.filter(|_| has_history));
    }

    /// Turns on compaction with these settings (automatic when `enabled`, and
    /// `/compact` in any case).
    pub fn enable_compaction(&mut self, settings: rab_config::CompactionSettings) {
        let c = Arc::new(ModelCompactor::new(self.provider.clone(), settings));
        self.agent.set_compactor(c.clone());
        self.compactor = Some(c);
    }

    /// The models a run continues on when the model stays out of capacity.
    pub fn set_fallbacks(&mut self, fallbacks: Vec<rab_agent::Fallback>) {
        self.agent.set_fallbacks(fallbacks);
    }

    /// When a run counts as a runaway loop and is stopped.
    pub fn set_loop_detection(&mut self, detection: rab_agent::LoopDetection) {
        self.agent.set_loop_detection(detection);
    }

    /// Puts every tool call through `gate` (permissions, hooks, secret firewall) and
    /// runs its prompt and stop hooks.
    /// Records checkpoints of the files tools change, so the session can be rewound
    /// with its files.
    pub fn set_checkpointer(&mut self, checkpointer: Arc<crate::checkpoint::Checkpointer>) {
        self.checkpointer = Some(checkpointer);
    }

    /// Sets the gate every tool call passes.
    pub fn set_gate(&mut self, gate: Arc<Gate>) {
        let path = self.tape.path().map(|p| p.display().to_string()).unwrap_or_default();
        gate.set_session(self.tape.id(), &path);
        self.agent.add_hook(gate.clone());
        if let Some(c) = &self.compactor {
            c.set_gate(gate.clone());
        }
        self.gate = Some(gate);
    }

    /// Puts the extensions' tool hooks in the tool-call path (after the gate, so only
    /// permitted calls reach them) and their context transforms before every request,
    /// reads their tool sources before every request and
    /// tells them about the session's life. Their fixed tools are given to
    /// [`AgentSession::new`].
    pub fn set_extensions(&mut self, extensions: Arc<crate::extension::Extensions>) {
        for hook in extensions.hooks() {
            self.agent.add_hook(hook);
        }
        for transform in extensions.transforms() {
            self.agent.add_transform(transform);
        }
        for source in extensions.tool_sources() {
            self.agent.add_tool_source(source);
        }
        self.extensions = Some(extensions);
    }

    fn emit(&self, event: &crate::extension::Lifecycle<'_>) {
        if let Some(e) = &self.extensions {
            e.emit(event);
        }
    }

    /// Runs comma command lines of the model's answers with `bash` through the gate
    /// and feeds the results back (`routeAssistantCommands`).
    pub fn route_assistant_commands(&mut self, bash: Arc<dyn AgentTool>) {
        self.router = Some(bash);
    }

    /// Runs SessionStart hooks (`source`: `startup`, `resume`, `clear`); what they
    /// print is added to the next prompt. Returns their warnings.
    pub async fn session_start(&mut self, source: &str) -> Vec<String> {
        let id = self.tape.id().to_owned();
        self.emit(&crate::extension::Lifecycle::SessionStart { session_id: &id, source });
        let Some(gate) = self.gate.clone().filter(|g| g.hooks().has(HookEvent::SessionStart))
        else {
            return Vec::new();
        };
        let input = gate.event_input(serde_json::json!({"source": source}));
        let cancel = CancellationToken::new();
        let out = gate.hooks().run(HookEvent::SessionStart, None, input, &cancel).await;
        self.start_context.extend(out.context);
        // Returned to the front end, which shows them: not told twice.
        gate.hooks().take_notices();
        out.warnings
    }

    /// Runs SessionEnd hooks (`reason`: `exit`, `clear`, `other`). Returns their
    /// warnings and failures (with the reason, as [`HookRunner::take_notices`] gives
    /// them), for the front end to show as it exits.
    ///
    /// [`HookRunner::take_notices`]: crate::safety::hooks::HookRunner::take_notices
    pub async fn session_end(&self, reason: &str) -> Vec<String> {
        self.emit(&crate::extension::Lifecycle::SessionEnd { reason });
        let Some(gate) = self.gate.as_ref().filter(|g| g.hooks().has(HookEvent::SessionEnd)) else {
            return Vec::new();
        };
        let input = gate.event_input(serde_json::json!({"reason": reason}));
        let cancel = CancellationToken::new();
        let out = gate.hooks().run(HookEvent::SessionEnd, None, input, &cancel).await;
        let mut told = out.warnings;
        told.extend(gate.hooks().take_notices());
        for w in &told {
            tracing::warn!("{w}");
        }
        told
    }

    /// Sends the tools through a progressive view.
    pub fn set_tool_view(&mut self, view: Arc<rab_agent::ToolView>) {
        self.agent.set_tool_view(view);
    }

    /// The gate, when set.
    pub fn gate(&self) -> Option<&Arc<Gate>> {
        self.gate.as_ref()
    }

    /// Usage and cost of the model requests so far, the latest [`LISTED_REQUESTS`] at
    /// least (`totals().turns` counts them all; the first listed is request number
    /// `totals().turns - turn_costs().len() + 1`).
    pub fn turn_costs(&self) -> &[TurnCost] {
        &self.turns
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&mut self) -> mpsc::UnboundedReceiver<AgentEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers.push(tx);
        rx
    }

    /// Sends the session's events to `tx` as well (a runtime keeping one stream across
    /// the sessions it replaces).
    pub fn subscribe_to(&mut self, tx: mpsc::UnboundedSender<AgentEvent>) {
        self.subscribers.push(tx);
    }

    /// The steering and follow-up queues.
    pub fn queues(&self) -> Queues {
        self.agent.queues()
    }

    /// The tape.
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// The agent (conversation, tools, system prompt).
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Usage and cost so far (the main agent's: see [`AgentSession::sub_agents`]).
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// What sub-agents spent, all together (from the session's ledger).
    pub fn sub_agents(&self) -> rab_agent::Spending {
        self.agent.config().spend.as_ref().map(|s| s.ledger().sub_agents()).unwrap_or_default()
    }

    /// Switches the model (and its key) for the next run; the tape records the change
    /// when the next run starts. The conversation's system prompt and tools stay; each
    /// adapter decides which of the old model's thinking the new one gets back.
    pub fn set_model(
        &mut self,
        model: rab_ai::Model,
        api_key: Option<String>,
        auth_hint: Option<String>,
    ) {
        self.agent.forget_primary();
        let config = self.agent.config_mut();
        config.model = model;
        config.options.api_key = api_key;
        config.options.auth_hint = auth_hint;
    }

    /// Sets the thinking level for the next run.
    pub fn set_thinking(&mut self, level: ThinkingLevel) {
        self.thinking = level;
        self.agent.config_mut().options.thinking = level;
    }

    /// The thinking level.
    pub fn thinking(&self) -> ThinkingLevel {
        self.thinking
    }

    /// Estimated tokens of the conversation if it were sent now: the last response's
    /// reported usage plus an estimate for what came after it.
    pub fn context_tokens(&self) -> u64 {
        rab_agent::estimate_context_tokens(self.agent.messages())
    }

    /// Takes the tape out (to replace the session), leaving an ephemeral one.
    pub fn into_tape(self) -> Tape {
        self.tape
    }

    /// Records the model and thinking level when they differ from the tape's last.
    fn record_model(&mut self) -> Result<(), rab_session::Error> {
        let model = self.agent_model();
        let last_model = match self.tape.last_on_branch(EntryKind::ModelChange).map(|e| &e.body) {
            Some(EntryBody::ModelChange { provider, model_id }) => {
                Some((provider.clone(), model_id.clone()))
            }
            _ => None,
        };
        let last_thinking =
            match self.tape.last_on_branch(EntryKind::ThinkingLevelChange).map(|e| &e.body) {
                Some(EntryBody::ThinkingLevelChange { thinking_level }) => Some(*thinking_level),
                _ => None,
            };
        let model_changed = last_model.is_none_or(|(p, m)| p != model.0 || m != model.1);
        let thinking_changed = last_thinking != Some(self.thinking);
        if model_changed {
            self.tape.append(EntryBody::ModelChange { provider: model.0, model_id: model.1 })?;
        }
        if thinking_changed {
            self.tape.append(EntryBody::ThinkingLevelChange { thinking_level: self.thinking })?;
        }
        Ok(())
    }

    /// Records the system prompt and tools when the conversation declares them (its
    /// first request), so a resumed session sends the same ones.
    fn record_context(&mut self) -> Result<(), rab_session::Error> {
        if let Some(tools) = self.agent.declare() {
            let system_prompt = self.agent.system_prompt().to_owned();
            self.tape.append(EntryBody::Context { system_prompt, tools })?;
        }
        Ok(())
    }

    fn agent_model(&self) -> (String, String) {
        let m = &self.agent.config().model;
        (m.provider.clone(), m.id.clone())
    }

    /// Sends `text` as a user message and runs the agent until it stops.
    pub async fn prompt(&mut self, text: String, cancel: CancellationToken) -> StopCause {
        self.run(vec![Message::user(text)], cancel).await
    }

    /// Runs the agent with these new messages.
    pub async fn run(&mut self, prompts: Vec<Message>, cancel: CancellationToken) -> StopCause {
        if self.extensions.is_some() {
            let text: Vec<String> = prompts
                .iter()
                .filter_map(|m| match m {
                    Message::User(u) => Some(rab_ai::Content::join_text(&u.content)),
                    Message::Assistant(_) | Message::ToolResult(_) | Message::System(_) => None,
                })
                .collect();
            self.emit(&crate::extension::Lifecycle::Prompt { text: &text.join("\n") });
        }
        let stop = self.run_prompts(prompts, cancel).await;
        self.emit(&crate::extension::Lifecycle::AgentEnd);
        stop
    }

    async fn run_prompts(&mut self, prompts: Vec<Message>, cancel: CancellationToken) -> StopCause {
        // A failover lasts one run: each prompt starts on the model the session chose.
        self.agent.restore_primary();
        if let Err(e) = self.record_model().and_then(|()| self.record_context()) {
            let stop = StopCause::Error { message: e.to_string() };
            self.broadcast(&AgentEvent::AgentEnd { stop: stop.clone() });
            return stop;
        }
        let mut prompts = prompts;
        let start_context = std::mem::take(&mut self.start_context);
        if !start_context.is_empty()
            && let Some(Message::User(first)) = prompts.first_mut()
        {
            first.content.push(rab_ai::Content::text(start_context.join("\n")));
        }
        if let Some(refusal) = self.prompt_hooks(&mut prompts, &cancel).await {
            let stop = StopCause::Error { message: refusal };
            self.broadcast(&AgentEvent::AgentEnd { stop: stop.clone() });
            return stop;
        }
        let mut continued = 0;
        let has_stop_hooks = self.gate.as_ref().is_some_and(|g| g.hooks().has(HookEvent::Stop))
            || self.router.is_some();
        loop {
            let (agent, mut recorder) = self.split();
            // With Stop hooks the run may go on: its end is announced once, below.
            recorder.is_end_held = has_stop_hooks;
            let stop = agent.run(prompts, &mut recorder, cancel.clone()).await;
            // A Stop hook that exits 2 sends the agent back to work with its reason, a
            // bounded number of times so two hooks cannot loop forever.
            let next = match self.stop_hook(&stop, continued > 0, &cancel).await {
                Some(reason) => Some(format!("Stop hook feedback: {reason}")),
                None => self.routed(&stop, &cancel).await,
            };
            match next {
                Some(text) if continued < MAX_STOP_CONTINUES => {
                    continued += 1;
                    prompts = vec![Message::user(text)];
                }
                _ => {
                    if has_stop_hooks {
                        self.broadcast(&AgentEvent::AgentEnd { stop: stop.clone() });
                    }
                    return stop;
                }
            }
        }
    }

    /// Assistant routing after a finished run: the results of the answer's comma lines.
    async fn routed(&self, stop: &StopCause, cancel: &CancellationToken) -> Option<String> {
        let (bash, gate) = (self.router.as_ref()?, self.gate.as_ref()?);
        if *stop != StopCause::Done {
            return None;
        }
        let text = self.agent.messages().iter().rev().find_map(|m| match m {
            Message::Assistant(a) => Some(a.text()),
            Message::User(_) | Message::ToolResult(_) | Message::System(_) => None,
        })?;
        crate::assistant_commands::run_lines(&text, bash, gate, cancel).await
    }

    /// UserPromptSubmit hooks: `Some` is the reason the prompt was blocked; context
    /// they print is added to the last prompt.
    async fn prompt_hooks(
        &self,
        prompts: &mut [Message],
        cancel: &CancellationToken,
    ) -> Option<String> {
        let gate = self.gate.as_ref().filter(|g| g.hooks().has(HookEvent::UserPromptSubmit))?;
        let text: Vec<String> = prompts
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => Some(rab_ai::Content::join_text(&u.content)),
                Message::Assistant(_) | Message::ToolResult(_) | Message::System(_) => None,
            })
            .collect();
        let input = gate.event_input(serde_json::json!({"prompt": text.join("\n")}));
        let out = gate.hooks().run(HookEvent::UserPromptSubmit, None, input, cancel).await;
        if let Some(reason) = out.block.or(out.stop) {
            return Some(format!("the prompt was blocked by a UserPromptSubmit hook: {reason}"));
        }
        if !out.context.is_empty()
            && let Some(Message::User(last)) = prompts.last_mut()
        {
            last.content.push(rab_ai::Content::text(out.context.join("\n")));
        }
        None
    }

    /// Stop hooks after a run that ended normally: `Some` is a reason to go on.
    async fn stop_hook(
        &self,
        stop: &StopCause,
        is_active: bool,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let gate = self.gate.as_ref().filter(|g| g.hooks().has(HookEvent::Stop))?;
        if *stop != StopCause::Done {
            return None;
        }
        let input = gate.event_input(serde_json::json!({"stop_hook_active": is_active}));
        gate.hooks().run(HookEvent::Stop, None, input, cancel).await.block
    }

    /// The agent, and the sink that records what it does.
    fn split(&mut self) -> (&mut Agent, Recorder<'_>) {
        let cost = self.agent.config().model.cost.clone();
        let recorder = Recorder {
            tape: &mut self.tape,
            ids: &mut self.ids,
            subscribers: &mut self.subscribers,
            totals: &mut self.totals,
            turns: &mut self.turns,
            cost,
            redactor: self.gate.as_ref().and_then(|g| g.redactor().cloned()),
            is_end_held: false,
            checkpoints: self.checkpointer.clone().map(|c| (c, self.agent.tools().to_vec())),
            pending: Vec::new(),
            hooks: self.gate.as_ref().map(|g| g.hooks().clone()),
        };
        (&mut self.agent, recorder)
    }

    /// Compacts the conversation now (`/compact [focus]`).
    pub async fn compact(
        &mut self,
        focus: Option<String>,
        cancel: CancellationToken,
    ) -> Result<(), String> {
        if self.compactor.is_none() {
            return Err("compaction is not set up for this session".to_owned());
        }
        let (agent, mut recorder) = self.split();
        let reason = rab_agent::CompactReason::Manual { focus };
        match agent.compact(reason, &mut recorder, &cancel).await? {
            true => Ok(()),
            false => Err("the conversation was not compacted".to_owned()),
        }
    }

    fn broadcast(&mut self, event: &AgentEvent) {
        // Hook failures of the run's last steps (Stop) come before its end.
        if matches!(event, AgentEvent::AgentEnd { .. })
            && let Some(gate) = &self.gate
        {
            for message in gate.hooks().take_notices() {
                let notice = AgentEvent::Notice { message };
                self.subscribers.retain(|s| s.send(notice.clone()).is_ok());
            }
        }
        self.subscribers.retain(|s| s.send(event.clone()).is_ok());
    }
}

/// The sink of a run: writes what must survive a crash (every message, tool result and
/// compaction) to the tape, keeps the message-to-entry map, adds up usage, then
/// broadcasts the event.
struct Recorder<'a> {
    tape: &'a mut Tape,
    ids: &'a mut Vec<Option<String>>,
    subscribers: &'a mut Vec<mpsc::UnboundedSender<AgentEvent>>,
    totals: &'a mut Totals,
    turns: &'a mut Vec<TurnCost>,
    cost: rab_ai::ModelCost,
    /// The secret firewall for what the gate does not see: streamed output and
    /// result details (diffs).
    redactor: Option<Arc<crate::secrets::Redactor>>,
    /// Swallow `AgentEnd`: the session announces the end itself.
    is_end_held: bool,
    /// The checkpointer and the tools it asks which files a call writes.
    checkpoints: Option<CheckpointTools>,
    /// The hooks, whose failures are told as [`AgentEvent::Notice`].
    hooks: Option<Arc<crate::hooks::HookRunner>>,
    /// Checkpoints of calls whose results have not come yet.
    pending: Vec<crate::checkpoint::Checkpoint>,
}

/// The checkpointer and the session's tools, which say what files a call writes.
type CheckpointTools = (Arc<crate::checkpoint::Checkpointer>, Vec<Arc<dyn AgentTool>>);

impl Recorder<'_> {
    /// Before a call runs: the files it writes, stored and named on the tape.
    fn checkpoint_before(&mut self, call: &rab_ai::ToolCall) -> Result<(), rab_session::Error> {
        let Some((cp, tools)) = &self.checkpoints else { return Ok(()) };
        let Some(tool) = tools.iter().find(|t| t.name() == call.name) else { return Ok(()) };
        let Some(before) = cp.before(call, tool.as_ref()) else { return Ok(()) };
        let data = cp.store().seal(serde_json::to_value(&before).unwrap_or_default());
        let custom_type = crate::checkpoint::CHECKPOINT.to_owned();
        self.tape.append(EntryBody::Custom { custom_type, data })?;
        self.pending.push(before);
        Ok(())
    }

    /// After a call's result: what it left in its files.
    fn checkpoint_after(&mut self, call_id: &str) -> Result<(), rab_session::Error> {
        let Some((cp, _)) = &self.checkpoints else { return Ok(()) };
        let Some(i) = self.pending.iter().position(|c| c.call_id == call_id) else {
            return Ok(());
        };
        let before = self.pending.remove(i);
        let data = cp.store().seal(serde_json::to_value(cp.after(&before)).unwrap_or_default());
        let custom_type = crate::checkpoint::CHECKPOINT_AFTER.to_owned();
        self.tape.append(EntryBody::Custom { custom_type, data })?;
        Ok(())
    }
}

/// Redacts a tool's streamed output and its result details.
fn redact_event(r: &crate::secrets::Redactor, event: &mut AgentEvent) {
    if let AgentEvent::ToolUpdate { chunk, .. } = event {
        *chunk = r.redact(chunk).0;
    } else if let AgentEvent::ToolResult { details: Some(d), .. } = event {
        let (clean, found) = r.redact(&d.to_string());
        if !found.is_empty() {
            // A details value that no longer parses is dropped rather than kept.
            *d = serde_json::from_str(&clean).unwrap_or(serde_json::Value::Null);
        }
    }
}

impl rab_agent::EventSink for Recorder<'_> {
    fn emit(&mut self, mut event: AgentEvent) -> Result<(), String> {
        if let Some(r) = &self.redactor {
            redact_event(r, &mut event);
        }
        if self.is_end_held && matches!(event, AgentEvent::AgentEnd { .. }) {
            return Ok(());
        }
        let failed = |e: rab_session::Error| format!("cannot write the session: {e}");
        match &event {
            AgentEvent::MessageEnd { message } => {
                let body = EntryBody::Message { message: message.clone(), details: None };
                let id = self.tape.append(body).map_err(failed)?.id.clone();
                self.ids.push(Some(id));
            }
            AgentEvent::ToolResult { result, details, .. } => {
                let body = EntryBody::Message {
                    message: Message::ToolResult(result.clone()),
                    details: details.clone(),
                };
                let id = self.tape.append(body).map_err(failed)?.id.clone();
                self.ids.push(Some(id));
                self.checkpoint_after(&result.tool_call_id).map_err(failed)?;
            }
            AgentEvent::ToolCall { call } => self.checkpoint_before(call).map_err(failed)?,
            AgentEvent::CompactionEnd {
                summary,
                first_kept,
                tokens_before,
                tokens_after,
                usage,
                ..
            } => {
                if usage.total() > 0 {
                    add_request(self.totals, self.turns, usage, &self.cost, true);
                }
                // The first kept message that came from an entry (a synthesised result
                // has none); the summary replaces everything before it.
                let first_id = self.ids.iter().skip(*first_kept).flatten().next().cloned();
                if let Some(first_kept_entry_id) = first_id {
                    let body = EntryBody::Compaction {
                        summary: summary.clone(),
                        first_kept_entry_id,
                        tokens_before: *tokens_before,
                        tokens_after: *tokens_after,
                    };
                    self.tape.append(body).map_err(failed)?;
                }
                let kept: Vec<Option<String>> =
                    self.ids.iter().skip(*first_kept).cloned().collect();
                *self.ids = std::iter::once(None).chain(kept).collect();
            }
            AgentEvent::Usage { usage } => {
                add_request(self.totals, self.turns, usage, &self.cost, false);
            }
            AgentEvent::Fallback { from, to, message, cost } => {
                // The switch is a model change like any other (a resume or a fork sees
                // it), and why it happened is kept beside it.
                let (provider, model_id) = to.split_once('/').unwrap_or(("", to));
                let body = EntryBody::ModelChange {
                    provider: provider.to_owned(),
                    model_id: model_id.to_owned(),
                };
                self.tape.append(body).map_err(failed)?;
                let data = serde_json::json!({"from": from, "to": to, "error": message});
                let body = EntryBody::Custom { custom_type: "fallback".to_owned(), data };
                self.tape.append(body).map_err(failed)?;
                self.cost = cost.clone();
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::WebSearch { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::Retry { .. }
            | AgentEvent::Waiting { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::CompactionFailed { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::AgentEnd { .. } => {}
        }
        self.subscribers.retain(|s| s.send(event.clone()).is_ok());
        // A hook that failed while this step ran (PreToolUse, PostToolUse, Stop) is
        // told right after it.
        for message in self.hooks.iter().flat_map(|h| h.take_notices()) {
            let notice = AgentEvent::Notice { message };
            self.subscribers.retain(|s| s.send(notice.clone()).is_ok());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
