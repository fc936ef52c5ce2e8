//! The script a fake server plays: a list of turns, one per successful request, each
//! with text, thinking, tool calls and usage, plus the faults to inject on that turn.
//! Scripts are JSON (camelCase) so the binary can read them from a file.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole script.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Script {
    /// When set, requests must carry this key in the wire format's header, else 401.
    pub api_key: Option<String>,
    /// Turns, consumed in order.
    pub turns: Vec<Turn>,
    /// Start again from the first turn when the script runs out (for benchmarks).
    pub repeat: bool,
    /// The answer to a request that offers no tools (a compaction summary), given
    /// outside the turn order, so a repeating script stays in step when the client
    /// compacts (for long benchmarks).
    pub summary: Option<String>,
    /// Report input tokens as the request body's length over 4 where a turn scripts
    /// no usage, so the client's context estimate grows as a real one does (for
    /// benchmarks that run into automatic compaction).
    pub measure_input: bool,
    /// The models a local server lists: `GET /v1/models`, and Ollama's `GET /api/tags`
    /// and `POST /api/show`.
    pub models: Vec<ServedModel>,
    /// Model ids answered with the provider's "overloaded" error on every request (529
    /// on the Anthropic wire, 503 elsewhere), as a provider out of capacity.
    pub overloaded: Vec<String>,
    /// The served model's window, in tokens: a request whose body is longer than four
    /// characters per token of it is refused with the wire's context-overflow error,
    /// as a provider refuses a prompt that does not fit.
    pub context_limit: Option<u64>,
}

/// A model a local server lists.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServedModel {
    /// Its id (`qwen3:8b`).
    pub id: String,
    /// The context window the server reports, if it reports one (vLLM's
    /// `max_model_len`, Ollama's `<arch>.context_length` in `/api/show`).
    pub context_window: Option<u64>,
}

/// One scripted model response and the faults around it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Turn {
    /// Reasoning text, streamed before the answer.
    pub thinking: Option<String>,
    /// Answer text.
    pub text: Option<String>,
    /// Tool calls, after the text.
    pub tool_calls: Vec<ScriptedCall>,
    /// Usage to report; a default is derived from the text when absent.
    pub usage: Option<ScriptedUsage>,
    /// Stop reason to report instead of the natural one: `stop`, `length`, `tool_use`.
    pub stop_reason: Option<String>,
    /// Characters per text delta (default 8).
    pub chunk_chars: Option<usize>,
    /// Fragments each tool call's arguments are split into (default 3).
    pub arg_fragments: Option<usize>,
    /// HTTP errors answered, one per request, before this turn is served.
    pub faults: Vec<HttpFault>,
    /// Drop the connection after this many SSE events.
    pub disconnect_after: Option<usize>,
    /// Send a malformed SSE data line after this many events.
    pub malformed_after: Option<usize>,
    /// Send the wire format's error event after this many events.
    pub error_after: Option<usize>,
    /// Delay before each SSE event, in milliseconds.
    pub chunk_delay_ms: Option<u64>,
    /// Stop sending after this many SSE events, the connection left open (a stalled
    /// stream), until the client gives up.
    pub stall_after: Option<usize>,
    /// Accept the request and never answer it (no headers), until the client gives up.
    pub hang: bool,
    /// Send the answer's events only once the test calls [`crate::FakeLlm::release`]
    /// (the headers go out at once): a test does what it must before the client acts
    /// on the answer, however busy the machine, instead of racing a delay.
    pub held: bool,
    /// A web search the provider runs before the answer, whose text then cites the
    /// first page found; played only for a request that offers the provider's search.
    pub search: Option<ScriptedSearch>,
    /// Chat Completions server quirks to imitate: `noIndex`, `emptyIdLater`,
    /// `reasoningField` (use `reasoning` instead of `reasoning_content`),
    /// `usageInFinishChunk`, `noUsage`, `noDone`, `deepseekUsage`, `mistralThinking`
    /// (thinking as Mistral's typed content chunks).
    pub quirks: Vec<String>,
}

/// A scripted tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptedCall {
    /// Call id; generated when absent.
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments object.
    pub arguments: Value,
    /// Raw argument text sent instead of `arguments` (for invalid-JSON tests).
    pub raw_arguments: Option<String>,
    /// Free-form input: the call goes out as a custom tool call (OpenAI Responses), its
    /// input this text.
    pub input: Option<String>,
}

/// A scripted web search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptedSearch {
    /// What the model searches for.
    pub query: String,
    /// The pages found (those the request's domain lists leave out are dropped).
    pub results: Vec<ScriptedPage>,
}

/// A page a scripted search finds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptedPage {
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
}

/// Scripted token usage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptedUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of output).
    pub reasoning: u64,
}

/// An HTTP error answered instead of a turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HttpFault {
    /// Status code; 0 closes the connection before any byte of a response.
    pub status: u16,
    /// `retry-after` header value in seconds.
    pub retry_after: Option<u64>,
    /// Error message (a default per status otherwise).
    pub message: Option<String>,
    /// A body sent as is instead of the wire format's error JSON (with `content_type`),
    /// such as a proxy's HTML page; with status 200 it stands for a server that
    /// answers without a stream.
    pub body: Option<String>,
    /// The content type of `body` (default `text/html`).
    pub content_type: Option<String>,
    /// More response headers, e.g. `x-should-retry` or a `retry-after` HTTP-date.
    pub headers: Vec<(String, String)>,
}

