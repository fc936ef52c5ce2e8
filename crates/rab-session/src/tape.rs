//! The tape: an append-only JSONL file holding a tree of entries. Appending an entry
//! whose parent is not the last one starts a branch; the active branch is the path from
//! the root to the current leaf.
//!
//! Every entry is written with one `write` call before `append` returns, so a crash
//! loses at most a torn last line, which loading skips with a warning.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rab_ai::{Content, Message, ToolResultMessage};
use serde::Deserialize;

use crate::entry::{Entry, EntryBody, FORMAT_VERSION, Header};
use crate::id::{entry_id, session_id};
use crate::time::{now_millis, rfc3339};

/// Result text given to a tool call whose result was never recorded (rab was killed).
pub const INTERRUPTED_RESULT: &str =
    "aborted: rab stopped before this tool call finished; its effects are unknown";

/// Why a tape could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// File system failure.
    #[error("session {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not a rab session.
    #[error("{} is not a rab session: {message}", path.display())]
    NotASession {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An entry could not be serialised.
    #[error("cannot serialise a session entry: {0}")]
    Encode(String),
    /// A branch point that does not exist.
    #[error("no entry {0} in this session")]
    UnknownEntry(String),
}

/// Something odd found while loading that did not stop the load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line number.
    pub line: usize,
    /// What was skipped and why.
    pub message: String,
}

/// A session: header, entries and the current leaf; backed by a file unless ephemeral.
#[derive(Debug)]
pub struct Tape {
    path: Option<PathBuf>,
    header: Header,
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    leaf: Option<usize>,
    file: Option<File>,
    /// The file exists and holds the header (false until the first append).
    is_started: bool,
}

/// The fields every line has, parsed first so the tree is known before messages are.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
}

impl Tape {
    /// A new session stored at `dir/<id>.jsonl`; the file is created on first append.
    pub fn create(dir: &Path, cwd: &Path, parent_session: Option<String>) -> Self {
        let id = session_id();
        let path = dir.join(format!("{id}.jsonl"));
        Self::fresh(Some(path), id, cwd, parent_session)
    }

    /// A session that is never written (`--no-session`).
    pub fn ephemeral(cwd: &Path) -> Self {
        Self::fresh(None, session_id(), cwd, None)
    }

    fn fresh(
        path: Option<PathBuf>,
        id: String,
        cwd: &Path,
        parent_session: Option<String>,
    ) -> Self {
        let header = Header {
            kind: "session".to_owned(),
            version: FORMAT_VERSION,
            id,
            cwd: cwd.display().to_string(),
            timestamp: rfc3339(now_millis()),
            parent_session,
        };
        Self {
            path,
            header,
            entries: Vec::new(),
            index: HashMap::new(),
            leaf: None,
            file: None,
            is_started: false,
        }
    }

