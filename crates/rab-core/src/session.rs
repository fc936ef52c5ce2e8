//! `AgentSession`: the agent, its tape and its subscribers. Every event passes here;
//! messages and tool results are written to the tape first, then broadcast to every
//! subscriber (print mode, the UI, RPC clients).

use std::sync::Arc;

use rab_agent::{Agent, AgentConfig, AgentEvent, AgentTool, Queues, StopCause};
use rab_ai::{Message, Provider, ThinkingLevel, Usage};
use rab_session::{EntryBody, EntryKind, Tape};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
    agent: Agent,
    tape: Tape,
    subscribers: Vec<mpsc::UnboundedSender<AgentEvent>>,
    totals: Totals,
    thinking: ThinkingLevel,
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
        let mut agent = Agent::new(provider, config, system_prompt, tools);
        agent.set_messages(tape.messages());
        let session =
            Self { agent, tape, subscribers: Vec::new(), totals: Totals::default(), thinking };
        Ok((session, Resumed { repaired }))
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&mut self) -> mpsc::UnboundedReceiver<AgentEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers.push(tx);
        rx
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

    /// Usage and cost so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Switches the model (and its key) for the next run; the tape records the change
    /// when the next run starts. Thinking signatures of the old model are not replayed
    /// to the new one (the adapters drop them).
    pub fn set_model(
        &mut self,
        model: rab_ai::Model,
        api_key: Option<String>,
        auth_hint: Option<String>,
    ) {
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

    /// Tokens the last response saw (its whole input plus output): how full the
    /// context window is, as of the last turn.
    pub fn context_tokens(&self) -> u64 {
        self.agent
            .messages()
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) if a.usage.total() > 0 => Some(a.usage.total()),
                _ => None,
            })
            .unwrap_or(0)
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
        if let Err(e) = self.record_model() {
            let stop = StopCause::Error { message: e.to_string() };
            self.broadcast(&AgentEvent::AgentEnd { stop: stop.clone() });
            return stop;
        }
        let cost = self.agent.config().model.cost;
        let tape = &mut self.tape;
        let subscribers = &mut self.subscribers;
        let totals = &mut self.totals;
        let mut sink = |event: AgentEvent| -> Result<(), String> {
            record(tape, &event)?;
            if let AgentEvent::Usage { usage } = &event {
                add_usage(totals, usage, &cost);
            }
            subscribers.retain(|s| s.send(event.clone()).is_ok());
            Ok(())
        };
        self.agent.run(prompts, &mut sink, cancel).await
    }

    fn broadcast(&mut self, event: &AgentEvent) {
        self.subscribers.retain(|s| s.send(event.clone()).is_ok());
    }
}

fn add_usage(totals: &mut Totals, usage: &Usage, cost: &rab_ai::ModelCost) {
    let t = &mut totals.usage;
    t.input += usage.input;
    t.output += usage.output;
    t.cache_read += usage.cache_read;
    t.cache_write += usage.cache_write;
    t.reasoning += usage.reasoning;
    totals.cost += cost.of(usage);
    totals.turns += 1;
}

/// Writes what must survive a crash: every message and tool result.
fn record(tape: &mut Tape, event: &AgentEvent) -> Result<(), String> {
    let body = match event {
        AgentEvent::MessageEnd { message } => {
            EntryBody::Message { message: message.clone(), details: None }
        }
        AgentEvent::ToolResult { result, details, .. } => EntryBody::Message {
            message: Message::ToolResult(result.clone()),
            details: details.clone(),
        },
        AgentEvent::AgentStart
        | AgentEvent::TurnStart { .. }
        | AgentEvent::TextDelta { .. }
        | AgentEvent::ThinkingDelta { .. }
        | AgentEvent::ToolCall { .. }
        | AgentEvent::ToolUpdate { .. }
        | AgentEvent::Usage { .. }
        | AgentEvent::Retry { .. }
        | AgentEvent::Error { .. }
        | AgentEvent::TurnEnd { .. }
        | AgentEvent::AgentEnd { .. } => return Ok(()),
    };
    tape.append(body).map(|_| ()).map_err(|e| format!("cannot write the session: {e}"))
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
