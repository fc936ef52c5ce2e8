//! The project root the tools work in, and how a path given by the model is resolved
//! against it (relative to the root, `~` to the home directory).
//!
//! The root is shared by every clone of a [`Workspace`] and can be moved
//! ([`Workspace::set_root`]): `enter_worktree` points all the tools at a git worktree
//! and `exit_worktree` points them back. The sandbox is not moved with it: it keeps the
//! roots it was built with, so a new root outside them is refused by its checks.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use rab_agent::ToolError;

use crate::sandbox::{Access, Sandbox};

/// The directory the tools are rooted at. Clones share the root: moving it moves it for
/// all of them.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: Arc<RwLock<PathBuf>>,
    home: Option<PathBuf>,
    temp_dir: PathBuf,
    sandbox: Sandbox,
    hidden: ReadFilter,
    redact: Redact,
    editor: crate::editor_files::Editor,
}

/// The secret firewall's redaction, for what the tools write where other programs can
/// read it (the bash tool's full-output files).
#[derive(Clone, Default)]
pub struct Redact(Option<Arc<RedactFn>>);

/// Text in, redacted text out.
type RedactFn = dyn Fn(&str) -> String + Send + Sync;

impl Redact {
    /// Redacts with `f`.
    pub fn new(f: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    /// `text` redacted (as is when the firewall is off).
    pub fn apply(&self, text: &str) -> String {
        match &self.0 {
            Some(f) => f(text),
            None => text.to_owned(),
        }
    }
}

impl std::fmt::Debug for Redact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Redact(on)" } else { "Redact(off)" })
    }
}

/// Which paths the read deny rules cover: grep, glob and ls leave them out of their
/// results (and say how many).
#[derive(Clone, Default)]
pub struct ReadFilter(Option<Arc<PathPredicate>>);

/// A yes/no question about a path.
type PathPredicate = dyn Fn(&Path) -> bool + Send + Sync;

impl ReadFilter {
    /// A filter that hides the paths `denied` says yes to.
    pub fn new(denied: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(denied)))
    }

    /// Whether `path` is hidden; a symbolic link also when its target is.
    pub fn hides(&self, path: &Path, is_symlink: bool) -> bool {
        let Some(f) = &self.0 else { return false };
        f(path) || (is_symlink && std::fs::canonicalize(path).is_ok_and(|real| f(&real)))
    }
}

impl std::fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "ReadFilter(set)" } else { "ReadFilter(none)" })
    }
}

/// The line a result ends with when `n` paths were left out.
pub fn hidden_note(n: usize) -> Option<String> {
    (n > 0).then(|| {
        let what = if n == 1 { "path" } else { "paths" };
        format!("[{n} {what} under read deny rules left out]")
    })
}

