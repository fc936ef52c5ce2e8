//! Settings, layered: defaults < `~/.rab/agent/settings.json` < the project's
//! `.claude/settings.json` (its `permissions` and `hooks`, so a Claude Code project
//! works unchanged) < `.rab/settings.json` < environment < command line. Each file is
//! validated on its own (so an error names the file, line and column); an unknown key
//! is a warning naming the file and the closest known key, never silently ignored and
//! never a reason not to start (see `setting_check`).
//!
//! A project's files are a checkout's, and a checkout may be hostile: until the folder
//! is trusted, what in them runs code or widens access is left out and named in
//! [`LoadedSettings::ignored`] (allow rules, a looser permission mode, extra
//! directories, hooks, a looser sandbox, kept environment keys, a disabled secret
//! firewall, assistant command routing). What narrows (deny and ask rules, a stricter
//! sandbox) always applies.
//!
//! ```json
//! {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-5-5",
//!  "defaultThinkingLevel": "medium", "tools": ["read", "grep"], "excludeTools": ["bash"],
//!  "editTool": "apply_patch",
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
use crate::setting_check::{Strictness, check_keys};
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

/// How long a model request may stay silent, and how long retrying may go on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct TimeoutSettings {
    /// To open the connection.
    pub connect_secs: u64,
    /// From sending a request to the response's headers.
    pub first_byte_secs: u64,
    /// Between two events of a response's stream.
    pub idle_secs: u64,
    /// No retry starts this long after a request's first attempt.
    pub retry_budget_secs: u64,
}

impl Default for TimeoutSettings {
    fn default() -> Self {
        Self { connect_secs: 15, first_byte_secs: 180, idle_secs: 120, retry_budget_secs: 600 }
    }
}

/// When a run counts as a runaway loop and is stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct LoopSettings {
    /// Stop runs that loop (on by default).
    pub enabled: bool,
    /// Replies in a row with the same tool calls (names and arguments); at least 2.
    #[serde(deserialize_with = "at_least_two")]
    pub call_repeats: u32,
    /// Copies in a row of the same piece of text in one reply; at least 2.
    #[serde(deserialize_with = "at_least_two")]
    pub text_repeats: u32,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self { enabled: true, call_repeats: 5, text_repeats: 10 }
    }
}

/// A repeat count: one copy is no repetition.
fn at_least_two<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n < 2 {
        return Err(serde::de::Error::custom(format!(
            "a repeat count must be at least 2, not {n} (loopDetection.enabled: false turns \
             loop detection off)"
        )));
    }
    Ok(n)
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
    /// Summarise the older part, or drop it (a sliding window).
    pub strategy: CompactionStrategy,
    /// With the window strategy: the most messages kept (older ones are dropped).
    pub window_messages: u32,
}

/// How compaction makes room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionStrategy {
    /// The model summarises the older part.
    #[default]
    Summary,
    /// The older part is dropped with a notice: no model call (for small local models,
    /// where summarising is slow).
    Window,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
            strategy: CompactionStrategy::Summary,
            window_messages: 50,
        }
    }
}

/// Chat channels (`rab serve`, `rab telegram`). Read from the user's own settings only:
/// who may command rab through a chat is never a project's decision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ChannelSettings {
    /// The Telegram bot.
    pub telegram: Option<TelegramSettings>,
}

