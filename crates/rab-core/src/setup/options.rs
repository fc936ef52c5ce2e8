//! What a [`super::Setup`] is built from: plain values a front end fills in (the binary
//! from its command line, an embedder by hand), so nothing here knows about argument
//! parsing.

use std::path::PathBuf;
use std::sync::Arc;

use rab_config::{Env, Paths};

use super::SetupError;
use crate::Extension;

/// Print mode's turn limit when none is set: enough for real tasks, and a stop for a run
/// in CI that would otherwise go on until the budget or the job's timeout.
pub const HEADLESS_MAX_TURNS: u32 = 100;

/// Everything a runtime is built from.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// The process environment (a snapshot).
    pub env: Env,
    /// rab's home layout.
    pub paths: Paths,
    /// The working directory.
    pub cwd: PathBuf,
    /// Whether what the working directory brings may run code and widen access (its
    /// allow rules, hooks, MCP servers, agents, granting skills). The front end decides,
    /// asking the user if it can.
    pub trusted: bool,
    /// The front end stays (the UI, the REPL, RPC, editors): cron tools are offered,
    /// as their jobs need a process that stays.
    pub keeps_running: bool,
    /// Extensions compiled into the program, loaded after skills and prompt commands.
    pub extensions: Vec<Arc<dyn Extension>>,
    /// Extensions made at start-up (and again on reload) from the options: MCP servers.
    pub factories: Vec<Arc<dyn ExtensionFactory>>,
    /// The program that confines commands (`rab __sandbox`), when the sandbox is on.
    pub sandbox_helper: Option<PathBuf>,
    /// An editor whose files the file tools read and write (rab driven from an editor).
    pub editor_files: Option<Arc<dyn rab_tools::editor_files::EditorFiles>>,
    /// An editor's terminal `bash` runs commands in (outside the sandbox: only when the
    /// user asks for it).
    pub editor_terminal: Option<Arc<dyn rab_tools::editor_files::EditorTerminal>>,
    /// The model.
    pub model: ModelChoice,
    /// Which tools.
    pub tools: ToolChoice,
    /// Permissions and sandbox.
    pub safety: SafetyChoice,
    /// The system prompt.
    pub prompt: PromptChoice,
    /// The most turns a run may take (else the settings').
    pub max_turns: Option<u32>,
    /// The limit when neither the command line nor the settings give one: print mode's
    /// [`HEADLESS_MAX_TURNS`], so a run nobody watches cannot go on for ever.
    pub default_max_turns: Option<u32>,
    /// The most a session may spend, in dollars (else the settings').
    pub max_budget_usd: Option<f64>,
    /// The settings profile to apply over the settings files (`--profile`).
    pub profile: Option<String>,
}

impl RuntimeOptions {
    /// Options with every choice left to the settings files.
    pub fn new(env: Env, paths: Paths, cwd: PathBuf) -> Self {
        Self {
            env,
            paths,
            cwd,
            trusted: false,
            keeps_running: false,
            extensions: Vec::new(),
            factories: Vec::new(),
            sandbox_helper: None,
            editor_files: None,
            editor_terminal: None,
            model: ModelChoice::default(),
            tools: ToolChoice::default(),
            safety: SafetyChoice::default(),
            prompt: PromptChoice::default(),
            max_turns: None,
            default_max_turns: None,
            max_budget_usd: None,
            profile: None,
        }
    }
}

/// The model and its key; unset fields come from the settings.
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    /// Provider name.
    pub provider: Option<String>,
    /// Model id, or provider/model; a bare name is matched by prefix.
    pub model: Option<String>,
    /// Wire format overriding the provider's (`anthropic-messages`, …).
    pub api: Option<String>,
    /// Endpoint root.
    pub base_url: Option<String>,
    /// API key, overriding the environment and auth.json.
    pub api_key: Option<String>,
    /// Thinking level name.
    pub thinking: Option<String>,
    /// Sampling temperature (else the settings').
    pub temperature: Option<f32>,
    /// Start without a key when none is found (the terminal UI, where `/login` adds
    /// one): the model is chosen as usual and the first request says what is missing.
    pub allow_missing_key: bool,
}

/// Which tools the model gets.
#[derive(Clone, Debug, Default)]
pub struct ToolChoice {
    /// No tools at all: chat only.
    pub no_tools: bool,
    /// Leave out rab's built-in tools.
    pub no_builtin_tools: bool,
    /// Load no extensions (no built-in tools, skills, prompt commands, MCP servers or
    /// compiled-in extensions).
    pub no_extensions: bool,
    /// Only these tools.
    pub only: Option<Vec<String>>,
}

/// Permission mode, rules and sandbox given for this run.
#[derive(Clone, Debug, Default)]
pub struct SafetyChoice {
    /// Run every tool without asking (deny rules still hold).
    pub yolo: bool,
    /// default, accept-edits, plan or yolo.
    pub permission_mode: Option<String>,
    /// Allow rules (`a,b(c d)` lists).
    pub allowed_tools: Vec<String>,
    /// Deny rules.
    pub disallowed_tools: Vec<String>,
    /// read-only, workspace-write or off.
    pub sandbox: Option<String>,
    /// More directories the tools may work in (relative to the working directory).
    pub add_dirs: Vec<PathBuf>,
    /// Credentials the front end read for itself (a chat bot's token): no child gets
    /// a variable holding one, and the secret firewall knows them.
    pub credentials: Credentials,
}

/// `(what it is, value)` pairs of credentials; their values never show in `Debug`.
#[derive(Clone, Default)]
pub struct Credentials(pub Vec<(String, String)>);

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(what, _)| what)).finish()
    }
}

/// The system prompt given for this run.
#[derive(Clone, Debug, Default)]
pub struct PromptChoice {
    /// Replaces rab's system prompt.
    pub system_prompt: Option<String>,
    /// Appended to it, each in turn.
    pub append_system_prompt: Vec<String>,
    /// Leave out AGENTS.md / CLAUDE.md.
    pub no_context_files: bool,
}

/// Which tape a session records to.
#[derive(Clone, Debug, Default)]
pub struct TapeChoice {
    /// Keep nothing on disk.
    pub no_session: bool,
    /// Continue the most recent session of the directory.
    pub continue_session: bool,
    /// This session file (created when missing).
    pub session: Option<PathBuf>,
    /// Continue a copy of the session chosen (`-c`, `session`) rather than the session
    /// itself (when another process writes it).
    pub fork: bool,
}

/// What an [`ExtensionFactory`] gets to build from.
pub struct FactoryContext<'a> {
    /// The environment.
    pub env: &'a Env,
    /// rab's home layout.
    pub paths: &'a Paths,
    /// The working directory.
    pub cwd: &'a std::path::Path,
    /// The sandbox the extension's programs run in.
    pub sandbox: &'a rab_tools::Sandbox,
    /// Whether the project's own configuration may be used.
    pub trusted: bool,
    /// Where to say what the user should know.
    pub warnings: &'a mut Vec<String>,
}

/// Makes an extension from the resolved set-up, at start-up and on every reload (MCP
/// servers: the core cannot name their crate, which depends on it).
pub trait ExtensionFactory: Send + Sync {
    /// The extension, or why the configuration is unusable.
    fn build(&self, cx: FactoryContext<'_>) -> Result<Arc<dyn Extension>, SetupError>;
}