impl Workspace {
    /// A workspace at `root` (made absolute lexically when relative).
    pub fn new(root: &Path) -> Self {
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            std::env::current_dir().map(|cwd| cwd.join(root)).unwrap_or_else(|_| root.to_path_buf())
        };
        // The caller passes the real temporary directory (`TMPDIR`, read by rab-config);
        // this crate does not read the environment.
        Self {
            root: Arc::new(RwLock::new(normalize(&root))),
            home: None,
            temp_dir: PathBuf::from("/tmp"),
            sandbox: Sandbox::default(),
            hidden: ReadFilter::default(),
            redact: Redact::default(),
            editor: crate::editor_files::Editor::default(),
        }
    }

    /// Reads and writes text files through an editor ([`crate::editor_files`]).
    pub fn with_editor_files(
        mut self,
        editor: Option<Arc<dyn crate::editor_files::EditorFiles>>,
    ) -> Self {
        self.editor.0 = editor;
        self
    }

    /// Runs `bash` commands in an editor's terminal (outside the sandbox: only when the
    /// user asks for it).
    pub fn with_editor_terminal(
        mut self,
        terminal: Option<Arc<dyn crate::editor_files::EditorTerminal>>,
    ) -> Self {
        self.editor.1 = terminal;
        self
    }

    /// The editor whose files the file tools use, when rab is driven from one.
    pub fn editor(&self) -> &crate::editor_files::Editor {
        &self.editor
    }

    /// Hides from grep, glob and ls what the read deny rules cover.
    pub fn with_read_filter(mut self, filter: ReadFilter) -> Self {
        self.hidden = filter;
        self
    }

    /// Redacts what the tools write to files (the bash tool's full output).
    pub fn with_redact(mut self, redact: Redact) -> Self {
        self.redact = redact;
        self
    }

    /// The redaction for files the tools write.
    pub fn redact(&self) -> &Redact {
        &self.redact
    }

    /// What grep, glob and ls leave out.
    pub fn read_filter(&self) -> &ReadFilter {
        &self.hidden
    }

    /// Sets the directory for temporary files (full bash output).
    pub fn with_temp_dir(mut self, dir: PathBuf) -> Self {
        self.temp_dir = dir;
        self
    }

    /// Puts the tools in a sandbox.
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The sandbox (off unless set).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Resolves a model-given path like [`Self::resolve`] and checks it against the
    /// sandbox; a refusal is an error for the model naming the path and the rule.
    pub fn resolve_checked(&self, path: &str, access: Access) -> Result<PathBuf, ToolError> {
        let resolved = self.resolve(path);
        self.sandbox.check(&resolved, access).map_err(ToolError::Model)?;
        Ok(resolved)
    }

    /// Resolves a model-given path, checks it against the sandbox and pins it: the
    /// handle opens the very real path that was checked, beneath its root, and refuses
    /// a link put on the way since ([`crate::handle`]).
    pub fn resolve_handle(
        &self,
        path: &str,
        access: Access,
    ) -> Result<(PathBuf, crate::handle::FileHandle), ToolError> {
        let resolved = self.resolve(path);
        let real = crate::sandbox::real_path(&resolved);
        self.sandbox.check_real(&resolved, &real, access).map_err(ToolError::Model)?;
        let handle =
            crate::handle::FileHandle::pinned(real, self.sandbox.roots()).map_err(|e| {
                ToolError::Model(format!("cannot open {}: {e}", self.display(&resolved)))
            })?;
        Ok((resolved, handle))
    }

    /// Where temporary files go.
    pub fn temp_dir(&self) -> &Path {
        &self.temp_dir
    }

    /// Sets the home directory used for `~` (rab-config's `HOME`).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The root as it is now (it moves when a worktree is entered or left).
    pub fn root(&self) -> PathBuf {
        self.root.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Moves the root of this workspace and every clone of it to `root` (absolute;
    /// folded lexically).
    pub fn set_root(&self, root: &Path) {
        *self.root.write().unwrap_or_else(PoisonError::into_inner) = normalize(root);
    }

    /// Resolves a model-given path: absolute as is, `~/x` under home, else under the
    /// root; `.` and `..` are folded lexically (symlinks are the sandbox's business).
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = path.trim();
        let joined = if let (Some(rest), Some(home)) = (p.strip_prefix("~/"), &self.home) {
            home.join(rest)
        } else if p == "~" && self.home.is_some() {
            self.home.clone().unwrap_or_default()
        } else if Path::new(p).is_absolute() {
            PathBuf::from(p)
        } else {
            self.root().join(p)
        };
        normalize(&joined)
    }

    /// `path` relative to the root when inside it, else as is (for messages).
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(self.root()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Equal when the roots are equal now, and so is everything else.
impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root() == other.root()
            && self.home == other.home
            && self.temp_dir == other.temp_dir
            && self.sandbox == other.sandbox
    }
}

impl Eq for Workspace {}

/// Folds `.` and `..` without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_absolute_and_home_paths() {
        let ws = Workspace::new(Path::new("/work/p")).with_home(Some(PathBuf::from("/home/u")));
        assert_eq!(ws.resolve("src/../a.rs"), PathBuf::from("/work/p/a.rs"));
        assert_eq!(ws.resolve("/etc/hosts"), PathBuf::from("/etc/hosts"));
        assert_eq!(ws.resolve("~/x"), PathBuf::from("/home/u/x"));
        assert_eq!(ws.display(&ws.resolve("a/b")), "a/b");
        assert_eq!(ws.display(Path::new("/tmp/z")), "/tmp/z");
    }

    #[test]
    fn moving_the_root_moves_it_for_every_clone() {
        let ws = Workspace::new(Path::new("/work/p"));
        let clone = ws.clone();
        ws.set_root(Path::new("/work/p/.rab/worktrees/x/./src/.."));
        assert_eq!(clone.root(), PathBuf::from("/work/p/.rab/worktrees/x"));
        assert_eq!(clone.resolve("a.rs"), PathBuf::from("/work/p/.rab/worktrees/x/a.rs"));
        assert_eq!(clone.display(Path::new("/work/p/.rab/worktrees/x/a.rs")), "a.rs");
        assert_eq!(ws, clone);
    }
}
