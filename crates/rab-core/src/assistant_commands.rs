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

/// Runs `command` with `bash` as a call of the model's would run: through `gate`
/// (permission rules, hooks) first and the secret firewall after. Returns the output
/// and whether it failed (a refusal counts as failed, its reason as the output).
pub async fn run_gated(
    bash: &dyn AgentTool,
    gate: &Gate,
    command: &str,
    cx: ToolContext,
) -> (String, bool) {
    let mut call = ToolCall {
        id: cx.call_id.clone(),
        name: "bash".into(),
        arguments: json!({"command": command}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    };
    let cancel = cx.cancel.clone();
    match gate.before(&call, bash, &cancel).await {
        HookDecision::Block(reason) => return (reason, true),
        HookDecision::Rewrite(args) => call.arguments = args,
        HookDecision::Continue => {}
    }
    let (text, is_error) = match bash.execute(call.arguments.clone(), cx).await {
        Ok(o) => (Content::join_text(&o.content), false),
        Err(e) => (e.to_string(), true),
    };
    let msg = ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(text)],
        is_error,
    };
    let msg = gate.after(&call, &msg, &cancel).await.unwrap_or(msg);
    (msg.text(), is_error)
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
        let cx = ToolContext {
            call_id: format!("route_{i}"),
            cancel: cancel.clone(),
            updates: rab_agent::UpdateSink::none(),
        };
        let (output, is_error) = run_gated(bash.as_ref(), gate, command, cx).await;
        let status = if is_error { " (failed)" } else { "" };
        out.push_str(&format!("\n\n$ {command}{status}\n```\n{}\n```", output.trim_end()));
    }
    Some(out)
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
