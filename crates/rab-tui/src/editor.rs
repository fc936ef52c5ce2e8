//! The prompt editor: a multi-line text buffer with a cursor, edited through methods the
//! app maps keys to (it knows nothing of key events). Grapheme-aware movement and
//! deletion, word motions, an emacs-style kill ring, undo/redo that folds a run of typing
//! into one step, a history of submitted prompts browsed with Up/Down at the edges, and
//! bracketed-paste markers.
//!
//! A large paste is not put into the buffer: it is stored aside and a single private-use
//! character stands for it. That character is one grapheme, so the cursor skips it and
//! one backspace deletes it without special cases, and rendering shows it as
//! `[paste #1 +120 lines]`. [`Editor::submit`] and [`Editor::text`] expand it back. The
//! buffer is one `String` with a byte cursor: inserts are a single `insert_str` (O(n) in
//! the buffer), and layout is recomputed per render, which stays cheap because big
//! pastes never enter the buffer.
//!
//! Rendering (box, wrapping, scrolling) is in `editor_view.rs`.

use std::cell::Cell;
use std::collections::BTreeMap;

/// First private-use code point used for paste markers (plane 15, which text rarely uses).
const MARKER_BASE: u32 = 0xF_0000;
/// Pastes with more lines than this become a marker.
const PASTE_MAX_LINES: usize = 10;
/// Pastes with more characters than this become a marker.
const PASTE_MAX_CHARS: usize = 1000;
const UNDO_LIMIT: usize = 200;
const KILL_RING_LIMIT: usize = 30;
const HISTORY_LIMIT: usize = 500;

/// A buffer state to return to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Snapshot {
    text: String,
    cursor: usize,
}

/// A submitted prompt, with the pastes its markers stand for.
#[derive(Clone, Debug, Default)]
struct Entry {
    text: String,
    pastes: BTreeMap<u32, String>,
}

/// What the previous command was; decides undo folding, kill appending and yank-pop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    Other,
    /// Typing; `ws` is whether the last typed character was whitespace.
    Typing {
        ws: bool,
    },
    Kill,
    /// A yank inserted `start..end`.
    Yank {
        start: usize,
        end: usize,
    },
}

/// Multi-line prompt editor state.
#[derive(Debug)]
pub struct Editor {
    pub(crate) text: String,
    pub(crate) cursor: usize,
    pub(crate) pastes: BTreeMap<u32, String>,
    next_paste: u32,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    last: Last,
    kill_ring: Vec<String>,
    /// Ring entries back from the newest that the current yank shows.
    yank_index: usize,
    history: Vec<Entry>,
    /// Position in `history` while browsing (0 = newest).
    history_pos: Option<usize>,
    draft: Option<Entry>,
    /// Column kept across vertical moves so passing a short line does not lose it.
    pub(crate) sticky_col: Option<usize>,
    /// Content width of the last render; vertical moves follow that wrapping.
    pub(crate) width: Cell<usize>,
    /// First visible row of the last render.
    pub(crate) scroll: Cell<usize>,
    /// Most content rows shown before scrolling.
    pub(crate) max_rows: usize,
    /// The colour of the box's borders (the thinking level, bash mode).
    pub(crate) border: Cell<crate::Role>,
}

impl Default for Editor {
    fn default() -> Self {
        Editor::new()
    }
}

impl Editor {
    /// An empty editor.
    pub fn new() -> Editor {
        Editor {
            text: String::new(),
            cursor: 0,
            pastes: BTreeMap::new(),
            next_paste: 1,
            undo: Vec::new(),
            redo: Vec::new(),
            last: Last::Other,
            kill_ring: Vec::new(),
            yank_index: 0,
            history: Vec::new(),
            history_pos: None,
            draft: None,
            sticky_col: None,
            width: Cell::new(80),
            scroll: Cell::new(0),
            max_rows: 8,
            border: Cell::new(crate::Role::Border),
        }
    }

    /// Colours the box's borders with `role` from the next render on.
    pub fn set_border(&self, role: crate::Role) {
        self.border.set(role);
    }

