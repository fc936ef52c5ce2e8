//! The one reader for files rab puts in a prompt on its own: instruction files
//! (`AGENTS.md`, `CLAUDE.md`), system prompt files (`SYSTEM.md`, `APPEND_SYSTEM.md`),
//! prompt commands, skills and sub-agent definitions.
//!
//! Such a file is read under the same rules as the `read` tool, because what it holds
//! goes to the provider and into the session file just the same:
//! - a file of the project (the workspace roots and the repository around the working
//!   directory) that is a link to somewhere outside them is not followed while the
//!   folder is not trusted; in a trusted folder it is followed;
//! - a file a read deny rule covers (by its path, its real path or its identity, so a
//!   hard link is covered too) is not read, whoever put it there;
//! - only regular files are read, pinned to the real path checked (a link swapped in
//!   afterwards makes the read fail);
//! - what is read goes through the secret firewall.
//!
//! Each file left out is a warning naming it and why.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rab_tools::{ReadFilter, Redact};

/// Largest instruction or system prompt file read.
pub const MAX_INSTRUCTION_BYTES: u64 = 1024 * 1024;

/// Reads the files rab puts in prompts. Clones share their warnings.
#[derive(Clone, Debug, Default)]
pub struct PromptFiles {
    /// The project: folders whose files are the repository's, not the user's (lexical
    /// and real forms).
    project: Vec<PathBuf>,
    /// Whether the folder is trusted (links out of the project are followed).
    trusted: bool,
    /// What the read deny rules cover.
    denied: ReadFilter,
    /// The secret firewall.
    redact: Redact,
    /// Files left out, and why.
    warnings: Arc<Mutex<Vec<String>>>,
}

impl PromptFiles {
    /// A reader for the project at `cwd` with the workspace `roots`: the repository
    /// around `cwd` (up to the folder holding `.git`) counts as the project too, unless
    /// that folder is the home directory `home` or above it (a dotfiles repository must
    /// not make all of home the project).
    pub fn new(cwd: &Path, roots: &[PathBuf], home: Option<&Path>, trusted: bool) -> Self {
        let mut project: Vec<PathBuf> = Vec::new();
        let mut add = |p: &Path| {
            for form in [p.to_path_buf(), rab_tools::sandbox::real_path(p)] {
                if !project.contains(&form) {
                    project.push(form);
                }
            }
        };
        add(cwd);
        roots.iter().for_each(|r| add(r));
        let home = home.map(rab_tools::sandbox::real_path);
        if let Some(repo) = cwd.ancestors().find(|d| d.join(".git").exists())
            && !home.as_ref().is_some_and(|h| h.starts_with(rab_tools::sandbox::real_path(repo)))
        {
            add(repo);
        }
        Self { project, trusted, ..Self::default() }
    }

    /// Leaves out what the read deny rules cover.
    pub fn with_read_filter(mut self, denied: ReadFilter) -> Self {
        self.denied = denied;
        self
    }

    /// Passes what is read through the secret firewall.
    pub fn with_redact(mut self, redact: Redact) -> Self {
        self.redact = redact;
        self
    }

    /// The warnings so far, emptied.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn warn(&self, text: String) {
        tracing::warn!("{text}");
        self.warnings.lock().unwrap_or_else(PoisonError::into_inner).push(text);
    }

    /// Whether `path` lies in the project (as named, or its folder's real path).
    fn is_project(&self, path: &Path) -> bool {
        let folder = path.parent().map(rab_tools::sandbox::real_path);
        self.project.iter().any(|p| path.starts_with(p))
            || folder.is_some_and(|f| self.project.iter().any(|p| f.starts_with(p)))
    }

    /// An instruction or system prompt file: `None` when it is missing or empty, and
    /// when it is left out (a warning says why).
    pub fn instructions(&self, path: &Path) -> Option<String> {
        match self.read(path, MAX_INSTRUCTION_BYTES) {
            Ok(Some(text)) if !text.trim().is_empty() => Some(text),
            Ok(_) => None,
            Err(why) => {
                self.warn(format!("{}: {why}", path.display()));
                None
            }
        }
    }

    /// A skill, command or agent definition: an error says why it cannot be used.
    pub fn definition(&self, path: &Path) -> Result<String, String> {
        match self.read(path, crate::skills::MAX_DEFINITION_BYTES) {
            Ok(Some(text)) => Ok(text),
            Ok(None) => Err("it does not exist".into()),
            Err(why) => Err(why),
        }
    }

    /// Reads `path` under the rules above: `Ok(None)` when there is nothing there.
    pub fn read(&self, path: &Path, max: u64) -> Result<Option<String>, String> {
        let Ok(meta) = std::fs::metadata(path) else { return Ok(None) };
        if meta.is_dir() {
            return Ok(None);
        }
        let real = rab_tools::sandbox::real_path(path);
        let leaves = self.is_project(path) && !self.project.iter().any(|p| real.starts_with(p));
        if leaves && !self.trusted {
            return Err(format!(
                "not read: it is a link to {}, outside the project, and this folder is not \
                 trusted (rab trust, or --trust-project for one run, follows it)",
                real.display()
            ));
        }
        if self.denied.hides(path, false) || self.denied.hides(&real, false) {
            return Err(format!("not read: a read deny rule covers {}", real.display()));
        }
        if !meta.is_file() {
            return Err("not read: it is not a regular file".into());
        }
        if meta.len() > max {
            return Err(format!(
                "not read: {} bytes is more than the {} KB such a file may have",
                meta.len(),
                max / 1024
            ));
        }
        let text = read_pinned(&real, &meta, max)?;
        let redacted = self.redact.apply(&text);
        if redacted != text {
            self.warn(format!(
                "{}: secrets in it were redacted before it went into the prompt",
                path.display()
            ));
        }
        Ok(Some(redacted))
    }
}

/// The text at `real` (links on the way refused), provided it is still the file `meta`
/// describes: a file swapped in since the checks is not read.
fn read_pinned(real: &Path, meta: &std::fs::Metadata, max: u64) -> Result<String, String> {
    let handle = rab_tools::handle::FileHandle::new(real, &[])
        .map_err(|e| format!("cannot be opened: {e}"))?;
    let mut file = handle.open().map_err(|e| format!("cannot be opened: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let now = file.metadata().map_err(|e| format!("cannot be read: {e}"))?;
        if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
            return Err("not read: it was replaced while rab read it".into());
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    let mut bytes = Vec::new();
    (&mut file)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("not read: it is larger than {} KB", max / 1024));
    }
    String::from_utf8(bytes).map_err(|_| "not read: it is not UTF-8 text".into())
}

#[cfg(test)]
mod tests;
