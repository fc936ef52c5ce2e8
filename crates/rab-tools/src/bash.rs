//! The `bash` tool: runs `sh -c <command>` in the workspace root, in a session (and so a
//! process group) of its own so that a timeout or an interrupt can end the whole tree it
//! started, not just the shell; without a controlling terminal, a command that would
//! prompt on /dev/tty (ssh, sudo) fails at once instead of hanging until the timeout.
//! Output (stdout and stderr together) streams to the UI while it arrives and comes back
//! to the model cut to its tail; `bash_capture.rs` keeps memory bounded.
//!
//! With `run_in_background` the command is started the same way but handed to the
//! [`Shells`] registry, and the call returns its id at once; `bash_output` reads it and
//! `kill_shell` ends it (see `shells.rs`).
//!
//! Killing needs no `unsafe`: on Unix, process-wrap's `ProcessSession` makes the shell
//! the leader of a new session and group, and its `signal` sends to the whole group
//! (`killpg`); on Windows a job object holds the tree (see `platform`).

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rab_agent::{
    ABORTED, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::process::ChildStdout;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::Workspace;
use crate::shell::Shell;
use crate::shells::Shells;

mod capture;

use capture::{Capture, Captured};

/// Seconds a command may run when the model gives no timeout.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout the model may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;

// POSIX fixes these two numbers, so they need no libc lookup.
pub(crate) const SIGTERM: i32 = 15;
pub(crate) const SIGKILL: i32 = 9;

/// Time between SIGTERM and SIGKILL. Short, because the agent loop abandons a cancelled
/// tool that has not answered within two seconds.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to keep reading after the shell exited: a background job (`server &`) may
/// hold the pipes open indefinitely, and its output is not this command's result.
const DRAIN: Duration = Duration::from_secs(1);
/// The same after a kill, when everything in the group is already dead.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);

/// Runs shell commands in the workspace root, in the foreground or in the background.
pub struct Bash {
    ws: Workspace,
    shells: Shells,
    shell: Shell,
}

impl Bash {
    /// The tool rooted at the workspace, with background shells of its own (which
    /// nothing can read: use [`Self::with_shells`] to share them with `bash_output`).
    pub fn new(ws: Workspace) -> Self {
        Self { ws, shells: Shells::new(), shell: Shell::Sh }
    }

    /// Registers background shells in `shells`, shared with `bash_output` and
    /// `kill_shell`.
    pub fn with_shells(mut self, shells: Shells) -> Self {
        self.shells = shells;
        self
    }
}

/// Arguments of `bash`. Field docs are the schema's descriptions, sent on every request.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// Shell command.
    #[schemars(description = "")]
    pub command: String,
    /// Seconds before it is killed (default 120, max 600).
    #[schemars(description = "Seconds (default 120, max 600).")]
    pub timeout: Option<u64>,
    /// For servers/long jobs: returns an id; read its output with bash_output.
    pub run_in_background: Option<bool>,
}

impl Tool for Bash {
    type Args = Args;
    const NAME: &'static str = "bash";
    const LEVEL: ToolLevel = ToolLevel::Execute;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Command,
        claude_names: &["Bash"],
        covered_by: &[],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(format!("$ {}", args.command))
    }

    fn description(&self) -> String {
        self.shell.description().to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.run_command(args, cx).await
    }
}

