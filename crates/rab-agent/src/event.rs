//! Events the loop emits. Consumers match them exhaustively, so a new variant breaks
//! every consumer at compile time.

use std::time::Duration;

use rab_ai::{Message, ToolCall, ToolResultMessage, Usage};
use serde::Serialize;
use serde_json::Value;

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum StopCause {
    /// The model finished and no follow-up was queued.
    Done,
    /// `max_turns` requests were made and the model wanted another.
    MaxTurns {
        /// The limit.
        limit: u32,
    },
    /// The provider failed, a tool failed fatally, or the session could not be written.
    Error {
        /// What happened.
        message: String,
    },
    /// The next request would have crossed the spending limit.
    Budget {
        /// The limit in US dollars.
        limit: f64,
        /// Spent so far.
        spent: f64,
    },
    /// The run was cancelled.
    Aborted,
    /// The model repeated itself (the same tool calls reply after reply, or the same
    /// text over and over) and the run was stopped.
    Loop {
        /// What repeated.
        message: String,
    },
    /// The reply hit the output-token limit again after rab had asked the model once to
    /// continue where it was cut off.
    Length {
        /// The output limit of the requests.
        max_tokens: u64,
    },
}

/// One step of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AgentEvent {
    /// The run started.
    AgentStart,
    /// A model request is about to be sent.
    TurnStart {
        /// 1-based turn number within the run.
        turn: u32,
    },
    /// Visible text from the model.
    TextDelta {
        /// The new text.
        delta: String,
    },
    /// Reasoning text from the model.
    ThinkingDelta {
        /// The new text.
        delta: String,
    },
    /// The provider ran a web search for the model (a server tool); its results came
    /// with the response that follows.
    WebSearch {
        /// What was searched for and found.
        search: rab_ai::WebSearch,
    },
    /// A user or assistant message was added to the conversation. Written to the
    /// session before the loop acts on it.
    MessageEnd {
        /// The message.
        message: Message,
    },
    /// A tool call is about to run.
    ToolCall {
        /// The call.
        call: ToolCall,
    },
    /// Partial output of a running tool.
    ToolUpdate {
        /// The call.
        call_id: String,
        /// New output.
        chunk: String,
    },
    /// A tool result was added to the conversation (results come in the calls' order).
    ToolResult {
        /// The result as the model sees it.
        result: ToolResultMessage,
        /// Tool-specific data for the UI and the tape.
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// How long the tool ran.
        duration_ms: u64,
    },
    /// Token usage of the response just finished.
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// A request failed, or its stream broke before the response was complete, and it
    /// is tried again.
    Retry {
        /// The attempt about to start.
        attempt: u32,
        /// The wait before it.
        #[serde(serialize_with = "millis")]
        delay: Duration,
        /// Why the previous attempt failed.
        message: String,
        /// Text and thinking streamed by the failed attempt are discarded: the answer
        /// starts again (front ends mark what they showed).
        discarded: bool,
    },
    /// The model stayed out of capacity after retries (rate limited, overloaded, out of
    /// quota): the turn continues on the next fallback model. Text and thinking streamed
    /// by the failed attempt are discarded (front ends mark what they showed).
    Fallback {
        /// `provider/model` that failed.
        from: String,
        /// `provider/model` the turn continues on.
        to: String,
        /// Why the model failed.
        message: String,
        /// The new model's prices: spending is counted at them from now on.
        #[serde(skip)]
        cost: rab_ai::ModelCost,
    },
    /// The model has sent nothing for a while (repeated while the wait lasts): no
    /// response yet (`first`), or nothing since its last event.
    Waiting {
        /// Seconds waited so far.
        seconds: u64,
        /// Waiting for the response itself, not its next event.
        first: bool,
    },
    /// Compaction is about to run (automatic ones are announced before they start).
    CompactionStart {
        /// Why.
        reason: crate::compaction::CompactReason,
        /// Estimated tokens of the conversation.
        tokens: u64,
    },
    /// The conversation was compacted: recorded on the tape before the next request.
    CompactionEnd {
        /// The summary that replaces the older messages.
        summary: String,
        /// Index (in the messages before) of the first message kept verbatim.
        first_kept: usize,
        /// Estimated tokens before.
        tokens_before: u64,
        /// Estimated tokens after.
        tokens_after: u64,
        /// Summarising failed and older messages were dropped instead.
        is_fallback: bool,
        /// Tokens the summary request used.
        usage: Usage,
    },
    /// Compaction failed.
    CompactionFailed {
        /// Why.
        message: String,
        /// Automatic compaction is now off.
        is_disabled: bool,
    },
    /// The model request failed.
    Error {
        /// What happened.
        message: String,
    },
    /// Something the user must see that does not stop the run: a hook that failed.
    Notice {
        /// What happened, and why when known.
        message: String,
    },
    /// A turn (one response and its tool calls) ended.
    TurnEnd {
        /// The turn number.
        turn: u32,
    },
    /// The run ended.
    AgentEnd {
        /// Why.
        stop: StopCause,
    },
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

/// Receives events in order. An error (the session could not be written) stops the run:
/// nothing is acted on that was not recorded.
pub trait EventSink: Send {
    /// Handles one event.
    fn emit(&mut self, event: AgentEvent) -> Result<(), String>;
}

impl<F: FnMut(AgentEvent) -> Result<(), String> + Send> EventSink for F {
    fn emit(&mut self, event: AgentEvent) -> Result<(), String> {
        self(event)
    }
}
