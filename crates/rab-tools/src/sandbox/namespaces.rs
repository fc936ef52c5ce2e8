//! Sandbox v2 on Linux: each confined program runs in new user, mount, PID and IPC
//! namespaces (and a network namespace with only loopback when network is off), in a
//! view of the file system built for it (`mounts.rs`), under Landlock, with no
//! capabilities.
//!
//! rab's own executable does it, started by rab as a helper (`rab __sandbox --ns …`):
//! a process can only enter a new user namespace while it has one thread, which rab
//! has not. The helper makes the namespaces, maps the user to itself, builds the view,
//! mounts a `/proc` of the new PID namespace (in which rab does not exist), confines
//! itself with Landlock, drops every capability and runs the program, which is the
//! first process of the PID namespace; when the program ends, the kernel ends every
//! process left in the namespace, so nothing a command started outlives it. Then the
//! helper puts guarded protected paths back (`guard.rs`).
//!
//! A PID namespace's `/proc` can only be mounted from outside it where the kernel has
//! proc's `pidns` option (Linux 6.16+); there the namespace's first process is a
//! keeper (`sh` waiting on a pipe) and the program its sibling. On older kernels a
//! second stage (`rab __sandbox-init …`, the namespace's first process) builds the
//! view, mounts `/proc` and runs the program as its child: one more exec of rab per
//! command.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use rustix::thread::UnshareFlags;

use super::hardening::{drop_capabilities, keep_setup_capabilities};
use super::mounts::{self, MountError};
use super::spec::Spec;

/// The argument that makes rab's executable stage two of the helper.
pub const INIT_ARG: &str = "__sandbox-init";

/// Servers outside the sandbox reachable through a socket file outside `/tmp` and
/// `/run/user` (which the view replaces): covered in the view.
const SERVER_SOCKETS: [&str; 5] = [
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/run/libvirt/libvirt-sock",
    "/run/snapd.socket",
];

/// Why the namespaces could not be used.
#[derive(Debug, thiserror::Error)]
pub enum NsError {
    /// The kernel or a security module refuses unprivileged user namespaces.
    #[error("user namespaces are refused here ({0})")]
    Refused(io::Error),
    /// A later step failed.
    #[error("{0}")]
    Setup(String),
}

/// Stage one: returns the program's exit code and the notes on protected paths put
/// back. Where the kernel can mount a `/proc` for a PID namespace the mounting process
/// is not in (the `pidns` option, Linux 6.16+), it builds the view and runs the program
/// itself (one exec of rab); elsewhere stage two does that as the namespace's first
/// process.
pub(super) fn outer(spec: &Spec, args: &[OsString]) -> Result<(u8, Vec<String>), NsError> {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    if spec.standby {
        return serve(spec, uid, gid);
    }
    // Before any namespace: it works on the real files, outside all of them.
    let owner = super::owner::Owner::watch(spec.owner);
    let mut restorer = super::restorer::Restorer::start(spec, owner);
    unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWPID).map_err(NsError::Refused)?;
    write_id_maps(uid, gid).map_err(|e| NsError::Setup(format!("mapping the user: {e}")))?;
    unshare(other_namespaces(spec))
        .map_err(|e| NsError::Setup(format!("making the mount namespace: {e}")))?;
    if !spec.two_stage && mounts::can_mount_proc_from_outside() {
        return one_stage(spec, restorer).map_err(NsError::Setup);
    }
    keep_setup_capabilities()
        .map_err(|e| NsError::Setup(format!("keeping the setup capabilities: {e}")))?;
    let mut init = Command::new("/proc/self/exe")
        .arg(INIT_ARG)
        .args(args)
        .spawn()
        .map_err(|e| NsError::Setup(format!("starting the sandbox's first process: {e}")))?;
    if let Some(r) = &mut restorer {
        r.watch(init.id());
    }
    let status = init
        .wait()
        .map_err(|e| NsError::Setup(format!("waiting for the sandbox's first process: {e}")))?;
    let notes = super::guard::restore(&spec.guarded, &spec.fresh_git);
    if let Some(r) = restorer {
        r.done();
    }
    Ok((exit_code(status), notes))
}

/// A ready helper (`serve.rs`): the user namespace and the view, once; the PID
/// namespaces are its keepers', the others each command's own.
fn serve(spec: &Spec, uid: u32, gid: u32) -> Result<(u8, Vec<String>), NsError> {
    unshare(UnshareFlags::NEWUSER).map_err(NsError::Refused)?;
    write_id_maps(uid, gid).map_err(|e| NsError::Setup(format!("mapping the user: {e}")))?;
    unshare(UnshareFlags::NEWNS)
        .map_err(|e| NsError::Setup(format!("making the mount namespace: {e}")))?;
    let cwd = std::env::current_dir()
        .map_err(|e| NsError::Setup(format!("reading the working folder: {e}")))?;
    build_view(spec, &cwd, false)
        .map_err(|e| NsError::Setup(format!("building the sandbox's view: {e}")))?;
    super::serve::serve(spec).map_err(NsError::Setup)?;
    Ok((0, Vec::new()))
}

