//! What a local or self-hosted server (Ollama, llama.cpp's llama-server, LM Studio,
//! vLLM) says about its models: their ids and, where it says, their context windows.
//! rab's model table knows nothing of what such a server has pulled or loaded, so
//! `rab --list-models --provider ollama` asks the server, and a session on a model the
//! table does not know takes its context window from the server.

use std::time::Duration;

use serde_json::Value;

/// Largest listing read from a server.
const MAX_LISTING: usize = 4 * 1024 * 1024;

/// A model a server offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerModel {
    /// Its id, as `--model` takes it.
    pub id: String,
    /// The context window the server reports, if it reports one.
    pub context_window: Option<u64>,
}

/// Why a server's model list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// No connection, or no answer in time.
    #[error(
        "cannot reach {url}: {reason} — is the server running? Pass --base-url if it listens elsewhere"
    )]
    Unreachable {
        /// What was asked.
        url: String,
        /// The transport's error.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        /// What was asked.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The answer was not a model list.
    #[error("{url} did not answer with a model list: {reason}")]
    Malformed {
        /// What was asked.
        url: String,
        /// What was wrong.
        reason: String,
    },
}

/// Whether the server at `base_url` of provider `provider` speaks Ollama's own API
/// (`/api/tags`, `/api/show`) besides the OpenAI-style one.
pub fn is_ollama(provider: &str, base_url: &str) -> bool {
    provider == "ollama" || base_url.contains(":11434")
}

