//! The tools permission rules and hooks may name, with what each tool declares about
//! itself ([`ToolFacts`]): what a rule's pattern matches, Claude Code's names for it,
//! which other tools' rules cover it. Built from the tools (and the session tools'
//! declared facts), so no list of names is kept apart from the tools.

use std::sync::Arc;

use rab_agent::{AgentTool, RuleKind, Tool, ToolFacts};

/// Tools by name with their facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCatalog {
    tools: Vec<(String, ToolFacts)>,
}

impl ToolCatalog {
    /// A catalog of these tools (the first of a name wins).
    pub fn new(tools: impl IntoIterator<Item = (String, ToolFacts)>) -> Self {
        let mut catalog = Self::default();
        for (name, facts) in tools {
            catalog.add(name, facts);
        }
        catalog
    }

    /// The catalog of tool instances.
    pub fn of(tools: &[Arc<dyn AgentTool>]) -> Self {
        Self::new(tools.iter().map(|t| (t.name(), t.facts())))
    }

    /// Adds a tool unless one of the name is there.
    pub fn add(&mut self, name: String, facts: ToolFacts) {
        if !self.tools.iter().any(|(n, _)| *n == name) {
            self.tools.push((name, facts));
        }
    }

    /// Adds a typed tool by its declared name and facts (no instance needed).
    pub fn add_type<T: Tool>(&mut self) {
        self.add(T::NAME.to_owned(), T::FACTS);
    }

    /// Every tool's name.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Whether a tool of this name is known.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.iter().any(|(n, _)| n == name)
    }

    /// What `name` declares ([`ToolFacts::NONE`] for a tool not in the catalog, such
    /// as an MCP server's).
    pub fn facts(&self, name: &str) -> ToolFacts {
        self.tools.iter().find(|(n, _)| n == name).map_or(ToolFacts::NONE, |(_, f)| *f)
    }

    /// rab's name for `name` (its own, or Claude Code's for it), if known.
    pub fn canonical(&self, name: &str) -> Option<String> {
        if self.contains(name) {
            return Some(name.to_owned());
        }
        self.tools.iter().find(|(_, f)| f.claude_names.contains(&name)).map(|(n, _)| n.clone())
    }

    /// Whether a rule's pattern for the tool is a path.
    pub fn is_path_tool(&self, name: &str) -> bool {
        self.facts(name).rule == RuleKind::Path
    }

    /// Whether a rule naming `rule_tool` covers calls of `tool` (an `edit(…)` rule
    /// covers `write`, a `read(…)` rule `grep`).
    pub fn covers(&self, rule_tool: &str, tool: &str) -> bool {
        self.facts(tool).covered_by.contains(&rule_tool)
    }

    /// Claude Code's name for a tool, for the `tool_name` hooks receive.
    pub fn claude_name(&self, name: &str) -> Option<&'static str> {
        self.facts(name).claude_names.first().copied()
    }

    /// The names a hook matcher may use for calls of `name`: its own, Claude Code's, and
    /// those of the tools whose rules cover it (hooks for `Edit` see `apply_patch`).
    pub fn hook_names<'a>(&'a self, name: &'a str) -> Vec<&'a str> {
        let facts = self.facts(name);
        let mut out = vec![name];
        out.extend(facts.claude_names.iter().copied());
        for other in facts.covered_by {
            out.push(other);
            out.extend(self.facts(other).claude_names.iter().copied());
        }
        out
    }
}

/// Every built-in tool with its facts (rules may name tools that are not enabled):
/// rab-tools', `apply_patch` (for the models that edit with it), and the session's own
/// ([`session_tools`]).
pub fn builtin(cwd: &std::path::Path) -> ToolCatalog {
    let mut catalog = ToolCatalog::of(&rab_tools::builtin(cwd));
    catalog.add_type::<rab_tools::apply_patch::ApplyPatch>();
    // Rules may name it where PowerShell is not installed, as on Windows.
    catalog.add_type::<rab_tools::bash::PowerShell>();
    for (name, facts) in session_tools().tools {
        catalog.add(name, facts);
    }
    catalog
}

/// The facts of the tools the session adds besides the built-in ones (`task`, `skill`,
/// `ask_user`, …), declared by their types: rules may name them before they exist.
pub fn session_tools() -> ToolCatalog {
    let mut catalog = ToolCatalog::default();
    catalog.add_type::<crate::task::TaskTool>();
    catalog.add_type::<crate::skills::SkillTool>();
    catalog.add_type::<crate::ask_user::AskUser>();
    catalog.add_type::<crate::config_tool::ConfigTool>();
    catalog.add_type::<crate::inbox::SendMessage>();
    catalog.add_type::<crate::plan_tools::EnterPlanMode>();
    catalog.add_type::<crate::plan_tools::ExitPlanMode>();
    catalog.add_type::<rab_agent::ToolSearch>();
    catalog.add_type::<crate::cron::CronCreate>();
    catalog.add_type::<crate::cron::CronList>();
    catalog.add_type::<crate::cron::CronDelete>();
    catalog
}

/// With more tools than this, tools that do not declare themselves always sent in full
/// (`ToolFacts::always_full`) go as stubs until `tool_search` expands them.
pub const TOOL_VIEW_THRESHOLD: usize = 8;

/// Offers `tool_search` and the progressive view for `tools` when that saves more than
/// it costs — now, or once tools still to come arrive (`expects_more`: MCP servers
/// starting) — the same for the main agent and its sub-agents. The view to install in
/// the agent, when there is one; `tools` then has `tool_search` added.
pub fn offer_tool_search(
    tools: &mut Vec<Arc<dyn AgentTool>>,
    expects_more: bool,
) -> Option<Arc<rab_agent::ToolView>> {
    if tools.len() <= TOOL_VIEW_THRESHOLD && !expects_more {
        return None;
    }
    let mut specs: Vec<rab_ai::ToolSpec> = tools.iter().map(|t| t.spec()).collect();
    let always: Vec<String> =
        tools.iter().filter(|t| t.facts().always_full).map(|t| t.name()).collect();
    let always: Vec<&str> = always.iter().map(String::as_str).collect();
    let view =
        Arc::new(rab_agent::ToolView::new(TOOL_VIEW_THRESHOLD, &always, &specs).when_it_pays());
    // A small server's tools are sent in full: the view must pay for itself.
    if view.bytes_saved() <= view.min_saving() && !expects_more {
        return None;
    }
    let search = rab_agent::ToolSearch::new(view.clone());
    specs.push(rab_agent::AgentTool::spec(&search));
    view.update(&specs);
    tools.push(Arc::new(search));
    Some(view)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_covering_come_from_the_tools() {
        let catalog = builtin(std::path::Path::new("."));
        assert_eq!(catalog.canonical("Bash").as_deref(), Some("bash"));
        assert_eq!(catalog.canonical("MultiEdit").as_deref(), Some("edit"));
        assert_eq!(catalog.canonical("Nope"), None);
        assert!(catalog.is_path_tool("grep") && !catalog.is_path_tool("bash"));
        assert!(catalog.covers("edit", "write") && catalog.covers("read", "ls"));
        assert!(!catalog.covers("read", "write"));
        assert_eq!(
            catalog.hook_names("apply_patch"),
            ["apply_patch", "edit", "Edit", "MultiEdit", "write", "Write"]
        );
        assert!(session_tools().contains("task") && session_tools().contains("cron_delete"));
    }
}
