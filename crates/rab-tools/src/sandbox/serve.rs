//! The helper side of a ready helper (`standby.rs`): one helper serves every confined
//! command of a view. It makes the user namespace and the view once; then it keeps a
//! *slot* ready for the next command, made with `fork` (no new exec of rab, no view to
//! build again), and a new slot each time one is taken:
//!
//! - the slot's *leader* leads a new session and makes a new PID, mount and IPC
//!   namespace (and network namespace without network), so nothing one command starts
//!   meets the next;
//! - its child is the PID namespace's first process (the *keeper*), which leads the
//!   command's session and process group (apart from the leader's, so neither rab's
//!   signals to the group nor the program's `kill 0` reach the leader): it mounts that
//!   namespace's `/proc` and new empty scratch folders (`/dev/shm`, the user's runtime
//!   folder) in the slot's mount namespace and waits for the program;
//! - the keeper's child (the program to be) confines itself (loopback, Landlock, no
//!   capabilities) and waits on the helper's standard input (a `SOCK_SEQPACKET`
//!   socket from rab) for a command: `CWD\0PROGRAM\0ARG…` with its streams and a
//!   status socket (`SCM_RIGHTS`). It tells the helper the slot is taken, tells rab the
//!   command's process group on the status socket, hands the status socket and its
//!   error stream to the keeper and the leader, and `exec`s the program. So the
//!   program is not the namespace's init (which ignores every signal it has no
//!   handler for), and a SIGTERM stops it as anywhere.
//!
//! When the program ends, the keeper ends whatever it left running in the namespace,
//! puts guarded protected paths back and sends rab the exit code; when rab kills the
//! keeper (a SIGKILL to the command's group), the kernel ends the namespace and the
//! leader does that instead. The helper never runs a program and is never confined: it
//! only makes copies of itself, and no confined process can reach it or the leader
//! (they are outside every command's PID namespace, and Landlock keeps the program's
//! signals inside its own domain). It ends with its standard input.

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

use super::spec::Spec;

/// The largest request: the kernel takes at most 128 KiB per argument, and a command
/// is one argument of `sh -c`.
pub(super) const MAX_REQUEST: usize = 256 * 1024;

/// The messages on a command's status socket: the command's process group (the
/// keeper's process id), then the exit code.
pub(super) const PID_TAG: u8 = b'p';
/// See [`PID_TAG`].
pub(super) const EXIT_TAG: u8 = b'x';

/// What a slot tells the helper: ready for a command, then taken.
const SLOT_READY: u8 = b'r';
const SLOT_TAKEN: u8 = b't';

/// Builds slot after slot (see the module's documentation); says `ready` on standard
/// input once the first is. Returns when rab closes standard input.
pub(super) fn serve(spec: &Spec) -> Result<(), String> {
    // `fork` copies only the calling thread: with another thread, a lock it held would
    // stay held in the copy forever.
    if !has_one_thread() {
        return Err("the helper has more than one thread; it cannot serve commands".into());
    }
    let control = io::stdin().as_fd().try_clone_to_owned().map_err(|e| format!("stdin: {e}"))?;
    let mut is_first = true;
    loop {
        let (mut heard, says) = io::pipe().map_err(|e| format!("making a pipe: {e}"))?;
        match fork()? {
            Forked::Child => {
                drop(heard);
                let code = slot(spec, control, says).unwrap_or_else(|e| {
                    let _ = writeln!(io::stderr(), "rab sandbox: {e}");
                    126
                });
                std::process::exit(i32::from(code));
            }
            Forked::Parent(_) => drop(says),
        }
        let mut said = [0u8; 1];
        if !matches!(heard.read(&mut said), Ok(1) if said[0] == SLOT_READY) {
            reap_ended();
            return if is_first { Err("the first slot did not get ready".into()) } else { Ok(()) };
        }
        if is_first {
            rustix::net::send(&control, b"ready", SendFlags::NOSIGNAL)
                .map_err(|e| format!("saying ready: {e}"))?;
            is_first = false;
        }
        let taken = matches!(heard.read(&mut said), Ok(1) if said[0] == SLOT_TAKEN);
        reap_ended();
        if !taken {
            // The slot saw the end of standard input (or failed): nothing more to do.
            return Ok(());
        }
    }
}

/// Whether this process has a single thread (`/proc/self/task` lists each one).
fn has_one_thread() -> bool {
    std::fs::read_dir("/proc/self/task").map(|d| d.count() == 1).unwrap_or(false)
}

/// Collects the leaders that ended, without waiting for the others.
fn reap_ended() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

/// A slot's leader: returns its own exit code (0 once the keeper finished the command,
/// else the keeper's end as an exit code).
fn slot(spec: &Spec, control: OwnedFd, says: io::PipeWriter) -> Result<u8, String> {
    // Its own session: rab's signals to the command's process group (the keeper's)
    // leave it, so it puts protected paths back after a kill too.
    rustix::process::setsid().map_err(|e| format!("setsid: {e}"))?;
    // Standard input is rab's socket: only the program to be reads it.
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    rustix::stdio::dup2_stdin(&null).map_err(|e| format!("/dev/null: {e}"))?;
    let mut flags = UnshareFlags::NEWPID | UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    if !spec.network {
        flags |= UnshareFlags::NEWNET;
    }
    super::namespaces::unshare(flags).map_err(|e| format!("making the namespaces: {e}"))?;
    let (ours, theirs) = hand_sockets()?;
    let (mut group_r, mut group_w) = io::pipe().map_err(|e| format!("making a pipe: {e}"))?;
    let keeper = match fork()? {
        Forked::Child => {
            drop((ours, group_w));
            let code = keep(spec, control, says, theirs, &mut group_r).unwrap_or_else(|e| {
                let _ = writeln!(io::stderr(), "rab sandbox: {e}");
                126
            });
            std::process::exit(i32::from(code));
        }
        Forked::Parent(pid) => pid,
    };
    // The keeper's process id as rab sees it: the keeper cannot know it (it is 1 in
    // its namespace), and the command's process group is the keeper's.
    group_w
        .write_all(&keeper.as_raw_nonzero().get().cast_unsigned().to_le_bytes())
        .map_err(|e| format!("telling the keeper its id: {e}"))?;
    drop((says, theirs, control, group_r, group_w));
    let ended = match rustix::process::waitpid(Some(keeper), WaitOptions::empty()) {
        Ok(Some((_, s))) => ExitStatus::from_raw(s.as_raw()),
        other => return Err(format!("waiting for the keeper: {other:?}")),
    };
    if ended.success() {
        // The keeper put everything back and told rab.
        return Ok(0);
    }
    // The keeper was killed (rab's SIGKILL to the command's group), so it could not:
    // the namespace ended with it, and the leader finishes for it.
    let code = super::namespaces::exit_code(ended);
    finish(spec, &ours, code)?;
    Ok(code)
}

