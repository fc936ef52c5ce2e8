//! The main-screen renderer. There is no alternate screen: finished output is written
//! once into the terminal's own scrollback (the user scrolls and copies with the
//! terminal), and only the *live region* at the bottom (streaming text, working
//! indicator, queued messages, editor, footer) is redrawn.
//!
//! Each [`Screen::frame`] gets the lines to commit and the whole live region. The renderer
//! keeps the live lines it drew last, finds what changed and rewrites only that: a changed
//! line is patched in place from its first changed cell (a streamed token costs a few
//! dozen bytes); lines inserted or removed above an unchanged tail shift that tail with
//! insert/delete-line (`ESC [ L`, `ESC [ M`) instead of rewriting it; anything else is
//! rewritten from the first changed line down after `ESC [ J`. It never knows absolute
//! screen rows (the UI starts wherever the shell prompt was), so it moves with relative
//! cursor motions only, and every live line is cut to the width so the terminal's
//! auto-wrap cannot shift rows. Live lines are separated by `\r\n` with no newline after
//! the last, so the region occupies exactly its lines; styles are reset at line ends.
//! Frames are wrapped in synchronized output (DEC mode 2026), which terminals without
//! support ignore, and the cursor is hidden while drawing.
//!
//! Policies the app should know:
//! - **Tall live regions.** Only the bottom `rows` lines of the live region are drawn;
//!   lines above that are not shown anywhere (not even in the scrollback) until they are
//!   committed. This keeps the scrollback free of stale or duplicated copies. Keep the
//!   live region short by committing finished content (a long streaming answer can commit
//!   its finished paragraphs as it goes).
//! - **Commit.** Committed lines are written above the live region and never touched
//!   again. When they equal the first lines currently drawn in the live region (a
//!   finished message moving from live to committed) and were drawn whole (not cut to the
//!   width), they are adopted where they are and not written twice.
//! - **Resize.** After a width change the terminal may have reflowed the old frame.
//!   The next frame moves up by as many rows as the old live region can occupy after a
//!   reflow (clamped by the terminal at the top of the screen), clears to the end of the
//!   screen and redraws in full. On terminals that do not reflow (xterm), narrowing can
//!   therefore also clear a few committed rows that were still visible right above the
//!   live region; the alternative, leaving torn copies of the editor in the scrollback,
//!   is worse.

use std::borrow::Cow;
use std::io::{self, Write as _};

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::ansi::{self, RESET, escape_len};
use crate::component::CursorPos;
use crate::terminal::{HIDE_CURSOR, SHOW_CURSOR, Terminal};

/// Begins a synchronized update (DEC 2026): the terminal shows the frame only when done.
const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
/// Ends a synchronized update.
const SYNC_END: &[u8] = b"\x1b[?2026l";

/// What the renderer has written so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Frames that wrote anything.
    pub frames: u64,
    /// Bytes written over all frames.
    pub bytes: u64,
    /// Bytes written by the last frame (0 when it had nothing to do).
    pub last_frame_bytes: usize,
    /// Frames that redrew the whole visible live region (first frame, commit, resize,
    /// scrolling of a tall live region, [`Screen::invalidate`]).
    pub full_redraws: u64,
}

/// The renderer of the main screen; see the module docs.
#[derive(Debug)]
pub struct Screen<T: Terminal> {
    term: T,
    cols: usize,
    rows: usize,
    /// Live lines on screen, as given (before sanitising), top first.
    prev: Vec<String>,
    /// Index in the previous frame's live lines of `prev[0]` (non-zero when that frame
    /// was taller than the screen).
    prev_start: usize,
    /// Cursor row relative to the live region's top row; negative only transiently, after
    /// committed lines were adopted from the top of the region.
    cur_row: isize,
    /// Cursor column (may equal the width: the "pending wrap" cell after a full line).
    cur_col: usize,
    /// Rows from the region's top that exist on screen, so cursor-down can reach them;
    /// reaching one more row takes a newline (which scrolls at the bottom).
    known_rows: isize,
    /// Size the region was last drawn at.
    drawn: Option<(usize, usize)>,
    needs_full: bool,
    is_cursor_visible: bool,
    body: Vec<u8>,
    stats: RenderStats,
}

