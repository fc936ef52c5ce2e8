//! Shell lines typed by the user (`crate::input::ShellLine`: `!cmd`, `!!cmd`,
//! `,cmd`, `,,cmd`), run with the bash tool (same limits and process handling as the
//! model's calls): comma lines through the same permission gate, sandbox and secret
//! firewall as the model's bash calls.

use rab_agent::{AgentTool, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::input::ShellLine;
use crate::setup::Setup as Launch;

/// The outcome of a shell line.
pub struct ShellResult {
    /// Output as the user sees it (tail-truncated like the tool's).
    pub output: String,
    /// Whether the command failed (or was refused).
    pub is_error: bool,
}

/// Runs the line with the bash tool; `updates` receives output as it arrives. Comma
/// lines pass the permission gate first and the secret firewall after.
pub async fn run(
    launch: &Launch,
    line: &ShellLine,
    cancel: CancellationToken,
    updates: rab_agent::UpdateSink,
) -> ShellResult {
    let cx = ToolContext { call_id: "shell".into(), cancel, updates };
    let (output, is_error) = if line.gated {
        let bash = rab_tools::bash::Bash::new(launch.workspace.clone());
        crate::assistant_commands::run_gated(&bash, &launch.gate, &line.command, cx).await
    } else {
        // The user's own `!cmd`: confined like the model's, but free to change protected
        // paths (`!mkdir .rab/commands`).
        let ws = &launch.workspace;
        let bash = rab_tools::bash::Bash::new(
            ws.clone().with_sandbox(ws.sandbox().clone().for_user_commands()),
        );
        match bash.execute(json!({"command": line.command}), cx).await {
            Ok(out) => (rab_ai::Content::join_text(&out.content), false),
            Err(e) => (e.to_string(), true),
        }
    };
    ShellResult { output, is_error }
}

/// The context handed to the model for a shared `!cmd`, or the message a `,,cmd`
/// sends.
pub fn context(command: &str, result: &ShellResult) -> String {
    crate::input::shell_context(command, &result.output, result.is_error)
}
