//! The tape: an append-only JSONL file holding a tree of entries. Appending an entry
//! whose parent is not the last one starts a branch; the active branch is the path from
//! the root to the current leaf.
//!
//! Every entry is written with one `write` call before `append` returns, so a crash
//! loses at most a torn last line, which loading skips with a warning.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rab_ai::{Content, Message, ToolResultMessage};
use serde::Deserialize;

use crate::entry::{Entry, EntryBody, FORMAT_VERSION, Header};
use crate::id::session_id;
use crate::source::Source;
use crate::time::{now_millis, rfc3339};
use ids::Ids;

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
    /// Another process writes this session.
    #[error(
        "session {} is open in another rab process; continue a copy of it with --fork \
         (rab -c --fork), or close the other one first",
        path.display()
    )]
    Busy {
        /// The file.
        path: PathBuf,
    },
}

/// Something odd found while loading that did not stop the load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line number.
    pub line: usize,
    /// What was skipped and why.
    pub message: String,
}

/// What an entry records, known without parsing its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A conversation message.
    Message,
    /// A model switch.
    ModelChange,
    /// A thinking-level switch.
    ThinkingLevelChange,
    /// A compaction summary.
    Compaction,
    /// The system prompt and tools a conversation began with.
    Context,
    /// A label.
    Label,
    /// Extension data.
    Custom,
}

impl EntryKind {
    fn parse(kind: &str) -> Option<EntryKind> {
        Some(match kind {
            "message" => EntryKind::Message,
            "model_change" => EntryKind::ModelChange,
            "thinking_level_change" => EntryKind::ThinkingLevelChange,
            "compaction" => EntryKind::Compaction,
            "context" => EntryKind::Context,
            "label" => EntryKind::Label,
            "custom" => EntryKind::Custom,
            _ => return None,
        })
    }

    fn of(body: &EntryBody) -> EntryKind {
        match body {
            EntryBody::Message { .. } => EntryKind::Message,
            EntryBody::ModelChange { .. } => EntryKind::ModelChange,
            EntryBody::ThinkingLevelChange { .. } => EntryKind::ThinkingLevelChange,
            EntryBody::Compaction { .. } => EntryKind::Compaction,
            EntryBody::Context { .. } => EntryKind::Context,
            EntryBody::Label { .. } => EntryKind::Label,
            EntryBody::Custom { .. } => EntryKind::Custom,
        }
    }
}

/// One entry: its place in the tree, and its body parsed on first use. Loading a long
/// session reads only ids and parents; the conversation's messages are parsed once,
/// straight into the values the agent keeps, and other bodies when asked for.
#[derive(Debug)]
struct Slot {
    id: String,
    /// The parent's slot, found once: walking a branch of thousands of entries takes
    /// no id lookups.
    parent: Option<usize>,
    kind: EntryKind,
    /// The line's bytes in the file (empty for entries only held in memory).
    raw: Range<usize>,
    /// Boxed: most slots of a long tape are never parsed, and an `Entry` is large.
    entry: OnceLock<Option<Box<Entry>>>,
    /// Its parent was dropped by a fold (`fold.rs`): `parent` is then the nearest
    /// ancestor kept.
    is_cut: bool,
}

/// A session: header, entries and the current leaf; backed by a file unless ephemeral.
#[derive(Debug)]
pub struct Tape {
    path: Option<PathBuf>,
    header: Header,
    /// The file's lines as loaded; slots refer into them.
    source: Source,
    slots: Vec<Slot>,
    index: Ids,
    leaf: Option<usize>,
    file: Option<Box<dyn TapeSink>>,
    /// The file exists and holds the header (false until the first append).
    is_started: bool,
    /// Lines go to a sink set by the host, not to `path`: never folded.
    has_sink: bool,
    /// What folds dropped from memory (`None`: nothing was).
    gone: Option<Box<fold::Gone>>,
    /// A folded tape's whole history, read back from the file when first needed.
    whole: OnceLock<Option<Box<Tape>>>,
}

/// The fields every line has: enough to place an entry in the tree.
#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Option<Cow<'a, str>>,
}

