//! File access that cannot be raced out of a folder: every path is opened relative to
//! an open handle of a root folder, one component at a time without following links
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux), and files are
//! replaced through the handle of the folder they are in (a temporary file, then
//! `renameat`). A link swapped in between rab's check of a path and its use makes the
//! operation fail with an error naming the path; it never lands outside.
//!
//! Paths given here are relative to the root and already resolved (the tools pass a
//! path's real form, so no link is expected on the way); `..` is refused.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

/// An open root folder: what every path below it is opened through.
#[derive(Debug)]
pub struct RootDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The error for a path that met a link or left the root on the way.
fn moved(rel: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} changed while rab was using it (a part of it is now a symbolic link or \
             leads out of the workspace); nothing was written",
            rel.display()
        ),
    )
}

/// Whether `rel` is a plain relative path (no root, no `..`).
fn check_rel(rel: &Path) -> io::Result<()> {
    if rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a path inside the folder", rel.display()),
        ))
    }
}

impl RootDir {
    /// Opens the folder at `path` (links in `path` itself are followed: the root is
    /// the user's choice).
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(
            path,
            OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::empty(),
        )?;
        Ok(Self { fd, path: path.to_path_buf() })
    }

    /// A root from a folder already open (`path` is what it is called, for messages).
    pub fn from_fd(fd: OwnedFd, path: &Path) -> Self {
        Self { fd, path: path.to_path_buf() }
    }

    /// The path that names the open folder itself (`/proc/self/fd/N`), for APIs that
    /// take paths: resolving it never walks the folder's path again.
    #[cfg(target_os = "linux")]
    pub fn fd_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&self.fd)))
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `rel` below the root with `flags` (`CLOEXEC` and `NOFOLLOW` are added),
    /// refusing a link anywhere on the way.
    pub fn open_at(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        check_rel(rel)?;
        let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::ResolveFlags;
            let how =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(&self.fd, rel, flags, mode, how) {
                Err(rustix::io::Errno::NOSYS) => {}
                Err(
                    e @ (rustix::io::Errno::LOOP
                    | rustix::io::Errno::XDEV
                    | rustix::io::Errno::NOTDIR),
                ) => {
                    return Err(self.explain(rel, e.into()));
                }
                other => return other.map_err(io::Error::from),
            }
        }
        walk_open(&self.fd, rel, flags, mode).map_err(|e| self.explain(rel, e))
    }

    /// `e`, or the error naming the link when a part of `rel` is one (a link swapped in
    /// since the path was checked): `ELOOP`, `EXDEV` and `ENOTDIR` all say that.
    fn explain(&self, rel: &Path, e: io::Error) -> io::Error {
        let mut dir: Option<OwnedFd> = None;
        for part in rel.components() {
            let Component::Normal(name) = part else { continue };
            let at = match &dir {
                Some(d) => rustix::fs::statat(d, name, AtFlags::SYMLINK_NOFOLLOW),
                None => rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW),
            };
            match at.map(|st| file_type(&st)) {
                Ok(rustix::fs::FileType::Symlink) => return moved(rel),
                Ok(rustix::fs::FileType::Directory) => {
                    let next = match &dir {
                        Some(d) => open_child_dir(d, name),
                        None => open_child_dir(&self.fd, name),
                    };
                    match next {
                        Ok(d) => dir = Some(d),
                        Err(_) => return e,
                    }
                }
                _ => return e,
            }
        }
        e
    }

    /// Opens the folder `rel` below the root.
    pub fn open_dir(&self, rel: &Path) -> io::Result<OwnedFd> {
        self.open_at(rel, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty())
    }

    /// Opens the file `rel` for reading.
    pub fn open_read(&self, rel: &Path) -> io::Result<File> {
        Ok(File::from(self.open_at(rel, OFlags::RDONLY, Mode::empty())?))
    }

    /// Creates the folders of `rel` that are missing, each below the one before.
    pub fn create_dirs(&self, rel: &Path) -> io::Result<OwnedFd> {
        check_rel(rel)?;
        let mut dir = self.open_dir(Path::new("."))?;
        for part in rel.components() {
            let Component::Normal(name) = part else { continue };
            match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            dir = open_child_dir(&dir, name).map_err(|e| self.explain(rel, e))?;
        }
        Ok(dir)
    }

    /// Replaces (or creates) the file `rel` with `bytes`: a temporary file in the same
    /// folder, flushed, given the old file's permissions, renamed over it, all through
    /// the folder's handle. Missing folders are created.
    pub fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        self.stage(rel, bytes)?.commit()
    }

    /// Writes `bytes` to a temporary file next to `rel`, to be renamed over it by
    /// [`StagedAt::commit`] (several files can be staged and then committed together).
    pub fn stage(&self, rel: &Path, bytes: &[u8]) -> io::Result<StagedAt> {
        check_rel(rel)?;
        let (parent, name) = split(rel)?;
        let dir = self.create_dirs(parent)?;
        let existing = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).ok();
        if existing.as_ref().is_some_and(|st| file_type(st) == rustix::fs::FileType::Symlink) {
            return Err(moved(rel));
        }
        let (tmp_name, fd) = create_temp(&dir, name)?;
        let staged = StagedAt { dir, tmp: tmp_name, name: name.to_owned(), committed: false };
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        if let Some(st) = existing {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(st.st_mode & 0o7777))?;
        }
        file.sync_all()?;
        Ok(staged)
    }

    /// Removes the file (or empty folder) `rel`; never follows a link there.
    pub fn remove(&self, rel: &Path) -> io::Result<()> {
        let (parent, name) = split(rel)?;
        let dir = self.open_dir(parent)?;
        match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
            Err(rustix::io::Errno::ISDIR) => {
                rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
            }
            other => other.map_err(io::Error::from),
        }
    }

    /// The metadata of `rel` itself (a link is not followed), through the handle of its
    /// folder.
    pub fn symlink_metadata(&self, rel: &Path) -> io::Result<rustix::fs::Stat> {
        let (parent, name) = split(rel)?;
        let dir = self.open_dir(parent)?;
        rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
    }
}

