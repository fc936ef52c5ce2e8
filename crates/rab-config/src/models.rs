//! `models.json`: custom providers and models, in pi's shape, applied on top of the
//! built-in registry; and base-URL overrides from the environment.
//!
//! ```json
//! {"providers": {"my-proxy": {
//!   "baseUrl": "https://proxy.example/v1", "api": "openai-completions",
//!   "apiKey": "MY_PROXY_KEY", "headers": {"x-team": "a"},
//!   "models": [{"id": "qwen3-coder", "contextWindow": 262144, "maxTokens": 32768,
//!               "reasoning": false, "input": ["text"],
//!               "cost": {"input": 0.4, "output": 1.6, "cacheRead": 0, "cacheWrite": 0},
//!               "editTool": "edit"}]}}}
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use rab_ai::{Api, Compat, EditTool, Model, ModelCost, ProviderDef, Registry};
use serde::Deserialize;

use crate::error::read_optional;
use crate::{Env, Error};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelsFile {
    #[serde(default)]
    providers: BTreeMap<String, ProviderEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProviderEntry {
    base_url: Option<String>,
    api: Option<String>,
    api_key: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Compat>,
    #[serde(default)]
    models: Vec<ModelEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelEntry {
    id: String,
    name: Option<String>,
    api: Option<String>,
    #[serde(default)]
    reasoning: bool,
    #[serde(default)]
    input: Vec<String>,
    context_window: Option<u64>,
    /// The input limit, where the provider sets one below the window.
    max_input: Option<u64>,
    max_tokens: Option<u64>,
    #[serde(default)]
    cost: ModelCost,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Compat>,
    /// `edit` or `apply_patch`: the tool the model changes files with.
    edit_tool: Option<EditTool>,
}

fn api_of(path: &Path, name: &str, what: &str) -> Result<Api, Error> {
    Api::parse(name).ok_or_else(|| Error::Invalid {
        path: path.to_owned(),
        message: format!(
            "{what}: unknown api '{name}'; use one of {}",
            Api::ALL.map(Api::as_str).join(", ")
        ),
    })
}

/// Reads `path` (if it exists) and adds or overrides its providers and models.
pub fn load_models_file(path: &Path, registry: &mut Registry) -> Result<(), Error> {
    let Some(text) = read_optional(path)? else { return Ok(()) };
    let file: ModelsFile = serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))?;
    for (name, entry) in file.providers {
        let existing = registry.provider(&name).cloned();
        let api = match (&entry.api, &existing) {
            (Some(a), _) => api_of(path, a, &format!("provider '{name}'"))?,
            (None, Some(p)) => p.api,
            (None, None) => Api::OpenaiCompletions,
        };
        let base_url = match (&entry.base_url, &existing) {
            (Some(u), _) => u.trim_end_matches('/').to_owned(),
            (None, Some(p)) => p.base_url.clone(),
            (None, None) => {
                return Err(Error::Invalid {
                    path: path.to_owned(),
                    message: format!("provider '{name}' is new, so it needs a \"baseUrl\""),
                });
            }
        };
        let mut def = existing.clone().unwrap_or_else(|| {
            let mut d = rab_ai::custom_provider(&base_url, Some(api));
            d.name = name.clone();
            d
        });
        def.api = api;
        def.base_url = base_url.clone();
        if entry.api_key.is_some() {
            def.api_key = entry.api_key.clone();
            def.requires_key = true;
        }
        def.headers.extend(entry.headers.clone());
        if let Some(c) = &entry.compat {
            def.compat = c.clone();
        }
        let mut models = Vec::new();
        for m in &entry.models {
            models.push(model_of(path, &def, m)?);
        }
        if entry.base_url.is_some() {
            // Built-in models of an overridden provider move with it.
            registry.set_base_url(&name, &base_url);
        }
        if def.default_model.is_none() {
            def.default_model = models.first().map(|m: &Model| m.id.clone());
        }
        registry.upsert_provider(def, models);
    }
    Ok(())
}

