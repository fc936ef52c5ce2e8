//! What a plugin declares about itself, checked on load: names rab and the providers
//! can use, parameter schemas that are JSON Schema objects, and permission levels.

use rab_agent::ToolLevel;

use crate::{SlashCommand, ToolDef};

/// Prefixes of other kinds' tool names in permission rules and hook matchers: a
/// plugin's tool named `mcp__gh__x` would be allowed by a rule meant for the MCP server
/// `gh`.
const RESERVED_PREFIXES: [&str; 2] = ["mcp__", "plugin__"];

/// Names a provider and rab can use: the plugin's names a file (its last error) and
/// rules (`plugin__NAME`), tool names go to the model's API (letters, digits, `_`, `-`;
/// at most 64), and each tool's parameters must be a JSON Schema object. Names stay in
/// the plugin's own namespace: the plugin's name has no `__` (rules split
/// `plugin__NAME__TOOL` there), and no tool name starts with `mcp__` or `plugin__`.
pub(crate) fn check_names(
    name: &str,
    tools: &[ToolDef],
    commands: &[SlashCommand],
) -> Result<(), String> {
    let is_word = |s: &str, extra: &[char]| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c))
    };
    if !is_word(name, &[]) {
        return Err(format!(
            "its name {name:?} cannot be used (letters, digits, '_' and '-', at most 64)"
        ));
    }
    if name.contains("__") {
        return Err(format!(
            "its name {name:?} cannot be used: '__' separates the plugin's name from its \
             tool's in permission rules (plugin__NAME__TOOL)"
        ));
    }
    for (i, tool) in tools.iter().enumerate() {
        if !is_word(&tool.name, &[]) {
            return Err(format!(
                "its tool name {:?} cannot be used (letters, digits, '_' and '-', at most 64)",
                tool.name
            ));
        }
        let lower = tool.name.to_ascii_lowercase();
        if let Some(prefix) = RESERVED_PREFIXES.iter().find(|p| lower.starts_with(*p)) {
            return Err(format!(
                "its tool name {:?} cannot be used: names starting with {prefix} belong to \
                 MCP servers' tools and plugins' rule names, and rules for those must not \
                 cover a plugin's tool",
                tool.name
            ));
        }
        if tools[..i].iter().any(|t| t.name == tool.name) {
            return Err(format!("it offers two tools named {}", tool.name));
        }
        let schema: Result<serde_json::Value, _> = serde_json::from_str(&tool.parameters);
        if !schema.as_ref().is_ok_and(serde_json::Value::is_object) {
            return Err(format!(
                "the parameters of its tool {} are not a JSON Schema object",
                tool.name
            ));
        }
    }
    for command in commands {
        if !is_word(&command.name, &[':', '.']) {
            return Err(format!("its command name {:?} cannot be used", command.name));
        }
    }
    Ok(())
}

/// A declared level.
pub(crate) fn parse_level(level: &str) -> Option<ToolLevel> {
    match level {
        "read-only" | "read" => Some(ToolLevel::ReadOnly),
        "edit" => Some(ToolLevel::Edit),
        "execute" => Some(ToolLevel::Execute),
        "network" => Some(ToolLevel::Network),
        _ => None,
    }
}
