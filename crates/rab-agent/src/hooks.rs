//! Hooks around every tool call: permission checks, user hooks, extensions. They run in
//! order; the first block wins, rewrites chain.

use rab_ai::{ToolCall, ToolResultMessage};
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
