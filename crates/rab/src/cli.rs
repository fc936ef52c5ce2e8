//! The command line. This contract is fixed: scripts and later features rely on it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

mod manual;
pub use manual::{completions, man_page};

/// rab: a fast, light, safe terminal coding agent.
#[derive(Clone, Debug, Parser)]
#[command(name = "rab", version, about, long_about = None, args_conflicts_with_subcommands = true)]
#[command(after_help = "Examples:
  rab                                         the terminal UI in this folder
  rab \"fix the failing test\"                  the UI, starting on that prompt
  rab -p \"explain src/main.rs\"                answer and exit (print mode)
  git diff | rab -p \"review this\"             piped text goes before the prompt
  rab -c                                      continue this folder's last session
  rab -c -p \"and now add a test\"              …in print mode
  rab -p --output-format json \"summarise\"     one JSON result (scripts, CI)
  rab -p --max-turns 20 --max-budget-usd 1 \"…\" bounded headless run
  rab -p --permission-mode plan \"…\"           read-only: no edits, no commands
  rab --provider ollama --model qwen3-coder   a local model (rab --list-models --provider ollama)
  rab sessions search \"flaky test\"            search every saved session
  rab doctor                                  keys, providers, sandbox, settings in effect
  rab completions zsh > ~/.zfunc/_rab         shell completions (bash, zsh, fish, powershell)
  rab man > ~/.local/share/man/man1/rab.1     the man page")]
pub struct Cli {
    /// Subcommands.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The prompt (words are joined with spaces). Text piped on stdin is prepended.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,

    /// Print mode: run the prompt to completion, print the answer, exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// `rpc`: JSON lines on stdin and stdout for a program driving rab (see docs/rpc.md);
    /// `acp`: an Agent Client Protocol agent for editors (see docs/acp.md); `telegram`,
    /// `serve`: chat channels (see docs/telegram.md).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<RunMode>,

    /// Output of print mode: the answer text, one JSON object at the end, or one JSON
    /// event per line (see docs/stream-json.md).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// The schema of `--output-format json|stream-json`: rab's own (docs/stream-json.md),
    /// or `claude`: Claude Code's, so scripts written for `claude -p` read it unchanged.
    #[arg(long, value_enum, value_name = "SCHEMA", default_value_t = OutputCompat::Rab)]
    pub output_compat: OutputCompat,

    /// Provider: anthropic, openai, google, openrouter, deepseek, groq, xai, mistral,
    /// ollama, llamacpp, lmstudio, vllm, opencode, opencode_go, or one from models.json.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// Model id, or provider/model. A bare name is matched by prefix.
    #[arg(long, value_name = "NAME", value_parser = Offered(model_ids), hide_possible_values = true)]
    pub model: Option<String>,

    /// Wire format, overriding the provider's.
    #[arg(long, value_name = "API", value_parser = ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"])]
    pub api: Option<String>,

    /// Endpoint root: for Anthropic and Gemini the host (rab appends /v1/messages or
    /// /v1beta/…); for OpenAI-style APIs the base including /v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// API key, overriding the environment and auth.json.
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Extended thinking level.
    #[arg(long, value_name = "LEVEL", value_parser = ["off", "minimal", "low", "medium", "high"])]
    pub thinking: Option<String>,

    /// Send no tools: chat only.
    #[arg(long, conflicts_with = "tools")]
    pub no_tools: bool,

    /// Leave out rab's built-in tools; tools of skills, MCP servers and compiled-in
    /// extensions stay.
    #[arg(long)]
    pub no_builtin_tools: bool,

    /// Load no extensions: no built-in tools, skills, prompt commands, MCP servers or
    /// compiled-in extensions (rab's own commands stay).
    #[arg(long)]
    pub no_extensions: bool,

    /// Only these tools, comma-separated (e.g. read,grep,glob).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,

