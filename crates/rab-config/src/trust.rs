//! Trusted folders: which project directories may run code and widen access through
//! what they bring (allow rules, hooks, sandbox relaxations, MCP servers, project
//! agents, skills and commands that grant tools). The answers are kept in
//! `~/.rab/trusted.json`, by canonical path:
//!
//! ```json
//! {"trusted": ["/home/u/work"], "untrusted": ["/home/u/downloads/some-repo"]}
//! ```
//!
//! A folder is trusted when it or a folder above it was trusted; a refusal is kept for
//! the folder it was given for, so the question is not asked again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::error::read_optional;
use crate::safety::write_file_atomic;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct TrustFile {
    trusted: Vec<PathBuf>,
    untrusted: Vec<PathBuf>,
}

/// `~/.rab/trusted.json`.
#[derive(Clone, Debug)]
pub struct TrustStore {
    path: PathBuf,
    file: TrustFile,
}

/// A directory as the store keys it: canonical when it exists (symlinks resolved),
/// else made absolute as written.
pub fn canonical_dir(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

impl TrustStore {
    /// Reads the store (empty when the file does not exist).
    pub fn load(path: &Path) -> Result<Self, Error> {
        let file = match read_optional(path)? {
            Some(text) => serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))?,
            None => TrustFile::default(),
        };
        Ok(Self { path: path.to_owned(), file })
    }

    /// `Some(true)` when `dir` or a folder above it is trusted, `Some(false)` when
    /// trust was refused for `dir`, `None` when it was never decided.
    pub fn lookup(&self, dir: &Path) -> Option<bool> {
        let dir = canonical_dir(dir);
        if self.file.untrusted.contains(&dir) {
            return Some(false);
        }
        self.file.trusted.iter().any(|t| dir.starts_with(t)).then_some(true)
    }

    /// Records the answer for `dir` and writes the file.
    pub fn set(&mut self, dir: &Path, trusted: bool) -> Result<(), Error> {
        let dir = canonical_dir(dir);
        self.file.trusted.retain(|d| *d != dir);
        self.file.untrusted.retain(|d| *d != dir);
        if trusted {
            self.file.trusted.push(dir);
        } else {
            self.file.untrusted.push(dir);
        }
        let text = serde_json::to_string_pretty(&self.file).unwrap_or_default();
        write_file_atomic(&self.path, format!("{text}\n").as_bytes())
    }

    /// Folders trusted, in the order they were added.
    pub fn trusted(&self) -> &[PathBuf] {
        &self.file.trusted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_covers_subfolders_and_a_refusal_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let repo = work.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let file = dir.path().join("trusted.json");
        let mut store = TrustStore::load(&file).unwrap();
        assert_eq!(store.lookup(&repo), None);
        store.set(&work, true).unwrap();
        assert_eq!(TrustStore::load(&file).unwrap().lookup(&repo), Some(true));
        store.set(&repo, false).unwrap();
        let store = TrustStore::load(&file).unwrap();
        assert_eq!(store.lookup(&repo), Some(false), "a refusal below a trusted folder holds");
        assert_eq!(store.lookup(&work), Some(true));
        assert_eq!(store.lookup(dir.path()), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_the_folder_it_points_to() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut store = TrustStore::load(&dir.path().join("t.json")).unwrap();
        store.set(&link, true).unwrap();
        assert_eq!(store.lookup(&real), Some(true));
    }
}
