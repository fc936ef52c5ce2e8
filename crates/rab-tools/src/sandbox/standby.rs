//! Ready sandbox helpers: a helper made ready before its commands are known, so a
//! command waits for none of the helper's set-up (starting rab's executable again, the
//! user namespace, the view). After a confined command (from the second on: a run with
//! one command would only pay for it), rab starts a helper with `--standby`; it builds
//! the view, says `ready` on its standard input (a `SOCK_SEQPACKET` socket) and serves
//! every later command of that view (`serve.rs`): one message `CWD\0PROGRAM\0ARG…`
//! with the command's standard streams and a status socket passed along
//! (`SCM_RIGHTS`). Each command gets mount and IPC namespaces of its own (and a network
//! namespace without network), and a PID namespace where nothing runs but it (its keeper ends whatever a command left
//! before it takes the next), so nothing a command leaves behind meets the next; on the
//! status socket rab hears the command's process group and its exit code ([`Served`]).
//!
//! A ready helper is used only while what it was built for still holds: the same
//! helper arguments (the view rab would build now) and the same file behind every
//! path it mounted (a protected file replaced outside the sandbox since, as `git
//! config` does it, would otherwise be seen as it was). Otherwise it is let go (it ends
//! at the end of its socket) and the command starts the usual way.

use std::ffi::OsString;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::pin::Pin;
use std::process::ExitStatus;

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessSession};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use rustix::process::{Pid, Signal};
use tokio::io::Interest;
use tokio::net::UnixStream;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use super::spec::Spec;

use super::serve::{EXIT_TAG, MAX_REQUEST, PID_TAG};

/// How long rab waits for a helper to be ready before letting it go.
const READY_WAIT: Duration = Duration::from_secs(10);

/// How long a command waits at most for a helper being made ready: about what
/// starting one costs.
const SETTLE: Duration = Duration::from_millis(5);

/// Ready helpers kept: the model's commands and the user's (`!cmd`) each have one.
const KEPT: usize = 2;

/// How long starting a command waits to hear its process group.
const PID_WAIT: Duration = Duration::from_secs(2);

/// What a ready helper was built for.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    exe: PathBuf,
    args: Vec<OsString>,
    cwd: PathBuf,
    scrubbed: Vec<String>,
    /// `(device, inode)` of every path the view mounts, `None` where there is none.
    files: Vec<Option<(u64, u64)>>,
}

impl Key {
    fn new(
        exe: PathBuf,
        args: Vec<OsString>,
        spec: &Spec,
        cwd: &Path,
        scrubbed: &[String],
    ) -> Self {
        Self {
            files: identities(spec),
            exe,
            args,
            cwd: cwd.to_path_buf(),
            scrubbed: scrubbed.to_vec(),
        }
    }
}

impl Key {
    /// Whether `other` is for the same view, perhaps of other files.
    fn is_same_view(&self, other: &Self) -> bool {
        (&self.exe, &self.args, &self.cwd, &self.scrubbed)
            == (&other.exe, &other.args, &other.cwd, &other.scrubbed)
    }
}

/// The file behind each path the view mounts (a bind mount holds the file it found,
/// not the path).
fn identities(spec: &Spec) -> Vec<Option<(u64, u64)>> {
    use std::os::unix::fs::MetadataExt;
    let overlay = spec.overlay.iter().flat_map(|(t, p)| [t, p]);
    let paths = spec
        .writable
        .iter()
        .chain(&spec.visible)
        .chain(&spec.read_only)
        .chain(&spec.pinned)
        .chain(&spec.hidden)
        .chain(&spec.tmp)
        .chain(overlay);
    paths.map(|p| std::fs::symlink_metadata(p).ok().map(|m| (m.dev(), m.ino()))).collect()
}

/// A helper that said it is ready.
struct Ready {
    key: Key,
    sock: OwnedFd,
    child: Box<dyn ChildWrapper>,
}

/// The ready helpers of a sandbox (and its copies).
#[derive(Default)]
pub(crate) struct Standbys {
    ready: Mutex<Vec<Ready>>,
    /// Helpers being made ready, and the signal that one is.
    preparing: AtomicUsize,
    changed: tokio::sync::Notify,
    /// Commands that asked for a next helper: the first does not get one (a run with
    /// one command, as many headless ones are, would only pay for it).
    asked: AtomicUsize,
    /// A command found no ready helper for its view: the next is made ready.
    missed: AtomicBool,
    /// A helper could not get ready (user namespaces refused, or it failed): commands
    /// start the usual way from then on.
    has_given_up: AtomicBool,
}