    /// Run every tool without asking (deny rules still hold); same as
    /// --permission-mode yolo.
    #[arg(long, alias = "dangerously-skip-permissions", conflicts_with = "permission_mode")]
    pub yolo: bool,
    /// Trust this folder for this run: its hooks, MCP servers, allow rules and other
    /// widening settings apply (also RAB_TRUST_PROJECT=1; `rab trust` remembers it).
    #[arg(long)]
    pub trust_project: bool,

    /// Permission mode: default, accept-edits, plan or yolo.
    #[arg(long, value_name = "MODE", value_parser = Offered(permission_modes), hide_possible_values = true)]
    pub permission_mode: Option<String>,

    /// Allow rules, e.g. "bash(git status*)" read "edit(src/**)" (repeatable,
    /// comma-separated).
    #[arg(long, alias = "allowedTools", value_name = "RULES")]
    pub allowed_tools: Vec<String>,

    /// Deny rules, e.g. "bash(rm *)" (repeatable, comma-separated).
    #[arg(long, alias = "disallowedTools", value_name = "RULES")]
    pub disallowed_tools: Vec<String>,

    /// Sandbox: read-only, workspace-write or off.
    #[arg(long, value_name = "MODE", value_parser = Offered(sandbox_modes), hide_possible_values = true)]
    pub sandbox: Option<String>,

    /// Another directory the sandbox lets the tools use (repeatable).
    #[arg(long, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,

    /// Stop after this many model requests (exit code 3).
    #[arg(long, value_name = "N", value_parser = parse_max_turns, allow_negative_numbers = true)]
    pub max_turns: Option<u32>,

    /// Settings profile: a named overlay from "profiles" in the settings files.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Sampling temperature, 0 to 2 (sent only to models that take one: not with
    /// thinking on, nor to models that fix their own sampling).
    #[arg(long, value_name = "T", value_parser = parse_temperature, allow_negative_numbers = true)]
    pub temperature: Option<f32>,

    /// Stop before a request that would take spending past this many US dollars
    /// (exit code 4).
    #[arg(long, value_name = "USD", value_parser = parse_budget, allow_negative_numbers = true)]
    pub max_budget_usd: Option<f64>,

    /// Continue the most recent session in this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// With -c or --session: continue a copy of that session (the original is left as
    /// it is, e.g. while another rab process writes it).
    #[arg(long)]
    pub fork: bool,

    /// Use this session: a file (created if missing), or the id (or a unique start of
    /// it) of a saved session, as `rab sessions list` shows.
    #[arg(long, value_name = "PATH|ID")]
    pub session: Option<PathBuf>,

    /// Do not save the session.
    #[arg(long)]
    pub no_session: bool,

    /// Replace the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,

    /// Append to the system prompt (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Vec<String>,

    /// Do not load AGENTS.md / CLAUDE.md (also -nc).
    #[arg(long)]
    pub no_context_files: bool,

    /// List known models (optionally those matching SEARCH) and exit.
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,

    /// Show thinking, tool activity and retries on stderr. With `--output-compat claude`,
    /// `--output-format json` prints every message and the result as one JSON array, as
    /// Claude Code does.
    #[arg(long)]
    pub verbose: bool,

    /// With `--output-format stream-json --output-compat claude`: each reply's stream as
    /// `stream_event` lines too, as Claude Code's flag does (rab's own stream-json always
    /// has its text and thinking deltas).
    #[arg(long)]
    pub include_partial_messages: bool,

    /// With `--mode acp`: run commands in the editor's terminal when it offers one. They
    /// then run outside rab's sandbox, with the editor's environment.
    #[arg(long)]
    pub editor_terminal: bool,

    /// Use the plain line-oriented REPL instead of the terminal UI.
    #[arg(long)]
    pub repl: bool,

    /// Resume a session: by its id (or a unique start of it), in any mode, as Claude
    /// Code's `--resume ID`; without an id, pick one of this directory's (terminal UI).
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["continue_session", "session"]
    )]
    pub resume: Option<String>,
}

