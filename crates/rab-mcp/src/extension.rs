//! MCP servers as an rab [`Extension`]: their tools arrive through a tool source (the
//! servers start in the background and may change their lists), `/mcp` shows and
//! restarts them, and each server's prompts are `/mcp__server__prompt` commands.

use std::any::Any;
use std::sync::Arc;

use rab_agent::ToolSource;
use rab_core::{
    Command, CommandContext, CommandHandler, CommandOutcome, CommandSource, Completion, Extension,
    PromptRequest,
};

use crate::manager::{McpManager, ServerState};

/// The MCP client as an extension.
pub struct McpExtension {
    manager: McpManager,
}

impl McpExtension {
    /// Wraps a started manager.
    pub fn new(manager: McpManager) -> Self {
        Self { manager }
    }

    /// The manager (to wait for servers or shut them down).
    pub fn manager(&self) -> &McpManager {
        &self.manager
    }
}

impl Extension for McpExtension {
    fn name(&self) -> &str {
        "mcp"
    }

    fn tool_source(&self) -> Option<Arc<dyn ToolSource>> {
        Some(self.manager.tool_source())
    }

    fn expects_tools(&self) -> bool {
        !self.manager.servers().is_empty()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn services(&self) -> Option<Arc<dyn rab_core::Services>> {
        Some(Arc::new(ServerWatch(self.manager.clone())))
    }

    fn commands(&self) -> Vec<Command> {
        vec![Command {
            name: "mcp".into(),
            description: "MCP servers: state, tools, prompts; /mcp restart NAME".into(),
            argument_hint: Some("[restart NAME]".into()),
            handler: Arc::new(Status(self.manager.clone())),
            source: CommandSource::Extension("mcp".into()),
        }]
    }

    fn dynamic_commands(&self) -> Vec<Command> {
        self.manager
            .prompts()
            .into_iter()
            .map(|p| {
                let usage = crate::prompt_usage(&p);
                let hint = usage.split_once(' ').map(|(_, args)| args.to_owned());
                Command {
                    name: crate::tool_name(&p.server, &p.name),
                    description: p
                        .description
                        .clone()
                        .unwrap_or_else(|| format!("prompt {} of MCP server {}", p.name, p.server)),
                    argument_hint: hint,
                    source: CommandSource::Extension(format!("mcp:{}", p.server)),
                    handler: Arc::new(Prompt {
                        manager: self.manager.clone(),
                        server: p.server,
                        name: p.name,
                    }),
                }
            })
            .collect()
    }
}

/// `/mcp` and `/mcp restart NAME`.
struct Status(McpManager);

impl CommandHandler for Status {
    fn run(&self, args: &str, _cx: &mut CommandContext<'_>) -> CommandOutcome {
        let mut words = args.split_whitespace();
        match (words.next(), words.next()) {
            (None, _) => CommandOutcome::Info(status_text(&self.0)),
            (Some("restart"), Some(name)) => match self.0.restart(name) {
                Ok(()) => CommandOutcome::Info(format!(
                    "restarting MCP server {name}; /mcp shows when it is ready"
                )),
                Err(e) => CommandOutcome::Error(e.to_string()),
            },
            (Some(_), _) => {
                CommandOutcome::Error("usage: /mcp (list the servers) or /mcp restart NAME".into())
            }
        }
    }

    fn completions(&self, args: &str, _host: &dyn Any) -> Vec<Completion> {
        let servers = self.0.servers();
        match args.strip_prefix("restart ") {
            Some(partial) => servers
                .into_iter()
                .filter(|s| s.name.starts_with(partial))
                .map(|s| Completion {
                    value: format!("restart {}", s.name),
                    description: Some(s.state.label().to_owned()),
                })
                .collect(),
            None if "restart".starts_with(args) => {
                vec![Completion { value: "restart".into(), description: None }]
            }
            None => Vec::new(),
        }
    }
}

/// What `/mcp` prints.
fn status_text(manager: &McpManager) -> String {
    let servers = manager.servers();
    if servers.is_empty() {
        return "No MCP servers configured. Add them to .rab/mcp.json, .mcp.json or \
                ~/.rab/mcp.json, e.g. {\"mcpServers\": {\"files\": {\"command\": \"npx\", \
                \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]}}}"
            .into();
    }
    let mut out = String::from("MCP servers:\n");
    for s in &servers {
        out.push_str(&format!("  {}  {}  ({})\n", s.name, s.state.label(), s.transport));
        match &s.state {
            ServerState::Failed(why) | ServerState::Crashed(why) => {
                for line in why.lines() {
                    out.push_str(&format!("      {line}\n"));
                }
                out.push_str(&format!("      /mcp restart {} tries again\n", s.name));
            }
            ServerState::Ready => {
                let tools: Vec<String> =
                    s.tools.iter().map(|t| crate::tool_name(&s.name, t)).collect();
                out.push_str(&format!("      tools ({}): {}\n", tools.len(), tools.join(", ")));
                if s.resource_count > 0 {
                    out.push_str(&format!(
                        "      resources: {} (list_mcp_resources, read_mcp_resource)\n",
                        s.resource_count
                    ));
                }
                if !s.prompts.is_empty() {
                    let names: Vec<String> = s
                        .prompts
                        .iter()
                        .map(|p| format!("/{}", crate::tool_name(&s.name, &p.name)))
                        .collect();
                    out.push_str(&format!("      prompts: {}\n", names.join(", ")));
                }
            }
            ServerState::Starting | ServerState::Disabled => {}
        }
    }
    out
}

/// One server prompt as a command: fetched (in the background) and sent as the message.
struct Prompt {
    manager: McpManager,
    server: String,
    name: String,
}

impl CommandHandler for Prompt {
    fn run(&self, args: &str, _cx: &mut CommandContext<'_>) -> CommandOutcome {
        let (manager, server, name, args) =
            (self.manager.clone(), self.server.clone(), self.name.clone(), args.to_owned());
        CommandOutcome::Later(Box::pin(async move {
            match manager.get_prompt(&server, &name, &args).await {
                Ok(text) => CommandOutcome::Prompt(PromptRequest::text(text)),
                Err(e) => CommandOutcome::Error(e.to_string()),
            }
        }))
    }
}

/// The servers' states as the runtime reports them.
struct ServerWatch(McpManager);

impl rab_core::Services for ServerWatch {
    fn statuses(&self) -> Vec<rab_core::ServiceStatus> {
        use rab_core::ServiceState as S;
        self.0
            .servers()
            .into_iter()
            .map(|s| rab_core::ServiceStatus {
                kind: rab_core::ServiceKind::McpServer,
                name: s.name,
                state: match s.state {
                    ServerState::Starting => S::Starting,
                    ServerState::Ready => S::Ready,
                    ServerState::Failed(why) => S::Failed(why),
                    ServerState::Crashed(why) => S::Crashed(why),
                    ServerState::Disabled => S::Disabled,
                },
                tools: s.tools.len(),
                generation: 0,
            })
            .collect()
    }

    fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.subscribe()
    }
}
