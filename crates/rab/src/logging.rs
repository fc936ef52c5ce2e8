//! Logs go to `$RAB_HOME/logs/rab.log`; `RAB_LOG` sets the filter (default `warn`).
//! Nothing is written to the terminal, so logs never mix with a command's output.

use std::fs::OpenOptions;
use std::sync::Mutex;

use rab_config::{Env, Paths};
use tracing_subscriber::EnvFilter;

/// Starts logging; without a writable log file rab runs without logs.
pub fn init(env: &Env, paths: &Paths) {
    let path = paths.log_file();
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_err()
    {
        return;
    }
    let Ok(file) = OpenOptions::new().create(true).append(true).open(&path) else { return };
    let filter = EnvFilter::try_new(env.get("RAB_LOG").unwrap_or("warn"))
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init();
}
