//! The `write` tool: creates or replaces a whole file, atomically (temporary file,
//! fsync, rename), creating parent directories and keeping an existing file's
//! permissions. The details carry a diff from the old content for the UI and the tape.

use std::fs;
use std::path::Path;

use rab_agent::{
    ExecutionMode, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::Workspace;
use crate::handle::FileHandle;
use crate::text_diff;
use crate::truncate::format_size;

/// Old files larger than this are not diffed: the diff would be capped to noise anyway.
const MAX_DIFF_INPUT: u64 = 1024 * 1024;

/// Creates or overwrites a file.
pub struct Write {
    ws: Workspace,
}

impl Write {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `write`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// File path.
    #[schemars(description = "")]
    pub path: String,
    /// The complete new file content.
    #[schemars(description = "")]
    pub content: String,
}

impl Tool for Write {
    type Args = Args;
    const NAME: &'static str = "write";
    const LEVEL: ToolLevel = ToolLevel::Edit;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["Write"],
        covered_by: &["edit"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(args.path.clone())
    }

    fn description(&self) -> String {
        // The system prompt's guidelines say when to use edit instead.
        "Create or overwrite a file with the given content (parent directories are created)."
            .to_owned()
    }

    // Two writes to one file in the same turn must not interleave.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    fn preview(&self, args: &Args) -> Option<String> {
        let path = self.ws.resolve(&args.path);
        let shown = self.ws.display(&path);
        let is_hidden = self.ws.read_filter().hides(&path, true);
        let old = fs::metadata(&path)
            .ok()
            .filter(|m| !is_hidden && m.is_file() && m.len() <= MAX_DIFF_INPUT)
            .and_then(|_| old_text(&path))
            .unwrap_or_default();
        Some(text_diff::unified(&old, &args.content, &shown, 3))
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let (path, file) = self.ws.resolve_handle(&args.path, crate::sandbox::Access::Write)?;
        let shown = self.ws.display(&path);
        if let Some(editor) = self.ws.editor().writer() {
            // Through the editor: it updates its buffer and saves.
            let meta = fs::metadata(&path).ok();
            if meta.as_ref().is_some_and(fs::Metadata::is_dir) {
                return Err(ToolError::Model(format!("{shown} is a directory; give a file path")));
            }
            let is_created = meta.is_none();
            let old = match (self.ws.editor().reader(), is_created) {
                (_, true) => None,
                (Some(r), false) => r.read(&path).await.ok(),
                (None, false) => {
                    meta.filter(|m| m.len() <= MAX_DIFF_INPUT).and_then(|_| old_text(&path))
                }
            };
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| ToolError::Model(format!("cannot write {shown}: {e}")))?;
            }
            editor
                .write(&path, args.content.clone())
                .await
                .map_err(|e| ToolError::Model(format!("cannot write {shown}: {e}")))?;
            return Ok(written(&shown, &args.content, old, is_created));
        }
        // A file read deny rules cover is written without a diff (which would quote it).
        let may_read = !(self.ws.read_filter().hides(&path, false)
            || self.ws.read_filter().hides(file.real(), false));
        tokio::task::spawn_blocking(move || write_file(&file, &shown, &args.content, may_read))
            .await
            .map_err(|e| ToolError::Model(format!("write failed: {e}")))?
    }
}

fn write_file(
    file: &FileHandle,
    shown: &str,
    content: &str,
    may_read: bool,
) -> Result<ToolOutput, ToolError> {
    let cannot = |e: std::io::Error| ToolError::Model(format!("cannot write {shown}: {e}"));
    let meta = match file.meta() {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(cannot(e)),
    };
    if meta.is_some_and(|m| m.is_dir) {
        return Err(ToolError::Model(format!("{shown} is a directory; give a file path")));
    }
    let old = meta
        .filter(|m| may_read && m.is_file && m.len <= MAX_DIFF_INPUT)
        .and_then(|_| String::from_utf8(file.read().ok()?).ok());
    let is_created = meta.is_none();
    file.write_atomic(content.as_bytes()).map_err(cannot)?;
    Ok(written(shown, content, old, is_created))
}

/// What the model is told of a file written (and the diff from `old` for the UI).
fn written(shown: &str, content: &str, old: Option<String>, is_created: bool) -> ToolOutput {
    let lines = content.lines().count();
    let size = format_size(content.len());
    let plural = if lines == 1 { "" } else { "s" };
    let what = if is_created { "new file" } else { "overwritten" };
    let text = format!("wrote {size} ({lines} line{plural}) to {shown} ({what})");
    let diff = old.map(|old| text_diff::unified(&old, content, shown, 3));
    ToolOutput::text(text).with_details(json!({
        "path": shown,
        "created": is_created,
        "diff": diff,
    }))
}

/// The old content when it is text worth diffing.
fn old_text(path: &Path) -> Option<String> {
    String::from_utf8(fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;
    use serde_json::Value;

    async fn write(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        Write::new(Workspace::new(dir)).execute(args, ToolContext::detached("c1")).await
    }

    #[test]
    fn spec_stays_small() {
        let spec = Write::new(Workspace::new(Path::new("/"))).spec();
        let len = serde_json::to_string(&spec).unwrap().len();
        assert!(len < 500, "write spec is {len} bytes");
    }

    #[tokio::test]
    async fn creates_a_file_and_its_parent_directories() {
        let dir = tempfile::tempdir().unwrap();
        let out = write(dir.path(), json!({"path": "src/deep/a.rs", "content": "fn a() {}\n"}))
            .await
            .unwrap();
        assert_eq!(
            out,
            ToolOutput::text("wrote 10 B (1 line) to src/deep/a.rs (new file)")
                .with_details(json!({"path": "src/deep/a.rs", "created": true, "diff": null}))
        );
        assert_eq!(fs::read_to_string(dir.path().join("src/deep/a.rs")).unwrap(), "fn a() {}\n");
    }

    #[tokio::test]
    async fn overwriting_reports_a_diff_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let out = write(dir.path(), json!({"path": "a.txt", "content": "one\n2\nthree\n"}))
            .await
            .unwrap();
        assert_eq!(
            out,
            ToolOutput::text("wrote 12 B (3 lines) to a.txt (overwritten)").with_details(json!({
                "path": "a.txt",
                "created": false,
                "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+2\n+three\n",
            }))
        );
        assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\n2\nthree\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn overwriting_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        write(dir.path(), json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}))
            .await
            .unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
    }

    #[tokio::test]
    async fn a_directory_or_missing_content_is_a_model_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        let err = write(dir.path(), json!({"path": "src", "content": "x"})).await.unwrap_err();
        assert_eq!(err, ToolError::Model("src is a directory; give a file path".into()));
        let err = write(dir.path(), json!({"path": "a"})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model("invalid arguments for write: missing field `content`".into())
        );
    }

    #[tokio::test]
    async fn empty_content_makes_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = write(dir.path(), json!({"path": "e", "content": ""})).await.unwrap();
        assert_eq!(out.content, ToolOutput::text("wrote 0 B (0 lines) to e (new file)").content);
        assert_eq!(fs::read(dir.path().join("e")).unwrap(), b"");
    }
}
