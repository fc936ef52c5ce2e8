//! Completion for the editor: a provider looks at the text before the cursor and offers
//! items that replace a byte range of it. [`PromptCompleter`] handles the two kinds the
//! prompt needs: `/commands` at the start of the prompt (names and descriptions supplied
//! by the app) and `@file` paths under a root directory (walked with the `ignore` crate
//! so `.gitignore` is honoured, capped, and cached for a few seconds so typing does not
//! re-walk the tree on every key). Both are fuzzy-filtered with [`crate::fuzzy`].

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::editor::Editor;
use crate::fuzzy;

/// One suggestion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionItem {
    /// Shown in the list (`/model`, `src/main.rs`, `src/`).
    pub label: String,
    /// Shown dimmed beside the label.
    pub description: Option<String>,
    /// Text that replaces the range (includes a trailing space when the token is done).
    pub replacement: String,
}

/// Suggestions for the token before the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completions {
    /// Byte range of the editor buffer the chosen item replaces; it ends at the cursor.
    pub range: Range<usize>,
    /// Best first.
    pub items: Vec<CompletionItem>,
}

/// Something that suggests completions.
pub trait Autocomplete {
    /// Suggestions for `before_cursor` (the editor buffer up to the cursor), or `None`
    /// when the cursor is not in a completable token.
    fn complete(&self, before_cursor: &str) -> Option<Completions>;
}

impl Editor {
    /// Replaces the completed token with the item's replacement.
    pub fn accept_completion(&mut self, completions: &Completions, item: &CompletionItem) {
        self.replace_range(completions.range.clone(), &item.replacement);
    }
}

/// A slash command the prompt can complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandInfo {
    /// Name without the slash.
    pub name: String,
    /// One-line description.
    pub description: String,
}

/// Completes `/commands` and `@file` paths.
pub struct PromptCompleter {
    commands: Vec<CommandInfo>,
    /// Paths `@` completion never offers (what the read deny rules cover).
    hidden: Option<Hidden>,
    root: PathBuf,
    /// Most entries the walk collects (large trees stay responsive).
    max_files: usize,
    /// Most items returned.
    max_items: usize,
    files: Mutex<Option<(Instant, Arc<Vec<String>>)>>,
}

/// A predicate over absolute paths.
pub type Hidden = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

impl std::fmt::Debug for PromptCompleter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptCompleter")
            .field("commands", &self.commands.len())
            .field("root", &self.root)
            .field("hidden", &self.hidden.is_some())
            .finish_non_exhaustive()
    }
}

/// How long a file walk is reused; files the agent writes show up after this.
const FILE_CACHE_TTL: Duration = Duration::from_secs(5);

impl PromptCompleter {
    /// A completer for `commands` and files under `root`.
    pub fn new(commands: Vec<CommandInfo>, root: impl Into<PathBuf>) -> PromptCompleter {
        PromptCompleter {
            commands,
            hidden: None,
            root: root.into(),
            max_files: 20_000,
            max_items: 30,
            files: Mutex::new(None),
        }
    }

    /// Never offers paths `hidden` says yes to (nor anything under such a directory).
    pub fn with_hidden(mut self, hidden: Hidden) -> PromptCompleter {
        self.hidden = Some(hidden);
        self
    }

    /// Caps the walk at `n` entries.
    pub fn with_max_files(mut self, n: usize) -> PromptCompleter {
        self.max_files = n;
        self
    }

    /// Caps the items returned at `n`.
    pub fn with_max_items(mut self, n: usize) -> PromptCompleter {
        self.max_items = n.max(1);
        self
    }

    /// Replaces the command list (extensions may add commands at runtime).
    pub fn set_commands(&mut self, commands: Vec<CommandInfo>) {
        self.commands = commands;
    }

