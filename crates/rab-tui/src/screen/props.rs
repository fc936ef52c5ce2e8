//! Property test of the differential renderer against a terminal emulator (vt100): after
//! any sequence of frames (edits, commits, resizes), what the user sees is what a fresh
//! renderer drawing only that frame would show below the same history, cell for cell
//! (text, colours, attributes), with the cursor in the same place.

use proptest::prelude::*;
use proptest::sample::Index;
use unicode_width::UnicodeWidthChar;

use super::Screen;
use crate::component::CursorPos;
use crate::terminal::TestTerminal;

/// What live lines are made of: words, wide characters (CJK, emoji), combining marks
/// (after a letter and alone), SGR styles and resets, and an OSC 8 hyperlink.
const ATOMS: &[&str] = &[
    "a",
    "bc",
    "word",
    " ",
    "-",
    "日",
    "本語",
    "😀",
    "🎉",
    "e\u{301}",
    "\u{301}",
    "a\u{308}",
    "\x1b[1m",
    "\x1b[31m",
    "\x1b[42m",
    "\x1b[4m",
    "\x1b[7m",
    "\x1b[0m",
    "\x1b[m",
    "\x1b[0;32m",
    "\x1b[38;5;208m",
    "\x1b]8;;http://x\x07",
    "\x1b]8;;\x07",
];

type Line = Vec<&'static str>;

fn line() -> impl Strategy<Value = Line> {
    proptest::collection::vec(proptest::sample::select(ATOMS), 0..12)
}

