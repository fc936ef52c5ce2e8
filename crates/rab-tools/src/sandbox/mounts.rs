//! The sandbox's view of the file system, built by the helper in a mount namespace of
//! its own: a scratch root (a tmpfs) holding the old root at `/oldroot` and the view
//! being built at `/newroot` — a read-only copy of every mount, with the workspace,
//! the private `/tmp` and the tool caches writable again, protected paths read-only,
//! hidden paths covered — which then becomes `/`. As bubblewrap does it, by hand, so
//! rab stays one binary.
//!
//! Paths inside the workspace are opened without following links (`openat2` with
//! `RESOLVE_NO_SYMLINKS`) and mounted through `/proc/self/fd`, so a link swapped in by
//! a command still running from an earlier call cannot redirect a mount.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

/// Where the view is built.
pub(super) const NEW: &str = "/newroot";
/// Where the real root is while it is built.
pub(super) const OLD: &str = "/oldroot";

/// A mount step that failed: what, and why.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct MountError {
    what: String,
    #[source]
    source: io::Error,
}

fn fail(what: impl std::fmt::Display) -> impl FnOnce(rustix::io::Errno) -> MountError {
    move |e| MountError { what: what.to_string(), source: e.into() }
}

fn io_fail(what: impl std::fmt::Display) -> impl FnOnce(io::Error) -> MountError {
    move |source| MountError { what: what.to_string(), source }
}

/// `path` (absolute) under `base`.
pub(super) fn under(base: &str, path: &Path) -> PathBuf {
    Path::new(base).join(path.strip_prefix("/").unwrap_or(path))
}

/// Stops mounts propagating out, puts a tmpfs at `/tmp` and makes it the root, with the
/// real root at `/oldroot`.
pub(super) fn enter_scratch_root() -> Result<(), MountError> {
    rustix::mount::mount_change("/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)
        .map_err(fail("making mounts private"))?;
    rustix::mount::mount(
        "tmpfs",
        "/tmp",
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        c"mode=0755",
    )
    .map_err(fail("mounting the scratch root"))?;
    for dir in ["/tmp/newroot", "/tmp/oldroot"] {
        rustix::fs::mkdir(dir, Mode::from_raw_mode(0o755)).map_err(fail(dir))?;
    }
    rustix::process::pivot_root("/tmp", "/tmp/oldroot").map_err(fail("pivot_root"))?;
    rustix::process::chdir("/").map_err(fail("chdir /"))
}

/// One line of `/proc/self/mountinfo`: where, and the options that must be kept.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct MountLine {
    pub point: PathBuf,
    pub flags: MountFlags,
}

/// The mount points and their per-mount flags, from mountinfo text.
pub(super) fn parse_mountinfo(text: &str) -> Vec<MountLine> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let point = fields.nth(4)?;
            let options = fields.next()?;
            let mut flags = MountFlags::empty();
            for opt in options.split(',') {
                // A remount without atime flags keeps them, so only these are named.
                flags |= match opt {
                    "nosuid" => MountFlags::NOSUID,
                    "nodev" => MountFlags::NODEV,
                    "noexec" => MountFlags::NOEXEC,
                    _ => MountFlags::empty(),
                };
            }
            Some(MountLine { point: PathBuf::from(unescape(point)), flags })
        })
        .collect()
}

/// Mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Binds the real root at `/newroot`, with every mount in it read-only. A mount that
/// cannot be made read-only is covered by an empty one instead; failing that, nothing
/// runs.
pub(super) fn read_only_view() -> Result<(), MountError> {
    rustix::mount::mount_bind_recursive(OLD, NEW).map_err(fail("binding the root"))?;
    let info = std::fs::read_to_string(under(OLD, Path::new("/proc/self/mountinfo")))
        .map_err(io_fail("reading mountinfo"))?;
    for line in parse_mountinfo(&info) {
        if !line.point.starts_with(NEW) {
            continue;
        }
        if remount(&line.point, MountFlags::RDONLY | line.flags).is_ok() {
            continue;
        }
        // A mount from outside cannot be unmounted here (the kernel locks it to the one
        // below), but it can be covered.
        tracing::debug!(point = %line.point.display(), "covering a mount that stays writable");
        let is_dir = std::fs::metadata(&line.point).is_ok_and(|m| m.is_dir());
        if line.point == Path::new(NEW) || !is_dir || cover(&line.point).is_err() {
            return Err(MountError {
                what: format!("making {} read-only", line.point.display()),
                source: io::Error::from(io::ErrorKind::PermissionDenied),
            });
        }
    }
    Ok(())
}

fn remount(target: &Path, flags: MountFlags) -> rustix::io::Result<()> {
    rustix::mount::mount_remount(target, MountFlags::BIND | flags, c"")
}

/// An empty read-only tmpfs over a folder.
fn cover(dir: &Path) -> rustix::io::Result<()> {
    rustix::mount::mount(
        "tmpfs",
        dir,
        "tmpfs",
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        c"mode=000,size=0",
    )
}

