//! A fake OpenAI sign-in server ("Sign in with ChatGPT", open-source flow, as
//! developers.openai.com/siwc describes it, read 2026-11-28): discovery, the
//! authorisation step (the test plays the browser: the answer redirects to the
//! client's loopback callback, as the user's approval would), the code exchange with
//! PKCE (S256), and refresh with rotating refresh tokens. While a sign-in is on, OpenAI
//! requests must carry its current access token; tests expire or revoke it.

use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;

use crate::inspect::RecordedRequest;

/// The sign-in server's state.
#[derive(Debug, Default)]
pub(crate) struct OauthState {
    /// OpenAI requests need the current access token.
    pub enabled: bool,
    /// Seconds an access token lasts.
    pub expires_in: u64,
    /// Tokens issued so far (for unique names).
    issued: u32,
    /// Authorisation codes not exchanged yet.
    codes: Vec<Code>,
    /// The access token requests must carry.
    pub access: Option<String>,
    /// The refresh token that works now (each works once).
    pub refresh: Option<String>,
    /// Refresh grants served.
    pub refreshes: u32,
    /// The user declines in the browser.
    pub declines: bool,
    /// The access token stops working after this many requests made with it.
    pub expire_after: Option<u32>,
    /// Requests made with the current access token.
    pub served: u32,
}

#[derive(Debug)]
struct Code {
    code: String,
    challenge: String,
    client_id: String,
    redirect: String,
    nonce: String,
}

