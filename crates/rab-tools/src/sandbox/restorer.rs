//! The restorer: a copy of a command's helper, made before the helper enters any
//! namespace, that puts protected paths back if the helper is killed before it could.
//!
//! rab stops a command by killing its process group, and the helper that would put
//! protected paths back when the command ends is in that group: Ctrl+C, SIGTERM or
//! SIGHUP to rab (which then kills its commands), or SIGKILL to rab's whole process
//! group, left whatever the command had planted (class 1 of the third containment
//! audit). The restorer leads a session of its own, outside every namespace of the
//! command (it sees the real files, with the user's own rights), so nothing aimed at
//! rab or at the command reaches it. It waits on a pipe from the helper, which tells
//! it the process id of the command's PID namespace's first process, and `done` once
//! it put the paths back itself. At the pipe's end without `done`, it waits for that
//! first process to end (the kernel ends everything in the namespace first), then puts
//! the paths back, and ends. It also watches rab (`owner.rs`): when rab ends (killed
//! included), it kills that first process, so the command and all it started end at
//! once and the helper, or else the restorer, puts the paths back.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;

use rustix::process::{Pid, PidfdFlags};

use super::owner::Owner;
use super::spec::Spec;

/// What the helper tells the restorer: the namespace's first process is this one.
const FIRST: u8 = b'p';
/// What the helper tells the restorer: the paths are back, nothing to do.
const DONE: u8 = b'd';

/// The helper's end of the pipe to its restorer.
#[derive(Debug)]
pub(super) struct Restorer {
    says: std::io::PipeWriter,
}

impl Restorer {
    /// Starts the restorer for `spec`, watching rab through `owner` (nothing to
    /// restore and no rab to watch, or a helper with threads: `None`; `fork` copies one
    /// thread, and a lock another held would stay held).
    #[allow(unsafe_code)]
    pub(super) fn start(spec: &Spec, owner: Option<Owner>) -> Option<Self> {
        if spec.guarded.is_empty() && spec.fresh_git.is_empty() && owner.is_none() {
            return None;
        }
        if !super::serve::has_one_thread() {
            tracing::warn!("the sandbox helper has threads: no restorer");
            return None;
        }
        let (heard, says) = std::io::pipe().ok()?;
        // SAFETY: this process has one thread (checked above), so the copy holds no
        // lock another thread held; the copy only reads a pipe, waits and removes
        // files, and every path of it ends in `process::exit`.
        match unsafe { libc::fork() } {
            0 => {
                drop(says);
                restore_when_abandoned(spec, &heard, owner.as_ref());
            }
            pid if pid > 0 => {
                drop(heard);
                Some(Self { says })
            }
            _ => {
                tracing::warn!("no restorer: {}", std::io::Error::last_os_error());
                None
            }
        }
    }

    /// The command's PID namespace's first process is `pid` (as this process sees it).
    pub(super) fn watch(&mut self, pid: u32) {
        let mut message = [FIRST, 0, 0, 0, 0];
        message[1..].copy_from_slice(&pid.to_le_bytes());
        let _ = self.says.write_all(&message);
    }

    /// The helper put the paths back itself: the restorer ends.
    pub(super) fn done(mut self) {
        let _ = self.says.write_all(&[DONE]);
    }
}

/// The restorer's life (see the module's doc).
fn restore_when_abandoned(spec: &Spec, heard: &std::io::PipeReader, owner: Option<&Owner>) -> ! {
    use rustix::event::{PollFd, PollFlags};
    let _ = rustix::process::setsid();
    // Not a holder of the command's streams: rab waits for their end.
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdin(&null);
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
    let mut first: Option<OwnedFd> = None;
    let mut has_rab_ended = owner.is_some_and(|o| o.fd().is_none());
    let mut is_killed = false;
    loop {
        if has_rab_ended
            && !is_killed
            && let Some(first) = &first
        {
            let _ = rustix::process::pidfd_send_signal(first, rustix::process::Signal::KILL);
            is_killed = true;
        }
        let rab = owner.and_then(Owner::fd).filter(|_| !has_rab_ended);
        let mut fds = vec![PollFd::new(heard, PollFlags::IN)];
        if let Some(rab) = &rab {
            fds.push(PollFd::new(rab, PollFlags::IN));
        }
        match rustix::event::poll(&mut fds, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
        let said = !fds[0].revents().is_empty();
        has_rab_ended |= fds.get(1).is_some_and(|f| !f.revents().is_empty());
        drop(fds);
        if !said {
            continue;
        }
        let mut tag = [0u8; 1];
        match (&*heard).read(&mut tag) {
            Ok(1) if tag[0] == DONE => std::process::exit(0),
            Ok(1) if tag[0] == FIRST => {
                let mut pid = [0u8; 4];
                if (&*heard).read_exact(&mut pid).is_err() {
                    break;
                }
                first = i32::try_from(u32::from_le_bytes(pid))
                    .ok()
                    .and_then(Pid::from_raw)
                    .and_then(|p| rustix::process::pidfd_open(p, PidfdFlags::empty()).ok());
            }
            Ok(1) => {}
            Ok(_) | Err(_) => break,
        }
    }
    if let Some(first) = &first {
        // Ended once readable; the kernel ends the rest of the namespace before.
        loop {
            let mut fds = [PollFd::new(first, PollFlags::IN)];
            match rustix::event::poll(&mut fds, None) {
                Ok(n) if n > 0 => break,
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
        }
    }
    let _ = super::guard::restore(&spec.guarded, &spec.fresh_git);
    std::process::exit(0)
}