impl<T: Terminal> Screen<T> {
    /// A renderer on `term`, at the terminal's current size. Nothing is written until
    /// the first frame, which starts at the cursor's current row.
    pub fn new(term: T) -> io::Result<Screen<T>> {
        let (cols, rows) = term.size()?;
        Ok(Screen {
            term,
            cols: usize::from(cols.max(1)),
            rows: usize::from(rows.max(1)),
            prev: Vec::new(),
            prev_start: 0,
            cur_row: 0,
            cur_col: 0,
            known_rows: 1,
            drawn: None,
            needs_full: true,
            is_cursor_visible: true,
            body: Vec::with_capacity(8 * 1024),
            stats: RenderStats::default(),
        })
    }

    /// Draws one frame: `commit` lines go into the scrollback above the live region (once,
    /// never redrawn), then `live` (the whole live region) is diffed against the last
    /// frame. `cursor` is where to show the hardware cursor, as a row index into `live` and
    /// a cell column; `None` (or a row not drawn) hides it. Lines must not contain
    /// newlines; live lines wider than the terminal are cut.
    pub fn frame<C: AsRef<str>, L: AsRef<str>>(
        &mut self,
        commit: &[C],
        live: &[L],
        cursor: Option<CursorPos>,
    ) -> io::Result<()> {
        self.body.clear();
        let mut full = self.needs_full;
        if self.drawn.is_some_and(|d| d != (self.cols, self.rows)) {
            self.clear_after_resize();
            full = true;
        }
        if !commit.is_empty() && self.commit(commit, full) {
            full = true;
        }
        let start = live.len().saturating_sub(self.rows);
        let window = &live[start..];
        if full || start != self.prev_start {
            self.stats.full_redraws += 1;
            self.redraw_from(0, window);
        } else {
            self.update(window);
        }
        if self.cur_row < 0 || self.known_rows < 1 {
            // Adopting committed lines can leave the cursor above the region, or the
            // region's top row not yet on screen; later frames (and resizes) measure from
            // the cursor, so settle it inside the region now.
            self.move_to(0);
        }
        self.prev_start = start;
        self.drawn = Some((self.cols, self.rows));
        self.needs_full = false;
        let drew = !self.body.is_empty();
        let target = cursor
            .and_then(|c| Some((c.row.checked_sub(start)?, c.col)))
            .filter(|&(row, _)| row < window.len().max(1));
        self.place_cursor(target, drew);
        if self.body.is_empty() {
            self.stats.last_frame_bytes = 0;
            return Ok(());
        }
        if let Err(err) = self.send(drew) {
            // What reached the terminal is unknown; start over at the next frame.
            self.needs_full = true;
            return Err(err);
        }
        self.is_cursor_visible = target.is_some();
        Ok(())
    }

    /// Writes the frame body, inside synchronized output with the cursor hidden when it
    /// draws content.
    fn send(&mut self, drew: bool) -> io::Result<()> {
        let (sync_on, sync_off): (&[u8], &[u8]) =
            if drew { (SYNC_BEGIN, SYNC_END) } else { (b"", b"") };
        let hide: &[u8] = if drew && self.is_cursor_visible { HIDE_CURSOR } else { b"" };
        self.term.write(sync_on)?;
        self.term.write(hide)?;
        self.term.write(&self.body)?;
        self.term.write(sync_off)?;
        self.term.flush()?;
        let n = sync_on.len() + hide.len() + self.body.len() + sync_off.len();
        self.stats.frames += 1;
        self.stats.bytes += n as u64;
        self.stats.last_frame_bytes = n;
        Ok(())
    }

