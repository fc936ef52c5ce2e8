//! Turns the command line, environment and config files into a concrete model, key and
//! options. Every failure here is the user's to fix, so each says how.

use rab_ai::{Api, Model, ModelQuery, Registry, ThinkingLevel};
use rab_config::{
    Auth, Env, KeySource, Paths, Settings, apply_env_base_urls, invalid_key_char, load_models_file,
    resolve_key,
};

use super::{ModelChoice, SetupError};

/// Everything needed to send requests.
#[derive(Clone)]
pub struct Target {
    /// The model.
    pub model: Model,
    /// Its key, when the provider takes one.
    pub api_key: Option<String>,
    /// What to do when the key is missing or rejected.
    pub auth_hint: String,
    /// The thinking level.
    pub thinking: ThinkingLevel,
    /// Something the user should know about the choice (a model rab has no entry for).
    pub note: Option<String>,
}

/// The built-in registry with models.json and environment base URLs applied.
pub fn registry(env: &Env, paths: &Paths) -> Result<Registry, SetupError> {
    let mut registry = Registry::builtin();
    load_models_file(&paths.models_file(), &mut registry)
        .map_err(|e| SetupError::usage(format!("{e}\nFix or remove the file to go on.")))?;
    apply_env_base_urls(&mut registry, env);
    Ok(registry)
}

fn key_hint(provider: &rab_ai::ProviderDef, paths: &Paths) -> String {
    match provider.key_env.first() {
        Some(var) => format!(
            "set {var}, type /login {} in rab (it stores the key in {}), or run rab with \
             --api-key",
            provider.name,
            paths.auth_file().display()
        ),
        None => {
            "add \"apiKey\" for the provider to models.json, or run rab with --api-key".to_owned()
        }
    }
}

/// What to do when the provider rejects the key found at `source` (401/403).
fn rejected_hint(source: &KeySource, paths: &Paths) -> String {
    match source {
        KeySource::Cli => {
            "the key given with --api-key was rejected; check it, or run /login to store \
             another"
                .to_owned()
        }
        KeySource::Env(var) => {
            format!(
                "the key in ${var} was rejected; check it, run /login to store another, or pass \
                 --api-key"
            )
        }
        KeySource::AuthFile => format!(
            "the key stored in {} was rejected; run /login to replace it, or rab with --api-key",
            paths.auth_file().display()
        ),
        KeySource::ModelsFile => {
            "the apiKey in models.json was rejected; fix it, or run rab with --api-key".to_owned()
        }
    }
}

/// The model `query` names, as a switch (`/model`, RPC `set_model`) or a fallback
/// resolves it: the endpoint, wire format and key given on the command line (`given`)
/// are for the provider in use (`provider`), so a model of that provider keeps them (a
/// company gateway is never swapped for the public endpoint); a model of another
/// provider uses that provider's own, and one that cannot be reached is an error.
pub fn resolve_keeping(
    query: &str,
    provider: &str,
    given: &ModelChoice,
    settings: &Settings,
    env: &Env,
    paths: &Paths,
    registry: &Registry,
) -> Result<Target, SetupError> {
    let resolve = |choice: &ModelChoice| target(choice, settings, env, paths, registry);
    let plain = ModelChoice { model: Some(query.to_owned()), ..ModelChoice::default() };
    let has_given = given.base_url.is_some() || given.api.is_some() || given.api_key.is_some();
    let is_this_provider = |t: &Target| t.model.provider == provider;
    // `provider/model` naming another provider (or one rab does not know) never goes to
    // this one's endpoint.
    let names_other = query.split_once('/').is_some_and(|(p, _)| p != provider);
    if names_other || !has_given {
        return resolve(&plain);
    }
    match resolve(&plain) {
        Ok(t) if !is_this_provider(&t) => Ok(t),
        plain_result => {
            let kept = ModelChoice {
                model: Some(query.rsplit_once('/').map_or(query, |(_, m)| m).to_owned()),
                provider: Some(provider.to_owned()),
                api: given.api.clone(),
                base_url: given.base_url.clone(),
                api_key: given.api_key.clone(),
                allow_missing_key: given.allow_missing_key,
                ..ModelChoice::default()
            };
            match (resolve(&kept), plain_result) {
                (Ok(t), _) => Ok(t),
                (Err(_), Ok(t)) if !is_this_provider(&t) => Ok(t),
                (Err(e), _) => Err(e),
            }
        }
    }
}

