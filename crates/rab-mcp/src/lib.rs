//! rab-mcp: rab's Model Context Protocol support.
//!
//! It owns the MCP client — configuration ([`config`]), starting and following servers
//! over stdio or streamable HTTP ([`McpManager`]), and offering their tools, resources
//! and prompts to the agent — and `rab mcp serve` ([`mod@serve`]), which offers rab's tools
//! to other MCP clients. It plugs into rab-core as an extension (so rab-core cannot
//! name its types: what the core needs from it goes through the `Extension` trait). It
//! must not render anything or read the environment itself: the caller passes files,
//! an env lookup and a sandbox. It is built only with rab's `mcp` feature.
//!
//! ```no_run
//! # async fn example() -> Result<(), rab_mcp::Error> {
//! use std::path::PathBuf;
//! use std::time::Duration;
//! use rab_mcp::{McpManager, StartOptions, config};
//!
//! let mut warnings = Vec::new();
//! let files = [PathBuf::from(".rab/mcp.json"), PathBuf::from(".mcp.json")];
//! let servers = config::load(&files, &|name| std::env::var(name).ok(), &mut warnings)?;
//! let options = StartOptions::new(rab_tools::Sandbox::default(), PathBuf::from("."));
//! let manager = McpManager::start(servers, options); // returns at once
//! manager.wait_ready(Duration::from_secs(30)).await; // print mode waits; the TUI does not
//! let tools = manager.tool_source(); // give this to the agent
//! # let _ = tools;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod config;
mod connect;
mod error;
mod extension;
mod limit;
mod manager;
mod prompts;
mod resources;
pub mod serve;
#[doc(hidden)]
pub mod test_support;
mod tools;

pub use config::{ServerConfig, Transport};
pub use error::Error;
pub use extension::McpExtension;
pub use limit::MAX_MESSAGE;
pub use manager::{
    DEFAULT_TOOL_TIMEOUT, McpManager, PromptArgumentInfo, PromptInfo, ServerState, ServerStatus,
    StartOptions,
};
pub use prompts::usage as prompt_usage;
pub use serve::{serve, serve_stdio};
pub use tools::tool_name;
