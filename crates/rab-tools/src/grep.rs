//! The `grep` tool: ripgrep's engine in-process. The `ignore` crate's parallel walker
//! (.gitignore/.ignore respected, hidden files skipped) feeds one `grep-searcher`
//! per thread, with binary files skipped at their first NUL byte as `rg` does.
//!
//! Every match is counted, but only the ones that can still be shown are kept: output
//! is sorted by path, so once enough matches sit in early paths, later paths only add
//! to the count. Matched lines go into a per-thread buffer reused from file to file, so
//! a search with a million matches does not allocate a million strings.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{WalkBuilder, WalkState};
use rab_agent::{
    ABORTED, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Workspace;
use crate::sandbox::Access;
use crate::truncate::MAX_BYTES;

/// Most matches (or files, with `files_only`) in a result.
pub const MAX_RESULTS: usize = 200;
/// Longest line shown, in characters.
const MAX_LINE_CHARS: usize = 300;
/// Bytes kept of a line: enough for `MAX_LINE_CHARS` characters of any width.
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS;
/// Most context lines on each side of a match.
const MAX_CONTEXT: usize = 10;
/// Longest line searched: a file with a longer one is skipped and named, so one
/// minified bundle or data dump cannot take the memory of its size.
const MAX_SEARCH_LINE: usize = 8 << 20;

/// Searches file contents with a regex.
pub struct Grep {
    ws: Workspace,
}

impl Grep {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `grep`. Field docs are the schema's descriptions, sent on every
/// request: fields whose name says it all have none (`path` is a file or directory,
/// the root by default).
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// The regular expression.
    #[schemars(description = "")]
    pub pattern: String,
    /// A file or directory; the root by default.
    #[schemars(description = "")]
    pub path: Option<String>,
    /// Filter, e.g. *.rs, src/**/*.ts
    #[schemars(description = "E.g. *.rs, src/**/*.ts")]
    pub glob: Option<String>,
    /// Match regardless of case.
    #[schemars(description = "")]
    pub ignore_case: Option<bool>,
    /// Lines around matches, max 10
    pub context: Option<usize>,
    /// Only the names of matching files.
    #[schemars(description = "")]
    pub files_only: Option<bool>,
}

impl Tool for Grep {
    type Args = Args;
    const NAME: &'static str = "grep";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["Grep"],
        covered_by: &["read"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        let mut out = format!("\"{}\"", args.pattern);
        if let Some(path) = args.path.as_deref().filter(|p| !p.is_empty()) {
            out.push_str(&format!(" in {path}"));
        }
        if let Some(glob) = args.glob.as_deref().filter(|g| !g.is_empty()) {
            out.push_str(&format!(" ({glob})"));
        }
        Some(out)
    }

    fn description(&self) -> String {
        "Regex search in files (ripgrep; skips gitignored, hidden, binary). Returns sorted \
         path:line:text, max 200."
            .to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let query = self.query(&args).await?;
        let cancel = cx.cancel.clone();
        let found = tokio::task::spawn_blocking(move || search(&query, &cancel))
            .await
            .map_err(|e| ToolError::Model(format!("grep failed: {e}")))?;
        if cx.cancel.is_cancelled() {
            return Err(ToolError::Model(ABORTED.to_owned()));
        }
        let shape = Shape {
            files_only: args.files_only.unwrap_or(false),
            has_context: args.context.is_some_and(|c| c > 0),
        };
        let hidden = found.hidden;
        let mut too_long: Vec<String> = found.too_long.iter().map(|p| self.ws.display(p)).collect();
        too_long.sort_unstable();
        let mut rendered = render(found, &self.ws, &shape);
        if let Some(note) = too_long_note(&too_long) {
            rendered.text.push('\n');
            rendered.text.push_str(&note);
        }
        if let Some(note) = crate::hidden_note(hidden) {
            rendered.text.push('\n');
            rendered.text.push_str(&note);
        }
        let mut details = json!({
            "matches": rendered.total,
            "files": rendered.files,
            "truncated": rendered.is_truncated,
        });
        if hidden > 0 {
            details["hidden"] = json!(hidden);
        }
        if !too_long.is_empty() {
            details["skippedLongLines"] = json!(too_long.len());
        }
        Ok(ToolOutput::text(rendered.text).with_details(details))
    }
}

impl Grep {
    /// Checks the arguments and compiles the regex and the glob.
    async fn query(&self, args: &Args) -> Result<Query, ToolError> {
        let root = self.ws.root();
        let (target, pinned) =
            self.ws.resolve_handle(args.path.as_deref().unwrap_or("."), Access::Read)?;
        if tokio::fs::metadata(&target).await.is_err() {
            let shown = self.ws.display(&target);
            return Err(ToolError::Model(format!("no such file or directory: {shown}")));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.ignore_case.unwrap_or(false))
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| ToolError::Model(format!("invalid regex: {e}")))?;
        // Globs are relative to the root, like the paths in the output.
        let glob_root = if target.starts_with(&root) { root.as_path() } else { target.as_path() };
        let overrides = match &args.glob {
            Some(glob) => Some(
                OverrideBuilder::new(glob_root)
                    .add(glob)
                    .and_then(|b| b.build())
                    .map_err(|e| ToolError::Model(format!("invalid glob: {e}")))?,
            ),
            None => None,
        };
        // Files are opened beneath the target's handle, never through a link swapped into
        // the tree while the search walks it.
        #[cfg(unix)]
        let beneath = pinned.open_dir().ok().map(std::sync::Arc::new);
        Ok(Query {
            matcher,
            #[cfg(unix)]
            beneath,
            pinned: std::sync::Arc::new(pinned),
            target,
            overrides,
            context: args.context.unwrap_or(0).min(MAX_CONTEXT),
            files_only: args.files_only.unwrap_or(false),
            hidden: self.ws.read_filter().clone(),
        })
    }
}

