//! Events a provider stream yields while a response arrives.

use std::time::Duration;

use crate::error::Error;
use crate::types::{AssistantMessage, ToolCall, Usage, WebSearch};

/// One step of a streamed response. A stream ends with exactly one `Done` or `Error`.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible text for the block at `index` of the message.
    TextDelta {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// The new text.
        delta: String,
    },
    /// Reasoning text for the block at `index`.
    ThinkingDelta {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// The new reasoning text.
        delta: String,
    },
    /// The model started a tool call.
    ToolCallStart {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More of a tool call's JSON arguments.
    ToolCallDelta {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// The new argument text.
        delta: String,
    },
    /// A tool call is complete and its arguments are parsed.
    ToolCallEnd {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// The finished call.
        call: ToolCall,
    },
    /// The provider ran a web search (a server tool) and it is complete.
    WebSearch {
        /// Block index in [`AssistantMessage::content`].
        index: usize,
        /// What was searched for and found.
        search: WebSearch,
    },
    /// Token usage so far (providers report it at the start, the end, or both).
    Usage(Usage),
    /// The request failed, or its stream broke or turned malformed before the response
    /// was complete, and it will be tried again (nothing has been acted on yet).
    Retry {
        /// The attempt that is about to start (2 for the first retry).
        attempt: u32,
        /// How long rab waits first.
        delay: Duration,
        /// Why the previous attempt failed.
        error: Error,
        /// The failed attempt had streamed content: it is discarded, and the answer
        /// starts again from the beginning.
        discarded: bool,
    },
    /// Nothing has come for a while: no response yet (`first`), or no event since the
    /// last one. Sent every [`crate::Timeouts::notice`] while the wait lasts.
    Waiting {
        /// How long it has been.
        waited: Duration,
        /// Waiting for the response itself, not for its next event.
        first: bool,
    },
    /// The response is complete; `stop_reason` says why it ended.
    Done(AssistantMessage),
    /// The request failed; `partial` holds what arrived before the failure.
    Error {
        /// What went wrong.
        error: Error,
        /// Content received so far, with stop reason `Error` or `Aborted`.
        partial: AssistantMessage,
    },
}