impl std::fmt::Debug for Standbys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Standbys")
    }
}

/// Every sandbox's ready helpers are alike for comparing sandboxes.
impl PartialEq for Standbys {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Standbys {}

impl Standbys {
    /// Whether helpers stopped being made ready here.
    pub(crate) fn has_given_up(&self) -> bool {
        self.has_given_up.load(Ordering::Relaxed)
    }

    /// Waits (a little) for a helper being made ready, when none is: with commands in
    /// quick succession, the one started after the last command is nearly there, and
    /// waiting for it is quicker than starting the command the usual way.
    pub(crate) async fn settle(&self) {
        let deadline = tokio::time::Instant::now() + SETTLE;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let is_empty =
                self.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty();
            if !is_empty || self.preparing.load(Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }

    /// Lets go of the ready helpers that ended.
    fn forget_ended(ready: &mut Vec<Ready>) {
        ready.retain_mut(|r| match r.child.try_wait() {
            Ok(None) => true,
            other => {
                tracing::debug!("a ready sandbox helper is gone: {other:?}");
                false
            }
        });
    }

    /// Keeps `r`, letting go of one built for the same view and of the oldest beyond
    /// [`KEPT`].
    fn keep(&self, r: Ready) {
        let mut ready = self.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        ready.retain(|old| old.key != r.key);
        ready.push(r);
        while ready.len() > KEPT {
            ready.remove(0);
        }
        drop(ready);
        self.changed.notify_waiters();
    }
}

/// What a confined command needs to start through a ready helper.
pub(crate) struct Start<'a> {
    /// The helper (rab's executable).
    pub exe: PathBuf,
    /// The helper's arguments for a ready helper of this view (`--standby`).
    pub args: Vec<OsString>,
    /// The view.
    pub spec: Spec,
    /// The program and its arguments.
    pub program: &'a str,
    /// Its arguments.
    pub program_args: &'a [&'a str],
}

/// Starts the command through a ready helper when one fits, with `stdout` and
/// `stderr` as its streams and no input. `None`: start it the usual way (nothing was
/// started).
pub(crate) fn start(
    standbys: &Standbys,
    start: Start<'_>,
    cwd: &Path,
    scrubbed: &[String],
    stdout: BorrowedFd<'_>,
    stderr: BorrowedFd<'_>,
) -> Option<Box<dyn ChildWrapper>> {
    // The key stats every mounted path: not worth it with no helper to match.
    if standbys.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty() {
        return None;
    }
    let key = Key::new(start.exe, start.args, &start.spec, cwd, scrubbed);
    let null = std::fs::File::open("/dev/null").ok()?;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().ok()?;
    ours.set_nonblocking(true).ok()?;
    // The command's process id comes as the credentials of the message that tells it.
    rustix::net::sockopt::set_socket_passcred(&ours, true).ok()?;
    let status = UnixStream::from_std(ours).ok()?;
    let mut fields: Vec<&[u8]> = vec![cwd.as_os_str().as_bytes(), start.program.as_bytes()];
    fields.extend(start.program_args.iter().map(|a| a.as_bytes()));
    let mut ready = standbys.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Standbys::forget_ended(&mut ready);
    let Some(i) = ready.iter().position(|r| r.key == key) else {
        // Built for another view, or for files since replaced: let go of the latter.
        ready.retain(|r| !r.key.is_same_view(&key));
        standbys.missed.store(true, Ordering::Relaxed);
        return None;
    };
    let fds = [null.as_fd(), stdout, stderr, theirs.as_fd()];
    if let Err(e) = send(ready[i].sock.as_fd(), &fields, &fds) {
        tracing::debug!("a ready sandbox helper did not take the command: {e}");
        // A command too long to hand over says nothing of the helper.
        if e.kind() != io::ErrorKind::InvalidInput {
            let mut gone = ready.remove(i);
            let _ = gone.child.start_kill();
            standbys.missed.store(true, Ordering::Relaxed);
        }
        return None;
    }
    drop(ready);
    drop(theirs);
    tracing::debug!("a command started through a ready sandbox helper");
    let served = Served::new(status);
    // Its process group, before anything may signal it.
    served.await_pid();
    Some(Box::new(served))
}

