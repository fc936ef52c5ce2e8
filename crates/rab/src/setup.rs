//! Turns the command line, environment and config files into a concrete model, key and
//! options. Every failure here is the user's to fix, so each says how.

use std::path::Path;
use std::sync::Arc;

use rab_agent::AgentTool;
use rab_ai::{Api, Model, ModelQuery, Registry, ThinkingLevel};
use rab_config::{
    Auth, Env, KeySource, Paths, Settings, apply_env_base_urls, invalid_key_char, load_models_file,
    resolve_key,
};
use rab_session::{Tape, Warning};

use crate::cli::Cli;

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct SetupError {
    /// 1 for provider setup (no key), 2 for bad usage or config files.
    pub code: u8,
    /// The message, one paragraph.
    pub message: String,
}

impl SetupError {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self { code: 2, message: message.into() }
    }
}

/// Everything needed to send requests.
#[derive(Clone)]
pub struct Target {
    pub model: Model,
    pub api_key: Option<String>,
    pub auth_hint: String,
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
    cli: &Cli,
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
                code: 1,
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
        return Err(SetupError { code: 1, message: error.to_string() });
    }
    if let Some((key, source)) = &found
        && let Some((at, c)) = invalid_key_char(key)
    {
        return Err(SetupError {
            code: 1,
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

/// The workspace the tools work in: the project root, home, temp dir and sandbox.
pub fn workspace(env: &Env, cwd: &Path, sandbox: rab_tools::Sandbox) -> rab_tools::Workspace {
    rab_tools::Workspace::new(cwd)
        .with_home(env.get("HOME").map(std::path::PathBuf::from))
        .with_temp_dir(std::path::PathBuf::from(env.get("TMPDIR").unwrap_or("/tmp")))
        .with_sandbox(sandbox)
}

/// The tool the model changes files with: the one a tool list (`--tools`, settings
/// `tools`) names when it names only one kind, else the settings' `editTool`, else the
/// model's.
pub fn edit_tool(cli: &Cli, settings: &Settings, model: &rab_ai::Model) -> rab_ai::EditTool {
    use rab_ai::EditTool;
    let list = cli.tools.as_ref().or(settings.tools.as_ref());
    let names =
        |wanted: &[&str]| list.is_some_and(|l| l.iter().any(|n| wanted.contains(&n.as_str())));
    match (names(&["edit", "write"]), names(&[rab_tools::apply_patch::NAME])) {
        (true, false) => EditTool::Edit,
        (false, true) => EditTool::ApplyPatch,
        _ => settings.edit_tool.unwrap_or(model.edit_tool),
    }
}

/// rab's built-in tools: rab-tools' and `extra` (the session-level ones), with
/// `apply_patch` in place of `write` and `edit` for models that edit with it.
pub fn builtin_tools(
    settings: &Settings,
    ws: &rab_tools::Workspace,
    extra: Vec<Arc<dyn AgentTool>>,
    edit_tool: rab_ai::EditTool,
) -> Vec<Arc<dyn AgentTool>> {
    let mut all = rab_tools::builtin_in(ws);
    if edit_tool == rab_ai::EditTool::ApplyPatch {
        let at = all.iter().position(|t| t.spec().name == "write").unwrap_or(all.len());
        all.retain(|t| !matches!(t.spec().name.as_str(), "write" | "edit"));
        all.insert(
            at.min(all.len()),
            Arc::new(rab_tools::apply_patch::ApplyPatch::new(ws.clone())),
        );
    }
    if settings.sandbox.allow_private_network {
        for t in &mut all {
            if t.spec().name == "web_fetch" {
                *t = Arc::new(rab_tools::web_fetch::WebFetch::new().with_private_addresses(true));
            }
        }
    }
    all.extend(extra);
    all
}

/// The extensions' tools, narrowed by `--no-tools`, `--tools` and the settings' `tools`
/// / `excludeTools`. An unknown tool name is an error, never silently ignored.
/// `known`: every tool rules may name (the built-in ones, enabled or not).
pub fn tools(
    cli: &Cli,
    settings: &Settings,
    all: Vec<Arc<dyn AgentTool>>,
    known: &rab_core::ToolCatalog,
) -> Result<Vec<Arc<dyn AgentTool>>, SetupError> {
    if cli.no_tools {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = all.iter().map(|t| t.spec().name).collect();
    // Tools added per session or only in some modes, and the file-editing tools of
    // other models, can be named all the same.
    for name in known.names() {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    let check = |list: &[String], what: &str| -> Result<(), SetupError> {
        // MCP tools arrive after start-up: their names cannot be checked here.
        match list.iter().find(|n| !names.contains(n) && !n.starts_with("mcp__")) {
            Some(bad) => Err(SetupError::usage(format!(
                "{what}: unknown tool '{bad}'; available tools: {}",
                names.join(", ")
            ))),
            None => Ok(()),
        }
    };
    let only = match (&cli.tools, &settings.tools) {
        (Some(list), _) => {
            check(list, "--tools")?;
            Some(list.clone())
        }
        (None, Some(list)) => {
            check(list, "settings \"tools\"")?;
            Some(list.clone())
        }
        (None, None) => None,
    };
    check(&settings.exclude_tools, "settings \"excludeTools\"")?;
    Ok(all.into_iter().filter(|t| is_enabled(&t.spec().name, only.as_deref(), settings)).collect())
}

/// Whether `--tools`/settings leave a tool in.
pub fn is_enabled(name: &str, only: Option<&[String]>, settings: &Settings) -> bool {
    only.is_none_or(|o| o.iter().any(|n| n == name))
        && !settings.exclude_tools.iter().any(|n| n == name)
}

/// The session to record to: `--no-session`, `--session PATH`, `-c` (the most recent
/// of this directory), or a new one.
pub fn tape(cli: &Cli, paths: &Paths, cwd: &Path) -> Result<(Tape, Vec<Warning>), SetupError> {
    let dir = rab_session::session_dir(&paths.sessions_dir(), cwd);
    let open = |path: &Path| Tape::open(path).map_err(|e| SetupError::usage(e.to_string()));
    if cli.no_session {
        if cli.continue_session || cli.session.is_some() {
            return Err(SetupError::usage("--no-session cannot be combined with -c or --session"));
        }
        return Ok((Tape::ephemeral(cwd), Vec::new()));
    }
    if let Some(path) = &cli.session {
        if path.exists() {
            return open(path);
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut tape = Tape::create(parent, cwd, None);
        tape.set_path(path.clone());
        return Ok((tape, Vec::new()));
    }
    if cli.continue_session {
        return match rab_session::most_recent(&dir) {
            Some(path) => open(&path),
            None => {
                eprintln!("rab: no earlier session in this directory; starting a new one");
                Ok((Tape::create(&dir, cwd, None), Vec::new()))
            }
        };
    }
    Ok((Tape::create(&dir, cwd, None), Vec::new()))
}
