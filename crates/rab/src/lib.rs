//! rab as a library: the whole program, so a custom binary can add compile-time
//! extensions. `rab`'s own `main` is `rab::main_with(Vec::new())`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rab::core::{Extension, command, CommandOutcome};
//!
//! struct Hello;
//! impl Extension for Hello {
//!     fn name(&self) -> &str { "hello" }
//!     fn commands(&self) -> Vec<rab::core::Command> {
//!         vec![command("hello", "Say hello", |args, _| CommandOutcome::Info(format!("hello {args}")))]
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     rab::main_with(vec![Arc::new(Hello)])
//! }
//! ```

/// `println!` that stops quietly when stdout is a closed pipe (`rab sessions list | head
/// -1`): the rest of the output is dropped instead of the process panicking.
macro_rules! outln {
    () => { $crate::term::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::term::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that stops quietly when stdout is a closed pipe, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::term::write_out(format_args!($($arg)*)) };
}

mod acp;
mod channels;
mod cli;
mod doctor;
mod doctor_sandbox;
#[doc(hidden)]
pub mod fuzz;
mod input;
mod interactive;
mod logging;
#[cfg(feature = "mcp")]
mod mcp;
mod mcp_files;
mod plugin_cmd;
#[cfg(feature = "plugins")]
mod plugins;
mod print;
mod print_claude;
mod print_json;
mod repl;
mod rpc;
mod sessions;
mod telegram;
mod term;
mod trust;
mod update;

use std::process::ExitCode;
use std::sync::Arc;

use rab_config::{Env, Paths};

/// The agent loop and tool traits, for extensions.
pub use rab_agent as agent;
/// Messages, content and tool specs.
pub use rab_ai as ai;
/// Sessions, the `Extension` trait and commands.
pub use rab_core as core;

/// The run finished.
pub const EXIT_OK: u8 = 0;
/// The model or provider failed (including a missing key).
pub const EXIT_PROVIDER: u8 = 1;
/// The command line or a config file is wrong.
pub const EXIT_USAGE: u8 = 2;
/// `--max-turns` was reached before the model finished.
pub const EXIT_MAX_TURNS: u8 = 3;
/// The next request would have crossed `--max-budget-usd`.
pub const EXIT_BUDGET: u8 = 4;
/// The model finished, but tool calls were refused (permissions, a hook, nobody to
/// approve): the json result's `permissionDenials` lists them.
pub const EXIT_DENIED: u8 = 5;
/// The model was stopped for repeating itself (the same tool calls reply after reply,
/// or the same text over and over); `loopDetection` in settings tunes or disables it.
pub const EXIT_LOOP: u8 = 6;
/// Print mode: the reply hit the output limit again after rab asked the model to go on.
pub const EXIT_LENGTH: u8 = 7;
/// SIGINT / Ctrl+C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Runs rab with `extensions` added after the built-in ones (a later extension's tool
/// or command of a taken name is left out with a warning).
pub fn main_with(extensions: Vec<Arc<dyn rab_core::Extension>>) -> ExitCode {
    // `rab __sandbox …` is the sandbox helper (and `rab __sandbox-init …` its second
    // stage): confine, then run the program.
    let mut args = std::env::args_os();
    match args.nth(1) {
        Some(a) if a == rab_tools::sandbox::HELPER_ARG => {
            let warn = |w: &str| eprintln!("{w}");
            return match rab_tools::sandbox::run_helper(args.collect(), warn) {
                Ok(exit) => {
                    for note in exit.notes {
                        eprintln!("rab sandbox: {note}");
                    }
                    ExitCode::from(exit.code)
                }
                Err(e) => {
                    eprintln!("rab sandbox: {e}");
                    ExitCode::from(126)
                }
            };
        }
        Some(a) if a == rab_tools::sandbox::INIT_ARG => {
            return match rab_tools::sandbox::run_init(args.collect()) {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    eprintln!("rab sandbox: {e}");
                    ExitCode::from(126)
                }
            };
        }
        _ => {}
    }
    // Before anything holds a key: no same-user process may read this one's memory or
    // environment, and no core dump may hold them.
    if let Err(e) = rab_tools::sandbox::hardening::harden_process() {
        eprintln!("rab: could not harden the process ({e}); continuing");
    }
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let raw: Vec<String> = std::env::args().collect();
            if e.use_stderr()
                && let Some(format) = print_json::format_in_raw_args(&raw)
            {
                print_json::results_on_failure(format);
                print_json::claude_schema(print_json::claude_in_raw_args(&raw));
                let text = e.render().to_string();
                let first = text.lines().next().unwrap_or_default();
                let message = first.strip_prefix("error: ").unwrap_or(first);
                outln!("{}", print_json::failure_line(EXIT_USAGE, message));
            }
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    // A key on the command line is in /proc/<pid>/cmdline for every local user (and for
    // commands, where only Landlock confines them): read, it is hidden there now.
    if cli.api_key.is_some() && !rab_tools::sandbox::hardening::hide_option_value("--api-key") {
        eprintln!(
            "rab: warning: the key given with --api-key may be visible to other users of this \
             machine (ps); set the provider's key variable or store it with /login instead"
        );
    }
    ExitCode::from(run(cli, extensions))
}

