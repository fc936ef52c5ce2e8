//! Signing in with a ChatGPT plan: OpenAI's "Sign in with ChatGPT" for open-source,
//! locally run apps (developers.openai.com/siwc/token-sharing-open-source, read
//! 2026-11-28), the one subscription sign-in whose terms allow a tool like rab (see
//! docs/providers.md). The browser signs in at OpenAI and comes back to a one-time
//! listener on 127.0.0.1; the code is exchanged with PKCE; the tokens go to auth.json
//! (0600), never to the environment of a child process, and renew themselves
//! ([`OauthKeys`]): before they expire, and once when the API answers 401.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rab_ai::oauth::{self, OauthError, Pkce};
use rab_config::{Auth, Credential};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// OpenAI's sign-in server.
pub const OPENAI_ISSUER: &str = "https://auth.openai.com";
/// What the sign-in asks for: identity, renewal, and use of the ChatGPT plan.
const SCOPES: &str =
    "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
/// The scope that lets the tokens pay for Responses requests with the plan.
const PLAN_SCOPE: &str = "chatgpt.tokens.use.direct";
/// The API the tokens are for.
const RESOURCE: &str = "https://api.openai.com/v1";
/// The first sign-in's client id: OpenAI registers this installation and answers with
/// its own.
const REGISTRATION_CLIENT: &str = "dynamic_agent_client";
/// How long the browser has to come back.
const WAIT: Duration = Duration::from_secs(300);
/// Tokens are renewed this long before they expire.
const EARLY: u64 = 5 * 60 * 1000;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Where a ChatGPT sign-in goes: OpenAI's server, or `RAB_OPENAI_AUTH_URL` (a test's).
pub fn issuer(env: &rab_config::Env) -> String {
    env.get("RAB_OPENAI_AUTH_URL").unwrap_or(OPENAI_ISSUER).trim_end_matches('/').to_owned()
}

fn refused(e: &OauthError) -> String {
    if e.is_revoked() {
        format!(
            "the ChatGPT sign-in has ended ({e}); sign in again with `rab login openai --chatgpt`"
        )
    } else {
        format!("cannot renew the ChatGPT sign-in: {e}")
    }
}

/// The query parameters of a request line's target.
fn query(target: &str) -> Vec<(String, String)> {
    let q = target.split_once('?').map(|(_, q)| q).unwrap_or_default();
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// Waits for the browser at `listener`: the first request for exactly `path`, whose
/// query it returns (other requests get a 404, and the wait goes on).
async fn callback(
    listener: tokio::net::TcpListener,
    path: &str,
) -> Result<Vec<(String, String)>, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = stream.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&head);
        let target = text.lines().next().and_then(|l| l.split(' ').nth(1)).unwrap_or("/");
        if target.split('?').next() != Some(path) {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").await;
            continue;
        }
        let page = "<!doctype html><title>rab</title><p>Signed in. You can close this tab and \
                    go back to rab.</p>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(answer.as_bytes()).await;
        return Ok(query(target));
    }
}

