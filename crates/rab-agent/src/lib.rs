//! rab-agent: the agent loop.
//!
//! It owns the loop ([`Agent::run`]), the events it emits ([`AgentEvent`]), the tool
//! traits ([`Tool`] with derived schemas, object-safe [`AgentTool`]), the steering and
//! follow-up [`Queues`], hooks around tool calls ([`ToolHook`]), parallel and sequential
//! tool runs, and cancellation. It must not touch the file system, the environment,
//! configuration or HTTP: tools and the provider are handed in.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use rab_agent::{Agent, AgentConfig, AgentEvent, DrainMode};
//! # async fn demo(model: rab_ai::Model) {
//! let config = AgentConfig { model, options: Default::default(), max_turns: Some(20), spend: None,
//!     steering_mode: DrainMode::OneAtATime, follow_up_mode: DrainMode::OneAtATime };
//! let mut agent = Agent::new(Arc::new(rab_ai::Client::new()), config, "Be brief.".into(), vec![]);
//! let mut print = |e: AgentEvent| { if let AgentEvent::TextDelta { delta } = e { print!("{delta}") } Ok(()) };
//! agent.run(vec![rab_ai::Message::user("hi")], &mut print, Default::default()).await;
//! # }
//! ```

#![deny(missing_docs)]

mod agent;
mod compaction;
mod event;
mod hooks;
mod ledger;
mod queue;
mod tool;
mod tool_name;
mod tool_view;

pub use agent::{
    ABORTED, Agent, AgentConfig, CONTINUE_PREFIX, Fallback, LoopDetection, SKIPPED_STEERING,
    error_result,
};
pub use compaction::{
    CompactError, CompactReason, Compacted, Compactor, estimate_context_tokens,
    estimate_text_tokens, message_chars,
};
pub use event::{AgentEvent, EventSink, StopCause};
pub use hooks::{ContextTransform, HookDecision, ToolHook, unsendable};
pub use ledger::{Ledger, Need, OverBudget, Refused, Reservation, Spend, Spending, add_to_model};
pub use queue::{DrainMode, Queues};
pub use tool::{
    AgentTool, BoxFuture, ExecutionMode, RuleKind, Tool, ToolContext, ToolError, ToolFacts,
    ToolLevel, ToolOutput, ToolSource, UpdateSink, schema_of, string_arguments,
};
pub use tool_name::{MAX_TOOL_NAME, portable_tool_name, with_hash as tool_name_with_hash};
pub use tool_view::{MIN_DEFER_BYTES, TOOL_SEARCH, ToolSearch, ToolView};