/// The view built here and the program run as a child. The PID namespace's first
/// process is a keeper (`sh` waiting on a pipe from this process, started once the
/// view is the root) so that the program is not the namespace's init, which ignores
/// every signal it has no handler for (a SIGTERM would not stop it); `/proc` is made
/// for the keeper's namespace from here. The keeper ends when the pipe closes, and the
/// namespace with it.
fn one_stage(
    spec: &Spec,
    mut restorer: Option<super::restorer::Restorer>,
) -> Result<(u8, Vec<String>), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("reading the working folder: {e}"))?;
    build_view(spec, &cwd, false).map_err(|e| format!("building the sandbox's view: {e}"))?;
    let (hold, release) = std::io::pipe().map_err(|e| format!("making a pipe: {e}"))?;
    let mut keeper = Command::new("/bin/sh")
        .args(["-c", "read _"])
        .current_dir("/")
        .stdin(hold)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the sandbox's first process: {e}"))?;
    if let Some(r) = &mut restorer {
        r.watch(keeper.id());
    }
    let result = mounts::proc_for(keeper.id())
        .and_then(mounts::attach_proc_here)
        .map_err(|e| format!("mounting the sandbox's /proc: {e}"))
        .and_then(|()| confine(spec))
        .and_then(|()| run(spec));
    drop(release);
    let _ = keeper.wait();
    let status = result?;
    // Inside the view the workspace is where it is outside, and Landlock lets this
    // process change it.
    let notes = super::guard::restore(&spec.guarded, &spec.fresh_git);
    if let Some(r) = restorer {
        r.done();
    }
    Ok((exit_code(status), notes))
}

/// The namespaces besides user and PID: mount and IPC, and network when it is off.
fn other_namespaces(spec: &Spec) -> UnshareFlags {
    let mut flags = UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    if !spec.network {
        flags |= UnshareFlags::NEWNET;
    }
    flags
}

/// `unshare(2)`. rustix marks its safe wrapper deprecated because `CLONE_FILES` can
/// break other threads' file descriptors; rab never passes that flag, and the helper
/// has one thread.
pub(super) fn unshare(flags: UnshareFlags) -> io::Result<()> {
    #[allow(deprecated)]
    rustix::thread::unshare(flags).map_err(io::Error::from)
}

/// Maps the user and group to themselves: files keep their owners, and the program is
/// not root in the namespace unless the user is root.
fn write_id_maps(uid: u32, gid: u32) -> io::Result<()> {
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/setgroups", "deny\n")?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
}

/// A child's exit, as an exit code (a signal as 128 + its number, as shells do).
pub(super) fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(sig)) => u8::try_from(128 + (sig & 0x7f)).unwrap_or(1),
        (None, None) => 1,
    }
}

/// Stage two: builds the view, confines itself and runs the program; returns its exit
/// code.
pub fn run_init(args: Vec<OsString>) -> Result<u8, String> {
    let spec = Spec::parse(args)?;
    let cwd = std::env::current_dir().map_err(|e| format!("reading the working folder: {e}"))?;
    unshare(other_namespaces(&spec)).map_err(|e| format!("making the mount namespace: {e}"))?;
    build_view(&spec, &cwd, true).map_err(|e| format!("building the sandbox's view: {e}"))?;
    confine(&spec)?;
    run(&spec).map(exit_code)
}

/// In the view: loopback up, Landlock, no capabilities.
pub(super) fn confine(spec: &Spec) -> Result<(), String> {
    if !spec.network
        && let Err(e) = super::netlink::loopback_up()
    {
        tracing::debug!("loopback stays down: {e}");
    }
    let mut writable = spec.writable.clone();
    writable.extend(["/tmp", "/dev/shm"].map(PathBuf::from));
    writable.push(run_user());
    writable.extend(spec.overlay.iter().map(|(target, _)| target.clone()));
    // Without network the program has a network namespace of its own, with only
    // loopback: Landlock's TCP rules (which cannot tell loopback apart) would take
    // that too.
    super::landlock_helper::confine(&writable, true, true)
        .map_err(|e| format!("could not set up Landlock: {e}"))?;
    drop_capabilities().map_err(|e| format!("dropping capabilities: {e}"))
}

