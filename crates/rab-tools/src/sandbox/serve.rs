//! The helper side of a ready helper (`standby.rs`): one helper serves every confined
//! command of a view. It makes the user namespace and the view once; commands then run
//! under *keepers*, copies of the helper (`clone`: no new exec of rab, no view to build
//! again), each the first process of a new PID namespace, with a mount namespace of its
//! own holding that namespace's `/proc`:
//!
//! - a keeper starts a *program to be* (`fork`), which leads a new session (the
//!   command's process group, apart from the keeper's), makes a mount and IPC namespace
//!   (and network namespace without network) of its own with new empty scratch folders
//!   (`/dev/shm`, the user's runtime folder, `/tmp` without a private one), confines
//!   itself (loopback, Landlock, no capabilities) and waits on the helper's standard
//!   input (a `SOCK_SEQPACKET` socket from rab) for a command: `CWD\0PROGRAM\0ARG…`
//!   with its streams and a status socket (`SCM_RIGHTS`). It tells rab its process id
//!   on the status socket (rab reads it from the message's credentials), hands the
//!   status socket to the keeper and the helper (its error stream to the keeper only),
//!   tells the helper it took a command, and `exec`s the program. So the program is not
//!   the namespace's init (which ignores every signal it has no handler for), and a
//!   SIGTERM stops it as anywhere;
//! - when the program ends (a SIGKILL from rab to its process group included), the
//!   keeper ends everything else in its PID namespace, so nothing a command started
//!   meets the next, puts guarded protected paths back, sends rab the exit code and
//!   starts the next program to be. So a command costs one `fork` and one `exec`, and
//!   all of its set-up happens before it is asked for.
//!
//! The helper keeps one program ready: it starts another keeper when a command waits
//! and every keeper is busy (commands running at once). If a keeper is killed while it
//! runs a command (the kernel then ends its namespace), the helper, which watches every
//! keeper, puts protected paths back and tells rab instead. The helper never runs a
//! program and is never confined: it only makes copies of itself, and no confined
//! process can reach it (it is outside every command's PID namespace, and Landlock
//! keeps the program's signals inside its own domain). It ends with its standard
//! input, once its commands ended.

use std::ffi::OsString;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus};

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use rustix::process::{Pid, WaitOptions};
use rustix::thread::UnshareFlags;

use super::owner::Owner;
use super::spec::Spec;

/// The largest request: the kernel takes at most 128 KiB per argument, and a command
/// is one argument of `sh -c`.
pub(super) const MAX_REQUEST: usize = 256 * 1024;

/// The messages on a command's status socket: the command's process group (sent by
/// the program to be, whose process id it is), then the exit code.
pub(super) const PID_TAG: u8 = b'p';
/// See [`PID_TAG`].
pub(super) const EXIT_TAG: u8 = b'x';

/// What a program to be tells the helper: ready for a command, then taken.
const SLOT_READY: u8 = b'r';
const SLOT_TAKEN: u8 = b't';

/// A keeper's exit code when a program to be failed before it took a command (its
/// commands before were finished).
const NO_COMMAND: u8 = 125;

/// The most keepers a helper keeps: one per command running at once, and one ready.
const MAX_KEEPERS: usize = 16;

/// A keeper, watched by the helper.
struct Keeper {
    pid: Pid,
    /// Readable once the keeper ended (`pidfd_open`).
    ended: OwnedFd,
    /// What its programs to be say: ready, then taken.
    says: io::PipeReader,
    /// `says` reached its end (the keeper is ending).
    is_quiet: bool,
    /// Where its programs hand over their command's status socket.
    hand: OwnedFd,
    /// No program of it got ready yet.
    is_starting: bool,
    /// A program of it waits for a command.
    is_ready: bool,
    /// The status socket of the command it runs, to finish that if it is killed.
    running: Option<OwnedFd>,
}