    /// Records a new terminal size; the next frame clears and redraws the live region.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.cols = usize::from(cols.max(1));
        self.rows = usize::from(rows.max(1));
    }

    /// Size as (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        let clamp = |v: usize| u16::try_from(v).unwrap_or(u16::MAX);
        (clamp(self.cols), clamp(self.rows))
    }

    /// Makes the next frame redraw the whole live region, for when something else wrote
    /// to the terminal without moving the cursor out of the region.
    pub fn invalidate(&mut self) {
        self.needs_full = true;
    }

    /// Erases the live region, leaves the cursor (shown) where the region began and
    /// forgets it: the next frame starts a new region at the cursor. Use before a child
    /// process takes the terminal, and on exit when the live region should vanish.
    pub fn clear_live(&mut self) -> io::Result<()> {
        self.body.clear();
        self.move_to(0);
        self.body.extend_from_slice(b"\r\x1b[J");
        self.body.extend_from_slice(SHOW_CURSOR);
        self.write_and_forget()
    }

    /// Leaves the live region on screen as final output, moves the cursor to the start of
    /// the row below it (shown) and forgets it. Use on exit to keep the last frame.
    pub fn finish(&mut self) -> io::Result<()> {
        self.body.clear();
        if self.prev.is_empty() {
            self.move_to(0);
            self.body.push(b'\r');
        } else {
            self.move_to(self.prev.len() as isize - 1);
            self.body.extend_from_slice(b"\r\n");
        }
        self.body.extend_from_slice(RESET.as_bytes());
        self.body.extend_from_slice(SHOW_CURSOR);
        self.write_and_forget()
    }

    /// Counters of what was written.
    pub fn stats(&self) -> RenderStats {
        self.stats
    }

    /// The terminal.
    pub fn terminal(&self) -> &T {
        &self.term
    }

    /// The terminal, mutably (writing to it directly desynchronizes the renderer: call
    /// [`Screen::invalidate`] or [`Screen::clear_live`] around such writes).
    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.term
    }

    /// Gives the terminal back.
    pub fn into_terminal(self) -> T {
        self.term
    }

    fn write_and_forget(&mut self) -> io::Result<()> {
        self.term.write(&self.body)?;
        self.term.flush()?;
        self.stats.bytes += self.body.len() as u64;
        self.prev.clear();
        self.prev_start = 0;
        self.cur_row = 0;
        self.cur_col = 0;
        self.known_rows = 1;
        self.drawn = None;
        self.needs_full = true;
        self.is_cursor_visible = true;
        Ok(())
    }

    /// Moves up by the rows the old region can occupy after the terminal reflowed it to
    /// the new width (the terminal stops at the top of the screen), and clears from there.
    fn clear_after_resize(&mut self) {
        let (old_cols, _) = self.drawn.unwrap_or((self.cols, self.rows));
        let cols = self.cols;
        let rows_of = |w: usize| w.div_ceil(cols).max(1);
        let mut up = 0;
        for row in 0..usize::try_from(self.cur_row).unwrap_or(0) {
            let w = self.prev.get(row).map_or(0, |l| sanitize(l, old_cols).1);
            up += rows_of(w);
        }
        up += self.cur_col.min(old_cols.saturating_sub(1)) / cols;
        if up > 0 {
            let _ = write!(self.body, "\x1b[{up}A");
        }
        self.body.extend_from_slice(b"\r\x1b[J");
        self.prev.clear();
        self.cur_row = 0;
        self.cur_col = 0;
        self.known_rows = 1;
    }

    /// Puts `commit` above the live region. Returns whether the region was started afresh
    /// (so it must be drawn in full).
    fn commit<C: AsRef<str>>(&mut self, commit: &[C], full: bool) -> bool {
        let adopt = if full || self.prev_start != 0 {
            0
        } else {
            // Only lines drawn exactly as given: one that was cut to the width (or had
            // control characters removed) must be written whole.
            self.prev
                .iter()
                .zip(commit)
                .take_while(|(p, c)| {
                    p.as_str() == c.as_ref() && matches!(sanitize(p, self.cols).0, Cow::Borrowed(_))
                })
                .count()
        };
        if adopt > 0 {
            // These lines are already on screen in the right place: the region now
            // begins below them.
            self.prev.drain(..adopt);
            self.cur_row -= adopt as isize;
            self.known_rows -= adopt as isize;
        }
        if adopt == commit.len() {
            return false;
        }
        self.move_to(0);
        self.body.extend_from_slice(b"\r\x1b[J");
        for line in &commit[adopt..] {
            // Committed lines are not cut: the terminal may wrap them, which is harmless
            // since the renderer never moves back above the region.
            let line = line.as_ref();
            for (i, part) in line.split('\n').enumerate() {
                if i > 0 {
                    self.body.extend_from_slice(b"\r\n");
                }
                self.body.extend_from_slice(part.trim_end_matches('\r').as_bytes());
            }
            if line.contains('\x1b') {
                self.body.extend_from_slice(RESET.as_bytes());
            }
            self.body.extend_from_slice(b"\r\n");
        }
        self.prev.clear();
        self.cur_row = 0;
        self.cur_col = 0;
        self.known_rows = 1;
        true
    }

    /// Diffs `window` against the lines on screen and rewrites what changed. When lines
    /// were inserted or removed above an unchanged tail (a streamed line wrapping pushes
    /// the editor and footer down), the tail is shifted with insert/delete-line instead
    /// of being rewritten.
    fn update<L: AsRef<str>>(&mut self, window: &[L]) {
        let (n_old, n_new) = (self.prev.len(), window.len());
        let common = n_old.min(n_new);
        let first = (0..common).find(|&i| window[i].as_ref() != self.prev[i]).unwrap_or(common);
        if first == n_old && first == n_new {
            return;
        }
        let tail = (0..common - first)
            .take_while(|&k| window[n_new - 1 - k].as_ref() == self.prev[n_old - 1 - k])
            .count();
        if n_new != n_old && tail == 0 {
            self.redraw_from(first, window);
            return;
        }
        let at = n_old - tail;
        if n_new > n_old {
            let k = n_new - n_old;
            // The rows must exist first, so the lines pushed off the bottom by the
            // insertion are blank ones (at the screen's bottom this scrolls history up).
            if n_new as isize > self.known_rows {
                self.move_to(n_new as isize - 1);
            }
            self.move_to(at as isize);
            let _ = write!(self.body, "\x1b[{k}L");
            self.prev.splice(at..at, std::iter::repeat_n(String::new(), k));
        } else if n_new < n_old {
            let k = n_old - n_new;
            self.move_to((at - k) as isize);
            let _ = write!(self.body, "\x1b[{k}M");
            self.prev.drain(at - k..at);
        }
        for (i, line) in window.iter().enumerate().take(n_new - tail).skip(first) {
            if line.as_ref() != self.prev[i] {
                self.patch_line(i, line.as_ref());
            }
        }
    }

    /// Clears from row `from` down and writes `window[from..]`.
    fn redraw_from<L: AsRef<str>>(&mut self, from: usize, window: &[L]) {
        self.move_to(from as isize);
        self.body.extend_from_slice(b"\r\x1b[J");
        for (k, line) in window[from..].iter().enumerate() {
            if k > 0 {
                self.body.extend_from_slice(b"\r\n");
                self.cur_row += 1;
            }
            let (text, w) = sanitize(line.as_ref(), self.cols);
            self.push_line(&text);
            self.cur_col = w;
        }
        self.known_rows = self.known_rows.max(self.cur_row + 1);
        self.prev.truncate(from);
        self.prev.extend(window[from..].iter().map(|l| l.as_ref().to_owned()));
    }

    /// Rewrites row `row` (same row count as before) from its first changed cell.
    fn patch_line(&mut self, row: usize, new: &str) {
        self.move_to(row as isize);
        let (old, old_w) = sanitize(&self.prev[row], self.cols);
        let (text, new_w) = sanitize(new, self.cols);
        match patch_point(&old, &text) {
            Some(cut) if cut.col > 0 => {
                let _ = write!(self.body, "\x1b[{}G", cut.col + 1);
                self.body.extend_from_slice(cut.styles.as_bytes());
                let tail = &text[cut.byte..];
                self.body.extend_from_slice(tail.as_bytes());
                if !cut.styles.is_empty() || tail.contains('\x1b') {
                    self.body.extend_from_slice(RESET.as_bytes());
                }
            }
            _ => {
                self.body.push(b'\r');
                self.push_line(&text);
            }
        }
        if old_w > new_w {
            self.body.extend_from_slice(b"\x1b[K");
        }
        self.cur_col = new_w;
        self.prev[row].clear();
        self.prev[row].push_str(new);
    }

    fn push_line(&mut self, text: &str) {
        self.body.extend_from_slice(text.as_bytes());
        if text.contains('\x1b') {
            self.body.extend_from_slice(RESET.as_bytes());
        }
    }

    /// Moves the cursor to `row` of the region; a row just below the known rows is
    /// reached with a newline, which scrolls the terminal when at the bottom.
    fn move_to(&mut self, row: isize) {
        if row >= self.known_rows {
            self.move_to(self.known_rows - 1);
            while self.cur_row < row {
                self.body.extend_from_slice(b"\r\n");
                self.cur_row += 1;
            }
            self.cur_col = 0;
            self.known_rows = row + 1;
            return;
        }
        let d = row - self.cur_row;
        if d < 0 {
            let _ = write!(self.body, "\x1b[{}A", -d);
        } else if d > 0 {
            let _ = write!(self.body, "\x1b[{d}B");
        }
        self.cur_row = row;
        self.cur_col = self.cur_col.min(self.cols.saturating_sub(1));
    }

    /// Puts the hardware cursor at `target` (row in the window, column) or hides it.
    fn place_cursor(&mut self, target: Option<(usize, usize)>, drew: bool) {
        let Some((row, col)) = target else {
            if self.is_cursor_visible && !drew {
                self.body.extend_from_slice(HIDE_CURSOR);
                self.is_cursor_visible = false;
            }
            return;
        };
        let col = col.min(self.cols.saturating_sub(1));
        if !drew && self.is_cursor_visible && (row as isize, col) == (self.cur_row, self.cur_col) {
            return;
        }
        self.move_to(row as isize);
        if col == 0 {
            self.body.push(b'\r');
        } else {
            let _ = write!(self.body, "\x1b[{}G", col + 1);
        }
        self.cur_col = col;
        self.body.extend_from_slice(SHOW_CURSOR);
        if !drew {
            self.is_cursor_visible = true;
        }
    }
}

