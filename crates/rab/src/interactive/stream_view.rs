//! The assistant reply while it streams. Finished markdown blocks are handed out to be
//! committed to the terminal's scrollback; only the block still being written stays in
//! the live region, so the live region stays short however long the reply gets.

use rab_tui::markdown::{render_markdown, stable_prefix_len};
use rab_tui::{Role, Theme, highlight::Highlighter, wrap};

/// Lines of thinking shown while it streams (expanded mode).
const THINKING_TAIL: usize = 8;

/// One assistant reply being streamed.
#[derive(Default)]
pub struct StreamView {
    text: String,
    committed: usize,
    thinking: String,
    thinking_committed: bool,
    started_text: bool,
}

impl StreamView {
    /// Adds reasoning text.
    pub fn push_thinking(&mut self, delta: &str) {
        self.thinking.push_str(delta);
    }

    /// Adds answer text; returns lines to commit (the thinking block, finished
    /// paragraphs).
    pub fn push_text(
        &mut self,
        delta: &str,
        width: usize,
        theme: &Theme,
        hl: &Highlighter,
        show_thinking: bool,
    ) -> Vec<String> {
        let mut out = self.take_thinking(width, theme, show_thinking);
        if !self.started_text {
            self.started_text = true;
            out.push(String::new());
        }
        self.text.push_str(delta);
        let rest = &self.text[self.committed..];
        let n = stable_prefix_len(rest);
        if n > 0 {
            out.extend(render_markdown(&rest[..n], width, theme, Some(hl)));
            out.push(String::new());
            self.committed += n;
        }
        out
    }

    fn take_thinking(&mut self, width: usize, theme: &Theme, show: bool) -> Vec<String> {
        if self.thinking_committed || self.thinking.trim().is_empty() {
            return Vec::new();
        }
        self.thinking_committed = true;
        thinking_block(&self.thinking, width, theme, show)
    }

    /// Lines for the live region: the thinking in progress and the unfinished block.
    pub fn live(
        &self,
        width: usize,
        theme: &Theme,
        hl: &Highlighter,
        show_thinking: bool,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if !self.thinking_committed && !self.thinking.is_empty() {
            out.push(String::new());
            if show_thinking {
                let lines: Vec<String> =
                    self.thinking.lines().flat_map(|l| wrap::wrap(l, width)).collect();
                let skip = lines.len().saturating_sub(THINKING_TAIL);
                out.extend(lines.into_iter().skip(skip).map(|l| theme.fg(Role::Thinking, &l)));
            } else {
                out.push(theme.fg(Role::Thinking, "✻ Thinking… (Ctrl+T to show)"));
            }
        }
        let rest = &self.text[self.committed..];
        if !rest.trim().is_empty() {
            if !self.started_text {
                out.push(String::new());
            }
            out.extend(render_markdown(rest, width, theme, Some(hl)));
        }
        out
    }

    /// The reply is complete: every remaining line, to commit.
    pub fn finish(
        &mut self,
        width: usize,
        theme: &Theme,
        hl: &Highlighter,
        show_thinking: bool,
    ) -> Vec<String> {
        let mut out = self.take_thinking(width, theme, show_thinking);
        let rest = &self.text[self.committed..];
        if !rest.trim().is_empty() {
            if !self.started_text {
                out.push(String::new());
            }
            out.extend(render_markdown(rest, width, theme, Some(hl)));
        }
        *self = StreamView::default();
        out
    }
}

/// A finished thinking block: collapsed to one line, or dimmed in full.
pub fn thinking_block(text: &str, width: usize, theme: &Theme, show: bool) -> Vec<String> {
    let mut out = vec![String::new()];
    if show {
        out.extend(
            text.lines().flat_map(|l| wrap::wrap(l, width)).map(|l| theme.fg(Role::Thinking, &l)),
        );
    } else {
        let n = text.lines().count();
        out.push(
            theme.fg(Role::Thinking, &format!("✻ Thought ({n} lines; Ctrl+T shows thinking)")),
        );
    }
    out
}