/// The Telegram bot. There is no key for the token: it comes from the environment
/// variable named by `token_env`, or from auth.json (`telegram`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct TelegramSettings {
    /// The environment variable holding the bot token (`TELEGRAM_BOT_TOKEN` by default).
    pub token_env: Option<String>,
    /// Who may use the bot: user ids (numbers) and `@usernames`.
    pub allowed_users: Vec<Value>,
    /// The Bot API's base URL (a self-hosted Bot API server); api.telegram.org by
    /// default.
    pub api_base: Option<String>,
    /// Seconds a permission question waits for a button before it counts as deny (300
    /// by default).
    pub question_timeout_secs: Option<u64>,
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
    /// Models to continue on, in order, when the model stays rate limited, overloaded
    /// or out of quota after retries (`provider/model` or a model id, as `--model`
    /// takes). The next prompt goes back to the first choice.
    pub fallback_models: Vec<String>,
    /// Only these tools (by name); `None` means all.
    pub tools: Option<Vec<String>>,
    /// Tools left out.
    pub exclude_tools: Vec<String>,
    /// The tool models change files with, for every model: `edit` (with `write`) or
    /// `apply_patch`; unset, each model's own (apply_patch for OpenAI's GPT-5 family and
    /// later, edit for the rest).
    pub edit_tool: Option<rab_ai::EditTool>,
    /// Stop a run after this many model requests.
    pub max_turns: Option<u32>,
    /// Stop before a request that would take this session's spending past this many
    /// US dollars.
    pub max_budget_usd: Option<f64>,
    /// Sampling temperature (0 to 2), sent only to models that take one.
    pub temperature: Option<f32>,
    /// Steering drain mode.
    pub steering_mode: QueueMode,
    /// Follow-up drain mode.
    pub follow_up_mode: QueueMode,
    /// Theme name for the terminal UI.
    pub theme: Option<String>,
    /// Retries of model requests.
    pub retry: RetrySettings,
    /// Silence limits of model requests.
    pub timeouts: TimeoutSettings,
    /// Context compaction.
    pub compaction: CompactionSettings,
    /// Runaway loops.
    pub loop_detection: LoopSettings,
    /// The checkpoint store sessions are rewound with.
    pub checkpoints: crate::CheckpointSettings,
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
    /// Chat channels; from the global file only.
    pub channels: ChannelSettings,
}

/// Top-level keys `Settings` understands (unknown ones are reported).
pub(crate) const KNOWN_KEYS: [&str; 27] = [
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "fallbackModels",
    "tools",
    "excludeTools",
    "editTool",
    "maxTurns",
    "maxBudgetUsd",
    "temperature",
    "steeringMode",
    "followUpMode",
    "theme",
    "retry",
    "timeouts",
    "compaction",
    "loopDetection",
    "checkpoints",
    "permissions",
    "hooks",
    "sandbox",
    "secretFirewall",
    "toolSearch",
    "skillsAsTools",
    "routeAssistantCommands",
    "channels",
    "profiles",
];

/// Settings and what loading them noticed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedSettings {
    /// The merged settings.
    pub settings: Settings,
    /// Notes about the files, one line each, naming the file.
    pub warnings: Vec<String>,
    /// What an untrusted project's files asked for and did not get, one line each,
    /// naming the file.
    pub ignored: Vec<String>,
    /// Files that were read.
    pub files: Vec<PathBuf>,
    /// Each file's permission rules and hooks, global first, for checking with the file
    /// named.
    pub safety: Vec<SafetyLayer>,
    /// The profile applied, if one was chosen.
    pub profile: Option<String>,
    /// Every profile the files define.
    pub profiles: Vec<String>,
}

/// `.claude/settings.json` of a project: Claude Code's project settings.
pub fn claude_settings_file(project: &Path) -> PathBuf {
    project.join(".claude").join("settings.json")
}

/// Loads and layers the global file, the project's files (under `project`, the
/// working directory) and the environment. `trusted`: whether the project folder may
/// run code and widen access.
pub fn load_settings(
    global: &Path,
    project: &Path,
    env: &Env,
    trusted: bool,
) -> Result<LoadedSettings, Error> {
    load_settings_with_profile(global, project, env, trusted, None)
}

