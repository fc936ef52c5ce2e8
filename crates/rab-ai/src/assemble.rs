//! Builds an [`AssistantMessage`] from wire-format pieces and queues the matching
//! [`StreamEvent`]s. Every adapter's decoder feeds one of these, so the event contract
//! (indices, start/delta/end order, argument parsing) is the same for all wire formats.

use serde_json::Value;

use crate::event::StreamEvent;
use crate::model::Model;
use crate::types::{
    AssistantBlock, AssistantMessage, Citation, StopReason, ToolCall, Usage, WebSearch,
};

/// Accumulates one response.
#[derive(Debug)]
pub struct Builder {
    message: AssistantMessage,
    events: Vec<StreamEvent>,
    /// Raw argument text of each block that is an unfinished tool call.
    open_args: Vec<Option<String>>,
    has_content: bool,
    stop_reason: Option<StopReason>,
}

impl Builder {
    /// A builder for a response from `model`.
    pub fn new(model: &Model) -> Self {
        Self {
            message: AssistantMessage::empty(model.api, &model.provider, &model.id),
            events: Vec::new(),
            open_args: Vec::new(),
            has_content: false,
            stop_reason: None,
        }
    }

    /// Whether any text, thinking or tool call has been produced (a retry would repeat it).
    pub fn has_content(&self) -> bool {
        self.has_content
    }