/// Once everything in the namespace has ended: puts guarded protected paths back
/// (notes on the command's error stream) and sends rab the exit code, when the slot
/// was taken (`hand` then holds the command's status socket and error stream).
fn finish(spec: &Spec, hand: &OwnedFd, code: u8) -> Result<(), String> {
    let Ok(Some((_, fds))) = receive(hand, &mut [0u8; 16], 2, RecvFlags::DONTWAIT) else {
        return Ok(());
    };
    let [status, errors]: [OwnedFd; 2] = fds.try_into().map_err(|_| "no status".to_owned())?;
    let mut errors = std::fs::File::from(errors);
    for note in super::guard::restore(&spec.guarded, &spec.fresh_git) {
        let _ = writeln!(errors, "rab sandbox: {note}");
    }
    tell(status.as_fd(), EXIT_TAG, u32::from(code))
}

/// The PID namespace's first process: mounts its `/proc` and scratch folders, starts
/// the program to be and waits for it (collecting every orphan on the way); then ends
/// everything left in the namespace and finishes the command ([`finish`]). Returns 0
/// once it did (the leader finishes otherwise).
fn keep(
    spec: &Spec,
    control: OwnedFd,
    says: io::PipeWriter,
    hand: OwnedFd,
    group: &mut io::PipeReader,
) -> Result<u8, String> {
    use rustix::mount::MountFlags;
    let mut id = [0u8; 4];
    group.read_exact(&mut id).map_err(|e| format!("hearing the keeper's id: {e}"))?;
    let group = u32::from_le_bytes(id);
    // The command's process group, apart from the leader's: what the program signals
    // as its group (`kill 0`) cannot reach the leader.
    rustix::process::setsid().map_err(|e| format!("setsid: {e}"))?;
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    rustix::mount::mount("proc", "/proc", "proc", flags, None)
        .map_err(|e| format!("mounting the sandbox's /proc: {e}"))?;
    super::namespaces::fresh_scratch(spec).map_err(|e| format!("the sandbox's scratch: {e}"))?;
    let (ours, theirs) = hand_sockets()?;
    let program = match fork()? {
        Forked::Child => {
            let e = wait_for_command(spec, &control, says, [&hand, &theirs], group);
            let _ = writeln!(io::stderr(), "rab sandbox: {e}");
            std::process::exit(126);
        }
        Forked::Parent(pid) => pid,
    };
    drop((says, hand, control, theirs));
    let code = loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, s))) if pid == program => {
                break super::namespaces::exit_code(ExitStatus::from_raw(s.as_raw()));
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("waiting for the program: {e}")),
        }
    };
    // What the command left running ends now (as it would with this process), so that
    // nothing changes protected paths once they are put back.
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(-1), nix::sys::signal::SIGKILL);
    while let Ok(Some(_)) | Err(rustix::io::Errno::INTR) =
        rustix::process::wait(WaitOptions::empty())
    {}
    finish(spec, &ours, code)?;
    Ok(0)
}

/// The program to be: confines itself, says the slot is ready, waits for a command and
/// becomes it. Returns only on failure (or at the end of standard input, quietly).
fn wait_for_command(
    spec: &Spec,
    control: &OwnedFd,
    mut says: io::PipeWriter,
    hands: [&OwnedFd; 2],
    group: u32,
) -> String {
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
    let _ = says.write_all(&[SLOT_TAKEN]);
    drop(says);
    let Ok([input, output, errors, status]) = <[OwnedFd; 4]>::try_from(fds) else {
        return "a malformed command".into();
    };
    if let Err(e) = tell(status.as_fd(), PID_TAG, group) {
        return e;
    }
    // To the keeper, which finishes the command, and to the leader, which does if the
    // keeper is killed.
    for hand in hands {
        if let Err(e) = hand_over(hand.as_fd(), &[status.as_fd(), errors.as_fd()]) {
            return format!("handing the status over: {e}");
        }
    }
    drop(status);
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
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
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

/// `fork(2)`: the one place rab copies a process instead of starting a program.
#[allow(unsafe_code)]
fn fork() -> Result<Forked, String> {
    // SAFETY: the helper checked in `serve` that it has one thread (and starts none),
    // so the copy holds no lock another thread held, and may allocate and run any code;
    // every path of the copy ends in `exec` or `process::exit`.
    let pid = unsafe { libc::fork() };
    match pid {
        0 => Ok(Forked::Child),
        p if p > 0 => Pid::from_raw(p).map(Forked::Parent).ok_or_else(|| "fork".to_owned()),
        _ => Err(format!("fork: {}", io::Error::last_os_error())),
    }
}
