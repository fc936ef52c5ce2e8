//! Safety settings: permission rules, hooks, the sandbox and the secret firewall, in
//! the shape Claude Code uses, so a user's `permissions` and `hooks` sections work when
//! copied over.
//!
//! ```json
//! {"permissions": {"defaultMode": "accept-edits", "allow": ["bash(git status*)"],
//!                  "deny": ["read(~/.ssh/**)"], "additionalDirectories": ["../lib"]},
//!  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
//!            "command": "./check.sh", "timeout": 30}]}]},
//!  "sandbox": {"mode": "workspace-write", "network": false},
//!  "secretFirewall": {"enabled": true}}
//! ```
//!
//! Rule lists and hooks are not replaced by a later file: every file's entries apply
//! (a project cannot drop a global deny). This crate keeps them as written, with the
//! file each came from; rab-core checks them against the tools and fails on anything
//! it does not understand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Error;
use crate::error::read_optional;

/// `permissions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct PermissionSettings {
    /// `default`, `accept-edits`, `plan` or `yolo` (Claude Code's `acceptEdits` and
    /// `bypassPermissions` are accepted too).
    pub default_mode: Option<String>,
    /// Patterns that run without asking.
    pub allow: Vec<String>,
    /// Patterns that always ask.
    pub ask: Vec<String>,
    /// Patterns that never run.
    pub deny: Vec<String>,
    /// More workspace roots for the sandbox.
    pub additional_directories: Vec<String>,
}

/// One hook command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookCommand {
    /// `command` (the only kind rab runs).
    #[serde(rename = "type")]
    pub kind: String,
    /// Shell command; gets the event as JSON on stdin.
    #[serde(default)]
    pub command: String,
    /// Seconds before it is killed (default 60).
    pub timeout: Option<u64>,
    /// From the user's own settings (not a project's): it runs as written, outside the
    /// sandbox, as Claude Code runs hooks. Set by rab when the files are combined,
    /// never read from a file.
    #[serde(skip)]
    pub is_own: bool,
}

/// Hooks sharing a matcher.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookGroup {
    /// Tool-name pattern (`Bash`, `Edit|Write`, `mcp__.*`); empty or `*` matches all.
    #[serde(default)]
    pub matcher: String,
    /// The commands.
    pub hooks: Vec<HookCommand>,
}

/// `hooks`: event name (`PreToolUse`, …) to groups.
pub type HookSettings = BTreeMap<String, Vec<HookGroup>>;

/// `sandbox`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// `off`, `read-only` or `workspace-write`.
    pub mode: Option<String>,
    /// Let sandboxed programs use the network (allowed unless set to false).
    pub network: Option<bool>,
    /// Environment variables kept for spawned programs although they hold keys.
    pub allow_env: Vec<String>,
    /// Let `web_fetch` reach loopback and private-network addresses.
    pub allow_private_network: bool,
}

/// `secretFirewall`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SecretSettings {
    /// Redact secrets in tool results (on by default).
    pub enabled: bool,
}

impl Default for SecretSettings {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// Where a layer of rules came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `~/.rab/agent/settings.json`.
    Global,
    /// `.rab/settings.json`.
    Project,
    /// The project's `.claude/settings.json` (Claude Code's): rules naming tools rab
    /// does not have are skipped.
    Claude,
    /// The command line.
    Cli,
    /// The user's own "always" answers for this project (`~/.rab/agent/answers.json`).
    Answers,
}

/// One file's (or the command line's) permission rules and hooks.
#[derive(Clone, Debug, PartialEq)]
pub struct SafetyLayer {
    /// Which layer.
    pub scope: Scope,
    /// The file, or `command line`.
    pub source: PathBuf,
    /// Its rules.
    pub permissions: PermissionSettings,
    /// Its hooks.
    pub hooks: HookSettings,
}

/// Reads the `permissions` and `hooks` of one settings object.
pub(crate) fn layer_of(
    scope: Scope,
    source: &Path,
    map: &Map<String, Value>,
) -> Result<SafetyLayer, Error> {
    let invalid = |what: &str, e: serde_json::Error| Error::Invalid {
        path: source.to_owned(),
        message: format!("{what}: {e}; see docs/permissions.md"),
    };
    let permissions = match map.get("permissions") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| invalid("permissions", e))?,
        None => PermissionSettings::default(),
    };
    let hooks = match map.get("hooks") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| invalid("hooks", e))?,
        None => HookSettings::new(),
    };
    Ok(SafetyLayer { scope, source: source.to_owned(), permissions, hooks })
}