/// Makes a helper ready for the next command like this one, in the background (after
/// a command, so that building it does not slow the command down), from the second
/// command of a sandbox on.
pub(crate) fn prepare_next(
    standbys: &Arc<Standbys>,
    start: Start<'_>,
    cwd: &Path,
    scrubbed: &[String],
) {
    if standbys.asked.fetch_add(1, Ordering::Relaxed) == 0 {
        return;
    }
    let is_served = !standbys.missed.swap(false, Ordering::Relaxed)
        && !standbys.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty();
    if is_served || standbys.preparing.load(Ordering::SeqCst) > 0 {
        return;
    }
    let key = Key::new(start.exe, start.args, &start.spec, cwd, scrubbed);
    let next = Arc::clone(standbys);
    let (spec, cwd, scrubbed) = (start.spec, cwd.to_path_buf(), scrubbed.to_vec());
    standbys.preparing.fetch_add(1, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || {
        match prepare(key, &spec, &cwd, &scrubbed) {
            Ok(ready) => next.keep(ready),
            Err(NotReady::Changed) => {
                tracing::debug!("a mounted path changed while a view was built");
            }
            Err(NotReady::Failed(e)) => {
                tracing::debug!("no sandbox helper made ready: {e}; commands start the usual way");
                next.has_given_up.store(true, Ordering::Relaxed);
            }
        }
        next.preparing.fetch_sub(1, Ordering::SeqCst);
        next.changed.notify_waiters();
    });
}

/// Why no helper was made ready.
enum NotReady {
    /// A path the view mounts changed while it was built: try again next time.
    Changed,
    /// The helper failed.
    Failed(io::Error),
}

impl From<io::Error> for NotReady {
    fn from(e: io::Error) -> Self {
        Self::Failed(e)
    }
}

/// Starts a helper for `key` and waits until it is ready.
fn prepare(key: Key, spec: &Spec, cwd: &Path, scrubbed: &[String]) -> Result<Ready, NotReady> {
    let (ours, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(io::Error::from)?;
    let mut cmd = CommandWrap::with_new(&key.exe, |c| {
        c.args(&key.args)
            .current_dir(cwd)
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for name in scrubbed {
            c.env_remove(name);
        }
    });
    cmd.wrap(ProcessSession);
    let mut child = cmd.spawn()?;
    drop(cmd);
    rustix::net::sockopt::set_socket_timeout(
        &ours,
        rustix::net::sockopt::Timeout::Recv,
        Some(READY_WAIT),
    )
    .map_err(io::Error::from)?;
    let mut buf = [0u8; 16];
    let said = rustix::net::recv(&ours, &mut buf, RecvFlags::empty()).map(|(n, _)| n);
    if !matches!(said, Ok(n) if buf.get(..n) == Some(b"ready")) {
        let _ = child.start_kill();
        return Err(io::Error::other(format!("the helper did not get ready ({said:?})")).into());
    }
    // The view holds the files it found: any replaced while it was built would be
    // seen as they were.
    if identities(spec) != key.files {
        let _ = child.start_kill();
        return Err(NotReady::Changed);
    }
    Ok(Ready { key, sock: ours, child })
}

fn send(sock: BorrowedFd<'_>, fields: &[&[u8]], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let buf = fields.join(&0u8);
    if buf.len() > MAX_REQUEST {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the command is too long"));
    }
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many descriptors"));
    }
    let iov = [IoSlice::new(&buf)];
    let sent = rustix::net::sendmsg(sock, &iov, &mut control, SendFlags::NOSIGNAL)?;
    if sent != buf.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "the command was cut short"));
    }
    Ok(())
}

/// A command run by a ready helper. The helper's copies that run it are not rab's
/// children, so its process group and its exit come over the status socket; the
/// socket's end without an exit means the helper's copy was killed.
#[derive(Debug)]
struct Served {
    status: UnixStream,
    heard: Mutex<Heard>,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

/// What the status socket said so far (and bytes of a message not yet whole), and the
/// last signal sent.
#[derive(Debug, Default)]
struct Heard {
    pid: Option<u32>,
    exit: Option<u8>,
    is_closed: bool,
    signal: Option<i32>,
    partial: Vec<u8>,
}

impl Served {
    fn new(status: UnixStream) -> Self {
        let heard = Mutex::new(Heard::default());
        Self { status, heard, stdin: None, stdout: None, stderr: None }
    }

