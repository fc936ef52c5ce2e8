//! `rab sessions list|search|rewind|import|export`: the saved sessions of this directory (or all).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rab_session::export::ExportFormat;
use rab_session::{SessionInfo, list_sessions, session_dir};

use crate::cli::ExportKind;
use crate::{EXIT_OK, EXIT_USAGE, fail};

/// Prints the table; returns the exit code.
pub fn list(sessions_root: &Path, cwd: &Path, all: bool) -> u8 {
    let mut sessions: Vec<SessionInfo> = if all {
        let mut v: Vec<SessionInfo> = std::fs::read_dir(sessions_root)
            .map(|rd| rd.filter_map(Result::ok).flat_map(|d| list_sessions(&d.path())).collect())
            .unwrap_or_default();
        v.sort_by_key(|s| std::cmp::Reverse(s.modified));
        v
    } else {
        list_sessions(&session_dir(sessions_root, cwd))
    };
    if sessions.is_empty() {
        outln!("no saved sessions{}", if all { "" } else { " in this directory (try --all)" });
        return EXIT_OK;
    }
    outln!("{:<36}  {:>9}  {:>8}  first message", "session", "modified", "size");
    for s in sessions.drain(..) {
        let cwd_note = if all { format!("  [{}]", s.cwd) } else { String::new() };
        let first = match &s.name {
            Some(n) => format!("[{n}] {}", s.first_message),
            None => s.first_message.clone(),
        };
        // A session's text is anybody's: shown, never obeyed by the terminal.
        outln!(
            "{:<36}  {:>9}  {:>8}  {}",
            crate::term::safe(&s.id),
            ago(s.modified),
            rab_tools::truncate::format_size(s.size as usize),
            crate::term::safe(&format!("{first}{cwd_note}"))
        );
    }
    EXIT_OK
}

