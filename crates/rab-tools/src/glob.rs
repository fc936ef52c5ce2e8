//! The `glob` tool: finds files by a glob pattern with `globset`, walking with the
//! `ignore` crate so .gitignore'd and hidden files stay out (hidden ones come back when
//! the pattern names them, as in `.github/**/*.yml`).
//!
//! Results are newest first by modification time, ties by path, as Claude Code's glob
//! does: the file just edited or generated is usually the one wanted.

use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use rab_agent::{
    ABORTED, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

use crate::Workspace;
use crate::sandbox::Access;

/// Most paths in a result.
pub const MAX_PATHS: usize = 1000;

/// Finds files by name pattern.
pub struct Glob {
    ws: Workspace,
}

impl Glob {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `glob`. Field docs are the schema's descriptions, sent on every request.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// E.g. **/*.rs, src/*.{ts,tsx}
    #[schemars(description = "")]
    pub pattern: String,
    /// Base dir (default: root).
    pub path: Option<String>,
}

impl Tool for Glob {
    type Args = Args;
    const NAME: &'static str = "glob";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["Glob"],
        covered_by: &["read"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(args.pattern.clone())
    }

    fn description(&self) -> String {
        "Find files by glob; * stays within a dir, ** crosses dirs. Respects .gitignore, \
         skips hidden files unless the pattern names them. Returns paths newest first, max \
         1000."
            .to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let base = self.ws.resolve_checked(args.path.as_deref().unwrap_or("."), Access::Read)?;
        match tokio::fs::metadata(&base).await {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let shown = self.ws.display(&base);
                return Err(ToolError::Model(format!("not a directory: {shown}")));
            }
            Err(_) => {
                let shown = self.ws.display(&base);
                return Err(ToolError::Model(format!("no such directory: {shown}")));
            }
        }
        let pattern = relative_pattern(&args.pattern, &base);
        if Path::new(&pattern).is_absolute() {
            let msg = "the pattern is an absolute path outside `path`; give the directory as \
                       `path` and a pattern relative to it";
            return Err(ToolError::Model(msg.to_owned()));
        }
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::Model(format!("invalid glob: {e}")))?
            .compile_matcher();
        let query = Query {
            start: base.join(literal_prefix(&pattern)),
            base,
            matcher,
            pattern,
            hidden: self.ws.read_filter().clone(),
        };
        let cancel = cx.cancel.clone();
        let (mut found, hidden) = tokio::task::spawn_blocking(move || walk(&query, &cancel))
            .await
            .map_err(|e| ToolError::Model(format!("glob failed: {e}")))?;
        if cx.cancel.is_cancelled() {
            return Err(ToolError::Model(ABORTED.to_owned()));
        }
        // Newest first; the path breaks ties so equal times still give a stable order.
        found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let total = found.len();
        let mut text: Vec<String> =
            found.iter().take(MAX_PATHS).map(|(p, _)| self.ws.display(p)).collect();
        if total == 0 {
            text.push("no files found".to_owned());
        } else if total > MAX_PATHS {
            let rest = total - MAX_PATHS;
            text.push(format!("[{rest} more files not shown; narrow the pattern or path]"));
        }
        text.extend(crate::hidden_note(hidden));
        let mut details = json!({ "files": total, "truncated": total > MAX_PATHS });
        if hidden > 0 {
            details["hidden"] = json!(hidden);
        }
        Ok(ToolOutput::text(text.join("\n")).with_details(details))
    }
}

/// A compiled glob.
struct Query {
    /// The directory the pattern is relative to.
    base: PathBuf,
    /// Where the walk starts: `base` plus the pattern's leading literal directories.
    start: PathBuf,
    matcher: GlobMatcher,
    pattern: String,
    /// Paths the read deny rules cover: left out.
    hidden: crate::ReadFilter,
}

/// The pattern relative to `base`: a leading `./` or `base` itself removed.
fn relative_pattern(pattern: &str, base: &Path) -> String {
    let pattern = pattern.trim();
    let pattern =
        Path::new(pattern).strip_prefix(base).ok().and_then(Path::to_str).unwrap_or(pattern);
    let mut pattern = pattern;
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest;
    }
    pattern.to_owned()
}

/// The directories at the start of `pattern` that hold no glob syntax (`src/lib` in
/// `src/lib/**/*.rs`): nothing outside them can match, so the walk starts there.
fn literal_prefix(pattern: &str) -> PathBuf {
    let mut parts: Vec<&str> = pattern.split('/').collect();
    parts.pop();
    let literal = parts.into_iter().take_while(|p| {
        !p.is_empty() && *p != ".." && !p.contains(['*', '?', '[', ']', '{', '}', '\\'])
    });
    literal.collect()
}

/// Whether the pattern names a hidden file or directory (a component starting with `.`).
fn names_hidden(pattern: &str) -> bool {
    Path::new(pattern).components().any(|c| match c {
        Component::Normal(name) => name.to_str().is_some_and(|n| n.starts_with('.')),
        Component::Prefix(_) | Component::RootDir | Component::CurDir | Component::ParentDir => {
            false
        }
    })
}

/// Walks in parallel, collecting matching files with their modification times, and
/// counting the matching files and the directories the read deny rules hide.
fn walk(query: &Query, cancel: &CancellationToken) -> (Found, usize) {
    if !query.start.is_dir() {
        return (Vec::new(), 0);
    }
    let found = Mutex::new(Vec::new());
    let hidden = AtomicUsize::new(0);
    let mut walk = WalkBuilder::new(&query.start);
    walk.hidden(!names_hidden(&query.pattern));
    walk.build_parallel().run(|| {
        let mut batch = Batch { local: Vec::new(), found: &found };
        let hidden = &hidden;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else { return WalkState::Continue };
            let is_dir = entry.file_type().is_none_or(|t| t.is_dir());
            let path = entry.path();
            let is_match = !is_dir
                && path.strip_prefix(&query.base).is_ok_and(|rel| query.matcher.is_match(rel));
            if (is_dir || is_match) && query.hidden.hides(path, entry.path_is_symlink()) {
                hidden.fetch_add(1, Ordering::Relaxed);
                return if is_dir { WalkState::Skip } else { WalkState::Continue };
            }
            if is_match {
                let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
                batch.push(path.to_path_buf(), modified.unwrap_or(SystemTime::UNIX_EPOCH));
            }
            WalkState::Continue
        })
    });
    (found.into_inner().unwrap_or_else(PoisonError::into_inner), hidden.into_inner())
}

type Found = Vec<(PathBuf, SystemTime)>;

/// One walker thread's matches, handed over in batches to keep the lock rare, and the
/// rest when the thread's visitor is dropped at the end of the walk.
struct Batch<'a> {
    local: Found,
    found: &'a Mutex<Found>,
}

impl Batch<'_> {
    fn push(&mut self, path: PathBuf, modified: SystemTime) {
        self.local.push((path, modified));
        if self.local.len() >= 256 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.found.lock().unwrap_or_else(PoisonError::into_inner).append(&mut self.local);
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests;