#[derive(Clone, Debug)]
enum Edit {
    /// A new live region altogether (empty, short, or taller than the screen).
    Replace(Vec<Line>),
    /// Adds to the end of a line (a streamed token).
    Push(Index, &'static str),
    /// Keeps the first atoms of a line.
    Cut(Index, Index),
    /// Changes one atom of a line.
    Set(Index, Index, &'static str),
    Insert(Index, Line),
    Remove(Index),
}

#[derive(Clone, Debug)]
enum Commit {
    None,
    /// The first lines of the live region are finished and move to the history.
    Move(usize),
    /// Lines the live region never showed.
    New(Vec<Line>),
}

#[derive(Clone, Copy, Debug)]
enum Resize {
    Wider(u16),
    Taller(u16),
    Narrower(u16),
}

#[derive(Clone, Debug)]
struct Step {
    resize: Option<Resize>,
    invalidate: bool,
    edits: Vec<Edit>,
    commit: Commit,
    /// Row (one past the end hides it) and column.
    cursor: Option<(Index, u8)>,
}

fn edit() -> impl Strategy<Value = Edit> {
    let atom = || proptest::sample::select(ATOMS);
    prop_oneof![
        1 => proptest::collection::vec(line(), 0..10).prop_map(Edit::Replace),
        4 => (any::<Index>(), atom()).prop_map(|(i, a)| Edit::Push(i, a)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(i, k)| Edit::Cut(i, k)),
        2 => (any::<Index>(), any::<Index>(), atom()).prop_map(|(i, k, a)| Edit::Set(i, k, a)),
        3 => (any::<Index>(), line()).prop_map(|(i, l)| Edit::Insert(i, l)),
        3 => any::<Index>().prop_map(Edit::Remove),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let resize = prop_oneof![
        8 => Just(None),
        1 => (1..8u16).prop_map(|d| Some(Resize::Wider(d))),
        1 => (1..4u16).prop_map(|d| Some(Resize::Taller(d))),
        1 => (1..8u16).prop_map(|d| Some(Resize::Narrower(d))),
    ];
    let commit = prop_oneof![
        10 => Just(Commit::None),
        2 => (1..4usize).prop_map(Commit::Move),
        1 => proptest::collection::vec(line(), 1..3).prop_map(Commit::New),
    ];
    let cursor = proptest::option::weighted(0.8, (any::<Index>(), 0..30u8));
    (
        resize,
        proptest::bool::weighted(0.05),
        proptest::collection::vec(edit(), 0..3),
        commit,
        cursor,
    )
        .prop_map(|(resize, invalidate, edits, commit, cursor)| Step {
            resize,
            invalidate,
            edits,
            commit,
            cursor,
        })
}

fn apply(live: &mut Vec<Line>, edit: Edit) {
    let n = live.len();
    match edit {
        Edit::Replace(lines) => *live = lines,
        Edit::Insert(i, l) => live.insert(i.index(n + 1), l),
        Edit::Push(i, a) if n > 0 => live[i.index(n)].push(a),
        Edit::Cut(i, k) if n > 0 => {
            let l = &mut live[i.index(n)];
            l.truncate(k.index(l.len() + 1));
        }
        Edit::Set(i, k, a) if n > 0 => {
            let l = &mut live[i.index(n)];
            if !l.is_empty() {
                let k = k.index(l.len());
                l[k] = a;
            }
        }
        Edit::Remove(i) if n > 0 => {
            live.remove(i.index(n));
        }
        Edit::Push(..) | Edit::Cut(..) | Edit::Set(..) | Edit::Remove(_) => {}
    }
}

fn text(lines: &[Line]) -> Vec<String> {
    lines.iter().map(|l| l.concat()).collect()
}

/// One cell as the user sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Cell {
    text: String,
    fg: Option<vt100::Color>,
    bg: Option<vt100::Color>,
    /// Bold, dim, italic, underline, inverse.
    attrs: [bool; 5],
}

/// A row's cells with trailing blanks dropped.
type Row = Vec<Cell>;

fn cell(c: &vt100::Cell) -> Cell {
    let (fg, bg) = (c.fgcolor(), c.bgcolor());
    let attrs = [c.bold(), c.dim(), c.italic(), c.underline(), c.inverse()];
    // An erased cell and a written space look the same unless something paints them.
    let blank = matches!(c.contents(), "" | " ") && bg == vt100::Color::Default;
    if blank && !c.underline() && !c.inverse() {
        return Cell::default();
    }
    let color = |c: vt100::Color| (c != vt100::Color::Default).then_some(c);
    Cell { text: c.contents().to_owned(), fg: color(fg), bg: color(bg), attrs }
}

/// Widest the screen gets in a run.
const MAX_COLS: u16 = 60;

/// A row's cells as the emulator keeps them: rows that scrolled off keep the cells beyond
/// a later, narrower width (and show them again after widening), so all are read.
fn row(screen: &vt100::Screen, r: u16) -> Row {
    let mut out: Row =
        (0..MAX_COLS).map(|c| screen.cell(r, c).map(cell).unwrap_or_default()).collect();
    while out.last().is_some_and(|c| *c == Cell::default()) {
        out.pop();
    }
    out
}

/// Every row, scrollback first; the number of scrollback rows.
fn rows(vt: &mut vt100::Parser) -> (Vec<Row>, usize) {
    let (n_rows, _) = vt.screen().size();
    vt.screen_mut().set_scrollback(usize::MAX);
    let scrolled = vt.screen().scrollback();
    let mut out = Vec::new();
    let mut back = scrolled;
    while back > 0 {
        vt.screen_mut().set_scrollback(back);
        let take = back.min(usize::from(n_rows));
        out.extend((0..take).map(|r| row(vt.screen(), r as u16)));
        back -= take;
    }
    vt.screen_mut().set_scrollback(0);
    out.extend((0..n_rows).map(|r| row(vt.screen(), r)));
    (out, scrolled)
}

/// Rows as text, with the style written out where it changes, for readable failures.
fn show(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let mut s = String::new();
            let mut style = (None, None, [false; 5]);
            for c in r {
                if (c.fg, c.bg, c.attrs) != style {
                    style = (c.fg, c.bg, c.attrs);
                    s.push_str(&format!("⟨{style:?}⟩"));
                }
                s.push_str(if c.text.is_empty() { "·" } else { &c.text });
            }
            s
        })
        .collect()
}

/// The text a line shows at a width: escapes stripped, cut to the width, without marks
/// that have no character before them to join (the terminal drops those).
fn visible_text(line: &str, cols: u16) -> String {
    let text = crate::ansi::strip(&crate::ansi::truncate(line, usize::from(cols), ""));
    let start = text.find(|c: char| c.width().is_none_or(|w| w > 0)).unwrap_or(text.len());
    text[start..].trim_end().to_owned()
}

/// Whether narrowing to `cols` would cut a wide character on the screen in two.
fn cuts_wide_char(vt: &vt100::Parser, cols: u16) -> bool {
    let (rows, _) = vt.screen().size();
    (0..rows).any(|r| vt.screen().cell(r, cols - 1).is_some_and(vt100::Cell::is_wide))
}

/// The renderer under test on an emulator, and the expected history beside it.
struct Run {
    screen: Screen<TestTerminal>,
    vt: vt100::Parser,
    cols: u16,
    rows: u16,
    /// History rows taken over from the screen after a narrowing (which may clear some).
    frozen: Vec<Row>,
    /// The history written since, as a fresh renderer writes it.
    history: vt100::Parser,
}