/// Adds `rule` to `permissions.allow` in the settings file at `path` (created when
/// missing), keeping everything else in it; written atomically.
pub fn add_allow_rule(path: &Path, rule: &str) -> Result<(), Error> {
    let mut root = match read_optional(path)? {
        Some(text) => match serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))? {
            Value::Object(map) => map,
            _ => {
                return Err(Error::Invalid {
                    path: path.to_owned(),
                    message: "settings must be a JSON object".into(),
                });
            }
        },
        None => Map::new(),
    };
    let perms = root.entry("permissions").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(perms) = perms else {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: "\"permissions\" must be an object".into(),
        });
    };
    let allow = perms.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(allow) = allow else {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: "\"permissions.allow\" must be a list".into(),
        });
    };
    if !allow.iter().any(|r| r == rule) {
        allow.push(Value::String(rule.to_owned()));
    }
    let text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    write_file_atomic(path, format!("{text}\n").as_bytes())?;
    if path.file_name().is_some_and(|n| n == "settings.local.json") {
        ignore_in_git(path)?;
    }
    Ok(())
}

/// Names `path` in the `.gitignore` of its folder (created if missing), so a local
/// settings file is never committed by accident.
fn ignore_in_git(path: &Path) -> Result<(), Error> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return Ok(()) };
    let name = name.to_string_lossy();
    let ignore = dir.join(".gitignore");
    let current = read_optional(&ignore)?.unwrap_or_default();
    if current.lines().any(|l| l.trim() == name || l.trim() == format!("/{name}")) {
        return Ok(());
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&name);
    text.push('\n');
    write_file_atomic(&ignore, text.as_bytes())
}

/// Sets `key` (dotted, e.g. `compaction.enabled`) to `value` in the settings file at
/// `path` (created when missing), keeping the rest; `null` removes the key. The file
/// must still be valid settings afterwards, else nothing is written.
pub fn set_setting(path: &Path, key: &str, value: Value) -> Result<(), Error> {
    let invalid = |message: String| Error::Invalid { path: path.to_owned(), message };
    let mut root = match read_optional(path)? {
        Some(text) => match serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))? {
            Value::Object(map) => map,
            _ => return Err(invalid("settings must be a JSON object".into())),
        },
        None => Map::new(),
    };
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().filter(|l| !l.is_empty()).ok_or_else(|| invalid("empty key".into()))?;
    let mut obj = &mut root;
    for part in parts {
        let next = obj.entry(part).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(map) = next else {
            return Err(invalid(format!("\"{part}\" is not an object")));
        };
        obj = map;
    }
    // Null takes the key out: the default (or a lower file's value) applies again.
    if value.is_null() {
        obj.remove(last);
    } else {
        obj.insert(last.to_owned(), value);
    }
    let root = Value::Object(root);
    serde_json::from_value::<crate::Settings>(root.clone())
        .map_err(|e| invalid(format!("{key}: {e}")))?;
    let text = serde_json::to_string_pretty(&root).unwrap_or_default();
    write_file_atomic(path, format!("{text}\n").as_bytes())
}

/// Temp file in the same directory, then rename: a crash leaves the old or the new
/// file, never half of one.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |source| Error::Io { path: path.to_owned(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(format!(".settings.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn add_allow_rule_keeps_the_rest_of_the_file_and_does_not_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".rab/settings.json");
        add_allow_rule(&path, "bash(ls*)").unwrap();
        std::fs::write(&path, r#"{"maxTurns": 3, "permissions": {"allow": ["read"]}}"#).unwrap();
        add_allow_rule(&path, "bash(ls*)").unwrap();
        add_allow_rule(&path, "bash(ls*)").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["maxTurns"], 3);
        assert_eq!(v["permissions"]["allow"], serde_json::json!(["read", "bash(ls*)"]));
    }

    #[test]
    fn a_claude_code_hooks_section_parses() {
        let map: Map<String, Value> = serde_json::from_str(
            r#"{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks":
                [{"type": "command", "command": "jq . > /dev/null", "timeout": 5}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        )
        .unwrap();
        let layer = layer_of(Scope::Project, Path::new("p.json"), &map).unwrap();
        assert_eq!(layer.hooks["PreToolUse"][0].matcher, "Edit|Write");
        assert_eq!(layer.hooks["Stop"][0].hooks[0].timeout, None);
    }
}
