//! Background shells: commands `bash` started with `run_in_background`, which
//! `bash_output` reads and `kill_shell` ends. [`Shells`] is the registry the three tools
//! share; each shell is watched by a task that owns the process group, reads its output
//! into a bounded log (`shells_log.rs`) and serves kill requests.
//!
//! Nothing outlives the registry: dropping it (the last of the three tools going away)
//! makes each task SIGKILL its group and reap the shell, and a task dropped without
//! running (the runtime shutting down) SIGKILLs the group from its destructor.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use process_wrap::tokio::ChildWrapper;
use rab_agent::ToolError;
use tokio::io::AsyncReadExt;
use tokio::process::ChildStdout;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::Workspace;
use crate::bash::{KILL_GRACE, SIGKILL, SIGTERM, signal_of, spawn};

mod log;

use log::OutputLog;
pub(crate) use log::Unread;
pub use log::{MAX_KEPT_BYTES, MAX_KEPT_LINES};

/// Bytes per pipe read.
const CHUNK: usize = 16 * 1024;
/// How long output is still awaited after the shell exited before it counts as exited: a
/// job it left running (`server &`) may hold the pipe open for good.
const DRAIN: Duration = Duration::from_secs(1);

/// Where a background shell stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellStatus {
    /// Still running (or its output is still arriving).
    Running,
    /// Exited on its own with this code.
    Exited(i32),
    /// Died of this signal, not sent by `kill_shell`.
    Signaled(i32),
    /// Ended by `kill_shell` (or by rab).
    Killed,
    /// Waiting for it failed; what happened to it is unknown.
    Lost(String),
}

impl ShellStatus {
    /// `running`, `exited with code 0`, `killed`…
    pub fn describe(&self) -> String {
        match self {
            Self::Running => "running".to_owned(),
            Self::Exited(code) => format!("exited with code {code}"),
            Self::Signaled(signal) => format!("killed by signal {signal}"),
            Self::Killed => "killed".to_owned(),
            Self::Lost(err) => format!("lost: waiting for it failed: {err}"),
        }
    }

    /// One word for the details: `running`, `exited`, `killed`, `lost`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited(_) => "exited",
            Self::Signaled(_) | Self::Killed => "killed",
            Self::Lost(_) => "lost",
        }
    }

    fn from_wait(status: &io::Result<ExitStatus>) -> Self {
        match status {
            Ok(s) => match (s.code(), signal_of(*s)) {
                (Some(code), _) => Self::Exited(code),
                (None, Some(signal)) => Self::Signaled(signal),
                (None, None) => Self::Lost(s.to_string()),
            },
            Err(e) => Self::Lost(e.to_string()),
        }
    }
}

/// What a shell has produced, shared by its task and the tools.
#[derive(Debug)]
struct State {
    log: OutputLog,
    status: ShellStatus,
}

/// A snapshot for `bash_output`: new output and the status, taken together.
pub(crate) struct Snapshot {
    pub(crate) unread: Unread,
    pub(crate) status: ShellStatus,
    pub(crate) command: String,
}

/// Asks a shell's task to kill it; the task answers with the status before the kill.
type KillSender = mpsc::UnboundedSender<oneshot::Sender<ShellStatus>>;

/// One background shell as the registry holds it.
struct Shell {
    id: String,
    command: String,
    state: Arc<Mutex<State>>,
    kill: KillSender,
    /// Cancels the task (which kills the group) when the registry is dropped.
    _stop: DropGuard,
}

/// The background shells of one session, shared by `bash`, `bash_output` and
/// `kill_shell` (clones share the registry).
#[derive(Clone, Default)]
pub struct Shells {
    inner: Arc<Mutex<Registry>>,
}