fn run(cli: cli::Cli, extensions: Vec<Arc<dyn rab_core::Extension>>) -> u8 {
    let env = Env::from_process();
    if cli.command.is_none()
        && cli.mode.is_none()
        && cli.list_models.is_none()
        && mode(&cli, &env) == Mode::Print
    {
        print_json::results_on_failure(cli.output_format);
        print_json::claude_schema(cli.output_compat == cli::OutputCompat::Claude);
    }
    if cli.include_partial_messages && cli.output_format != cli::OutputFormat::StreamJson {
        return fail(
            EXIT_USAGE,
            "--include-partial-messages needs -p --output-format stream-json (the only output \
             that streams)",
        );
    }
    let paths = match Paths::from_env(&env) {
        Ok(p) => p,
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return fail(EXIT_USAGE, &format!("cannot read the current directory: {e}")),
    };
    logging::init(&env, &paths);
    if let Some(cli::Command::Sessions { action }) = &cli.command {
        let root = paths.sessions_dir();
        return match action {
            cli::SessionsCommand::List { all } => sessions::list(&root, &cwd, *all),
            cli::SessionsCommand::Search { query, limit, json } => {
                sessions::search(&root, paths.home(), &query.join(" "), *limit, *json)
            }
            cli::SessionsCommand::Rewind { session, entry, files, conversation, undo, force } => {
                let what = rab_core::rewind::What {
                    files: !conversation,
                    conversation: !files,
                    force: *force,
                };
                let point = if *undo { None } else { entry.as_deref() };
                sessions::rewind(&root, paths.home(), session, point, what)
            }
            cli::SessionsCommand::Import { from, path } => {
                let home = env.get("HOME").map(std::path::PathBuf::from);
                sessions::import(&root, *from, path.as_deref(), home.as_deref())
            }
            cli::SessionsCommand::Export { session, format, output } => {
                sessions::export(&root, session, *format, output.as_deref())
            }
        };
    }
    match &cli.command {
        Some(cli::Command::Trust { dir }) => {
            return trust::command(&env, &paths, &cwd, dir.as_deref(), true);
        }
        Some(cli::Command::Update) => {
            return update::command(&env);
        }
        Some(cli::Command::Untrust { dir }) => {
            return trust::command(&env, &paths, &cwd, dir.as_deref(), false);
        }
        Some(cli::Command::Doctor) => return doctor::run(&cli, &env, &paths, &cwd),
        Some(cli::Command::Login { provider, oauth }) => {
            return login(provider, *oauth, &env, &paths);
        }
        Some(cli::Command::Completions { shell }) => {
            return write_stdout(&cli::completions(*shell));
        }
        Some(cli::Command::Man) => {
            return match cli::man_page() {
                Ok(page) => write_stdout(&page),
                Err(e) => fail(EXIT_PROVIDER, &format!("cannot render the man page: {e}")),
            };
        }
        Some(cli::Command::Acp) => return acp::run(&cli, env, paths, extensions),
        Some(cli::Command::Plugin { action }) => {
            return plugin_cmd::run(action, &cli, &env, &paths, &cwd);
        }
        Some(cli::Command::Serve) => {
            return channels::serve(&cli, env, paths, cwd, extensions, false);
        }
        Some(cli::Command::Telegram) => {
            return channels::serve(&cli, env, paths, cwd, extensions, true);
        }
        Some(cli::Command::Sessions { .. } | cli::Command::Mcp { .. }) | None => {}
    }
    if cli.command.is_none()
        && let Some(code) = mistyped_subcommand(&cli)
    {
        return code;
    }
    match cli.mode {
        Some(cli::RunMode::Acp) => return acp::run(&cli, env, paths, extensions),
        Some(cli::RunMode::Telegram) => {
            return channels::serve(&cli, env, paths, cwd, extensions, true);
        }
        Some(cli::RunMode::Serve) => {
            return channels::serve(&cli, env, paths, cwd, extensions, false);
        }
        Some(cli::RunMode::Rpc) | None => {}
    }
    if let Some(cli::Command::Mcp { action }) = &cli.command {
        let home = paths.home();
        match action {
            cli::McpCommand::Serve(_) => {}
            cli::McpCommand::Add(args) => return mcp_files::add(args, &cwd, home),
            cli::McpCommand::List => return mcp_files::list(&cwd, home),
            cli::McpCommand::Get { name } => return mcp_files::get(name, &cwd, home),
            cli::McpCommand::Remove { name, scope } => {
                return mcp_files::remove(name, *scope, &cwd, home);
            }
        }
    }
    if let Some(cli::Command::Mcp { action: cli::McpCommand::Serve(args) }) = &cli.command {
        #[cfg(feature = "mcp")]
        return mcp::serve(&args.to_cli(), env, paths, cwd);
        #[cfg(not(feature = "mcp"))]
        {
            let _ = args.to_cli();
            return fail(EXIT_USAGE, "this rab was built without MCP (the `mcp` feature)");
        }
    }
    if let Some(search) = &cli.list_models {
        if cli.provider.is_some() || cli.base_url.is_some() {
            let choice = cli.options(env.clone(), paths.clone(), cwd.clone(), false).model;
            let asked = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
                .map(|rt| {
                    rt.block_on(rab_core::setup::target::list_server_models(
                        &choice, search, &env, &paths,
                    ))
                });
            match asked {
                Ok(Ok(Some(listing))) => {
                    out!("{}", term::safe(&listing));
                    return EXIT_OK;
                }
                Ok(Ok(None)) => {}
                Ok(Err(e)) => return fail(e.code, &e.message),
                Err(e) => {
                    return fail(EXIT_PROVIDER, &format!("cannot start the async runtime: {e}"));
                }
            }
        }
        return match rab_core::setup::target::registry(&env, &paths) {
            Ok(r) => {
                out!("{}", rab_core::setup::target::list_models(&r, search));
                EXIT_OK
            }
            Err(e) => fail(e.code, &e.message),
        };
    }
    let mode = mode(&cli, &env);
    // Only a prompt typed as arguments can be a command or shell line; piped text is data.
    let mut typed = false;
    let prompt = match mode {
        Mode::Print => match input::prompt(&cli.prompt) {
            Ok(Some((p, all_typed))) => {
                typed = all_typed;
                Some(p)
            }
            Ok(None) => {
                return fail(
                    EXIT_USAGE,
                    "no prompt: pass one as an argument or on stdin, e.g. rab -p \"explain this repo\"",
                );
            }
            Err(e) => return fail(EXIT_USAGE, &format!("cannot read stdin: {e}")),
        },
        Mode::Repl | Mode::Tui | Mode::Rpc => {
            Some(cli.prompt.join(" ")).filter(|p| !p.trim().is_empty())
        }
    };
    if mode != Mode::Tui && cli.resume.as_deref() == Some("") {
        return fail(
            EXIT_USAGE,
            "--resume without an id picks a session in the terminal UI; here give its id \
             (`rab sessions list` shows them): rab -p -r ID, or -c for this folder's last one",
        );
    }
    let trusted = match decide_trust(&cli, &env, &paths, &cwd, mode) {
        Ok(t) => t,
        Err(message) => return fail(EXIT_USAGE, &message),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(EXIT_PROVIDER, &format!("cannot start the async runtime: {e}")),
    };
    // MCP servers start in the background on this runtime while the rest starts up.
    let entered = runtime.enter();
    let mut options = runtime_options(&cli, env, paths, cwd, trusted, extensions);
    options.keeps_running = mode != Mode::Print;
    options.default_max_turns =
        (mode == Mode::Print).then_some(rab_core::setup::HEADLESS_MAX_TURNS);
    // The UI opens without a key: /login stores one.
    options.model.allow_missing_key = mode == Mode::Tui;
    #[cfg(feature = "plugins")]
    options.factories.push(Arc::new(plugins::Plugins { watch: mode != Mode::Print }));
    let launch = match rab_core::setup::Setup::new(options) {
        Ok(l) => l,
        Err(e) => return fail(e.code, &e.message),
    };
    drop(entered);
    // Before any mode takes the screen.
    for w in &launch.warnings {
        eprintln!("rab: warning: {}", term::safe(w));
    }
    let choice = match cli.tape(&launch.paths.sessions_dir()) {
        Ok(c) => c,
        Err(message) => return fail(EXIT_USAGE, &message),
    };
    let (tape, warnings) = match launch.tape(&choice) {
        Ok(t) => t,
        Err(e) => return fail(e.code, &e.message),
    };
    for w in warnings {
        eprintln!("rab: warning: {}", term::safe(&w));
    }
    runtime.block_on(async move {
        let (mut session, resumed) = match launch.session(tape) {
            Ok(s) => s,
            Err(e) => return fail(e.code, &e.message),
        };
        let source = if session.agent().messages().is_empty() { "startup" } else { "resume" };
        for w in session.session_start(source).await {
            eprintln!("rab: warning: {w}");
        }
        if resumed.repaired > 0 {
            eprintln!(
                "rab: the previous run was cut off; recorded {} unfinished tool call(s) as interrupted",
                resumed.repaired
            );
        }
        match mode {
            Mode::Print => {
                let opts = print::PrintOptions {
                    format: cli.output_format,
                    verbose: cli.verbose,
                    partial: cli.include_partial_messages,
                };
                let prompt = prompt.unwrap_or_default();
                // One request: it should carry the MCP servers' tools.
                #[cfg(feature = "mcp")]
                if let Some(m) = mcp::manager(&launch) {
                    mcp::wait_for_servers(m).await;
                }
                #[cfg(feature = "plugins")]
                if let Some(p) = launch.extension::<rab_plugin_host::RemotePlugins>() {
                    plugins::wait_for_plugins(p).await;
                }
                let input =
                    if typed { print::Input::Typed(prompt) } else { print::Input::Data(prompt) };
                print::run(Arc::new(launch), session, input, opts).await
            }
            Mode::Repl => repl::run(launch, session, prompt).await,
            Mode::Tui => {
                let pick = cli.resume.as_deref() == Some("");
                interactive::run(launch, session, prompt, pick).await
            }
            Mode::Rpc => rpc::run(launch, session).await,
        }
    })
}