    /// Takes the events queued since the last call.
    pub fn take_events(&mut self) -> std::vec::Drain<'_, StreamEvent> {
        self.events.drain(..)
    }

    fn push_block(&mut self, block: AssistantBlock) -> usize {
        self.message.content.push(block);
        self.open_args.push(None);
        self.message.content.len() - 1
    }

    /// Opens a text block and returns its index.
    pub fn start_text(&mut self) -> usize {
        self.push_block(AssistantBlock::text(String::new()))
    }

    /// Appends text to the block at `index`.
    pub fn text(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantBlock::Text { text, .. }) = self.message.content.get_mut(index) {
            text.push_str(delta);
            self.has_content = true;
            self.events.push(StreamEvent::TextDelta { index, delta: delta.to_owned() });
        }
    }

    /// Labels the text block at `index` with the provider's phase.
    pub fn text_phase(&mut self, index: usize, label: &str) {
        if let Some(AssistantBlock::Text { phase, .. }) = self.message.content.get_mut(index) {
            *phase = Some(label.to_owned());
        }
    }

    /// Opens a thinking block and returns its index.
    pub fn start_thinking(&mut self) -> usize {
        self.push_block(AssistantBlock::Thinking {
            thinking: String::new(),
            signature: None,
            item_id: None,
            redacted: false,
        })
    }

    /// Appends reasoning text to the block at `index`.
    pub fn thinking(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantBlock::Thinking { thinking, .. }) = self.message.content.get_mut(index)
        {
            thinking.push_str(delta);
            self.has_content = true;
            self.events.push(StreamEvent::ThinkingDelta { index, delta: delta.to_owned() });
        }
    }

    /// Appends to the signature of the block at `index` (thinking, text or tool call).
    pub fn signature(&mut self, index: usize, part: &str) {
        let slot = match self.message.content.get_mut(index) {
            Some(AssistantBlock::Thinking { signature, .. })
            | Some(AssistantBlock::Text { signature, .. }) => signature,
            Some(AssistantBlock::ToolCall(call)) => &mut call.signature,
            Some(AssistantBlock::WebSearch(_)) | None => return,
        };
        slot.get_or_insert_with(String::new).push_str(part);
    }

    /// Sets the provider item id and redaction flag of a thinking block.
    pub fn thinking_meta(&mut self, index: usize, id: Option<&str>, is_redacted: bool) {
        if let Some(AssistantBlock::Thinking { item_id, redacted, .. }) =
            self.message.content.get_mut(index)
        {
            if let Some(id) = id {
                *item_id = Some(id.to_owned());
            }
            *redacted = is_redacted;
            self.has_content = true;
        }
    }

    /// Replaces the text of a thinking block (used when the provider sends the final
    /// summary only in its closing event).
    pub fn set_thinking(&mut self, index: usize, full: &str) {
        if let Some(AssistantBlock::Thinking { thinking, .. }) = self.message.content.get_mut(index)
            && thinking.is_empty()
            && !full.is_empty()
        {
            thinking.push_str(full);
            self.has_content = true;
            self.events.push(StreamEvent::ThinkingDelta { index, delta: full.to_owned() });
        }
    }

    /// Opens a tool call and returns its block index.
    pub fn start_tool(&mut self, id: &str, name: &str) -> usize {
        let index = self.push_block(AssistantBlock::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: Value::Object(Default::default()),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
        self.open_args[index] = Some(String::new());
        self.has_content = true;
        self.events.push(StreamEvent::ToolCallStart {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
        });
        index
    }

    /// Sets the provider item id of a tool call.
    pub fn tool_item_id(&mut self, index: usize, id: &str) {
        if let Some(AssistantBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            call.item_id = Some(id.to_owned());
        }
    }

    /// Fills in a name or id that arrived after the call started (some servers send
    /// them on a later fragment).
    pub fn tool_identity(&mut self, index: usize, id: &str, name: &str) {
        if let Some(AssistantBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            if call.id.is_empty() && !id.is_empty() {
                call.id = id.to_owned();
            }
            if call.name.is_empty() && !name.is_empty() {
                call.name = name.to_owned();
            }
        }
    }

    /// Appends argument text to an open tool call.
    pub fn tool_args(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(Some(args)) = self.open_args.get_mut(index) {
            args.push_str(delta);
            self.events.push(StreamEvent::ToolCallDelta { index, delta: delta.to_owned() });
        }
    }

    /// Replaces the argument text of an open tool call when the provider's final event
    /// carries the complete arguments and they differ from the deltas.
    pub fn tool_args_final(&mut self, index: usize, full: &str) {
        if let Some(Some(args)) = self.open_args.get_mut(index)
            && args != full
        {
            if full.starts_with(args.as_str()) {
                let rest = full[args.len()..].to_owned();
                self.tool_args(index, &rest);
            } else {
                *args = full.to_owned();
            }
        }
    }

    /// Whether the block at `index` is a tool call still receiving arguments.
    pub fn is_tool_open(&self, index: usize) -> bool {
        matches!(self.open_args.get(index), Some(Some(_)))
    }

    /// Closes a tool call: parses its arguments and queues `ToolCallEnd`.
    pub fn end_tool(&mut self, index: usize) {
        let Some(raw) = self.open_args.get_mut(index).and_then(Option::take) else {
            return;
        };
        let Some(AssistantBlock::ToolCall(call)) = self.message.content.get_mut(index) else {
            return;
        };
        if !raw.trim().is_empty() {
            match serde_json::from_str::<Value>(&raw) {
                Ok(v @ Value::Object(_)) => call.arguments = v,
                Ok(_) | Err(_) => call.invalid_arguments = Some(raw),
            }
        }
        self.events.push(StreamEvent::ToolCallEnd { index, call: call.clone() });
    }

    /// Opens a web search block (its query and results still to come) and returns its
    /// index.
    pub fn start_search(&mut self, id: &str) -> usize {
        self.push_block(AssistantBlock::WebSearch(WebSearch {
            id: id.to_owned(),
            ..WebSearch::default()
        }))
    }

    /// The web search block at `index`, to fill in.
    pub fn search_at(&mut self, index: usize) -> Option<&mut WebSearch> {
        match self.message.content.get_mut(index) {
            Some(AssistantBlock::WebSearch(search)) => Some(search),
            _ => None,
        }
    }

    /// The index of the web search block with provider id `id`.
    pub fn search_index(&self, id: &str) -> Option<usize> {
        self.message
            .content
            .iter()
            .rposition(|b| matches!(b, AssistantBlock::WebSearch(s) if s.id == id))
    }

    /// The web search at `index` is complete: reports it.
    pub fn search_done(&mut self, index: usize) {
        if let Some(AssistantBlock::WebSearch(search)) = self.message.content.get(index) {
            self.has_content = true;
            self.events.push(StreamEvent::WebSearch { index, search: search.clone() });
        }
    }

    /// Records a complete web search and returns its index.
    pub fn web_search(&mut self, search: WebSearch) -> usize {
        let index = self.push_block(AssistantBlock::WebSearch(search));
        self.search_done(index);
        index
    }

    /// Adds a citation to the text block at `index` (the same page once).
    pub fn cite(&mut self, index: usize, citation: Citation) {
        if let Some(AssistantBlock::Text { citations, .. }) = self.message.content.get_mut(index)
            && !citations
                .iter()
                .any(|c| c.url == citation.url && c.cited_text == citation.cited_text)
        {
            citations.push(citation);
        }
    }

    /// The index of the last text block, if any.
    pub fn last_text(&self) -> Option<usize> {
        self.message.content.iter().rposition(|b| matches!(b, AssistantBlock::Text { .. }))
    }

    /// Records usage; fields the provider left at zero keep their earlier value.
    pub fn usage(&mut self, usage: Usage) {
        let u = &mut self.message.usage;
        let merge = |old: &mut u64, new: u64| {
            if new != 0 {
                *old = new;
            }
        };
        merge(&mut u.input, usage.input);
        merge(&mut u.output, usage.output);
        merge(&mut u.cache_read, usage.cache_read);
        merge(&mut u.cache_write, usage.cache_write);
        merge(&mut u.reasoning, usage.reasoning);
        merge(&mut u.web_searches, usage.web_searches);
        self.events.push(StreamEvent::Usage(self.message.usage));
    }

    /// Records the provider's stop reason.
    pub fn stop(&mut self, reason: StopReason) {
        self.stop_reason = Some(reason);
    }

    /// Records the fingerprint of the request's prefix on the reply.
    pub fn prefix_hash(&mut self, hash: Option<&str>) {
        self.message.prefix_hash = hash.map(str::to_owned);
    }

    /// Records the provider's response id.
    pub fn response_id(&mut self, id: &str) {
        if self.message.response_id.is_none() && !id.is_empty() {
            self.message.response_id = Some(id.to_owned());
        }
    }

    /// Closes open tool calls and returns the complete message. A tool call in the
    /// message overrides a plain `Stop` into `ToolUse`, as some servers report `stop`.
    pub fn finish(&mut self) -> AssistantMessage {
        for i in 0..self.open_args.len() {
            self.end_tool(i);
        }
        let mut reason = self.stop_reason.unwrap_or(StopReason::Stop);
        if reason == StopReason::Stop && self.message.tool_calls().next().is_some() {
            reason = StopReason::ToolUse;
        }
        self.message.stop_reason = reason;
        // Providers that do not count searches bill each one they ran (Gemini each
        // query of a grounded answer).
        if self.message.usage.web_searches == 0 {
            self.message.usage.web_searches = self
                .message
                .content
                .iter()
                .map(|b| match b {
                    AssistantBlock::WebSearch(s) if s.error.is_none() => s.queries.len().max(1),
                    _ => 0,
                })
                .sum::<usize>() as u64;
        }
        self.message.clone()
    }

    /// The message so far, marked as failed, for an `Error` event.
    pub fn partial(&mut self, reason: StopReason, error: &str) -> AssistantMessage {
        for slot in &mut self.open_args {
            *slot = None;
        }
        let mut message = self.message.clone();
        message.stop_reason = reason;
        message.error_message = Some(error.to_owned());
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, Model};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn model() -> Model {
        Model::custom("m", "p", Api::OpenaiCompletions, "http://x")
    }

    #[test]
    fn tool_arguments_are_parsed_at_the_end() {
        let mut b = Builder::new(&model());
        let i = b.start_tool("c1", "read");
        b.tool_args(i, "{\"pa");
        b.tool_args(i, "th\":\"a\"}");
        b.end_tool(i);
        let msg = b.finish();
        assert_eq!(msg.stop_reason, StopReason::ToolUse);
        let call = msg.tool_calls().next().unwrap();
        assert_eq!(call.arguments, json!({"path": "a"}));
        let kinds: Vec<_> = b
            .take_events()
            .map(|e| match e {
                StreamEvent::ToolCallStart { .. } => "start",
                StreamEvent::ToolCallDelta { .. } => "delta",
                StreamEvent::ToolCallEnd { .. } => "end",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["start", "delta", "delta", "end"]);
    }

    #[test]
    fn invalid_arguments_are_kept_raw() {
        let mut b = Builder::new(&model());
        let i = b.start_tool("c1", "read");
        b.tool_args(i, "{\"path\": ");
        let msg = b.finish();
        let call = msg.tool_calls().next().unwrap();
        assert_eq!(call.invalid_arguments.as_deref(), Some("{\"path\": "));
        assert_eq!(call.arguments, json!({}));
    }

    #[test]
    fn final_arguments_fill_in_missing_deltas() {
        let mut b = Builder::new(&model());
        let i = b.start_tool("c1", "read");
        b.tool_args(i, "{\"a\"");
        b.tool_args_final(i, "{\"a\":1}");
        let msg = b.finish();
        assert_eq!(msg.tool_calls().next().unwrap().arguments, json!({"a": 1}));
    }
}
