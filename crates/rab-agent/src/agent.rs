//! The agent loop: send the conversation, stream the reply, run its tool calls, feed
//! the results back, until the model stops; then take queued follow-ups.
//!
//! Every message is emitted (and so recorded by the session) before the loop acts on
//! it. Cancellation at any point leaves a consistent conversation: every tool call gets
//! a result, an aborted one says so.

use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::future::join_all;
use rab_ai::{
    AssistantMessage, Content, Context, Message, Model, Provider, StopReason, StreamEvent,
    StreamOptions, ToolCall, ToolResultMessage, ToolSpec,
};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info_span};

use crate::compaction::{
    CompactReason, Compactor, estimate_context_tokens, estimate_text_tokens, message_chars,
};
use crate::event::{AgentEvent, EventSink, StopCause};
use crate::hooks::{ContextTransform, HookDecision, ToolHook};
use crate::queue::{DrainMode, Queues};
use crate::tool::{AgentTool, ExecutionMode, ToolContext, ToolError, ToolSource, UpdateSink};
use crate::tool_view::ToolView;

/// Result text of a call skipped because the user steered.
pub const SKIPPED_STEERING: &str = "skipped: user interrupted with a new message";
/// Result text of a call cut short by cancellation.
pub const ABORTED: &str = "aborted: the user interrupted the run";

/// How long a cancelled tool may take to stop by itself.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How the loop runs.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// The model to call.
    pub model: Model,
    /// Key, thinking level, retries.
    pub options: StreamOptions,
    /// Stop after this many model requests in one run.
    pub max_turns: Option<u32>,
    /// How steering messages are drained.
    pub steering_mode: DrainMode,
    /// How follow-up messages are drained.
    pub follow_up_mode: DrainMode,
    /// The session's spending ledger (and its limit), shared with sub-agents: a request
    /// whose estimate would take the spending of every agent past the limit is not
    /// sent.
    pub spend: Option<crate::ledger::Spend>,
}

/// The conversation, the tools and the provider.
pub struct Agent {
    provider: Arc<dyn Provider>,
    config: AgentConfig,
    system_prompt: String,
    tools: Vec<Arc<dyn AgentTool>>,
    specs: Vec<ToolSpec>,
    hooks: Vec<Arc<dyn ToolHook>>,
    /// What changes each request's messages, in order.
    transforms: Vec<Arc<dyn ContextTransform>>,
    messages: Vec<Message>,
    /// What the provider kept of the last request, valid while `messages` only grows:
    /// a new one whenever they are replaced.
    memo: rab_ai::RequestMemo,
    queues: Queues,
    compactor: Option<Arc<dyn Compactor>>,
    /// Progressive tool view: which tools go with full schemas.
    view: Option<Arc<ToolView>>,
    /// The tools given at creation; `tools` is these plus the sources' tools.
    fixed: Vec<Arc<dyn AgentTool>>,
    /// Tools that come and go, with the version last seen.
    sources: Vec<(Arc<dyn ToolSource>, Option<u64>)>,
    /// Dollars spent by this agent's requests.
    spent: f64,
    /// What the conversation declared at its start, and what changed since.
    frame: Frame,
    /// Runaway loops: the same calls reply after reply, the same text in one reply.
    loops: loops::LoopGuard,
    /// What repeated, when a reply was cut off for looping.
    looped: Option<String>,
    /// The fallback models and where this run is among them.
    chain: failover::Chain,
    /// The output limit when the reply being acted on was cut off at it.
    cut_off: Option<u64>,
    /// The output limit the spending limit allows the request under way, when lower.
    output_limit: Option<u64>,
}

enum Outcome {
    /// The call produced a result.
    Done(ToolResultMessage, Option<Value>),
    /// A tool failed fatally: the run ends.
    Fatal(ToolResultMessage, String),
}