/// What the helper saw of its keepers and of rab's socket.
#[derive(Default)]
struct Helper {
    keepers: Vec<Keeper>,
    /// rab was told the helper is ready.
    has_said_ready: bool,
    /// No more keepers: rab closed its socket, or one could not get ready.
    is_done: bool,
    /// rab itself: when it ends, so does every command ([`Owner`]).
    owner: Option<Owner>,
    /// rab ended and every keeper was killed.
    has_owner_ended: bool,
}

/// Keeps a program ready for the next command (see the module's documentation); says
/// `ready` on standard input once the first is. Returns when rab closes standard
/// input, once every command still running ended.
pub(super) fn serve(spec: &Spec) -> Result<(), String> {
    // `fork` copies only the calling thread: with another thread, a lock it held would
    // stay held in the copy forever.
    if !has_one_thread() {
        return Err("the helper has more than one thread; it cannot serve commands".into());
    }
    let control = io::stdin().as_fd().try_clone_to_owned().map_err(|e| format!("stdin: {e}"))?;
    let mut helper = Helper { owner: Owner::watch(spec.owner), ..Helper::default() };
    helper.add_keeper(spec, &control)?;
    while !helper.keepers.is_empty() {
        helper.watch(spec, &control)?;
    }
    if helper.has_owner_ended {
        // A command taken just before rab ended may not have been heard of yet.
        for note in super::guard::restore(&spec.guarded, &spec.fresh_git) {
            tracing::warn!("rab sandbox: {note}");
        }
    }
    if helper.has_said_ready { Ok(()) } else { Err("no program got ready".into()) }
}

impl Helper {
    /// Starts a keeper in new PID and mount namespaces.
    fn add_keeper(&mut self, spec: &Spec, control: &OwnedFd) -> Result<(), String> {
        let (heard, says) = io::pipe().map_err(|e| format!("making a pipe: {e}"))?;
        let (ours, theirs) = hand_sockets()?;
        match fork_into(UnshareFlags::NEWPID | UnshareFlags::NEWNS)? {
            Forked::Child => {
                // The other keepers' descriptors are the helper's business.
                drop((heard, ours, std::mem::take(&mut self.keepers)));
                let code = keep(spec, control, says, theirs).unwrap_or_else(|e| {
                    let _ = writeln!(io::stderr(), "rab sandbox: {e}");
                    126
                });
                std::process::exit(i32::from(code));
            }
            Forked::Parent(pid) => {
                drop((says, theirs));
                let ended = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
                    .map_err(|e| format!("watching a keeper: {e}"))?;
                self.keepers.push(Keeper {
                    pid,
                    ended,
                    says: heard,
                    is_quiet: false,
                    hand: ours,
                    is_starting: true,
                    is_ready: false,
                    running: None,
                });
                Ok(())
            }
        }
    }

