//! `!cmd` and `!!cmd` from the editor or REPL: run a shell command with the bash tool
//! (same limits and process handling as the model's calls) and show its output; `!cmd`
//! also hands the output to the model with the next message.

use rab_agent::{AgentTool, ToolContext, ToolOutput};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::launch::Launch;

/// A parsed bang line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bang {
    /// The shell command.
    pub command: String,
    /// `!cmd`: the output goes to the model with the next message.
    pub share: bool,
}

/// Parses `!cmd` / `!!cmd`.
pub fn parse(line: &str) -> Option<Bang> {
    let line = line.trim_start();
    let (rest, share) = match line.strip_prefix("!!") {
        Some(rest) => (rest, false),
        None => (line.strip_prefix('!')?, true),
    };
    let command = rest.trim().to_owned();
    (!command.is_empty()).then_some(Bang { command, share })
}

/// The outcome of a bang command.
pub struct BangResult {
    /// Output as the user sees it (tail-truncated like the tool's).
    pub output: String,
    /// Whether the command failed.
    pub is_error: bool,
}

/// Runs the command with the bash tool; `updates` receives output as it arrives.
pub async fn run(
    launch: &Launch,
    command: &str,
    cancel: CancellationToken,
    updates: rab_agent::UpdateSink,
) -> BangResult {
    // The user's own command: no permission question, but the same sandbox.
    let bash = rab_tools::bash::Bash::new(launch.workspace.clone());
    let cx = ToolContext { call_id: "bang".into(), cancel, updates };
    match bash.execute(json!({"command": command}), cx).await {
        Ok(out) => BangResult { output: text_of(&out), is_error: false },
        Err(e) => BangResult { output: e.to_string(), is_error: true },
    }
}

fn text_of(out: &ToolOutput) -> String {
    out.content
        .iter()
        .filter_map(|c| match c {
            rab_ai::Content::Text { text } => Some(text.as_str()),
            rab_ai::Content::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The context handed to the model for a shared `!cmd`.
pub fn context(command: &str, result: &BangResult) -> String {
    let status = if result.is_error { " (it failed)" } else { "" };
    format!("I ran `{command}` in the shell{status}:\n```\n{}\n```", result.output.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bang_and_double_bang() {
        assert_eq!(parse("!ls -la"), Some(Bang { command: "ls -la".into(), share: true }));
        assert_eq!(
            parse("!! git status"),
            Some(Bang { command: "git status".into(), share: false })
        );
        assert_eq!(parse("!"), None);
        assert_eq!(parse("hello!"), None);
    }
}
