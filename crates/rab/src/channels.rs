//! `rab serve` and `rab telegram`: chat channels as supervised tasks. Each channel runs
//! until it fails — then it is started again after a pause that doubles from 1 s to a
//! minute (and starts over once a run lasted a minute) — or until SIGTERM or SIGINT:
//! then every channel stops taking messages, aborts the runs going on (their tapes stay
//! whole: every call gets its result) and sends its last edits; rab exits when all
//! have, or after 5 s. Each change of state is one line on stderr (and in the log).

use std::sync::Arc;
use std::time::Duration;

use rab_config::{Env, Paths};
use tokio_util::sync::CancellationToken;

use crate::cli::Cli;
use crate::{EXIT_OK, EXIT_PROVIDER, EXIT_USAGE, fail};

/// A front end that serves a chat medium until stopped.
pub trait Channel: Send + Sync {
    /// Its name in log lines.
    fn name(&self) -> &str;
    /// Serves until `stop` fires (`Ok`) or it fails (`Err`: restarted).
    fn run(&self, stop: CancellationToken) -> rab_agent::BoxFuture<'_, Result<(), String>>;
}

/// The longest pause before a failed channel is started again.
const MAX_PAUSE: Duration = Duration::from_secs(60);
/// How long a shutdown waits for the channels.
const SHUTDOWN: Duration = Duration::from_secs(5);

/// Runs `channels` until `stop` fires, restarting each one that fails.
pub async fn supervise(channels: Vec<Arc<dyn Channel>>, stop: CancellationToken) {
    let mut tasks = tokio::task::JoinSet::new();
    for channel in channels {
        let stop = stop.clone();
        tasks.spawn(async move {
            let name = channel.name().to_owned();
            let mut pause = Duration::from_secs(1);
            loop {
                note(&name, "starting");
                let started = tokio::time::Instant::now();
                let result = channel.run(stop.child_token()).await;
                if stop.is_cancelled() {
                    note(&name, "stopped");
                    return;
                }
                if started.elapsed() >= MAX_PAUSE {
                    pause = Duration::from_secs(1);
                }
                let why = match result {
                    Ok(()) => "ended".to_owned(),
                    Err(e) => format!("failed: {e}"),
                };
                note(&name, &format!("{why}; starting again in {} s", pause.as_secs()));
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = stop.cancelled() => {
                        note(&name, "stopped");
                        return;
                    }
                }
                pause = (pause * 2).min(MAX_PAUSE);
            }
        });
    }
    stop.cancelled().await;
    let drained =
        tokio::time::timeout(SHUTDOWN, async { while tasks.join_next().await.is_some() {} });
    if drained.await.is_err() {
        eprintln!("rab: channels did not stop within {} s; leaving", SHUTDOWN.as_secs());
        tasks.abort_all();
    }
}

fn note(channel: &str, state: &str) {
    tracing::info!(channel, "{state}");
    eprintln!("rab: {channel}: {state}");
}

/// `rab serve` (every configured channel) or `rab telegram` (that one): the process's
/// exit code.
pub fn serve(
    cli: &Cli,
    env: Env,
    paths: Paths,
    cwd: std::path::PathBuf,
    extensions: Vec<Arc<dyn rab_core::Extension>>,
    only_telegram: bool,
) -> u8 {
    // Nobody can be asked at start-up: the folder's widening settings apply only if it
    // is trusted already (or --trust-project).
    let trusted = match crate::trust::decide(cli, &env, &paths, &cwd) {
        Ok(t) => t.trusted,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let loaded = match rab_config::load_settings(&paths.settings_file(), &cwd, &env, trusted) {
        Ok(l) => l,
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    for w in &loaded.warnings {
        eprintln!("rab: warning: {}", crate::term::safe(w));
    }
    let telegram = loaded.settings.channels.telegram.as_ref();
    if telegram.is_none() && !only_telegram {
        return fail(
            EXIT_USAGE,
            "no channels are configured: add \"channels\": {\"telegram\": {…}} to \
             ~/.rab/agent/settings.json (see docs/telegram.md)",
        );
    }
    let config = match crate::telegram::Config::resolve(telegram, &env, &paths) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(EXIT_PROVIDER, &format!("cannot start the async runtime: {e}")),
    };
    let options_of = {
        let (cli, env, paths, cwd) = (cli.clone(), env.clone(), paths.clone(), cwd.clone());
        let token = config.token().to_owned();
        move |scheduler: Arc<rab_core::cron::Scheduler>| {
            let mut options = crate::runtime_options(
                &cli,
                env.clone(),
                paths.clone(),
                cwd.clone(),
                trusted,
                extensions.clone(),
            );
            options.keeps_running = false;
            // The bot's token, from whatever variable (or auth.json) it came: no
            // command, hook or MCP server gets it, and the firewall knows it.
            options.safety.credentials.0.push(("the Telegram bot token".into(), token.clone()));
            #[cfg(feature = "plugins")]
            options.factories.push(Arc::new(crate::plugins::Plugins { watch: true }));
            rab_core::setup::Setup::with_scheduler(options, scheduler).map_err(|e| e.message)
        }
    };
    // A model that cannot be resolved, or a bad rule, is found now rather than in the
    // first chat.
    let probe = {
        let _entered = runtime.enter();
        options_of(rab_core::cron::Scheduler::new(0))
    };
    if let Err(e) = probe {
        return fail(EXIT_USAGE, &e);
    }
    let channel = crate::telegram::Telegram::new(config, paths, Arc::new(options_of));
    runtime.block_on(async move {
        let stop = CancellationToken::new();
        let signals = stop.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            eprintln!("rab: shutting down");
            signals.cancel();
        });
        supervise(vec![Arc::new(channel)], stop).await;
    });
    EXIT_OK
}

/// SIGTERM or SIGINT (Ctrl+C).
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Fails its first runs, then serves until stopped; records when each run began.
    struct Flaky {
        failures: usize,
        starts: Mutex<Vec<tokio::time::Instant>>,
    }

    impl Channel for Flaky {
        fn name(&self) -> &str {
            "flaky"
        }
        fn run(&self, stop: CancellationToken) -> rab_agent::BoxFuture<'_, Result<(), String>> {
            Box::pin(async move {
                let n = {
                    let mut starts = self.starts.lock().unwrap();
                    starts.push(tokio::time::Instant::now());
                    starts.len()
                };
                if n <= self.failures {
                    return Err(format!("failure {n}"));
                }
                stop.cancelled().await;
                Ok(())
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_channel_is_started_again_after_doubling_pauses_until_stopped() {
        let flaky = Arc::new(Flaky { failures: 3, starts: Mutex::new(Vec::new()) });
        let stop = CancellationToken::new();
        let supervisor = tokio::spawn(supervise(vec![flaky.clone()], stop.clone()));
        // Four starts: three failures, then serving.
        while flaky.starts.lock().unwrap().len() < 4 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let starts = flaky.starts.lock().unwrap().clone();
        let pauses: Vec<u64> = starts.windows(2).map(|w| (w[1] - w[0]).as_secs()).collect();
        assert_eq!(pauses, [1, 2, 4]);
        stop.cancel();
        supervisor.await.unwrap();
        assert_eq!(flaky.starts.lock().unwrap().len(), 4, "not started again once stopped");
    }
}
