//! The `rab` binary: command line, mode dispatch, output. Agent and tool logic live in
//! the library crates.

mod cli;
mod input;
mod logging;
mod print;
mod setup;

use std::process::ExitCode;

use clap::Parser;
use rab_config::{Env, Paths};

/// The run finished.
pub const EXIT_OK: u8 = 0;
/// The model or provider failed (including a missing key).
pub const EXIT_PROVIDER: u8 = 1;
/// The command line or a config file is wrong.
pub const EXIT_USAGE: u8 = 2;
/// SIGINT / Ctrl+C.
pub const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    ExitCode::from(run(cli))
}

fn run(cli: cli::Cli) -> u8 {
    let env = Env::from_process();
    let paths = match Paths::from_env(&env) {
        Ok(p) => p,
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    logging::init(&env, &paths);
    let registry = match setup::registry(&env, &paths) {
        Ok(r) => r,
        Err(e) => return fail(e.code, &e.message),
    };
    if let Some(search) = &cli.list_models {
        print!("{}", setup::list_models(&registry, search));
        return EXIT_OK;
    }
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
    let target = match setup::target(&cli, &env, &paths, &registry) {
        Ok(t) => t,
        Err(e) => return fail(e.code, &e.message),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(EXIT_PROVIDER, &format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(print::run(target, prompt, cli.verbose))
}

fn fail(code: u8, message: &str) -> u8 {
    eprintln!("rab: {message}");
    code
}