    /// Waits for what a keeper says or its end, or, with no program ready or on its
    /// way, for a command that waits (then starts another keeper: commands run at once).
    fn watch(&mut self, spec: &Spec, control: &OwnedFd) -> Result<(), String> {
        use rustix::event::{PollFd, PollFlags};
        if !self.has_owner_ended && self.owner.as_ref().is_some_and(Owner::has_ended) {
            self.end_everything();
        }
        let wants_keeper = !self.is_done
            && self.keepers.len() < MAX_KEEPERS
            && !self.keepers.iter().any(|k| k.is_ready || k.is_starting);
        let mut fds: Vec<PollFd<'_>> = Vec::new();
        if wants_keeper {
            fds.push(PollFd::new(control, PollFlags::IN));
        }
        for k in &self.keepers {
            // A pipe at its end stays readable: only the keeper's end counts then.
            if k.is_quiet {
                fds.push(PollFd::new(&k.ended, PollFlags::IN));
            } else {
                fds.push(PollFd::new(&k.says, PollFlags::IN));
            }
            fds.push(PollFd::new(&k.ended, PollFlags::IN));
        }
        // Last, and only to wake up: the top of the next round looks at it.
        let owner = self.owner.as_ref().and_then(Owner::fd).filter(|_| !self.has_owner_ended);
        if let Some(fd) = &owner {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        match rustix::event::poll(&mut fds, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("waiting for the keepers: {e}")),
        }
        let seen: Vec<PollFlags> = fds.iter().map(PollFd::revents).collect();
        drop(fds);
        let (asked, keepers) = seen.split_at(usize::from(wants_keeper));
        for i in (0..self.keepers.len()).rev() {
            if !self.keepers[i].is_quiet && !keepers[2 * i].is_empty() {
                self.hear(control, i)?;
            }
            if !keepers[2 * i + 1].is_empty() {
                self.collect(spec, i);
            }
        }
        match asked.first() {
            Some(&flags) if flags.intersects(PollFlags::HUP | PollFlags::ERR) => {
                self.is_done = true
            }
            Some(&flags) if !flags.is_empty() => self.add_keeper(spec, control)?,
            _ => {}
        }
        Ok(())
    }

    /// rab ended: every keeper is killed (its PID namespace, the command and all it
    /// started end with it), and [`Helper::collect`] puts protected paths back.
    fn end_everything(&mut self) {
        self.has_owner_ended = true;
        self.is_done = true;
        for k in &self.keepers {
            let _ = rustix::process::kill_process(k.pid, rustix::process::Signal::KILL);
        }
    }

    /// Reads what the keeper `i`'s program to be says.
    fn hear(&mut self, control: &OwnedFd, i: usize) -> Result<(), String> {
        let k = &mut self.keepers[i];
        let mut said = [0u8; 1];
        match k.says.read(&mut said) {
            Ok(1) if said[0] == SLOT_READY => {
                k.is_ready = true;
                k.is_starting = false;
                // The command before ended.
                k.running = None;
                if !self.has_said_ready {
                    rustix::net::send(control, b"ready", SendFlags::NOSIGNAL)
                        .map_err(|e| format!("saying ready: {e}"))?;
                    self.has_said_ready = true;
                }
            }
            Ok(1) if said[0] == SLOT_TAKEN => {
                k.is_ready = false;
                k.running = receive(&k.hand, &mut [0u8; 16], 1, RecvFlags::DONTWAIT)
                    .ok()
                    .flatten()
                    .and_then(|(_, fds)| fds.into_iter().next());
            }
            Ok(_) | Err(_) => {
                k.is_quiet = true;
                k.is_ready = false;
                k.is_starting = false;
            }
        }
        Ok(())
    }

    /// Collects the keeper `i` if it ended; finishes its command when it ended while
    /// running one (killed, or failed). A keeper that did not end cleanly (at the end
    /// of rab's socket) makes the helper start no more.
    fn collect(&mut self, spec: &Spec, i: usize) {
        let Ok(Some((_, status))) =
            rustix::process::waitpid(Some(self.keepers[i].pid), WaitOptions::NOHANG)
        else {
            return;
        };
        let keeper = self.keepers.swap_remove(i);
        let ended = ExitStatus::from_raw(status.as_raw());
        if !ended.success() {
            self.is_done = true;
        }
        if let Some(running) = keeper.running
            && !matches!(ended.code().and_then(|c| u8::try_from(c).ok()), Some(0 | NO_COMMAND))
        {
            // Killed while running a command (the namespace ended with it): the helper
            // puts protected paths back and tells rab.
            let code = super::namespaces::exit_code(ended);
            for note in super::guard::restore(&spec.guarded, &spec.fresh_git) {
                tracing::warn!("rab sandbox: {note}");
            }
            let _ = tell(running.as_fd(), EXIT_TAG, u32::from(code));
        }
    }
}