    /// Forgets the cached file list so the next `@` completion walks again.
    pub fn invalidate(&self) {
        *self.files.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn complete_command(&self, before: &str) -> Option<Completions> {
        let query = before.strip_prefix('/')?;
        if query.contains(char::is_whitespace) {
            return None;
        }
        let ranked = fuzzy::filter_sorted(query, self.commands.iter(), |c| c.name.as_str());
        let items: Vec<CompletionItem> = ranked
            .into_iter()
            .take(self.max_items)
            .map(|c| CompletionItem {
                label: format!("/{}", c.name),
                description: Some(c.description.clone()),
                replacement: format!("/{} ", c.name),
            })
            .collect();
        (!items.is_empty()).then_some(Completions { range: 0..before.len(), items })
    }

    fn complete_file(&self, before: &str) -> Option<Completions> {
        let token_start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let token = &before[token_start..];
        let query = token.strip_prefix('@')?;
        let query = query.strip_prefix('"').unwrap_or(query);
        let files = self.files();
        let mut scored: Vec<(i64, &String)> =
            files.iter().filter_map(|f| fuzzy::score(query, f).map(|s| (s, f))).collect();
        // Equal scores (an empty query scores all 0): shallow paths first, then by name.
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| depth(a.1).cmp(&depth(b.1)))
                .then_with(|| a.1.len().cmp(&b.1.len()))
                .then_with(|| a.1.cmp(b.1))
        });
        let items: Vec<CompletionItem> = scored
            .into_iter()
            .take(self.max_items)
            .map(|(_, path)| {
                let is_dir = path.ends_with('/');
                let quoted = if path.contains(' ') {
                    format!("@\"{path}{}", if is_dir { "" } else { "\"" })
                } else {
                    format!("@{path}")
                };
                // A directory stays open so completion can continue inside it.
                let replacement = if is_dir { quoted } else { format!("{quoted} ") };
                CompletionItem { label: path.clone(), description: None, replacement }
            })
            .collect();
        (!items.is_empty()).then_some(Completions { range: token_start..before.len(), items })
    }

    fn files(&self) -> Arc<Vec<String>> {
        let mut guard = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, files)) = guard.as_ref()
            && at.elapsed() < FILE_CACHE_TTL
        {
            return Arc::clone(files);
        }
        let files = Arc::new(walk(&self.root, self.max_files, self.hidden.as_ref()));
        *guard = Some((Instant::now(), Arc::clone(&files)));
        files
    }
}

impl Autocomplete for PromptCompleter {
    fn complete(&self, before_cursor: &str) -> Option<Completions> {
        if before_cursor.starts_with('/')
            && !before_cursor.contains('\n')
            && let Some(c) = self.complete_command(before_cursor)
        {
            return Some(c);
        }
        self.complete_file(before_cursor)
    }
}

fn depth(path: &str) -> usize {
    path.trim_end_matches('/').matches('/').count()
}

