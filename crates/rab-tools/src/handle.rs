//! The one way the file tools, checkpoints and rewind touch a file: a [`FileHandle`]
//! names it by its real path (links resolved when it was made) beneath an open root —
//! the workspace root it lies in, else the file system's root — and every operation
//! opens it through that root without following any link ([`crate::beneath`]). A link
//! swapped into the path after the check (a folder flipped to point outside, a folder
//! replaced by a link to a victim's) makes the operation fail, naming the path; nothing
//! is read or written through it.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

/// A file to read, replace or remove, pinned to its real path.
#[derive(Debug)]
pub struct FileHandle {
    /// The real path (for messages and records).
    real: PathBuf,
    #[cfg(unix)]
    root: crate::beneath::RootDir,
    #[cfg(unix)]
    rel: PathBuf,
}

/// Metadata of the file a handle names (links are not followed: the real path has none
/// but where one was swapped in, which is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// A regular file.
    pub is_file: bool,
    /// A folder.
    pub is_dir: bool,
    /// Its size in bytes.
    pub len: u64,
}

impl FileHandle {
    /// A handle for `path` (absolute), resolved to its real path now, beneath the
    /// longest of `roots` (canonical) it lies in, else beneath `/`.
    pub fn new(path: &Path, roots: &[PathBuf]) -> io::Result<Self> {
        Self::pinned(crate::sandbox::real_path(path), roots)
    }

    /// A handle for `real`, a real path already resolved (and checked by the caller).
    pub fn pinned(real: PathBuf, roots: &[PathBuf]) -> io::Result<Self> {
        let root = roots.iter().filter(|r| real.starts_with(r)).max_by_key(|r| r.as_os_str().len());
        let root = root.cloned().unwrap_or_else(|| PathBuf::from("/"));
        Self::beneath(real, &root)
    }

    /// A handle for a path recorded as real (a checkpoint's), beneath `/`: where a link
    /// has been put anywhere on the way since, every operation is refused.
    pub fn recorded(real: &Path) -> io::Result<Self> {
        Self::beneath(real.to_path_buf(), Path::new("/"))
    }

    #[cfg(unix)]
    fn beneath(real: PathBuf, root: &Path) -> io::Result<Self> {
        let rel = real.strip_prefix(root).map(Path::to_path_buf).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not absolute", real.display()),
            )
        })?;
        let root = crate::beneath::RootDir::open(root)?;
        Ok(Self { real, root, rel })
    }

    #[cfg(not(unix))]
    fn beneath(real: PathBuf, _root: &Path) -> io::Result<Self> {
        Ok(Self { real })
    }

    /// The real path.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// Its metadata; `NotFound` when it does not exist.
    pub fn meta(&self) -> io::Result<Meta> {
        #[cfg(unix)]
        {
            use rustix::fs::FileType;
            let st = self.root.symlink_metadata(&self.rel)?;
            let kind = FileType::from_raw_mode(st.st_mode);
            if kind == FileType::Symlink {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} became a symbolic link; nothing was done", self.real.display()),
                ));
            }
            Ok(Meta {
                is_file: kind == FileType::RegularFile,
                is_dir: kind == FileType::Directory,
                len: u64::try_from(st.st_size).unwrap_or(0),
            })
        }
        #[cfg(not(unix))]
        {
            let m = std::fs::metadata(&self.real)?;
            Ok(Meta { is_file: m.is_file(), is_dir: m.is_dir(), len: m.len() })
        }
    }

    /// Opens it for reading.
    pub fn open(&self) -> io::Result<File> {
        #[cfg(unix)]
        return self.root.open_read(&self.rel);
        #[cfg(not(unix))]
        return File::open(&self.real);
    }

    /// Opens it as a folder, for opening what is in it beneath it.
    #[cfg(unix)]
    pub fn open_dir(&self) -> io::Result<crate::beneath::RootDir> {
        let fd = self.root.open_dir(&self.rel)?;
        Ok(crate::beneath::RootDir::from_fd(fd, &self.real))
    }

    /// Its content.
    pub fn read(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open()?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Its content, at most `max` bytes (an error past that).
    pub fn read_capped(&self, max: u64, hint: u64) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(hint.min(max) + 1).unwrap_or(0));
        self.open()?.take(max + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Err(io::Error::other(format!("larger than {max} bytes")));
        }
        Ok(bytes)
    }

    /// Replaces (or creates) it atomically, creating missing folders; an existing file
    /// keeps its permissions.
    pub fn write_atomic(&self, bytes: &[u8]) -> io::Result<()> {
        #[cfg(unix)]
        return self.root.write_atomic(&self.rel, bytes);
        #[cfg(not(unix))]
        return crate::atomic_write::write_atomic(&self.real, bytes);
    }

    /// Writes `bytes` next to it, to be renamed over it by [`Staged::commit`].
    pub fn stage(&self, bytes: &[u8]) -> io::Result<Staged> {
        #[cfg(unix)]
        return self.root.stage(&self.rel, bytes).map(Staged);
        #[cfg(not(unix))]
        return crate::atomic_write::stage(&self.real, bytes).map(Staged);
    }

    /// Removes it (a missing file is an error of kind `NotFound`).
    pub fn remove(&self) -> io::Result<()> {
        #[cfg(unix)]
        return self.root.remove(&self.rel);
        #[cfg(not(unix))]
        return std::fs::remove_file(&self.real);
    }
}

/// A staged replacement.
#[derive(Debug)]
pub struct Staged(
    #[cfg(unix)] crate::beneath::StagedAt,
    #[cfg(not(unix))] crate::atomic_write::Staged,
);

impl Staged {
    /// Renames the staged file over its target.
    pub fn commit(self) -> io::Result<()> {
        self.0.commit()
    }
}