/// Modes chosen by `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// JSON lines on stdin and stdout.
    Rpc,
    /// An Agent Client Protocol agent on stdin and stdout, for editors (`rab acp`).
    Acp,
    /// The Telegram bot (`rab telegram`).
    Telegram,
    /// Every configured chat channel (`rab serve`).
    Serve,
}

/// Print-mode output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer as text.
    Text,
    /// One JSON object when the run ends.
    Json,
    /// One JSON event per line while it runs.
    StreamJson,
}

/// Whose schema print mode's JSON follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputCompat {
    /// rab's own (docs/stream-json.md).
    Rab,
    /// Claude Code's (`claude -p --output-format json|stream-json`).
    Claude,
}

/// Subcommands.
#[derive(Clone, Debug, Subcommand)]
pub enum Command {
    /// Work with saved sessions.
    Sessions {
        /// What to do.
        #[command(subcommand)]
        action: SessionsCommand,
    },
    /// MCP: serve rab's tools to other clients.
    Mcp {
        /// What to do.
        #[command(subcommand)]
        action: McpCommand,
    },
    /// WASM plugins: make one, build it, list what loads here. See docs/plugins.md.
    Plugin {
        /// What to do.
        #[command(subcommand)]
        action: PluginCommand,
    },
    /// Serve the chat channels configured in settings ("channels"), until SIGTERM or
    /// Ctrl+C; session options may follow (`rab serve --model NAME`). See
    /// docs/telegram.md.
    Serve,
    /// The Telegram bot alone; the token from TELEGRAM_BOT_TOKEN or auth.json; session
    /// options may follow (`rab telegram --model NAME`). See docs/telegram.md.
    Telegram,
    /// How to update rab, for the way it was installed, and whether a newer release is
    /// out (asked of GitHub; RAB_UPDATE_URL=off skips it).
    Update,
    /// Trust a folder (default: this one) and the folders under it: its hooks, MCP
    /// servers, allow rules and other widening settings apply from now on.
    Trust {
        /// The folder.
        dir: Option<PathBuf>,
    },
    /// Stop trusting a folder (default: this one): what it brings is ignored again.
    Untrust {
        /// The folder.
        dir: Option<PathBuf>,
    },
    /// What protects and configures this folder: the sandbox and what Landlock enforces
    /// here, whether the folder is trusted, the settings files in effect and what was
    /// ignored in them; then each provider: where its key comes from (never the key) and
    /// whether its endpoint answers.
    Doctor,
    /// Print a completion script for SHELL: `rab completions bash >
    /// ~/.local/share/bash-completion/completions/rab` (README: Install).
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Print rab's man page (roff): `rab man > ~/.local/share/man/man1/rab.1`.
    Man,
    /// Sign in: `rab login openai --chatgpt` uses your ChatGPT plan, `rab login
    /// openrouter --oauth` gets an OpenRouter key (each a browser sign-in); `rab login
    /// PROVIDER` stores an API key read from stdin. Where each credential comes from:
    /// `rab doctor`. See docs/providers.md.
    Login {
        /// The provider.
        provider: String,
        /// Sign in in a browser instead of pasting a key (openai: with a ChatGPT plan;
        /// openrouter: OAuth PKCE).
        #[arg(long, alias = "chatgpt")]
        oauth: bool,
    },
    /// Serve editors over the Agent Client Protocol on stdin and stdout (Zed,
    /// JetBrains IDEs, Neovim); session options may follow (`rab acp --model NAME
    /// --provider NAME`), else the model comes from the settings. See docs/acp.md.
    Acp,
}

