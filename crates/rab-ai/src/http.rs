//! The HTTP driver shared by all adapters: sends the request, retries what may be
//! retried, decodes the SSE body through the adapter's decoder and forwards events.

use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_core::Stream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::assemble::Builder;
use crate::error::Error;
use crate::event::StreamEvent;
use crate::model::{Api, Model};
use crate::provider::{EventStream, HttpRequest, Provider, StreamOptions, Wire, WireError};
use crate::retry::{RetryPolicy, parse_retry_after};
use crate::sse::{FeedError, SseDecoder};
use crate::tls::{LazyVerifier, client_config};
use crate::types::{Context, StopReason};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// Largest error body read from a failed response.
const MAX_ERROR_BODY: usize = 64 * 1024;

type Http = Result<(reqwest::Client, Arc<LazyVerifier>), String>;

/// The provider for every built-in wire format; one per process, cheap to clone.
#[derive(Clone, Default)]
pub struct Client {
    http: Arc<OnceLock<Http>>,
}

impl Client {
    /// A client; the HTTP connection pool and TLS roots are set up on first use.
    pub fn new() -> Self {
        Self::default()
    }

    fn http(&self, url: &str, connect: Duration) -> Result<reqwest::Client, String> {
        // One client per process: the first request's connect timeout (every request of
        // a process has the same settings).
        let (client, verifier) = self.http.get_or_init(|| build_http(connect)).clone()?;
        if url.starts_with("https:") {
            // Load the system roots while DNS and TCP connect run.
            std::thread::spawn(move || verifier.warm_up());
        }
        Ok(client)
    }
}

fn build_http(connect: Duration) -> Http {
    // ring rather than aws-lc: quick to compile, small; roots load on first handshake.
    let (tls, verifier) = client_config()?;
    // As `tls::http_client_builder`, keeping the verifier to warm up.
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("rab/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect)
        // Silence is timed per request (`Timeouts`), with a message that says so.
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    Ok((client, verifier))
}

fn wire_for(api: Api) -> &'static dyn Wire {
    match api {
        Api::AnthropicMessages => &anthropic::AnthropicWire,
        Api::OpenaiResponses => &openai_responses::ResponsesWire,
        Api::OpenaiCompletions => &openai_chat::ChatWire,
        Api::GoogleGenerativeAi => &gemini::GeminiWire,
    }
}

impl Provider for Client {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        cancel: CancellationToken,
    ) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let wire = wire_for(model.api);
        // A key read from a file or `$(cat …)` ends in a newline, which no header carries.
        let trimmed;
        let options = match &options.api_key {
            Some(key) if key.trim() != key => {
                trimmed = StreamOptions { api_key: Some(key.trim().to_owned()), ..options.clone() };
                &trimmed
            }
            Some(_) | None => options,
        };
        let request = wire.build(model, context, options).and_then(|r| check_headers(r, model));
        let job = Job {
            request,
            wire,
            http: self.http(&model.base_url, options.timeouts.connect),
            timeouts: options.timeouts,
            model: model.clone(),
            policy: options.retry,
            auth_hint: options.auth_hint.clone(),
            credential: options
                .credential
                .clone()
                .filter(|c| c.provider() == model.provider)
                .zip(options.api_key.clone()),
            cancel,
            tx,
        };
        tokio::spawn(job.run());
        Box::pin(EventReceiver(rx))
    }
}

/// A duration in seconds as a person writes it: `3 s`, `1.5 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{s:.1} s") }
}

/// Fails with a clear message when a header value cannot be sent (the HTTP client
/// would report only "builder error: failed to parse header value").
fn check_headers(request: HttpRequest, model: &Model) -> Result<HttpRequest, String> {
    let headers = request.headers.iter().map(|(k, v)| (*k, v.as_str()));
    let extra = model.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    for (name, value) in headers.chain(extra) {
        let is_key = matches!(name, "x-api-key" | "authorization" | "x-goog-api-key");
        // Keys are plain ASCII: other bytes would pass as header bytes but never match.
        let is_ok = if is_key {
            value.chars().all(|c| c.is_ascii_graphic() || c == ' ')
        } else {
            reqwest::header::HeaderValue::from_str(value).is_ok()
        };
        if is_ok {
            continue;
        }
        let what = if is_key { "the API key".to_owned() } else { format!("the {name} header") };
        let bad = value.chars().find(|c| !(c.is_ascii_graphic() || *c == ' ')).unwrap_or('?');
        return Err(format!(
            "{what} has a character an HTTP header cannot carry ({bad:?}); check it for a stray \
             quote, space or line break"
        ));
    }
    Ok(request)
}

