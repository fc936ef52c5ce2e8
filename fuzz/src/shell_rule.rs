//! Permission rules against a command: the input split at the first NUL byte into a
//! rule list as `--allowed-tools` and frontmatter write it (`bash(cargo test*), Read`)
//! and the subject, checked as a bash command, a path and a URL with the rules as
//! allow, ask and deny rules. A verdict or a rule error, never a panic.

use std::path::Path;
use std::sync::LazyLock;

use rab_agent::ToolLevel;
use rab_config::{PermissionSettings, SafetyLayer, Scope};
use rab_core::permissions::{PermissionMode, Policy, PolicyContext};
use rab_core::rule_list::split_rule_list;
use rab_core::tool_catalog::{ToolCatalog, builtin};
use serde_json::json;

/// The tools rules may name (made once: it builds every tool).
static TOOLS: LazyLock<ToolCatalog> = LazyLock::new(|| builtin(Path::new("/p")));

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (rules, subject) = text.split_once('\0').unwrap_or((text, ""));
    let rules = split_rule_list(rules);
    let root = Path::new("/p");
    let cx = PolicyContext { tools: &TOOLS, root, home: Some(Path::new("/home/u")) };
    let layer = |allow: &[String], ask: &[String], deny: &[String]| SafetyLayer {
        scope: Scope::Global,
        source: "/home/u/.rab/agent/settings.json".into(),
        permissions: PermissionSettings {
            allow: allow.to_vec(),
            ask: ask.to_vec(),
            deny: deny.to_vec(),
            ..PermissionSettings::default()
        },
        hooks: Default::default(),
    };
    let none: &[String] = &[];
    let layers = [layer(&rules, none, none), layer(none, &rules, none), layer(none, none, &rules)];
    let command = json!({"command": subject});
    for layer in layers {
        let Ok(policy) = Policy::load(std::slice::from_ref(&layer), &[], &[], &cx) else { return };
        for mode in [PermissionMode::Default, PermissionMode::Yolo] {
            let _ = policy.check(mode, "bash", ToolLevel::Execute, &command);
        }
        let _ = policy.check(
            PermissionMode::Default,
            "edit",
            ToolLevel::Edit,
            &json!({"path": subject}),
        );
        let _ = policy.read_denied(Path::new(subject));
        let fetch = json!({"url": subject});
        let _ = policy.check(PermissionMode::Default, "web_fetch", ToolLevel::Network, &fetch);
    }
    let policy = Policy::default();
    let _ = policy.suggest_rule("bash", &command);
    let _ = policy.suggest_rule("web_fetch", &json!({"url": subject}));
}