impl Agent {
    /// An agent with an empty conversation.
    pub fn new(
        provider: Arc<dyn Provider>,
        config: AgentConfig,
        system_prompt: String,
        tools: Vec<Arc<dyn AgentTool>>,
    ) -> Self {
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self {
            provider,
            config,
            system_prompt,
            fixed: tools.clone(),
            sources: Vec::new(),
            tools,
            specs,
            hooks: Vec::new(),
            transforms: Vec::new(),
            messages: Vec::new(),
            memo: rab_ai::RequestMemo::new(),
            queues: Queues::default(),
            compactor: None,
            view: None,
            spent: 0.0,
            frame: Frame::default(),
            loops: loops::LoopGuard::new(loops::LoopDetection::default()),
            looped: None,
            chain: failover::Chain::default(),
            cut_off: None,
            output_limit: None,
        }
    }

    /// When a run counts as a runaway loop (on by default).
    pub fn set_loop_detection(&mut self, detection: LoopDetection) {
        self.loops = loops::LoopGuard::new(detection);
    }

    /// Keeps the conversation inside the context window with this compactor.
    pub fn set_compactor(&mut self, compactor: Arc<dyn Compactor>) {
        self.compactor = Some(compactor);
    }

    /// Sends tools through a progressive view (stubs until `tool_search` expands them).
    pub fn set_tool_view(&mut self, view: Arc<ToolView>) {
        self.view = Some(view);
    }