impl Run {
    fn new(cols: u16, rows: u16) -> Run {
        let mut vt = vt100::Parser::new(rows, cols, 10_000);
        let mut history = vt100::Parser::new(rows, cols, 10_000);
        for p in [&mut vt, &mut history] {
            p.process(b"$ rab\r\n");
        }
        let screen = Screen::new(TestTerminal::new(cols, rows)).unwrap();
        Run { screen, vt, cols, rows, frozen: Vec::new(), history }
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        (self.cols, self.rows) = (cols, rows);
        self.vt.screen_mut().set_size(rows, cols);
        self.history.screen_mut().set_size(rows, cols);
        self.screen.resize(cols, rows);
    }

    /// A fresh renderer drawing only `commit` and `live`: its bytes.
    fn fresh(&self, commit: &[String], live: &[String], cursor: Option<CursorPos>) -> Vec<u8> {
        let mut screen = Screen::new(TestTerminal::new(self.cols, self.rows)).unwrap();
        screen.frame(commit, live, cursor).unwrap();
        screen.terminal_mut().take_output()
    }

    fn step(&mut self, step: Step, live: &mut Vec<Line>) {
        let mut narrowed = false;
        match step.resize {
            Some(Resize::Wider(d)) => {
                self.resize(self.cols.saturating_add(d).min(MAX_COLS), self.rows)
            }
            Some(Resize::Taller(d)) => self.resize(self.cols, self.rows.saturating_add(d).min(16)),
            Some(Resize::Narrower(d)) => {
                let cols = self.cols.saturating_sub(d).max(2);
                // vt100 panics on a later erase when narrowing cut a wide character.
                if !cuts_wide_char(&self.vt, cols) && !cuts_wide_char(&self.history, cols) {
                    narrowed = cols < self.cols;
                    self.resize(cols, self.rows);
                }
            }
            None => {}
        }
        if step.invalidate {
            self.screen.invalidate();
        }
        for e in step.edits {
            apply(live, e);
        }
        let commit = match step.commit {
            Commit::None => Vec::new(),
            Commit::Move(k) => text(&live.drain(..k.min(live.len())).collect::<Vec<_>>()),
            Commit::New(lines) => text(&lines),
        };
        let live = text(live);
        let cursor = step
            .cursor
            .map(|(r, col)| CursorPos { row: r.index(live.len() + 1), col: usize::from(col) });
        self.frame(&commit, &live, cursor, narrowed);
    }

    /// Draws a frame and checks the screen.
    fn frame(
        &mut self,
        commit: &[String],
        live: &[String],
        cursor: Option<CursorPos>,
        narrowed: bool,
    ) {
        // After a narrowing, what is left of the history is only known from the screen
        // (see `check`); the frame's own commits are written fresh below it.
        let before = narrowed.then(|| {
            let before = self.expected_history();
            self.frozen.clear();
            self.history = vt100::Parser::new(self.rows, self.cols, 10_000);
            before
        });
        self.screen.frame(commit, live, cursor).unwrap();
        let out = self.screen.terminal_mut().take_output();
        self.vt.process(&out);
        if !commit.is_empty() {
            let out = self.fresh(commit, &[], None);
            self.history.process(&out);
        }
        self.check(live, cursor, before);
    }

    /// The rows the history should occupy: the rows above the history emulator's
    /// cursor, after the frozen ones.
    fn expected_history(&mut self) -> Vec<Row> {
        let (history, scrolled) = rows(&mut self.history);
        let written = scrolled + usize::from(self.history.screen().cursor_position().0);
        let mut expected = self.frozen.clone();
        expected.extend(history.into_iter().take(written));
        expected
    }