impl Bash {
    /// Runs `args.command` in this tool's shell.
    async fn run_command(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.run_in_background == Some(true) {
            return self.start_in_background(&args.command);
        }
        let secs = args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS).clamp(1, MAX_TIMEOUT_SECS);
        if let Some(terminal) = self.ws.editor().terminal() {
            return in_terminal(terminal, &args.command, &self.ws.root(), secs, &cx).await;
        }
        #[cfg(target_os = "linux")]
        self.ws.sandbox().settle_ready().await;
        let started = Instant::now();
        let root = self.ws.root();
        let (child, output) = spawn(self.shell, &args.command, &self.ws).map_err(|e| {
            let program = self.shell.program();
            ToolError::Model(format!("could not start {program} in {}: {e}", root.display()))
        })?;
        let mut group = Group { child, is_reaped: false };
        let capture =
            Capture::new(self.ws.temp_dir(), self.ws.redact().clone(), cx.updates.clone());
        let mut collector = Collector::start(capture, output);
        let end = tokio::select! {
            status = group.child.wait() => End::Exited(status),
            () = tokio::time::sleep(Duration::from_secs(secs)) => End::TimedOut,
            () = cx.cancel.cancelled() => End::Aborted,
        };
        let (end, drain) = match end {
            End::Exited(status) => (End::Exited(status), DRAIN),
            End::TimedOut | End::Aborted => {
                tracing::debug!(command = %args.command, "killing the process group");
                group.kill(&mut collector).await;
                (end, DRAIN_AFTER_KILL)
            }
        };
        // A failed wait leaves the shell's fate unknown: the guard then kills the group.
        group.is_reaped = !matches!(end, End::Exited(Err(_)));
        let captured = match collector.finish(drain).await {
            Some(capture) => capture.finish().await,
            // Only a panic in the reader task gets here.
            None => Captured::lost(),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // The next command's helper, for a command that names no program of its own
        // in the temp folder (which would need that folder in the view).
        #[cfg(target_os = "linux")]
        {
            let (program, args) = self.shell.invocation("");
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.ws.sandbox().prepare_ready(program, &args, &root);
        }
        report(end, secs, &captured, duration_ms).map_err(|e| match e {
            ToolError::Model(text) => ToolError::Model(sandbox_note(&self.ws, text)),
            other => other,
        })
    }
}

impl Bash {
    /// Starts the command as a background shell and says how to follow it.
    fn start_in_background(&self, command: &str) -> Result<ToolOutput, ToolError> {
        let id = self.shells.start(self.shell, command, &self.ws).map_err(|e| {
            let program = self.shell.program();
            ToolError::Model(format!(
                "could not start {program} in {}: {e}",
                self.ws.root().display()
            ))
        })?;
        let text = format!(
            "started {id} in the background; read its output with bash_output (id {id}), \
             stop it with kill_shell"
        );
        Ok(ToolOutput::text(text).with_details(json!({"backgroundId": id})))
    }
}

/// Runs the command in the editor's terminal and reports it as the tool does.
async fn in_terminal(
    terminal: &dyn crate::editor_files::EditorTerminal,
    command: &str,
    root: &std::path::Path,
    secs: u64,
    cx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let started = Instant::now();
    let timeout = Duration::from_secs(secs);
    let run = terminal
        .run(command, root, &cx.call_id, cx.cancel.clone(), timeout)
        .await
        .map_err(|e| ToolError::Model(format!("the editor's terminal could not run it: {e}")))?;
    let body =
        crate::truncate::tail(&run.output, crate::truncate::MAX_LINES, crate::truncate::MAX_BYTES)
            .text;
    let status = if run.is_aborted {
        format!("{ABORTED}; the editor's terminal was killed")
    } else if run.is_timed_out {
        format!("timed out after {secs}s; the editor's terminal was killed")
    } else {
        match (run.exit_code, &run.signal) {
            (Some(0), _) => {
                let details = json!({
                    "exitCode": 0,
                    "durationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    "truncated": run.is_truncated,
                    "editorTerminal": true,
                });
                return Ok(ToolOutput::text(body).with_details(details));
            }
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended without an exit code".to_owned(),
        }
    };
    Err(ToolError::Model(format!("{status}\n{body}")))
}

/// How the command ended.
enum End {
    Exited(io::Result<ExitStatus>),
    TimedOut,
    Aborted,
}

/// Turns the end and the output into the tool's answer.
fn report(
    end: End,
    secs: u64,
    captured: &Captured,
    duration_ms: u64,
) -> Result<ToolOutput, ToolError> {
    let body = captured.render();
    let status = match end {
        End::TimedOut => format!("timed out after {secs}s; killed the process group"),
        End::Aborted => format!("{ABORTED}; killed the process group"),
        End::Exited(Err(e)) => format!("could not wait for the command: {e}"),
        End::Exited(Ok(status)) => match (status.code(), signal_of(status)) {
            (Some(0), _) => {
                let details = json!({
                    "exitCode": 0,
                    "durationMs": duration_ms,
                    "truncated": captured.is_truncated,
                    "fullOutputPath": captured.full_output_path,
                });
                return Ok(ToolOutput::text(body).with_details(details));
            }
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => format!("ended abnormally: {status}"),
        },
    };
    Err(ToolError::Model(format!("{status}\n{body}")))
}