/// [`load_settings`] with the profile `profile` applied over the files: each file's part
/// of it, in the files' order, under the file's own rules (an untrusted project's part
/// widens nothing). A name no file defines is an error listing the profiles there are.
pub fn load_settings_with_profile(
    global: &Path,
    project: &Path,
    env: &Env,
    trusted: bool,
    profile: Option<&str>,
) -> Result<LoadedSettings, Error> {
    let mut merged = Map::new();
    let mut loaded = LoadedSettings::default();
    let mut profiles = crate::profiles::Overlays::new(profile);
    if let Some(mut map) = read_settings(global)? {
        check_keys(global, &mut map, Strictness::Own, "", &mut loaded.warnings)?;
        profiles.take(Scope::Global, global, &mut map, &mut loaded.warnings)?;
        loaded.safety.push(layer_of(Scope::Global, global, &map)?);
        merge(&mut merged, map);
        loaded.files.push(global.to_owned());
    }
    // The user's own "always" answers for this folder, trusted or not.
    let answers = global.with_file_name("answers.json");
    if let Some(layer) = crate::answers_layer(&answers, &crate::canonical_dir(project))? {
        loaded.safety.push(layer);
    }
    // Claude Code's project settings, shared and then local (its own order: the local
    // file's rules, deny rules too, apply as well).
    let claude_local = claude_settings_file(project).with_file_name("settings.local.json");
    for claude in [claude_settings_file(project), claude_local] {
        let Some(map) = read_settings(&claude)? else { continue };
        // Only what rab shares with Claude Code; its other keys are Claude Code's own.
        let mut map: Map<String, Value> =
            map.into_iter().filter(|(k, _)| k == "permissions" || k == "hooks").collect();
        if let Some(Value::Object(p)) = map.get_mut("permissions") {
            p.retain(|k, _| {
                ["allow", "ask", "deny", "defaultMode", "additionalDirectories"]
                    .contains(&k.as_str())
            });
        }
        if !trusted {
            restrict(&claude, &mut map, &merged, &mut loaded.ignored);
        }
        loaded.safety.push(layer_of(Scope::Claude, &claude, &map)?);
        merge(&mut merged, map);
        loaded.files.push(claude);
    }
    let shared = crate::Paths::project_settings_file(project);
    let local = crate::Paths::project_local_settings_file(project);
    for own in [shared, local] {
        if own == global {
            continue;
        }
        let Some(mut map) = read_settings(&own)? else { continue };
        check_keys(&own, &mut map, Strictness::Project, "", &mut loaded.warnings)?;
        profiles.take(Scope::Project, &own, &mut map, &mut loaded.warnings)?;
        if map.remove("channels").is_some() {
            loaded.warnings.push(format!(
                "{}: \"channels\" is ignored here: who may command rab through a chat is set \
                 in your own settings ({})",
                own.display(),
                global.display()
            ));
        }
        if !trusted {
            restrict(&own, &mut map, &merged, &mut loaded.ignored);
        }
        loaded.safety.push(layer_of(Scope::Project, &own, &map)?);
        merge(&mut merged, map);
        loaded.files.push(own);
    }
    let chosen = profiles.finish()?;
    for (scope, path, mut overlay) in chosen.overlays {
        if scope == Scope::Project {
            if overlay.remove("channels").is_some() {
                loaded.warnings.push(format!(
                    "{}: \"channels\" in profile {} is ignored: who may command rab through a \
                     chat is set in your own settings",
                    path.display(),
                    profile.unwrap_or_default()
                ));
            }
            if !trusted {
                restrict(&path, &mut overlay, &merged, &mut loaded.ignored);
            }
        }
        loaded.safety.push(layer_of(scope, &path, &overlay)?);
        merge(&mut merged, overlay);
    }
    loaded.profile = profile.map(str::to_owned);
    loaded.profiles = chosen.names;
    let mut settings: Settings = serde_json::from_value(Value::Object(merged))
        .map_err(|e| Error::Invalid { path: project.to_owned(), message: e.to_string() })?;
    combine_layers(&mut settings, &loaded.safety, &mut loaded.warnings);
    apply_env(&mut settings, env, &mut loaded.warnings);
    loaded.settings = settings;
    Ok(loaded)
}

/// One settings file as a JSON object, validated on its own so an error names it.
fn read_settings(path: &Path) -> Result<Option<Map<String, Value>>, Error> {
    let Some(text) = read_optional(path)? else { return Ok(None) };
    let value: Value = serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))?;
    let Value::Object(map) = value else {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: "settings must be a JSON object".into(),
        });
    };
    Ok(Some(map))
}

