//! Hooks around every tool call: permission checks, user hooks, extensions. They run in
//! order; the first block wins, rewrites chain. And transforms of the context each
//! request sends ([`ContextTransform`]).

use rab_ai::{Message, ToolCall, ToolResultMessage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tool::{AgentTool, BoxFuture};

/// What a before-hook decided.
#[derive(Clone, Debug, PartialEq)]
pub enum HookDecision {
    /// Run the call as is.
    Continue,
    /// Run the call with these arguments instead.
    Rewrite(Value),
    /// Do not run it; the reason goes to the model as the error result.
    Block(String),
}

/// A hook around tool calls. Both methods receive the run's cancellation token and
/// must return promptly once it is cancelled.
pub trait ToolHook: Send + Sync {
    /// Before a call runs. `call` carries the arguments as rewritten by earlier hooks;
    /// `tool` is the tool it will run (its level and preview).
    fn before<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a dyn AgentTool,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        let _ = (call, tool, cancel);
        Box::pin(async { HookDecision::Continue })
    }

    /// After a call ran; `Some` replaces the result. `call` has the arguments it ran with.
    fn after<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a ToolResultMessage,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<ToolResultMessage>> {
        let _ = (call, result, cancel);
        Box::pin(async { None })
    }
}

/// Changes what the model is sent, request by request: prunes old tool output, injects
/// context fetched from elsewhere, rewrites messages. The conversation itself (and the
/// session file) keeps what happened; only the request sees the change. Transforms run
/// in order, each given what the one before it returned.
pub trait ContextTransform: Send + Sync {
    /// The messages to send instead of `messages`, or `None` to send them as they are.
    /// A result that separates a tool call from its result (which every provider
    /// refuses) is not used. `cancel` fires when the run is interrupted.
    fn transform<'a>(
        &'a self,
        messages: &'a [Message],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Message>>>;
}

/// Why `messages` cannot be sent as a conversation: empty, a tool result with no call
/// before it (in the same round), or a call left without its result.
pub fn unsendable(messages: &[Message]) -> Option<String> {
    if messages.is_empty() {
        return Some("no messages are left".to_owned());
    }
    let mut open: Vec<&str> = Vec::new();
    let unanswered = |open: &[&str]| format!("the tool call {} has no result", open[0]);
    for m in messages {
        match m {
            Message::Assistant(a) => {
                if !open.is_empty() {
                    return Some(unanswered(&open));
                }
                open = a.tool_calls().map(|c| c.id.as_str()).collect();
            }
            Message::ToolResult(r) => {
                let Some(i) = open.iter().position(|id| *id == r.tool_call_id) else {
                    return Some(format!(
                        "the tool result for {} has no call before it",
                        r.tool_call_id
                    ));
                };
                open.swap_remove(i);
            }
            Message::User(_) if !open.is_empty() => return Some(unanswered(&open)),
            Message::User(_) | Message::System(_) => {}
        }
    }
    (!open.is_empty()).then(|| unanswered(&open))
}