/// Whether this process has a single thread (`/proc/self/task` lists each one).
pub(super) fn has_one_thread() -> bool {
    std::fs::read_dir("/proc/self/task").map(|d| d.count() == 1).unwrap_or(false)
}

/// Once everything in the namespace has ended: puts guarded protected paths back (notes
/// on the command's error stream, which then closes) and sends rab the exit code, when
/// the program to be took a command (`hand` then holds its status socket and error
/// stream). Whether it had.
fn finish(spec: &Spec, hand: &OwnedFd, code: u8) -> Result<bool, String> {
    let Ok(Some((_, fds))) = receive(hand, &mut [0u8; 16], 3, RecvFlags::DONTWAIT) else {
        return Ok(false);
    };
    let [status, errors, mounts]: [OwnedFd; 3] =
        fds.try_into().map_err(|_| "no status".to_owned())?;
    let mut errors = std::fs::File::from(errors);
    for note in super::guard::restore(&spec.guarded, &spec.fresh_git) {
        let _ = writeln!(errors, "rab sandbox: {note}");
    }
    drop(errors);
    tell(status.as_fd(), EXIT_TAG, u32::from(code))?;
    // The command's mount namespace ends here, once rab heard the exit.
    drop(mounts);
    Ok(true)
}

/// The PID namespace's first process: mounts its `/proc`, then, command after command,
/// starts a program to be and waits for it (collecting every orphan on the way), ends
/// everything left in the namespace and finishes the command ([`finish`]). Returns when
/// a program ended without a command: at the end of rab's socket (0), or when it failed
/// ([`NO_COMMAND`]).
fn keep(
    spec: &Spec,
    control: &OwnedFd,
    mut says: io::PipeWriter,
    helper: OwnedFd,
) -> Result<u8, String> {
    use rustix::mount::MountFlags;
    // Apart from the helper's session: what ends a helper leaves its commands.
    rustix::process::setsid().map_err(|e| format!("setsid: {e}"))?;
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    rustix::mount::mount("proc", "/proc", "proc", flags, None)
        .map_err(|e| format!("mounting the sandbox's /proc: {e}"))?;
    loop {
        let (ours, theirs) = hand_sockets()?;
        let program = match fork()? {
            Forked::Child => {
                drop(ours);
                let e = wait_for_command(spec, control, &mut says, [&helper, &theirs]);
                let _ = writeln!(io::stderr(), "rab sandbox: {e}");
                std::process::exit(126);
            }
            Forked::Parent(pid) => pid,
        };
        drop(theirs);
        let code = loop {
            match rustix::process::wait(WaitOptions::empty()) {
                Ok(Some((pid, s))) if pid == program => {
                    break super::namespaces::exit_code(ExitStatus::from_raw(s.as_raw()));
                }
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(format!("waiting for the program: {e}")),
            }
        };
        // What the command left running ends now (as it would with a namespace of its
        // own), so that nothing changes protected paths once they are put back, and
        // nothing meets the next command.
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(-1), nix::sys::signal::SIGKILL);
        while let Ok(Some(_)) | Err(rustix::io::Errno::INTR) =
            rustix::process::wait(WaitOptions::empty())
        {}
        if !finish(spec, &ours, code)? {
            return Ok(if code == 0 { 0 } else { NO_COMMAND });
        }
    }
}

/// The namespaces of a command besides its keeper's PID namespace: mount (for its own
/// scratch folders) and IPC, and network when it is off.
fn command_namespaces(spec: &Spec) -> UnshareFlags {
    let mut flags = UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    if !spec.network {
        flags |= UnshareFlags::NEWNET;
    }
    flags
}

