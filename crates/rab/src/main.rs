//! The `rab` binary: command line, mode dispatch, output. Agent and tool logic live in
//! the library crates.

mod cli;
mod input;
mod logging;
mod print;
mod sessions;
mod setup;

use std::process::ExitCode;
use std::sync::Arc;

use rab_agent::{AgentConfig, DrainMode};
use rab_ai::{Client, RetryPolicy, StreamOptions};
use rab_config::{Env, Paths, QueueMode, load_settings};
use rab_core::{AgentSession, PromptSources, build_system_prompt};

/// The run finished.
pub const EXIT_OK: u8 = 0;
/// The model or provider failed (including a missing key).
pub const EXIT_PROVIDER: u8 = 1;
/// The command line or a config file is wrong.
pub const EXIT_USAGE: u8 = 2;
/// `--max-turns` was reached before the model finished.
pub const EXIT_MAX_TURNS: u8 = 3;
/// SIGINT / Ctrl+C.
pub const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    ExitCode::from(run(cli))
}

fn queue_mode(m: QueueMode) -> DrainMode {
    match m {
        QueueMode::OneAtATime => DrainMode::OneAtATime,
        QueueMode::All => DrainMode::All,
    }
}

fn run(cli: cli::Cli) -> u8 {
    let env = Env::from_process();
    let paths = match Paths::from_env(&env) {
        Ok(p) => p,
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return fail(EXIT_USAGE, &format!("cannot read the current directory: {e}")),
    };
    logging::init(&env, &paths);
    if let Some(cli::Command::Sessions { action: cli::SessionsCommand::List { all } }) =
        &cli.command
    {
        return sessions::list(&paths.sessions_dir(), &cwd, *all);
    }
    let registry = match setup::registry(&env, &paths) {
        Ok(r) => r,
        Err(e) => return fail(e.code, &e.message),
    };
    if let Some(search) = &cli.list_models {
        print!("{}", setup::list_models(&registry, search));
        return EXIT_OK;
    }
    let loaded =
        match load_settings(&paths.settings_file(), &Paths::project_settings_file(&cwd), &env) {
            Ok(l) => l,
            Err(e) => return fail(EXIT_USAGE, &e.to_string()),
        };
    for w in &loaded.warnings {
        eprintln!("rab: warning: {w}");
    }
    let settings = loaded.settings;
    let prompt = match input::prompt(&cli.prompt) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return fail(
                EXIT_USAGE,
                "no prompt: pass one as an argument or on stdin, e.g. rab -p \"explain this repo\" \
                 (the interactive terminal UI is not built yet)",
            );
        }
        Err(e) => return fail(EXIT_USAGE, &format!("cannot read stdin: {e}")),
    };
    let target = match setup::target(&cli, &settings, &env, &paths, &registry) {
        Ok(t) => t,
        Err(e) => return fail(e.code, &e.message),
    };
    let tools = match setup::tools(&cli, &settings, &env, &cwd) {
        Ok(t) => t,
        Err(e) => return fail(e.code, &e.message),
    };
    let (tape, warnings) = match setup::tape(&cli, &paths, &cwd) {
        Ok(t) => t,
        Err(e) => return fail(e.code, &e.message),
    };
    for w in warnings {
        eprintln!("rab: warning: session line {}: {}", w.line, w.message);
    }
    let system_prompt = build_system_prompt(&PromptSources {
        cwd: cwd.clone(),
        home: paths.home().to_path_buf(),
        system_prompt: cli.system_prompt.clone(),
        append: cli.append_system_prompt.clone(),
        no_context_files: cli.no_context_files,
        date: rab_session::time::date(rab_session::time::now_millis()),
    });
    let options = StreamOptions {
        api_key: target.api_key,
        thinking: target.thinking,
        auth_hint: Some(target.auth_hint),
        session_id: Some(tape.id().to_owned()),
        retry: RetryPolicy {
            max_retries: settings.retry.max_retries,
            base_delay: std::time::Duration::from_millis(settings.retry.base_delay_ms),
            ..RetryPolicy::default()
        },
        ..StreamOptions::default()
    };
    let config = AgentConfig {
        model: target.model,
        options,
        max_turns: cli.max_turns.or(settings.max_turns),
        steering_mode: queue_mode(settings.steering_mode),
        follow_up_mode: queue_mode(settings.follow_up_mode),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(EXIT_PROVIDER, &format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(async move {
        let (session, resumed) =
            match AgentSession::new(Arc::new(Client::new()), config, system_prompt, tools, tape) {
                Ok(s) => s,
                Err(e) => return fail(EXIT_USAGE, &e.to_string()),
            };
        if resumed.repaired > 0 {
            eprintln!(
                "rab: the previous run was cut off; recorded {} unfinished tool call(s) as interrupted",
                resumed.repaired
            );
        }
        let opts = print::PrintOptions { format: cli.output_format, verbose: cli.verbose };
        print::run(session, prompt, opts).await
    })
}

fn fail(code: u8, message: &str) -> u8 {
    eprintln!("rab: {message}");
    code
}