/// What a session is built from: the command line, compiled-in `extensions` and MCP
/// servers (plugins are added by the caller, which knows whether to watch them).
pub(crate) fn runtime_options(
    cli: &cli::Cli,
    env: Env,
    paths: Paths,
    cwd: std::path::PathBuf,
    trusted: bool,
    extensions: Vec<Arc<dyn rab_core::Extension>>,
) -> rab_core::setup::RuntimeOptions {
    let mut options = cli.options(env, paths, cwd, trusted);
    options.extensions = extensions;
    #[cfg(feature = "mcp")]
    options.factories.push(Arc::new(mcp::Servers::default()));
    options
}

/// Whether the working directory's hooks, servers and widening rules apply: decided
/// before anything of the folder's runs. An untrusted folder that brings any is asked
/// about once on a terminal, else named on stderr.
fn decide_trust(
    cli: &cli::Cli,
    env: &Env,
    paths: &Paths,
    cwd: &std::path::Path,
    mode: Mode,
) -> Result<bool, String> {
    let trust = trust::decide(cli, env, paths, cwd)?;
    if trust.trusted || cli.no_extensions {
        return Ok(trust.trusted);
    }
    let offers = trust::offers(env, paths, cwd);
    if offers.is_empty() {
        return Ok(false);
    }
    if matches!(mode, Mode::Repl | Mode::Tui)
        && !trust.remembered
        && let Some(answer) = trust::ask(cwd, &offers)
    {
        trust::remember(paths, cwd, answer)?;
        if answer {
            return Ok(true);
        }
    }
    trust::report(cwd, &offers);
    Ok(false)
}