    fn heard(&self) -> std::sync::MutexGuard<'_, Heard> {
        self.heard.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits (at most [`PID_WAIT`]) for the process id, which the program to be sends
    /// first: normally well under a millisecond.
    fn await_pid(&self) {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let deadline = std::time::Instant::now() + PID_WAIT;
        loop {
            if self.hear().is_err() {
                return;
            }
            let heard = self.heard();
            if heard.pid.is_some() || heard.is_closed {
                return;
            }
            drop(heard);
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let timeout = Timespec::try_from(left).unwrap_or(Timespec { tv_sec: 2, tv_nsec: 0 });
            let mut fds = [PollFd::new(&self.status, PollFlags::IN)];
            let _ = rustix::event::poll(&mut fds, Some(&timeout));
        }
    }

    /// Reads what the status socket has, without waiting.
    fn hear(&self) -> io::Result<()> {
        loop {
            let mut buf = [0u8; 64];
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmCredentials(1))];
            let mut ancillary = RecvAncillaryBuffer::new(&mut space);
            let iov = &mut [IoSliceMut::new(&mut buf)];
            // Straight from the socket: tokio's view of its readiness may lag behind.
            let got = rustix::net::recvmsg(&self.status, iov, &mut ancillary, RecvFlags::DONTWAIT);
            match got.map(|r| r.bytes) {
                Ok(0) => {
                    self.heard().is_closed = true;
                    return Ok(());
                }
                Ok(n) => {
                    // The sender as rab sees it (a stream never joins two senders'
                    // messages in one read).
                    let sender = ancillary.drain().find_map(|m| match m {
                        RecvAncillaryMessage::ScmCredentials(c) => Some(c.pid),
                        _ => None,
                    });
                    let mut heard = self.heard();
                    heard.partial.extend_from_slice(&buf[..n]);
                    while heard.partial.len() >= 5 {
                        let msg: Vec<u8> = heard.partial.drain(..5).collect();
                        let n = u32::from_le_bytes([msg[1], msg[2], msg[3], msg[4]]);
                        match msg[0] {
                            PID_TAG => {
                                heard.pid =
                                    sender.map(|p| p.as_raw_nonzero().get().cast_unsigned());
                            }
                            EXIT_TAG => {
                                // The first: a helper finishing for a killed keeper
                                // may come after it.
                                heard.exit.get_or_insert(u8::try_from(n).unwrap_or(1));
                            }
                            _ => {}
                        }
                    }
                }
                Err(rustix::io::Errno::AGAIN) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The exit, once known.
    fn exit(&self) -> Option<io::Result<ExitStatus>> {
        let heard = self.heard();
        if let Some(code) = heard.exit {
            return Some(Ok(ExitStatus::from_raw(i32::from(code) << 8)));
        }
        if !heard.is_closed {
            return None;
        }
        Some(match (heard.pid, heard.signal) {
            (None, _) => Err(io::Error::other("the sandbox helper ended before the command")),
            // The keeper and the helper were killed: by rab's last signal.
            (Some(_), signal) => Ok(ExitStatus::from_raw(signal.unwrap_or(libc::SIGKILL))),
        })
    }
}

impl ChildWrapper for Served {
    fn inner(&self) -> &dyn ChildWrapper {
        self
    }

    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        self
    }

    fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
        self
    }

    fn stdin(&mut self) -> &mut Option<ChildStdin> {
        &mut self.stdin
    }

    fn stdout(&mut self) -> &mut Option<ChildStdout> {
        &mut self.stdout
    }

    fn stderr(&mut self) -> &mut Option<ChildStderr> {
        &mut self.stderr
    }

    fn id(&self) -> Option<u32> {
        let _ = self.hear();
        self.heard().pid
    }

    fn start_kill(&mut self) -> io::Result<()> {
        self.signal(libc::SIGKILL)
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.hear()?;
        self.exit().transpose()
    }

    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            loop {
                // Forget what tokio saw so far, then read: whatever comes after this
                // wakes the wait below.
                let _ = self.status.try_io(Interest::READABLE, || {
                    Err::<(), _>(io::Error::from(io::ErrorKind::WouldBlock))
                });
                self.hear()?;
                if let Some(exit) = self.exit() {
                    return exit;
                }
                self.status.readable().await?;
            }
        })
    }

    /// `signal` to the command's process group (`killpg`), as for a command rab
    /// started itself.
    fn signal(&self, sig: i32) -> io::Result<()> {
        let _ = self.hear();
        let mut heard = self.heard();
        if heard.exit.is_some() || heard.is_closed {
            return Ok(());
        }
        heard.signal = Some(sig);
        let (Some(pid), Some(signal)) =
            (heard.pid.and_then(|p| Pid::from_raw(p.cast_signed())), Signal::from_named_raw(sig))
        else {
            return Ok(());
        };
        Ok(rustix::process::kill_process_group(pid, signal)?)
    }
}
