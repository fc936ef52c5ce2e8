//! Hooks around every tool call: permission checks, user hooks, extensions. They run in
//! order; the first block wins, rewrites chain.

use rab_ai::{ToolCall, ToolResultMessage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tool::BoxFuture;

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
    /// Before a call runs.
    fn before(&self, call: &ToolCall, cancel: &CancellationToken) -> BoxFuture<'_, HookDecision> {
        let _ = (call, cancel);
        Box::pin(async { HookDecision::Continue })
    }

    /// After a call ran; `Some` replaces the result.
    fn after(
        &self,
        call: &ToolCall,
        result: &ToolResultMessage,
        cancel: &CancellationToken,
    ) -> BoxFuture<'_, Option<ToolResultMessage>> {
        let _ = (call, result, cancel);
        Box::pin(async { None })
    }
}