/// What the sign-in server answers: status, content type, body and headers.
pub(crate) type Reply = (u16, &'static str, String, Vec<(String, String)>);

fn query(target: &str) -> Vec<(String, String)> {
    let q = target.split_once('?').map(|(_, q)| q).unwrap_or_default();
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

fn json(status: u16, body: Value) -> Reply {
    (status, "application/json", body.to_string(), Vec::new())
}

fn refused(error: &str, description: &str) -> Reply {
    json(400, json!({"error": error, "error_description": description}))
}

impl OauthState {
    fn tokens(&mut self, nonce: &str) -> Value {
        self.issued += 1;
        let n = self.issued;
        let access = format!("at_fake_{n}");
        let refresh = format!("rt_fake_{n}");
        self.access = Some(access.clone());
        self.refresh = Some(refresh.clone());
        self.served = 0;
        let claims = json!({"iss": "fake", "email": "user@example.com", "nonce": nonce});
        let b64 =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let id_token = format!("{}.{}.sig", b64(&json!({"alg": "RS256"})), b64(&claims));
        json!({"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
               "expires_in": self.expires_in, "id_token": id_token,
               "scope": "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"})
    }
}

/// The sign-in server's answer to `req` at base `base`, when it is one of its routes.
pub(crate) fn answer(state: &mut OauthState, req: &RecordedRequest, base: &str) -> Option<Reply> {
    let path = req.path.split('?').next().unwrap_or_default();
    match (req.method.as_str(), path) {
        ("GET", "/.well-known/openid-configuration") => Some(json(
            200,
            json!({"issuer": base,
                   "authorization_endpoint": format!("{base}/api/accounts/authorize"),
                   "token_endpoint": format!("{base}/api/accounts/oauth/token")}),
        )),
        ("GET", "/api/accounts/authorize") => Some(authorize(state, &query(&req.path))),
        // OpenRouter's PKCE sign-in: the browser's approval, then the key exchange.
        ("GET", "/auth") => Some(openrouter_authorize(state, &query(&req.path))),
        ("POST", "/api/v1/auth/keys") => Some(openrouter_key(state, &req.body)),
        ("POST", "/api/accounts/oauth/token") => {
            let form: Vec<(String, String)> =
                url::form_urlencoded::parse(&req.raw).into_owned().collect();
            Some(token(state, &form))
        }
        _ => None,
    }
}

fn authorize(state: &mut OauthState, q: &[(String, String)]) -> Reply {
    let p = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
    let redirect = p("redirect_uri");
    if !redirect.starts_with("http://127.0.0.1:") && !redirect.starts_with("http://localhost:") {
        return refused("invalid_request", "redirect_uri must be an http loopback address");
    }
    if p("code_challenge_method") != "S256" || p("code_challenge").is_empty() {
        return refused("invalid_request", "PKCE with S256 is required");
    }
    if p("ext_agent_host_id").is_empty() || p("response_type") != "code" {
        return refused("invalid_request", "ext_agent_host_id and response_type=code are required");
    }
    let scopes = p("scope");
    if !scopes.split(' ').any(|s| s == "chatgpt.tokens.use.direct") {
        return refused("invalid_scope", "plan use was not requested");
    }
    let location = if state.declines {
        format!("{redirect}?error=access_denied&state={}", p("state"))
    } else {
        // First registration: this installation gets a client id of its own.
        let client_id = match p("client_id").as_str() {
            "dynamic_agent_client" => "oaiapp_fake".to_owned(),
            other => other.to_owned(),
        };
        let code = format!("code_{}", state.codes.len() + 1);
        state.codes.push(Code {
            code: code.clone(),
            challenge: p("code_challenge"),
            client_id: client_id.clone(),
            redirect: redirect.clone(),
            nonce: p("nonce"),
        });
        format!("{redirect}?code={code}&state={}&client_id={client_id}", p("state"))
    };
    (302, "text/plain", String::new(), vec![("location".to_owned(), location)])
}

fn token(state: &mut OauthState, form: &[(String, String)]) -> Reply {
    let p = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
    if p("resource") != "https://api.openai.com/v1" {
        return refused("invalid_target", "resource must be https://api.openai.com/v1");
    }
    match p("grant_type").as_str() {
        "authorization_code" => {
            let Some(at) = state.codes.iter().position(|c| c.code == p("code")) else {
                return refused("invalid_grant", "unknown or used code");
            };
            let code = state.codes.remove(at);
            let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(p("code_verifier")));
            if challenge != code.challenge {
                return refused("invalid_grant", "code_verifier does not match the challenge");
            }
            if p("client_id") != code.client_id || p("redirect_uri") != code.redirect {
                return refused("invalid_grant", "client_id or redirect_uri differs");
            }
            json(200, state.tokens(&code.nonce))
        }
        "refresh_token" => {
            if state.refresh.as_deref() != Some(p("refresh_token").as_str()) {
                return refused("invalid_grant", "refresh token revoked or already used");
            }
            state.refreshes += 1;
            json(200, state.tokens(""))
        }
        other => refused("unsupported_grant_type", other),
    }
}

fn openrouter_authorize(state: &mut OauthState, q: &[(String, String)]) -> Reply {
    let p = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
    let callback = p("callback_url");
    if callback.is_empty() {
        return refused("invalid_request", "callback_url is required");
    }
    let location = if state.declines {
        callback
    } else {
        let code = format!("or_code_{}", state.codes.len() + 1);
        state.codes.push(Code {
            code: code.clone(),
            challenge: p("code_challenge"),
            client_id: String::new(),
            redirect: callback.clone(),
            nonce: p("code_challenge_method"),
        });
        format!("{callback}?code={code}")
    };
    (302, "text/plain", String::new(), vec![("location".to_owned(), location)])
}

fn openrouter_key(state: &mut OauthState, body: &Value) -> Reply {
    let code = body["code"].as_str().unwrap_or_default();
    let Some(at) = state.codes.iter().position(|c| c.code == code) else {
        return json(403, json!({"error": {"code": 403, "message": "Invalid code"}}));
    };
    let c = state.codes.remove(at);
    let verifier = body["code_verifier"].as_str().unwrap_or_default();
    let challenge =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier));
    if c.nonce != "S256" || challenge != c.challenge {
        return json(403, json!({"error": {"code": 403, "message": "Invalid code_verifier"}}));
    }
    state.issued += 1;
    json(200, json!({"key": format!("sk-or-fake-{}", state.issued), "user_id": "user_fake"}))
}