/// How long ago `t` was, in one unit (`5m ago`).
pub fn ago(t: SystemTime) -> String {
    let secs = SystemTime::now().duration_since(t).map_or(0, |d| d.as_secs());
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// Where the search index lives.
pub fn index_dir(home: &Path) -> PathBuf {
    home.join("index")
}

/// Brings the search index up to date on a thread of its own, so that `/search` in a
/// long-lived UI rarely pays for indexing (a first index of a large history takes
/// seconds). Leaving mid-way is safe: the index is written crash-consistently.
pub fn index_in_background(sessions_root: PathBuf, home: &Path) {
    let index = index_dir(home);
    let spawned = std::thread::Builder::new().name("rab-search-index".into()).spawn(move || {
        if let Err(e) = rab_session::search::update_index(&sessions_root, &index) {
            tracing::warn!("search index update failed: {e}");
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the search indexer: {e}");
    }
}

/// `rab sessions search QUERY`.
pub fn search(sessions_root: &Path, home: &Path, query: &str, limit: usize, json: bool) -> u8 {
    let hits = match rab_session::search::search(sessions_root, &index_dir(home), query, limit) {
        Ok(h) => h,
        Err(e) => return fail(crate::EXIT_PROVIDER, &e.to_string()),
    };
    if json {
        for h in &hits {
            let line = serde_json::json!({
                "sessionId": h.session_id, "path": h.path, "cwd": h.cwd, "entryId": h.entry_id,
                "role": h.role, "timestamp": h.timestamp, "snippet": h.snippet, "score": h.score,
            });
            outln!("{line}");
        }
        return EXIT_OK;
    }
    if hits.is_empty() {
        outln!("no matches for \"{}\"", crate::term::safe(query));
        return EXIT_OK;
    }
    for h in &hits {
        let when = h.timestamp.get(..16).unwrap_or(&h.timestamp).replace('T', " ");
        let line = format!("{}  {when}  {}  [{} {}]", &h.session_id, h.cwd, h.role, h.entry_id);
        outln!("{}", crate::term::safe(&line));
        outln!("    {}", crate::term::safe(&h.snippet));
    }
    EXIT_OK
}

/// Finds a session by path, id or unique id prefix, in every directory.
pub fn find(sessions_root: &Path, key: &str) -> Result<PathBuf, String> {
    let as_path = PathBuf::from(key);
    if as_path.is_file() {
        return Ok(as_path);
    }
    let mut found = Vec::new();
    for dir in std::fs::read_dir(sessions_root).into_iter().flatten().filter_map(Result::ok) {
        for f in std::fs::read_dir(dir.path()).into_iter().flatten().filter_map(Result::ok) {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with(key) && name.ends_with(".jsonl") {
                found.push(f.path());
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("no session matches '{key}'; `rab sessions list --all` shows them")),
        n => Err(format!("'{key}' matches {n} sessions; give more of the id")),
    }
}

/// `rab sessions export SESSION --format F [-o FILE]`.
pub fn export(sessions_root: &Path, key: &str, kind: ExportKind, output: Option<&Path>) -> u8 {
    let path = match find(sessions_root, key) {
        Ok(p) => p,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let tape = match rab_session::Tape::open(&path) {
        Ok((t, _)) => t,
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    let format = match kind {
        ExportKind::Html => ExportFormat::Html,
        ExportKind::Md => ExportFormat::Markdown,
        ExportKind::Json => ExportFormat::Json,
    };
    let text = match rab_session::export::export(&tape, format) {
        Ok(t) => t,
        Err(e) => return fail(crate::EXIT_PROVIDER, &e.to_string()),
    };
    match output {
        Some(file) => match rab_tools::atomic_write::write_atomic(file, text.as_bytes()) {
            Ok(()) => {
                eprintln!("wrote {}", file.display());
                EXIT_OK
            }
            Err(e) => fail(crate::EXIT_PROVIDER, &format!("cannot write {}: {e}", file.display())),
        },
        None => {
            out!("{}", crate::term::for_stdout(&text));
            EXIT_OK
        }
    }
}

/// `rab sessions rewind SESSION POINT` (`point`: `None` undoes the last rewind): prints
/// what was restored and what was left alone; exit 1 when a file could not be restored.
pub fn rewind(
    sessions_root: &Path,
    home: &Path,
    key: &str,
    point: Option<&str>,
    what: rab_core::rewind::What,
) -> u8 {
    let path = match find(sessions_root, key) {
        Ok(p) => p,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let mut tape = match rab_session::Tape::open(&path) {
        Ok((tape, _)) => tape,
        Err(e) => return fail(EXIT_USAGE, &format!("{}: {e}", path.display())),
    };
    let store = rab_core::checkpoint::store(home);
    let done = match point {
        None => rab_core::rewind::undo(&mut tape, &store, what.force),
        Some(point) => match rab_core::rewind::resolve_point(&tape, point) {
            Ok(target) => rab_core::rewind::rewind(&mut tape, &store, target.as_deref(), what),
            Err(e) => return fail(EXIT_USAGE, &e),
        },
    };
    let report = match done {
        Ok(r) => r,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    for line in report.lines() {
        outln!("{}", crate::term::safe(&line));
    }
    if let Some(id) = &report.entry {
        outln!("rewind recorded as entry {id}; undo with: rab sessions rewind {key} --undo");
    }
    if report.conflicts.is_empty() && report.unrestorable.is_empty() { EXIT_OK } else { 1 }
}

/// `rab sessions import claude|pi [PATH]`: prints what was imported, what was there
/// already and what could not be converted; exit 1 when a file could not be read.
pub fn import(
    sessions_root: &Path,
    from: crate::cli::ImportSource,
    path: Option<&Path>,
    home: Option<&Path>,
) -> u8 {
    use rab_session::import::Source;
    let source = match from {
        crate::cli::ImportSource::Claude => Source::Claude,
        crate::cli::ImportSource::Pi => Source::Pi,
    };
    let dir = match (path, home) {
        (Some(p), _) => p.to_owned(),
        (None, Some(h)) => source.default_dir(h),
        (None, None) => return fail(EXIT_USAGE, "HOME is not set: give the folder to import"),
    };
    if !dir.exists() {
        return fail(
            EXIT_USAGE,
            &format!("{} does not exist: give the file or folder of the sessions", dir.display()),
        );
    }
    let summary = rab_session::import::import(source, &dir, sessions_root);
    let safe = |p: &Path| crate::term::safe(&p.display().to_string()).into_owned();
    for (tape, entries) in &summary.imported {
        outln!("imported {} ({entries} entries)", safe(tape));
    }
    if !summary.already.is_empty() {
        outln!("{} session(s) imported before, left as they are", summary.already.len());
    }
    for line in &summary.skipped {
        outln!("not converted: {}", crate::term::safe(line));
    }
    for (file, why) in &summary.failed {
        outln!("failed: {}: {}", safe(file), crate::term::safe(why));
    }
    outln!(
        "{} imported, {} already there, {} failed",
        summary.imported.len(),
        summary.already.len(),
        summary.failed.len()
    );
    if summary.failed.is_empty() { EXIT_OK } else { 1 }
}