/// A failed command that hit the sandbox says so, and how to allow what it tried: the
/// program itself only says "Permission denied".
fn sandbox_note(ws: &Workspace, text: String) -> String {
    let sandbox = ws.sandbox();
    let refused = ["Permission denied", "Read-only file system", "Operation not permitted"];
    if !sandbox.is_confined() || !refused.iter().any(|r| text.contains(r)) {
        return text;
    }
    let writable: Vec<String> = sandbox.roots().iter().map(|r| r.display().to_string()).collect();
    let network = if sandbox.is_network_allowed() {
        String::new()
    } else {
        " Network connections are blocked too (sandbox.network: false).".to_owned()
    };
    format!(
        "{text}\n[rab: this may be the sandbox ({}): commands may write only under {}, the \
         temp directory and the tool caches (~/.cargo, ~/.npm, ~/.cache, …).{network} To \
         allow a directory, run rab with --add-dir DIR or add it to \
         permissions.additionalDirectories in settings; --sandbox off turns the sandbox off. \
         Tell the user if the command needs that.]",
        sandbox.mode().as_str(),
        writable.join(", ")
    )
}

#[cfg(unix)]
pub(crate) fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
pub(crate) fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

/// Starts `command` in `shell` at the head of a new process group (confined by the
/// workspace's sandbox, without the keys rab uses in its environment), with stdout and
/// stderr both on one pipe, returned as its read end.
pub(crate) fn spawn(
    shell: Shell,
    command: &str,
    ws: &Workspace,
) -> io::Result<(Box<dyn ChildWrapper>, ChildStdout)> {
    // One pipe for both streams, as `2>&1` gives: the output interleaves exactly as it
    // was written, which two pipes read side by side cannot reproduce.
    let (reader, writer) = std::io::pipe()?;
    let (program, args) = shell.invocation(command);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsFd;
        let out = writer.as_fd();
        if let Some(child) = ws.sandbox().start_ready(program, &args, &ws.root(), out, out) {
            drop(writer);
            return Ok((child, ChildStdout::from_std(platform::child_stdout(reader))?));
        }
    }
    let (program, args) = ws.sandbox().wrap(program, &args);
    let mut cmd = CommandWrap::with_new(program, |c| {
        c.args(&args).current_dir(ws.root()).stdin(Stdio::null());
        for name in ws.sandbox().scrubbed_env() {
            c.env_remove(name);
        }
    });
    cmd.command_mut().stdout(writer.try_clone()?).stderr(writer);
    platform::own_group(&mut cmd);
    let child = cmd.spawn()?;
    // Dropping the command closes our copies of the write end, so the read end sees
    // EOF once every process holding it is gone.
    drop(cmd);
    Ok((child, ChildStdout::from_std(platform::child_stdout(reader))?))
}

/// What differs between platforms: how a command gets a process tree of its own, how
/// that tree is signalled, and how a pipe becomes a child's output.
#[cfg(unix)]
pub(crate) mod platform {
    use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessSession};

    /// The shell leads a new session and process group.
    pub(crate) fn own_group(cmd: &mut CommandWrap) {
        cmd.wrap(ProcessSession);
    }

    /// `signal` to the whole group (`killpg`).
    pub(crate) fn signal_group(child: &mut Box<dyn ChildWrapper>, signal: i32) {
        let _ = child.signal(signal);
    }

    pub(crate) fn child_stdout(reader: std::io::PipeReader) -> std::process::ChildStdout {
        std::process::ChildStdout::from(std::os::fd::OwnedFd::from(reader))
    }
}

/// Windows: a job object holds the tree, and ending it ends everything in it (there is
/// no gentle first signal). Not built or tested on the machine rab is developed on.
#[cfg(windows)]
pub(crate) mod platform {
    use process_wrap::tokio::{ChildWrapper, CommandWrap, JobObject};