/// `rab plugin …`.
#[derive(Clone, Debug, Subcommand)]
pub enum PluginCommand {
    /// Make a new Rust plugin in ./NAME: Cargo.toml, src/lib.rs and the WIT.
    New {
        /// The plugin's name (and its crate's): letters, digits, `-` and `_`.
        name: String,
        /// Where to make it (default: ./NAME).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Use the rab-plugin-sdk crate at this path (a rab checkout's
        /// crates/rab-plugin-sdk) instead of rab's git repository.
        #[arg(long, value_name = "PATH")]
        sdk_path: Option<PathBuf>,
    },
    /// Build the plugin in DIR (default: here) for wasm32-wasip2, in release mode.
    Build {
        /// The plugin's folder (its Cargo.toml).
        dir: Option<PathBuf>,
        /// Then copy the .wasm to ~/.rab/extensions/ (every project).
        #[arg(long, conflicts_with = "install_project")]
        install: bool,
        /// Then copy the .wasm to this project's .rab/extensions/.
        #[arg(long)]
        install_project: bool,
    },
    /// The plugins this folder loads: their tools, grants, state and last error.
    List {
        /// Trust this folder for this listing (its own plugins and grants).
        #[arg(long)]
        trust_project: bool,
    },
}

/// `rab mcp …`.
#[derive(Clone, Debug, Subcommand)]
pub enum McpCommand {
    /// Serve rab's built-in tools over stdio (MCP), under this directory's permission
    /// rules and sandbox. A call that would need a question is refused.
    Serve(ServeArgs),
    /// Add a server: `rab mcp add NAME -- COMMAND [ARGS…]`, or `rab mcp add --transport
    /// http NAME URL`.
    Add(McpAddArgs),
    /// The servers configured here, with the file each comes from.
    List,
    /// One server's configuration.
    Get {
        /// The server.
        name: String,
    },
    /// Remove a server from the file that defines it.
    Remove {
        /// The server.
        name: String,
        /// Which file, when both define it.
        #[arg(short, long, value_enum)]
        scope: Option<McpScope>,
    },
}

/// Which MCP configuration file `rab mcp add` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum McpScope {
    /// `~/.rab/mcp.json`: yours, in every folder.
    User,
    /// The project's `.mcp.json`, shared with Claude Code and the team (it starts once
    /// the folder is trusted).
    Project,
}

/// Options of `rab mcp add`.
#[derive(Clone, Debug, clap::Args)]
pub struct McpAddArgs {
    /// Which file: user (~/.rab/mcp.json) or project (.mcp.json).
    #[arg(short, long, value_enum, default_value = "user")]
    pub scope: McpScope,
    /// stdio (a program), http or sse (a URL).
    #[arg(short, long, default_value = "stdio")]
    pub transport: String,
    /// KEY=VALUE for the server's environment (repeatable).
    #[arg(short, long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// "Name: value" header for an http server (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub header: Vec<String>,
    /// The server's name (its tools are mcp__NAME__TOOL).
    pub name: String,
    /// The command and its arguments, or the URL.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub target: Vec<String>,
}

/// Options of `rab mcp serve` (the session options do not apply to it).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ServeArgs {
    /// Run every tool without asking (deny rules still hold).
    #[arg(long, alias = "dangerously-skip-permissions")]
    pub yolo: bool,
    /// Permission mode: default, accept-edits, plan or yolo.
    #[arg(long, value_name = "MODE", value_parser = Offered(permission_modes), hide_possible_values = true)]
    pub permission_mode: Option<String>,
    /// Allow rules, e.g. "bash(git status*)" (repeatable, comma-separated).
    #[arg(long, value_name = "RULES")]
    pub allowed_tools: Vec<String>,
    /// Deny rules, e.g. "bash(rm *)" (repeatable, comma-separated).
    #[arg(long, value_name = "RULES")]
    pub disallowed_tools: Vec<String>,
    /// Sandbox: read-only, workspace-write or off.
    #[arg(long, value_name = "MODE", value_parser = Offered(sandbox_modes), hide_possible_values = true)]
    pub sandbox: Option<String>,
    /// Another directory the sandbox lets the tools use (repeatable).
    #[arg(long, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Trust this folder for this run (its allow rules, hooks and widening settings).
    #[arg(long)]
    pub trust_project: bool,
}

