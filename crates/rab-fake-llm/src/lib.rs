//! rab-fake-llm: a loopback HTTP server that speaks the four wire formats rab uses
//! (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Gemini), playing a
//! [`Script`] of turns. It records every request, rejects histories the real APIs
//! reject (a tool call without a result, a result without a call, a thinking block
//! replayed with a wrong signature or behind a changed prefix, and the other provider
//! rules in `rules.rs`) with the provider's HTTP 400, and injects faults on chosen turns:
//! HTTP errors with `retry-after`, a dropped connection, a malformed SSE line, an error
//! event, a slow stream, invalid tool-call JSON.
//!
//! It is a test tool: a dev-dependency of the other crates, never a runtime one.
//!
//! ```
//! use rab_fake_llm::{FakeLlm, Turn};
//! let llm = FakeLlm::start();
//! llm.script([Turn::text("hello")]);
//! // point ANTHROPIC_BASE_URL at llm.url(), or OPENAI_BASE_URL at llm.openai_url()
//! assert!(llm.url().starts_with("http://127.0.0.1:"));
//! ```

#![deny(missing_docs)]

mod binding;
mod inspect;
mod oauth;
mod render;
mod rules;
mod script;
mod search;
mod server;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

pub use binding::BINDING_BETA;
pub use inspect::{Item, RecordedRequest, Transcript, parse, validate};
pub use render::{Frame, error_body, render, render_reply};
pub use rules::Reply;
pub use script::{
    HttpFault, Script, ScriptedCall, ScriptedPage, ScriptedSearch, ScriptedUsage, ServedModel,
    Turn, signature_for, split_chars, split_n,
};
pub use search::Offered;

/// The wire formats, told apart by request path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wire {
    /// `POST /v1/messages`.
    Anthropic,
    /// `POST /v1/responses`.
    OpenaiResponses,
    /// `POST /v1/chat/completions`.
    OpenaiChat,
    /// `POST /v1beta/models/{model}:streamGenerateContent`.
    Gemini,
}

impl Wire {
    /// The wire format a path belongs to.
    pub fn from_path(path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or_default();
        if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Wire::OpenaiResponses)
        } else if path.ends_with("/chat/completions") {
            Some(Wire::OpenaiChat)
        } else if path.contains("/models/") && path.ends_with(":streamGenerateContent") {
            Some(Wire::Gemini)
        } else {
            None
        }
    }
}

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The loopback socket could not be bound.
    #[error("fake-llm: cannot listen on {addr}: {source}")]
    Bind {
        /// Address tried.
        addr: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The server thread could not start.
    #[error("fake-llm: cannot start the server thread: {0}")]
    Thread(std::io::Error),
}

/// Shared state between the test and the server thread.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub script: Script,
    /// Index of the next turn to serve.
    pub next_turn: usize,
    /// HTTP faults of the next turn already answered.
    pub faults_served: usize,
    pub requests: Vec<RecordedRequest>,
    /// Requests received so far (also those not kept).
    pub served: usize,
    /// Requests are answered but not kept ([`FakeLlm::forget_requests`]).
    pub forgets: bool,
    /// Requests are answered without being read ([`FakeLlm::answer_unread`]).
    pub lean: bool,
    /// Where request arrivals and response ends are logged, if anywhere.
    pub timings: Option<Arc<TimingLog>>,
    /// The fake OpenAI sign-in server.
    pub oauth: oauth::OauthState,
    /// Where each request's size and answer are logged, if anywhere.
    pub request_log: Option<Arc<Mutex<std::fs::File>>>,
    /// Lets a held answer go ([`FakeLlm::release`]).
    pub release: Arc<tokio::sync::Notify>,
}

/// A log of when each request arrived and its streamed answer ended, one line per event
/// (`req N MICROS` / `end N MICROS`, microseconds since the log was opened), so a
/// benchmark can measure the client's own time between an answer and its next request.
#[derive(Debug)]
pub(crate) struct TimingLog {
    epoch: std::time::Instant,
    file: Mutex<std::fs::File>,
}

impl TimingLog {
    /// Writes one event; a failed write is ignored (the log is for benchmarks).
    pub(crate) fn event(&self, kind: &str, request: usize, at: std::time::Instant) {
        use std::io::Write;
        let micros = at.saturating_duration_since(self.epoch).as_micros();
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(file, "{kind} {request} {micros}");
    }
}

