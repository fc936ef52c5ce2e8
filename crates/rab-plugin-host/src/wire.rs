//! The protocol between rab and its plugin helper (`rab-plugins serve`): one JSON
//! object per line each way. rab sends [`Request`]s; the helper answers each call with
//! a [`Message::Done`] of the same id, and sends a [`Message::State`] snapshot at start
//! and after every load or reload. Keeping WebAssembly in the helper keeps its engine
//! and compiler out of the `rab` binary and out of sessions without plugins.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What rab asks of the helper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The first line: whose plugins to load, and whether to reload them when their
    /// files change.
    Open {
        /// rab's home (`~/.rab`): global plugins, settings and the compile cache.
        home: String,
        /// The working directory: the project's plugins and settings.
        cwd: String,
        /// Whether the project's own plugins may load.
        trusted: bool,
        /// The names of rab's own tools: a plugin's tool of such a name is left out.
        reserved: Vec<String>,
        /// Reload when plugin or settings files change.
        watch: bool,
    },
    /// Runs a plugin's tool.
    Call {
        /// Chosen by rab; the answer carries it.
        id: u64,
        /// The plugin.
        plugin: String,
        /// Its tool.
        tool: String,
        /// The model's call id.
        call_id: String,
        /// The arguments, as JSON text.
        args: String,
    },
    /// Interrupts call `id` (the plugin's code stops at its next epoch tick).
    Stop {
        /// The call.
        id: u64,
    },
    /// Runs a plugin's slash command.
    Command {
        /// Chosen by rab; the answer carries it.
        id: u64,
        /// The plugin.
        plugin: String,
        /// The command's name.
        name: String,
        /// What followed the command.
        args: String,
    },
    /// Loads every plugin again (`/reload-plugins`); answers with the changes.
    Reload {
        /// Chosen by rab; the answer carries it.
        id: u64,
    },
}

/// What the helper tells rab.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// The plugins as they are now.
    State(Snapshot),
    /// The end of a call, command or reload.
    Done {
        /// The request's id.
        id: u64,
        /// Its text, or why it failed.
        result: Result<String, String>,
    },
}

/// The plugins of a session as the helper sees them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Whether the first load is still running.
    pub loading: bool,
    /// The tools offered (rab's names and clashes between plugins already left out).
    pub tools: Vec<Tool>,
    /// The plugins' slash commands.
    pub commands: Vec<SlashCommand>,
    /// Each plugin's state, and those removed while the session ran.
    pub statuses: Vec<Status>,
    /// The plugins in words (`/plugins`, `rab plugin list`).
    pub describe: String,
    /// What a person should hear of: plugins that did not load, grants left out, a
    /// watcher that could not start.
    pub problems: Vec<String>,
}

/// One tool of a plugin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The plugin.
    pub plugin: String,
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its argument schema.
    pub parameters: Value,
    /// The plugin's label for it, when that says more than the name.
    pub label: Option<String>,
    /// The level the plugin declares (`read-only`, `write`, `execute`, …).
    pub level: String,
}

/// One slash command of a plugin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlashCommand {
    /// The plugin.
    pub plugin: String,
    /// The command's name.
    pub name: String,
    /// What it does.
    pub description: String,
}

/// One plugin's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The plugin's name (the file's when it did not load).
    pub name: String,
    /// `ready`, `crashed`, `failed` or `removed`.
    pub state: String,
    /// Why, for `crashed` and `failed`.
    pub why: Option<String>,
    /// How many tools it offers.
    pub tools: usize,
    /// How many times it was loaded.
    pub generation: u64,
}