/// The program to be: makes its namespaces and scratch folders, confines itself, says
/// it is ready, waits for a command and becomes it. Returns only on failure (or at the
/// end of standard input, quietly).
fn wait_for_command(
    spec: &Spec,
    control: &OwnedFd,
    says: &mut io::PipeWriter,
    hands: [&OwnedFd; 2],
) -> String {
    // The command's session and process group, apart from the keeper's: what rab
    // signals to the command, and what the program signals as its group (`kill 0`),
    // leaves the keeper, which then finishes the command.
    if let Err(e) = rustix::process::setsid() {
        return format!("setsid: {e}");
    }
    if let Err(e) = super::namespaces::unshare(command_namespaces(spec)) {
        return format!("making the namespaces: {e}");
    }
    if let Err(e) = super::namespaces::fresh_scratch(spec) {
        return format!("the sandbox's scratch: {e}");
    }
    // For the keeper, which so ends the mount namespace (unmounting the whole view)
    // after telling rab the exit, rather than the command's last process before.
    let mounts = match std::fs::File::open("/proc/self/ns/mnt") {
        Ok(f) => OwnedFd::from(f),
        Err(e) => return format!("the mount namespace: {e}"),
    };
    if let Err(e) = super::namespaces::confine(spec) {
        return e;
    }
    if says.write_all(&[SLOT_READY]).is_err() {
        std::process::exit(0);
    }
    let mut buf = vec![0u8; MAX_REQUEST];
    let (fields, fds) = match receive(control, &mut buf, 4, RecvFlags::empty()) {
        Ok(Some(got)) => got,
        Ok(None) => std::process::exit(0),
        Err(e) => return e,
    };
    let Ok([input, output, errors, status]) = <[OwnedFd; 4]>::try_from(fds) else {
        return "a malformed command".into();
    };
    // rab reads this process's id from the message's credentials (`SO_PASSCRED`): the
    // kernel gives it as rab sees it, where this process has another.
    if let Err(e) = tell(status.as_fd(), PID_TAG, 0) {
        return e;
    }
    // To the helper, which finishes the command if the keeper is killed, and to the
    // keeper, which finishes it. Not the error stream to the helper: it would stay
    // open until the helper hears of the next command, and rab reads it to its end.
    let [helper, keeper] = hands;
    let handed = hand_over(helper.as_fd(), &[status.as_fd()]).and_then(|()| {
        hand_over(keeper.as_fd(), &[status.as_fd(), errors.as_fd(), mounts.as_fd()])
    });
    if let Err(e) = handed {
        return format!("handing the status over: {e}");
    }
    // Once handed over: the helper takes its copy when it hears this.
    let _ = says.write_all(&[SLOT_TAKEN]);
    drop((status, mounts));
    let mut fields = fields.into_iter();
    let (Some(cwd), Some(program)) = (fields.next(), fields.next()) else {
        return "a malformed command".into();
    };
    let dup = rustix::stdio::dup2_stdin(&input)
        .and_then(|()| rustix::stdio::dup2_stdout(&output))
        .and_then(|()| rustix::stdio::dup2_stderr(&errors));
    if let Err(e) = dup {
        return format!("taking the command's streams: {e}");
    }
    drop((input, output, errors));
    if rustix::process::chdir(Path::new(&cwd)).is_err() {
        let _ = rustix::process::chdir("/");
    }
    let mut asked = spec.clone();
    asked.program = program;
    asked.args = fields.collect();
    exec(&asked)
}

/// A message's fields and descriptors.
type Message = (Vec<OsString>, Vec<OwnedFd>);

/// One message from `sock`: its fields (split at NUL) and exactly `fds` descriptors;
/// `None` at the end of the socket.
fn receive(
    sock: &OwnedFd,
    buf: &mut [u8],
    fds: usize,
    flags: RecvFlags,
) -> Result<Option<Message>, String> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let got = loop {
        let iov = &mut [IoSliceMut::new(buf)];
        match rustix::net::recvmsg(sock, iov, &mut ancillary, flags | RecvFlags::CMSG_CLOEXEC) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other.map_err(|e| format!("reading a command: {e}"))?,
        }
    };
    let mut received: Vec<OwnedFd> = Vec::new();
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            received.extend(rights);
        }
    }
    if got.bytes == 0 && received.is_empty() {
        return Ok(None);
    }
    if got.flags.intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC) || received.len() != fds {
        return Err("a malformed command".into());
    }
    let fields = buf[..got.bytes].split(|b| *b == 0).map(|f| OsString::from_vec(f.to_vec()));
    Ok(Some((fields.collect(), received)))
}

