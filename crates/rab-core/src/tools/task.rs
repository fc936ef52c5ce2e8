//! `task`: runs a sub-agent with its own conversation and a subset of the tools, on
//! the configured provider and model (or the agent definition's model), and returns its
//! final text. Sub-agents cannot start sub-agents. Several `task` calls in one message
//! run in parallel. Custom agents are markdown files in `.rab/agents/`,
//! `~/.rab/agents/` or `.claude/agents/` with frontmatter `name`, `description`,
//! `tools` (comma-separated) and `model`; the body is the sub-agent's system prompt.

use std::path::Path;
use std::sync::Arc;

use rab_agent::{
    Agent, AgentConfig, AgentEvent, AgentTool, StopCause, Tool, ToolContext, ToolError, ToolFacts,
    ToolLevel, ToolOutput,
};
use rab_ai::{Message, Model, Provider};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The tool's name.
pub const TASK: &str = "task";

/// The most turns a call may ask for when the session sets no limit.
const MAX_TURNS_CAP: u32 = 500;

/// A kind of sub-agent.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDef {
    /// Name the model picks it by.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Tools it gets (`None`: all but `task`).
    pub tools: Option<Vec<String>>,
    /// Model id (`None`: the session's).
    pub model: Option<String>,
    /// Its system prompt.
    pub prompt: String,
}

/// The built-in general-purpose agent.
fn general() -> AgentDef {
    AgentDef {
        name: "general-purpose".into(),
        description: "researches, searches and changes code on its own".into(),
        tools: None,
        model: None,
        prompt: "You are a sub-agent of rab, a coding agent. Do the task you are given with \
                 your tools, then answer with a concise report of what you found or did; \
                 that report is all the caller sees."
            .into(),
    }
}

/// Reads the agent definitions of `dirs` (later directories do not override earlier
/// names); a bad file is reported in `warnings` and skipped.
pub fn load_agents(
    dirs: &[&Path],
    files: &crate::prompt_files::PromptFiles,
    warnings: &mut Vec<String>,
) -> Vec<AgentDef> {
    let mut out = vec![general()];
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
            match parse_agent(&path, files) {
                Ok(def) if out.iter().any(|d| d.name == def.name) => {}
                Ok(def) => out.push(def),
                Err(e) => warnings.push(format!("{}: {e} (agent skipped)", path.display())),
            }
        }
    }
    out
}

fn parse_agent(path: &Path, files: &crate::prompt_files::PromptFiles) -> Result<AgentDef, String> {
    use crate::skills::{frontmatter_fields, split_frontmatter};
    let text = crate::skills::read_definition(files, path)?;
    let (front, body) = split_frontmatter(&text).ok_or("missing the --- frontmatter")?;
    let mut def = AgentDef {
        name: String::new(),
        description: String::new(),
        tools: None,
        model: None,
        prompt: body.trim().to_owned(),
    };
    for (key, value) in frontmatter_fields(front) {
        match key.as_str() {
            "name" => def.name = value,
            "description" => def.description = value,
            "tools" => def.tools = Some(crate::rule_list::split_rule_list(&value)),
            "model" if value != "inherit" => def.model = Some(value),
            _ => {}
        }
    }
    if def.name.is_empty()
        || !def.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("frontmatter needs a name (letters, digits, - and _)".into());
    }
    if def.description.is_empty() {
        return Err("frontmatter needs a description".into());
    }
    Ok(def)
}

/// Everything a sub-agent is built from.
pub struct TaskTool {
    provider: Arc<dyn Provider>,
    config: AgentConfig,
    tools: Vec<Arc<dyn AgentTool>>,
    agents: Vec<AgentDef>,
    models: Vec<Model>,
    inbox: Option<crate::inbox::Inbox>,
    /// Tools that come and go (MCP servers), for sub-agents without a tool list.
    sources: Vec<Arc<dyn rab_agent::ToolSource>>,
    counter: std::sync::atomic::AtomicU32,
    /// Every sub-agent call passes it; its SubagentStop hooks run at the end.
    gate: Option<Arc<crate::gate::Gate>>,
    /// When a sub-agent's run counts as a runaway loop.
    loops: rab_agent::LoopDetection,
}

