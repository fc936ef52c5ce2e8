//! Typed provider errors. Each variant carries what a caller acts on (status, retry
//! delay, provider, model) and renders as one line that says what failed and what to do.

use std::time::Duration;

/// A failed model request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The provider answered with an HTTP error status.
    #[error("{provider}: HTTP {status} for {model}: {message}{}", hint_suffix(hint))]
    Http {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// HTTP status code.
        status: u16,
        /// The provider's own error message.
        message: String,
        /// Delay the provider asked for in `retry-after`.
        retry_after: Option<Duration>,
        /// What the user should do, when rab knows.
        hint: Option<String>,
    },
    /// The provider could not be reached, or the connection failed before a response.
    #[error("{provider}: cannot reach {url} for {model}: {message}{}", hint_suffix(hint))]
    Connect {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// The endpoint that was tried.
        url: String,
        /// The transport error.
        message: String,
        /// What the user should do, when rab knows.
        hint: Option<String>,
    },
    /// The response stream broke off before it was complete.
    #[error("{provider}: the response stream for {model} broke off: {message}")]
    Stream {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// What happened.
        message: String,
    },
    /// The stream was not in the provider's documented format.
    #[error("{provider}: malformed response stream from {model}: {message}")]
    Protocol {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// What was wrong, with the offending data.
        message: String,
    },
    /// The provider reported an error inside the stream.
    #[error("{provider}: {model} returned an error{}: {message}", code_suffix(code))]
    Api {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// Provider error type or code, such as `overloaded_error`.
        code: Option<String>,
        /// The provider's message.
        message: String,
    },
    /// No API key is configured for a provider that needs one.
    #[error("{provider}: no API key for {model} — {hint}")]
    MissingKey {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// Where a key can be put.
        hint: String,
    },
    /// The request could not be built from the given context.
    #[error("{provider}: cannot build the request for {model}: {message}")]
    InvalidRequest {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// What was wrong.
        message: String,
    },
    /// The caller cancelled the request.
    #[error("request aborted")]
    Aborted,
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(h) => format!(" — {h}"),
        None => String::new(),
    }
}

fn code_suffix(code: &Option<String>) -> String {
    match code {
        Some(c) => format!(" ({c})"),
        None => String::new(),
    }
}

/// Phrases providers use when the prompt does not fit the context window.
const OVERFLOW_PHRASES: [&str; 9] = [
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "input is too long",
    "exceeds the maximum number of tokens",
    "input token count",
];

impl Error {
    /// The request exceeded the model's context window (so compaction may help).
    pub fn is_context_overflow(&self) -> bool {
        let message = match self {
            Error::Http { status: 400 | 413, message, .. } => message,
            Error::Api { message, .. } => message,
            Error::Http { .. }
            | Error::Connect { .. }
            | Error::Stream { .. }
            | Error::Protocol { .. }
            | Error::MissingKey { .. }
            | Error::InvalidRequest { .. }
            | Error::Aborted => return false,
        };
        let lower = message.to_ascii_lowercase();
        OVERFLOW_PHRASES.iter().any(|p| lower.contains(p))
    }

    /// The error is worth retrying (rate limits, overload, server errors, lost connections).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Http { status, .. } => is_retryable_status(*status),
            Error::Connect { .. } | Error::Stream { .. } => true,
            Error::Api { code, message, .. } => {
                // A numeric code is an HTTP status (OpenAI-compatible servers send 502 for
                // an upstream failure).
                if let Some(status) = code.as_deref().and_then(|c| c.trim().parse::<u16>().ok()) {
                    return is_retryable_status(status);
                }
                let code = code.as_deref().unwrap_or_default().to_ascii_lowercase();
                let message = message.to_ascii_lowercase();
                // Anthropic's in-stream `timeout_error` (504) and `api_error` (500) are
                // the server's own failures too.
                [
                    "overloaded",
                    "rate_limit",
                    "server_error",
                    "internal",
                    "unavailable",
                    "529",
                    "timeout",
                    "api_error",
                ]
                .iter()
                .any(|k| code.contains(k) || message.contains(k))
            }
            Error::Protocol { .. }
            | Error::MissingKey { .. }
            | Error::InvalidRequest { .. }
            | Error::Aborted => false,
        }
    }
}

