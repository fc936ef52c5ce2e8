//! Settings, layered: defaults < `~/.rab/agent/settings.json` < `.rab/settings.json` <
//! environment < command line. Each file is validated on its own (so an error names the
//! file, line and column); unknown keys are warnings, never silently ignored.
//!
//! ```json
//! {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-5-5",
//!  "defaultThinkingLevel": "medium", "tools": ["read", "grep"], "excludeTools": ["bash"],
//!  "maxTurns": 50, "steeringMode": "one-at-a-time", "followUpMode": "all"}
//! ```

use std::path::{Path, PathBuf};

use rab_ai::ThinkingLevel;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::read_optional;
use crate::safety::{
    HookSettings, PermissionSettings, SafetyLayer, SandboxSettings, Scope, SecretSettings, layer_of,
};
use crate::{Env, Error};

/// How queued messages are drained (mirrors the agent's modes; kept here so the config
/// crate does not depend on the agent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueMode {
    /// One message per injection point.
    #[default]
    OneAtATime,
    /// Everything queued at once.
    All,
}

/// Retry settings for model requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RetrySettings {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay in milliseconds (doubles each retry).
    pub base_delay_ms: u64,
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self { max_retries: 2, base_delay_ms: 1000 }
    }
}

/// Compaction settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CompactionSettings {
    /// Compact automatically before the context overflows.
    pub enabled: bool,
    /// Tokens kept free for the reply and the next turn.
    pub reserve_tokens: u64,
    /// Recent tokens kept verbatim when compacting.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self { enabled: true, reserve_tokens: 16_384, keep_recent_tokens: 20_000 }
    }
}

/// All settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Provider used when none is given.
    pub default_provider: Option<String>,
    /// Model used when none is given.
    pub default_model: Option<String>,
    /// Thinking level used when none is given.
    pub default_thinking_level: Option<ThinkingLevel>,
    /// Only these tools (by name); `None` means all.
    pub tools: Option<Vec<String>>,
    /// Tools left out.
    pub exclude_tools: Vec<String>,
    /// Stop a run after this many model requests.
    pub max_turns: Option<u32>,
    /// Stop before a request that would take this session's spending past this many
    /// US dollars.
    pub max_budget_usd: Option<f64>,
    /// Steering drain mode.
    pub steering_mode: QueueMode,
    /// Follow-up drain mode.
    pub follow_up_mode: QueueMode,
    /// Theme name for the terminal UI.
    pub theme: Option<String>,
    /// Retries of model requests.
    pub retry: RetrySettings,
    /// Context compaction.
    pub compaction: CompactionSettings,
    /// Permission rules: the lists of every file together; the last `defaultMode`.
    pub permissions: PermissionSettings,
    /// Hooks of every file together.
    pub hooks: HookSettings,
    /// The sandbox.
    pub sandbox: SandboxSettings,
    /// Redaction of secrets in tool results.
    pub secret_firewall: SecretSettings,
    /// With many tools, send most as name + summary until `tool_search` fetches their
    /// schemas (on unless false).
    pub tool_search: Option<bool>,
    /// Offer each skill as its own `skill_<name>` tool besides the `skill` tool.
    pub skills_as_tools: bool,
    /// Run `,cmd` lines of the model's answers (through the permission gate) and feed
    /// the results back. Off by default.
    pub route_assistant_commands: bool,
}

/// Top-level keys `Settings` understands (unknown ones are reported).
const KNOWN_KEYS: [&str; 19] = [
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "tools",
    "excludeTools",
    "maxTurns",
    "maxBudgetUsd",
    "steeringMode",
    "followUpMode",
    "theme",
    "retry",
    "compaction",
    "permissions",
    "hooks",
    "sandbox",
    "secretFirewall",
    "toolSearch",
    "skillsAsTools",
    "routeAssistantCommands",
];

/// Settings and what loading them noticed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedSettings {
    /// The merged settings.
    pub settings: Settings,
    /// Unknown keys and similar, one line each, naming the file.
    pub warnings: Vec<String>,
    /// Files that were read.
    pub files: Vec<PathBuf>,
    /// Each file's permission rules and hooks, global first, for checking with the file
    /// named.
    pub safety: Vec<SafetyLayer>,
}

