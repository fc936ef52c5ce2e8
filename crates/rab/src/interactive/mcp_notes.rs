//! MCP servers in the UI: when one becomes ready, fails or crashes, the user hears of it
//! (the UI never waits for servers, so this is where a failure shows up).

use super::Ui;

/// What was last reported, per server.
#[derive(Default)]
pub(super) struct McpSeen {
    version: Option<u64>,
    states: Vec<(String, &'static str)>,
}

/// Waits until the MCP servers change (never, without MCP).
pub(super) async fn changed(rx: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let Some(rx) = rx else { return std::future::pending().await };
    if rx.changed().await.is_err() {
        // The manager is gone (a reload): the loop watches the new one.
        std::future::pending::<()>().await;
    }
}

impl Ui {
    /// A receiver that wakes the loop when a server changes.
    pub(super) fn mcp_watch(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        crate::mcp::manager(&self.app.launch).map(|m| m.subscribe())
    }

    /// Reports servers whose state changed since last time.
    pub(super) fn mcp_check(&mut self) {
        let Some(manager) = crate::mcp::manager(&self.app.launch).cloned() else { return };
        let version = manager.version();
        if self.mcp_seen.version == Some(version) {
            return;
        }
        self.mcp_seen.version = Some(version);
        // A server's prompts are commands: offer them in completion once they exist.
        self.app.refresh_commands();
        for s in manager.servers() {
            let label = s.state.label();
            let before = self.mcp_seen.states.iter().position(|(n, _)| *n == s.name);
            if before.is_some_and(|i| self.mcp_seen.states[i].1 == label) {
                continue;
            }
            match before {
                Some(i) => self.mcp_seen.states[i].1 = label,
                None => self.mcp_seen.states.push((s.name.clone(), label)),
            }
            match &s.state {
                rab_mcp::ServerState::Ready => self.app.set_status(format!(
                    "MCP server {} ready: {} tools",
                    s.name,
                    s.tools.len()
                )),
                rab_mcp::ServerState::Failed(why) | rab_mcp::ServerState::Crashed(why) => {
                    let first = why.lines().next().unwrap_or_default();
                    self.app.error(&format!(
                        "MCP server {} {label}: {first} (/mcp shows more; /mcp restart {} tries \
                         again)",
                        s.name, s.name
                    ));
                }
                rab_mcp::ServerState::Starting | rab_mcp::ServerState::Disabled => {}
            }
        }
    }
}
