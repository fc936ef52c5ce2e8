//! Files as an editor holds them. When rab is driven from an editor (the Agent Client
//! Protocol's `fs/read_text_file` and `fs/write_text_file`), `read`, `edit` and `write`
//! go through it for text files: they see the user's unsaved changes, and what they
//! write lands in the editor's buffer (which saves it), so the editor tracks the change.
//! Paths are resolved and checked (sandbox, permission rules) before the editor is
//! asked, as for the disk.
//!
//! An editor's terminal ([`EditorTerminal`]) runs `bash` commands where the user sees
//! them — outside rab's sandbox, so only when the user asks for it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rab_agent::BoxFuture;
use tokio_util::sync::CancellationToken;

/// An editor's files.
pub trait EditorFiles: Send + Sync {
    /// Whether the editor reads files for rab.
    fn can_read(&self) -> bool;
    /// Whether the editor writes files for rab.
    fn can_write(&self) -> bool;
    /// The text of `path` as the editor has it (its buffer, saved or not).
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    /// Writes `content` to `path` through the editor.
    fn write<'a>(&'a self, path: &'a Path, content: String) -> BoxFuture<'a, Result<(), String>>;
}

/// An editor's terminal, where `bash` runs its commands when the user asks for it.
pub trait EditorTerminal: Send + Sync {
    /// Runs `sh -c command` in `cwd` for the call `call_id`; ends it on `cancel` or after
    /// `timeout`.
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a Path,
        call_id: &'a str,
        cancel: CancellationToken,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<TerminalRun, String>>;
}

/// How a command in the editor's terminal ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalRun {
    /// Its output, as the terminal kept it.
    pub output: String,
    /// The terminal kept only the end of it.
    pub is_truncated: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<u32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// It ran past its timeout and was killed.
    pub is_timed_out: bool,
    /// It was interrupted and killed.
    pub is_aborted: bool,
}

/// Shared editor files and terminal, or none.
#[derive(Clone, Default)]
pub struct Editor(
    pub(crate) Option<Arc<dyn EditorFiles>>,
    pub(crate) Option<Arc<dyn EditorTerminal>>,
);

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Editor(files: {}, terminal: {})", self.0.is_some(), self.1.is_some())
    }
}

impl Editor {
    /// The editor's terminal, when commands run there.
    pub fn terminal(&self) -> Option<&dyn EditorTerminal> {
        self.1.as_deref()
    }

    /// The editor, when it reads files.
    pub fn reader(&self) -> Option<&dyn EditorFiles> {
        self.0.as_deref().filter(|e| e.can_read())
    }

    /// The editor, when it writes files.
    pub fn writer(&self) -> Option<&dyn EditorFiles> {
        self.0.as_deref().filter(|e| e.can_write())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Mutex;

    use rab_agent::{AgentTool, ToolContext};
    use serde_json::json;

    use super::*;
    use crate::Workspace;
    use crate::test_support::text;

    /// An editor with buffers that differ from the disk.
    #[derive(Default)]
    struct Buffers(Mutex<HashMap<PathBuf, String>>);

    impl EditorFiles for Buffers {
        fn can_read(&self) -> bool {
            true
        }
        fn can_write(&self) -> bool {
            true
        }
        fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
            let got = self.0.lock().unwrap().get(path).cloned();
            Box::pin(async move { got.ok_or_else(|| "no such buffer".to_owned()) })
        }
        fn write<'a>(
            &'a self,
            path: &'a Path,
            content: String,
        ) -> BoxFuture<'a, Result<(), String>> {
            self.0.lock().unwrap().insert(path.to_path_buf(), content);
            Box::pin(async { Ok(()) })
        }
    }

    #[tokio::test]
    async fn read_edit_and_write_use_the_editors_buffers_and_leave_the_disk_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "saved\n").unwrap();
        let buffers = Arc::new(Buffers::default());
        buffers.0.lock().unwrap().insert(file.clone(), "unsaved one\ntwo\n".into());
        let ws = Workspace::new(dir.path()).with_editor_files(Some(buffers.clone()));
        let cx = || ToolContext::detached("c1");

        let read = crate::read::Read::new(ws.clone());
        let out = read.execute(json!({"path": "a.txt"}), cx()).await.unwrap();
        assert!(text(&out).contains("unsaved one"), "{}", text(&out));

        let edit = crate::edit::Edit::new(ws.clone());
        let args = json!({"path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]});
        edit.execute(args, cx()).await.unwrap();
        assert_eq!(buffers.0.lock().unwrap()[&file], "unsaved one\n2\n");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "saved\n", "the editor saves");

        let write = crate::write::Write::new(ws.clone());
        let out = write.execute(json!({"path": "new/b.txt", "content": "fresh\n"}), cx()).await;
        assert!(text(&out.unwrap()).contains("new file"));
        assert_eq!(buffers.0.lock().unwrap()[&dir.path().join("new/b.txt")], "fresh\n");

        // A file the editor does not have is read from the disk.
        std::fs::write(dir.path().join("c.txt"), "on disk\n").unwrap();
        let out = read.execute(json!({"path": "c.txt"}), cx()).await.unwrap();
        assert!(text(&out).contains("on disk"));
    }
}