    /// Adds tools that can change while the agent lives (an MCP server that is still
    /// starting, or whose tool list changes). They are read before every request; a
    /// source's tool whose name is already taken is left out.
    pub fn add_tool_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push((source, None));
        self.refresh_tools();
    }

    /// Re-reads the tool sources whose version changed.
    pub fn refresh_tools(&mut self) {
        let mut is_changed = false;
        for (source, seen) in &mut self.sources {
            let now = source.version();
            if *seen != Some(now) {
                *seen = Some(now);
                is_changed = true;
            }
        }
        if !is_changed {
            return;
        }
        let mut tools = self.fixed.clone();
        let mut specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec()).collect();
        for (source, _) in &self.sources {
            for tool in source.tools() {
                let spec = tool.spec();
                if specs.iter().any(|s| s.name == spec.name) {
                    debug!(tool = %spec.name, "tool name taken; source tool left out");
                    continue;
                }
                specs.push(spec);
                tools.push(tool);
            }
        }
        if let Some(view) = &self.view {
            view.update(&specs);
        }
        self.tools = tools;
        self.specs = specs;
    }

    /// The tools.
    pub fn tools(&self) -> &[Arc<dyn AgentTool>] {
        &self.tools
    }

    /// The specs the next request carries (stubs for deferred tools).
    pub fn request_specs(&self) -> Vec<ToolSpec> {
        let usable = self.usable_specs();
        spec_refs(usable, self.view.as_deref()).into_iter().cloned().collect()
    }

    /// The tools the current model can be offered now: a provider-side tool (web
    /// search) only where its provider runs one that keeps to the rules, a tool of a
    /// state (`exit_plan_mode`) only in that state.
    pub(crate) fn usable_specs(&self) -> Vec<&ToolSpec> {
        usable_specs(&self.specs, &self.tools, &self.config.model)
    }

    /// Dollars spent so far by this agent.
    pub fn spent(&self) -> f64 {
        self.spent
    }

    /// Sets what this agent had spent before it was made (a resumed or reloaded
    /// session's earlier requests), without counting it in the ledger again.
    pub fn restore_spent(&mut self, dollars: f64) {
        self.spent = dollars;
    }

    /// Counts dollars spent on this agent's behalf outside its runs (a handoff's
    /// summary) against the budget.
    pub fn add_spent(&mut self, dollars: f64) {
        self.spent += dollars;
        if let Some(spend) = &self.config.spend {
            spend.record(
                &self.config.model.id,
                &rab_ai::Usage::default(),
                dollars,
                crate::ledger::Reservation::none(),
            );
        }
    }

    /// Compacts the conversation now (`/compact`); emits the compaction events.
    pub async fn compact(
        &mut self,
        reason: CompactReason,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<bool, String> {
        self.run_compaction(reason, sink, cancel).await
    }

    /// Adds a hook around every tool call.
    pub fn add_hook(&mut self, hook: Arc<dyn ToolHook>) {
        self.hooks.push(hook);
    }

    /// Adds a transform of the messages each request sends (after those added before).
    pub fn add_transform(&mut self, transform: Arc<dyn ContextTransform>) {
        self.transforms.push(transform);
    }

    /// What the transforms make of the conversation for the next request; `None` when
    /// there are none or none changed it. A result that cannot be sent is passed over
    /// with a warning in the log.
    async fn transformed(&self, cancel: &CancellationToken) -> Option<Vec<Message>> {
        let mut current: Option<Vec<Message>> = None;
        for (i, t) in self.transforms.iter().enumerate() {
            let input = current.as_deref().unwrap_or(&self.messages);
            let Some(next) = t.transform(input, cancel).await else { continue };
            match crate::hooks::unsendable(&next) {
                // A conversation already unsendable is not the transform's doing.
                Some(why) if crate::hooks::unsendable(input).is_none() => {
                    tracing::warn!("context transform {i} ignored: {why}");
                }
                Some(_) | None => current = Some(next),
            }
        }
        current
    }

    /// Uses queues created beforehand (so tools or a UI can hold them first).
    pub fn with_queues(mut self, queues: Queues) -> Self {
        self.queues = queues;
        self
    }

    /// The queues, for steering and follow-ups from other tasks.
    pub fn queues(&self) -> Queues {
        self.queues.clone()
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Replaces the conversation (resuming a session).
    pub fn set_messages(&mut self, messages: Vec<Message>) {
        self.messages = messages;
        self.memo = rab_ai::RequestMemo::new();
    }

    /// The tool specs sent with every request.
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Mutable access to the configuration (model switch, thinking level).
    pub fn config_mut(&mut self) -> &mut AgentConfig {
        &mut self.config
    }

    /// Runs until the model stops (and follow-ups are used up), the turn limit is
    /// reached, an error occurs or `cancel` fires.
    pub async fn run(
        &mut self,
        prompts: Vec<Message>,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> StopCause {
        let span = info_span!("agent_run", model = %self.config.model.id);
        let _enter = span.enter();
        let stop = match self.run_inner(prompts, sink, &cancel).await {
            Ok(stop) => stop,
            Err(message) => StopCause::Error { message },
        };
        // A failed sink cannot record the end either; the caller learns it from `stop`.
        let _ = sink.emit(AgentEvent::AgentEnd { stop: stop.clone() });
        stop
    }

    fn push(&mut self, message: Message, sink: &mut dyn EventSink) -> Result<(), String> {
        sink.emit(AgentEvent::MessageEnd { message: message.clone() })?;
        self.messages.push(message);
        Ok(())
    }

    async fn run_inner(
        &mut self,
        prompts: Vec<Message>,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<StopCause, String> {
        sink.emit(AgentEvent::AgentStart)?;
        self.loops.reset();
        self.restore_primary();
        if let Some(message) = self.oversized_prompt(&prompts) {
            // Refused before it is recorded: a session holding it could never continue.
            sink.emit(AgentEvent::Error { message: message.clone() })?;
            return Ok(StopCause::Error { message });
        }
        // A changed thinking level goes in before the user's message (where OpenAI
        // wants a `configuration_update`), so the earlier requests' prefix holds.
        let has_history = !self.messages.is_empty();
        if let Some(change) = self.frame.level_change(self.config.options.thinking, has_history) {
            self.push(Message::System(change), sink)?;
        }
        for p in prompts {
            self.push(p, sink)?;
        }
        let mut turn = 0u32;
        let mut continued = false;
        loop {
            loop {
                if cancel.is_cancelled() {
                    return Ok(StopCause::Aborted);
                }
                if let Some(limit) = self.config.max_turns
                    && turn >= limit
                {
                    return Ok(StopCause::MaxTurns { limit });
                }
                turn += 1;
                sink.emit(AgentEvent::TurnStart { turn })?;
                self.compact_if_needed(sink, cancel).await?;
                let reserved = match self.reserve_request(cancel).await {
                    Ok(reserved) => reserved,
                    Err(stop) => {
                        sink.emit(AgentEvent::TurnEnd { turn })?;
                        return Ok(stop);
                    }
                };
                // Under a spending limit, the output limit its reservation allows.
                self.output_limit = reserved.max_tokens();
                let (mut assistant, mut error) = self.stream_reply(sink, cancel).await?;
                if error.as_ref().is_some_and(rab_ai::Error::is_context_overflow)
                    && assistant.content.is_empty()
                    && self.compactor.is_some()
                    && self.run_compaction(CompactReason::Overflow, sink, cancel).await?
                {
                    // Compacted after the provider said the request does not fit: one retry.
                    (assistant, error) = self.stream_reply(sink, cancel).await?;
                }
                while let Some(e) = &error
                    && self.fail_over(e, sink)?
                {
                    // What the failed model streamed is dropped: the reply starts again.
                    (assistant, error) = self.stream_reply(sink, cancel).await?;
                }
                self.record_spend(&assistant.usage, reserved);
                let error = error.map(|e| e.to_string());
                let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
                let stop_reason = assistant.stop_reason;
                if !assistant.content.is_empty() || error.is_none() {
                    self.push(Message::Assistant(assistant), sink)?;
                }
                sink.emit(AgentEvent::Usage { usage: self.last_usage() })?;
                let looping = self.looped.take().or_else(|| self.loops.reply(&calls));
                if let Some(what) = looping {
                    let text = format!("not run: rab stopped a loop ({what})");
                    self.finish_calls(&calls, &text, sink)?;
                    sink.emit(AgentEvent::TurnEnd { turn })?;
                    return Ok(StopCause::Loop { message: what });
                }
                if stop_reason == StopReason::Aborted {
                    self.finish_calls(&calls, ABORTED, sink)?;
                    sink.emit(AgentEvent::TurnEnd { turn })?;
                    return Ok(StopCause::Aborted);
                }
                if let Some(message) = error {
                    sink.emit(AgentEvent::Error { message: message.clone() })?;
                    sink.emit(AgentEvent::TurnEnd { turn })?;
                    return Ok(StopCause::Error { message });
                }
                self.cut_off = (stop_reason == StopReason::Length).then(|| {
                    self.output_limit.unwrap_or_else(|| {
                        rab_ai::max_tokens(&self.config.model, &self.config.options)
                    })
                });
                if let (Some(max_tokens), true) = (self.cut_off, calls.is_empty()) {
                    // Cut off mid-answer: asked once to go on, then its own outcome.
                    sink.emit(AgentEvent::TurnEnd { turn })?;
                    if continued {
                        return Ok(StopCause::Length { max_tokens });
                    }
                    continued = true;
                    self.push(Message::user(continue_text(max_tokens)), sink)?;
                    continue;
                }
                if let Some(stop) = self.run_calls(&calls, sink, cancel).await? {
                    sink.emit(AgentEvent::TurnEnd { turn })?;
                    return Ok(stop);
                }
                sink.emit(AgentEvent::TurnEnd { turn })?;
                let steering = self.queues.take_steering(self.config.steering_mode);
                let steered = !steering.is_empty();
                for m in steering {
                    self.push(m, sink)?;
                }
                if !steered && calls.is_empty() {
                    break;
                }
            }
            let follow_ups = self.queues.take_follow_up(self.config.follow_up_mode);
            if follow_ups.is_empty() {
                return Ok(StopCause::Done);
            }
            for m in follow_ups {
                self.push(m, sink)?;
            }
        }
    }

    /// Why `prompts` cannot be sent: alone they are larger than the model's input limit
    /// (its window, or less where the provider says so), so
    /// no compaction of earlier turns could make them fit. (Only the prompt is counted:
    /// a conversation that outgrows the window is the compactor's, and the provider's
    /// overflow error its backstop.)
    fn oversized_prompt(&self, prompts: &[Message]) -> Option<String> {
        let window = self.config.model.input_limit();
        let chars: usize = prompts.iter().map(message_chars).sum();
        let tokens = estimate_text_tokens(chars);
        (window > 0 && tokens > window).then(|| {
            format!(
                "prompt is ~{tokens} tokens, the model takes {window} ({}); shorten it, or save \
                 it to a file and ask for it to be read in parts",
                self.config.model.id
            )
        })
    }

    /// Compacts before a request that would not leave the reserve free.
    async fn compact_if_needed(
        &mut self,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let Some(c) = &self.compactor else { return Ok(()) };
        if c.needs_compaction(&self.messages, &self.config.model).is_none() {
            return Ok(());
        }
        self.run_compaction(CompactReason::Threshold, sink, cancel).await.map(|_| ())
    }

    /// Runs the compactor; `Ok(true)` when the conversation was replaced.
    async fn run_compaction(
        &mut self,
        reason: CompactReason,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<bool, String> {
        let Some(c) = self.compactor.clone() else { return Ok(false) };
        let tokens = estimate_context_tokens(&self.messages);
        sink.emit(AgentEvent::CompactionStart { reason: reason.clone(), tokens })?;
        match c
            .compact(&self.messages, &self.config.model, &self.config.options, reason, cancel)
            .await
        {
            Ok(done) => {
                sink.emit(AgentEvent::CompactionEnd {
                    summary: done.summary.clone(),
                    first_kept: done.first_kept,
                    tokens_before: done.tokens_before,
                    tokens_after: done.tokens_after,
                    is_fallback: done.is_fallback,
                    usage: done.usage,
                })?;
                self.record_spend(&done.usage, crate::ledger::Reservation::none());
                let old = std::mem::replace(&mut self.messages, done.messages);
                self.memo = rab_ai::RequestMemo::new();
                self.frame.carry_notes(&old, &self.messages);
                Ok(true)
            }
            Err(e) => {
                sink.emit(AgentEvent::CompactionFailed {
                    message: e.message,
                    is_disabled: e.is_disabled,
                })?;
                Ok(false)
            }
        }
    }

    /// Streams one reply. Returns the message (partial on failure; tool calls of a
    /// failed reply are dropped, since they must not run) and the error, if any.
    async fn stream_reply(
        &mut self,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<(AssistantMessage, Option<rab_ai::Error>), String> {
        self.refresh_tools();
        self.record_changes(sink)?;
        // The adapter serialises the context before `stream` returns, so the history is
        // lent to it rather than copied.
        let transformed = self.transformed(cancel).await;
        let lent = transformed.is_none();
        let context = Context {
            system_prompt: std::mem::take(&mut self.system_prompt),
            messages: transformed.unwrap_or_else(|| std::mem::take(&mut self.messages)),
            tools: self.frame.tools.take().unwrap_or_default(),
            // A transformed history is another one each time.
            memo: lent.then(|| self.memo.clone()),
        };
        let stream_cancel = cancel.child_token();
        // Under a spending limit, the reservation's output limit is a hard cap (an
        // adapter must not grow it to make room for thinking).
        let limited;
        let options = match self.output_limit {
            Some(limit) => {
                limited = rab_ai::StreamOptions {
                    output_cap: Some(limit),
                    ..self.config.options.clone()
                };
                &limited
            }
            None => &self.config.options,
        };
        let mut stream =
            self.provider.stream(&self.config.model, &context, options, stream_cancel.clone());
        self.loops.start_reply();
        self.system_prompt = context.system_prompt;
        if lent {
            self.messages = context.messages;
        }
        self.frame.tools = Some(context.tools);
        while let Some(event) = stream.next().await {
            match event {
                StreamEvent::TextDelta { delta, .. } => {
                    if let Some(what) = self.loops.text(&delta) {
                        // A stuck model would stream until its token limit: cut it off.
                        self.looped = Some(what);
                        stream_cancel.cancel();
                    }
                    sink.emit(AgentEvent::TextDelta { delta })?
                }
                StreamEvent::ThinkingDelta { delta, .. } => {
                    sink.emit(AgentEvent::ThinkingDelta { delta })?
                }
                StreamEvent::Retry { attempt, delay, error, discarded } => {
                    if discarded {
                        self.loops.start_reply();
                    }
                    sink.emit(AgentEvent::Retry {
                        attempt,
                        delay,
                        message: error.to_string(),
                        discarded,
                    })?
                }
                StreamEvent::Waiting { waited, first } => {
                    sink.emit(AgentEvent::Waiting { seconds: waited.as_secs(), first })?
                }
                StreamEvent::WebSearch { search, .. } => {
                    sink.emit(AgentEvent::WebSearch { search })?
                }
                StreamEvent::ToolCallStart { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage(_) => {}
                StreamEvent::Done(message) => return Ok((message, None)),
                StreamEvent::Error { error, mut partial } => {
                    if partial.stop_reason != StopReason::Aborted {
                        partial
                            .content
                            .retain(|b| !matches!(b, rab_ai::AssistantBlock::ToolCall(_)));
                        return Ok((partial, Some(error)));
                    }
                    return Ok((partial, None));
                }
            }
        }
        Err("the provider stream ended without a final event".to_owned())
    }

    /// Gives every call the same result text (aborted, skipped), in order.
    fn finish_calls(
        &mut self,
        calls: &[ToolCall],
        text: &str,
        sink: &mut dyn EventSink,
    ) -> Result<(), String> {
        for call in calls {
            let result = error_result(call, text);
            self.push_result(result, None, 0, sink)?;
        }
        Ok(())
    }

    fn push_result(
        &mut self,
        result: ToolResultMessage,
        details: Option<Value>,
        duration_ms: u64,
        sink: &mut dyn EventSink,
    ) -> Result<(), String> {
        let mut result = result;
        crate::compaction::fit_result(&mut result, &self.config.model);
        sink.emit(AgentEvent::ToolResult { result: result.clone(), details, duration_ms })?;
        self.messages.push(Message::ToolResult(result));
        Ok(())
    }
}

/// An error result for a call.
pub fn error_result(call: &ToolCall, text: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(text)],
        is_error: true,
    }
}

mod budget;
mod calls;
mod failover;
mod frame;
mod loops;
pub use failover::Fallback;
use frame::Frame;
pub use loops::LoopDetection;

/// The message that asks the model to go on after its reply hit the output limit.
pub const CONTINUE_PREFIX: &str = "[rab: your reply was cut off at the output limit";

fn continue_text(max_tokens: u64) -> String {
    format!(
        "{CONTINUE_PREFIX} ({max_tokens} tokens). Continue exactly where it stopped, without \
         repeating what you already wrote.]"
    )
}

/// The specs of `tools` the `model` can be offered now (see [`Agent::usable_specs`]);
/// a free function so that a caller can hold them while it changes other fields.
pub(crate) fn usable_specs<'a>(
    specs: &'a [ToolSpec],
    tools: &[Arc<dyn AgentTool>],
    model: &rab_ai::Model,
) -> Vec<&'a ToolSpec> {
    specs
        .iter()
        .zip(tools)
        .filter(|(s, t)| t.offered() && rab_ai::search_unavailable(model, s).is_none())
        .map(|(s, _)| s)
        .collect()
}

/// The usable specs a request offers in full: deferred ones left out (see
/// [`ToolView::specs`]).
pub(crate) fn spec_refs<'a>(
    usable: Vec<&'a ToolSpec>,
    view: Option<&ToolView>,
) -> Vec<&'a ToolSpec> {
    match view {
        Some(view) => view.specs(&usable),
        None => usable,
    }
}

#[cfg(test)]
mod tests;