/// How rab talks to the user this time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One prompt, answer on stdout.
    Print,
    /// Line-oriented REPL.
    Repl,
    /// The terminal UI.
    Tui,
    /// JSON lines on stdin and stdout (`--mode rpc`).
    Rpc,
}

/// `-p` or piped stdin: print mode; a terminal that cannot do the UI (or `--repl`): the
/// REPL; otherwise the UI.
fn mode(cli: &cli::Cli, env: &Env) -> Mode {
    use std::io::IsTerminal;
    if cli.mode == Some(cli::RunMode::Rpc) {
        return Mode::Rpc;
    }
    if cli.print || cli.output_format != cli::OutputFormat::Text {
        return Mode::Print;
    }
    if cli.repl {
        return Mode::Repl;
    }
    if !std::io::stdin().is_terminal() {
        return Mode::Print;
    }
    if env.get("TERM") == Some("dumb") || !std::io::stdout().is_terminal() {
        return Mode::Repl;
    }
    Mode::Tui
}

/// A lone word like `upgrade`: asked about on a terminal (the default is not to send
/// it), a usage error elsewhere, whatever the permission mode. `None`: send it.
fn command_word(cli: &cli::Cli, word: &str) -> Option<u8> {
    let hint = match word.to_lowercase().as_str() {
        "update" | "upgrade" | "install" | "uninstall" => "`rab update` says how to update",
        "version" => "`rab --version` prints the version",
        "help" => "`rab --help` lists the options and subcommands",
        "login" | "logout" => "type /login in rab to store a key",
        _ => "`rab --help` lists what rab does",
    };
    let asked = ask_on_terminal(
        cli,
        &format!("'{word}' reads as a command ({hint}). Send it to the model as a prompt?"),
        false,
        &format!(
            "'{word}' reads as a command, not a request for the model ({hint}); to send it as \
             a prompt, say more: rab -p \"{word} the dependencies\""
        ),
    );
    match asked {
        Ok(true) => None,
        Ok(false) => Some(EXIT_USAGE),
        Err(code) => Some(code),
    }
}