/// Signs in with a ChatGPT plan at `issuer` and stores the tokens for `openai` in the
/// auth.json at `auth_path`. `show` gets the address to open in a browser. Returns what
/// to tell the user.
pub async fn sign_in_chatgpt(
    auth_path: &Path,
    issuer: &str,
    show: &mut (dyn FnMut(&str) + Send),
) -> Result<String, String> {
    let mut auth = Auth::load(auth_path).map_err(|e| e.to_string())?;
    let (saved_client, host_id) = match auth.credential("openai") {
        Some(Credential::Oauth { client_id, host_id, .. }) if !host_id.is_empty() => {
            (Some(client_id.clone()), host_id.clone())
        }
        _ => (None, format!("urn:uuid:{}", uuid_v4())),
    };
    let discovery = format!("{issuer}/.well-known/openid-configuration");
    let config = oauth::get_json(&discovery).await.map_err(|e| e.to_string())?;
    let endpoint = |key: &str| {
        config[key].as_str().map(str::to_owned).ok_or_else(|| format!("{discovery} names no {key}"))
    };
    let (authorize, token_url) = (endpoint("authorization_endpoint")?, endpoint("token_endpoint")?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the browser: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/auth/callback");
    let (pkce, state, nonce) = (Pkce::new(), oauth::random_token(32), oauth::random_token(32));
    let client = saved_client.clone().unwrap_or_else(|| REGISTRATION_CLIENT.to_owned());
    let mut params = vec![
        ("client_id", client.as_str()),
        ("response_type", "code"),
        ("redirect_uri", redirect.as_str()),
        ("scope", SCOPES),
        ("resource", RESOURCE),
        ("state", state.as_str()),
        ("nonce", nonce.as_str()),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("ext_agent_host_id", host_id.as_str()),
    ];
    if saved_client.is_none() {
        params.push(("agent_name_hint", "rab"));
    }
    show(&format!("{authorize}?{}", oauth::form(&params)));
    let got = tokio::time::timeout(WAIT, callback(listener, "/auth/callback")).await.map_err(
        |_| {
            "no answer from the browser within 5 minutes; run `rab login openai --chatgpt` again"
                .to_owned()
        },
    )??;
    let param = |k: &str| got.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    if let Some(error) = param("error") {
        return Err(match error.as_str() {
            "access_denied" => "the sign-in was declined in the browser; nothing stored".to_owned(),
            other => format!("the sign-in failed: {other}; nothing stored"),
        });
    }
    if param("state").as_deref() != Some(state.as_str()) {
        return Err("the browser came back with another sign-in's state; nothing stored".into());
    }
    let code = param("code").ok_or("the browser came back without a code; nothing stored")?;
    let client_id = match (&saved_client, param("client_id")) {
        (Some(saved), Some(issued)) if *saved != issued => {
            return Err("the sign-in came back for another registration; nothing stored".into());
        }
        (Some(saved), _) => saved.clone(),
        (None, Some(issued)) if issued != REGISTRATION_CLIENT => issued,
        (None, _) => return Err("OpenAI issued no client id for rab; nothing stored".into()),
    };
    let tokens = oauth::token_request(
        &token_url,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
            ("code", &code),
            ("code_verifier", &pkce.verifier),
            ("redirect_uri", &redirect),
            ("resource", RESOURCE),
        ],
    )
    .await
    .map_err(|e| format!("the sign-in could not be completed: {e}"))?;
    let claims = tokens.id_token.as_deref().and_then(oauth::jwt_claims);
    if let Some(c) = &claims
        && c["nonce"].as_str().is_some_and(|n| n != nonce)
    {
        return Err("the ID token answers another sign-in (nonce); nothing stored".into());
    }
    let granted = tokens.scope.as_deref().unwrap_or_default();
    if !granted.split(' ').any(|s| s == PLAN_SCOPE) {
        return Err(
            "signed in, but ChatGPT plan use was not granted, so rab has no way to pay for \
             requests with it; allow it at the next sign-in, or store an API key with /login openai"
                .into(),
        );
    }
    let refresh =
        tokens.refresh_token.clone().ok_or("OpenAI gave no refresh token; nothing stored")?;
    auth.set(
        "openai",
        Credential::Oauth {
            access: tokens.access_token.clone(),
            refresh,
            expires_at: now_ms() + tokens.expires_in.unwrap_or(3600) * 1000,
            client_id,
            token_url,
            host_id,
        },
    )
    .map_err(|e| e.to_string())?;
    let who = claims
        .as_ref()
        .and_then(|c| c["email"].as_str())
        .map(|e| format!(" as {e}"))
        .unwrap_or_default();
    Ok(format!(
        "signed in with ChatGPT{who}; openai models now use your ChatGPT plan (tokens in {}, \
         readable only by you)",
        auth_path.display()
    ))
}

/// OpenRouter's site, where its sign-in runs.
pub const OPENROUTER_SITE: &str = "https://openrouter.ai";

/// Where an OpenRouter sign-in goes: OpenRouter, or `RAB_OPENROUTER_AUTH_URL` (a test's).
pub fn openrouter_site(env: &rab_config::Env) -> String {
    env.get("RAB_OPENROUTER_AUTH_URL").unwrap_or(OPENROUTER_SITE).trim_end_matches('/').to_owned()
}