/// The flags a new bind inherits from the mount it is on, to keep on a remount (atime
/// flags are kept by leaving them out).
fn kept_flags(path: &Path) -> MountFlags {
    let Ok(st) = rustix::fs::statvfs(path) else { return MountFlags::empty() };
    let f = st.f_flag;
    let mut out = MountFlags::empty();
    for (vfs, mount) in [
        (rustix::fs::StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (rustix::fs::StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (rustix::fs::StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
    ] {
        if f.contains(vfs) {
            out |= mount;
        }
    }
    out
}

/// Makes sure `target` exists to mount on: a folder, or an empty file when `is_dir` is
/// false. Only ever creates inside the scratch root or the private `/tmp`.
fn mount_point(target: &Path, is_dir: bool) -> Result<(), MountError> {
    if std::fs::symlink_metadata(target).is_ok() {
        return Ok(());
    }
    let dir = if is_dir { target } else { target.parent().unwrap_or(target) };
    std::fs::create_dir_all(dir).map_err(io_fail(format!("creating {}", dir.display())))?;
    if !is_dir {
        std::fs::File::create(target).map_err(io_fail(format!("creating {}", target.display())))?;
    }
    Ok(())
}

/// Makes `path` writable in the view: the real one bound over its read-only copy.
pub(super) fn bind_writable(path: &Path) -> Result<(), MountError> {
    let source = under(OLD, path);
    let Ok(meta) = std::fs::metadata(&source) else {
        // Gone since rab looked: nothing to bind.
        return Ok(());
    };
    let target = under(NEW, path);
    mount_point(&target, meta.is_dir())?;
    rustix::mount::mount_bind_recursive(&source, &target)
        .map_err(fail(format!("binding {}", path.display())))
}

/// Makes `path` readable in the view where the private `/tmp` hid it: the real one
/// bound read-only.
pub(super) fn bind_visible(path: &Path) -> Result<(), MountError> {
    bind_writable(path)?;
    let target = under(NEW, path);
    if std::fs::symlink_metadata(&target).is_err() {
        return Ok(());
    }
    remount(&target, MountFlags::RDONLY | kept_flags(&target))
        .map_err(fail(format!("making {} read-only", path.display())))
}

/// The view's `/tmp`: rab's private folder for it, or an empty tmpfs.
pub(super) fn private_tmp(host: Option<&Path>) -> Result<(), MountError> {
    match host {
        Some(dir) => rustix::mount::mount_bind(under(OLD, dir), under(NEW, Path::new("/tmp")))
            .map_err(fail("binding the private /tmp")),
        None => fresh_tmpfs(Path::new("/tmp"), c"mode=1777"),
    }
}

/// An empty writable tmpfs at `path` of the view, when `path` exists.
pub(super) fn fresh_tmpfs(path: &Path, options: &CStr) -> Result<(), MountError> {
    tmpfs_at(&under(NEW, path), options)
}

/// An empty writable tmpfs at `target`, when it exists (once the view is the root:
/// over the one there, for one command).
pub(super) fn tmpfs_at(target: &Path, options: &CStr) -> Result<(), MountError> {
    if !target.is_dir() {
        return Ok(());
    }
    rustix::mount::mount("tmpfs", target, "tmpfs", MountFlags::NOSUID | MountFlags::NODEV, options)
        .map_err(fail(format!("mounting a tmpfs at {}", target.display())))
}

/// Opens `path` of the view without following any link (so a link swapped in since
/// rab looked cannot redirect the mount); `None` when it is gone.
fn open_in_view(path: &Path) -> Result<Option<OwnedFd>, MountError> {
    let rel = path.strip_prefix("/").unwrap_or(path);
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let root =
        rustix::fs::open(NEW, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(fail("opening the new root"))?;
    match rustix::fs::openat2(&root, rel, flags, Mode::empty(), how) {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(fail(format!("opening {} (is a part of it a link?)", path.display()))(e)),
    }
}

/// The path that names an open file for `mount`.
fn fd_path(fd: &OwnedFd) -> PathBuf {
    under(OLD, Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))
}

/// Mounts `path` of the view onto itself; read-only when `read_only`.
pub(super) fn bind_self(path: &Path, read_only: bool) -> Result<(), MountError> {
    let Some(fd) = open_in_view(path)? else { return Ok(()) };
    let at = fd_path(&fd);
    rustix::mount::mount_bind(&at, &at).map_err(fail(format!("binding {}", path.display())))?;
    if read_only {
        // The fd names the file under the new mount only after reopening.
        drop(fd);
        let Some(fd) = open_in_view(path)? else { return Ok(()) };
        let at = fd_path(&fd);
        remount(&at, MountFlags::RDONLY | kept_flags(&at))
            .map_err(fail(format!("making {} read-only", path.display())))?;
    }
    Ok(())
}

/// Covers `path` of the view: a folder by an empty unreadable tmpfs, a file by an
/// empty read-only file.
pub(super) fn hide(path: &Path) -> Result<(), MountError> {
    let Some(fd) = open_in_view(path)? else { return Ok(()) };
    let at = fd_path(&fd);
    let is_dir = rustix::fs::fstat(&fd).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory
    });
    if is_dir {
        return cover(&at).map_err(fail(format!("hiding {}", path.display())));
    }
    let null = under(OLD, Path::new("/dev/null"));
    rustix::mount::mount_bind(&null, &at).map_err(fail(format!("hiding {}", path.display())))?;
    drop(fd);
    let Some(fd) = open_in_view(path)? else { return Ok(()) };
    let at = fd_path(&fd);
    remount(&at, MountFlags::RDONLY | kept_flags(&at))
        .map_err(fail(format!("hiding {}", path.display())))
}

/// `target` with the program's changes kept in `private` (an overlay: the real folder
/// below, `private/upper` above).
pub(super) fn overlay(target: &Path, private: &Path) -> Result<(), MountError> {
    let lower = under(OLD, target);
    let upper = under(OLD, &private.join("upper"));
    let work = under(OLD, &private.join("work"));
    for dir in [&upper, &work] {
        std::fs::create_dir_all(dir).map_err(io_fail(format!("creating {}", dir.display())))?;
    }
    let options = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        lower.display(),
        upper.display(),
        work.display()
    );
    let options = std::ffi::CString::new(options).map_err(|_| MountError {
        what: "overlay options".into(),
        source: io::ErrorKind::InvalidInput.into(),
    })?;
    rustix::mount::mount(
        "overlay",
        under(NEW, target),
        "overlay",
        MountFlags::NOSUID,
        options.as_c_str(),
    )
    .map_err(fail(format!("mounting an overlay on {}", target.display())))
}

