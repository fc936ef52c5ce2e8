//! A sandbox helper made ready before its command is known, so a command waits for
//! none of the helper's set-up: starting rab's executable again, the namespaces, the
//! view, `/proc`, Landlock. After each confined command (from the second on: a run with
//! one command would only pay for it), rab starts the helper for the next one with
//! `--standby`; it builds everything as for a command, says `ready` on
//! its standard input (a `SOCK_SEQPACKET` socket) and waits there for the command: one
//! message `CWD\0PROGRAM\0ARG…` with the command's standard streams passed along
//! (`SCM_RIGHTS`). Then it is the helper of that command, as if started for it: the
//! program runs as its child, protected paths are put back after it, the exit code is
//! its own. One command per helper, so nothing a command leaves behind meets the next.
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
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessSession};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

use super::spec::Spec;

/// The largest request: the kernel takes at most 128 KiB per argument, and a command
/// is one argument of `sh -c`.
const MAX_REQUEST: usize = 256 * 1024;

/// How long rab waits for a helper to be ready before letting it go.
const READY_WAIT: Duration = Duration::from_secs(10);

/// How long a command waits at most for a helper being made ready: about what
/// starting one costs.
const SETTLE: Duration = Duration::from_millis(5);

/// Ready helpers kept: the model's commands and the user's (`!cmd`) each have one.
const KEPT: usize = 2;

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
    /// A helper could not get ready (a kernel without proc's `pidns` option): commands
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

    /// The ready helper for `key`, when one is there and still running.
    fn take(&self, key: &Key) -> Option<Ready> {
        let mut ready = self.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = ready.iter().position(|r| &r.key == key)?;
        let mut found = ready.remove(i);
        drop(ready);
        match found.child.try_wait() {
            Ok(None) => Some(found),
            other => {
                tracing::debug!("a ready sandbox helper is gone: {other:?}");
                None
            }
        }
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
/// `stderr` as its streams and no input. `None`: start it the usual way.
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
    let mut ready = standbys.take(&key)?;
    let null = std::fs::File::open("/dev/null").ok()?;
    let mut fields: Vec<&[u8]> = vec![cwd.as_os_str().as_bytes(), start.program.as_bytes()];
    fields.extend(start.program_args.iter().map(|a| a.as_bytes()));
    match send(ready.sock.as_fd(), &fields, &[null.as_fd(), stdout, stderr]) {
        Ok(()) => {
            tracing::debug!("a command started through a ready sandbox helper");
            Some(ready.child)
        }
        Err(e) => {
            tracing::debug!("a ready sandbox helper did not take the command: {e}");
            let _ = ready.child.start_kill();
            None
        }
    }
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
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
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

/// The helper's side: says it is ready on standard input, then waits there for the
/// command and makes it this process's own (its streams as 0, 1 and 2, its working
/// folder); `Some(None)` when rab let the helper go without one.
pub(super) fn receive(spec: &Spec) -> Result<Option<Option<Spec>>, String> {
    let stdin = io::stdin();
    let sock = stdin.as_fd();
    rustix::net::send(sock, b"ready", SendFlags::NOSIGNAL)
        .map_err(|e| format!("saying ready: {e}"))?;
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = loop {
        let iov = &mut [IoSliceMut::new(&mut buf)];
        match rustix::net::recvmsg(sock, iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other.map_err(|e| format!("reading the command: {e}"))?,
        }
    };
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if got.bytes == 0 && fds.is_empty() {
        return Ok(Some(None));
    }
    if got.flags.intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC) {
        return Err("the command was cut short".into());
    }
    let mut fields = buf[..got.bytes].split(|b| *b == 0).map(|f| OsString::from_vec(f.to_vec()));
    let (Some(cwd), Some(program), [input, output, errors]) =
        (fields.next(), fields.next(), fds.as_slice())
    else {
        return Err("a malformed command".into());
    };
    rustix::stdio::dup2_stdin(input).map_err(|e| format!("taking the input: {e}"))?;
    rustix::stdio::dup2_stdout(output).map_err(|e| format!("taking the output: {e}"))?;
    rustix::stdio::dup2_stderr(errors).map_err(|e| format!("taking the output: {e}"))?;
    drop(fds);
    rustix::process::chdir(Path::new(&cwd))
        .or_else(|_| rustix::process::chdir("/"))
        .map_err(|e| format!("chdir: {e}"))?;
    let mut asked = spec.clone();
    asked.standby = false;
    asked.program = program;
    asked.args = fields.collect();
    Ok(Some(Some(asked)))
}