/// [`crate::untrusted::restrict`] against the settings so far over the defaults.
fn restrict(
    path: &Path,
    map: &mut Map<String, Value>,
    merged: &Map<String, Value>,
    ignored: &mut Vec<String>,
) {
    let mut before = match serde_json::to_value(Settings::default()) {
        Ok(Value::Object(defaults)) => defaults,
        _ => Map::new(),
    };
    merge(&mut before, merged.clone());
    crate::untrusted::restrict(&path.display().to_string(), map, &before, ignored);
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
            if matches!(layer.scope, Scope::Project | Scope::Claude) && is_bypass {
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
        let is_own = layer.scope == Scope::Global;
        for (event, groups) in &layer.hooks {
            hooks.entry(event.clone()).or_default().extend(groups.iter().cloned().map(|mut g| {
                for h in &mut g.hooks {
                    h.is_own = is_own;
                }
                g
            }));
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

    /// A global file and a project directory with `.rab/settings.json`.
    fn files(global: &str, project: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("global.json");
        let p = dir.path().join("project");
        std::fs::create_dir_all(p.join(".rab")).unwrap();
        if !global.is_empty() {
            std::fs::write(&g, global).unwrap();
        }
        if !project.is_empty() {
            std::fs::write(p.join(".rab/settings.json"), project).unwrap();
        }
        (dir, g, p)
    }

    #[test]
    fn project_overrides_global_and_env_overrides_both() {
        let (_d, g, p) = files(
            r#"{"defaultModel": "a", "maxTurns": 5, "retry": {"maxRetries": 4}}"#,
            r#"{"defaultModel": "b", "retry": {"baseDelayMs": 10}}"#,
        );
        let loaded = load_settings(&g, &p, &Env::default(), true).unwrap();
        let s = &loaded.settings;
        assert_eq!((s.default_model.as_deref(), s.max_turns), (Some("b"), Some(5)));
        assert_eq!(s.retry, RetrySettings { max_retries: 4, base_delay_ms: 10 });
        let env = Env::from_pairs([("RAB_MODEL", "c"), ("RAB_THINKING", "high")]);
        let s = load_settings(&g, &p, &env, true).unwrap().settings;
        assert_eq!(s.default_model.as_deref(), Some("c"));
        assert_eq!(s.default_thinking_level, Some(ThinkingLevel::High));
    }

    #[test]
    fn issue_36_unknown_keys_are_warnings_with_the_closest_key_and_bad_json_has_a_position() {
        let (_d, g, p) = files(r#"{"permisions": {"deny": ["bash"]}}"#, "{\n  \"maxTurns\": ,\n}");
        let loaded = load_settings(&g, Path::new("/nonexistent"), &Env::default(), true).unwrap();
        let warnings = loaded.warnings.join("\n");
        assert!(
            warnings.contains(
                "global.json: unknown setting \"permisions\"; did you mean \"permissions\"?"
            ),
            "{warnings}"
        );
        std::fs::write(&g, "{}").unwrap();
        let err = load_settings(&g, &p, &Env::default(), true).unwrap_err().to_string();
        assert!(err.contains("settings.json:2:15"), "{err}");
    }

    #[test]
    fn issue_14_an_untrusted_project_cannot_widen_access_but_can_narrow_it() {
        let project = r#"{
            "permissions": {"allow": ["bash"], "deny": ["bash(rm *)"], "ask": ["edit"],
                            "defaultMode": "accept-edits", "additionalDirectories": ["/"]},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]},
            "sandbox": {"mode": "off", "allowEnv": ["ANTHROPIC_API_KEY"], "network": true},
            "secretFirewall": {"enabled": false},
            "routeAssistantCommands": true,
            "maxTurns": 7
        }"#;
        let (_d, g, p) = files(r#"{"sandbox": {"mode": "read-only"}}"#, project);
        let loaded = load_settings(&g, &p, &Env::default(), false).unwrap();
        let s = &loaded.settings;
        assert!(s.permissions.allow.is_empty());
        assert_eq!(s.permissions.deny, ["bash(rm *)"]);
        assert_eq!(s.permissions.ask, ["edit"]);
        assert_eq!(s.permissions.default_mode, None);
        assert!(s.permissions.additional_directories.is_empty());
        assert!(s.hooks.is_empty());
        assert_eq!(s.sandbox.mode.as_deref(), Some("read-only"));
        assert!(s.sandbox.allow_env.is_empty() && s.sandbox.network.is_none());
        assert!(s.secret_firewall.enabled && !s.route_assistant_commands);
        assert_eq!(s.max_turns, Some(7), "settings that widen nothing still apply");
        let ignored = loaded.ignored.join("\n");
        for what in [
            "allow rules bash",
            "permission mode \"accept-edits\"",
            "additional directories",
            "hooks (SessionStart)",
            "sandbox mode \"off\"",
            "sandbox.allowEnv",
            "sandbox.network",
            "secretFirewall",
            "routeAssistantCommands",
        ] {
            assert!(ignored.contains(what), "{what} missing from {ignored}");
        }
        let trusted = load_settings(&g, &p, &Env::default(), true).unwrap();
        assert_eq!(trusted.settings.permissions.allow, ["bash"]);
        assert_eq!(trusted.settings.hooks.len(), 1);
        assert!(trusted.ignored.is_empty());
    }

    /// Issue 53: only the user's own file's hooks run outside the sandbox; a project
    /// cannot claim that by writing the flag into its file.
    #[test]
    fn only_the_users_own_hooks_are_marked_as_theirs() {
        let hook = |cmd: &str, extra: &str| {
            format!(
                r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{cmd}"{extra}}}]}}]}}}}"#
            )
        };
        let (_d, g, p) =
            files(&hook("mine", ""), &hook("theirs", r#", "isOwn": true, "is_own": true"#));
        let loaded = load_settings(&g, &p, &Env::default(), true).unwrap();
        let stop: Vec<(&str, bool)> = loaded.settings.hooks["Stop"]
            .iter()
            .flat_map(|g| g.hooks.iter().map(|h| (h.command.as_str(), h.is_own)))
            .collect();
        assert_eq!(stop, [("mine", true), ("theirs", false)]);
    }

    #[test]
    fn issue_14_claude_code_project_settings_are_read_for_rules_and_hooks() {
        let (_d, g, p) = files("", "");
        std::fs::create_dir_all(p.join(".claude")).unwrap();
        std::fs::write(
            p.join(".claude/settings.json"),
            r#"{"model": "opus", "env": {"X": "1"},
                "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"],
                                "disableBypassPermissionsMode": "disable"},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
        )
        .unwrap();
        let untrusted = load_settings(&g, &p, &Env::default(), false).unwrap();
        assert_eq!(untrusted.settings.permissions.deny, ["Read(./.env)"]);
        assert!(
            untrusted.settings.permissions.allow.is_empty() && untrusted.settings.hooks.is_empty()
        );
        let trusted = load_settings(&g, &p, &Env::default(), true).unwrap();
        assert_eq!(trusted.settings.permissions.allow, ["Bash(npm test:*)"]);
        assert_eq!(trusted.safety.iter().map(|l| l.scope).collect::<Vec<_>>(), [Scope::Claude]);
        // Issue 53: Claude Code's local file is read too, its deny rules even untrusted.
        std::fs::write(
            p.join(".claude/settings.local.json"),
            r#"{"permissions": {"allow": ["Bash(make:*)"], "deny": ["Bash(git push:*)"]}}"#,
        )
        .unwrap();
        let untrusted = load_settings(&g, &p, &Env::default(), false).unwrap();
        let deny: Vec<&str> =
            untrusted.safety.iter().flat_map(|l| &l.permissions.deny).map(String::as_str).collect();
        assert!(deny.contains(&"Bash(git push:*)") && deny.contains(&"Read(./.env)"), "{deny:?}");
        assert!(untrusted.safety.iter().all(|l| l.permissions.allow.is_empty()));
        let trusted = load_settings(&g, &p, &Env::default(), true).unwrap();
        let allow: Vec<&str> =
            trusted.safety.iter().flat_map(|l| &l.permissions.allow).map(String::as_str).collect();
        assert_eq!(allow, ["Bash(npm test:*)", "Bash(make:*)"]);
        assert!(trusted.files.iter().any(|f| f.ends_with(".claude/settings.local.json")));
    }

    #[test]
    fn a_wrong_type_names_the_file_and_the_key_in_plain_words() {
        let (_d, g, p) = files(r#"{"theme": "dark", "maxTurns": "five"}"#, "");
        let err = load_settings(&g, &p, &Env::default(), true).unwrap_err().to_string();
        assert!(err.contains("global.json: maxTurns: expected a whole number"), "{err}");
        assert!(err.contains(r#"got "five""#), "{err}");
        let (_d, g, p) = files("", r#"{"retry": {"maxRetries": 3, "baseDelayMs": true}}"#);
        let loaded = load_settings(&g, &p, &Env::default(), true).unwrap();
        let warnings = loaded.warnings.join("\n");
        assert!(
            warnings.contains("settings.json: retry.baseDelayMs: expected a whole number")
                && warnings.contains("got true; ignored"),
            "a project's bad value is a warning and left out: {warnings}"
        );
        assert_eq!(loaded.settings.retry.max_retries, 3, "the rest of the object applies");
        let (_d, g, p) = files(r#"{"fallbackModels": "openai/gpt-6.1-sol"}"#, "");
        let err = load_settings(&g, &p, &Env::default(), true).unwrap_err().to_string();
        assert!(err.contains("fallbackModels: expected a list"), "{err}");
    }

    #[test]
    fn the_local_project_file_layers_over_the_shared_one_under_the_same_trust() {
        let (_d, g, p) = files("", r#"{"maxTurns": 5, "permissions": {"allow": ["read"]}}"#);
        std::fs::write(
            p.join(".rab/settings.local.json"),
            r#"{"maxTurns": 7, "permissions": {"allow": ["bash(make:*)"]}}"#,
        )
        .unwrap();
        let trusted = load_settings(&g, &p, &Env::default(), true).unwrap();
        assert_eq!(trusted.settings.max_turns, Some(7));
        assert_eq!(trusted.settings.permissions.allow, ["read", "bash(make:*)"]);
        assert!(trusted.files.last().unwrap().ends_with(".rab/settings.local.json"));
        // A repository can commit the local file too: untrusted, it widens nothing.
        let untrusted = load_settings(&g, &p, &Env::default(), false).unwrap();
        assert!(untrusted.settings.permissions.allow.is_empty());
        assert!(
            untrusted
                .ignored
                .iter()
                .any(|i| i.contains("settings.local.json") && i.contains("bash(make:*)")),
            "{:?}",
            untrusted.ignored
        );
    }

    #[test]
    fn an_untrusted_projects_profile_widens_nothing_and_bad_profiles_name_the_key() {
        let (_d, g, p) = files(
            r#"{"profiles": {"ci": {"maxTurns": 9, "permissions": {"allow": ["read"]}}}}"#,
            r#"{"profiles": {"ci": {"permissions": {"allow": ["bash"], "deny": ["web_fetch"]},
                                     "sandbox": {"mode": "off"}, "maxTurns": 5}}}"#,
        );
        let env = Env::default();
        let loaded = load_settings_with_profile(&g, &p, &env, false, Some("ci")).unwrap();
        let s = &loaded.settings;
        assert_eq!(s.max_turns, Some(5), "the project's part comes last");
        assert_eq!(s.permissions.allow, ["read"], "the global part may allow");
        assert_eq!(s.permissions.deny, ["web_fetch"], "an untrusted project may narrow");
        assert_eq!(s.sandbox.mode, None);
        let ignored = loaded.ignored.join("\n");
        assert!(
            ignored.contains("allow rules bash") && ignored.contains("sandbox mode"),
            "{ignored}"
        );
        assert_eq!(
            (loaded.profile.as_deref(), &loaded.profiles[..]),
            (Some("ci"), &["ci".to_owned()][..])
        );
        let trusted = load_settings_with_profile(&g, &p, &env, true, Some("ci")).unwrap();
        assert_eq!(trusted.settings.permissions.allow, ["read", "bash"]);
        let none = load_settings(&g, &p, &env, true).unwrap();
        assert_eq!(none.settings.max_turns, None, "no profile chosen, none applied");

        let (_d, g, p) = files(r#"{"profiles": {"x": {"maxTurns": "five"}}}"#, "");
        let err = load_settings(&g, &p, &env, true).unwrap_err().to_string();
        assert!(err.contains("profiles.x.maxTurns"), "{err}");
        let (_d, g, p) = files(r#"{"profiles": {"x": {"defualtModel": "m"}}}"#, "");
        let warnings = load_settings(&g, &p, &env, true).unwrap().warnings.join("\n");
        assert!(
            warnings.contains("\"profiles.x.defualtModel\"; did you mean \"defaultModel\""),
            "{warnings}"
        );
        let (_d, g, p) = files(r#"{"profiles": []}"#, "");
        let err = load_settings(&g, &p, &env, true).unwrap_err().to_string();
        assert!(err.contains("\"profiles\" must be an object"), "{err}");
        let (_d, g, p) = files("{}", "");
        let err = load_settings_with_profile(&g, &p, &env, true, Some("x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown profile \"x\"; no profiles are defined (\"profiles\" in settings.json)"
        );
    }
}
