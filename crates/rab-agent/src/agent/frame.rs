//! What a conversation declared at its first request (its tools) and what changed
//! since: a request always carries the declared tools and the system prompt the
//! conversation began with, and each change (tools that arrived, were expanded or went
//! away, tools deferred later, instructions that changed, a new thinking level) becomes
//! a system message appended where it became true. So nothing the model saw is ever
//! rewritten: providers bind thinking to that prefix (Anthropic), and every prompt cache
//! keys on it.

use rab_ai::{Message, SystemMessage, ThinkingLevel, ToolSpec};

use super::Agent;
use crate::event::EventSink;
use crate::tool_view::{listed_deferred, same_tool};

/// A conversation's frame.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    /// The tools declared at the first request (`None` before it).
    pub tools: Option<Vec<ToolSpec>>,
    /// Instructions to send as a system message with the next request.
    pub note: Option<String>,
    /// The thinking level of the conversation's last request.
    pub level_sent: Option<ThinkingLevel>,
}

impl Frame {
    /// The system message for a thinking level that differs from the last request's
    /// (none for a conversation without history); remembers `level`.
    pub fn level_change(
        &mut self,
        level: ThinkingLevel,
        has_history: bool,
    ) -> Option<SystemMessage> {
        let before = self.level_sent.replace(level).filter(|l| *l != level && has_history)?;
        Some(SystemMessage { thinking: Some((before, level)), ..SystemMessage::default() })
    }

    /// After a compaction: instructions that only system messages of the summarised
    /// part carried (a new date, changed project instructions) go out again with the
    /// next request, since the system prompt is still the one the conversation began
    /// with. (Tools and deferred names are compared afresh anyway.)
    pub fn carry_notes(&mut self, before: &[Message], after: &[Message]) {
        let kept = |text: &String| {
            after.iter().any(|m| matches!(m, Message::System(s) if s.text == *text))
        };
        let lost: Vec<&String> = before
            .iter()
            .filter_map(|m| match m {
                Message::System(s) if !s.text.is_empty() && !kept(&s.text) => Some(&s.text),
                Message::User(_) | Message::Assistant(_) | Message::ToolResult(_) => None,
                Message::System(_) => None,
            })
            .collect();
        if lost.is_empty() {
            return;
        }
        let mut notes: Vec<String> = lost.into_iter().cloned().collect();
        notes.extend(self.note.take());
        notes.dedup();
        self.note = Some(notes.join("\n\n"));
    }

    /// The system message for what changed: `wanted` (the specs the next request would
    /// offer in full) against the tools in effect, deferred names not announced yet,
    /// and pending instructions. `None` when nothing changed.
    pub fn changes(
        &mut self,
        wanted: &[&ToolSpec],
        deferred: Vec<String>,
        messages: &[Message],
    ) -> Option<SystemMessage> {
        let mut change = SystemMessage {
            text: self.note.take().unwrap_or_default(),
            ..SystemMessage::default()
        };
        let declared = self.tools.as_deref().unwrap_or_default();
        let now = rab_ai::tools_in_effect(declared, messages);
        change.tools_added = wanted
            .iter()
            .filter(|w| !now.iter().any(|n| same_tool(w, n)))
            .map(|w| (*w).clone())
            .collect();
        change.tools_removed = now
            .iter()
            .filter(|n| !wanted.iter().any(|w| w.name == n.name))
            .map(|n| n.name.clone())
            .collect();
        let mut announced = listed_deferred(&now);
        for m in messages {
            if let Message::System(s) = m {
                announced.extend(s.tools_deferred.iter().cloned());
            }
        }
        change.tools_deferred = deferred.into_iter().filter(|d| !announced.contains(d)).collect();
        (!change.is_empty()).then_some(change)
    }
}

impl Agent {
    /// Declares the conversation's tools (what the next request would offer) unless
    /// they are declared already. Returns them when this call declared them, for the
    /// caller to record with the session.
    pub fn declare(&mut self) -> Option<Vec<ToolSpec>> {
        if self.frame.tools.is_some() {
            return None;
        }
        self.refresh_tools();
        let tools = self.declaration();
        self.frame.tools = Some(tools.clone());
        Some(tools)
    }

    /// The tools a conversation declares now: those sent in full, with the deferred
    /// ones named in `tool_search`'s description.
    fn declaration(&self) -> Vec<ToolSpec> {
        let mut tools = self.request_specs();
        crate::tool_view::list_deferred(&mut tools, &self.deferred());
        tools
    }

    fn deferred(&self) -> Vec<String> {
        self.view.as_ref().map(|v| v.deferred(&self.usable_specs())).unwrap_or_default()
    }

    /// The tools the conversation was declared with, if it was.
    pub fn declared_tools(&self) -> Option<&[ToolSpec]> {
        self.frame.tools.as_deref()
    }

    /// Sets the declared tools (resuming a session that recorded them), or forgets
    /// them (`None`: the next request declares anew).
    pub fn set_declared_tools(&mut self, tools: Option<Vec<ToolSpec>>) {
        self.frame.tools = tools;
    }

    /// Replaces the system prompt (resuming a session: the one it began with).
    pub fn set_system_prompt(&mut self, prompt: String) {
        self.system_prompt = prompt;
    }

    /// Sends `text` as a system message with the next request (instructions that
    /// changed since the conversation began); `None` sends none.
    pub fn set_note(&mut self, text: Option<String>) {
        self.frame.note = text;
    }

    /// Sets the thinking level the conversation's last request used (resuming).
    pub fn set_level_sent(&mut self, level: Option<ThinkingLevel>) {
        self.frame.level_sent = level;
    }

    /// Declares the tools at the conversation's first request; after that, appends the
    /// system message for what changed (see [`Frame::changes`]), recorded before the
    /// request that carries it.
    pub(super) fn record_changes(&mut self, sink: &mut dyn EventSink) -> Result<(), String> {
        if self.frame.tools.is_none() {
            self.frame.tools = Some(self.declaration());
        }
        // A tool the conversation has offered in full stays in full: a resumed session's
        // view starts with nothing expanded, and more tools can make a declared one
        // deferrable.
        if let (Some(view), Some(declared)) = (&self.view, &self.frame.tools) {
            let in_effect = rab_ai::tools_in_effect(declared, &self.messages);
            view.expand(in_effect.iter().map(|t| t.name.as_str()));
        }
        // Borrowed, not copied: this runs before every request.
        let deferred = self.deferred();
        let usable = super::usable_specs(&self.specs, &self.tools, &self.config.model);
        let wanted = super::spec_refs(usable, self.view.as_deref());
        match self.frame.changes(&wanted, deferred, &self.messages) {
            Some(change) => self.push(Message::System(change), sink),
            None => Ok(()),
        }
    }
}