/// Makes a live line safe to draw and cuts it to `cols`; returns it with its width.
fn sanitize(line: &str, cols: usize) -> (Cow<'_, str>, usize) {
    let text = drawable(line);
    let w = ansi::width(&text);
    if w > cols {
        let cut = ansi::truncate(&text, cols, "");
        let w = ansi::width(&cut);
        return (Cow::Owned(cut), w);
    }
    (text, w)
}

/// The line without what would move the cursor: control characters become spaces (tab)
/// or go away, except inside escape sequences (the BEL that ends a hyperlink), and an
/// escape sequence cut off by the end of the line goes away, since the terminal would
/// swallow what is written after it.
fn drawable(line: &str) -> Cow<'_, str> {
    if !line.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut is_changed = false;
    let mut rest = line;
    while !rest.is_empty() {
        if let Some((n, is_complete)) = ansi::escape(rest) {
            if is_complete {
                out.push_str(&rest[..n]);
            }
            is_changed |= !is_complete;
            rest = &rest[n..];
            continue;
        }
        let next = rest.find('\x1b').unwrap_or(rest.len());
        for c in rest[..next].chars() {
            match c {
                '\t' => out.push(' '),
                c if c.is_control() => {}
                c => out.push(c),
            }
            is_changed |= c.is_control();
        }
        rest = &rest[next..];
    }
    if is_changed { Cow::Owned(out) } else { Cow::Borrowed(line) }
}

