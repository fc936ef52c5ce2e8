//! What trust in the working directory changes: which of its folders are read. The
//! decision itself (asking, remembering) is the front end's; see rab-config's trust
//! store.

use std::path::{Path, PathBuf};

/// Whether `path` belongs to the project in `cwd` (its `.rab`, `.claude`, `.agent`
/// folders and the rest of the checkout).
pub fn is_project_path(cwd: &Path, path: &Path) -> bool {
    path.starts_with(cwd)
}

/// Where sub-agent definitions are read: the project's folders only when trusted.
pub fn agent_dirs(cwd: &Path, rab_home: &Path, trusted: bool) -> Vec<PathBuf> {
    let mut dirs = vec![rab_home.join("agents")];
    if trusted {
        dirs.insert(0, cwd.join(".rab/agents"));
        dirs.push(cwd.join(".claude/agents"));
    }
    dirs
}
