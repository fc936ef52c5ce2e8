//! MCP in rab: the configured servers, started in the background with the launch
//! (they never hold up the UI; print mode waits for them before its one request), and
//! `rab mcp serve`, which offers rab's own tools to other MCP clients.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rab_agent::{AgentTool, ToolHook};
use rab_config::{Env, Paths};

use rab_core::setup::{ExtensionFactory, FactoryContext, SetupError};

use crate::cli::Cli;

/// The project's configuration files: its `.rab/mcp.json` and Claude Code's `.mcp.json`.
/// Their servers are programs a checkout brings: they start only in a trusted folder.
pub fn project_config_files(cwd: &Path) -> Vec<PathBuf> {
    vec![cwd.join(".rab/mcp.json"), cwd.join(".mcp.json")]
}

/// The configuration files, the first definition of a name winning: the project's
/// (when `trusted`), then `~/.rab/mcp.json`.
pub fn config_files(cwd: &Path, rab_home: &Path, trusted: bool) -> Vec<PathBuf> {
    let mut files = if trusted { project_config_files(cwd) } else { Vec::new() };
    files.push(rab_home.join("mcp.json"));
    files
}

/// The servers a project's files define, `file: MCP servers a, b` (for saying what an
/// untrusted folder would start).
pub fn project_servers(cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for file in project_config_files(cwd) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        // Nothing is expanded from the environment: only the names are wanted.
        let Ok(servers) = rab_mcp::config::parse(&text, &file, &|_| None) else {
            out.push(format!("{}: MCP servers (the file has errors)", file.display()));
            continue;
        };
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        if !names.is_empty() {
            // Each with what it would run or reach.
            let what: Vec<String> = servers
                .iter()
                .map(|s| match &s.transport {
                    rab_mcp::config::Transport::Stdio { command, args, .. } => {
                        let line: Vec<String> =
                            std::iter::once(command).chain(args).map(|a| quoted(a)).collect();
                        format!("{} runs `{}`", s.name, line.join(" "))
                    }
                    rab_mcp::config::Transport::Http { url, .. } => {
                        format!("{} connects to {url}", s.name)
                    }
                })
                .collect();
            out.push(format!(
                "{}: MCP servers {} ({})",
                file.display(),
                names.join(", "),
                what.join("; ")
            ));
        }
    }
    out
}

/// `word` as a shell would need it written: as is when plain, else in single quotes.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// Starts the configured servers (in the background, on the current runtime) and
/// wraps them as an extension, at start-up and on every reload. A malformed file stops
/// start-up, naming it.
#[derive(Default)]
pub struct Servers {
    /// Servers given by the front end (an editor's), before the configured ones.
    given: Vec<rab_mcp::config::ServerConfig>,
}

impl Servers {
    /// The configured servers and `given` (which win a name both define).
    pub fn with(given: Vec<rab_mcp::config::ServerConfig>) -> Self {
        Self { given }
    }
}

impl ExtensionFactory for Servers {
    fn build(&self, cx: FactoryContext<'_>) -> Result<Arc<dyn rab_core::Extension>, SetupError> {
        let lookup = |name: &str| cx.env.get(name).map(str::to_owned);
        let files = config_files(cx.cwd, cx.paths.home(), cx.trusted);
        let configured = rab_mcp::config::load(&files, &lookup, cx.warnings)
            .map_err(|e| SetupError::usage(e.to_string()))?;
        let mut servers = self.given.clone();
        servers.extend(
            configured.into_iter().filter(|c| !self.given.iter().any(|g| g.name == c.name)),
        );
        let mut options = rab_mcp::StartOptions::new(cx.sandbox.clone(), cx.cwd.to_path_buf());
        // Claude Code's variables, in milliseconds: MCP_TIMEOUT for start-up,
        // MCP_TOOL_TIMEOUT for one tool call; a server's own `timeout`/`toolTimeout`
        // win.
        let mut millis = |name: &str| {
            let value = cx.env.get(name)?;
            match value.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => Some(std::time::Duration::from_millis(ms)),
                _ => {
                    cx.warnings.push(format!(
                        "{name}={value:?} is not a whole number of milliseconds; ignored"
                    ));
                    None
                }
            }
        };
        if let Some(t) = millis("MCP_TIMEOUT") {
            options.startup_timeout = t;
        }
        if let Some(t) = millis("MCP_TOOL_TIMEOUT") {
            options.tool_timeout = t;
        }
        Ok(Arc::new(rab_mcp::McpExtension::new(rab_mcp::McpManager::start(servers, options))))
    }
}

/// The servers of a set-up, when it has any.
pub fn manager(setup: &rab_core::setup::Setup) -> Option<&rab_mcp::McpManager> {
    setup.extension::<rab_mcp::McpExtension>().map(rab_mcp::McpExtension::manager)
}