/// Resolves the model and its key: the command line first, then the settings'
/// `defaultProvider`/`defaultModel`, then the first provider with a key.
pub fn target(
    cli: &ModelChoice,
    settings: &Settings,
    env: &Env,
    paths: &Paths,
    registry: &Registry,
) -> Result<Target, SetupError> {
    let auth = Auth::load(&paths.auth_file()).map_err(|e| SetupError::usage(e.to_string()))?;
    let api = cli.api.as_deref().and_then(Api::parse);
    let mut provider = cli.provider.clone();
    let mut model = cli.model.clone();
    if provider.is_none() && model.is_none() {
        provider = settings.default_provider.clone();
        model = settings.default_model.clone();
    } else if model.is_none() && provider == settings.default_provider {
        model = settings.default_model.clone();
    } else if model.is_none()
        && let (Some(p), Some(m)) = (&provider, &settings.default_model)
    {
        // Only `--provider`: the settings' (or the profile's) model when it is one of
        // that provider's, else the provider's own default.
        let query = ModelQuery { provider: Some(p), model: Some(m), api, base_url: None };
        if registry.resolve(&query).is_ok_and(|r| r.is_known && r.provider.name == *p) {
            model = Some(m.clone());
        }
    }
    if provider.is_none() && model.is_none() {
        // No choice made: the first provider with a key, as listed in `rab --help`.
        provider = registry
            .providers()
            .iter()
            .filter(|p| p.requires_key)
            .find(|p| resolve_key(p, cli.api_key.as_deref(), env, &auth).is_some())
            .map(|p| p.name.clone());
        if provider.is_none() && cli.allow_missing_key {
            provider = registry.providers().iter().find(|p| p.requires_key).map(|p| p.name.clone());
        }
        if provider.is_none() && cli.base_url.is_none() {
            return Err(SetupError {
                code: SetupError::PROVIDER,
                message: "no model selected and no API key found — set ANTHROPIC_API_KEY, \
                          OPENAI_API_KEY, GEMINI_API_KEY or OPENROUTER_API_KEY, run `rab` and \
                          type /login to store one, or pass --provider/--model (e.g. \
                          --provider ollama --model qwen3-coder for a local server)"
                    .to_owned(),
            });
        }
    }
    let query = ModelQuery {
        provider: provider.as_deref(),
        model: model.as_deref(),
        api,
        base_url: cli.base_url.as_deref(),
    };
    let resolved = registry.resolve(&query).map_err(|e| SetupError::usage(e.to_string()))?;
    let mut note = (!resolved.is_known && cli.base_url.is_none() && resolved.provider.requires_key)
        .then(|| {
            format!(
                "'{}' is not in rab's model table for {}; using default limits ({}k context, \
                 {}k output, no prices). Add it to models.json to set them.",
                resolved.model.id,
                resolved.provider.name,
                resolved.model.context_window / 1000,
                resolved.model.max_output / 1000,
            )
        });
    let found = resolve_key(&resolved.provider, cli.api_key.as_deref(), env, &auth);
    let auth_hint = match &found {
        Some((_, source)) => rejected_hint(source, paths),
        None => key_hint(&resolved.provider, paths),
    };
    if found.is_none() && resolved.provider.requires_key && cli.allow_missing_key {
        note = Some(format!(
            "no API key for {} ({}): type /login {} to store one, or {auth_hint}",
            resolved.provider.name, resolved.model.id, resolved.provider.name
        ));
    } else if found.is_none() && resolved.provider.requires_key {
        let error = rab_ai::Error::MissingKey {
            provider: resolved.provider.name.clone(),
            model: resolved.model.id.clone(),
            hint: auth_hint,
        };
        return Err(SetupError { code: SetupError::PROVIDER, message: error.to_string() });
    }
    if let Some((key, source)) = &found
        && let Some((at, c)) = invalid_key_char(key)
    {
        return Err(SetupError {
            code: SetupError::PROVIDER,
            message: format!(
                "{}: the API key from {} has a character an HTTP header cannot carry ({:?} at \
                 position {}); keys are plain ASCII, so check for a stray quote, space or line \
                 break from copying it",
                resolved.provider.name,
                source.describe(&paths.auth_file()),
                c,
                at + 1
            ),
        });
    }
    let key = found.map(|(k, _)| k);
    let mut model = resolved.model;
    if !resolved.is_known && !resolved.provider.requires_key {
        // A local server's model: its context window is what the server says, if it says.
        if let Some(n) = ask_context_window(&model, key.as_deref()) {
            model.context_window = n;
            model.max_output = model.max_output.min(n / 2).max(1);
        }
    }
    let thinking = match cli.thinking.as_deref() {
        Some(level) => ThinkingLevel::parse(level)
            .ok_or_else(|| SetupError::usage(format!("unknown thinking level '{level}'")))?,
        None => settings.default_thinking_level.unwrap_or(ThinkingLevel::Off),
    };
    Ok(Target { model, api_key: key, auth_hint, thinking, note })
}

