//! `config`: the model reads rab's settings and changes the few that cannot widen
//! what it may do. Permissions, hooks, the sandbox, the secret firewall and budgets are
//! readable only; changes go to the global settings file and apply to new sessions.

use std::path::PathBuf;
use std::sync::Arc;

use rab_agent::{Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput};
use rab_config::Settings;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::gate::ModeSwitch;

/// Keys `set` may change.
pub const SETTABLE: [&str; 6] = [
    "theme",
    "defaultModel",
    "defaultThinkingLevel",
    "compaction.enabled",
    "steeringMode",
    "followUpMode",
];

/// Keys `get` may read (besides the settable ones).
const READABLE: [&str; 9] = [
    "permissionMode",
    "sandbox.mode",
    "sandbox.network",
    "secretFirewall.enabled",
    "maxTurns",
    "maxBudgetUsd",
    "toolSearch",
    "compaction.reserveTokens",
    "compaction.keepRecentTokens",
];

/// The tool over a settings snapshot.
pub struct ConfigTool {
    settings: Settings,
    mode: Arc<ModeSwitch>,
    global_file: PathBuf,
}

impl ConfigTool {
    /// Reads `settings` (and the live permission mode); writes `global_file`.
    pub fn new(settings: Settings, mode: Arc<ModeSwitch>, global_file: PathBuf) -> Self {
        Self { settings, mode, global_file }
    }

    fn get(&self, key: &str) -> Option<Value> {
        if key == "permissionMode" {
            return Some(json!(self.mode.get().as_str()));
        }
        let all = serde_json::to_value(&self.settings).ok()?;
        key.split('.').try_fold(&all, |v, k| v.get(k)).cloned()
    }
}

/// Arguments of `config`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// "get" or "set".
    pub action: String,
    /// Setting key, e.g. theme; omit with get to list all.
    pub key: Option<String>,
    /// New value (set).
    pub value: Option<Value>,
}

impl Tool for ConfigTool {
    type Args = Args;
    const NAME: &'static str = "config";
    // `config set` writes the settings file: edit and write rules cover it.
    const FACTS: ToolFacts = ToolFacts {
        rule: rab_agent::RuleKind::None,
        claude_names: &[],
        covered_by: &["edit", "write"],
        always_full: false,
    };
    const LEVEL: ToolLevel = ToolLevel::Edit;

    // `set` writes the global settings file: an edit, asked for in default mode and
    // refused in plan mode; `get` only reads.
    fn level_of(&self, args: &Args) -> ToolLevel {
        if args.action == "get" { ToolLevel::ReadOnly } else { ToolLevel::Edit }
    }

    fn written_path(&self, args: &Args) -> Option<String> {
        (args.action != "get").then(|| self.global_file.display().to_string())
    }

    fn description(&self) -> String {
        format!(
            "Read rab settings, or set one of: {} (saved globally, used by new sessions).",
            SETTABLE.join(", ")
        )
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let known = || SETTABLE.iter().chain(&READABLE).copied().collect::<Vec<_>>().join(", ");
        match (args.action.as_str(), args.key.as_deref()) {
            ("get", None) => {
                let all: serde_json::Map<String, Value> = SETTABLE
                    .iter()
                    .chain(&READABLE)
                    .map(|k| ((*k).to_owned(), self.get(k).unwrap_or(Value::Null)))
                    .collect();
                Ok(ToolOutput::text(Value::Object(all).to_string()))
            }
            ("get", Some(key)) if SETTABLE.contains(&key) || READABLE.contains(&key) => {
                Ok(ToolOutput::text(format!("{key} = {}", self.get(key).unwrap_or(Value::Null))))
            }
            ("get", Some(key)) => {
                Err(ToolError::Model(format!("'{key}' cannot be read here; keys: {}", known())))
            }
            ("set", Some(key)) if SETTABLE.contains(&key) => {
                let value =
                    args.value.ok_or_else(|| ToolError::Model("set needs a value".into()))?;
                rab_config::set_setting(&self.global_file, key, value.clone())
                    .map_err(|e| ToolError::Model(e.to_string()))?;
                Ok(ToolOutput::text(format!(
                    "{key} = {value} saved in {}; new sessions use it",
                    self.global_file.display()
                )))
            }
            ("set", Some(key)) => Err(ToolError::Model(format!(
                "'{key}' cannot be set by the agent; settable: {}. Permissions, hooks and the \
                 sandbox are the user's to change.",
                SETTABLE.join(", ")
            ))),
            ("set", None) => Err(ToolError::Model("set needs a key".into())),
            (other, _) => {
                Err(ToolError::Model(format!("action must be get or set, not '{other}'")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::PermissionMode;
    use rab_agent::AgentTool;

    #[tokio::test]
    async fn gets_any_listed_key_and_sets_only_safe_ones() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let tool = ConfigTool::new(
            Settings::default(),
            Arc::new(ModeSwitch::new(PermissionMode::Plan)),
            file.clone(),
        );
        let run = |args: Value| tool.execute(args, ToolContext::detached("c"));
        let out = run(json!({"action": "get", "key": "permissionMode"})).await.unwrap();
        assert_eq!(out, ToolOutput::text("permissionMode = \"plan\""));
        run(json!({"action": "set", "key": "compaction.enabled", "value": false})).await.unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(saved, json!({"compaction": {"enabled": false}}));
        let err = run(json!({"action": "set", "key": "permissions.defaultMode", "value": "yolo"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("cannot be set by the agent"), "{err}");
        let err = run(json!({"action": "set", "key": "theme", "value": 3})).await.unwrap_err();
        assert!(err.to_string().contains("theme"), "a bad type is refused: {err}");
    }
}