/// Waits (bounded) until every server is ready or has failed, then reports failures on
/// stderr: print mode sends one request, and it should carry the servers' tools.
pub async fn wait_for_servers(manager: &rab_mcp::McpManager) {
    if manager.servers().is_empty() {
        return;
    }
    // Not in silence: after a moment, say which servers the run waits for and how long.
    let patience = std::time::Duration::from_secs(2);
    if !manager.wait_ready(patience).await {
        let starting: Vec<String> = manager
            .servers()
            .iter()
            .filter(|s| matches!(s.state, rab_mcp::ServerState::Starting))
            .map(|s| s.name.clone())
            .collect();
        eprintln!(
            "rab: waiting for MCP server{} {} to start (each has its startup timeout, 30 s \
             unless \"timeout\" in its config says otherwise; --no-extensions runs without \
             them)",
            if starting.len() == 1 { "" } else { "s" },
            starting.join(", ")
        );
        manager.wait_ready(std::time::Duration::from_secs(60) - patience).await;
    }
    for s in manager.servers() {
        match &s.state {
            rab_mcp::ServerState::Failed(why) | rab_mcp::ServerState::Crashed(why) => {
                eprintln!("rab: MCP server {} {}: {why}", s.name, s.state.label());
            }
            rab_mcp::ServerState::Starting => {
                eprintln!("rab: MCP server {} is still starting; going on without it", s.name);
            }
            rab_mcp::ServerState::Ready | rab_mcp::ServerState::Disabled => {}
        }
    }
}

/// The tools `rab mcp serve` offers.
const SERVED: [&str; 8] = ["read", "write", "edit", "bash", "grep", "glob", "ls", "web_fetch"];

/// `rab mcp serve`: rab's file, shell and search tools over stdio, each call through
/// this directory's permission rules, hooks, sandbox and secret firewall. Nobody can be
/// asked, so a call that would ask is refused (allow it with rules or
/// `--permission-mode`).
pub fn serve(cli: &Cli, env: Env, paths: Paths, cwd: PathBuf) -> u8 {
    // Nobody can be asked: the folder's widening settings apply only if it is trusted.
    let trusted = match crate::trust::decide(cli, &env, &paths, &cwd) {
        Ok(t) => t.trusted,
        Err(e) => return crate::fail(crate::EXIT_USAGE, &e),
    };
    if !trusted {
        let offers = crate::trust::offers(&env, &paths, &cwd);
        if !offers.is_empty() {
            crate::trust::report(&cwd, &offers);
        }
    }
    let loaded = match rab_config::load_settings(&paths.settings_file(), &cwd, &env, trusted) {
        Ok(l) => l,
        Err(e) => return crate::fail(crate::EXIT_USAGE, &e.to_string()),
    };
    let mut warnings = loaded.warnings.clone();
    let known = rab_core::tool_catalog::builtin(&cwd);
    let options = cli.options(env.clone(), paths.clone(), cwd.clone(), trusted);
    let safety = match rab_core::setup::safety::build(
        &options.safety,
        options.sandbox_helper.clone(),
        &loaded.settings,
        &loaded.safety,
        &env,
        &paths,
        &cwd,
        &known,
        None,
        &mut warnings,
    ) {
        Ok(s) => s,
        Err(e) => return crate::fail(e.code, &e.message),
    };
    for w in &warnings {
        eprintln!("rab: warning: {w}");
    }
    safety.approver.install(Arc::new(HeadlessNote));
    let workspace = rab_core::setup::tools::workspace(&env, &cwd, safety.sandbox)
        .with_read_filter(safety.gate.read_filter());
    let tools: Vec<Arc<dyn AgentTool>> = rab_tools::builtin_in(&workspace)
        .into_iter()
        .filter(|t| SERVED.contains(&t.name().as_str()))
        .collect();
    let hooks: Vec<Arc<dyn ToolHook>> = vec![safety.gate.clone()];
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot start the runtime: {e}"));
        }
    };
    let served =
        runtime.block_on(rab_mcp::serve_stdio(tools, hooks, "rab", env!("CARGO_PKG_VERSION")));
    match served {
        Ok(()) => crate::EXIT_OK,
        Err(e) => crate::fail(crate::EXIT_PROVIDER, &e.to_string()),
    }
}

/// The approver of headless runs (`rab mcp serve`): nobody can be asked, so
/// the call is refused, and a call that needed permission is named on stderr with the
/// rule that would allow it (a question or a plan is the model's to settle: it is told
/// so).
pub(crate) struct HeadlessNote;

impl rab_core::Approver for HeadlessNote {
    fn approve<'a>(
        &'a self,
        request: rab_core::ApprovalRequest,
        _cancel: &'a tokio_util::sync::CancellationToken,
    ) -> rab_agent::BoxFuture<'a, rab_core::Approval> {
        if request.kind == rab_core::ApprovalKind::Permission {
            let how = match &request.advice {
                Some(advice) => advice.clone(),
                None => format!("allow it with --allowed-tools '{}' or --yolo", request.rule),
            };
            eprintln!(
                "rab: denied {} ({}); {}",
                crate::term::safe(&request.tool),
                crate::term::safe(&request.reason),
                crate::term::safe(&how)
            );
        }
        Box::pin(async { rab_core::Approval::Unavailable })
    }
}
