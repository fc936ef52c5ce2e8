//! The editor's layout and rendering: the buffer is cut into visual rows (word-wrapped
//! by grapheme width, every byte in exactly one row so cursor mapping is exact), shown in
//! a box of horizontal borders that scrolls to keep the cursor visible, and the cursor's
//! row and column are reported for the hardware cursor. Up/Down move across these rows,
//! so they use the width of the last render.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::ansi;
use crate::component::{Component, CursorPos, RenderCx};
use crate::editor::Editor;
use crate::highlight::sanitize_line;
use crate::theme::{Role, Theme};

/// One visual row: `start..end` of the buffer. A position equal to `end` belongs to the
/// next row unless this is the last row of its logical line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub start: usize,
    pub end: usize,
    pub last: bool,
}

impl Editor {
    fn grapheme_width(&self, g: &str, width: usize) -> usize {
        let first = g.chars().next().unwrap_or(' ');
        if let Some(id) = self.marker_id(first) {
            return UnicodeWidthStr::width(self.marker_label(id).as_str()).min(width);
        }
        UnicodeWidthStr::width(g)
    }

    /// The visual rows for a content width.
    pub(crate) fn layout(&self, width: usize) -> Vec<Row> {
        let width = width.max(1);
        let mut rows = Vec::new();
        let mut line_start = 0;
        for line in self.text.split('\n') {
            self.layout_line(line_start, line, width, &mut rows);
            line_start += line.len() + 1;
        }
        rows
    }

    fn layout_line(&self, ls: usize, line: &str, width: usize, rows: &mut Vec<Row>) {
        let le = ls + line.len();
        let mut start = ls;
        let mut col = 0;
        // Position just after the last space in this row, and the columns up to it.
        let mut brk: Option<(usize, usize)> = None;
        for (i, g) in line.grapheme_indices(true) {
            let p = ls + i;
            let w = self.grapheme_width(g, width);
            if g == " " && col + w > width {
                // A space that does not fit hangs at the row's end, undrawn, so the next
                // row starts with the next word instead of a lone space.
                rows.push(Row { start, end: p + 1, last: false });
                start = p + 1;
                col = 0;
                brk = None;
                continue;
            }
            while col + w > width && col > 0 {
                match brk.take().filter(|&(bp, _)| bp > start && bp <= p) {
                    Some((bp, bcol)) => {
                        rows.push(Row { start, end: bp, last: false });
                        start = bp;
                        col -= bcol;
                    }
                    None => {
                        rows.push(Row { start, end: p, last: false });
                        start = p;
                        col = 0;
                    }
                }
            }
            col += w;
            if g == " " {
                brk = Some((p + 1, col));
            }
        }
        if col >= width {
            // A full last row leaves no cell for a cursor at its end: add an empty row.
            rows.push(Row { start, end: le, last: false });
            rows.push(Row { start: le, end: le, last: true });
        } else {
            rows.push(Row { start, end: le, last: true });
        }
    }

    fn row_of(rows: &[Row], at: usize) -> usize {
        // Rows are sorted; find the first row whose end is past `at` (or reaches it as
        // the last row of a line).
        let idx = rows.partition_point(|r| r.end < at || (r.end == at && !r.last));
        idx.min(rows.len().saturating_sub(1))
    }

    fn col_in_row(&self, row: Row, at: usize, width: usize) -> usize {
        self.text[row.start..at.min(row.end)]
            .graphemes(true)
            .map(|g| self.grapheme_width(g, width))
            .sum()
    }

    /// Moves the cursor one visual row; false when already on the first/last row.
    pub(crate) fn cursor_vertical(&mut self, down: bool) -> bool {
        let width = self.width.get().max(1);
        let rows = self.layout(width);
        let cur = Self::row_of(&rows, self.cursor);
        let target = if down { cur + 1 } else { cur.wrapping_sub(1) };
        let Some(&row) = rows.get(target) else { return false };
        let col = match self.sticky_col {
            Some(c) => c,
            None => self.col_in_row(rows[cur], self.cursor, width),
        };
        let mut pos = row.start;
        let mut acc = 0;
        for (i, g) in self.text[row.start..row.end].grapheme_indices(true) {
            let w = self.grapheme_width(g, width);
            if acc + w > col {
                break;
            }
            acc += w;
            pos = row.start + i + g.len();
        }
        if pos == row.end && !row.last {
            // `end` would land on the next row; stay on this one.
            pos = self.prev_boundary(pos).max(row.start);
        }
        self.cursor = pos;
        self.sticky_col = Some(col);
        true
    }

    /// The end of the first visual row (where a recalled history entry puts the cursor).
    pub(crate) fn first_row_end(&self) -> usize {
        let rows = self.layout(self.width.get());
        match rows.first() {
            Some(r) if r.last => r.end,
            Some(r) => self.prev_boundary(r.end).max(r.start),
            None => 0,
        }
    }

    /// Renders the editor box for a total `width`: a top border, the visible rows, and a
    /// bottom border (with `↑ N more` / `↓ N more` when scrolled), plus where the cursor
    /// goes relative to the first returned line.
    pub fn render(&self, width: usize, theme: &Theme) -> (Vec<String>, CursorPos) {
        let width = width.max(2);
        self.width.set(width);
        let rows = self.layout(width);
        let cur = Self::row_of(&rows, self.cursor);
        let visible = rows.len().min(self.max_rows);
        let mut scroll = self.scroll.get().min(rows.len() - visible);
        if cur < scroll {
            scroll = cur;
        } else if cur >= scroll + visible {
            scroll = cur + 1 - visible;
        }
        self.scroll.set(scroll);
        let above = scroll;
        let below = rows.len() - scroll - visible;
        let mut lines = Vec::with_capacity(visible + 2);
        let role = self.border.get();
        lines.push(border(width, (above > 0).then(|| format!("↑ {above} more")), theme, role));
        for row in &rows[scroll..scroll + visible] {
            lines.push(self.render_row(*row, width, theme));
        }
        lines.push(border(width, (below > 0).then(|| format!("↓ {below} more")), theme, role));
        let col = self.col_in_row(rows[cur], self.cursor, width).min(width - 1);
        (lines, CursorPos { row: 1 + cur - scroll, col })
    }

    fn render_row(&self, row: Row, width: usize, theme: &Theme) -> String {
        let mut out = String::new();
        let mut plain = String::new();
        for g in self.text[row.start..row.end].graphemes(true) {
            let first = g.chars().next().unwrap_or(' ');
            match self.marker_id(first) {
                Some(id) => {
                    out.push_str(&sanitize_line(&plain));
                    plain.clear();
                    let label = ansi::truncate(&self.marker_label(id), width, "…");
                    out.push_str(&theme.fg(Role::Accent, &label));
                    plain.push_str(&g[first.len_utf8()..]);
                }
                None => plain.push_str(g),
            }
        }
        out.push_str(&sanitize_line(&plain));
        // Drops a hanging space or anything else past the edge.
        ansi::truncate(&out, width, "")
    }
}

fn border(width: usize, label: Option<String>, theme: &Theme, role: Role) -> String {
    let line = match label {
        Some(label) => {
            let label = format!(" {label} ");
            let rest = width.saturating_sub(3 + UnicodeWidthStr::width(label.as_str()));
            ansi::truncate(&format!("───{label}{}", "─".repeat(rest)), width, "")
        }
        None => "─".repeat(width),
    };
    theme.fg(role, &line)
}

impl Component for Editor {
    fn render(&self, cx: &RenderCx<'_>) -> Vec<String> {
        Editor::render(self, cx.width, cx.theme).0
    }
}