/// A connected pair of sockets for handing descriptors over.
fn hand_sockets() -> Result<(OwnedFd, OwnedFd), String> {
    rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)
        .map_err(|e| format!("making a socket: {e}"))
}

/// Passes `fds` over `sock`.
fn hand_over(sock: BorrowedFd<'_>, fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other("too many descriptors"));
    }
    rustix::net::sendmsg(sock, &[IoSlice::new(b"s")], &mut control, SendFlags::NOSIGNAL)?;
    Ok(())
}

/// Becomes the program; returns only on failure.
fn exec(asked: &Spec) -> String {
    let mut cmd = Command::new(&asked.program);
    cmd.args(&asked.args);
    if asked.tmp.is_some() {
        cmd.env("TMPDIR", "/tmp");
    }
    cmd.envs(asked.env.iter().map(|(k, v)| (k, v)));
    let e = cmd.exec();
    format!("could not run {}: {e}", asked.program.to_string_lossy())
}

/// One message on the status socket: a tag and a number.
fn tell(status: BorrowedFd<'_>, tag: u8, n: u32) -> Result<(), String> {
    let mut msg = [tag, 0, 0, 0, 0];
    msg[1..].copy_from_slice(&n.to_le_bytes());
    rustix::net::send(status, &msg, SendFlags::NOSIGNAL)
        .map(drop)
        .map_err(|e| format!("telling rab: {e}"))
}

/// Which side of a `fork` this is.
enum Forked {
    /// The copy.
    Child,
    /// The original, with the copy's process id.
    Parent(Pid),
}

/// `fork(2)`: a copy of this process (a keeper's copy becomes the program).
#[allow(unsafe_code)]
fn fork() -> Result<Forked, String> {
    // SAFETY: the helper checked in `serve` that it has one thread (and starts none),
    // and so has every copy, so the copy holds no lock another thread held, and may
    // allocate and run any code; every path of the copy ends in `exec` or
    // `process::exit`.
    let pid = unsafe { libc::fork() };
    forked(pid.into(), "fork")
}

/// A copy of this process in new `namespaces` (`clone(2)` with no stack of its own:
/// a `fork` that makes the namespaces as it copies; `unshare` cannot make a PID
/// namespace for the caller's next child twice).
#[allow(unsafe_code)]
fn fork_into(namespaces: UnshareFlags) -> Result<Forked, String> {
    let flags = libc::c_ulong::from(namespaces.bits())
        | libc::c_ulong::try_from(libc::SIGCHLD).unwrap_or(17);
    // SAFETY: as for `fork`: one thread, and every path of the copy ends in
    // `process::exit`. Without a stack of its own (0) the copy goes on from here on a
    // copy of this stack, as after `fork`, and no parent or child thread id is written
    // (both pointers are null). Unlike the C library's `fork`, it runs no `atfork`
    // handlers (rab registers none) and leaves the copy's cached thread id the helper's,
    // which only `raise` and error-checking mutexes read (the copy uses neither).
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    forked(pid, "clone")
}

/// What `fork` or `clone` returned.
fn forked(pid: libc::c_long, what: &str) -> Result<Forked, String> {
    match pid {
        0 => Ok(Forked::Child),
        p if p > 0 => i32::try_from(p)
            .ok()
            .and_then(Pid::from_raw)
            .map(Forked::Parent)
            .ok_or_else(|| what.to_owned()),
        _ => Err(format!("{what}: {}", io::Error::last_os_error())),
    }
}