/// Asks `question` on a terminal (an empty answer is `default`); without one to ask
/// (print mode, piped input) fails with `refusal`, a usage error. `Err`: stop with
/// that exit code.
fn ask_on_terminal(
    cli: &cli::Cli,
    question: &str,
    default: bool,
    refusal: &str,
) -> Result<bool, u8> {
    use std::io::{BufRead, IsTerminal, Write};
    let interactive = !cli.print
        && cli.mode.is_none()
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    if !interactive {
        return Err(fail(EXIT_USAGE, refusal));
    }
    eprint!("rab: {question} {} ", if default { "[Y/n]" } else { "[y/N]" });
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return Err(EXIT_USAGE);
    }
    Ok(match answer.trim() {
        "" => default,
        a => matches!(a, "y" | "Y" | "yes"),
    })
}

/// Single words that read as a command to rab rather than a request to the model
/// (`rab upgrade`, `rab version`): never sent as a prompt without a question.
const COMMAND_WORDS: &[&str] = &[
    "update",
    "upgrade",
    "install",
    "uninstall",
    "version",
    "help",
    "login",
    "logout",
    "config",
    "configure",
    "init",
    "status",
    "setup",
    "reset",
    "clear",
    "exit",
    "quit",
];

/// `rab sesions list`: a first word one edit away from a subcommand, in a short prompt
/// typed as separate words, is a mistake more often than a prompt. On a terminal rab
/// asks; elsewhere it is a usage error (exit 2) naming the subcommand and how to send
/// the words as a prompt after all. `None`: go on with the prompt.
fn mistyped_subcommand(cli: &cli::Cli) -> Option<u8> {
    let first = cli.prompt.first()?;
    if cli.prompt.len() > 3 || cli.prompt.iter().any(|w| w.contains(char::is_whitespace)) {
        return None;
    }
    let names = cli::subcommand_names();
    if cli.prompt.len() == 1 && COMMAND_WORDS.contains(&first.to_lowercase().as_str()) {
        return command_word(cli, first);
    }
    let near = input::near_subcommand(first, &names)?;
    let rest: Vec<&str> = cli.prompt[1..].iter().map(String::as_str).collect();
    let suggestion =
        std::iter::once(near).chain(rest.iter().copied()).collect::<Vec<_>>().join(" ");
    let as_prompt = cli.prompt.join(" ");
    let asked = ask_on_terminal(
        cli,
        &format!("'{first}' is not a subcommand. Run `rab {suggestion}` instead?"),
        true,
        &format!(
            "'{first}' is not a subcommand; did you mean `rab {suggestion}`? To send it to the \
             model as a prompt, quote it: rab -p \"{as_prompt}\""
        ),
    );
    let yes = match asked {
        Ok(yes) => yes,
        Err(code) => return Some(code),
    };
    if yes {
        let mut args: Vec<std::ffi::OsString> = vec!["rab".into()];
        args.extend(std::iter::once(near.into()).chain(rest.iter().map(|w| (*w).into())));
        return Some(match cli::parse_args(args) {
            Ok(fixed) => run(fixed, Vec::new()),
            Err(e) => {
                let _ = e.print();
                EXIT_USAGE
            }
        });
    }
    None
}