impl ServeArgs {
    /// A command line carrying these options (what the permission setup reads).
    pub fn to_cli(&self) -> Cli {
        let mut cli = Cli::parse_default();
        cli.yolo = self.yolo;
        cli.permission_mode = self.permission_mode.clone();
        cli.allowed_tools = self.allowed_tools.clone();
        cli.disallowed_tools = self.disallowed_tools.clone();
        cli.sandbox = self.sandbox.clone();
        cli.add_dir = self.add_dir.clone();
        cli.trust_project = self.trust_project;
        cli
    }
}

/// `rab sessions …`.
#[derive(Clone, Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions of this directory, newest first.
    List {
        /// List the sessions of every directory.
        #[arg(long)]
        all: bool,
    },
    /// Search every session (all directories) for text.
    Search {
        /// Words to find.
        #[arg(required = true)]
        query: Vec<String>,
        /// Most results to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print results as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Rewind a session's files and conversation to an earlier point (docs/sessions.md).
    Rewind {
        /// Session id (or a unique prefix), or the path of a session file.
        session: String,
        /// The point: N for the end of the N-th prompt's turn (0: before the first), or an
        /// entry id (or a unique prefix of one).
        #[arg(required_unless_present = "undo")]
        entry: Option<String>,
        /// Only the files (the conversation goes on from where it is).
        #[arg(long, conflicts_with = "conversation")]
        files: bool,
        /// Only the conversation (the files stay as they are).
        #[arg(long)]
        conversation: bool,
        /// Undo the last rewind: its files back to what they held before it.
        #[arg(long, conflicts_with_all = ["entry", "files", "conversation"])]
        undo: bool,
        /// Also overwrite files someone else changed since rab's last change to them.
        #[arg(long)]
        force: bool,
    },
    /// Import Claude Code or pi sessions as rab sessions (again: nothing is duplicated).
    Import {
        /// Whose sessions.
        #[arg(value_enum)]
        from: ImportSource,
        /// A session file or a folder of them (default: ~/.claude/projects or
        /// ~/.pi/agent/sessions).
        path: Option<PathBuf>,
    },
    /// Export a session as HTML, Markdown or JSON.
    Export {
        /// Session id (or a unique prefix), or the path of a session file.
        session: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportKind::Html)]
        format: ExportKind,
        /// Write to this file (default: stdout).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Agents whose sessions `rab sessions import` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportSource {
    /// Claude Code (`~/.claude/projects`).
    Claude,
    /// pi (`~/.pi/agent/sessions`).
    Pi,
}

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportKind {
    /// A self-contained HTML page.
    Html,
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// `--max-turns`: a whole number of model requests, at least 1.
fn parse_max_turns(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("0 would stop before the first request; give 1 or more, or leave \
                      --max-turns out for no limit"
            .to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("expected a whole number of model requests (1 or more), got {s:?}")),
    }
}

/// `--temperature`: 0 to 2.
fn parse_temperature(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!("expected a number from 0 to 2 (e.g. 0.2), got {s:?}")),
    }
}

/// `--max-budget-usd`: a positive amount of US dollars.
fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!(
            "expected an amount above 0 in US dollars (e.g. 0.50), got {s:?}; leave \
             --max-budget-usd out for no limit"
        )),
        Err(_) => Err(format!("expected an amount in US dollars (e.g. 0.50), got {s:?}")),
    }
}

/// The names of rab's (shown) subcommands, for "did you mean". Written out rather than
/// read from clap: building the command line's whole description a second time on
/// every short prompt cost more than the rest of the check (a test keeps them equal).
pub const SUBCOMMANDS: [&str; 13] = [
    "sessions",
    "mcp",
    "plugin",
    "serve",
    "telegram",
    "update",
    "trust",
    "untrust",
    "doctor",
    "completions",
    "man",
    "login",
    "acp",
];

