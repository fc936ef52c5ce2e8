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
            "set {var}, add a key for \"{}\" to {}, or run rab with --api-key",
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
    }
    if provider.is_none() && model.is_none() {
        // No choice made: the first provider with a key, as listed in `rab --help`.
        provider = registry
            .providers()
            .iter()
            .filter(|p| p.requires_key)
            .find(|p| resolve_key(p, cli.api_key.as_deref(), env, &auth).is_some())
            .map(|p| p.name.clone());
        if provider.is_none() && cli.base_url.is_none() {
            return Err(SetupError {
                code: SetupError::PROVIDER,
                message: "no model selected and no API key found — set ANTHROPIC_API_KEY, \
                          OPENAI_API_KEY, GEMINI_API_KEY or OPENROUTER_API_KEY, or pass \
                          --provider/--model (e.g. --provider ollama --model qwen3-coder for a \
                          local server)"
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
    let note = (!resolved.is_known && cli.base_url.is_none() && resolved.provider.requires_key)
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
    if found.is_none() && resolved.provider.requires_key {
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
    let thinking = match cli.thinking.as_deref() {
        Some(level) => ThinkingLevel::parse(level)
            .ok_or_else(|| SetupError::usage(format!("unknown thinking level '{level}'")))?,
        None => settings.default_thinking_level.unwrap_or(ThinkingLevel::Off),
    };
    Ok(Target { model: resolved.model, api_key: key, auth_hint, thinking, note })
}

/// `rab --list-models [SEARCH]`.
pub fn list_models(registry: &Registry, search: &str) -> String {
    let search = search.to_ascii_lowercase();
    let mut out = String::from(
        "model                                     context  output   $in/M  $out/M  thinking\n",
    );
    for m in registry.models() {
        let full = format!("{}/{}", m.provider, m.id);
        if !search.is_empty() && !full.to_ascii_lowercase().contains(&search) {
            continue;
        }
        out.push_str(&format!(
            "{full:<40} {:>7}  {:>6}  {:>6.2}  {:>6.2}  {}\n",
            short(m.context_window),
            short(m.max_output),
            m.cost.input,
            m.cost.output,
            if m.reasoning { "yes" } else { "-" },
        ));
    }
    out.push_str(
        "\nLocal servers (ollama, llamacpp, lmstudio, vllm) take any model name: \
                  rab --provider ollama --model NAME\n",
    );
    out
}

fn short(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else {
        format!("{}k", n / 1000)
    }
}
