//! A plugin as an extension: its tools as agent tools, its commands as commands. Calls
//! run on a blocking thread (the plugin's code is synchronous and may be slow) under the
//! plugin's limits.

use std::sync::Arc;

use rab_agent::{AgentTool, BoxFuture, ToolContext, ToolError, ToolLevel, ToolOutput};
use rab_ai::ToolSpec;
use rab_core::{Command, CommandOutcome, Extension};
use serde_json::Value;

use crate::Plugin;

/// The plugins, as one extension.
pub struct PluginExtension {
    plugins: Vec<Arc<Plugin>>,
}

impl PluginExtension {
    /// An extension over `plugins`.
    pub fn new(plugins: Vec<Arc<Plugin>>) -> Self {
        Self { plugins }
    }

    /// The plugins.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }
}

impl Extension for PluginExtension {
    fn name(&self) -> &str {
        "plugins"
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.plugins
            .iter()
            .flat_map(|p| {
                p.tools().iter().map(|def| {
                    let parameters = serde_json::from_str(&def.parameters)
                        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
                    let spec = ToolSpec {
                        name: def.name.clone(),
                        description: def.description.clone(),
                        parameters,
                        grammar: None,
                    };
                    let level = p.level(&def.name);
                    Arc::new(PluginTool { plugin: p.clone(), spec, level }) as Arc<dyn AgentTool>
                })
            })
            .collect()
    }

    fn commands(&self) -> Vec<Command> {
        self.plugins
            .iter()
            .flat_map(|p| {
                p.commands().iter().map(|c| {
                    let plugin = p.clone();
                    let name = c.name.clone();
                    rab_core::command(&c.name, &c.description, move |args, _cx| {
                        let (plugin, name, args) = (plugin.clone(), name.clone(), args.to_owned());
                        CommandOutcome::Later(Box::pin(async move {
                            let ran = tokio::task::spawn_blocking(move || {
                                plugin.execute_command(&name, &args)
                            })
                            .await;
                            match ran {
                                Ok(Ok(text)) => CommandOutcome::Info(text),
                                Ok(Err(e)) => CommandOutcome::Error(e),
                                Err(e) => CommandOutcome::Error(format!("the command failed: {e}")),
                            }
                        }))
                    })
                })
            })
            .collect()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// One tool of a plugin.
struct PluginTool {
    plugin: Arc<Plugin>,
    spec: ToolSpec,
    level: ToolLevel,
}

impl AgentTool for PluginTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn level(&self) -> ToolLevel {
        self.level
    }

    fn execute(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        let plugin = self.plugin.clone();
        let name = self.spec.name.clone();
        Box::pin(async move {
            let args = arguments.to_string();
            let ran =
                tokio::task::spawn_blocking(move || plugin.execute_tool(&name, &cx.call_id, &args))
                    .await
                    .map_err(|e| ToolError::Model(format!("the plugin's call failed: {e}")))?;
            ran.map(ToolOutput::text).map_err(ToolError::Model)
        })
    }
}
