//! Checkpoints on the tape: before a tool changes files (edit, write, apply_patch — the
//! tools that say which files a call writes), each file's content is put in the
//! checkpoint store and a `checkpoint` entry naming it is appended, before the tool
//! runs; after the result, a `checkpoint_after` entry records what the tool left. A
//! rewind (`rewind.rs`) restores the content of a point, and knows from the `after`
//! hashes whether someone else changed a file since.
//!
//! Works outside git repositories: nothing here asks git.

use std::path::Path;

use rab_agent::AgentTool;
use rab_ai::ToolCall;
use rab_session::checkpoints::{CheckpointStore, MAX_FILE_BYTES, content_hash};
use serde::{Deserialize, Serialize};

pub use rab_session::checkpoints::{CHECKPOINT, CHECKPOINT_AFTER};

/// One file in a checkpoint entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileState {
    /// Absolute path.
    pub path: String,
    /// Content hash in the store; `None`: the file did not exist.
    pub hash: Option<String>,
    /// The content was not stored (too large or unreadable): it cannot be restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The data of a `checkpoint` or `checkpoint_after` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// The tool call.
    pub call_id: String,
    /// The files it writes.
    pub files: Vec<FileState>,
}

/// Takes checkpoints for one session.
pub struct Checkpointer {
    store: CheckpointStore,
    ws: rab_tools::Workspace,
}

impl Checkpointer {
    /// Into `store`, resolving the tools' paths in `ws`.
    pub fn new(store: CheckpointStore, ws: rab_tools::Workspace) -> Self {
        Self { store, ws }
    }

    /// The store.
    pub fn store(&self) -> &CheckpointStore {
        &self.store
    }

    /// The files `call` would write, with their content now stored; `None` when it
    /// writes none.
    pub fn before(&self, call: &ToolCall, tool: &dyn AgentTool) -> Option<Checkpoint> {
        let mut paths = tool.written_paths(&call.arguments);
        // Tools that change the file they take as `path` (edit, write) say so by level.
        if paths.is_empty()
            && tool.level_of(&call.arguments) == rab_agent::ToolLevel::Edit
            && let Some(path) = call.arguments.get("path").and_then(serde_json::Value::as_str)
        {
            paths.push(path.to_owned());
        }
        if paths.is_empty() {
            return None;
        }
        let mut files: Vec<FileState> = Vec::new();
        for path in paths {
            let path = real_path(&self.ws.resolve(&path));
            let text = path.display().to_string();
            if files.iter().any(|f| f.path == text) {
                continue;
            }
            files.push(snapshot(&self.store, &path, true));
        }
        Some(Checkpoint { call_id: call.id.clone(), files })
    }

    /// What the call left in the files of `before` (hashes only: a rewind compares them
    /// with the disk, it never writes them back).
    pub fn after(&self, before: &Checkpoint) -> Checkpoint {
        let files =
            before.files.iter().map(|f| snapshot(&self.store, Path::new(&f.path), false)).collect();
        Checkpoint { call_id: before.call_id.clone(), files }
    }
}

/// The state of `path` (a real path, as recorded): its hash (the content put in
/// `store` when `keep`), or missing. It is read beneath `/` without following links: a
/// link put on its way since it was recorded makes it unreadable, never another file.
pub fn snapshot(store: &CheckpointStore, path: &Path, keep: bool) -> FileState {
    let text = path.display().to_string();
    let state = |hash, skipped: Option<String>| FileState { path: text.clone(), hash, skipped };
    let file = match rab_tools::handle::FileHandle::recorded(path) {
        Ok(file) => file,
        Err(e) => return state(None, Some(format!("unreadable: {e}"))),
    };
    match file.meta() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => state(None, None),
        Err(e) => state(None, Some(format!("unreadable: {e}"))),
        Ok(m) if !m.is_file => state(None, Some("not a regular file".to_owned())),
        Ok(m) if m.len > MAX_FILE_BYTES => {
            state(None, Some(format!("larger than {} MB", MAX_FILE_BYTES >> 20)))
        }
        Ok(m) => match file.read_capped(MAX_FILE_BYTES, m.len) {
            Err(e) => state(None, Some(format!("unreadable: {e}"))),
            Ok(bytes) if !keep => state(Some(content_hash(&bytes)), None),
            Ok(bytes) => match store.put(&bytes) {
                Ok(hash) => state(Some(hash), None),
                Err(e) => state(None, Some(e.to_string())),
            },
        },
    }
}

/// `path` with its links followed (the file's own, or its folders' when it does not
/// exist yet): a file written through a link (`CLAUDE.md` → `AGENTS.md`) is recorded
/// under one name, and a rewind writes the file, not over the link.
fn real_path(path: &Path) -> std::path::PathBuf {
    rab_tools::sandbox::real_path(path)
}

/// The store of a rab home: `~/.rab/checkpoints`.
pub fn store(rab_home: &Path) -> CheckpointStore {
    CheckpointStore::new(rab_home.join("checkpoints"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model can name any path in a write before anyone approves it: reading a device
    /// for its checkpoint must not hang or fill memory.
    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_not_read_for_a_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path().join("store"));
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let mut paths = vec![Path::new("/dev/zero").to_owned(), Path::new("/dev/null").to_owned()];
        if made.is_ok_and(|s| s.success()) {
            paths.push(fifo);
        }
        for path in paths {
            let state = snapshot(&store, &path, true);
            assert_eq!(state.hash, None, "{path:?}");
            assert_eq!(state.skipped.as_deref(), Some("not a regular file"), "{path:?}");
        }
        let file = dir.path().join("plain.txt");
        std::fs::write(&file, "kept").unwrap();
        let state = snapshot(&store, &file, true);
        assert_eq!(store.get(state.hash.as_deref().unwrap()).unwrap(), b"kept");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_written_through_a_link_is_recorded_under_its_real_name() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::write(real.join("AGENTS.md"), "a").unwrap();
        std::os::unix::fs::symlink("AGENTS.md", real.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(&real, real.join("here")).unwrap();
        assert_eq!(real_path(&real.join("CLAUDE.md")), real.join("AGENTS.md"));
        assert_eq!(real_path(&real.join("here/new.txt")), real.join("new.txt"));
        assert_eq!(real_path(Path::new("/no/such/dir/x")), Path::new("/no/such/dir/x"));
    }
}