/// Whether this kernel's proc has the `pidns` option (Linux 6.16+), which mounts a
/// PID namespace's `/proc` from outside it: naming one this process may not use is
/// refused with `EPERM`, an unknown option with `EINVAL`.
pub(super) fn can_mount_proc_from_outside() -> bool {
    let Ok(fs) = rustix::mount::fsopen("proc", rustix::mount::FsOpenFlags::FSOPEN_CLOEXEC) else {
        return false;
    };
    let Ok(own) = std::fs::File::open("/proc/self/ns/pid") else { return false };
    !matches!(rustix::mount::fsconfig_set_fd(&fs, "pidns", &own), Err(rustix::io::Errno::INVAL))
}

/// A `/proc` for the PID namespace of process `pid` (made from outside it).
pub(super) fn proc_for(pid: u32) -> io::Result<OwnedFd> {
    use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags};
    let fs = rustix::mount::fsopen("proc", FsOpenFlags::FSOPEN_CLOEXEC)?;
    let ns = std::fs::File::open(format!("/proc/{pid}/ns/pid"))?;
    rustix::mount::fsconfig_set_fd(&fs, "pidns", &ns)?;
    rustix::mount::fsconfig_create(&fs)?;
    let attrs = MountAttrFlags::MOUNT_ATTR_NOSUID
        | MountAttrFlags::MOUNT_ATTR_NODEV
        | MountAttrFlags::MOUNT_ATTR_NOEXEC;
    Ok(rustix::mount::fsmount(&fs, FsMountFlags::FSMOUNT_CLOEXEC, attrs)?)
}

/// Puts a `/proc` made by [`proc_for`] at `/proc` (once the view is the root).
pub(super) fn attach_proc_here(proc: OwnedFd) -> io::Result<()> {
    use rustix::mount::MoveMountFlags;
    let flags = MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH;
    Ok(rustix::mount::move_mount(&proc, "", rustix::fs::CWD, "/proc", flags)?)
}

/// A `/proc` of the PID namespace this process is the first of.
pub(super) fn proc() -> Result<(), MountError> {
    let target = under(NEW, Path::new("/proc"));
    rustix::mount::mount(
        "proc",
        &target,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .map_err(fail("mounting /proc"))
}

/// Makes the view the root, drops the real root and the scratch root, and goes back to
/// `cwd`.
pub(super) fn switch_root(cwd: &Path) -> Result<(), MountError> {
    rustix::process::chdir(NEW).map_err(fail("chdir to the new root"))?;
    rustix::process::pivot_root(".", ".").map_err(fail("pivot_root into the view"))?;
    rustix::mount::unmount(".", UnmountFlags::DETACH).map_err(fail("detaching the old root"))?;
    rustix::process::chdir(cwd).or_else(|_| rustix::process::chdir("/")).map_err(fail("chdir"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn mountinfo_lines_give_the_point_and_the_flags_to_keep() {
        let text = "22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n\
                    30 27 0:27 / /home/a\\040b rw,noatime master:1 - ext4 /dev/x rw\n";
        assert_eq!(
            parse_mountinfo(text),
            [
                MountLine {
                    point: "/proc".into(),
                    flags: MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
                },
                MountLine { point: "/home/a b".into(), flags: MountFlags::empty() },
            ]
        );
    }
}