/// A compiled search.
struct Query {
    matcher: RegexMatcher,
    /// The target folder, open: files found under it are opened beneath it.
    #[cfg(unix)]
    beneath: Option<std::sync::Arc<crate::beneath::RootDir>>,
    /// The target, pinned when it was checked (a single file is opened through it).
    pinned: std::sync::Arc<crate::handle::FileHandle>,
    target: PathBuf,
    overrides: Option<Override>,
    context: usize,
    files_only: bool,
    /// Paths the read deny rules cover: not searched.
    hidden: crate::ReadFilter,
}

/// One line kept for output.
struct Line {
    number: u64,
    is_match: bool,
    text: String,
}

/// The kept lines of one file.
struct FileHits {
    path: PathBuf,
    lines: Vec<Line>,
    /// Results this file contributes: its shown matches, or 1 with `files_only`.
    units: usize,
}

/// What all threads found.
#[derive(Default)]
struct Found {
    files: Vec<FileHits>,
    total_matches: usize,
    total_files: usize,
    kept_units: usize,
    /// Files sorting after this one cannot be shown: earlier ones fill the result.
    cutoff: Option<PathBuf>,
    /// Set when the only file searched was binary.
    binary_target: bool,
    /// Files and directories left out for the read deny rules.
    hidden: usize,
    /// Files skipped because a line is longer than [`MAX_SEARCH_LINE`].
    too_long: Vec<PathBuf>,
}

impl Found {
    fn add(&mut self, path: &Path, sink: &FileSink) {
        self.total_matches += sink.matches;
        self.total_files += 1;
        if self.cutoff.as_deref().is_some_and(|cut| path > cut) {
            return;
        }
        let units = if sink.files_only { 1 } else { sink.kept_matches };
        let lines = sink.lines.iter().map(|l| sink.line(l)).collect();
        self.files.push(FileHits { path: path.to_path_buf(), lines, units });
        self.kept_units += units;
        if self.kept_units > 2 * MAX_RESULTS {
            self.prune();
        }
    }

