//! Assistant routing (CrabClaw's `route_assistant`, opt-in with the setting
//! `routeAssistantCommands`): comma command lines (`,cmd` alone on a line) in the
//! model's final answer run in the shell through the same permission gate, sandbox and
//! secret firewall as its bash calls, and the results go back to it. Off by default:
//! it lets text the model writes run commands without a tool call.

use std::sync::Arc;

use rab_agent::{AgentTool, HookDecision, ToolContext, ToolHook};
use rab_ai::{Content, ToolCall, ToolResultMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::gate::Gate;

/// Most command lines run from one answer.
const MAX_LINES: usize = 5;

/// The comma command lines of `text` (`,,` lines and text after a comma are not).
pub fn command_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(',') && !l.starts_with(",,"))
        .map(|l| l[1..].trim().to_owned())
        .filter(|c| !c.is_empty())
        .take(MAX_LINES)
        .collect()
}

/// Runs the command lines of `text` with `bash` through `gate`; the message for the
/// model, or `None` when there were none.
pub async fn run_lines(
    text: &str,
    bash: &Arc<dyn AgentTool>,
    gate: &Gate,
    cancel: &CancellationToken,
) -> Option<String> {
    let lines = command_lines(text);
    if lines.is_empty() {
        return None;
    }
    let mut out = String::from("Results of the comma commands in your answer:");
    for (i, command) in lines.iter().enumerate() {
        let mut call = ToolCall {
            id: format!("route_{i}"),
            name: "bash".into(),
            arguments: json!({"command": command}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        };
        let result = match gate.before(&call, bash.as_ref(), cancel).await {
            HookDecision::Block(reason) => (reason, true),
            decision => {
                if let HookDecision::Rewrite(args) = decision {
                    call.arguments = args;
                }
                let cx = ToolContext::detached(&call.id);
                let (text, is_error) = match bash.execute(call.arguments.clone(), cx).await {
                    Ok(o) => {
                        (o.content.iter().filter_map(text_of).collect::<Vec<_>>().join("\n"), false)
                    }
                    Err(e) => (e.to_string(), true),
                };
                let msg = ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: vec![Content::text(text)],
                    is_error,
                };
                let msg = gate.after(&call, &msg, cancel).await.unwrap_or(msg);
                (msg.text(), is_error)
            }
        };
        let status = if result.1 { " (failed)" } else { "" };
        out.push_str(&format!("\n\n$ {command}{status}\n```\n{}\n```", result.0.trim_end()));
    }
    Some(out)
}

fn text_of(c: &Content) -> Option<&str> {
    match c {
        Content::Text { text } => Some(text),
        Content::Image { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_comma_lines_of_their_own_are_commands() {
        let text = "Let me check.\n,git status\n  ,ls -la  \nnot ,this\n,,nor this\n,\n";
        assert_eq!(command_lines(text), ["git status", "ls -la"]);
    }
}
