//! What the `read(...)` deny rules cover on disk: the paths that exist (for the sandbox
//! to hide from commands), and the identity (device and inode) of every file among
//! them, so that another name for one — a hard link, a bind mount — is denied too: rules
//! match paths, and a file has as many paths as links.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use globset::GlobMatcher;

/// How many entries the walks look at, in all.
const WALK_BUDGET: usize = 50_000;
/// How many files under a denied folder are indexed by identity.
const FILES_PER_FOLDER: usize = 2_000;

/// The existing paths `globs` (read deny rules' patterns, absolute) cover: a rule's
/// folder or file itself (`read(~/.ssh/**)`, `read(.env)`), and for a pattern
/// (`read(*.pem)`) what matches now below its fixed part, found by a bounded walk.
/// Sorted; the flag says whether the walk ran out of budget.
pub fn existing(globs: &[&GlobMatcher]) -> (Vec<PathBuf>, bool) {
    let mut out = Vec::new();
    let mut budget = WALK_BUDGET;
    for glob in globs {
        let text = glob.glob().glob();
        let whole = text.strip_suffix("{,/**}").unwrap_or(text);
        if !whole.contains(['*', '?', '[', '{']) {
            let path = PathBuf::from(whole);
            if std::fs::symlink_metadata(&path).is_ok() {
                out.push(path);
            }
            continue;
        }
        let fixed = &whole[..whole.find(['*', '?', '[', '{']).unwrap_or(whole.len())];
        let base = Path::new(&fixed[..fixed.rfind('/').unwrap_or(0).max(1)]);
        collect_matches(base, glob, 0, &mut budget, &mut out);
    }
    out.sort();
    out.dedup();
    (out, budget == 0)
}

/// The paths under `dir` that `glob` matches (a matching folder stands for everything
/// in it), never through a link.
fn collect_matches(
    dir: &Path,
    glob: &GlobMatcher,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<PathBuf>,
) {
    if depth > 16 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = entry.path();
        if glob.is_match(&path) {
            out.push(path);
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_matches(&path, glob, depth + 1, budget, out);
        }
    }
}

/// The identities of the files the deny rules cover.
#[derive(Clone, Debug, Default)]
pub struct DeniedFiles(HashSet<(u64, u64)>);

impl DeniedFiles {
    /// Indexes the files among `paths` and in the folders among them (at most
    /// `FILES_PER_FOLDER` each, links not followed).
    pub fn index(paths: &[PathBuf]) -> Self {
        let mut ids = HashSet::new();
        for path in paths {
            let Ok(meta) = std::fs::metadata(path) else { continue };
            if meta.is_dir() {
                let mut left = FILES_PER_FOLDER;
                index_folder(path, &mut ids, &mut left, 0);
            } else if let Some(id) = identity(&meta) {
                ids.insert(id);
            }
        }
        Self(ids)
    }

    /// Whether `path` (following links) is one of the denied files under any name.
    pub fn contains(&self, path: &Path) -> bool {
        !self.0.is_empty()
            && std::fs::metadata(path)
                .ok()
                .and_then(|m| identity(&m))
                .is_some_and(|id| self.0.contains(&id))
    }
}

fn index_folder(dir: &Path, ids: &mut HashSet<(u64, u64)>, left: &mut usize, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *left == 0 || depth > 16 {
            return;
        }
        *left -= 1;
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            index_folder(&entry.path(), ids, left, depth + 1);
        } else if kind.is_file()
            && let Some(id) = entry.metadata().ok().as_ref().and_then(identity)
        {
            ids.insert(id);
        }
    }
}

/// A regular file's device and inode.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

/// Off Unix there is no inode to compare.
#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_name_for_a_denied_file_is_denied_and_other_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(".env"), "SECRET=1\n").unwrap();
        std::fs::create_dir_all(d.join("keys")).unwrap();
        std::fs::write(d.join("keys/id"), "k").unwrap();
        std::fs::write(d.join("ok.txt"), "fine").unwrap();
        std::fs::hard_link(d.join(".env"), d.join("notes.txt")).unwrap();
        std::fs::hard_link(d.join("keys/id"), d.join("copy")).unwrap();
        std::os::unix::fs::symlink(d.join(".env"), d.join("link")).unwrap();
        let denied = DeniedFiles::index(&[d.join(".env"), d.join("keys")]);
        for name in ["notes.txt", "copy", "link", ".env"] {
            assert!(denied.contains(&d.join(name)), "{name}");
        }
        assert!(!denied.contains(&d.join("ok.txt")));
        assert!(!DeniedFiles::default().contains(&d.join(".env")));
    }
}