/// Loads and layers the global and project files and the environment.
pub fn load_settings(global: &Path, project: &Path, env: &Env) -> Result<LoadedSettings, Error> {
    let mut merged = Map::new();
    let mut loaded = LoadedSettings::default();
    for (path, scope) in [(global, Scope::Global), (project, Scope::Project)] {
        let Some(text) = read_optional(path)? else { continue };
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))?;
        let Value::Object(map) = value else {
            return Err(Error::Invalid {
                path: path.to_owned(),
                message: "settings must be a JSON object".into(),
            });
        };
        // Validate this file alone so a type error names it.
        serde_json::from_value::<Settings>(Value::Object(map.clone())).map_err(|e| {
            Error::Invalid { path: path.to_owned(), message: format!("{e}; see docs/settings.md") }
        })?;
        for key in map.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
            loaded
                .warnings
                .push(format!("{}: unknown setting \"{key}\" (ignored)", path.display()));
        }
        loaded.safety.push(layer_of(scope, path, &map)?);
        merge(&mut merged, map);
        loaded.files.push(path.to_owned());
    }
    let mut settings: Settings = serde_json::from_value(Value::Object(merged))
        .map_err(|e| Error::Invalid { path: project.to_owned(), message: e.to_string() })?;
    combine_layers(&mut settings, &loaded.safety, &mut loaded.warnings);
    apply_env(&mut settings, env, &mut loaded.warnings);
    loaded.settings = settings;
    Ok(loaded)
}

/// Rule lists and hooks of all files together (a later file adds, never removes). The
/// mode is the last file's, except that a project file cannot choose `yolo`: a
/// repository must not be able to switch off every question by itself.
fn combine_layers(settings: &mut Settings, layers: &[SafetyLayer], warnings: &mut Vec<String>) {
    let mut p = PermissionSettings::default();
    let mut hooks = HookSettings::new();
    for layer in layers {
        let lp = &layer.permissions;
        if let Some(mode) = &lp.default_mode {
            let is_bypass = matches!(mode.as_str(), "yolo" | "bypassPermissions");
            if layer.scope == Scope::Project && is_bypass {
                warnings.push(format!(
                    "{}: permissions.defaultMode \"{mode}\" is ignored in project settings; \
                     choose it with --yolo or in your global settings",
                    layer.source.display()
                ));
            } else {
                p.default_mode = Some(mode.clone());
            }
        }
        p.allow.extend(lp.allow.iter().cloned());
        p.ask.extend(lp.ask.iter().cloned());
        p.deny.extend(lp.deny.iter().cloned());
        p.additional_directories.extend(lp.additional_directories.iter().cloned());
        for (event, groups) in &layer.hooks {
            hooks.entry(event.clone()).or_default().extend(groups.iter().cloned());
        }
    }
    settings.permissions = p;
    settings.hooks = hooks;
}

/// Objects merge key by key; anything else is replaced.
fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn apply_env(s: &mut Settings, env: &Env, warnings: &mut Vec<String>) {
    if let Some(v) = env.get("RAB_PROVIDER") {
        s.default_provider = Some(v.to_owned());
    }
    if let Some(v) = env.get("RAB_MODEL") {
        s.default_model = Some(v.to_owned());
    }
    if let Some(v) = env.get("RAB_THINKING") {
        match ThinkingLevel::parse(v) {
            Some(level) => s.default_thinking_level = Some(level),
            None => warnings.push(format!("RAB_THINKING: unknown level '{v}' (ignored)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn files(global: &str, project: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("global.json");
        let p = dir.path().join("project.json");
        if !global.is_empty() {
            std::fs::write(&g, global).unwrap();
        }
        if !project.is_empty() {
            std::fs::write(&p, project).unwrap();
        }
        (dir, g, p)
    }

    #[test]
    fn project_overrides_global_and_env_overrides_both() {
        let (_d, g, p) = files(
            r#"{"defaultModel": "a", "maxTurns": 5, "retry": {"maxRetries": 4}}"#,
            r#"{"defaultModel": "b", "retry": {"baseDelayMs": 10}}"#,
        );
        let loaded = load_settings(&g, &p, &Env::default()).unwrap();
        let s = &loaded.settings;
        assert_eq!((s.default_model.as_deref(), s.max_turns), (Some("b"), Some(5)));
        assert_eq!(s.retry, RetrySettings { max_retries: 4, base_delay_ms: 10 });
        let env = Env::from_pairs([("RAB_MODEL", "c"), ("RAB_THINKING", "high")]);
        let s = load_settings(&g, &p, &env).unwrap().settings;
        assert_eq!(s.default_model.as_deref(), Some("c"));
        assert_eq!(s.default_thinking_level, Some(ThinkingLevel::High));
    }

    #[test]
    fn unknown_keys_warn_and_malformed_files_fail_with_position() {
        let (_d, g, p) = files(r#"{"defaultModle": "x"}"#, "{\n  \"maxTurns\": ,\n}");
        let err = load_settings(&g, Path::new("/nonexistent/x.json"), &Env::default());
        let warnings = err.unwrap().warnings;
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("unknown setting \"defaultModle\""), "{warnings:?}");
        let err = load_settings(&g, &p, &Env::default()).unwrap_err().to_string();
        assert!(err.contains("project.json:2:15"), "{err}");
    }

    #[test]
    fn a_wrong_type_names_the_file() {
        let (_d, g, p) = files(r#"{"maxTurns": "ten"}"#, "");
        let err = load_settings(&g, &p, &Env::default()).unwrap_err().to_string();
        assert!(err.contains("global.json") && err.contains("invalid type"), "{err}");
    }
}
