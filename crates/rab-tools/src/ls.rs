//! The `ls` tool: one directory's entries, directories first, each group sorted
//! case-insensitively; directories end in `/`, symlinks show `-> target`, dotfiles are
//! included (the model often needs `.github/` or `.env.example`). At most 500 entries.

use std::fs;
use std::io;
use std::path::Path;

use rab_agent::{RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// Most entries listed.
pub const MAX_ENTRIES: usize = 500;

/// Lists a directory.
pub struct Ls {
    ws: Workspace,
}

impl Ls {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `ls`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// Directory (default: project root).
    #[schemars(description = "Default: project root.")]
    pub path: Option<String>,
}

impl Tool for Ls {
    type Args = Args;
    const NAME: &'static str = "ls";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["LS"],
        covered_by: &["read"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(args.path.clone().unwrap_or_default())
    }

    fn description(&self) -> String {
        "List a directory: subdirectories first (ending in /), then files, dotfiles included, \
         symlinks as name -> target. At most 500 entries."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let (path, pinned) = self
            .ws
            .resolve_handle(args.path.as_deref().unwrap_or("."), crate::sandbox::Access::Read)?;
        let shown = self.ws.display(&path);
        let hidden = self.ws.read_filter().clone();
        tokio::task::spawn_blocking(move || list(&path, &pinned, &shown, &hidden))
            .await
            .map_err(|e| ToolError::Model(format!("ls failed: {e}")))?
    }
}

struct Entry {
    name: String,
    is_dir: bool,
    /// The link target, for symlinks.
    link: Option<String>,
    /// A symlink whose target does not exist.
    is_broken: bool,
}

impl Entry {
    fn render(&self) -> String {
        let slash = if self.is_dir { "/" } else { "" };
        match &self.link {
            None => format!("{}{slash}", self.name),
            Some(target) if self.is_broken => format!("{} -> {target} (broken link)", self.name),
            Some(target) => format!("{}{slash} -> {target}", self.name),
        }
    }
}

fn list(
    path: &Path,
    pinned: &crate::handle::FileHandle,
    shown: &str,
    hidden: &crate::ReadFilter,
) -> Result<ToolOutput, ToolError> {
    let err = |e: io::Error| ToolError::Model(format!("cannot list {shown}: {e}"));
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ToolError::Model(format!("directory not found: {shown}")));
        }
        Err(e) => return Err(err(e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(ToolError::Model(format!(
                "{shown} is a file, not a directory; use read to view it"
            )));
        }
        Ok(_) => {}
    }
    // Listed through the folder's handle: a link swapped in for it since the check is
    // refused, not followed.
    #[cfg(target_os = "linux")]
    let dir = pinned.open_dir().map_err(err)?;
    #[cfg(target_os = "linux")]
    let listed = dir.fd_path();
    #[cfg(not(target_os = "linux"))]
    let listed = {
        let _ = pinned;
        path.to_path_buf()
    };
    let mut entries = Vec::new();
    let mut left_out = 0;
    for item in fs::read_dir(&listed).map_err(err)? {
        let item = item.map_err(err)?;
        let named = path.join(item.file_name());
        if hidden.hides(&named, item.file_type().is_ok_and(|t| t.is_symlink())) {
            left_out += 1;
            continue;
        }
        entries.push(entry(&item));
    }
    let note = crate::hidden_note(left_out);
    if entries.is_empty() {
        let empty = format!("{shown} is empty");
        return Ok(ToolOutput::text(note.map_or(empty.clone(), |n| format!("{empty}\n{n}"))));
    }
    entries.sort_by_cached_key(|e| (!e.is_dir, e.name.to_lowercase(), e.name.clone()));
    let total = entries.len();
    let mut lines: Vec<String> = entries.iter().take(MAX_ENTRIES).map(Entry::render).collect();
    if total > MAX_ENTRIES {
        lines.push(format!(
            "[{} more entries not shown ({total} in all); use glob or bash to narrow down]",
            total - MAX_ENTRIES
        ));
    }
    lines.extend(note);
    Ok(ToolOutput::text(lines.join("\n")))
}

fn entry(item: &fs::DirEntry) -> Entry {
    let name = item.file_name().to_string_lossy().into_owned();
    let is_link = item.file_type().is_ok_and(|t| t.is_symlink());
    // `metadata` follows links, so a link to a directory sorts and reads as one.
    let target_meta = fs::metadata(item.path());
    Entry {
        name,
        is_dir: target_meta.as_ref().is_ok_and(fs::Metadata::is_dir),
        link: is_link.then(|| {
            fs::read_link(item.path()).map(|t| t.display().to_string()).unwrap_or_default()
        }),
        is_broken: is_link && target_meta.is_err(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;
    use serde_json::{Value, json};

    async fn ls(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        Ls::new(Workspace::new(dir)).execute(args, ToolContext::detached("c1")).await
    }

    async fn ls_text(dir: &Path, args: Value) -> String {
        let out = ls(dir, args).await.unwrap();
        match out.content.as_slice() {
            [rab_ai::Content::Text { text }] => text.clone(),
            other => panic!("expected one text block, got {other:?}"),
        }
    }

    #[test]
    fn spec_stays_small() {
        let spec = Ls::new(Workspace::new(Path::new("/"))).spec();
        let len = serde_json::to_string(&spec).unwrap().len();
        assert!(len < 500, "ls spec is {len} bytes");
    }

    #[tokio::test]
    async fn lists_directories_first_with_dotfiles_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("src")).unwrap();
        fs::create_dir(d.join(".github")).unwrap();
        fs::write(d.join("b.txt"), "").unwrap();
        fs::write(d.join("A.md"), "").unwrap();
        fs::write(d.join(".env"), "").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("src", d.join("code")).unwrap();
            std::os::unix::fs::symlink("b.txt", d.join("link.txt")).unwrap();
            std::os::unix::fs::symlink("gone", d.join("dead")).unwrap();
        }
        let text = ls_text(d, json!({})).await;
        #[cfg(unix)]
        assert_eq!(
            text,
            ".github/\ncode/ -> src\nsrc/\n.env\nA.md\nb.txt\ndead -> gone (broken link)\n\
             link.txt -> b.txt"
        );
        #[cfg(not(unix))]
        assert_eq!(text, ".github/\nsrc/\n.env\nA.md\nb.txt");
    }

    #[tokio::test]
    async fn lists_a_subdirectory_and_says_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/empty")).unwrap();
        fs::write(dir.path().join("a/x.rs"), "").unwrap();
        assert_eq!(ls_text(dir.path(), json!({"path": "a"})).await, "empty/\nx.rs");
        assert_eq!(ls_text(dir.path(), json!({"path": "a/empty"})).await, "a/empty is empty");
    }

    #[tokio::test]
    async fn caps_at_500_entries_with_a_count_of_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..520 {
            fs::write(dir.path().join(format!("f{i:04}")), "").unwrap();
        }
        let text = ls_text(dir.path(), json!({})).await;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), MAX_ENTRIES + 1);
        assert_eq!(lines[0], "f0000");
        assert_eq!(lines[499], "f0499");
        assert_eq!(
            lines[500],
            "[20 more entries not shown (520 in all); use glob or bash to narrow down]"
        );
    }

    #[tokio::test]
    async fn missing_path_or_a_file_is_a_model_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f.txt"), "").unwrap();
        let err = ls(dir.path(), json!({"path": "nope"})).await.unwrap_err();
        assert_eq!(err, ToolError::Model("directory not found: nope".into()));
        let err = ls(dir.path(), json!({"path": "f.txt"})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model("f.txt is a file, not a directory; use read to view it".into())
        );
    }
}