/// A file written next to its target and not yet renamed over it. Dropped without
/// [`StagedAt::commit`], the temporary file goes.
#[derive(Debug)]
pub struct StagedAt {
    dir: OwnedFd,
    tmp: std::ffi::OsString,
    name: std::ffi::OsString,
    committed: bool,
}

impl StagedAt {
    /// Renames the staged file over its target, in the folder it was staged in.
    pub fn commit(mut self) -> io::Result<()> {
        rustix::fs::renameat(&self.dir, &self.tmp, &self.dir, &self.name)?;
        self.committed = true;
        let _ = rustix::fs::fsync(&self.dir);
        Ok(())
    }
}

impl Drop for StagedAt {
    fn drop(&mut self) {
        if !self.committed {
            let _ = rustix::fs::unlinkat(&self.dir, &self.tmp, AtFlags::empty());
        }
    }
}

/// The folder part and the name of `rel`.
fn split(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", rel.display()),
        )),
    }
}

fn file_type(st: &rustix::fs::Stat) -> rustix::fs::FileType {
    rustix::fs::FileType::from_raw_mode(st.st_mode)
}

/// `e` with `rel` named when it is a link met on the way (`ELOOP` from `O_NOFOLLOW`).
fn relabel(e: io::Error, rel: &Path) -> io::Error {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) { moved(rel) } else { e }
}

/// Opens the folder `name` in `dir`, not through a link.
pub fn open_child_dir(dir: &impl AsFd, name: &OsStr) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// The names `rel` is made of (`.` and the like left out).
pub fn names(rel: &Path) -> Vec<&OsStr> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Opens `rel` below `root` one component at a time, none of them a link (where
/// `openat2` is missing).
fn walk_open(root: &OwnedFd, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let parts = names(rel);
    let Some((last, dirs)) = parts.split_last() else {
        return rustix::fs::openat(root, ".", flags, mode).map_err(io::Error::from);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in dirs {
        let next = match &dir {
            Some(d) => open_child_dir(d, name),
            None => open_child_dir(root, name),
        };
        dir = Some(next.map_err(|e| relabel(e, rel))?);
    }
    let opened = match &dir {
        Some(d) => rustix::fs::openat(d, *last, flags, mode),
        None => rustix::fs::openat(root, *last, flags, mode),
    };
    opened.map_err(|e| relabel(e.into(), rel))
}

/// A new, exclusively created temporary file in `dir` for `name`.
fn create_temp(dir: &OwnedFd, name: &OsStr) -> io::Result<(std::ffi::OsString, OwnedFd)> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let pid = std::process::id();
    let shown = name.to_string_lossy();
    let mut last = None;
    for attempt in 0..100u32 {
        let tmp: std::ffi::OsString =
            format!(".{shown}.{pid}-{}.rab-tmp", seed.wrapping_add(attempt)).into();
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => return Ok((tmp, fd)),
            Err(rustix::io::Errno::EXIST) => last = Some(rustix::io::Errno::EXIST),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(|| io::Error::other("could not create a temporary file"), io::Error::from))
}

/// Removes `name` in `dir` and, when it is a folder, everything in it, never following
/// a link (a link is removed, not what it points to).
pub fn remove_tree_at(dir: &impl AsFd, name: &OsStr) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    let child = open_child_dir(dir, name)?;
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    for entry in rustix::fs::Dir::read_from(&child)? {
        let entry = entry?;
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            let name: &OsStr = std::os::unix::ffi::OsStrExt::from_bytes(n);
            names.push(name.to_owned());
        }
    }
    for n in names {
        remove_tree_at(&child, &n)?;
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