    /// Drops files that sort after the first `MAX_RESULTS` results.
    fn prune(&mut self) {
        self.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let mut kept = 0;
        let mut end = self.files.len();
        for (i, file) in self.files.iter().enumerate() {
            kept += file.units;
            if kept >= MAX_RESULTS {
                end = i + 1;
                break;
            }
        }
        self.files.truncate(end);
        self.kept_units = kept;
        self.cutoff = self.files.last().map(|f| f.path.clone());
    }
}

/// A kept line: its bytes live in [`FileSink::text`].
struct LineRef {
    number: u64,
    is_match: bool,
    start: usize,
    end: usize,
    is_cut: bool,
}

/// Per-thread search state, reused from file to file.
struct FileSink {
    files_only: bool,
    matches: usize,
    kept_matches: usize,
    last_match_kept: bool,
    is_binary: bool,
    lines: Vec<LineRef>,
    text: Vec<u8>,
}

impl FileSink {
    fn new(files_only: bool) -> Self {
        Self {
            files_only,
            matches: 0,
            kept_matches: 0,
            last_match_kept: false,
            is_binary: false,
            lines: Vec::new(),
            text: Vec::new(),
        }
    }

    fn reset(&mut self) {
        self.matches = 0;
        self.kept_matches = 0;
        self.last_match_kept = false;
        self.is_binary = false;
        self.lines.clear();
        self.text.clear();
    }

    fn keep(&mut self, number: Option<u64>, is_match: bool, bytes: &[u8]) {
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let is_cut = line.len() > MAX_LINE_BYTES;
        let start = self.text.len();
        self.text.extend_from_slice(&line[..line.len().min(MAX_LINE_BYTES)]);
        let end = self.text.len();
        self.lines.push(LineRef { number: number.unwrap_or(0), is_match, start, end, is_cut });
    }

    fn line(&self, l: &LineRef) -> Line {
        let text = String::from_utf8_lossy(&self.text[l.start..l.end]);
        let mut chars = text.char_indices();
        let text = match chars.nth(MAX_LINE_CHARS) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None if l.is_cut => format!("{text}…"),
            None => text.into_owned(),
        };
        Line { number: l.number, is_match: l.is_match, text }
    }
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        if self.files_only {
            // One match settles it; the rest of the file need not be read.
            return Ok(false);
        }
        self.last_match_kept = self.kept_matches < MAX_RESULTS;
        if self.last_match_kept {
            self.kept_matches += 1;
            self.keep(mat.line_number(), true, mat.bytes());
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let is_wanted = match ctx.kind() {
            SinkContextKind::After => self.last_match_kept,
            SinkContextKind::Before | SinkContextKind::Other => self.kept_matches < MAX_RESULTS,
        };
        if is_wanted {
            self.keep(ctx.line_number(), false, ctx.bytes());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.is_binary = true;
        Ok(true)
    }
}

/// Searches one file the walk found: opened beneath the target folder's handle, or
/// through the target's own handle when it is a file (a link swapped in on the way is
/// refused, not followed).
fn search_entry(
    query: &Query,
    searcher: &mut grep_searcher::Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    sink: &mut FileSink,
) -> Result<(), std::io::Error> {
    let rel = path.strip_prefix(&query.target).ok();
    if rel.is_some_and(|r| r.as_os_str().is_empty()) {
        return searcher.search_file(matcher, &query.pinned.open()?, sink);
    }
    #[cfg(unix)]
    if let (Some(root), Some(rel)) = (&query.beneath, rel) {
        return searcher.search_file(matcher, &root.open_read(rel)?, sink);
    }
    searcher.search_path(matcher, path, sink)
}