/// Writes `bytes` to stdout; a closed pipe is not an error worth more than exit 1.
fn write_stdout(bytes: &[u8]) -> u8 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => fail(EXIT_PROVIDER, &format!("cannot write to stdout: {e}")),
    }
}

/// Says `message` on stderr and returns `code`; in print mode with JSON output, also
/// prints the result object saying so (scripts read stdout).
pub(crate) fn fail(code: u8, message: &str) -> u8 {
    eprintln!("rab: {message}");
    if print_json::wants_results() {
        outln!("{}", print_json::failure_line(code, message));
    }
    code
}

/// `rab login PROVIDER [--chatgpt]`.
fn login(provider: &str, browser: bool, env: &rab_config::Env, paths: &rab_config::Paths) -> u8 {
    let path = paths.auth_file();
    if browser {
        let what = match provider {
            "openai" => {
                "Continue with ChatGPT: open this address in a browser on this machine, sign in \
                 and allow rab to use your plan:"
            }
            "openrouter" => {
                "Sign in at OpenRouter: open this address in a browser on this machine and \
                 authorise rab:"
            }
            other => {
                return fail(
                    EXIT_USAGE,
                    &format!(
                        "{other} offers no sign-in that allows rab (openai and openrouter do); \
                         store an API key with `rab login {other} < keyfile` (docs/providers.md \
                         says which subscriptions allow rab and why)"
                    ),
                );
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let Ok(runtime) = runtime else {
            return fail(EXIT_PROVIDER, "cannot start the async runtime");
        };
        let mut show = |url: &str| {
            eprintln!("{what}\n\n  {url}\n\nWaiting for the browser (5 minutes)…");
        };
        let signed = if provider == "openai" {
            let issuer = rab_core::signin::issuer(env);
            runtime.block_on(rab_core::signin::sign_in_chatgpt(&path, &issuer, &mut show))
        } else {
            let site = rab_core::signin::openrouter_site(env);
            runtime.block_on(rab_core::signin::sign_in_openrouter(&path, &site, &mut show))
        };
        return match signed {
            Ok(done) => {
                outln!("{}", term::safe(&done));
                EXIT_OK
            }
            Err(e) => fail(EXIT_PROVIDER, &e),
        };
    }
    let registry = match rab_core::setup::target::registry(env, paths) {
        Ok(r) => r,
        Err(e) => return fail(e.code, &e.message),
    };
    if !registry.provider(provider).is_some_and(|p| p.requires_key) {
        return fail(
            EXIT_USAGE,
            &format!("{provider} is not a provider that takes a key; rab --list-models lists them"),
        );
    }
    let mut key = String::new();
    if std::io::stdin().read_line(&mut key).is_err() || key.trim().is_empty() {
        return fail(EXIT_USAGE, &format!("no key on stdin: `rab login {provider} < keyfile`"));
    }
    let stored = rab_config::Auth::load(&path).and_then(|mut a| a.set_key(provider, key.trim()));
    match stored {
        Ok(()) => {
            outln!("stored the {provider} key in {} (readable only by you)", path.display());
            EXIT_OK
        }
        Err(e) => fail(EXIT_PROVIDER, &e.to_string()),
    }
}