/// How long start-up waits for a local server to say a model's context window.
const SERVER_ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The context window a local server reports for `model` (on a thread of its own: the
/// caller may be inside a runtime that is not running); `None` when it does not say,
/// does not answer in time, or is not running yet (the first request says so then).
fn ask_context_window(model: &Model, key: Option<&str>) -> Option<u64> {
    let (provider, base_url, id) =
        (model.provider.clone(), model.base_url.clone(), model.id.clone());
    let key = key.map(str::to_owned);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
        rt.block_on(rab_ai::local::server_context_window(
            &provider,
            &base_url,
            &id,
            key.as_deref(),
            SERVER_ASK_TIMEOUT,
        ))
    })
    .join()
    .ok()
    .flatten()
    .filter(|n| *n >= 1024)
}

/// `rab --list-models [SEARCH]`.
pub fn list_models(registry: &Registry, search: &str) -> String {
    let mut out = rab_ai::model_table(registry, search, rab_ai::TableFormat::Text);
    out.push_str(
        "\nLocal servers (ollama, llamacpp, lmstudio, vllm) take any model name: \
                  rab --provider ollama --model NAME\n",
    );
    out
}

/// `rab --list-models [SEARCH] --provider NAME` (or `--base-url URL`) for a server rab
/// has no model table for (Ollama, llama.cpp, LM Studio, vLLM, an OpenAI-compatible
/// endpoint): what the server itself lists, with the context windows it reports.
/// `Ok(None)`: the provider has a table; list that instead.
pub async fn list_server_models(
    choice: &ModelChoice,
    search: &str,
    env: &Env,
    paths: &Paths,
) -> Result<Option<String>, SetupError> {
    let registry = registry(env, paths)?;
    let provider = match choice.provider.as_deref() {
        Some(name) => Some(registry.provider(name).cloned().ok_or_else(|| {
            SetupError::usage(
                rab_ai::ResolveError::UnknownProvider {
                    name: name.to_owned(),
                    known: registry
                        .providers()
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
                .to_string(),
            )
        })?),
        None => None,
    };
    let has_table =
        provider.as_ref().is_some_and(|p| registry.models().iter().any(|m| m.provider == p.name));
    let base_url = match (&choice.base_url, &provider) {
        (Some(url), _) => url.clone(),
        (None, Some(p)) if !has_table => p.base_url.clone(),
        _ => return Ok(None),
    };
    let name = provider.as_ref().map_or("custom", |p| p.name.as_str());
    let auth = Auth::load(&paths.auth_file()).map_err(|e| SetupError::usage(e.to_string()))?;
    let key = match &provider {
        Some(p) => resolve_key(p, choice.api_key.as_deref(), env, &auth).map(|(k, _)| k),
        None => choice.api_key.clone(),
    };
    let timeout = std::time::Duration::from_secs(10);
    let models = rab_ai::local::server_models(name, &base_url, key.as_deref(), timeout)
        .await
        .map_err(|e| SetupError { code: SetupError::PROVIDER, message: e.to_string() })?;
    let search = search.to_ascii_lowercase();
    let mut out = String::from("model                                     context\n");
    let mut shown = 0;
    for m in &models {
        if !search.is_empty() && !m.id.to_ascii_lowercase().contains(&search) {
            continue;
        }
        shown += 1;
        let context = m.context_window.map_or_else(|| "?".to_owned(), short);
        out.push_str(&format!("{:<40} {context:>8}\n", format!("{name}/{}", m.id)));
    }
    if shown == 0 {
        out.push_str("(none)\n");
    }
    out.push_str(&format!(
        "\n{} model(s) listed by the server at {base_url}; use one with rab --provider {name} \
         --model NAME\n",
        models.len()
    ));
    Ok(Some(out))
}

fn short(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else {
        format!("{}k", n / 1000)
    }
}