/// A running fake LLM server; stops when dropped.
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeLlm {
    /// Starts a server on 127.0.0.1 with an empty script.
    ///
    /// # Panics
    /// When the loopback socket cannot be bound (tests cannot go on without it).
    #[allow(clippy::expect_used)]
    pub fn start() -> FakeLlm {
        Self::try_start(Script::default(), "127.0.0.1:0").expect("fake-llm: start")
    }

    /// Starts a server on `addr` playing `script`.
    pub fn try_start(script: Script, addr: &str) -> Result<FakeLlm, Error> {
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|source| Error::Bind { addr: addr.to_owned(), source })?;
        let bind_err = |source| Error::Bind { addr: addr.to_owned(), source };
        listener.set_nonblocking(true).map_err(bind_err)?;
        let local = listener
            .local_addr()
            .map_err(|source| Error::Bind { addr: addr.to_owned(), source })?;
        let state = Arc::new(Mutex::new(State { script, ..State::default() }));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name("fake-llm".into())
            .spawn(move || server::run(listener, thread_state, stopped))
            .map_err(Error::Thread)?;
        Ok(FakeLlm { addr: local, state, stop: Some(stop), thread: Some(thread) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `http://127.0.0.1:PORT`: the base for Anthropic and Gemini.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the base for OpenAI-style clients.
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends turns to the script.
    pub fn script(&self, turns: impl IntoIterator<Item = Turn>) {
        self.lock().script.turns.extend(turns);
    }

    /// Requires this key on every request (`None` accepts any).
    pub fn require_api_key(&self, key: Option<&str>) {
        self.lock().script.api_key = key.map(str::to_owned);
    }

    /// Logs request arrivals and response ends to `file` from now on (see the `--timings`
    /// option of the binary).
    pub fn log_timings(&self, file: std::fs::File) {
        let log = TimingLog { epoch: std::time::Instant::now(), file: Mutex::new(file) };
        self.lock().timings = Some(Arc::new(log));
    }

    /// Logs each request from now on to `file`, one JSON line each: its number, the
    /// HTTP status answered, the body's length in bytes, the number of tools offered and
    /// the bytes of its `tools` field (see `--requests`).
    pub fn log_requests(&self, file: std::fs::File) {
        self.lock().request_log = Some(Arc::new(Mutex::new(file)));
    }

    /// Lists these models as a local server would (`/v1/models`, `/api/tags`).
    pub fn serve_models(&self, models: impl IntoIterator<Item = ServedModel>) {
        self.lock().script.models.extend(models);
    }

    /// Refuses, with the wire's context-overflow error, every request longer than
    /// `tokens` (counted as the body's length over four).
    pub fn limit_context(&self, tokens: u64) {
        self.lock().script.context_limit = Some(tokens);
    }

    /// Answers every request that offers no tools (a compaction summary) with `text`,
    /// outside the turn order ([`Script::summary`]).
    pub fn summarise_with(&self, text: &str) {
        self.lock().script.summary = Some(text.to_owned());
    }

    /// Turns on [`Script::measure_input`]: unscripted usage reports the request's size.
    pub fn measure_input(&self) {
        self.lock().script.measure_input = true;
    }

    /// Answers every request for `model` with the provider's "overloaded" error.
    pub fn overload(&self, model: &str) {
        self.lock().script.overloaded.push(model.to_owned());
    }

    /// Turns the fake OpenAI sign-in on: from now on OpenAI requests must carry its
    /// current access token, which lasts `expires_in` seconds.
    pub fn sign_in(&self, expires_in: u64) {
        let mut s = self.lock();
        s.oauth.enabled = true;
        s.oauth.expires_in = expires_in;
    }

    /// A sign-in already made: `access` and `refresh` are the tokens that work.
    pub fn signed_in(&self, access: &str, refresh: &str) {
        let mut s = self.lock();
        s.oauth.enabled = true;
        s.oauth.expires_in = s.oauth.expires_in.max(3600);
        s.oauth.access = Some(access.to_owned());
        s.oauth.refresh = Some(refresh.to_owned());
    }

    /// The access token stops working (as if it expired early), the refresh token not.
    pub fn expire_access(&self) {
        self.lock().oauth.access = None;
    }

    /// The access token stops working after `n` more requests made with it (once).
    pub fn expire_access_after(&self, n: u32) {
        self.lock().oauth.expire_after = Some(n);
    }

    /// The sign-in is revoked: neither token works.
    pub fn revoke_sign_in(&self) {
        let mut s = self.lock();
        s.oauth.access = None;
        s.oauth.refresh = None;
    }

    /// The user declines in the browser.
    pub fn decline_sign_in(&self) {
        self.lock().oauth.declines = true;
    }

    /// Refresh grants served so far.
    pub fn refreshes(&self) -> u32 {
        self.lock().oauth.refreshes
    }

    /// Keeps no request from now on ([`FakeLlm::requests`] stays as it is): the binary
    /// has no way to read them, and a long benchmark run would otherwise hold every
    /// body twice (raw and parsed), hundreds of MB that cost the machine it shares with
    /// the client being measured.
    pub fn forget_requests(&self) {
        self.lock().forgets = true;
    }

    /// Answers every request from the script without reading its body: no parsing,
    /// no checks of the history, no binding fingerprints (`--lean`). For timing a
    /// client alone: checking a long history costs the server milliseconds per
    /// request on the machine the client runs on, which a real provider does not.
    /// Requests are not kept, and a request log would count nothing.
    pub fn answer_unread(&self) {
        let mut state = self.lock();
        state.lean = true;
        state.forgets = true;
    }

    /// Lets the answer of a [`Turn::held`] turn go: the one waiting now, or else the
    /// next one that will.
    pub fn release(&self) {
        self.lock().release.notify_one();
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Turns not served yet.
    pub fn remaining_turns(&self) -> usize {
        let state = self.lock();
        state.script.turns.len().saturating_sub(state.next_turn)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