    /// The screen shows the history, then exactly what a fresh renderer draws for
    /// `live`, then nothing; the cursor is where the fresh renderer puts it. `before`:
    /// the history before a narrowing.
    fn check(&mut self, live: &[String], cursor: Option<CursorPos>, before: Option<Vec<Row>>) {
        let (actual, scrolled) = rows(&mut self.vt);
        let (cur_r, cur_c) = self.vt.screen().cursor_position();
        let cursor_at = scrolled + usize::from(cur_r);
        let (cols, rows_n) = (self.cols, self.rows);
        let ctx = || format!("size {cols}x{rows_n}, live {live:?}");

        let mut fresh = vt100::Parser::new(self.rows, self.cols, 0);
        fresh.process(&self.fresh(&[], live, cursor));
        let shown = live.len().min(usize::from(self.rows));
        let (window, _) = rows(&mut fresh);
        let window = &window[..shown];
        // And apart from the renderer's own code paths: each row shows its line's text,
        // cut to the width.
        let texts: Vec<String> =
            fresh.screen().rows(0, cols).take(shown).map(|r| r.trim_end().to_owned()).collect();
        let want: Vec<String> =
            live[live.len() - shown..].iter().map(|l| visible_text(l, cols)).collect();
        assert_eq!(texts, want, "text; {}", ctx());

        let expected = self.expected_history();
        let top = match before {
            None => {
                let top = expected.len().min(actual.len());
                assert_eq!(show(&actual[..top]), show(&expected), "history; {}", ctx());
                top
            }
            Some(before) => {
                // Narrowing on a terminal that does not reflow may clear history rows
                // right above the region (see the module docs of `screen`): the region's
                // top is found from the renderer's cursor row; above it are the frame's
                // commits, and above them what is left of the history (rows the emulator
                // cut to the new width, or not). The rest of the run goes on from that.
                let top = cursor_at - usize::try_from(self.screen.cur_row).unwrap();
                let kept = top.checked_sub(expected.len()).unwrap();
                assert_eq!(show(&actual[kept..top]), show(&expected), "commits; {}", ctx());
                assert!(kept <= before.len(), "{kept} rows kept of {before:?}; {}", ctx());
                for (a, b) in show(&actual[..kept]).iter().zip(show(&before)) {
                    assert!(a.starts_with(&b) || b.starts_with(a.as_str()), "{a:?} vs {b:?}");
                }
                self.frozen = actual[..kept].to_vec();
                top
            }
        };
        let region = &actual[top..];
        let (drawn, below) = region.split_at(shown.min(region.len()));
        assert_eq!(show(drawn), show(window), "live region; {}", ctx());
        assert!(below.iter().all(Vec::is_empty), "below the region: {:?}; {}", show(below), ctx());

        let fresh_screen = fresh.screen();
        assert_eq!(self.vt.screen().hide_cursor(), fresh_screen.hide_cursor(), "{}", ctx());
        if !fresh_screen.hide_cursor() {
            let (r, c) = fresh_screen.cursor_position();
            assert_eq!((cursor_at - top, cur_c), (usize::from(r), c), "cursor; {}", ctx());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // Failures are kept as named regression tests, not as files in the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_frames_look_like_a_fresh_render_of_the_last_one(
        // vt100 overflows on a single row or column (it cannot wrap there).
        cols in 2..30u16,
        rows in 2..9u16,
        steps in proptest::collection::vec(step(), 1..30),
    ) {
        let mut run = Run::new(cols, rows);
        let mut live = Vec::new();
        for step in steps {
            run.step(step, &mut live);
        }
    }
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| (*l).to_owned()).collect()
}

/// A live line wider than the screen is drawn cut; committing it must not adopt the cut
/// copy as the history, which keeps the whole line (wrapped by the terminal).
#[test]
fn issue_19_a_committed_line_that_was_drawn_cut_is_written_whole() {
    let mut run = Run::new(4, 4);
    run.frame(&[], &strings(&["abcdef", ">"]), None, false);
    run.frame(&strings(&["abcdef"]), &strings(&[">"]), None, false);
}

/// A combining mark after a style change belongs to the letter before the escape: a patch
/// must not start at the mark (the terminal would add it to that letter a second time).
#[test]
fn issue_19_a_patch_never_starts_at_a_combining_mark_after_an_escape() {
    let mut run = Run::new(10, 4);
    run.frame(&[], &strings(&["a\x1b[1m\u{301}"]), None, false);
    run.frame(&[], &strings(&["a\x1b[1m\u{301}b"]), None, false);
}

/// A hyperlink ends with BEL, a control character: cleaning the line must keep it, or
/// the cut-off escape ran to the end of the line and measuring it never returned.
#[test]
fn issue_19_a_hyperlink_in_a_live_line_is_drawn() {
    let mut run = Run::new(10, 4);
    run.frame(&[], &strings(&["\x1b]8;;http://x\x07link\x1b]8;;\x07 x"]), None, false);
    run.frame(&[], &strings(&["\x1b]8;;http://x\x07link\x1b]8;;\x07 y"]), None, false);
}