impl Turn {
    /// A turn that answers with text.
    pub fn text(text: impl Into<String>) -> Self {
        Turn { text: Some(text.into()), ..Turn::default() }
    }

    /// A turn that calls one tool.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Turn {
            tool_calls: vec![ScriptedCall { name: name.into(), arguments, ..Default::default() }],
            ..Turn::default()
        }
    }

    /// Adds another tool call.
    pub fn and_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ScriptedCall { name: name.into(), arguments, ..Default::default() });
        self
    }

    /// Adds reasoning text.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// Searches the web for `query` first, finding `pages` (url, title); the text cites
    /// the first one.
    pub fn with_search(mut self, query: &str, pages: &[(&str, &str)]) -> Self {
        self.search = Some(ScriptedSearch {
            query: query.to_owned(),
            results: pages
                .iter()
                .map(|(url, title)| ScriptedPage {
                    url: (*url).to_owned(),
                    title: (*title).to_owned(),
                })
                .collect(),
        });
        self
    }

    /// Sets the reported usage.
    pub fn with_usage(mut self, usage: ScriptedUsage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Answers `status` (with an optional `retry-after`) before serving this turn.
    pub fn after_fault(mut self, status: u16, retry_after: Option<u64>) -> Self {
        self.faults.push(HttpFault { status, retry_after, ..HttpFault::default() });
        self
    }

    /// Answers `status` with this raw body and content type before serving this turn.
    pub fn after_page(mut self, status: u16, content_type: &str, body: &str) -> Self {
        self.faults.push(HttpFault {
            status,
            body: Some(body.to_owned()),
            content_type: Some(content_type.to_owned()),
            ..HttpFault::default()
        });
        self
    }

    /// Drops the connection after `events` SSE events.
    pub fn disconnect_after(mut self, events: usize) -> Self {
        self.disconnect_after = Some(events);
        self
    }

    /// Sends a malformed data line after `events` SSE events.
    pub fn malformed_after(mut self, events: usize) -> Self {
        self.malformed_after = Some(events);
        self
    }

    /// Sends the wire format's error event after `events` SSE events.
    pub fn error_after(mut self, events: usize) -> Self {
        self.error_after = Some(events);
        self
    }

    /// Stalls (sends nothing more, keeps the connection) after `events` SSE events.
    pub fn stall_after(mut self, events: usize) -> Self {
        self.stall_after = Some(events);
        self
    }

    /// Accepts the request and never answers it.
    pub fn hang(mut self) -> Self {
        self.hang = true;
        self
    }

    /// Holds the answer's events until [`crate::FakeLlm::release`] (see [`Turn::held`]).
    pub fn held(mut self) -> Self {
        self.held = true;
        self
    }

    /// Closes the connection before any byte of a response, once, before this turn.
    pub fn after_drop(mut self) -> Self {
        self.faults.push(HttpFault { status: 0, ..HttpFault::default() });
        self
    }

    /// Waits `ms` milliseconds before each SSE event.
    pub fn slow(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = Some(ms);
        self
    }

    /// Imitates a Chat Completions server quirk (see [`Turn::quirks`]).
    pub fn quirk(mut self, quirk: &str) -> Self {
        self.quirks.push(quirk.to_owned());
        self
    }

    /// Whether a quirk is on.
    pub fn has_quirk(&self, quirk: &str) -> bool {
        self.quirks.iter().any(|q| q == quirk)
    }

    /// The usage to report: the scripted one, or one derived from the text lengths.
    pub fn effective_usage(&self) -> ScriptedUsage {
        self.usage.unwrap_or_else(|| {
            let chars = self.text.as_deref().map_or(0, str::len)
                + self.thinking.as_deref().map_or(0, str::len)
                + self.tool_calls.iter().map(|c| c.arguments.to_string().len()).sum::<usize>();
            ScriptedUsage { input: 100, output: (chars as u64 / 4) + 1, ..Default::default() }
        })
    }
}

impl ScriptedCall {
    /// The argument text to stream.
    pub fn argument_text(&self) -> String {
        match &self.raw_arguments {
            Some(raw) => raw.clone(),
            None if self.arguments.is_null() => "{}".to_owned(),
            None => self.arguments.to_string(),
        }
    }
}

/// Splits text into pieces of about `size` characters (at least one piece).
pub fn split_chars(text: &str, size: usize) -> Vec<String> {
    let size = size.max(1);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Splits text into `n` pieces of near-equal length (fewer when the text is shorter).
pub fn split_n(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(n).max(1);
    split_chars(text, size)
}

/// A deterministic signature for thinking text, so the server can check that a
/// client replays thinking blocks unchanged (as the real APIs do).
pub fn signature_for(text: &str) -> String {
    // FNV-1a: stable across runs and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig_{hash:016x}")
}
