//! Full-text search across every session (every working directory).
//! (Skeleton: the implementation and its index come next.)

use std::path::{Path, PathBuf};

/// One match.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The session file.
    pub path: PathBuf,
    /// Session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The matching entry.
    pub entry_id: String,
    /// `user`, `assistant`, `toolResult`, or the entry type.
    pub role: String,
    /// When the entry was written (RFC 3339).
    pub timestamp: String,
    /// Text around the match, on one line.
    pub snippet: String,
    /// Higher is better.
    pub score: f64,
}

/// Searches every session under `sessions_root` for `query`, best first. `index_dir` is
/// where a search index may be kept (rebuilt from the JSONL files whenever they change).
pub fn search(
    sessions_root: &Path,
    index_dir: &Path,
    query: &str,
    limit: usize,
) -> Result<Vec<SearchHit>, crate::Error> {
    let _ = (sessions_root, index_dir, query, limit);
    Ok(Vec::new())
}
