//! The Telegram Bot API over rab's HTTP client: one method call at a time, retried
//! until it goes through — 429 after the `retry_after` Telegram gives, 5xx and network
//! failures with backoff (1 s doubling to 30 s) — so a message is never dropped
//! silently; a request Telegram refuses (4xx) comes back as [`ApiError::Refused`]. Sends
//! are paced to the API's limit of 30 messages a second. The token is part of every
//! URL, so errors are reported without their URL.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Why a call did not go through.
#[derive(Debug)]
pub enum ApiError {
    /// Telegram refused it (a 4xx other than 429): retrying would not help.
    Refused {
        /// The HTTP status.
        code: u16,
        /// Telegram's description.
        description: String,
    },
    /// The channel is shutting down.
    Stopped,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused { code, description } => {
                write!(f, "Telegram refused it ({code}): {description}")
            }
            Self::Stopped => f.write_str("stopped"),
        }
    }
}

/// A file to upload.
pub struct Upload<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// A bot's connection to the Bot API.
pub struct Bot {
    client: reqwest::Client,
    /// `{apiBase}/bot{token}/`.
    methods: String,
    /// `{apiBase}/file/bot{token}/`.
    files: String,
    /// When the next message may be sent (30 a second overall).
    next_send: tokio::sync::Mutex<tokio::time::Instant>,
    stop: CancellationToken,
}

/// Sends paced to 30 a second.
const SEND_GAP: Duration = Duration::from_millis(34);
/// The longest wait between retries of a failing call.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Bot {
    /// A bot for `token` at `api_base`; calls end when `stop` fires.
    pub fn new(api_base: &str, token: &str, stop: CancellationToken) -> Result<Self, String> {
        let client = rab_ai::http_client_builder()?
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| format!("cannot make the HTTP client: {e}"))?;
        let base = api_base.trim_end_matches('/');
        Ok(Self {
            client,
            methods: format!("{base}/bot{token}/"),
            files: format!("{base}/file/bot{token}/"),
            next_send: tokio::sync::Mutex::new(tokio::time::Instant::now()),
            stop,
        })
    }

    /// Calls `method` with JSON `params`, retrying what can be retried; its `result`.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        self.call_with(method, Body::Json(params), None).await
    }

    /// [`Bot::call`] with a timeout per attempt, given up when the bot stops (long
    /// polls; every other call goes on during a shutdown, so last edits get out).
    pub async fn call_timed(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ApiError> {
        self.call_with(method, Body::Json(params), Some(timeout)).await
    }

    /// Sends a message (paced), its `result`.
    pub async fn send(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        self.pace().await?;
        self.call(method, params).await
    }

    /// `sendDocument` with `file` as `multipart/form-data` (paced).
    pub async fn send_document(
        &self,
        chat: i64,
        file: Upload<'_>,
        caption: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.pace().await?;
        let mut fields = vec![("chat_id".to_owned(), chat.to_string())];
        if let Some(c) = caption {
            fields.push(("caption".into(), c.to_owned()));
            fields.push(("parse_mode".into(), "HTML".into()));
        }
        let (content_type, body) = multipart(&fields, file);
        self.call_with("sendDocument", Body::Raw { content_type, body }, None).await
    }

    /// Downloads a file by its `file_path` (from `getFile`), at most `max` bytes.
    pub async fn download(&self, file_path: &str, max: usize) -> Result<Vec<u8>, String> {
        let url = format!("{}{file_path}", self.files);
        let response = self
            .client
            .get(url)
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !response.status().is_success() {
            return Err(format!("the download failed ({})", response.status()));
        }
        if response.content_length().is_some_and(|n| n > max as u64) {
            return Err(format!("the file is larger than {} MB", max / (1024 * 1024)));
        }
        let bytes = response.bytes().await.map_err(|e| e.without_url().to_string())?;
        if bytes.len() > max {
            return Err(format!("the file is larger than {} MB", max / (1024 * 1024)));
        }
        Ok(bytes.to_vec())
    }

    /// Waits for the next send slot.
    async fn pace(&self) -> Result<(), ApiError> {
        let mut next = self.next_send.lock().await;
        let at = (*next).max(tokio::time::Instant::now());
        *next = at + SEND_GAP;
        drop(next);
        tokio::time::sleep_until(at).await;
        Ok(())
    }

    async fn call_with(
        &self,
        method: &str,
        body: Body,
        timeout: Option<Duration>,
    ) -> Result<Value, ApiError> {
        let mut backoff = Duration::from_secs(1);
        // Only a long poll gives up when the bot stops.
        let never = CancellationToken::new();
        let stop = if timeout.is_some() { &self.stop } else { &never };
        loop {
            let mut request = self.client.post(format!("{}{method}", self.methods));
            request = match &body {
                Body::Json(v) => request.json(v),
                Body::Raw { content_type, body } => {
                    request.header("content-type", content_type).body(body.clone())
                }
            };
            request = request.timeout(timeout.unwrap_or(Duration::from_secs(60)));
            let sent = tokio::select! {
                r = request.send() => r,
                () = stop.cancelled() => return Err(ApiError::Stopped),
            };
            let wait = match sent {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let text = tokio::select! {
                        t = response.text() => t.unwrap_or_default(),
                        () = stop.cancelled() => return Err(ApiError::Stopped),
                    };
                    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    let description = v["description"]
                        .as_str()
                        .unwrap_or(text.trim())
                        .chars()
                        .take(300)
                        .collect::<String>();
                    match status {
                        200..=299 if v["ok"] == json!(true) => return Ok(v["result"].clone()),
                        429 => {
                            let after = v["parameters"]["retry_after"].as_u64().unwrap_or(5);
                            tracing::warn!(
                                method,
                                "Telegram asks to wait {after} s: {description}"
                            );
                            Duration::from_secs(after.clamp(1, 3600))
                        }
                        400..=499 => return Err(ApiError::Refused { code: status, description }),
                        _ => {
                            tracing::warn!(
                                method,
                                "Telegram failed ({status}): {description}; retrying"
                            );
                            next_backoff(&mut backoff)
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(method, "Telegram unreachable: {}; retrying", e.without_url());
                    next_backoff(&mut backoff)
                }
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = stop.cancelled() => return Err(ApiError::Stopped),
            }
        }
    }
}

enum Body {
    Json(Value),
    Raw { content_type: String, body: Vec<u8> },
}

fn next_backoff(backoff: &mut Duration) -> Duration {
    let now = *backoff;
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
    now
}

/// A `multipart/form-data` body: text fields, then the file as `document`.
fn multipart(fields: &[(String, String)], file: Upload<'_>) -> (String, Vec<u8>) {
    let boundary = format!("rab-{:016x}", fastrand::u64(..));
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    let name: String =
        file.name.chars().map(|c| if c == '"' || c.is_control() { '_' } else { c }).collect();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"document\"; filename=\"{name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file.bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}