    /// Loads a session file. Unreadable lines (a torn last line after a crash) are
    /// skipped and reported as warnings; the last entry becomes the leaf.
    pub fn open(path: &Path) -> Result<(Self, Vec<Warning>), Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        // fs::read sizes the buffer from the file's length: no regrowing of a large tape.
        let bytes = std::fs::read(path).map_err(io)?;
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(&bytes),
        };
        let mut lines = text.split('\n').enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = lines.next() else {
            return Err(Error::NotASession {
                path: path.to_owned(),
                message: "the file is empty".to_owned(),
            });
        };
        let header: Header = serde_json::from_str(first).map_err(|e| Error::NotASession {
            path: path.to_owned(),
            message: format!("the first line is not a session header ({e})"),
        })?;
        if header.kind != "session" {
            return Err(Error::NotASession {
                path: path.to_owned(),
                message: format!("the first line has type '{}', not 'session'", header.kind),
            });
        }
        let mut tape = Self {
            path: Some(path.to_owned()),
            header,
            entries: Vec::new(),
            index: HashMap::new(),
            leaf: None,
            file: None,
            is_started: true,
        };
        let mut warnings = Vec::new();
        let ends_with_newline = bytes.last() == Some(&b'\n');
        let lines: Vec<(usize, &str)> = lines.collect();
        // The line a torn write would be on: the text after the last newline.
        let last_line = text.matches('\n').count() + 1;
        let parsed_all = parse_lines(&lines);
        tape.entries.reserve(lines.len());
        tape.index.reserve(lines.len());
        for (lineno, parsed) in parsed_all {
            match parsed {
                Ok(entry) => tape.insert(entry),
                Err(e) => {
                    let line = lines.iter().find(|(i, _)| i + 1 == lineno).map_or("", |(_, l)| *l);
                    let torn = lineno == last_line && !ends_with_newline;
                    let kind =
                        serde_json::from_str::<Probe<'_>>(line).map(|p| p.kind.to_owned()).ok();
                    let message = match (torn, kind) {
                        (true, _) => {
                            format!("skipped a torn last line (rab was stopped mid-write): {e}")
                        }
                        (false, Some(k)) => format!("skipped an unreadable '{k}' entry: {e}"),
                        (false, None) => format!("skipped a line that is not JSON: {e}"),
                    };
                    tracing::warn!(path = %path.display(), line = lineno, "{message}");
                    warnings.push(Warning { line: lineno, message });
                }
            }
        }
        if !tape.entries.is_empty() {
            tape.leaf = Some(tape.entries.len() - 1);
        }
        Ok((tape, warnings))
    }

    fn insert(&mut self, entry: Entry) {
        self.index.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }

    /// Stores a not-yet-written session at `path` instead (`--session PATH`).
    pub fn set_path(&mut self, path: PathBuf) {
        if !self.is_started {
            self.path = Some(path);
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file, unless ephemeral.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// An entry by id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The current leaf (the parent of the next entry).
    pub fn leaf(&self) -> Option<&Entry> {
        self.leaf.map(|i| &self.entries[i])
    }

    /// Makes `id` the leaf, so the next entry starts a branch there (`None`: a new root).
    pub fn branch_from(&mut self, id: Option<&str>) -> Result<(), Error> {
        self.leaf = match id {
            Some(id) => {
                Some(*self.index.get(id).ok_or_else(|| Error::UnknownEntry(id.to_owned()))?)
            }
            None => None,
        };
        Ok(())
    }

    /// Appends an entry after the leaf, writes it, and makes it the leaf.
    pub fn append(&mut self, body: EntryBody) -> Result<&Entry, Error> {
        let mut id = entry_id();
        while self.index.contains_key(&id) {
            id = entry_id();
        }
        let entry = Entry {
            id,
            parent_id: self.leaf().map(|e| e.id.clone()),
            timestamp: rfc3339(now_millis()),
            body,
        };
        self.write(&entry)?;
        self.insert(entry);
        self.leaf = Some(self.entries.len() - 1);
        Ok(&self.entries[self.entries.len() - 1])
    }

    fn write(&mut self, entry: &Entry) -> Result<(), Error> {
        let Some(path) = self.path.clone() else { return Ok(()) };
        let io = |source| Error::Io { path: path.clone(), source };
        let mut line = Vec::with_capacity(256);
        if self.file.is_none() {
            let file = open_append(&path).map_err(io)?;
            if !self.is_started {
                serde_json::to_writer(&mut line, &self.header)
                    .map_err(|e| Error::Encode(e.to_string()))?;
                line.push(b'\n');
            } else if !ends_with_newline(&path).map_err(io)? {
                // A torn last line must not swallow the next entry.
                line.push(b'\n');
            }
            self.file = Some(file);
        }
        serde_json::to_writer(&mut line, entry).map_err(|e| Error::Encode(e.to_string()))?;
        line.push(b'\n');
        let Some(file) = self.file.as_mut() else { return Ok(()) };
        file.write_all(&line).map_err(io)?;
        self.is_started = true;
        Ok(())
    }

    /// The entries from the root to the leaf.
    pub fn active_branch(&self) -> Vec<&Entry> {
        let mut path = Vec::new();
        let mut cursor = self.leaf;
        while let Some(i) = cursor {
            let e = &self.entries[i];
            path.push(e);
            cursor = e.parent_id.as_ref().and_then(|p| self.index.get(p).copied());
            if path.len() > self.entries.len() {
                break; // a cycle in a hand-edited file must not hang the load
            }
        }
        path.reverse();
        path
    }

    /// The conversation on the active branch, as sent to the model. A tool call
    /// without a recorded result gets [`INTERRUPTED_RESULT`].
    pub fn messages(&self) -> Vec<Message> {
        let mut out: Vec<Message> = Vec::new();
        let mut pending: Vec<(String, String)> = Vec::new();
        for entry in self.active_branch() {
            let Some(message) = entry.message() else { continue };
            match message {
                Message::ToolResult(r) => pending.retain(|(id, _)| *id != r.tool_call_id),
                Message::User(_) | Message::Assistant(_) => {
                    close_pending(&mut out, &mut pending);
                    if let Message::Assistant(a) = message {
                        pending = a.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                    }
                }
            }
            out.push(message.clone());
        }
        close_pending(&mut out, &mut pending);
        out
    }

    /// Records a result for each tool call of the last turn that has none (rab was
    /// killed while tools ran), so the file itself is consistent again before the
    /// session goes on. Returns how many results were added.
    pub fn repair(&mut self) -> Result<usize, Error> {
        let mut answered = Vec::new();
        let mut calls = Vec::new();
        for e in self.active_branch().iter().rev() {
            match e.message() {
                Some(Message::ToolResult(r)) => answered.push(r.tool_call_id.clone()),
                Some(Message::Assistant(a)) => {
                    calls = a.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                    break;
                }
                Some(Message::User(_)) => break,
                None => {}
            }
        }
        let missing: Vec<(String, String)> =
            calls.into_iter().filter(|(id, _)| !answered.contains(id)).collect();
        let added = missing.len();
        for (id, name) in missing {
            let result = ToolResultMessage {
                tool_call_id: id,
                tool_name: name,
                content: vec![Content::text(INTERRUPTED_RESULT)],
                is_error: true,
            };
            self.append(EntryBody::Message {
                message: Message::ToolResult(result),
                details: None,
            })?;
        }
        Ok(added)
    }
}

/// Parses entry lines, on several threads for large files (parsing dominates the
/// load time of a long session). Results keep the file order; numbers are 1-based.
fn parse_lines(lines: &[(usize, &str)]) -> Vec<(usize, Result<Entry, serde_json::Error>)> {
    let parse = |chunk: &[(usize, &str)]| -> Vec<(usize, Result<Entry, serde_json::Error>)> {
        chunk.iter().map(|(i, l)| (i + 1, serde_json::from_str::<Entry>(l))).collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    if lines.len() < 4096 || threads < 2 {
        return parse(lines);
    }
    let size = lines.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            lines.chunks(size).map(|chunk| scope.spawn(move || parse(chunk))).collect();
        let mut out = Vec::with_capacity(lines.len());
        for (h, chunk) in handles.into_iter().zip(lines.chunks(size)) {
            match h.join() {
                Ok(parsed) => out.extend(parsed),
                // A panicking parser thread (it should not) degrades to parsing here.
                Err(_) => out.extend(parse(chunk)),
            }
        }
        out
    })
}

fn close_pending(out: &mut Vec<Message>, pending: &mut Vec<(String, String)>) {
    for (id, name) in pending.drain(..) {
        out.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: name,
            content: vec![Content::text(INTERRUPTED_RESULT)],
            is_error: true,
        }));
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        // Sessions hold prompts and tool output: readable by the user only.
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn ends_with_newline(path: &Path) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
#[path = "tape_tests.rs"]
mod tests;