/// The names of rab's subcommands (for "did you mean").
pub fn subcommand_names() -> Vec<String> {
    SUBCOMMANDS.iter().map(|s| (*s).to_owned()).collect()
}

/// Whether `path` reads as a session's id (or the start of one) rather than a file: one
/// plain name, without a folder or the `.jsonl` a session file has.
fn is_session_id(path: &std::path::Path) -> bool {
    let text = path.to_string_lossy();
    !text.is_empty()
        && !text.contains(['/', '\\'])
        && !text.ends_with(".jsonl")
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A free value whose usual choices are offered to shell completion, while rab checks
/// what was given itself (so Claude Code's `acceptEdits` still passes, and a mistake gets
/// rab's own message). The choices are only made when a completion script is.
#[derive(Clone)]
struct Offered(fn() -> Vec<String>);

impl clap::builder::TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(clap::builder::PossibleValue::new)))
    }
}

fn permission_modes() -> Vec<String> {
    ["default", "accept-edits", "plan", "yolo"].map(String::from).to_vec()
}

fn sandbox_modes() -> Vec<String> {
    ["workspace-write", "read-only", "off"].map(String::from).to_vec()
}

/// The built-in models' ids, each once.
fn model_ids() -> Vec<String> {
    let mut ids: Vec<String> =
        rab_ai::Registry::builtin().models().iter().map(|m| m.id.clone()).collect();
    ids.sort();
    ids.dedup();
    ids
}

impl Cli {
    /// A command line with every option at its default (to resolve `/model NAME`).
    pub fn parse_default() -> Cli {
        Cli::parse_from(["rab"])
    }
}

/// Parses the process arguments, accepting `-nc` for `--no-context-files`.
pub fn parse() -> Result<Cli, clap::Error> {
    parse_args(std::env::args_os().collect())
}

/// Parses `args` (the program name first) as the process arguments are parsed.
pub fn parse_args(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    let after_dashes = args.iter().any(|a| a == "--");
    let mut cli = Cli::try_parse_from(normalise(args))?;
    // `rab --model X acp`: options before the mode's name (as an editor's settings may
    // put them) name the mode, not a one-word prompt. `rab -p acp` and `rab -- acp`
    // stay prompts.
    if cli.command.is_none() && cli.mode.is_none() && !cli.print && !after_dashes {
        let mode = match cli.prompt.as_slice() {
            [word] if word == "acp" => Some(RunMode::Acp),
            [word] if word == "telegram" => Some(RunMode::Telegram),
            [word] if word == "serve" => Some(RunMode::Serve),
            _ => None,
        };
        if mode.is_some() {
            cli.mode = mode;
            cli.prompt.clear();
        }
    }
    Ok(cli)
}

/// `-nc` as `--no-context-files`; `rab acp …`, `rab telegram …` and `rab serve …` as
/// `rab --mode acp …`, so the session options (`--model`, `--provider`, …) may follow
/// them as they follow every mode.
fn normalise(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| if a == "-nc" { "--no-context-files".into() } else { a })
        .collect();
    if let Some(first) = args.get(1).cloned()
        && (first == "telegram" || first == "serve" || first == "acp")
    {
        args.splice(1..2, ["--mode".into(), first]);
    }
    args
}