/// The program, waited for.
fn run(spec: &Spec) -> Result<ExitStatus, String> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args);
    if spec.tmp.is_some() {
        cmd.env("TMPDIR", "/tmp");
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.status().map_err(|e| format!("could not run {}: {e}", spec.program.to_string_lossy()))
}

/// A command's own scratch folders in a view it shares with others (a ready helper's):
/// new empty `/dev/shm` and runtime folder, and `/tmp` when rab has no private one.
pub(super) fn fresh_scratch(spec: &Spec) -> Result<(), MountError> {
    if spec.tmp.is_none() {
        mounts::tmpfs_at(Path::new("/tmp"), c"mode=1777")?;
    }
    mounts::tmpfs_at(Path::new("/dev/shm"), c"mode=1777")?;
    mounts::tmpfs_at(&run_user(), c"mode=0700")
}

/// The user's runtime folder (D-Bus, gpg-agent, Wayland, …), replaced by an empty one.
fn run_user() -> PathBuf {
    PathBuf::from(format!("/run/user/{}", rustix::process::getuid().as_raw()))
}

/// What to mount at a path of the view, in the order applied at one depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Visible,
    Writable,
    Overlay,
    Pin,
    ReadOnly,
    Hide,
}

/// The mounts for `spec`, shallowest path first, so a deeper mount lands on the one
/// above it (the workspace, then its protected paths).
fn ops(spec: &Spec) -> Vec<(PathBuf, Op)> {
    let mut ops: Vec<(PathBuf, Op)> = Vec::new();
    ops.extend(spec.visible.iter().map(|p| (p.clone(), Op::Visible)));
    ops.extend(spec.writable.iter().map(|p| (p.clone(), Op::Writable)));
    ops.extend(spec.overlay.iter().map(|(t, _)| (t.clone(), Op::Overlay)));
    ops.extend(spec.pinned.iter().map(|p| (p.clone(), Op::Pin)));
    ops.extend(spec.read_only.iter().map(|p| (p.clone(), Op::ReadOnly)));
    ops.extend(spec.hidden.iter().map(|p| (p.clone(), Op::Hide)));
    ops.extend(SERVER_SOCKETS.iter().map(|s| (PathBuf::from(s), Op::Hide)));
    ops.sort_by(|a, b| {
        let depth = |p: &Path| p.components().count();
        depth(&a.0).cmp(&depth(&b.0)).then(a.1.cmp(&b.1))
    });
    ops
}

/// Builds the view and makes it the root; with `has_proc`, a `/proc` of the PID
/// namespace this process is the first of (else the caller mounts one later).
fn build_view(spec: &Spec, cwd: &Path, has_proc: bool) -> Result<(), MountError> {
    mounts::enter_scratch_root()?;
    mounts::read_only_view()?;
    mounts::private_tmp(spec.tmp.as_deref())?;
    mounts::fresh_tmpfs(Path::new("/dev/shm"), c"mode=1777")?;
    mounts::fresh_tmpfs(&run_user(), c"mode=0700")?;
    for (path, op) in ops(spec) {
        match op {
            Op::Visible => mounts::bind_visible(&path)?,
            Op::Writable => mounts::bind_writable(&path)?,
            Op::Overlay => {
                if let Some((target, private)) = &spec.overlay {
                    mounts::overlay(target, private)?;
                }
            }
            Op::Pin => mounts::bind_self(&path, false)?,
            Op::ReadOnly => mounts::bind_self(&path, true)?,
            Op::Hide => mounts::hide(&path)?,
        }
    }
    if has_proc {
        mounts::proc()?;
    }
    mounts::switch_root(cwd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn mounts_go_shallowest_first_and_protected_paths_after_their_workspace() {
        let spec = Spec {
            writable: vec!["/w/.rab/worktrees".into(), "/w".into()],
            read_only: vec!["/w/.rab".into(), "/w/.git/config".into()],
            pinned: vec!["/w/.git".into()],
            hidden: vec!["/h/.rab".into()],
            ..Spec::default()
        };
        let order: Vec<(String, Op)> = ops(&spec)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("/run"))
            .map(|(p, op)| (p.display().to_string(), op))
            .collect();
        assert_eq!(
            order,
            [
                ("/w".to_owned(), Op::Writable),
                ("/w/.git".to_owned(), Op::Pin),
                ("/w/.rab".to_owned(), Op::ReadOnly),
                ("/h/.rab".to_owned(), Op::Hide),
                ("/w/.rab/worktrees".to_owned(), Op::Writable),
                ("/w/.git/config".to_owned(), Op::ReadOnly),
            ]
        );
    }
}