/// Paths under `root`, relative, `/`-separated, directories with a trailing `/`;
/// `.gitignore` (also outside a git repository), `.ignore` and global git excludes
/// apply, hidden files are included but `.git` is not.
fn walk(root: &Path, max: usize, hidden: Option<&Hidden>) -> Vec<String> {
    let hidden = hidden.cloned();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            e.file_name() != ".git"
                && !hidden.as_ref().is_some_and(|h| e.depth() > 0 && h(e.path()))
        })
        .build();
    let mut out = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        let mut rel = rel.to_string_lossy().replace('\\', "/");
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            rel.push('/');
        }
        out.push(rel);
        if out.len() >= max {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    fn commands() -> Vec<CommandInfo> {
        [("model", "Choose the model"), ("compact", "Summarise"), ("mode", "Switch mode")]
            .into_iter()
            .map(|(n, d)| CommandInfo { name: n.into(), description: d.into() })
            .collect()
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::create_dir_all(p.join("src/nested")).unwrap();
        fs::create_dir_all(p.join("target/debug")).unwrap();
        fs::create_dir_all(p.join(".git")).unwrap();
        fs::write(p.join(".gitignore"), "target/\n*.log\n").unwrap();
        fs::write(p.join("src/main.rs"), "").unwrap();
        fs::write(p.join("src/nested/lib.rs"), "").unwrap();
        fs::write(p.join("target/debug/main.rs"), "").unwrap();
        fs::write(p.join("debug.log"), "").unwrap();
        fs::write(p.join("README.md"), "").unwrap();
        fs::write(p.join("my notes.txt"), "").unwrap();
        fs::write(p.join(".git/config"), "").unwrap();
        dir
    }

    fn labels(c: &Completions) -> Vec<&str> {
        c.items.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn commands_complete_at_the_start_only() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path());
        let got = c.complete("/mod").unwrap();
        assert_eq!(labels(&got), vec!["/mode", "/model"]);
        assert_eq!(got.range, 0..4);
        assert_eq!(got.items[1].replacement, "/model ");
        assert_eq!(got.items[1].description.as_deref(), Some("Choose the model"));
        assert_eq!(labels(&c.complete("/").unwrap()).len(), 3);
        assert_eq!(c.complete("/model gpt"), None);
        assert_eq!(c.complete("see /mod"), None);
    }

    #[test]
    fn hidden_paths_are_never_offered() {
        let dir = tree();
        let src = dir.path().join("src");
        let c = PromptCompleter::new(commands(), dir.path())
            .with_hidden(Arc::new(move |p: &Path| p.starts_with(&src)));
        let all = c.complete("@").unwrap();
        assert!(labels(&all).iter().all(|l| !l.starts_with("src")), "{:?}", labels(&all));
        assert!(labels(&all).contains(&"README.md"));
    }

    #[test]
    fn files_respect_gitignore_and_skip_git() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path());
        let all = c.complete("@").unwrap();
        let mut got = labels(&all);
        got.sort();
        assert_eq!(
            got,
            vec![
                ".gitignore",
                "README.md",
                "my notes.txt",
                "src/",
                "src/main.rs",
                "src/nested/",
                "src/nested/lib.rs"
            ]
        );
        let got = c.complete("look at @mai").unwrap();
        assert_eq!(got.range, 8..12);
        assert_eq!(labels(&got), vec!["src/main.rs"]);
        assert_eq!(got.items[0].replacement, "@src/main.rs ");
    }

    #[test]
    fn directories_stay_open_and_spaces_are_quoted() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path());
        let got = c.complete("@nest").unwrap();
        assert_eq!(got.items[0].label, "src/nested/");
        assert_eq!(got.items[0].replacement, "@src/nested/");
        let got = c.complete("@notes").unwrap();
        assert_eq!(got.items[0].replacement, "@\"my notes.txt\" ");
        assert_eq!(c.complete("plain words"), None);
        assert_eq!(c.complete("@zzzz"), None);
    }

    #[test]
    fn walk_is_capped_and_accept_edits_the_editor() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path()).with_max_files(2);
        assert_eq!(c.complete("@").unwrap().items.len(), 2);
        let c = PromptCompleter::new(commands(), dir.path());
        let mut e = Editor::new();
        e.set_text("read @src/ma");
        let got = c.complete(e.text_before_cursor()).unwrap();
        e.accept_completion(&got, &got.items[0]);
        assert_eq!(e.text(), "read @src/main.rs ");
        let mut e = Editor::new();
        e.set_text("/comp");
        let got = c.complete(e.text_before_cursor()).unwrap();
        e.accept_completion(&got, &got.items[0]);
        assert_eq!(e.text(), "/compact ");
    }

    #[test]
    fn the_file_index_is_built_only_for_an_at_completion() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path());
        let built = |c: &PromptCompleter| c.files.lock().unwrap().is_some();
        for typed in ["", "hello", "/comp", "mail me at x", "read src/ma"] {
            let _ = c.complete(typed);
            assert!(!built(&c), "{typed:?} walked the tree");
        }
        let _ = c.complete("read @src/ma");
        assert!(built(&c));
    }

    #[test]
    fn new_files_appear_after_invalidate() {
        let dir = tree();
        let c = PromptCompleter::new(commands(), dir.path());
        assert_eq!(c.complete("@fresh"), None);
        fs::write(dir.path().join("fresh.rs"), "").unwrap();
        c.invalidate();
        assert_eq!(labels(&c.complete("@fresh").unwrap()), vec!["fresh.rs"]);
    }
}