#[derive(Default)]
struct Registry {
    started: u64,
    shells: Vec<Shell>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shells {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ids of all shells started so far, oldest first.
    pub fn ids(&self) -> Vec<String> {
        lock(&self.inner).shells.iter().map(|s| s.id.clone()).collect()
    }

    /// Starts `sh -c command` in the background like `bash` does, and returns its id
    /// (`bash_1`, `bash_2`, …). Must be called within a tokio runtime.
    pub(crate) fn start(
        &self,
        shell: crate::shell::Shell,
        command: &str,
        ws: &Workspace,
    ) -> io::Result<String> {
        let (child, output) = spawn(shell, command, ws)?;
        let state =
            Arc::new(Mutex::new(State { log: OutputLog::default(), status: ShellStatus::Running }));
        let (kill, kill_rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let monitor = Monitor {
            child,
            state: state.clone(),
            has_exited: false,
            is_reaped: false,
            is_eof: false,
            exit: None,
        };
        tokio::spawn(monitor.run(output, kill_rx, stop.clone()));
        let mut registry = lock(&self.inner);
        registry.started += 1;
        let id = format!("bash_{}", registry.started);
        registry.shells.push(Shell {
            id: id.clone(),
            command: command.to_owned(),
            state,
            kill,
            _stop: stop.drop_guard(),
        });
        Ok(id)
    }

    /// The output since the last call for `id` and its status.
    pub(crate) fn read(&self, id: &str) -> Result<Snapshot, ToolError> {
        let (state, command, _) = self.find(id)?;
        let mut state = lock(&state);
        let is_final = state.status != ShellStatus::Running;
        Ok(Snapshot {
            unread: state.log.take_unread(is_final),
            status: state.status.clone(),
            command,
        })
    }

    /// Kills `id`'s process group (SIGTERM, then SIGKILL after a grace) and reaps it.
    /// Returns the status before the kill and the command.
    pub(crate) async fn kill(&self, id: &str) -> Result<(ShellStatus, String), ToolError> {
        let (state, command, sender) = self.find(id)?;
        let (reply, answer) = oneshot::channel();
        if sender.send(reply).is_ok()
            && let Ok(before) = answer.await
        {
            return Ok((before, command));
        }
        // The task has finished: the shell exited and its output is all read.
        let status = lock(&state).status.clone();
        Ok((status, command))
    }

    /// The shell's state, command and kill channel.
    fn find(&self, id: &str) -> Result<(Arc<Mutex<State>>, String, KillSender), ToolError> {
        let registry = lock(&self.inner);
        if let Some(shell) = registry.shells.iter().find(|s| s.id == id.trim()) {
            return Ok((shell.state.clone(), shell.command.clone(), shell.kill.clone()));
        }
        let known: Vec<&str> = registry.shells.iter().map(|s| s.id.as_str()).collect();
        Err(ToolError::Model(if known.is_empty() {
            format!(
                "no background shell {id}: none has been started; start one with bash and \
                 run_in_background: true"
            )
        } else {
            format!("no background shell {id}; known ids: {}", known.join(", "))
        }))
    }
}

/// What woke the task.
enum Event {
    Exited(io::Result<ExitStatus>),
    Read(io::Result<usize>),
    Drained,
    Kill(oneshot::Sender<ShellStatus>),
    Stop,
}

/// The task watching one shell. Dropped while the group may still live, it SIGKILLs it.
struct Monitor {
    child: Box<dyn ChildWrapper>,
    state: Arc<Mutex<State>>,
    /// The shell's wait returned (successfully or not).
    has_exited: bool,
    /// The shell was reaped, so its pid names no other process.
    is_reaped: bool,
    /// The pipe closed: nothing in the group holds it any more.
    is_eof: bool,
    /// How the shell exited and until when its output is still awaited.
    exit: Option<(ShellStatus, tokio::time::Instant)>,
}

impl Monitor {
    async fn run(
        mut self,
        mut output: ChildStdout,
        mut kill_rx: mpsc::UnboundedReceiver<oneshot::Sender<ShellStatus>>,
        stop: CancellationToken,
    ) {
        let mut buf = vec![0; CHUNK];
        while !(self.has_exited && self.is_eof) {
            let drained_at = self.exit.as_ref().map(|(_, at)| *at);
            let event = tokio::select! {
                status = self.child.wait(), if !self.has_exited => Event::Exited(status),
                read = output.read(&mut buf), if !self.is_eof => Event::Read(read),
                () = sleep_until(drained_at), if drained_at.is_some() => Event::Drained,
                Some(reply) = kill_rx.recv() => Event::Kill(reply),
                () = stop.cancelled() => Event::Stop,
            };
            match event {
                Event::Exited(status) => {
                    self.has_exited = true;
                    self.is_reaped = status.is_ok();
                    let deadline = tokio::time::Instant::now() + DRAIN;
                    self.exit = Some((ShellStatus::from_wait(&status), deadline));
                }
                Event::Read(Ok(0) | Err(_)) => self.is_eof = true,
                Event::Read(Ok(n)) => lock(&self.state).log.push(&buf[..n]),
                Event::Drained => self.publish_exit(),
                Event::Kill(reply) => {
                    self.publish_exit();
                    let before = lock(&self.state).status.clone();
                    self.kill().await;
                    let _ = reply.send(before);
                }
                Event::Stop => {
                    self.end_group(SIGKILL);
                    if !self.has_exited {
                        self.is_reaped = self.child.wait().await.is_ok();
                        self.has_exited = true;
                    }
                    self.set_status_if_running(ShellStatus::Killed);
                    return;
                }
            }
        }
        self.publish_exit();
    }

    /// Makes the recorded exit visible, once its output has been read (or waited for).
    fn publish_exit(&mut self) {
        if let Some((status, _)) = self.exit.take() {
            self.set_status_if_running(status);
        }
    }

    fn set_status_if_running(&self, status: ShellStatus) {
        let mut state = lock(&self.state);
        if state.status == ShellStatus::Running {
            state.status = status;
        }
    }

    /// Signals the group while anything may be left in it: the shell not reaped, or the
    /// pipe still held open by something it started.
    fn end_group(&mut self, signal: i32) {
        if !self.is_reaped || !self.is_eof {
            crate::bash::platform::signal_group(&mut self.child, signal);
        }
    }

    /// SIGTERM, a grace for the shell to exit, SIGKILL for whatever is left, and the
    /// shell reaped.
    async fn kill(&mut self) {
        self.end_group(SIGTERM);
        if !self.has_exited
            && let Ok(status) = tokio::time::timeout(KILL_GRACE, self.child.wait()).await
        {
            self.has_exited = true;
            self.is_reaped = status.is_ok();
        }
        self.end_group(SIGKILL);
        if !self.has_exited {
            self.is_reaped = self.child.wait().await.is_ok();
            self.has_exited = true;
        }
        self.set_status_if_running(ShellStatus::Killed);
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.end_group(SIGKILL);
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
