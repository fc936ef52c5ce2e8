//! Cursor motion and the position arithmetic behind it: grapheme boundaries (a paste
//! marker is one grapheme), logical line ends, and word boundaries, where a word is a run
//! of letters/digits/`_`, a run of punctuation, or a single paste marker.

use unicode_segmentation::UnicodeSegmentation;

use super::{Editor, Last, MARKER_BASE, PASTE_MAX_LINES};

impl Editor {
    // ---- horizontal movement --------------------------------------------------------

    pub(super) fn moved(&mut self, to: usize) {
        self.cursor = to;
        self.last = Last::Other;
        self.sticky_col = None;
    }

    /// Moves one grapheme left.
    pub fn move_left(&mut self) {
        self.moved(self.prev_boundary(self.cursor));
    }

    /// Moves one grapheme right.
    pub fn move_right(&mut self) {
        self.moved(self.next_boundary(self.cursor));
    }

    /// Moves to the start of the previous word.
    pub fn move_word_left(&mut self) {
        self.moved(self.word_left_pos(self.cursor));
    }

    /// Moves past the end of the next word.
    pub fn move_word_right(&mut self) {
        self.moved(self.word_right_pos(self.cursor));
    }

    /// Moves to the start of the line (Home, Ctrl+A).
    pub fn move_line_start(&mut self) {
        self.moved(self.line_start(self.cursor));
    }

    /// Moves to the end of the line (End, Ctrl+E).
    pub fn move_line_end(&mut self) {
        self.moved(self.line_end(self.cursor));
    }

    /// Moves to the start of the buffer.
    pub fn move_buffer_start(&mut self) {
        self.moved(0);
    }

    /// Moves to the end of the buffer.
    pub fn move_buffer_end(&mut self) {
        self.moved(self.text.len());
    }

    // ---- positions ------------------------------------------------------------------

    pub(crate) fn marker_id(&self, c: char) -> Option<u32> {
        let id = u32::from(c).checked_sub(MARKER_BASE)?;
        self.pastes.contains_key(&id).then_some(id)
    }

    /// The label a paste marker shows.
    pub(crate) fn marker_label(&self, id: u32) -> String {
        let Some(text) = self.pastes.get(&id) else { return String::new() };
        let lines = text.lines().count();
        if lines > PASTE_MAX_LINES {
            format!("[paste #{id} +{lines} lines]")
        } else {
            format!("[paste #{id} {} chars]", text.chars().count())
        }
    }

    pub(crate) fn prev_boundary(&self, at: usize) -> usize {
        self.text[..at].grapheme_indices(true).next_back().map_or(0, |(i, _)| i)
    }

    pub(crate) fn next_boundary(&self, at: usize) -> usize {
        self.text[at..].graphemes(true).next().map_or(at, |g| at + g.len())
    }

    pub(super) fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    pub(super) fn line_end(&self, at: usize) -> usize {
        self.text[at..].find('\n').map_or(self.text.len(), |i| at + i)
    }

    fn class(&self, g: &str) -> u8 {
        let c = g.chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            0
        } else if self.marker_id(c).is_some() {
            3
        } else if c.is_alphanumeric() || c == '_' {
            1
        } else {
            2
        }
    }

    pub(super) fn word_left_pos(&self, at: usize) -> usize {
        let mut it = self.text[..at].grapheme_indices(true).rev().peekable();
        let mut pos = at;
        while let Some(&(i, g)) = it.peek() {
            if self.class(g) != 0 {
                break;
            }
            pos = i;
            it.next();
        }
        let Some(&(_, g)) = it.peek() else { return pos };
        let class = self.class(g);
        while let Some(&(i, g)) = it.peek() {
            if self.class(g) != class {
                break;
            }
            pos = i;
            it.next();
            if class == 3 {
                break;
            }
        }
        pos
    }

    pub(super) fn word_right_pos(&self, at: usize) -> usize {
        let mut it = self.text[at..].grapheme_indices(true).peekable();
        let mut pos = at;
        while let Some(&(i, g)) = it.peek() {
            if self.class(g) != 0 {
                break;
            }
            pos = at + i + g.len();
            it.next();
        }
        let Some(&(_, g)) = it.peek() else { return pos };
        let class = self.class(g);
        while let Some(&(i, g)) = it.peek() {
            if self.class(g) != class {
                break;
            }
            pos = at + i + g.len();
            it.next();
            if class == 3 {
                break;
            }
        }
        pos
    }
}
