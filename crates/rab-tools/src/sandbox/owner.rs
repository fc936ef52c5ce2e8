//! The sandbox helper's watch on rab. A command's helper runs in a session of its own,
//! so nothing that stops rab (Ctrl+C, a closed terminal, SIGTERM, SIGKILL to rab or to
//! its whole process group) reaches it; when rab ends, the helper ends the command and
//! everything it started, and puts protected paths back, at once: a file a command
//! planted at a protected path never outlives rab's end by more than that (class 1 of
//! the third containment audit). rab's process id comes in the spec; the watch is a
//! pidfd, which names that process and no later one with the same number. A ready
//! helper polls it with its keepers (`serve.rs`); a one-command helper, which cannot
//! start a thread once it made its PID namespace, hands it to its restorer
//! (`restorer.rs`).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::process::{Pid, PidfdFlags};

/// A watch on rab.
#[derive(Debug)]
pub(super) struct Owner {
    /// Readable once rab ended; `None` when it had ended before the watch began.
    fd: Option<OwnedFd>,
}

impl Owner {
    /// Watches process `pid`, rab, which started this helper (`None`: not named, no
    /// watch). Had rab ended already (no such process, or this process was handed to
    /// another parent), the watch says so at once.
    pub(super) fn watch(pid: Option<u32>) -> Option<Self> {
        let raw = i32::try_from(pid?).ok()?;
        let fd = Pid::from_raw(raw)
            .and_then(|p| rustix::process::pidfd_open(p, PidfdFlags::empty()).ok());
        // Opened after rab ended, the number may name another process: the parent
        // tells. (This helper is rab's own child.)
        let is_parent = rustix::process::getppid().is_some_and(|p| p.as_raw_nonzero().get() == raw);
        Some(Self { fd: fd.filter(|_| is_parent) })
    }

    /// What to poll: readable once rab ended. `None` when it has ended already.
    pub(super) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(AsFd::as_fd)
    }

    /// Whether rab has ended (does not wait).
    pub(super) fn has_ended(&self) -> bool {
        let Some(fd) = &self.fd else { return true };
        let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
        let now = rustix::event::Timespec::default();
        matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(n) if n > 0)
    }
}