impl Error {
    /// The provider is out of capacity for this model or this account: rate limited,
    /// overloaded, or out of quota (429, 503, 529, or an in-stream error saying so). After
    /// retries, a session with fallback models continues on the next one.
    pub fn is_capacity(&self) -> bool {
        const WORDS: [&str; 7] = [
            "overloaded",
            "rate_limit",
            "rate limit",
            "quota",
            "resource_exhausted",
            "capacity",
            "529",
        ];
        match self {
            Error::Http { status: 429 | 503 | 529, .. } => true,
            Error::Http { status, message, .. } => {
                let lower = message.to_ascii_lowercase();
                (*status == 400 || *status == 403)
                    && (lower.contains("quota") || lower.contains("credit balance"))
            }
            Error::Api { code, message, .. } => {
                let code = code.as_deref().unwrap_or_default().to_ascii_lowercase();
                let message = message.to_ascii_lowercase();
                matches!(code.trim(), "429" | "503" | "529")
                    || WORDS.iter().any(|k| code.contains(k) || message.contains(k))
            }
            Error::Connect { .. }
            | Error::Stream { .. }
            | Error::Protocol { .. }
            | Error::MissingKey { .. }
            | Error::InvalidRequest { .. }
            | Error::Aborted => false,
        }
    }
}

/// Statuses that mean "try again later": rate limits, timeouts, overload and 5xx.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || (500..=599).contains(&status)
}

/// An error with its sources, `outer: inner: …` (reqwest's own text hides the cause,
/// such as "connection refused").
pub(crate) fn describe_reqwest(e: &reqwest::Error) -> String {
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn capacity_errors_are_told_from_others() {
        let http = |status: u16, message: &str| Error::Http {
            provider: "p".into(),
            model: "m".into(),
            status,
            message: message.into(),
            retry_after: None,
            hint: None,
        };
        let api = |code: Option<&str>, message: &str| Error::Api {
            provider: "p".into(),
            model: "m".into(),
            code: code.map(str::to_owned),
            message: message.into(),
        };
        for e in [
            http(429, "slow down"),
            http(529, "Overloaded"),
            http(503, "unavailable"),
            http(400, "Your credit balance is too low"),
            api(Some("overloaded_error"), "Overloaded"),
            api(Some("insufficient_quota"), "You exceeded your current quota"),
            api(Some("RESOURCE_EXHAUSTED"), "try later"),
        ] {
            assert!(e.is_capacity(), "{e}");
        }
        for e in [
            http(400, "messages: tool_use ids must be unique"),
            http(401, "invalid key"),
            http(500, "internal error"),
            http(404, "model not found"),
            api(Some("invalid_request_error"), "bad"),
        ] {
            assert!(!e.is_capacity(), "{e}");
        }
    }

    #[test]
    fn http_error_reads_as_one_actionable_line() {
        let e = Error::Http {
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            status: 401,
            message: "invalid x-api-key".into(),
            retry_after: None,
            hint: Some("set ANTHROPIC_API_KEY or run rab with --api-key".into()),
        };
        assert_eq!(
            e.to_string(),
            "anthropic: HTTP 401 for claude-sonnet-4-5: invalid x-api-key — set ANTHROPIC_API_KEY or run rab with --api-key"
        );
        assert!(!e.is_retryable());
    }

    #[test]
    fn overflow_is_recognised_from_provider_messages() {
        let e = Error::Http {
            provider: "openai".into(),
            model: "m".into(),
            status: 400,
            message: "This model's maximum context length is 128000 tokens".into(),
            retry_after: None,
            hint: None,
        };
        assert!(e.is_context_overflow());
        let api = Error::Api {
            provider: "anthropic".into(),
            model: "m".into(),
            code: Some("overloaded_error".into()),
            message: "Overloaded".into(),
        };
        assert!(!api.is_context_overflow());
        assert!(api.is_retryable());
    }
}