/// The models the server at `base_url` (the OpenAI-style base, ending in `/v1`) lists,
/// by Ollama's `/api/tags` (with each model's context from `/api/show`) where the
/// server is Ollama, else by `GET /v1/models`.
pub async fn server_models(
    provider: &str,
    base_url: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Result<Vec<ServerModel>, ListError> {
    let client = client(timeout)?;
    if is_ollama(provider, base_url) {
        let root = ollama_root(base_url);
        let url = format!("{root}/api/tags");
        match get_json(&client, &url, api_key).await {
            Ok(listing) => {
                let mut models = parse_ollama_tags(&url, &listing)?;
                for m in &mut models {
                    m.context_window = ollama_context(&client, &root, &m.id, api_key).await;
                }
                return Ok(models);
            }
            // An OpenAI-compatible server on Ollama's port: fall through.
            Err(ListError::Status { status: 404, .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let listing = get_json(&client, &url, api_key).await?;
    parse_openai_models(&url, &listing)
}

/// The context window the server reports for `model`, if it reports one (and answers
/// within `timeout`).
pub async fn server_context_window(
    provider: &str,
    base_url: &str,
    model: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Option<u64> {
    if is_ollama(provider, base_url) {
        let client = client(timeout).ok()?;
        if let Some(n) = ollama_context(&client, &ollama_root(base_url), model, api_key).await {
            return Some(n);
        }
    }
    let models = server_models(provider, base_url, api_key, timeout).await.ok()?;
    models.into_iter().find(|m| m.id == model)?.context_window
}

fn client(timeout: Duration) -> Result<reqwest::Client, ListError> {
    crate::tls::http_client_builder()
        .and_then(|b| {
            b.connect_timeout(timeout).timeout(timeout).build().map_err(|e| e.to_string())
        })
        .map_err(|reason| ListError::Unreachable { url: String::new(), reason })
}

/// `http://host:11434/v1` → `http://host:11434`.
fn ollama_root(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_owned()
}

async fn get_json(
    client: &reqwest::Client,
    url: &str,
    api_key: Option<&str>,
) -> Result<Value, ListError> {
    let mut request = client.get(url);
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        request = request.bearer_auth(key);
    }
    read_json(url, request).await
}

async fn read_json(url: &str, request: reqwest::RequestBuilder) -> Result<Value, ListError> {
    let unreachable = |e: reqwest::Error| ListError::Unreachable {
        url: url.to_owned(),
        reason: crate::error::describe_reqwest(&e),
    };
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(unreachable)?;
    let body = &bytes[..bytes.len().min(MAX_LISTING)];
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).trim().to_owned();
        return Err(ListError::Status { url: url.to_owned(), status, body: text });
    }
    serde_json::from_slice(body)
        .map_err(|e| ListError::Malformed { url: url.to_owned(), reason: e.to_string() })
}

/// Ollama's `/api/show`: the first `*.context_length` in `model_info`.
async fn ollama_context(
    client: &reqwest::Client,
    root: &str,
    model: &str,
    api_key: Option<&str>,
) -> Option<u64> {
    let url = format!("{root}/api/show");
    let mut request = client
        .post(&url)
        .header("content-type", "application/json")
        .body(serde_json::json!({ "model": model }).to_string());
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        request = request.bearer_auth(key);
    }
    let shown = read_json(&url, request).await.ok()?;
    shown
        .get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

/// `{"models": [{"name": …}]}` (Ollama's `/api/tags`).
fn parse_ollama_tags(url: &str, listing: &Value) -> Result<Vec<ServerModel>, ListError> {
    let list = listing.get("models").and_then(Value::as_array).ok_or_else(|| {
        ListError::Malformed { url: url.to_owned(), reason: "no \"models\" array".into() }
    })?;
    Ok(list
        .iter()
        .filter_map(|m| m.get("name").or_else(|| m.get("model")).and_then(Value::as_str))
        .map(|id| ServerModel { id: id.to_owned(), context_window: None })
        .collect())
}

/// `{"data": [{"id": …}]}` with a context window under the name each server uses:
/// vLLM's `max_model_len`, LM Studio's `max_context_length`, OpenRouter-style
/// `context_length`, llama.cpp's `meta.n_ctx_train`.
fn parse_openai_models(url: &str, listing: &Value) -> Result<Vec<ServerModel>, ListError> {
    let list = listing.get("data").and_then(Value::as_array).ok_or_else(|| {
        ListError::Malformed { url: url.to_owned(), reason: "no \"data\" array".into() }
    })?;
    Ok(list
        .iter()
        .filter_map(|m| {
            let id = m.get("id").and_then(Value::as_str)?;
            let context_window = ["max_model_len", "max_context_length", "context_length"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_u64))
                .or_else(|| m.pointer("/meta/n_ctx_train").and_then(Value::as_u64))
                .filter(|n| *n > 0);
            Some(ServerModel { id: id.to_owned(), context_window })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_context_field_is_read() {
        let listing = serde_json::json!({"object": "list", "data": [
            {"id": "vllm-model", "max_model_len": 32768},
            {"id": "lmstudio-model", "max_context_length": 8192},
            {"id": "llamacpp-model", "meta": {"n_ctx_train": 131072}},
            {"id": "bare"},
            {"no_id": true},
        ]});
        let models = parse_openai_models("u", &listing).unwrap();
        let got: Vec<(&str, Option<u64>)> =
            models.iter().map(|m| (m.id.as_str(), m.context_window)).collect();
        assert_eq!(
            got,
            [
                ("vllm-model", Some(32768)),
                ("lmstudio-model", Some(8192)),
                ("llamacpp-model", Some(131072)),
                ("bare", None)
            ]
        );
    }

    #[test]
    fn a_listing_without_its_array_is_named_malformed() {
        let e = parse_openai_models("http://x/v1/models", &serde_json::json!({"error": "no"}));
        assert!(e.unwrap_err().to_string().contains("no \"data\" array"));
        let e = parse_ollama_tags("http://x/api/tags", &serde_json::json!([]));
        assert!(e.unwrap_err().to_string().contains("http://x/api/tags"));
    }

    #[test]
    fn the_ollama_root_drops_the_openai_suffix() {
        assert_eq!(ollama_root("http://localhost:11434/v1/"), "http://localhost:11434");
        assert_eq!(ollama_root("http://box:11434"), "http://box:11434");
        assert!(is_ollama("custom", "http://box:11434/v1"));
        assert!(!is_ollama("vllm", "http://localhost:8000/v1"));
    }
}
