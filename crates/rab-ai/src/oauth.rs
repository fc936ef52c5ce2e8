//! Signing in with a subscription: OAuth 2.0 authorisation code with PKCE (RFC 7636)
//! and token refresh (RFC 6749 §6), as OpenAI's "Sign in with ChatGPT" for open-source
//! apps documents them (developers.openai.com/siwc, read 2026-11-28): the verifier and
//! its S256 challenge, the token endpoint's form requests and its answers. Where the
//! tokens are kept, and the browser round trip, are the caller's.

use base64::Engine;
use serde::Deserialize;
use sha2::Digest;

/// A PKCE verifier and its challenge.
#[derive(Clone, Debug)]
pub struct Pkce {
    /// Sent with the code exchange.
    pub verifier: String,
    /// Sent with the authorisation request (`code_challenge_method=S256`).
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier (64 unreserved characters) and its challenge.
    pub fn new() -> Self {
        let verifier = random_token(64);
        Self { challenge: challenge_of(&verifier), verifier }
    }
}

impl Default for Pkce {
    fn default() -> Self {
        Self::new()
    }
}

/// The S256 challenge of `verifier`: base64url (no padding) of its SHA-256.
pub fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// `n` random characters from the URL-safe alphabet, from the OS's randomness (for
/// states, nonces, verifiers, callback paths).
pub fn random_token(n: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    // Bytes at or past the last whole multiple of 66 are dropped: no character is more
    // likely than another.
    let limit = 256 - 256 % CHARS.len();
    let mut out = String::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        if let Err(e) = getrandom::fill(&mut buf) {
            // No OS randomness (a broken /dev/urandom): a seeded generator, said.
            tracing::warn!("no OS randomness ({e}); a weaker random value is used");
            let mut rng = fastrand::Rng::new();
            buf.iter_mut().for_each(|b| *b = rng.u8(..));
        }
        for &b in &buf {
            if usize::from(b) < limit && out.len() < n {
                out.push(char::from(CHARS[usize::from(b) % CHARS.len()]));
            }
        }
    }
    out
}

/// `pairs` as `application/x-www-form-urlencoded` (also a URL's query).
pub fn form(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    pairs.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect::<Vec<_>>().join("&")
}

/// What the token endpoint gave.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Tokens {
    /// The access token, sent as the key.
    pub access_token: String,
    /// The refresh token (a new one on every refresh).
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Seconds the access token lasts.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// The scopes granted, space-separated.
    #[serde(default)]
    pub scope: Option<String>,
    /// The OpenID Connect ID token.
    #[serde(default)]
    pub id_token: Option<String>,
}

/// Why a token request failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OauthError {
    /// The server could not be reached.
    #[error("cannot reach {url}: {reason}")]
    Connect {
        /// What was asked.
        url: String,
        /// Why.
        reason: String,
    },
    /// The server refused (`error`: `invalid_grant`, …).
    #[error("{url} refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// What was asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The OAuth error code.
        error: String,
        /// Its description, if any.
        description: Option<String>,
    },
    /// The answer was not a token response.
    #[error("{url} did not answer with tokens: {reason}")]
    Malformed {
        /// What was asked.
        url: String,
        /// What was wrong.
        reason: String,
    },
}

impl OauthError {
    /// The grant is gone for good (revoked, expired, replaced by a later refresh): only
    /// signing in again helps.
    pub fn is_revoked(&self) -> bool {
        match self {
            OauthError::Refused { status, error, .. } => {
                *status == 401
                    || matches!(
                        error.as_str(),
                        "invalid_grant"
                            | "invalid_refresh_token"
                            | "token_expired"
                            | "refresh_token_reused"
                            | "invalid_client"
                    )
            }
            OauthError::Connect { .. } | OauthError::Malformed { .. } => false,
        }
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    error_description: Option<String>,
}

/// Sends the request `build` makes on a client of its own (30 s to answer) and reads
/// the status and the body.
async fn send(
    url: &str,
    build: impl FnOnce(reqwest::Client) -> reqwest::RequestBuilder,
) -> Result<(u16, bytes::Bytes), OauthError> {
    let connect = |reason: String| OauthError::Connect { url: url.to_owned(), reason };
    let client = crate::tls::http_client_builder()
        .map_err(connect)?
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| connect(e.to_string()))?;
    let response = build(client).send().await.map_err(|e| connect(e.to_string()))?;
    let status = response.status().as_u16();
    let body = response.bytes().await.map_err(|e| connect(e.to_string()))?;
    Ok((status, body))
}

