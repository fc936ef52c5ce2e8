//! Shared helpers: a test server config, starting a manager, calling tools by name.

mod config;
mod http;
mod reference;
mod serve;
mod stdio;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rab_agent::{AgentTool, ToolContext, ToolError, ToolOutput, ToolSource};
use rab_mcp::{McpManager, ServerConfig, ServerState, StartOptions, Transport};
use serde_json::Value;

/// Generous: only a hung test waits this long.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn stdio(name: &str, command: PathBuf, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: command.to_string_lossy().into_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
        source: PathBuf::from("/test/mcp.json"),
        startup_timeout: None,
        tool_timeout: None,
        disabled: false,
        problem: None,
    }
}

pub fn test_server(name: &str) -> ServerConfig {
    stdio(name, rab_mcp::test_support::test_server_path(), &[], &[])
}

pub fn options() -> StartOptions {
    StartOptions::new(rab_tools::Sandbox::default(), std::env::temp_dir())
}

pub async fn start_ready(servers: Vec<ServerConfig>) -> McpManager {
    let manager = McpManager::start(servers, options());
    assert!(manager.wait_ready(PATIENCE).await, "servers did not settle: {:?}", manager.servers());
    manager
}

pub fn state(manager: &McpManager, name: &str) -> ServerState {
    manager.servers().into_iter().find(|s| s.name == name).unwrap().state
}

/// Waits until `check` holds, re-checking after every change the manager announces.
pub async fn wait_until(manager: &McpManager, mut check: impl FnMut(&McpManager) -> bool) {
    let mut changes = manager.subscribe();
    let waited = tokio::time::timeout(PATIENCE, async {
        while !check(manager) {
            changes.changed().await.unwrap();
        }
    })
    .await;
    assert!(waited.is_ok(), "condition not reached; servers: {:?}", manager.servers());
}

pub fn tool(source: &Arc<dyn ToolSource>, name: &str) -> Arc<dyn AgentTool> {
    let tools = source.tools();
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    tools
        .into_iter()
        .find(|t| t.spec().name == name)
        .unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

pub async fn call(
    source: &Arc<dyn ToolSource>,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    tool(source, name).execute(args, ToolContext::detached("call_1")).await
}

pub fn text(output: &ToolOutput) -> String {
    rab_ai::Content::join_text(&output.content)
}