fn model_of(path: &Path, def: &ProviderDef, m: &ModelEntry) -> Result<Model, Error> {
    let api = match &m.api {
        Some(a) => api_of(path, a, &format!("model '{}'", m.id))?,
        None => def.api,
    };
    let mut model = Model::custom(&m.id, &def.name, api, &def.base_url);
    if let Some(name) = &m.name {
        model.name = name.clone();
    }
    model.reasoning = m.reasoning;
    model.images = m.input.iter().any(|i| i == "image");
    if let Some(c) = m.context_window {
        model.context_window = c;
    }
    if let Some(t) = m.max_tokens {
        model.max_output = t;
    }
    model.max_input = m.max_input;
    model.cost = m.cost.clone();
    model.headers = m.headers.clone();
    model.compat = m.compat.clone().unwrap_or_else(|| def.compat.clone());
    if let Some(tool) = m.edit_tool {
        model.edit_tool = tool;
    }
    Ok(model)
}

/// Applies `ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL` and the like to their providers.
pub fn apply_env_base_urls(registry: &mut Registry, env: &Env) {
    let overrides: Vec<(String, String)> = registry
        .providers()
        .iter()
        .filter_map(|p| {
            let var = p.base_url_env.as_deref()?;
            Some((p.name.clone(), env.get(var)?.trim_end_matches('/').to_owned()))
        })
        .collect();
    for (provider, url) in overrides {
        registry.set_base_url(&provider, &url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_ai::ModelQuery;

    fn load(json: &str) -> Result<Registry, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models.json");
        std::fs::write(&path, json).unwrap();
        let mut reg = Registry::builtin();
        load_models_file(&path, &mut reg)?;
        Ok(reg)
    }

    #[test]
    fn adds_a_custom_provider_with_its_models() {
        let reg = load(
            r#"{"providers": {"proxy": {"baseUrl": "http://p/v1/", "api": "openai-completions",
                "apiKey": "PROXY_KEY", "headers": {"x-a": "1"},
                "models": [{"id": "big", "contextWindow": 1000, "maxTokens": 100, "input": ["text", "image"],
                            "cost": {"input": 1, "output": 2}}]}}}"#,
        )
        .unwrap();
        let r =
            reg.resolve(&ModelQuery { model: Some("proxy/big"), ..Default::default() }).unwrap();
        assert_eq!(r.model.base_url, "http://p/v1");
        assert_eq!((r.model.context_window, r.model.max_output, r.model.images), (1000, 100, true));
        assert_eq!(r.model.headers.get("x-a").map(String::as_str), Some("1"));
        assert_eq!(r.provider.api_key.as_deref(), Some("PROXY_KEY"));
        assert!(r.provider.requires_key);
    }

    #[test]
    fn overriding_a_builtin_base_url_moves_its_models() {
        let reg = load(r#"{"providers": {"anthropic": {"baseUrl": "http://gateway"}}}"#).unwrap();
        let r = reg
            .resolve(&ModelQuery { model: Some("claude-opus-5-5"), ..Default::default() })
            .unwrap();
        assert_eq!(r.model.base_url, "http://gateway");
        assert!(r.is_known);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let err =
            load(r#"{"providers": {"x": {"baseUrl": "http://x", "api": "soap"}}}"#).unwrap_err();
        assert!(
            err.to_string().contains("unknown api 'soap'; use one of anthropic-messages"),
            "{err}"
        );
        let err = load(r#"{"providers": {"x": {"api": "openai-completions"}}}"#).unwrap_err();
        assert!(err.to_string().contains("needs a \"baseUrl\""), "{err}");
        let err =
            load("{\"providers\": {\"x\": {\"baseUrl\": \"u\", \"modles\": []}}}").unwrap_err();
        assert!(
            err.to_string().contains("models.json:1:") && err.to_string().contains("modles"),
            "{err}"
        );
    }

    #[test]
    fn env_base_urls_apply_to_their_provider_only() {
        let mut reg = Registry::builtin();
        apply_env_base_urls(
            &mut reg,
            &Env::from_pairs([("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")]),
        );
        assert_eq!(reg.provider("anthropic").unwrap().base_url, "http://127.0.0.1:9");
        assert_eq!(reg.provider("openai").unwrap().base_url, "https://api.openai.com/v1");
    }
}