struct EventReceiver(mpsc::Receiver<StreamEvent>);

impl Stream for EventReceiver {
    type Item = StreamEvent;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<StreamEvent>> {
        self.0.poll_recv(cx)
    }
}

struct Job {
    request: Result<HttpRequest, String>,
    wire: &'static dyn Wire,
    http: Result<reqwest::Client, String>,
    model: Model,
    policy: RetryPolicy,
    timeouts: crate::retry::Timeouts,
    auth_hint: Option<String>,
    /// A renewable key, with the key the request was built with.
    credential: Option<(std::sync::Arc<dyn crate::provider::KeySource>, String)>,
    cancel: CancellationToken,
    tx: mpsc::Sender<StreamEvent>,
}

/// The key a request carries (after `Bearer `, or the key header's value).
fn current_key(request: &HttpRequest) -> String {
    request
        .headers
        .iter()
        .find_map(|(name, value)| match *name {
            "authorization" => value.strip_prefix("Bearer ").map(str::to_owned),
            "x-api-key" | "x-goog-api-key" => Some(value.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// `request` with `old`, the key in its headers, replaced by `new`.
fn with_key(mut request: HttpRequest, old: &str, new: &str) -> HttpRequest {
    if !old.is_empty() && old != new {
        for (_, value) in &mut request.headers {
            if value.contains(old) {
                *value = value.replace(old, new);
            }
        }
    }
    request
}

/// Why an attempt ended without a complete response.
enum Failure {
    Error(Error),
    /// An error the server said to retry or not (`x-should-retry`), whatever its status.
    Decided(Error, bool),
    /// The stream turned malformed part-way (a bad line, an event too large): tried
    /// again like a broken connection, though its error is a protocol error.
    Broken(Error),
    /// The consumer dropped the stream: nobody is listening, stop quietly.
    Gone,
}

impl Job {
    async fn run(self) {
        let request = match (&self.request, &self.http) {
            (Ok(r), Ok(_)) => r.clone(),
            (Err(message), _) | (_, Err(message)) => {
                let error = Error::InvalidRequest {
                    provider: self.model.provider.clone(),
                    model: self.model.id.clone(),
                    message: message.clone(),
                };
                let mut b = Builder::new(&self.model);
                let partial = b.partial(StopReason::Error, &error.to_string());
                let _ = self.tx.send(StreamEvent::Error { error, partial }).await;
                return;
            }
        };
        // A key that expires: the current one (renewed if due), and a renewed one once
        // after a 401.
        let mut request = request;
        let mut refreshed = false;
        if let Some((source, built)) = &self.credential {
            match source.current().await {
                Ok(key) => request = with_key(request, built, &key),
                Err(message) => return self.fail_auth(message).await,
            }
        }
        let mut retry = 0;
        let first_attempt = tokio::time::Instant::now();
        loop {
            let mut builder = Builder::new(&self.model);
            builder.prefix_hash(request.prefix_hash.as_deref());
            let (failure, should_retry) = match self.attempt(&request, &mut builder).await {
                Ok(()) => {
                    let message = builder.finish();
                    let _ = self.tx.send(StreamEvent::Done(message)).await;
                    return;
                }
                Err(Failure::Gone) => return,
                Err(Failure::Error(e)) => {
                    let retryable = e.is_retryable();
                    (e, retryable)
                }
                Err(Failure::Decided(e, retry)) => (e, retry),
                Err(Failure::Broken(e)) => (e, true),
            };
            if let (Error::Http { status: 401, .. }, Some((source, _)), false) =
                (&failure, &self.credential, refreshed)
            {
                refreshed = true;
                let used = current_key(&request);
                match source.refresh(&used).await {
                    Ok(key) => {
                        request = with_key(request, &used, &key);
                        continue;
                    }
                    Err(message) => return self.fail_auth(message).await,
                }
            }
            // A stream that broke before it was complete is tried again even after
            // content arrived: nothing has been acted on yet (tool calls run only once a
            // response is complete), and what was shown is marked discarded. The server's
            // `x-should-retry` decides over the status.
            if failure != Error::Aborted && should_retry {
                retry += 1;
                let retry_after = match &failure {
                    Error::Http { retry_after, .. } => *retry_after,
                    _ => None,
                };
                let within_budget =
                    |delay: &Duration| first_attempt.elapsed() + *delay <= self.policy.budget;
                if let Some(delay) = self.policy.delay(retry, retry_after).filter(within_budget) {
                    let discarded = builder.has_content();
                    warn!(attempt = retry + 1, ?delay, discarded, error = %failure, "retrying model request");
                    let event =
                        StreamEvent::Retry { attempt: retry + 1, delay, error: failure, discarded };
                    if self.tx.send(event).await.is_err() {
                        return;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => continue,
                        _ = self.cancel.cancelled() => {
                            self.fail(&mut builder, Error::Aborted).await;
                            return;
                        }
                    }
                }
            }
            self.fail(&mut builder, failure).await;
            return;
        }
    }

    /// The renewable key could not be had: the request fails as unauthorised, with why.
    async fn fail_auth(&self, message: String) {
        let error = Error::Http {
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            status: 401,
            message,
            retry_after: None,
            hint: None,
        };
        self.fail(&mut Builder::new(&self.model), error).await;
    }

    async fn fail(&self, builder: &mut Builder, error: Error) {
        let reason = if error == Error::Aborted { StopReason::Aborted } else { StopReason::Error };
        let partial = builder.partial(reason, &error.to_string());
        let _ = self.tx.send(StreamEvent::Error { error, partial }).await;
    }

    async fn attempt(&self, request: &HttpRequest, builder: &mut Builder) -> Result<(), Failure> {
        let Ok(http) = &self.http else { return Err(Failure::Gone) };
        let mut req = http.post(&request.url).body(request.body.clone());
        for (name, value) in &request.headers {
            req = req.header(*name, value);
        }
        for (name, value) in &self.model.headers {
            req = req.header(name, value);
        }
        debug!(url = %request.url, bytes = request.body.len(), "model request");
        let send = req.send();
        let response = self
            .wait(send, self.timeouts.first_byte, true, &request.url)
            .await?
            .map_err(|e| Failure::Error(self.connect_error(&request.url, &e)))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = parse_retry_after(response.headers(), std::time::SystemTime::now());
            let decided = crate::retry::should_retry(response.headers());
            let body = tokio::select! {
                b = read_limited(response) => b,
                _ = self.cancel.cancelled() => return Err(Failure::Error(Error::Aborted)),
            };
            let retry_after = retry_after.or_else(|| crate::retry::body_retry_delay(&body));
            let error = self.http_error(status.as_u16(), &body, retry_after);
            return Err(match decided {
                Some(retry) => Failure::Decided(error, retry),
                None => Failure::Error(error),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with("text/html") || content_type.starts_with("application/json") {
            // Not a stream: a login page, a proxy's page, or an answer without streaming.
            let body = tokio::select! {
                b = read_limited(response) => b,
                _ = self.cancel.cancelled() => return Err(Failure::Error(Error::Aborted)),
            };
            let kind = content_type.split(';').next().unwrap_or_default().to_owned();
            let hint = if kind == "text/html" {
                format!("wrong base URL? ({})", request.url)
            } else {
                "does the server stream (stream: true)?".to_owned()
            };
            return Err(Failure::Error(self.protocol(format!(
                "expected an event stream, got {kind} — {hint}: {}",
                error_message(&body)
            ))));
        }
        let mut response = response;
        let mut sse = SseDecoder::new();
        let mut decoder = self.wire.decoder();
        loop {
            let chunk =
                self.wait(response.chunk(), self.timeouts.idle, false, &request.url).await?;
            let chunk = match chunk {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => return Err(Failure::Error(self.stream_error(&e.to_string()))),
            };
            let fed = sse.feed(&chunk, |ev| decoder.event(ev, builder));
            let flushed = self.flush(builder).await;
            match fed {
                Ok(()) => {}
                Err(FeedError::Sse(e)) => {
                    return Err(Failure::Broken(self.protocol(e.to_string())));
                }
                Err(FeedError::Handler(WireError::Protocol(m))) => {
                    return Err(Failure::Broken(self.protocol(m)));
                }
                Err(FeedError::Handler(e)) => return Err(Failure::Error(self.wire_error(e))),
            }
            flushed?;
        }
        let had_tail = sse.finish();
        let ended = decoder.end(builder);
        self.flush(builder).await?;
        match ended {
            Ok(()) => Ok(()),
            Err(WireError::Incomplete(msg)) if had_tail => {
                Err(Failure::Error(self.stream_error(&format!("{msg} (last event cut off)"))))
            }
            Err(e) => Err(Failure::Error(self.wire_error(e))),
        }
    }

    /// Awaits `fut`, reporting the wait every `notice` and giving up after `limit` of
    /// silence with an error that says what was awaited and for how long (a stream
    /// error: tried again like a broken connection).
    async fn wait<T>(
        &self,
        fut: impl std::future::Future<Output = T>,
        limit: Duration,
        first: bool,
        url: &str,
    ) -> Result<T, Failure> {
        let started = tokio::time::Instant::now();
        tokio::pin!(fut);
        loop {
            let waited = started.elapsed();
            let next = self
                .timeouts
                .notice
                .min(limit.saturating_sub(waited))
                .max(Duration::from_millis(1));
            tokio::select! {
                out = &mut fut => return Ok(out),
                _ = self.cancel.cancelled() => return Err(Failure::Error(Error::Aborted)),
                () = tokio::time::sleep(next) => {
                    let waited = started.elapsed();
                    if waited >= limit {
                        let host = url.split("://").nth(1).and_then(|r| r.split('/').next()).unwrap_or(url);
                        let (what, key) = if first {
                            ("no response", "timeouts.firstByteSecs")
                        } else {
                            ("no data", "timeouts.idleSecs")
                        };
                        // The limit, not the time measured: a busy machine may wake
                        // this late, and the limit is what the user can change.
                        return Err(Failure::Error(self.stream_error(&format!(
                            "{what} from {host} for {} (the limit is {key} in settings)",
                            seconds(limit)
                        ))));
                    }
                    if self.tx.send(StreamEvent::Waiting { waited, first }).await.is_err() {
                        return Err(Failure::Gone);
                    }
                }
            }
        }
    }

    async fn flush(&self, builder: &mut Builder) -> Result<(), Failure> {
        for event in builder.take_events() {
            if self.tx.send(event).await.is_err() {
                return Err(Failure::Gone);
            }
        }
        Ok(())
    }

    fn wire_error(&self, e: WireError) -> Error {
        match e {
            WireError::Protocol(message) => self.protocol(message),
            WireError::Api { code, message } => Error::Api {
                provider: self.model.provider.clone(),
                model: self.model.id.clone(),
                code,
                message,
            },
            WireError::Incomplete(message) => self.stream_error(&message),
        }
    }

    fn protocol(&self, message: String) -> Error {
        Error::Protocol {
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            message,
        }
    }

    fn stream_error(&self, message: &str) -> Error {
        Error::Stream {
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            message: message.to_owned(),
        }
    }

    fn connect_error(&self, url: &str, e: &reqwest::Error) -> Error {
        let message = crate::error::describe_reqwest(e);
        let local =
            url.contains("://localhost") || url.contains("://127.") || url.contains("://[::1]");
        let hint = if local {
            "is the local server running? check --base-url".to_owned()
        } else {
            "check the base URL and the network connection".to_owned()
        };
        Error::Connect {
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            url: url.to_owned(),
            message,
            hint: Some(hint),
        }
    }

    fn http_error(&self, status: u16, body: &str, retry_after: Option<Duration>) -> Error {
        let message = error_message(body);
        let hint = match status {
            401 | 403 => Some(match &self.auth_hint {
                Some(h) => h.clone(),
                None => "check the API key or run rab with --api-key".to_owned(),
            }),
            404 => Some(format!(
                "check the model id and the base URL ({}); `rab --list-models` shows known models",
                self.model.base_url
            )),
            429 => Some("rate limited by the provider; wait and try again".to_owned()),
            500..=599 => Some("the provider is failing or overloaded; try again later".to_owned()),
            _ => None,
        };
        Error::Http {
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            status,
            message,
            retry_after,
            hint,
        }
    }
}

async fn read_limited(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The human part of a provider's error body: `error.message`, `message`, the title
/// and text of an HTML page (a proxy's 502), or the text.
pub(crate) fn error_message(body: &str) -> String {
    let trimmed = body.trim();
    if is_html(trimmed) {
        return html_summary(trimmed);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let v = match &v {
            serde_json::Value::Array(items) => items.first().cloned().unwrap_or_default(),
            _ => v,
        };
        let candidates = [
            v.pointer("/error/message"),
            v.get("message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("detail"),
        ];
        if let Some(text) = candidates.into_iter().flatten().find_map(|c| c.as_str()) {
            return text.to_owned();
        }
    }
    if trimmed.is_empty() {
        return "(empty response body)".to_owned();
    }
    let mut shown: String = trimmed.chars().take(500).collect();
    if shown.len() < trimmed.len() {
        shown.push('…');
    }
    shown
}

fn is_html(body: &str) -> bool {
    let head: String = body.chars().take(200).collect::<String>().to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<body")
}

/// An HTML page in one line: its title, then the start of its visible text.
fn html_summary(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let title = lower
        .find("<title>")
        .and_then(|start| {
            let from = start + "<title>".len();
            lower[from..].find("</title>").map(|len| html[from..from + len].trim().to_owned())
        })
        .filter(|t| !t.is_empty());
    // The visible text: tags, scripts and styles out, whitespace collapsed.
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push(' ');
        let tail = &rest[open..];
        let tail_lower = tail.to_ascii_lowercase();
        let skip_to = ["script", "style", "head"]
            .iter()
            .find(|t| tail_lower.starts_with(&format!("<{t}")))
            .and_then(|t| tail_lower.find(&format!("</{t}>")).map(|end| end + t.len() + 3));
        rest = match skip_to.or_else(|| tail.find('>').map(|end| end + 1)) {
            Some(end) => &tail[end..],
            None => "",
        };
    }
    text.push_str(rest);
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut shown: String = words.join(" ").chars().take(200).collect();
    if shown.len() < words.join(" ").len() {
        shown.push('…');
    }
    match title {
        Some(t) => match shown.strip_prefix(t.as_str()).unwrap_or(&shown).trim() {
            "" => format!("(HTML page) {t}"),
            rest => format!("(HTML page) {t}: {rest}"),
        },
        None => format!("(HTML page) {shown}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_reads_each_provider_shape() {
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(error_message(anthropic), "invalid x-api-key");
        let gemini =
            r#"[{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}]"#;
        assert_eq!(error_message(gemini), "API key not valid");
        assert_eq!(error_message(r#"{"error":"model not found"}"#), "model not found");
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(""), "(empty response body)");
    }

    #[test]
    fn issue_13_an_html_page_is_summarised_not_dumped() {
        let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>\
                    <style>body{color:red}</style></head><body><center><h1>502 Bad Gateway</h1>\
                    </center><hr><center>nginx/1.27</center><script>var x=1;</script></body></html>";
        assert_eq!(error_message(page), "(HTML page) 502 Bad Gateway: nginx/1.27");
        let long = format!("<html><body><p>{}</p></body></html>", "word ".repeat(100));
        let summary = error_message(&long);
        assert!(summary.len() < 240 && summary.ends_with('…'), "{summary}");
    }
}