/// The slots of the conversation on the active branch.
struct Plan {
    /// Message slots, from the first one after the last compaction's cut on.
    slots: Vec<usize>,
    /// The last compaction's summary.
    summary: Option<String>,
    /// How many of `slots` come before that compaction.
    stale: usize,
}

/// Only the message of a message entry.
#[derive(Deserialize)]
struct MessageOnly {
    message: Message,
}

type Parsed = (usize, Range<usize>, Result<(String, Option<String>, String), String>);

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
            source: Source::default(),
            slots: Vec::new(),
            index: Ids::default(),
            leaf: None,
            file: None,
            is_started: false,
            has_sink: false,
            gone: None,
            whole: OnceLock::new(),
        }
    }

    /// Loads a session file. Unreadable lines (a torn last line after a crash) are
    /// skipped and reported as warnings; the last entry becomes the leaf.
    pub fn open(path: &Path) -> Result<(Self, Vec<Warning>), Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        let mut file = File::open(path).map_err(io)?;
        // Sized from the file's length: no regrowing of a large tape.
        let len = file.metadata().map_err(io)?.len();
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
        file.read_to_end(&mut bytes).map_err(io)?;
        let source = Source::new(bytes, file);
        let text = source.text();
        let mut lines = Vec::new();
        let mut start = 0;
        for (n, end) in memchr::memchr_iter(b'\n', text.as_bytes()).chain([text.len()]).enumerate()
        {
            if end > start && !text[start..end].trim().is_empty() {
                lines.push((n + 1, start..end));
            }
            start = end + 1;
        }
        let last_line = lines.last().map_or(0, |(n, _)| *n);
        let is_torn = !text.ends_with('\n');
        let Some((_, first)) = lines.first().cloned() else {
            return Err(Error::NotASession {
                path: path.to_owned(),
                message: "the file is empty".to_owned(),
            });
        };
        let header: Header =
            serde_json::from_str(&text[first]).map_err(|e| Error::NotASession {
                path: path.to_owned(),
                message: format!("the first line is not a session header ({e})"),
            })?;
        if header.kind != "session" {
            return Err(Error::NotASession {
                path: path.to_owned(),
                message: format!("the first line has type '{}', not 'session'", header.kind),
            });
        }
        let parsed = parse_meta(text, &lines[1..]);
        let mut warnings = Vec::new();
        let mut slots = Vec::with_capacity(parsed.len());
        let mut index = Ids::with_capacity(parsed.len());
        let mut parents = Vec::with_capacity(parsed.len());
        for (lineno, raw, meta) in parsed {
            let problem = match meta {
                Ok((id, parent_id, kind)) => match EntryKind::parse(&kind) {
                    Some(kind) if !id.is_empty() => {
                        let entry = OnceLock::new();
                        slots.push(Slot { id, parent: None, kind, raw, entry, is_cut: false });
                        let n = slots.len() - 1;
                        index.insert(&slots[n].id, n, |i| &slots[i].id);
                        parents.push(parent_id);
                        continue;
                    }
                    Some(_) => format!("skipped a '{kind}' entry without an id"),
                    None => format!("skipped an entry of unknown type '{kind}'"),
                },
                Err(e) if lineno == last_line && is_torn => {
                    format!("skipped a torn last line (rab was stopped mid-write): {e}")
                }
                Err(e) => format!("skipped a line that is not a session entry: {e}"),
            };
            tracing::warn!(path = %path.display(), line = lineno, "{problem}");
            warnings.push(Warning { line: lineno, message: problem });
        }
        let found: Vec<Option<usize>> = parents
            .iter()
            .map(|p| p.as_deref().and_then(|p| index.get(p, |i| &slots[i].id)))
            .collect();
        for (slot, parent) in slots.iter_mut().zip(found) {
            slot.parent = parent;
        }
        let leaf = slots.len().checked_sub(1);
        let tape = Self {
            path: Some(path.to_owned()),
            header,
            source,
            slots,
            index,
            leaf,
            file: None,
            is_started: true,
            has_sink: false,
            gone: None,
            whole: OnceLock::new(),
        };
        Ok((tape, warnings))
    }

    /// Stores a not-yet-written session at `path` instead (`--session PATH`).
    pub fn set_path(&mut self, path: PathBuf) {
        if !self.is_started {
            self.path = Some(path);
        }
    }

    /// Dates a not-yet-written session's start (milliseconds since the epoch): an
    /// imported session started when its source did.
    pub fn set_started_at(&mut self, millis: u64) {
        if !self.is_started {
            self.header.timestamp = rfc3339(millis);
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

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.slots.len() + self.gone_count()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The entry at `i`, parsed on first use (`None` when its body is unreadable).
    fn get(&self, i: usize) -> Option<&Entry> {
        let slot = self.slots.get(i)?;
        slot.entry
            .get_or_init(|| {
                let line = self.source.line(&slot.raw)?;
                match serde_json::from_str::<Entry>(&line) {
                    Ok(e) => Some(Box::new(e)),
                    Err(e) => {
                        tracing::warn!(entry = %slot.id, "unreadable session entry: {e}");
                        None
                    }
                }
            })
            .as_deref()
    }

    /// Frees the text kept from loading (call once the conversation has been taken
    /// with [`Tape::messages_with_ids`]): entries not parsed yet are then read back
    /// from the file when first needed, instead of the whole history staying in
    /// memory twice.
    pub fn release_text(&mut self) {
        self.source.release();
    }

    /// All readable entries in file order (parses every body: for tools and tests,
    /// not for loading).
    pub fn entries(&self) -> Vec<&Entry> {
        let t = self.whole();
        (0..t.slots.len()).filter_map(|i| t.get(i)).collect()
    }

    /// Every entry of one kind, oldest first, on all branches. Only those are read:
    /// entries dropped from memory stay dropped (`entries` would read the whole
    /// history back into memory).
    pub fn entries_of(&self, kind: EntryKind) -> Vec<&Entry> {
        // A fold keeps every entry of the kinds that carry state.
        let t = if fold::is_state(kind) { self } else { self.whole() };
        (0..t.slots.len()).filter(|&i| t.slots[i].kind == kind).filter_map(|i| t.get(i)).collect()
    }

    /// An entry by id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        match self.find(id) {
            Some(i) => self.get(i),
            None if self.may_be_gone(id) => {
                let t = self.whole();
                t.find(id).and_then(|i| t.get(i))
            }
            None => None,
        }
    }

    /// The current leaf (the parent of the next entry).
    pub fn leaf(&self) -> Option<&Entry> {
        self.leaf.and_then(|i| self.get(i))
    }

    /// Makes `id` the leaf, so the next entry starts a branch there (`None`: a new root).
    pub fn branch_from(&mut self, id: Option<&str>) -> Result<(), Error> {
        self.whole = OnceLock::new();
        let Some(id) = id else {
            self.leaf = None;
            return Ok(());
        };
        // Its conversation may reach behind a fold's cut: then the whole history comes
        // back into memory first.
        let behind_cut = match self.find(id) {
            Some(i) => !self.is_whole_at(i),
            None => self.is_gone(id),
        };
        if behind_cut {
            self.unfold()?;
        }
        self.leaf = Some(self.find(id).ok_or_else(|| Error::UnknownEntry(id.to_owned()))?);
        Ok(())
    }

    /// Appends an entry after the leaf, writes it, and makes it the leaf.
    pub fn append(&mut self, body: EntryBody) -> Result<&Entry, Error> {
        self.append_at(body, now_millis())
    }

    /// [`Tape::append`] with the time it happened (milliseconds since the epoch), for
    /// entries brought from elsewhere (an imported session keeps its own times).
    pub fn append_at(&mut self, body: EntryBody, millis: u64) -> Result<&Entry, Error> {
        let id = self.fresh_id();
        let parent_id = self.leaf.map(|i| self.slots[i].id.clone());
        let entry = Entry {
            id: id.clone(),
            parent_id: parent_id.clone(),
            timestamp: rfc3339(millis),
            body,
        };
        let raw = self.write(&entry)?;
        // The entry before this one is dropped from memory once it can be read back
        // from the file: a long-lived session keeps ids and places, not its history.
        if let Some(prev) = self.leaf
            && !self.slots[prev].raw.is_empty()
            && self.source.can_read(&self.slots[prev].raw)
        {
            self.slots[prev].entry = OnceLock::new();
        }
        let kind = EntryKind::of(&entry.body);
        let slot = Slot {
            id,
            parent: self.leaf,
            kind,
            raw: raw.unwrap_or(0..0),
            entry: OnceLock::from(Some(Box::new(entry))),
            is_cut: false,
        };
        self.slots.push(slot);
        let n = self.slots.len() - 1;
        let slots = &self.slots;
        self.index.insert(&slots[n].id, n, |i| &slots[i].id);
        self.leaf = Some(self.slots.len() - 1);
        self.whole = OnceLock::new();
        if kind == EntryKind::Compaction && !self.has_sink {
            // A compaction keeping entries a fold dropped: they come back first.
            if !self.is_whole_at(n)
                && let Err(e) = self.unfold()
            {
                tracing::warn!("cannot read the session's earlier entries back: {e}");
            }
            self.fold();
        }
        self.get(self.slots.len() - 1)
            .ok_or_else(|| Error::Encode("the entry just written".to_owned()))
    }

    /// The slot of entry `id`.
    fn find(&self, id: &str) -> Option<usize> {
        self.index.get(id, |i| &self.slots[i].id)
    }

    /// Writes `entry`'s line; returns its byte range in the file where it can be read
    /// back from there.
    fn write(&mut self, entry: &Entry) -> Result<Option<Range<usize>>, Error> {
        if self.path.is_none() && self.file.is_none() {
            return Ok(None);
        }
        let path = self.path.clone().unwrap_or_default();
        let io = |source| Error::Io { path: path.clone(), source };
        let mut line = Vec::with_capacity(256);
        if self.file.is_none() {
            let file = open_append(&path).map_err(io)?;
            lock(&file, &path)?;
            if !ends_with_newline(&path).map_err(io)? {
                // A torn last line must not swallow the next entry.
                line.push(b'\n');
            }
            self.file = Some(Box::new(file));
        }
        if !self.is_started {
            serde_json::to_writer(&mut line, &self.header)
                .map_err(|e| Error::Encode(e.to_string()))?;
            line.push(b'\n');
        }
        let entry_start = line.len();
        serde_json::to_writer(&mut line, entry).map_err(|e| Error::Encode(e.to_string()))?;
        let entry_end = line.len();
        line.push(b'\n');
        let Some(file) = self.file.as_mut() else { return Ok(None) };
        let before = file.size().map_err(io)?;
        if let Err(e) = file.append(&line) {
            // A full disk or a file gone read-only: the lines before stay whole, and the
            // entry is not kept, so nothing acts on what was not recorded.
            if file.truncate(before).is_err() {
                // The torn bytes stay; reopening puts the next entry on a fresh line.
                self.file = None;
            }
            return Err(io(e));
        }
        self.is_started = true;
        if let Some(path) = &self.path {
            self.source.follow(path);
        }
        let at = usize::try_from(before).unwrap_or(usize::MAX);
        Ok(Some(at.saturating_add(entry_start)..at.saturating_add(entry_end)))
    }

    /// Sends the tape's next lines to `sink` instead of its file (which is then not
    /// opened, nor locked): for tests of disk trouble, and for hosts that keep
    /// sessions elsewhere. The header goes first if the tape has not been started.
    pub fn set_sink(&mut self, sink: Box<dyn TapeSink>) {
        self.file = Some(sink);
        self.has_sink = true;
    }

    /// Slot indices from the root to the leaf.
    fn branch(&self) -> Vec<usize> {
        self.path_to(self.leaf)
    }

    /// The slots from the root to `slot`. A cycle (a hand-edited file) ends the walk
    /// with one slot more than the tape holds.
    fn path_to(&self, slot: Option<usize>) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cursor = slot;
        while let Some(i) = cursor {
            path.push(i);
            cursor = self.slots[i].parent;
            if path.len() > self.slots.len() {
                break; // a cycle in a hand-edited file must not hang the load
            }
        }
        path.reverse();
        path
    }

    /// The entries from the root to the leaf.
    pub fn active_branch(&self) -> Vec<&Entry> {
        let t = self.whole();
        t.branch().into_iter().filter_map(|i| t.get(i)).collect()
    }

    /// The last entry of `kind` on the active branch.
    pub fn last_on_branch(&self, kind: EntryKind) -> Option<&Entry> {
        let mut cursor = self.leaf;
        let mut steps = 0;
        while let Some(i) = cursor {
            if self.slots[i].kind == kind {
                return self.get(i);
            }
            cursor = self.slots[i].parent;
            steps += 1;
            if steps > self.slots.len() {
                break;
            }
        }
        // A fold keeps every entry that carries state; a message may be behind its cut.
        if fold::is_state(kind) || self.gone.is_none() {
            return None;
        }
        let whole = self.whole();
        if std::ptr::eq(whole, self) { None } else { whole.last_on_branch(kind) }
    }

    /// The conversation on the active branch, as sent to the model. After a
    /// compaction it starts with the summary, followed by the entries kept from the
    /// compaction's first kept entry on. A tool call without a recorded result gets
    /// [`INTERRUPTED_RESULT`].
    pub fn messages(&self) -> Vec<Message> {
        self.messages_with_ids().1
    }

    /// Like [`Tape::messages`], with the id of the entry each message came from (`None`
    /// for the compaction summary and for synthesised interrupted results), in a
    /// vector of the same length.
    pub fn messages_with_ids(&self) -> (Vec<Option<String>>, Vec<Message>) {
        let plan = self.plan();
        let parsed = self.parse_messages(&plan.slots);
        self.assemble(plan, parsed)
    }

    /// [`Tape::messages_with_ids`] for resuming: the text kept from loading is freed
    /// as soon as the messages are parsed (see [`Tape::release_text`]), so it never
    /// sits in memory beside the assembled conversation.
    pub fn take_conversation(&mut self) -> (Vec<Option<String>>, Vec<Message>) {
        let plan = self.plan();
        let parsed = self.parse_messages(&plan.slots);
        self.source.release();
        self.assemble(plan, parsed)
    }

    /// Which slots make up the conversation.
    /// The last compaction on `path`: its place in `path`, its summary and the id of
    /// the first entry it kept.
    fn last_compaction(&self, path: &[usize]) -> Option<(usize, &str, &str)> {
        let pos = path.iter().rposition(|&i| self.slots[i].kind == EntryKind::Compaction)?;
        match self.get(path[pos]) {
            Some(Entry {
                body: EntryBody::Compaction { summary, first_kept_entry_id, .. },
                ..
            }) => Some((pos, summary, first_kept_entry_id)),
            _ => None,
        }
    }

    fn plan(&self) -> Plan {
        let branch = self.branch();
        let mut start = 0;
        let mut compaction_at = 0;
        let mut summary = None;
        if let Some((pos, text, first_kept_entry_id)) = self.last_compaction(&branch) {
            summary = Some(text.to_owned());
            compaction_at = pos;
            start =
                branch.iter().position(|&i| self.slots[i].id == first_kept_entry_id).unwrap_or(pos);
        }
        let is_message = |i: &&usize| self.slots[**i].kind == EntryKind::Message;
        // Responses kept from before the compaction reported usage of the history the
        // summary replaced; the agent must not read the context size from them.
        let stale = branch[start..compaction_at.max(start)].iter().filter(is_message).count();
        let slots = branch[start..].iter().filter(is_message).copied().collect();
        Plan { slots, summary, stale }
    }

    fn assemble(
        &self,
        plan: Plan,
        parsed: Vec<Option<Message>>,
    ) -> (Vec<Option<String>>, Vec<Message>) {
        let capacity = parsed.len() + 1;
        let mut ids: Vec<Option<String>> = Vec::with_capacity(capacity);
        let mut out: Vec<Message> = Vec::with_capacity(capacity);
        if let Some(text) = plan.summary {
            ids.push(None);
            out.push(Message::summary(&text));
        }
        let mut pending: Vec<(String, String)> = Vec::new();
        for (n, (slot, message)) in plan.slots.iter().zip(parsed).enumerate() {
            let Some(mut message) = message else { continue };
            if let Message::Assistant(a) = &mut message
                && n < plan.stale
            {
                a.usage = rab_ai::Usage::default();
            }
            match &message {
                Message::ToolResult(r) => pending.retain(|(id, _)| *id != r.tool_call_id),
                Message::User(_) | Message::Assistant(_) | Message::System(_) => {
                    close_pending(&mut ids, &mut out, &mut pending);
                    if let Message::Assistant(a) = &message {
                        pending = a.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                    }
                }
            }
            ids.push(Some(self.slots[*slot].id.clone()));
            out.push(message);
        }
        close_pending(&mut ids, &mut out, &mut pending);
        (ids, out)
    }

    /// Messages of these slots: cloned when already parsed, else parsed straight from
    /// the line (on several threads for a long branch).
    fn parse_messages(&self, ids: &[usize]) -> Vec<Option<Message>> {
        let one = |i: &usize| -> Option<Message> {
            let slot = &self.slots[*i];
            if let Some(parsed) = slot.entry.get() {
                return parsed.as_ref().and_then(|e| e.message().cloned());
            }
            let line = self.source.line(&slot.raw)?;
            match serde_json::from_str::<MessageOnly>(&line) {
                Ok(m) => Some(m.message),
                Err(e) => {
                    tracing::warn!(entry = %slot.id, "unreadable session message: {e}");
                    None
                }
            }
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
        if ids.len() < 4096 || threads < 2 {
            return ids.iter().map(one).collect();
        }
        // Filled in place, chunk by chunk: no second copy of the conversation.
        let mut out: Vec<Option<Message>> = (0..ids.len()).map(|_| None).collect();
        let size = ids.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for (slots, chunk) in out.chunks_mut(size).zip(ids.chunks(size)) {
                scope.spawn(move || {
                    for (slot, i) in slots.iter_mut().zip(chunk) {
                        *slot = one(i);
                    }
                });
            }
        });
        out
    }

    /// Records a result for each tool call of the last turn that has none (rab was
    /// killed while tools ran), so the file itself is consistent again before the
    /// session goes on. Returns how many results were added.
    pub fn repair(&mut self) -> Result<usize, Error> {
        let mut answered = Vec::new();
        let mut calls = Vec::new();
        for i in self.branch().into_iter().rev() {
            if self.slots[i].kind != EntryKind::Message {
                continue;
            }
            match self.get(i).and_then(Entry::message) {
                Some(Message::ToolResult(r)) => answered.push(r.tool_call_id.clone()),
                Some(Message::Assistant(a)) => {
                    calls = a.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                    break;
                }
                Some(Message::User(_)) => break,
                // Written just before a request, after every result.
                Some(Message::System(_)) | None => {}
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

/// Reads id, parent and type of each line, on several threads for a large file.
fn parse_meta(text: &str, lines: &[(usize, Range<usize>)]) -> Vec<Parsed> {
    let one = |(n, r): &(usize, Range<usize>)| -> Parsed {
        let meta = serde_json::from_str::<Meta<'_>>(&text[r.clone()])
            .map(|m| (m.id.into_owned(), m.parent_id.map(Cow::into_owned), m.kind.into_owned()))
            .map_err(|e| e.to_string());
        (*n, r.clone(), meta)
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    if lines.len() < 4096 || threads < 2 {
        return lines.iter().map(one).collect();
    }
    let size = lines.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(size)
            .map(|chunk| scope.spawn(move || chunk.iter().map(one).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(lines.len());
        for (h, chunk) in handles.into_iter().zip(lines.chunks(size)) {
            match h.join() {
                Ok(part) => out.extend(part),
                Err(_) => out.extend(chunk.iter().map(one)),
            }
        }
        out
    })
}

fn close_pending(
    ids: &mut Vec<Option<String>>,
    out: &mut Vec<Message>,
    pending: &mut Vec<(String, String)>,
) {
    for (id, name) in pending.drain(..) {
        let result = ToolResultMessage {
            tool_call_id: id,
            tool_name: name,
            content: vec![Content::text(INTERRUPTED_RESULT)],
            is_error: true,
        };
        ids.push(None);
        out.push(Message::ToolResult(result));
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

mod claim;
mod fold;
mod ids;
mod sink;
mod spending;

pub(crate) use claim::lock;
pub use sink::TapeSink;
pub use spending::Spent;

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
