//! Sandbox v2 on Linux: each confined program runs in new user, mount, PID and IPC
//! namespaces (and a network namespace with only loopback when network is off), in a
//! view of the file system built for it ([`super::mounts`]), under Landlock, with no
//! capabilities.
//!
//! Two stages, both rab's own executable, because a process can only enter new user
//! and PID namespaces while it has one thread, and the PID namespace only applies to
//! children:
//! - stage one (`rab __sandbox --ns …`, started by rab) makes the user and PID
//!   namespaces, maps the user to itself, and starts stage two; when stage two ends it
//!   puts guarded protected paths back ([`super::guard`]) from outside the view and
//!   exits with stage two's code.
//! - stage two (`rab __sandbox-init …`) is the first process of the PID namespace: it
//!   makes the mount, IPC and network namespaces, builds the view, mounts a `/proc` in
//!   which rab does not exist, confines itself with Landlock, drops every capability,
//!   and runs the program as its child. When it exits, the kernel ends every process
//!   left in the namespace: nothing a command started outlives it.

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

/// Stage one: returns stage two's exit code and the notes on protected paths put back.
pub(super) fn outer(spec: &Spec, args: &[OsString]) -> Result<(u8, Vec<String>), NsError> {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWPID).map_err(NsError::Refused)?;
    write_id_maps(uid, gid).map_err(|e| NsError::Setup(format!("mapping the user: {e}")))?;
    keep_setup_capabilities()
        .map_err(|e| NsError::Setup(format!("keeping the setup capabilities: {e}")))?;
    let status = Command::new("/proc/self/exe")
        .arg(INIT_ARG)
        .args(args)
        .status()
        .map_err(|e| NsError::Setup(format!("starting the sandbox's first process: {e}")))?;
    let notes = super::guard::restore(&spec.guarded, &spec.fresh_git);
    Ok((exit_code(status), notes))
}

/// `unshare(2)`. rustix marks its safe wrapper deprecated because `CLONE_FILES` can
/// break other threads' file descriptors; rab never passes that flag, and the helper
/// has one thread.
fn unshare(flags: UnshareFlags) -> io::Result<()> {
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
fn exit_code(status: ExitStatus) -> u8 {
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
    let mut flags = UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    if !spec.network {
        flags |= UnshareFlags::NEWNET;
    }
    unshare(flags).map_err(|e| format!("making the mount namespace: {e}"))?;
    build_view(&spec, &cwd).map_err(|e| format!("building the sandbox's view: {e}"))?;
    if !spec.network
        && let Err(e) = super::netlink::loopback_up()
    {
        tracing::debug!("loopback stays down: {e}");
    }
    let mut writable = spec.writable.clone();
    writable.extend(["/tmp", "/dev/shm"].map(PathBuf::from));
    writable.push(run_user());
    writable.extend(spec.overlay.iter().map(|(target, _)| target.clone()));
    super::landlock_helper::confine(&writable, spec.network, true)
        .map_err(|e| format!("could not set up Landlock: {e}"))?;
    drop_capabilities().map_err(|e| format!("dropping capabilities: {e}"))?;
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args);
    if spec.tmp.is_some() {
        cmd.env("TMPDIR", "/tmp");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("could not run {}: {e}", spec.program.to_string_lossy()))?;
    Ok(exit_code(status))
}

/// The user's runtime folder (D-Bus, gpg-agent, Wayland, …), replaced by an empty one.
fn run_user() -> PathBuf {
    PathBuf::from(format!("/run/user/{}", rustix::process::getuid().as_raw()))
}

/// What to mount at a path of the view, in the order applied at one depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
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

fn build_view(spec: &Spec, cwd: &Path) -> Result<(), MountError> {
    mounts::enter_scratch_root()?;
    mounts::read_only_view()?;
    mounts::private_tmp(spec.tmp.as_deref())?;
    mounts::fresh_tmpfs(Path::new("/dev/shm"), c"mode=1777")?;
    mounts::fresh_tmpfs(&run_user(), c"mode=0700")?;
    for (path, op) in ops(spec) {
        match op {
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
    mounts::proc()?;
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
