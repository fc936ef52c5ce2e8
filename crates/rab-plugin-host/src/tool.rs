//! The plugins as one extension: their tools as agent tools (a tool source that changes
//! with every reload, so the next request carries the new tools), their commands as
//! commands, `/plugins` and `/reload-plugins`, and each plugin's state as a service the
//! front ends report. Calls run on a blocking thread (the plugin's code is synchronous
//! and may be slow) under the plugin's limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rab_agent::{AgentTool, BoxFuture, ToolContext, ToolError, ToolLevel, ToolOutput, ToolSource};
use rab_ai::ToolSpec;
use rab_core::{
    Command, CommandOutcome, Extension, ServiceKind, ServiceState, ServiceStatus, Services,
};
use serde_json::Value;

use crate::{Plugin, Registry, ToolDef};

/// The plugins of a session, as one extension.
pub struct PluginExtension {
    registry: Registry,
}

impl PluginExtension {
    /// An extension over the plugins of `registry`.
    pub fn new(registry: Registry) -> Self {
        Self { registry }
    }

    /// The registry behind it.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

impl Extension for PluginExtension {
    fn name(&self) -> &str {
        "plugins"
    }

    fn tool_source(&self) -> Option<Arc<dyn ToolSource>> {
        Some(Arc::new(self.registry.clone()))
    }

    fn expects_tools(&self) -> bool {
        self.registry.has_files()
    }

    fn commands(&self) -> Vec<Command> {
        let list = self.registry.clone();
        let reload = self.registry.clone();
        vec![
            rab_core::command("plugins", "WASM plugins: tools, grants, state, last error", {
                move |_args, _cx| CommandOutcome::Info(list.describe())
            }),
            rab_core::command(
                "reload-plugins",
                "Load changed or new WASM plugins again, drop removed ones",
                move |_args, _cx| {
                    let registry = reload.clone();
                    CommandOutcome::Later(Box::pin(async move {
                        let ran = tokio::task::spawn_blocking(move || {
                            let changes = registry.reload(true);
                            (changes, registry.describe())
                        })
                        .await;
                        match ran {
                            Ok((changes, described)) if changes.is_empty() => {
                                CommandOutcome::Info(described)
                            }
                            Ok((changes, _)) => CommandOutcome::Info(changes.join("\n")),
                            Err(e) => CommandOutcome::Error(format!("reloading failed: {e}")),
                        }
                    }))
                },
            ),
        ]
    }

    fn dynamic_commands(&self) -> Vec<Command> {
        self.registry.plugins().iter().flat_map(commands_of).collect()
    }

    fn services(&self) -> Option<Arc<dyn Services>> {
        Some(Arc::new(self.registry.clone()))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl Services for Registry {
    fn statuses(&self) -> Vec<ServiceStatus> {
        self.entries()
            .iter()
            .map(|e| {
                let (state, tools) = match &e.outcome {
                    Ok(p) if p.is_disabled() => (
                        ServiceState::Crashed(
                            p.last_error()
                                .unwrap_or_else(|| "disabled after failing too often".to_owned()),
                        ),
                        p.tools().len(),
                    ),
                    Ok(p) => (ServiceState::Ready, p.tools().len()),
                    Err(why) => (ServiceState::Failed(why.clone()), 0),
                };
                ServiceStatus {
                    kind: ServiceKind::Plugin,
                    name: e.name(),
                    state,
                    tools,
                    generation: e.generation(),
                }
            })
            .chain(self.removed().into_iter().map(|(name, generation)| ServiceStatus {
                kind: ServiceKind::Plugin,
                name,
                state: ServiceState::Removed,
                tools: 0,
                generation,
            }))
            .collect()
    }

    fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.subscribe()
    }
}

/// A plugin's tools as agent tools (what the agent loop calls).
pub fn agent_tools(plugin: &Arc<Plugin>) -> Vec<Arc<dyn AgentTool>> {
    plugin.tools().iter().map(|def| agent_tool(plugin, def)).collect()
}

/// One tool of a plugin as an agent tool.
pub(crate) fn agent_tool(plugin: &Arc<Plugin>, def: &ToolDef) -> Arc<dyn AgentTool> {
    let (spec, level, label) = described(plugin, def);
    Arc::new(PluginTool { plugin: plugin.clone(), spec, level, label })
}

/// A tool of a plugin as the model and the gate see it: its spec (a schema that does
/// not parse becomes an open object), its level, and its label when that says more
/// than its name.
pub(crate) fn described(plugin: &Plugin, def: &ToolDef) -> (ToolSpec, ToolLevel, Option<String>) {
    let parameters = serde_json::from_str(&def.parameters)
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    let spec = ToolSpec {
        name: def.name.clone(),
        description: def.description.clone(),
        parameters,
        grammar: None,
        server: None,
    };
    // The WIT's `label`: empty or the name itself says nothing more.
    let label = Some(def.label.trim().to_owned()).filter(|l| !l.is_empty() && *l != def.name);
    (spec, plugin.level(&def.name), label)
}

/// A plugin's commands as commands; each runs on a blocking thread.
fn commands_of(plugin: &Arc<Plugin>) -> Vec<Command> {
    plugin
        .commands()
        .iter()
        .map(|c| {
            let plugin = plugin.clone();
            let name = c.name.clone();
            rab_core::command(&c.name, &c.description, move |args, _cx| {
                let (plugin, name, args) = (plugin.clone(), name.clone(), args.to_owned());
                CommandOutcome::Later(Box::pin(async move {
                    let ran =
                        tokio::task::spawn_blocking(move || plugin.execute_command(&name, &args))
                            .await;
                    match ran {
                        Ok(Ok(text)) => CommandOutcome::Info(text),
                        Ok(Err(e)) => CommandOutcome::Error(e),
                        Err(e) => CommandOutcome::Error(format!("the command failed: {e}")),
                    }
                }))
            })
        })
        .collect()
}

/// Sets its flag when dropped: a call whose future is dropped is stopped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One tool of a plugin.
struct PluginTool {
    plugin: Arc<Plugin>,
    spec: ToolSpec,
    level: ToolLevel,
    label: Option<String>,
}

impl AgentTool for PluginTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn name(&self) -> String {
        self.spec.name.clone()
    }

    fn level(&self) -> ToolLevel {
        self.level
    }

    fn rule_alias(&self) -> Option<String> {
        Some(format!("plugin__{}__{}", self.plugin.name(), self.spec.name))
    }

    fn label(&self) -> Option<String> {
        self.label.clone()
    }

    /// A plugin names the files it writes in arguments of any name: each string is
    /// checked as a path it writes (protected paths ask, whatever the argument is
    /// called).
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        if self.level == ToolLevel::Edit {
            rab_agent::string_arguments(arguments)
        } else {
            Vec::new()
        }
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
            // Interrupted (Esc, or the turn dropped): the plugin's code stops at its next
            // epoch tick instead of running on to its time limit.
            let stop = Arc::new(AtomicBool::new(false));
            let _stop_when_dropped = StopOnDrop(stop.clone());
            let flag = stop.clone();
            let id = cx.call_id.clone();
            let call = tokio::task::spawn_blocking(move || {
                plugin.execute_tool_until(&name, &id, &args, Some(flag))
            });
            tokio::pin!(call);
            let ran = tokio::select! {
                ran = &mut call => ran,
                () = cx.cancel.cancelled() => {
                    stop.store(true, Ordering::Relaxed);
                    call.await
                }
            };
            let ran =
                ran.map_err(|e| ToolError::Model(format!("the plugin's call failed: {e}")))?;
            ran.map(ToolOutput::text).map_err(ToolError::Model)
        })
    }
}
