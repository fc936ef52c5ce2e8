//! Tool names in rules and hook matchers: rab's own, and Claude Code's for the tools
//! both have, so settings copied from Claude Code mean the same here.

/// Claude Code's name for each rab tool that has one.
const ALIASES: [(&str, &str); 13] = [
    ("bash", "Bash"),
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("ls", "LS"),
    ("web_fetch", "WebFetch"),
    ("todo_write", "TodoWrite"),
    ("task", "Task"),
    ("edit", "MultiEdit"),
    ("bash_output", "BashOutput"),
    ("kill_shell", "KillShell"),
];

/// rab's name for `name` (its own, or Claude Code's), if it is one of `known`.
pub fn canonical_tool_name(name: &str, known: &[String]) -> Option<String> {
    let ours = ALIASES.iter().find(|(_, cc)| *cc == name).map_or(name, |(ours, _)| ours);
    known.iter().any(|k| k == ours).then(|| ours.to_owned())
}

/// Claude Code's name for a rab tool.
pub fn claude_alias(tool: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(ours, _)| *ours == tool).map(|(_, cc)| *cc)
}

/// Tools whose rule pattern is a path (their `path` argument).
pub(crate) fn is_path_tool(tool: &str) -> bool {
    matches!(tool, "read" | "write" | "edit" | "apply_patch" | "ls" | "grep" | "glob")
}

/// As in Claude Code, an `edit` (or `write`) rule covers every tool that changes files
/// and a `read` rule every tool that reads them.
pub(crate) fn rule_covers(rule_tool: &str, tool: &str) -> bool {
    match rule_tool {
        "edit" => matches!(tool, "write" | "config" | "apply_patch"),
        "write" => matches!(tool, "edit" | "config" | "apply_patch"),
        "read" => matches!(tool, "grep" | "glob" | "ls"),
        _ => false,
    }
}
