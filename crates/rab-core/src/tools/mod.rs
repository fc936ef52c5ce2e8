//! The tools that need the session, and how a session's tool set is assembled: `task`
//! with sub-agents, plan mode, `ask_user`, `config`, `send_message`, the cron tools, and
//! the catalog of what every tool declares.

pub mod ask_user;
pub mod config_tool;
pub mod cron;
pub mod inbox;
pub(crate) mod plan_tools;
pub mod task;
pub mod tool_catalog;