/// Where to start rewriting a changed line.
#[derive(Debug, PartialEq, Eq)]
struct PatchPoint {
    /// Byte offset in the new line.
    byte: usize,
    /// Cell column of that offset.
    col: usize,
    /// SGR escapes in effect at that offset, to re-establish the style there.
    styles: String,
}

/// Finds the start of the last grapheme both lines share before they differ. Rewriting
/// from one grapheme early keeps combining marks right when either line extends the
/// shared grapheme. `None` when the prefix holds escapes other than SGR (hyperlinks),
/// whose state cannot be re-established mid-line: then the whole line is rewritten.
fn patch_point(old: &str, new: &str) -> Option<PatchPoint> {
    let same = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let mut pos = 0;
    let mut col = 0;
    let mut cut = None;
    'scan: while pos < new.len() {
        if let Some(n) = escape_len(&new[pos..]) {
            if pos + n > same {
                break;
            }
            pos += n;
            continue;
        }
        let end = new[pos..].find('\x1b').map_or(new.len(), |i| pos + i);
        for (i, g) in new[pos..end].grapheme_indices(true) {
            if pos + i + g.len() > same {
                break 'scan;
            }
            let w = UnicodeWidthStr::width(g);
            // A zero-width grapheme (a combining mark after an escape) joins the cell
            // before it on screen: rewriting from there would add it twice.
            if w > 0 {
                cut = Some((pos + i, col));
            }
            col += w;
        }
        pos = end;
    }
    let (byte, col) = cut?;
    let mut styles = String::new();
    let mut rest = &new[..byte];
    while let Some(at) = rest.find('\x1b') {
        let n = escape_len(&rest[at..])?;
        let esc = &rest[at..at + n];
        let params = esc.strip_prefix("\x1b[").and_then(|e| e.strip_suffix('m'))?;
        if params.is_empty() || params == "0" {
            styles.clear();
        } else {
            if params.starts_with("0;") {
                styles.clear();
            }
            styles.push_str(esc);
        }
        rest = &rest[at + n..];
    }
    Some(PatchPoint { byte, col, styles })
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