/// Signs in at OpenRouter with PKCE (openrouter.ai/docs/guides/overview/auth/oauth, read
/// 2026-11-28): the browser authorises rab, and the code is exchanged for an ordinary
/// OpenRouter API key (pay per use; it does not expire), stored in auth.json.
pub async fn sign_in_openrouter(
    auth_path: &Path,
    site: &str,
    show: &mut (dyn FnMut(&str) + Send),
) -> Result<String, String> {
    let mut auth = Auth::load(auth_path).map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the browser: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    // OpenRouter has no state parameter: the callback's path holds a random value of
    // this sign-in's own, so another local process cannot deliver a code of its own
    // (which would store its key as the user's) without knowing it.
    let callback_path = format!("/auth/callback/{}", oauth::random_token(32));
    let callback_url = format!("http://127.0.0.1:{port}{callback_path}");
    let pkce = Pkce::new();
    let params = [
        ("callback_url", callback_url.as_str()),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    show(&format!("{site}/auth?{}", oauth::form(&params)));
    let got =
        tokio::time::timeout(WAIT, callback(listener, &callback_path)).await.map_err(|_| {
            "no answer from the browser within 5 minutes; run `rab login openrouter --oauth` again"
                .to_owned()
        })??;
    let code = got
        .iter()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.clone())
        .ok_or("the browser came back without a code (declined?); nothing stored")?;
    let body = serde_json::json!({"code": code, "code_verifier": pkce.verifier, "code_challenge_method": "S256"});
    let answer = oauth::post_json(&format!("{site}/api/v1/auth/keys"), &body)
        .await
        .map_err(|e| format!("the sign-in could not be completed: {e}"))?;
    let key = answer["key"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or("OpenRouter gave no key; nothing stored")?;
    auth.set_key("openrouter", key).map_err(|e| e.to_string())?;
    Ok(format!(
        "signed in at OpenRouter; its key is stored in {} (readable only by you) and \
         openrouter models use it",
        auth_path.display()
    ))
}

/// A random UUID, version 4.
fn uuid_v4() -> String {
    let mut rng = fastrand::Rng::new();
    let mut b: [u8; 16] = std::array::from_fn(|_| rng.u8(..));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// A signed-in provider's access token, renewed from auth.json's refresh token.
#[derive(Debug)]
pub struct OauthKeys {
    provider: String,
    auth_path: PathBuf,
    /// One renewal at a time (a refresh token works once).
    lock: tokio::sync::Mutex<()>,
}

impl OauthKeys {
    /// The renewable key of `provider`, stored in `auth_path`.
    pub fn new(provider: &str, auth_path: &Path) -> Self {
        Self {
            provider: provider.to_owned(),
            auth_path: auth_path.to_owned(),
            lock: Default::default(),
        }
    }

    /// Holds auth.json's lock file (`auth.json.lock`) while it lives: one renewal at a
    /// time across rab processes, since a refresh token works once.
    async fn file_lock(&self) -> Result<std::fs::File, String> {
        let path = self.auth_path.with_extension("json.lock");
        tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let file =
                std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
            file.lock()?;
            Ok::<_, std::io::Error>(file)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot lock {}: {e}", self.auth_path.display()))
    }

    fn stored(&self) -> Result<Credential, String> {
        let auth = Auth::load(&self.auth_path).map_err(|e| e.to_string())?;
        match auth.credential(&self.provider) {
            Some(c @ Credential::Oauth { .. }) => Ok(c.clone()),
            _ => Err(format!(
                "the {} sign-in is gone from {}; sign in again with `rab login {} --chatgpt`",
                self.provider,
                self.auth_path.display(),
                self.provider
            )),
        }
    }

    /// Renews `credential` at its token endpoint and stores the new tokens.
    async fn renew(&self, credential: Credential) -> Result<String, String> {
        let Credential::Oauth { refresh, client_id, token_url, host_id, .. } = credential else {
            return Err("not a sign-in".into());
        };
        let tokens = oauth::token_request(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("client_id", &client_id),
                ("refresh_token", &refresh),
                ("resource", RESOURCE),
            ],
        )
        .await
        .map_err(|e| refused(&e))?;
        let mut auth = Auth::load(&self.auth_path).map_err(|e| e.to_string())?;
        auth.set(
            &self.provider,
            Credential::Oauth {
                access: tokens.access_token.clone(),
                // The old refresh token no longer works once a new one is issued.
                refresh: tokens.refresh_token.unwrap_or(refresh),
                expires_at: now_ms() + tokens.expires_in.unwrap_or(3600) * 1000,
                client_id,
                token_url,
                host_id,
            },
        )
        .map_err(|e| e.to_string())?;
        tracing::debug!(provider = %self.provider, "sign-in renewed");
        Ok(tokens.access_token)
    }
}

impl rab_ai::KeySource for OauthKeys {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn current(&self) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(async move {
            let _held = self.lock.lock().await;
            if let Credential::Oauth { access, expires_at, .. } = self.stored()?
                && expires_at > now_ms() + EARLY
            {
                return Ok(access);
            }
            // Due: renew under the file lock, unless another rab did meanwhile.
            let _file = self.file_lock().await?;
            let credential = self.stored()?;
            match &credential {
                Credential::Oauth { access, expires_at, .. } if *expires_at > now_ms() + EARLY => {
                    Ok(access.clone())
                }
                _ => self.renew(credential).await,
            }
        })
    }

    fn refresh<'a>(&'a self, rejected: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let _held = self.lock.lock().await;
            let _file = self.file_lock().await?;
            let credential = self.stored()?;
            match &credential {
                // Renewed meanwhile (another request, another rab): use that.
                Credential::Oauth { access, .. } if access != rejected => Ok(access.clone()),
                _ => self.renew(credential).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rab_ai::KeySource;

    fn stored(dir: &Path, llm: &rab_fake_llm::FakeLlm) -> PathBuf {
        let path = dir.join("auth.json");
        let mut auth = Auth::load(&path).unwrap();
        auth.set(
            "openai",
            Credential::Oauth {
                access: "at_old".into(),
                refresh: "rt_old".into(),
                expires_at: now_ms() + 3_600_000,
                client_id: "oaiapp_fake".into(),
                token_url: format!("{}/api/accounts/oauth/token", llm.url()),
                host_id: "urn:uuid:x".into(),
            },
        )
        .unwrap();
        llm.signed_in("at_old", "rt_old");
        path
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_processes_renewing_at_once_renew_once() {
        // Two rab processes (two key sources over one auth.json) are refused the same
        // token at the same moment: one renews, the other takes its new token, instead
        // of spending the used refresh token and being told to sign in again.
        let dir = tempfile::tempdir().unwrap();
        let llm = rab_fake_llm::FakeLlm::start();
        let path = stored(dir.path(), &llm);
        let (a, b) = (OauthKeys::new("openai", &path), OauthKeys::new("openai", &path));
        let (ka, kb) = tokio::join!(a.refresh("at_old"), b.refresh("at_old"));
        assert_eq!(ka.as_deref(), Ok("at_fake_1"));
        assert_eq!(kb.as_deref(), Ok("at_fake_1"));
        assert_eq!(llm.refreshes(), 1);
    }

    #[tokio::test]
    async fn a_refused_renewal_names_the_way_back() {
        let dir = tempfile::tempdir().unwrap();
        let llm = rab_fake_llm::FakeLlm::start();
        let path = stored(dir.path(), &llm);
        llm.revoke_sign_in();
        let e = OauthKeys::new("openai", &path).refresh("at_old").await.unwrap_err();
        assert!(e.contains("rab login openai --chatgpt") && e.contains("invalid_grant"), "{e}");
        // Nothing was lost: the stored sign-in is as it was.
        let auth = Auth::load(&path).unwrap();
        assert!(
            matches!(auth.credential("openai"), Some(Credential::Oauth { refresh, .. }) if refresh == "rt_old")
        );
    }
}
