//! The crate's error type. Every message names the file or server concerned and says
//! what to do about it.

use std::path::PathBuf;

/// What went wrong loading MCP configuration, talking to a server, or serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration file exists but could not be read.
    #[error("{}: cannot read MCP configuration: {source}; check the file's permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A configuration file is not valid JSON.
    #[error(
        "{}: invalid JSON at line {line}, column {column}: {message}; fix the syntax \
         (the file holds {{\"mcpServers\": {{\"name\": {{\"command\": …}}}}}})",
        path.display()
    )]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A configuration file has the wrong shape at the top level.
    #[error("{}: {problem}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// A server's entry has a bad or missing field.
    #[error("{}: MCP server `{server}`: field `{field}` {problem}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// The field at fault.
        field: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// No configured server has this name.
    #[error("no MCP server named `{name}`; configured servers: {known}")]
    UnknownServer {
        /// The name asked for.
        name: String,
        /// The configured names, comma-separated (or `none`).
        known: String,
    },
    /// The server exists but cannot take requests now.
    #[error("MCP server `{server}` is not ready ({state}); {advice}")]
    NotReady {
        /// The server.
        server: String,
        /// Its state, as shown by `/mcp`.
        state: String,
        /// What to do.
        advice: String,
    },
    /// The server has no prompt of this name.
    #[error("MCP server `{server}` has no prompt `{prompt}`; its prompts: {known}")]
    UnknownPrompt {
        /// The server.
        server: String,
        /// The prompt asked for.
        prompt: String,
        /// Its prompts, comma-separated (or `none`).
        known: String,
    },
    /// A required prompt argument was not given.
    #[error(
        "prompt `{prompt}` of MCP server `{server}` needs the argument `{argument}`; usage: {usage}"
    )]
    MissingArgument {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// The missing argument.
        argument: String,
        /// How to call the prompt, e.g. `review <file> [focus]`.
        usage: String,
    },
    /// A request to a server failed.
    #[error("MCP server `{server}`: {message}")]
    Request {
        /// The server.
        server: String,
        /// What failed and what to do.
        message: String,
    },
    /// `rab mcp serve` could not start or stopped abnormally.
    #[error("MCP serve: {0}; check that the client speaks MCP over stdio")]
    Serve(String),
}