impl TaskTool {
    /// Sub-agents on `provider` with `config`, choosing from `tools` (without `task`),
    /// every call passing `gate` (permissions, hooks, secret firewall); `models`
    /// resolve an agent's `model`.
    pub fn new(
        provider: Arc<dyn Provider>,
        config: AgentConfig,
        tools: Vec<Arc<dyn AgentTool>>,
        gate: Option<Arc<crate::gate::Gate>>,
        agents: Vec<AgentDef>,
        models: Vec<Model>,
    ) -> Self {
        let tools = tools.into_iter().filter(|t| t.name() != TASK).collect();
        Self {
            provider,
            config,
            tools,
            agents,
            models,
            inbox: None,
            sources: Vec::new(),
            counter: std::sync::atomic::AtomicU32::new(0),
            gate,
            loops: rab_agent::LoopDetection::default(),
        }
    }

    /// SubagentStop hooks: `Some` is feedback that sends the sub-agent back to work.
    async fn stop_hook(
        &self,
        id: &str,
        is_active: bool,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Option<String> {
        use crate::hooks::HookEvent;
        let gate = self.gate.as_ref().filter(|g| g.hooks().has(HookEvent::SubagentStop))?;
        let input = gate.event_input(json!({"stop_hook_active": is_active, "agent_id": id}));
        gate.hooks().run(HookEvent::SubagentStop, None, input, cancel).await.block
    }

    /// Registers each running sub-agent in `inbox` and gives it `send_message`.
    pub fn with_inbox(mut self, inbox: crate::inbox::Inbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Gives sub-agents whose definition lists no tools these sources too (MCP
    /// servers' tools, as the main agent has them).
    pub fn with_tool_sources(mut self, sources: Vec<Arc<dyn rab_agent::ToolSource>>) -> Self {
        self.sources = sources;
        self
    }

    /// Stops sub-agents that loop by these limits (the main agent's).
    pub fn with_loop_detection(mut self, loops: rab_agent::LoopDetection) -> Self {
        self.loops = loops;
        self
    }

    fn subset(&self, def: &AgentDef) -> Result<Vec<Arc<dyn AgentTool>>, ToolError> {
        let Some(names) = &def.tools else { return Ok(self.tools.clone()) };
        let mut out = Vec::new();
        for name in names {
            match self.tools.iter().find(|t| t.name() == *name) {
                Some(t) => out.push(t.clone()),
                None => {
                    return Err(ToolError::Model(format!(
                        "agent {} names tool '{name}', which this session does not have",
                        def.name
                    )));
                }
            }
        }
        Ok(out)
    }

    /// The model `id` (or `provider/id`) names, on the session's provider and endpoint:
    /// the session's key is sent with it, so it never goes to another provider.
    fn model(&self, id: &str, whose: &str) -> Result<Model, ToolError> {
        let session = &self.config.model;
        let found = self.models.iter().find(|m| {
            m.id == id || id.strip_prefix(&format!("{}/", m.provider)) == Some(m.id.as_str())
        });
        let Some(found) = found else {
            return Err(ToolError::Model(format!("{whose} model {id}, which is not known")));
        };
        if found.provider != session.provider {
            return Err(ToolError::Model(format!(
                "{whose} model {id}, which is {}'s; sub-agents run on the session's provider \
                 ({}), whose key they use",
                found.provider, session.provider
            )));
        }
        let mut model = found.clone();
        model.base_url.clone_from(&session.base_url);
        Ok(model)
    }
}

/// The call's own tool list: names from `available` (the agent's tools), in order.
fn narrow(
    available: Vec<Arc<dyn AgentTool>>,
    names: &[String],
) -> Result<Vec<Arc<dyn AgentTool>>, ToolError> {
    let mut out = Vec::new();
    for name in names {
        match available.iter().find(|t| t.name() == *name) {
            Some(t) if !out.iter().any(|o: &Arc<dyn AgentTool>| o.name() == *name) => {
                out.push(t.clone());
            }
            Some(_) => {}
            None => {
                let have: Vec<String> = available.iter().map(|t| t.name()).collect();
                return Err(ToolError::Model(format!(
                    "tools: '{name}' is not among this agent's tools ({}); a sub-agent gets a \
                     subset of them",
                    have.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// Arguments of `task`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// 3-5 word summary.
    pub description: String,
    /// The whole task: the sub-agent sees nothing else.
    pub prompt: String,
    /// Default general-purpose.
    pub subagent_type: Option<String>,
    /// Only these of the agent's tools.
    pub tools: Option<Vec<String>>,
    /// Replaces the agent's system prompt.
    #[schemars(description = "")]
    pub system_prompt: Option<String>,
    /// Most model requests it may make.
    #[schemars(description = "Most requests it may make.")]
    pub max_turns: Option<u32>,
    /// Another model of the session's provider.
    #[schemars(description = "Another model of this provider.")]
    pub model: Option<String>,
}

impl Tool for TaskTool {
    type Args = Args;
    const NAME: &'static str = TASK;
    const FACTS: ToolFacts = ToolFacts {
        rule: rab_agent::RuleKind::None,
        claude_names: &["Task"],
        covered_by: &[],
        always_full: true,
    };
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn summary(&self, args: &Args) -> Option<String> {
        let agent = args.subagent_type.as_deref().filter(|a| !a.is_empty());
        Some(format!("{} ({})", args.description, agent.unwrap_or("general-purpose")))
    }

    fn description(&self) -> String {
        let agents: Vec<String> =
            self.agents.iter().map(|a| format!("{}: {}", a.name, a.description)).collect();
        format!(
            // The system prompt says calls in one message run in parallel.
            "Run a sub-agent on a self-contained task; it returns its final report. Agents: \
             {}.",
            agents.join("; ")
        )
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let name = args.subagent_type.as_deref().unwrap_or("general-purpose");
        let Some(def) = self.agents.iter().find(|a| a.name == name) else {
            let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
            return Err(ToolError::Model(format!(
                "no agent named {name}; agents: {}",
                names.join(", ")
            )));
        };
        let mut tools = self.subset(def)?;
        if let Some(names) = &args.tools {
            tools = narrow(tools, names)?;
        }
        let mut config = self.config.clone();
        // The session's ledger: one budget for every agent, the spending marked as a
        // sub-agent's.
        config.spend = config.spend.as_ref().map(rab_agent::Spend::for_sub_agent);
        if let Some(id) = &args.model {
            config.model = self.model(id, "the call asks for")?;
        } else if let Some(id) = &def.model {
            config.model = self.model(id, &format!("agent {} wants", def.name))?;
        }
        if let Some(n) = args.max_turns {
            let session = self.config.max_turns.filter(|l| *l < MAX_TURNS_CAP);
            let limit = session.unwrap_or(MAX_TURNS_CAP);
            if n == 0 || n > limit {
                let whose = if session.is_some() { " (the session's limit)" } else { "" };
                return Err(ToolError::Model(format!(
                    "max_turns must be between 1 and {limit}{whose}, got {n}"
                )));
            }
            config.max_turns = Some(n);
        }
        let n = self.counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let id = format!("task-{n}");
        let mut prompt = args.system_prompt.clone().unwrap_or_else(|| def.prompt.clone());
        if let Some(inbox) = &self.inbox {
            tools.push(Arc::new(crate::inbox::SendMessage::new(inbox.clone(), &id)));
            prompt.push_str(&format!(
                "\n\nYour id is {id}. send_message reaches the main agent (main) and other \
                 running sub-agents (task-N)."
            ));
        }
        // Tools come to sub-agents as to the main agent (one assembly): deferred when
        // that pays, found with tool_search, so fifty MCP tools cost their names. An
        // agent definition's own tool list is sent as it is.
        let own_list = def.tools.is_some() || args.tools.is_some();
        let with_sources = !own_list && !self.sources.is_empty();
        let view = if !own_list {
            crate::tool_catalog::offer_tool_search(&mut tools, with_sources)
        } else {
            None
        };
        let tool_names: Vec<String> = tools.iter().map(|t| t.name()).collect();
        let mut agent = Agent::new(self.provider.clone(), config, prompt, tools);
        agent.set_loop_detection(self.loops);
        if let Some(view) = view {
            agent.set_tool_view(view);
        }
        if let Some(inbox) = &self.inbox {
            inbox.register(&id, agent.queues());
        }
        if let Some(gate) = &self.gate {
            agent.add_hook(gate.clone());
        }
        if with_sources {
            for source in &self.sources {
                agent.add_tool_source(source.clone());
            }
        }
        cx.updates.send(format!("{} ({}) started\n", def.name, args.description));
        let updates = cx.updates.clone();
        let mut sink = |e: AgentEvent| {
            if let AgentEvent::ToolCall { call } = &e {
                updates.send(format!("  {} {}\n", call.name, call.arguments));
            }
            Ok(())
        };
        let mut prompts = vec![Message::user(args.prompt)];
        let mut rounds = 0;
        let stop = loop {
            let stop = agent.run(prompts, &mut sink, cx.cancel.clone()).await;
            if stop != StopCause::Done || rounds >= 3 {
                break stop;
            }
            match self.stop_hook(&id, rounds > 0, &cx.cancel).await {
                Some(feedback) => {
                    rounds += 1;
                    prompts =
                        vec![Message::user(format!("SubagentStop hook feedback: {feedback}"))];
                }
                None => break stop,
            }
        };
        if let Some(inbox) = &self.inbox {
            inbox.unregister(&id);
        }
        let text = agent
            .messages()
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) if !a.text().trim().is_empty() => Some(a.text()),
                Message::Assistant(_)
                | Message::User(_)
                | Message::ToolResult(_)
                | Message::System(_) => None,
            })
            .unwrap_or_default();
        let details =
            json!({"agent": def.name, "id": id, "tools": tool_names, "spentUsd": agent.spent()});
        match stop {
            StopCause::Done => Ok(ToolOutput::text(text).with_details(details)),
            StopCause::Aborted => {
                Err(ToolError::Model(format!("{}: {}", rab_agent::ABORTED, text)))
            }
            StopCause::MaxTurns { limit } => Err(ToolError::Model(format!(
                "the sub-agent stopped after {limit} turns; its last words: {text}"
            ))),
            StopCause::Budget { .. } => {
                Err(ToolError::Model("the sub-agent hit the budget".into()))
            }
            StopCause::Error { message } => {
                Err(ToolError::Model(format!("the sub-agent failed: {message}")))
            }
            StopCause::Length { max_tokens } => Err(ToolError::Model(format!(
                "the sub-agent's reply was cut off at the output limit ({max_tokens} tokens) \
                 twice; its last words: {text}"
            ))),
            StopCause::Loop { message } => Err(ToolError::Model(format!(
                "the sub-agent was stopped: {message}; its last words: {text}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_files_parse_and_bad_ones_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("reader.md"),
            "---\nname: reader\ndescription: reads files\ntools: read, grep\nmodel: inherit\n---\nRead carefully.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("bad.md"), "---\ndescription: x\n---\nbody").unwrap();
        let mut warnings = Vec::new();
        let agents = load_agents(&[dir.path()], &Default::default(), &mut warnings);
        assert_eq!(agents.len(), 2);
        assert_eq!(agents[1].tools.as_deref(), Some(&["read".to_owned(), "grep".to_owned()][..]));
        assert_eq!(
            (agents[1].model.as_ref(), agents[1].prompt.as_str()),
            (None, "Read carefully.")
        );
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("bad.md") && warnings[0].contains("needs a name"),
            "{warnings:?}"
        );
    }
}
