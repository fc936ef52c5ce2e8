//! rab's private folder for one process: the sandbox's `/tmp` (kept for the whole
//! session, so a file one command leaves there is there for the next), the bash tool's
//! full-output logs, and the layer that keeps a sandboxed `pip install --user` out of
//! the real `~/.local`. Mode 0700, named `rab-<pid>-<random>` in the runtime or temp
//! folder, removed when rab ends; one left by a rab that crashed is removed by the
//! next rab that starts.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The folder; removed when the last clone of the sandbox holding it is dropped.
#[derive(Debug, PartialEq, Eq)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Makes a new private folder in `base`, after removing the ones rabs that no
    /// longer run left there.
    pub fn create(base: &Path) -> io::Result<Self> {
        sweep_stale(base);
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..16 {
            let path = base.join(format!("rab-{pid}-{:08x}", fastrand_u32()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = Self { path };
                    for sub in ["tmp", "logs", "local"] {
                        std::fs::DirBuilder::new().mode(0o700).create(dir.path.join(sub))?;
                    }
                    return Ok(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("could not make a private folder")))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What sandboxed programs see as `/tmp`.
    pub fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }

    /// Where the bash tool keeps full output.
    pub fn logs(&self) -> PathBuf {
        self.path.join("logs")
    }

    /// Where sandboxed changes to `~/.local` go.
    pub fn local(&self) -> PathBuf {
        self.path.join("local")
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A random number without a dependency: the hasher std seeds from the OS.
fn fastrand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    u32::try_from(h.finish() & 0xffff_ffff).unwrap_or(0)
}

/// Removes `rab-<pid>-*` folders of this user in `base` whose rab is gone.
fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let uid = rustix::process::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("rab-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == uid);
        let is_alive = Path::new(&format!("/proc/{pid}")).exists();
        if is_ours && !is_alive && cfg!(target_os = "linux") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_private_and_gone_when_dropped_and_stale_ones_are_swept() {
        let base = tempfile::tempdir().unwrap();
        // A folder left by a rab that is no longer running (pid 0 never is one).
        let stale = base.path().join("rab-0-deadbeef");
        std::fs::create_dir_all(stale.join("tmp")).unwrap();
        let dir = PrivateDir::create(base.path()).unwrap();
        let mode = std::fs::metadata(dir.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(dir.tmp().is_dir() && dir.logs().is_dir() && dir.local().is_dir());
        if cfg!(target_os = "linux") {
            assert!(!stale.exists(), "a dead rab's folder is removed");
        }
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists());
    }
}
