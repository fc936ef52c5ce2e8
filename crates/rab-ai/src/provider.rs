//! The [`Provider`] trait the agent loop depends on, the options of one request, and the
//! crate-internal interface each wire-format adapter implements.

use std::pin::Pin;

use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use crate::assemble::Builder;
use crate::event::StreamEvent;
use crate::model::Model;
use crate::retry::RetryPolicy;
use crate::sse::SseEvent;
use crate::types::{Context, ThinkingLevel};

/// A stream of response events, ending with `Done` or `Error`.
pub type EventStream = Pin<Box<dyn Stream<Item = StreamEvent> + Send>>;

/// The one thing the agent loop needs from a model backend.
pub trait Provider: Send + Sync {
    /// Starts a streamed request. Failures arrive as a final [`StreamEvent::Error`];
    /// cancelling `cancel` ends the stream with [`crate::Error::Aborted`].
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        cancel: CancellationToken,
    ) -> EventStream;
}

/// Options of one request besides the model and the context.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    /// API key; `None` sends no credentials (local servers).
    pub api_key: Option<String>,
    /// Extended thinking level; ignored by models without reasoning.
    pub thinking: ThinkingLevel,
    /// Output-token limit; defaults to the model's (capped for latency).
    pub max_tokens: Option<u64>,
    /// A hard limit on the output a request may bill (a spending limit's): no adapter
    /// sends a larger limit, not even to make room for thinking.
    pub output_cap: Option<u64>,
    /// Sampling temperature; not sent with thinking on providers that reject it.
    pub temperature: Option<f32>,
    /// Stable id of the conversation, used as OpenAI's `prompt_cache_key`.
    pub session_id: Option<String>,
    /// Where the key comes from, for 401/403 errors, e.g.
    /// `set ANTHROPIC_API_KEY or run rab with --api-key`.
    pub auth_hint: Option<String>,
    /// Retry policy for failed requests and broken streams.
    pub retry: RetryPolicy,
    /// How long a request may stay silent.
    pub timeouts: crate::retry::Timeouts,
    /// Where `api_key` comes from when it is a token that expires (a subscription
    /// sign-in): asked for the current key before each request, and once for a fresh
    /// one when the server answers 401.
    pub credential: Option<std::sync::Arc<dyn KeySource>>,
}

/// A key that expires and is renewed (an OAuth access token).
pub trait KeySource: Send + Sync + std::fmt::Debug {
    /// The provider the key is for (a request to another provider leaves it alone).
    fn provider(&self) -> &str;
    /// The key to send now, renewed first when it is about to expire.
    fn current(&self) -> futures_util::future::BoxFuture<'_, Result<String, String>>;
    /// The server refused `rejected`: a renewed key, or why there is none (the sign-in
    /// was revoked: sign in again).
    fn refresh<'a>(
        &'a self,
        rejected: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<String, String>>;
}

/// An HTTP request ready to send (and to send again on retry).
#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    /// Shared, so each attempt (and retry) hands the same bytes to the client.
    pub body: bytes::Bytes,
    /// Fingerprint of the request's prefix, recorded on the reply (wire formats that
    /// bind thinking to it).
    pub prefix_hash: Option<String>,
}

/// What went wrong while decoding one wire format.
#[derive(Debug, Clone)]
pub(crate) enum WireError {
    /// The data was not in the documented format.
    Protocol(String),
    /// The provider sent an error event.
    Api { code: Option<String>, message: String },
    /// The stream ended before the provider's terminal event.
    Incomplete(String),
}

/// Translates rab types into one wire format and back.
pub(crate) trait Wire: Send + Sync {
    /// Builds the request body, URL and headers.
    fn build(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> Result<HttpRequest, String>;

    /// A fresh decoder for one response.
    fn decoder(&self) -> Box<dyn Decoder>;
}

/// Turns the SSE events of one response into builder calls.
pub(crate) trait Decoder: Send {
    /// Handles one event.
    fn event(&mut self, event: SseEvent<'_>, out: &mut Builder) -> Result<(), WireError>;
    /// The byte stream ended; fails when the response was not complete.
    fn end(&mut self, out: &mut Builder) -> Result<(), WireError>;
}

/// Parses a JSON payload, naming the event and showing the start of the data on failure.
pub(crate) fn parse_json<'a, T: serde::Deserialize<'a>>(
    what: &str,
    data: &'a str,
) -> Result<T, WireError> {
    serde_json::from_str(data).map_err(|e| {
        let shown: String = data.chars().take(200).collect();
        WireError::Protocol(format!("invalid JSON in {what}: {e}; data: {shown}"))
    })
}

/// Most content blocks (or output items) one response may number: a stream naming a
/// higher index is refused, since the decoders keep a slot per index and a hostile or
/// broken server could otherwise make them allocate without bound.
pub(crate) const MAX_STREAM_INDEX: usize = 4096;

/// Checks a block or item index from the stream against [`MAX_STREAM_INDEX`].
pub(crate) fn stream_index(what: &str, index: usize) -> Result<usize, WireError> {
    if index < MAX_STREAM_INDEX {
        Ok(index)
    } else {
        Err(WireError::Protocol(format!(
            "{what} index {index} is out of range (at most {MAX_STREAM_INDEX} per response)"
        )))
    }
}

/// Joins a base URL and a path without doubling slashes.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// The output-token limit of a request: the caller's, else the model's capped at 32k
/// (larger defaults make some providers reserve capacity and answer more slowly).
pub fn max_tokens(model: &Model, options: &StreamOptions) -> u64 {
    let wanted = options.max_tokens.unwrap_or(model.max_output.min(32_000));
    wanted.min(options.output_cap.unwrap_or(u64::MAX)).max(1)
}