impl Cli {
    /// What the runtime is built from, as this command line says. `trusted` is decided
    /// by the caller (it may ask).
    pub fn options(
        &self,
        env: rab_config::Env,
        paths: rab_config::Paths,
        cwd: PathBuf,
        trusted: bool,
    ) -> rab_core::setup::RuntimeOptions {
        use rab_core::setup::{
            ModelChoice, PromptChoice, RuntimeOptions, SafetyChoice, ToolChoice,
        };
        RuntimeOptions {
            trusted,
            sandbox_helper: std::env::current_exe().ok(),
            model: ModelChoice {
                provider: self.provider.clone(),
                model: self.model.clone(),
                api: self.api.clone(),
                base_url: self.base_url.clone(),
                api_key: self.api_key.clone(),
                thinking: self.thinking.clone(),
                temperature: self.temperature,
                allow_missing_key: false,
            },
            tools: ToolChoice {
                no_tools: self.no_tools,
                no_builtin_tools: self.no_builtin_tools,
                no_extensions: self.no_extensions,
                only: self.tools.clone(),
            },
            safety: SafetyChoice {
                yolo: self.yolo,
                permission_mode: self.permission_mode.clone(),
                allowed_tools: self.allowed_tools.clone(),
                disallowed_tools: self.disallowed_tools.clone(),
                sandbox: self.sandbox.clone(),
                add_dirs: self.add_dir.clone(),
                ..SafetyChoice::default()
            },
            prompt: PromptChoice {
                system_prompt: self.system_prompt.clone(),
                append_system_prompt: self.append_system_prompt.clone(),
                no_context_files: self.no_context_files,
            },
            max_turns: self.max_turns,
            max_budget_usd: self.max_budget_usd,
            profile: self.profile.clone(),
            ..RuntimeOptions::new(env, paths, cwd)
        }
    }

    /// Which tape the session records to.
    /// The session chosen: `--session` and `--resume` given an id are looked up among
    /// the saved sessions under `sessions_root` (a `--session` value that is not a file
    /// and names no session is an error, not a new file named like it in the project).
    pub fn tape(
        &self,
        sessions_root: &std::path::Path,
    ) -> Result<rab_core::setup::TapeChoice, String> {
        let by_id = |key: &str| crate::sessions::find(sessions_root, key);
        let session = match (&self.session, self.resume.as_deref()) {
            (_, Some(id)) if !id.is_empty() => Some(by_id(id)?),
            (Some(path), _) if !path.exists() && is_session_id(path) => {
                let key = path.to_string_lossy();
                Some(by_id(&key).map_err(|e| {
                    format!("{e}; to start a new session file, give a path (./{key}.jsonl)")
                })?)
            }
            (session, _) => session.clone(),
        };
        Ok(rab_core::setup::TapeChoice {
            no_session: self.no_session,
            continue_session: self.continue_session,
            session,
            fork: self.fork,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        parse_args(args.iter().map(Into::into).collect()).unwrap()
    }

    #[test]
    fn a_modes_name_takes_the_session_options_before_or_after_it() {
        let after = parse(&["rab", "acp", "--model", "m1", "--provider", "anthropic"]);
        assert_eq!(after.mode, Some(RunMode::Acp));
        assert_eq!(after.model.as_deref(), Some("m1"));
        assert_eq!(after.provider.as_deref(), Some("anthropic"));
        let before = parse(&["rab", "--model", "m1", "acp"]);
        assert_eq!((before.mode, before.prompt.len()), (Some(RunMode::Acp), 0));
        assert_eq!(before.model.as_deref(), Some("m1"));
        assert_eq!(parse(&["rab", "--model", "m1", "telegram"]).mode, Some(RunMode::Telegram));
        // A prompt of that one word is still a prompt where it is clearly one.
        assert_eq!(parse(&["rab", "-p", "acp"]).prompt, vec!["acp".to_owned()]);
        assert_eq!(parse(&["rab", "--model", "m1", "--", "acp"]).prompt, vec!["acp".to_owned()]);
        assert_eq!(parse(&["rab", "acp", "please"]).mode, Some(RunMode::Acp));
        assert_eq!(parse(&["rab", "explain", "acp"]).mode, None);
    }

    /// The written-out subcommand names are clap's, every one shown and no more.
    #[test]
    fn subcommands_match_the_command_line() {
        use clap::CommandFactory;
        let from_clap: Vec<String> = Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_owned())
            .collect();
        assert_eq!(from_clap, subcommand_names());
    }
}