/// A JSON answer, or the refusal a status other than 2xx is (with the start of the
/// body).
fn json_answer(url: &str, status: u16, body: &[u8]) -> Result<serde_json::Value, OauthError> {
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(body).chars().take(300).collect::<String>();
        return Err(OauthError::Refused {
            url: url.to_owned(),
            status,
            error: format!("HTTP {status}"),
            description: Some(text),
        });
    }
    serde_json::from_slice(body)
        .map_err(|e| OauthError::Malformed { url: url.to_owned(), reason: e.to_string() })
}

/// POSTs `pairs` as a form to `url` (a token endpoint) and reads the tokens.
pub async fn token_request(url: &str, pairs: &[(&str, &str)]) -> Result<Tokens, OauthError> {
    let (status, body) = send(url, |c| {
        c.post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form(pairs))
    })
    .await?;
    if !(200..300).contains(&status) {
        let parsed: Option<ErrorBody> = serde_json::from_slice(&body).ok();
        let (error, description) = match parsed {
            Some(ErrorBody { error: Some(e), error_description }) => {
                let code = match &e {
                    serde_json::Value::String(s) => s.clone(),
                    other => other["code"].as_str().unwrap_or("error").to_owned(),
                };
                (code, error_description)
            }
            _ => (format!("HTTP {status}"), None),
        };
        return Err(OauthError::Refused { url: url.to_owned(), status, error, description });
    }
    let tokens: Tokens = serde_json::from_slice(&body)
        .map_err(|e| OauthError::Malformed { url: url.to_owned(), reason: e.to_string() })?;
    if tokens.access_token.is_empty() {
        return Err(OauthError::Malformed {
            url: url.to_owned(),
            reason: "no access_token".into(),
        });
    }
    Ok(tokens)
}

/// POSTs `body` as JSON to `url` and reads a JSON answer (OpenRouter's key exchange).
pub async fn post_json(
    url: &str,
    body: &serde_json::Value,
) -> Result<serde_json::Value, OauthError> {
    let (status, answer) = send(url, |c| {
        c.post(url).header("content-type", "application/json").body(body.to_string())
    })
    .await?;
    json_answer(url, status, &answer)
}

/// GETs a JSON document (an OpenID Connect discovery document).
pub async fn get_json(url: &str) -> Result<serde_json::Value, OauthError> {
    let (status, body) = send(url, |c| c.get(url)).await?;
    json_answer(url, status, &body)
}

/// The claims of a JWT (an ID token) without checking its signature: it came straight
/// from the token endpoint over TLS, which OpenID Connect Core §3.1.3.7 accepts in place
/// of the signature.
pub fn jwt_claims(token: &str) -> Option<serde_json::Value> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s_example() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 64);
        assert_eq!(p.challenge, challenge_of(&p.verifier));
    }

    #[test]
    fn random_tokens_are_long_unreserved_and_do_not_repeat() {
        let tokens: Vec<String> = (0..200).map(|_| random_token(43)).collect();
        assert!(tokens.iter().all(|t| t.len() == 43));
        assert!(
            tokens
                .iter()
                .flat_map(|t| t.bytes())
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        );
        let mut unique = tokens.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tokens.len());
        // Every character of the alphabet comes up (8,600 draws of 66).
        let seen: std::collections::HashSet<u8> = tokens.iter().flat_map(|t| t.bytes()).collect();
        assert_eq!(seen.len(), 66);
    }

    #[test]
    fn forms_encode_what_is_not_unreserved() {
        assert_eq!(form(&[("a b", "x/y:z"), ("k", "v~")]), "a%20b=x%2Fy%3Az&k=v~");
    }

    #[test]
    fn revoked_grants_are_told_apart_from_passing_faults() {
        let refused = |status, error: &str| OauthError::Refused {
            url: "u".into(),
            status,
            error: error.into(),
            description: None,
        };
        assert!(refused(400, "invalid_grant").is_revoked());
        assert!(refused(401, "whatever").is_revoked());
        assert!(!refused(503, "HTTP 503").is_revoked());
    }
}
