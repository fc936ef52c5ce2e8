//! Atomic file replacement for `write` and `edit`: the new bytes go to a temporary file
//! in the target's directory, are flushed to disk, and the temporary file is renamed
//! over the target. A crash or a full disk leaves either the old file or the new one,
//! never a half-written mix, and an editor or build watching the file never sees a
//! truncated version.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Replaces (or creates) `path` with `bytes`, creating missing parent directories. An
/// existing file keeps its permissions; a symlink is written through to its target, so
/// the link survives.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = through_symlink(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    fs::create_dir_all(dir)?;
    let existing = fs::metadata(&target).ok();
    let (tmp_path, file) = create_temp(dir, &target)?;
    let result = fill_and_rename(file, &tmp_path, &target, bytes, existing.as_ref());
    if result.is_err() {
        // Best effort: the temporary file is garbage now, and the target is untouched.
        let _ = fs::remove_file(&tmp_path);
    }
    result?;
    sync_dir(dir);
    Ok(())
}

/// A file written next to its target and not yet renamed over it: several can be
/// staged and then committed together (`apply_patch`), so a failure while writing any
/// of them changes none. Dropped without [`Staged::commit`], the temporary file goes.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

/// Writes `bytes` to a temporary file next to `path` (creating missing parent
/// directories), flushed to disk, with an existing file's permissions.
pub fn stage(path: &Path, bytes: &[u8]) -> io::Result<Staged> {
    let target = through_symlink(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    fs::create_dir_all(dir)?;
    let existing = fs::metadata(&target).ok();
    let (tmp, mut file) = create_temp(dir, &target)?;
    let staged = Staged { tmp, target, committed: false };
    file.write_all(bytes)?;
    if let Some(meta) = &existing {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()?;
    Ok(staged)
}

impl Staged {
    /// Renames the staged file over its target.
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.tmp, &self.target)?;
        self.committed = true;
        if let Some(dir) = self.target.parent() {
            sync_dir(dir);
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

fn fill_and_rename(
    mut file: File,
    tmp_path: &Path,
    target: &Path,
    bytes: &[u8],
    existing: Option<&fs::Metadata>,
) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Some(meta) = existing {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()?;
    drop(file);
    fs::rename(tmp_path, target)
}

/// The file a write to `path` should replace: the symlink's target when `path` is a
/// link (renaming over the link itself would turn it into a plain file).
fn through_symlink(path: &Path) -> PathBuf {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link && let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    path.to_path_buf()
}

/// A new, exclusively created temporary file next to `target`. Hidden and suffixed so
/// a leftover from a crash is recognisable.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let pid = std::process::id();
    let mut last_err = None;
    for attempt in 0..100u32 {
        let tmp = dir.join(format!(".{name}.{pid}-{}.rab-tmp", seed.wrapping_add(attempt)));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

/// Makes the rename itself durable. Failure only weakens crash safety, so it is ignored.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn creates_parents_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["c.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_writes_through_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.sh");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o751)).unwrap();
        let link = dir.path().join("link.sh");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o751);
    }
}
