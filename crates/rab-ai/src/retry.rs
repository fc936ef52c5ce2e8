//! Retry policy: exponential backoff with jitter, honouring the provider's `retry-after`.

use std::time::Duration;

/// When and how long to wait before trying a failed request again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts in all).
    pub max_retries: u32,
    /// Delay before the first retry; doubles with each further retry.
    pub base_delay: Duration,
    /// Upper bound of a computed backoff delay.
    pub max_delay: Duration,
    /// A `retry-after` longer than this is not waited for: the computed backoff is used
    /// instead, as the providers' own SDKs do.
    pub max_retry_after: Duration,
    /// No retry starts once this long has passed since the first attempt: a failing
    /// provider ends the run in bounded time whatever the number of retries.
    pub budget: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            budget: Duration::from_secs(600),
        }
    }
}

/// How long a request may stay silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To open the connection (TCP and TLS).
    pub connect: Duration,
    /// From sending the request to the response's headers.
    pub first_byte: Duration,
    /// Between two pieces of the response's stream.
    pub idle: Duration,
    /// How often a wait is reported while it lasts ([`crate::StreamEvent::Waiting`]).
    pub notice: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(15),
            first_byte: Duration::from_secs(180),
            idle: Duration::from_secs(120),
            notice: Duration::from_secs(15),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self { max_retries: 0, ..Self::default() }
    }

    /// The delay before retry number `retry` (1-based), or `None` when the policy says
    /// to give up. A provider's `retry-after` wins over the computed backoff when it is
    /// at most [`RetryPolicy::max_retry_after`]; a longer one is not waited for, and the
    /// backoff is used instead (as Anthropic's and OpenAI's SDKs do).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry > self.max_retries {
            return None;
        }
        if let Some(wait) = retry_after.filter(|w| *w <= self.max_retry_after) {
            return Some(wait);
        }
        let exp = self.base_delay.saturating_mul(1u32 << (retry - 1).min(16));
        let capped = exp.min(self.max_delay);
        // ±20 % jitter so that many clients hit by one outage do not retry in lockstep.
        let factor = 0.8 + 0.4 * fastrand::f64();
        Some(capped.mul_f64(factor))
    }
}

/// Reads `retry-after-ms` (OpenAI) or `retry-after`, in seconds or as an HTTP-date
/// (the time from `now` until then; none when it has passed).
pub fn parse_retry_after(
    headers: &reqwest::header::HeaderMap,
    now: std::time::SystemTime,
) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `x-should-retry` (Anthropic's and OpenAI's servers): `Some(true)` retries whatever
/// the status, `Some(false)` never does; without it the status decides.
pub fn should_retry(headers: &reqwest::header::HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The delay Gemini asks for in an error body: a `google.rpc.RetryInfo` detail's
/// `retryDelay` (`"37s"`, `"1.5s"`).
pub fn body_retry_delay(body: &str) -> Option<Duration> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let details = v.pointer("/error/details")?.as_array()?;
    let delay = details.iter().find_map(|d| {
        let is_info = d["@type"].as_str().is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
        is_info.then(|| d["retryDelay"].as_str()).flatten()
    })?;
    let secs = delay.strip_suffix('s')?.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn backoff_doubles_within_jitter_and_stops_after_max() {
        let p = RetryPolicy::default();
        let d1 = p.delay(1, None).unwrap();
        let d2 = p.delay(2, None).unwrap();
        assert!(d1 >= Duration::from_millis(800) && d1 <= Duration::from_millis(1200));
        assert!(d2 >= Duration::from_millis(1600) && d2 <= Duration::from_millis(2400));
        assert_eq!(p.delay(3, None), None);
    }

    #[test]
    fn retry_after_wins_and_a_long_one_falls_back_to_the_backoff() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(1, Some(Duration::from_secs(1))), Some(Duration::from_secs(1)));
        let d = p.delay(1, Some(Duration::from_secs(600))).unwrap();
        assert!(d >= Duration::from_millis(800) && d <= Duration::from_millis(1200), "{d:?}");
    }

    #[test]
    fn should_retry_and_gemini_retry_info_are_read() {
        let mut h = HeaderMap::new();
        assert_eq!(should_retry(&h), None);
        h.insert("x-should-retry", HeaderValue::from_static("true"));
        assert_eq!(should_retry(&h), Some(true));
        h.insert("x-should-retry", HeaderValue::from_static("false"));
        assert_eq!(should_retry(&h), Some(false));
        let body = r#"{"error": {"code": 429, "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}}"#;
        assert_eq!(body_retry_delay(body), Some(Duration::from_millis(1500)));
        assert_eq!(body_retry_delay("not json"), None);
    }

    #[test]
    fn parses_both_retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(
            parse_retry_after(&h, std::time::SystemTime::now()),
            Some(Duration::from_secs(2))
        );
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(
            parse_retry_after(&h, std::time::SystemTime::now()),
            Some(Duration::from_millis(250))
        );
        let mut date = HeaderMap::new();
        date.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        let at = httpdate::parse_http_date("Wed, 21 Oct 2015 07:27:57 GMT").unwrap();
        assert_eq!(parse_retry_after(&date, at), Some(Duration::from_secs(3)));
        // A date that has passed: no wait.
        let later = at + Duration::from_secs(3600);
        assert_eq!(parse_retry_after(&date, later), Some(Duration::ZERO));
    }
}