    /// The shell and everything it starts are in one job object.
    pub(crate) fn own_group(cmd: &mut CommandWrap) {
        cmd.wrap(JobObject);
    }

    /// Any signal ends the job.
    pub(crate) fn signal_group(child: &mut Box<dyn ChildWrapper>, _signal: i32) {
        let _ = child.start_kill();
    }

    pub(crate) fn child_stdout(reader: std::io::PipeReader) -> std::process::ChildStdout {
        std::process::ChildStdout::from(std::os::windows::io::OwnedHandle::from(reader))
    }
}

/// The command tool on Windows, and a second one beside `bash` wherever PowerShell 7
/// (`pwsh`) is installed: [`Bash`] running PowerShell, under its own name.
pub struct PowerShell(Bash);

impl PowerShell {
    /// `bash`'s workspace and background shells, with Windows PowerShell as the shell.
    pub fn new(bash: Bash) -> Self {
        Self(Bash { shell: Shell::PowerShell, ..bash })
    }

    /// `bash`'s workspace and background shells, with `pwsh` as the shell.
    pub fn pwsh(bash: Bash) -> Self {
        Self(Bash { shell: Shell::Pwsh, ..bash })
    }
}

impl Tool for PowerShell {
    type Args = Args;
    const NAME: &'static str = "powershell";
    const LEVEL: ToolLevel = ToolLevel::Execute;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Command,
        claude_names: &["PowerShell"],
        covered_by: &[],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(format!("PS> {}", args.command))
    }

    fn description(&self) -> String {
        self.0.shell.description().to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.0.run_command(args, cx).await
    }
}

/// The running group. Dropped before the shell was reaped (the tool's future was
/// abandoned), it SIGKILLs the group so nothing outlives the call; tokio reaps the
/// orphaned shell.
struct Group {
    child: Box<dyn ChildWrapper>,
    is_reaped: bool,
}

impl Group {
    /// SIGTERM, a grace for the group to exit and close the pipes, then SIGKILL for
    /// whatever is left (a child that ignores SIGTERM), and the shell reaped.
    async fn kill(&mut self, collector: &mut Collector) {
        let deadline = tokio::time::Instant::now() + KILL_GRACE;
        platform::signal_group(&mut self.child, SIGTERM);
        let exited = tokio::time::timeout_at(deadline, self.child.wait()).await.is_ok();
        // The shell may be gone while a grandchild that ignores SIGTERM holds the pipes;
        // closed pipes are the sign the whole tree is gone.
        collector.wait_until(deadline).await;
        // Even with the shell reaped this hits the right group: a process group id is
        // not reused while any member lives.
        platform::signal_group(&mut self.child, SIGKILL);
        if !exited {
            let _ = self.child.wait().await;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.is_reaped {
            platform::signal_group(&mut self.child, SIGKILL);
        }
    }
}

/// The task reading the output pipe into a [`Capture`].
struct Collector {
    handle: Option<JoinHandle<Capture>>,
    done: Option<Capture>,
    stop: CancellationToken,
}

impl Collector {
    fn start(capture: Capture, output: ChildStdout) -> Self {
        let stop = CancellationToken::new();
        let handle = tokio::spawn(capture.collect(output, stop.clone()));
        Self { handle: Some(handle), done: None, stop }
    }

    /// Waits for the pipe to close, at most until `deadline`.
    async fn wait_until(&mut self, deadline: tokio::time::Instant) {
        let Some(handle) = self.handle.as_mut() else { return };
        if let Ok(joined) = tokio::time::timeout_at(deadline, handle).await {
            self.handle = None;
            self.done = joined.ok();
        }
    }

    /// The capture, after reading on for at most `drain`.
    async fn finish(mut self, drain: Duration) -> Option<Capture> {
        self.wait_until(tokio::time::Instant::now() + drain).await;
        if let Some(handle) = self.handle.take() {
            self.stop.cancel();
            self.done = handle.await.ok();
        }
        self.done.take()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        // An abandoned call must not leave a task reading pipes that a background job
        // keeps open.
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests;