/// Runs the search on the calling thread and the walker's threads; stops early when
/// `cancel` fires (checked before each file).
fn search(query: &Query, cancel: &CancellationToken) -> Found {
    let found = Mutex::new(Found::default());
    let mut searcher = SearcherBuilder::new();
    searcher
        .binary_detection(BinaryDetection::quit(b'\0'))
        .heap_limit(Some(MAX_SEARCH_LINE))
        .line_number(true)
        .before_context(query.context)
        .after_context(query.context);
    let mut walk = WalkBuilder::new(&query.target);
    if let Some(overrides) = &query.overrides {
        walk.overrides(overrides.clone());
    }
    let is_single_file = query.target.is_file();
    walk.build_parallel().run(|| {
        let mut searcher = searcher.build();
        let matcher = query.matcher.clone();
        let mut sink = FileSink::new(query.files_only);
        let found = &found;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            // Unreadable directories and broken links are skipped, as rg does.
            let Ok(entry) = entry else { return WalkState::Continue };
            if query.hidden.hides(entry.path(), entry.path_is_symlink()) {
                found.lock().unwrap_or_else(PoisonError::into_inner).hidden += 1;
                return if entry.file_type().is_some_and(|t| t.is_dir()) {
                    WalkState::Skip
                } else {
                    WalkState::Continue
                };
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            sink.reset();
            if let Err(e) = search_entry(query, &mut searcher, &matcher, entry.path(), &mut sink) {
                // A line longer than the buffer cap (a minified bundle, a data dump) would
                // need the whole line in memory: the file is skipped and named instead.
                if e.to_string().contains("allocation limit") {
                    found
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .too_long
                        .push(entry.into_path());
                }
                return WalkState::Continue;
            }
            if sink.matches > 0 || (is_single_file && sink.is_binary) {
                let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
                if sink.matches > 0 {
                    found.add(entry.path(), &sink);
                } else {
                    found.binary_target = true;
                }
            }
            WalkState::Continue
        })
    });
    found.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// The note naming files skipped for an over-long line (at most five named).
fn too_long_note(paths: &[String]) -> Option<String> {
    let (first, rest) = (paths.get(..paths.len().min(5))?, paths.len().saturating_sub(5));
    if first.is_empty() {
        return None;
    }
    let more = if rest > 0 { format!(" and {rest} more") } else { String::new() };
    Some(format!(
        "[not searched: {}{more}: a line longer than {} MB; use read with offset, or bash with head/cut]",
        first.join(", "),
        MAX_SEARCH_LINE >> 20
    ))
}

/// The text for the model.
struct Rendered {
    text: String,
    total: usize,
    files: usize,
    is_truncated: bool,
}

/// `path:line:text` lines sorted by path and line (`path-line-text` for context, `--`
/// between groups), capped at [`MAX_RESULTS`] results and [`MAX_BYTES`].
fn render(mut found: Found, ws: &Workspace, query: &Shape) -> Rendered {
    let total = if query.files_only { found.total_files } else { found.total_matches };
    let files = found.total_files;
    if total == 0 {
        let text = if found.binary_target { "no matches (binary file)" } else { "no matches" };
        return Rendered { text: text.to_owned(), total, files, is_truncated: false };
    }
    found.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let mut out = String::new();
    let mut shown = 0;
    'files: for file in &found.files {
        let path = ws.display(&file.path);
        if query.files_only {
            if shown == MAX_RESULTS || out.len() + path.len() >= MAX_BYTES {
                break;
            }
            out.push_str(&path);
            out.push('\n');
            shown += 1;
            continue;
        }
        let mut prev: Option<u64> = None;
        for line in &file.lines {
            if line.is_match && shown == MAX_RESULTS {
                break 'files;
            }
            let sep = if line.is_match { ':' } else { '-' };
            let entry = format!("{path}{sep}{}{sep}{}\n", line.number, line.text);
            if out.len() + entry.len() + 3 > MAX_BYTES {
                break 'files;
            }
            let is_gap = prev.is_none_or(|p| line.number != p + 1);
            if query.has_context && is_gap && !out.is_empty() {
                out.push_str("--\n");
            }
            out.push_str(&entry);
            prev = Some(line.number);
            shown += usize::from(line.is_match);
        }
    }
    let rest = total - shown;
    if rest > 0 {
        let what = if query.files_only { "files" } else { "matches" };
        out.push_str(&format!("[{rest} more {what} not shown; narrow the pattern or path]\n"));
    }
    out.truncate(out.trim_end().len());
    Rendered { text: out, total, files, is_truncated: rest > 0 }
}

/// How results are laid out.
struct Shape {
    files_only: bool,
    has_context: bool,
}

#[cfg(test)]
mod tests;
