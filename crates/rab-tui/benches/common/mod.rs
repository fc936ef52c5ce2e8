//! What the wall-time render bench and the instruction-count gate (`callgrind.rs`)
//! share: a deterministic transcript and the live region of a streaming reply.
// Each bench uses a part of this file.
#![allow(dead_code)]

use rab_tui::CursorPos;
use rab_tui::wrap::wrap;

/// Words of the generated text, some styled.
pub const WORDS: [&str; 12] = [
    "the",
    "renderer",
    "diffs",
    "\x1b[1mlines\x1b[0m",
    "against",
    "previous",
    "frame",
    "and",
    "`code`",
    "rewrites",
    "only",
    "changes",
];

/// A deterministic word stream.
pub struct Tokens(pub u64);

impl Tokens {
    /// The next word (or a line break).
    pub fn word(&mut self) -> String {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = (self.0 >> 33) as usize;
        if r.is_multiple_of(97) { "\n".to_owned() } else { format!(" {}", WORDS[r % WORDS.len()]) }
    }
}

/// The transcript as the app would cache it: rendered lines per message.
pub fn transcript(messages: usize, width: usize) -> Vec<Vec<String>> {
    let mut tokens = Tokens(7);
    (0..messages)
        .map(|i| {
            let mut text =
                format!("\x1b[38;5;75m{}\x1b[0m", if i % 2 == 0 { "you" } else { "rab" });
            for _ in 0..(5 + i % 40) {
                text.push_str(&tokens.word());
            }
            let mut lines: Vec<String> = text.split('\n').flat_map(|l| wrap(l, width)).collect();
            lines.push(String::new());
            lines
        })
        .collect()
}

/// The live region of the app while an assistant message streams.
pub struct Live {
    /// Columns.
    pub width: usize,
    /// Finished wrapped lines of the streaming message not yet committed.
    pub done: Vec<String>,
    /// The paragraph being streamed.
    pub current: String,
    pub chrome: Vec<String>,
}

impl Live {
    /// An empty live region `width` columns wide.
    pub fn new(width: usize) -> Live {
        let border = format!("\x1b[90m{}\x1b[0m", "─".repeat(width));
        let chrome = vec![
            String::new(),
            "\x1b[36m⠋\x1b[0m Working… (esc to interrupt)".to_owned(),
            border.clone(),
            "> fix the flicker".to_owned(),
            border,
            "\x1b[90m~/rab (main) · 12.3k tokens · $0.04 · 14% ctx · claude-sonnet-4-5\x1b[0m"
                .to_owned(),
        ];
        Live { width, done: Vec::new(), current: String::new(), chrome }
    }

    /// Adds a token; returns the lines to commit now (the app commits finished lines so
    /// the live region stays short).
    pub fn push(&mut self, token: &str) -> Vec<String> {
        if token == "\n" || self.current.len() > 600 {
            let finished = std::mem::take(&mut self.current);
            self.done.extend(wrap(&finished, self.width));
        } else {
            self.current.push_str(token);
        }
        if self.done.len() > 8 { std::mem::take(&mut self.done) } else { Vec::new() }
    }

    /// The live region's lines.
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.done.clone();
        out.extend(wrap(&self.current, self.width));
        out.extend(self.chrome.iter().cloned());
        out
    }

    /// Where the editor's cursor is.
    pub fn cursor(&self, total: usize) -> Option<CursorPos> {
        Some(CursorPos { row: total - 3, col: 17 })
    }
}