    /// Whether the raw content (paste markers not expanded) starts with `prefix`.
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.text.starts_with(prefix)
    }

    /// Sets the most content rows shown; more scroll (at least 1).
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// The content with paste markers expanded: what [`Editor::submit`] would return.
    pub fn text(&self) -> String {
        expand(&self.text, &self.pastes)
    }

    /// The content as shown, with each paste marker as its `[paste #N …]` label.
    pub fn display_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for c in self.text.chars() {
            match self.marker_id(c) {
                Some(id) => out.push_str(&self.marker_label(id)),
                None => out.push(c),
            }
        }
        out
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The cursor as a byte offset into the buffer (markers count as one 4-byte char).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The buffer before the cursor, for completion; paste markers appear as private-use
    /// characters, which no completion token contains.
    pub fn text_before_cursor(&self) -> &str {
        &self.text[..self.cursor]
    }

    /// Replaces the content (cursor at the end) as one undoable step.
    pub fn set_text(&mut self, text: &str) {
        self.checkpoint();
        self.text = clean(text);
        self.cursor = self.text.len();
        self.after_edit(Last::Other);
    }

    /// Clears the buffer and its pastes (undoable).
    pub fn clear(&mut self) {
        self.set_text("");
    }

    // ---- inserting ------------------------------------------------------------------

    /// Types one character; a run of typing undoes as one step, split at word starts.
    pub fn insert_char(&mut self, c: char) {
        if c == '\n' || c == '\r' {
            self.newline();
            return;
        }
        if c.is_control() && c != '\t' {
            return;
        }
        let ws = c.is_whitespace();
        // A space after a word starts a new step; the rest of a run folds into one.
        let fold = matches!(self.last, Last::Typing { ws: prev } if !ws || prev);
        if !fold {
            self.checkpoint();
        }
        if c == '\t' {
            self.text.insert_str(self.cursor, "    ");
            self.cursor += 4;
        } else {
            self.text.insert(self.cursor, c);
            self.cursor += c.len_utf8();
        }
        self.after_edit(Last::Typing { ws });
    }

    /// Inserts text at the cursor as one undo step (tabs become spaces, CRLF becomes LF,
    /// other control characters are dropped).
    pub fn insert_str(&mut self, s: &str) {
        let s = clean(s);
        if s.is_empty() {
            return;
        }
        self.checkpoint();
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
        self.after_edit(Last::Other);
    }

    /// Inserts a line break (Shift+Enter / Alt+Enter).
    pub fn newline(&mut self) {
        self.checkpoint();
        self.text.insert(self.cursor, '\n');
        self.cursor += 1;
        self.after_edit(Last::Other);
    }

    /// Inserts pasted text. More than 10 lines or 1000 characters become one marker,
    /// `[paste #N +L lines]` or `[paste #N C chars]`, expanded on submit.
    pub fn paste(&mut self, text: &str) {
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = normalized.lines().count();
        if lines <= PASTE_MAX_LINES && normalized.chars().count() <= PASTE_MAX_CHARS {
            self.insert_str(&normalized);
            return;
        }
        let id = self.next_paste;
        let Some(marker) = char::from_u32(MARKER_BASE + id) else {
            // Ids ran out (65k pastes in one prompt): insert the text itself.
            self.insert_str(&normalized);
            return;
        };
        self.next_paste += 1;
        self.pastes.insert(id, normalized);
        self.checkpoint();
        self.text.insert(self.cursor, marker);
        self.cursor += marker.len_utf8();
        self.after_edit(Last::Other);
    }

    // ---- deleting -------------------------------------------------------------------

    /// Deletes the grapheme (or paste marker) before the cursor.
    pub fn delete_back(&mut self) {
        let start = self.prev_boundary(self.cursor);
        self.delete_range(start, self.cursor, false);
    }

    /// Deletes the grapheme (or paste marker) after the cursor.
    pub fn delete_forward(&mut self) {
        let end = self.next_boundary(self.cursor);
        self.delete_range(self.cursor, end, false);
    }

    /// Deletes back to the start of the previous word, into the kill ring (Ctrl+W,
    /// Alt+Backspace).
    pub fn delete_word_back(&mut self) {
        let start = self.word_left_pos(self.cursor);
        self.delete_range(start, self.cursor, true);
    }

    /// Deletes to the end of the next word, into the kill ring (Alt+D, Ctrl+Delete).
    pub fn delete_word_forward(&mut self) {
        let end = self.word_right_pos(self.cursor);
        self.delete_range(self.cursor, end, true);
    }

    /// Kills to the end of the line, or the line break when already there (Ctrl+K).
    pub fn kill_to_line_end(&mut self) {
        let end = self.line_end(self.cursor);
        let end = if end == self.cursor { self.next_boundary(end) } else { end };
        self.delete_range(self.cursor, end, true);
    }

    /// Kills back to the start of the line (Ctrl+U).
    pub fn kill_to_line_start(&mut self) {
        let start = self.line_start(self.cursor);
        self.delete_range(start, self.cursor, true);
    }

    /// Kills the whole current line including its line break.
    pub fn kill_line(&mut self) {
        let start = self.line_start(self.cursor);
        let end = self.line_end(self.cursor);
        let (start, end) = if end < self.text.len() {
            (start, end + 1)
        } else {
            (start.saturating_sub(usize::from(start > 0)), end)
        };
        self.delete_range(start, end, true);
    }

    fn delete_range(&mut self, start: usize, end: usize, kill: bool) {
        if start >= end {
            self.last = Last::Other;
            return;
        }
        self.checkpoint();
        let removed: String = self.text.drain(start..end).collect();
        if kill {
            self.push_kill(removed, start < self.cursor);
        }
        self.cursor = start;
        self.after_edit(if kill { Last::Kill } else { Last::Other });
    }

    /// Consecutive kills grow one ring entry, like emacs; killing backwards prepends.
    fn push_kill(&mut self, text: String, backwards: bool) {
        match (self.last, self.kill_ring.last_mut()) {
            (Last::Kill, Some(top)) if backwards => top.insert_str(0, &text),
            (Last::Kill, Some(top)) => top.push_str(&text),
            _ => {
                self.kill_ring.push(text);
                if self.kill_ring.len() > KILL_RING_LIMIT {
                    self.kill_ring.remove(0);
                }
            }
        }
    }

    /// Inserts the newest kill (Ctrl+Y).
    pub fn yank(&mut self) {
        let Some(text) = self.kill_ring.last().cloned() else { return };
        self.checkpoint();
        let start = self.cursor;
        self.text.insert_str(start, &text);
        self.cursor += text.len();
        self.yank_index = 0;
        self.after_edit(Last::Yank { start, end: self.cursor });
    }

    /// Right after a yank, replaces the yanked text with the next older kill (Alt+Y).
    pub fn yank_pop(&mut self) {
        let Last::Yank { start, end } = self.last else { return };
        if self.kill_ring.len() < 2 {
            return;
        }
        self.yank_index = (self.yank_index + 1) % self.kill_ring.len();
        let idx = self.kill_ring.len() - 1 - self.yank_index;
        let text = self.kill_ring[idx].clone();
        self.text.replace_range(start..end, &text);
        self.cursor = start + text.len();
        self.last = Last::Yank { start, end: self.cursor };
    }

    // ---- undo -----------------------------------------------------------------------

    fn checkpoint(&mut self) {
        self.undo.push(Snapshot { text: self.text.clone(), cursor: self.cursor });
        if self.undo.len() > UNDO_LIMIT {
            self.undo.remove(0);
        }
        self.redo.clear();
    }

    fn after_edit(&mut self, last: Last) {
        self.last = last;
        self.sticky_col = None;
        // An edited history entry becomes the working text.
        self.history_pos = None;
    }

    /// Undoes the last step; returns whether there was one.
    pub fn undo(&mut self) -> bool {
        let Some(snap) = self.undo.pop() else { return false };
        let now = Snapshot { text: std::mem::take(&mut self.text), cursor: self.cursor };
        self.redo.push(now);
        self.text = snap.text;
        self.cursor = snap.cursor;
        self.last = Last::Other;
        self.sticky_col = None;
        self.history_pos = None;
        true
    }

    /// Redoes the last undone step; returns whether there was one.
    pub fn redo(&mut self) -> bool {
        let Some(snap) = self.redo.pop() else { return false };
        self.undo.push(Snapshot { text: std::mem::take(&mut self.text), cursor: self.cursor });
        self.text = snap.text;
        self.cursor = snap.cursor;
        self.last = Last::Other;
        self.sticky_col = None;
        self.history_pos = None;
        true
    }

    // ---- vertical movement and history ----------------------------------------------

    /// Up: one visual row up; on the first row, the previous history entry (the draft is
    /// kept); with no history, the start of the buffer.
    pub fn up(&mut self) {
        if self.cursor_vertical(false) {
            return;
        }
        if !self.history_prev() {
            self.moved(0);
        }
    }

    /// Down: one visual row down; on the last row while browsing history, the next newer
    /// entry or back to the draft; otherwise the end of the buffer.
    pub fn down(&mut self) {
        if self.cursor_vertical(true) {
            return;
        }
        if !self.history_next() {
            self.moved(self.text.len());
        }
    }

    /// Whether Up/Down are walking the history.
    pub fn is_browsing_history(&self) -> bool {
        self.history_pos.is_some()
    }

    /// Adds an entry to the history without submitting (e.g. prompts loaded from a
    /// session). Empty entries and repeats of the newest are skipped.
    pub fn push_history(&mut self, text: &str) {
        self.push_entry(Entry { text: clean(text), pastes: BTreeMap::new() });
    }

    fn push_entry(&mut self, entry: Entry) {
        if entry.text.trim().is_empty() || self.history.last().is_some_and(|e| e.text == entry.text)
        {
            return;
        }
        self.history.push(entry);
        if self.history.len() > HISTORY_LIMIT {
            self.history.remove(0);
        }
    }

    /// Shows the previous (older) history entry; false when there is none.
    pub fn history_prev(&mut self) -> bool {
        let next = self.history_pos.map_or(0, |p| p + 1);
        if next >= self.history.len() {
            return false;
        }
        if self.history_pos.is_none() {
            self.draft = Some(Entry { text: self.text.clone(), pastes: self.pastes.clone() });
        }
        self.show_entry(next);
        // On the first row, so another Up keeps walking back.
        let first_row_end = self.first_row_end();
        self.cursor = first_row_end;
        true
    }

    /// Shows the next (newer) history entry or the draft; false when not browsing.
    pub fn history_next(&mut self) -> bool {
        let Some(pos) = self.history_pos else { return false };
        if pos == 0 {
            let draft = self.draft.take().unwrap_or_default();
            self.load_entry(draft);
            self.history_pos = None;
        } else {
            self.show_entry(pos - 1);
        }
        self.cursor = self.text.len();
        true
    }

    fn show_entry(&mut self, pos: usize) {
        let idx = self.history.len() - 1 - pos;
        let entry = self.history[idx].clone();
        self.load_entry(entry);
        self.history_pos = Some(pos);
    }

    fn load_entry(&mut self, entry: Entry) {
        self.checkpoint();
        self.text = entry.text;
        self.pastes.extend(entry.pastes);
        self.next_paste = self.next_paste.max(self.pastes.keys().max().map_or(1, |m| m + 1));
        self.last = Last::Other;
        self.sticky_col = None;
    }

    /// Returns the content with markers expanded, records it in the history, and clears
    /// the buffer, its pastes, and the undo stacks.
    pub fn submit(&mut self) -> String {
        let out = self.text();
        let text = std::mem::take(&mut self.text);
        let used: BTreeMap<u32, String> = std::mem::take(&mut self.pastes)
            .into_iter()
            .filter(|(id, _)| char::from_u32(MARKER_BASE + id).is_some_and(|c| text.contains(c)))
            .collect();
        self.push_entry(Entry { text, pastes: used });
        self.cursor = 0;
        self.next_paste = 1;
        self.undo.clear();
        self.redo.clear();
        self.last = Last::Other;
        self.sticky_col = None;
        self.history_pos = None;
        self.draft = None;
        self.scroll.set(0);
        out
    }

    // ---- completion -----------------------------------------------------------------

    /// Replaces `range` of the buffer (byte offsets, ending at or before the cursor) with
    /// `replacement` and puts the cursor after it, as one undo step.
    pub fn replace_range(&mut self, range: std::ops::Range<usize>, replacement: &str) {
        let end = range.end.min(self.text.len());
        let start = range.start.min(end);
        if !self.text.is_char_boundary(start) || !self.text.is_char_boundary(end) {
            return;
        }
        self.checkpoint();
        let replacement = clean(replacement);
        self.text.replace_range(start..end, &replacement);
        self.cursor = start + replacement.len();
        self.after_edit(Last::Other);
    }
}

mod motion;

/// Replaces each marker with its paste.
fn expand(text: &str, pastes: &BTreeMap<u32, String>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let paste = u32::from(c).checked_sub(MARKER_BASE).and_then(|id| pastes.get(&id));
        match paste {
            Some(p) => out.push_str(p),
            None => out.push(c),
        }
    }
    out
}

/// Typed or inserted text as the buffer keeps it: LF line ends, tabs as four spaces
/// (a tab's width is unknown when wrapping), no other control characters.
fn clean(s: &str) -> String {
    let s = s.replace("\r\n", "\n");
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return s;
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            '\r' => out.push('\n'),
            '\n' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
