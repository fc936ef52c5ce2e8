#![deny(missing_docs)]

//! rab-core: what a session is, independent of how it is shown.
//!
//! It owns [`AgentSession`] (agent + tape + subscribers, recording every message before
//! the loop acts on it), the system prompt builder with the `AGENTS.md`/`CLAUDE.md`
//! walk, extensions and commands ([`extension`]), skills and prompt commands,
//! compaction, permissions ([`permissions`], the gate and the shell reader), hooks,
//! sub-agents ([`task`]), cron, the inbox and the secret firewall. It must not render or
//! print anything.
//!
//! Where to start when embedding: [`setup::Setup::new`] builds everything a session
//! needs from plain [`setup::RuntimeOptions`] (model, tools, safety, skills, MCP through
//! an [`setup::ExtensionFactory`]), [`setup::Setup::session`] makes a session over a
//! tape, and [`runtime::start`] runs it behind typed [`runtime::Op`]s and one stream of
//! [`runtime::Event`]s, questions included — what rab's own front ends do. Underneath,
//! [`AgentSession`] drives a conversation over a
//! `rab_agent::Agent` and records it on a `rab_session::Tape`; [`extension::Extensions`]
//! collects tools and commands; [`permissions::Policy`] and the gate decide what a tool
//! call may do. `examples/embed.rs` builds a session with a custom tool and a custom
//! event sink and runs one prompt (offline with `--fake`):
//! `cargo run -p rab-core --example embed -- --fake`.

pub mod assistant_commands;
pub mod checkpoint;
pub mod commands;
pub mod extension;
pub mod init;
pub mod input;
pub mod memory;
pub mod mentions;
mod prompt;
pub mod prompt_commands;
pub mod prompt_files;
pub mod rewind;
pub mod runtime;
pub mod safety;
mod session;
pub mod setup;
pub mod shell_line;
pub mod signin;
pub mod skills;
pub mod tools;

use safety::{gate, shell_scan};
pub use safety::{hooks, permissions, rule_list, secrets};
use session::{compaction, ops as session_ops};
use tools::plan_tools;
pub use tools::{ask_user, config_tool, cron, inbox, task, tool_catalog};

pub use compaction::{
    MAX_FAILURES, ModelCompactor, cut_point, newer_half, sliding_window, transcript,
};
pub use extension::{
    Command, CommandContext, CommandHandler, CommandOutcome, CommandSource, Completion, Extension,
    Extensions, Lifecycle, PromptRequest, ServiceKind, ServiceState, ServiceStatus, Services,
    command,
};
pub use gate::{
    Approval, ApprovalKind, ApprovalRequest, Approver, Denial, Gate, MAX_DENIALS, ModeSwitch,
};
pub use plan_tools::{EnterPlanMode, ExitPlanMode, plan_tools};
pub use prompt::{
    ContextFile, DEFAULT_SYSTEM_PROMPT, INSTRUCTION_FILES, PromptSources, build_system_prompt,
    context_files, prompt_update,
};
pub use session::{AgentSession, LISTED_REQUESTS, Resumed, Totals, TurnCost};
pub use session_ops::TreeItem;
pub use tool_catalog::ToolCatalog;
