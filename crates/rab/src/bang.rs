//! Shell lines typed by the user, run with the bash tool (same limits and process
//! handling as the model's calls) and shown:
//! - `!cmd` hands the output to the model with the next message; `!!cmd` does not;
//! - `,cmd` (CrabClaw's comma routing, when `cmd` is not a known command) goes through
//!   the same permission gate and sandbox as the model's bash calls; `,,cmd` then also
//!   sends the command and its output to the model at once, a failure wrapped so the
//!   model can correct it.

use rab_agent::{AgentTool, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::launch::Launch;

/// A parsed shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bang {
    /// The shell command.
    pub command: String,
    /// `!cmd`: with the next message; `,,cmd`: to the model now.
    pub share: bool,
    /// Typed with a comma: through the permission gate.
    pub is_comma: bool,
}

/// Parses `!cmd` / `!!cmd`.
pub fn parse(line: &str) -> Option<Bang> {
    let line = line.trim_start();
    let (rest, share) = match line.strip_prefix("!!") {
        Some(rest) => (rest, false),
        None => (line.strip_prefix('!')?, true),
    };
    let command = rest.trim().to_owned();
    (!command.is_empty()).then_some(Bang { command, share, is_comma: false })
}

/// Parses `,cmd` / `,,cmd` (call after the command parser: a known `,name` is a
/// command, not a shell line).
pub fn parse_comma(line: &str) -> Option<Bang> {
    let line = line.trim_start();
    let (rest, share) = match line.strip_prefix(",,") {
        Some(rest) => (rest, true),
        None => (line.strip_prefix(',')?, false),
    };
    let command = rest.trim().to_owned();
    (!command.is_empty()).then_some(Bang { command, share, is_comma: true })
}

/// `!` or `,` shell line, whichever `line` is.
pub fn parse_any(line: &str) -> Option<Bang> {
    parse(line).or_else(|| parse_comma(line))
}

/// The outcome of a shell line.
pub struct BangResult {
    /// Output as the user sees it (tail-truncated like the tool's).
    pub output: String,
    /// Whether the command failed (or was refused).
    pub is_error: bool,
}

/// Runs the line with the bash tool; `updates` receives output as it arrives. Comma
/// lines pass the permission gate first and the secret firewall after.
pub async fn run(
    launch: &Launch,
    bang: &Bang,
    cancel: CancellationToken,
    updates: rab_agent::UpdateSink,
) -> BangResult {
    let bash = rab_tools::bash::Bash::new(launch.workspace.clone());
    let cx = ToolContext { call_id: "shell".into(), cancel, updates };
    let (output, is_error) = if bang.is_comma {
        rab_core::routing::run_gated(&bash, &launch.gate, &bang.command, cx).await
    } else {
        match bash.execute(json!({"command": bang.command}), cx).await {
            Ok(out) => (rab_ai::Content::join_text(&out.content), false),
            Err(e) => (e.to_string(), true),
        }
    };
    BangResult { output, is_error }
}

/// The context handed to the model for a shared `!cmd`, or the message a `,,cmd`
/// sends: a failure is wrapped with a request to correct it.
pub fn context(command: &str, result: &BangResult) -> String {
    if result.is_error {
        return format!(
            "I ran `{command}` in the shell and it failed:\n```\n{}\n```\nFind out why and \
             correct it.",
            result.output.trim_end()
        );
    }
    format!("I ran `{command}` in the shell:\n```\n{}\n```", result.output.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bang_and_comma_lines() {
        let b = |c: &str, share, is_comma| Some(Bang { command: c.into(), share, is_comma });
        assert_eq!(parse("!ls -la"), b("ls -la", true, false));
        assert_eq!(parse("!! git status"), b("git status", false, false));
        assert_eq!(parse("!"), None);
        assert_eq!(parse("hello!"), None);
        assert_eq!(parse_comma(",ls -la"), b("ls -la", false, true));
        assert_eq!(parse_comma(",, cargo test"), b("cargo test", true, true));
        assert_eq!(parse_comma(","), None);
        assert_eq!(parse_any("a, b"), None);
    }
}
