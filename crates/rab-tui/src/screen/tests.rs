//! The renderer against a terminal emulator model (vt100): what the user would see on
//! screen and in the scrollback after sequences of frames.

use super::*;
use crate::terminal::TestTerminal;
use pretty_assertions::assert_eq;

/// A screen on a recording terminal whose bytes go into a vt100 emulator.
struct Harness {
    screen: Screen<TestTerminal>,
    vt: vt100::Parser,
}

impl Harness {
    /// A terminal with a shell prompt already on it, as when rab starts.
    fn new(cols: u16, rows: u16) -> Harness {
        let screen = Screen::new(TestTerminal::new(cols, rows)).unwrap();
        let mut vt = vt100::Parser::new(rows, cols, 10_000);
        vt.process(b"$ rab\r\n");
        Harness { screen, vt }
    }

    /// Draws a frame; returns the bytes written.
    fn frame(&mut self, commit: &[&str], live: &[&str], cursor: Option<CursorPos>) -> String {
        self.screen.frame(commit, live, cursor).unwrap();
        let out = self.screen.terminal_mut().take_output();
        self.vt.process(&out);
        String::from_utf8(out).unwrap()
    }

    fn live(&mut self, live: &[&str]) -> String {
        self.frame(&[], live, None)
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        self.vt.screen_mut().set_size(rows, cols);
        self.screen.resize(cols, rows);
    }

    /// Visible rows, trailing spaces trimmed.
    fn visible(&self) -> Vec<String> {
        let (_, cols) = self.vt.screen().size();
        self.vt.screen().rows(0, cols).map(|r| r.trim_end().to_owned()).collect()
    }

    /// Scrollback then screen, with trailing blank rows dropped.
    fn all(&mut self) -> Vec<String> {
        all_rows(&mut self.vt)
    }

    fn cursor(&self) -> (u16, u16) {
        self.vt.screen().cursor_position()
    }
}

fn all_rows(vt: &mut vt100::Parser) -> Vec<String> {
    let (rows, cols) = vt.screen().size();
    vt.screen_mut().set_scrollback(usize::MAX);
    let mut back = vt.screen().scrollback();
    let mut out = Vec::new();
    while back > 0 {
        vt.screen_mut().set_scrollback(back);
        let take = back.min(usize::from(rows));
        out.extend(vt.screen().rows(0, cols).take(take).map(|r| r.trim_end().to_owned()));
        back -= take;
    }
    vt.screen_mut().set_scrollback(0);
    out.extend(vt.screen().rows(0, cols).map(|r| r.trim_end().to_owned()));
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn at(row: usize, col: usize) -> Option<CursorPos> {
    Some(CursorPos { row, col })
}

#[test]
fn first_frame_draws_below_the_prompt_and_places_the_cursor() {
    let mut h = Harness::new(40, 10);
    let out = h.frame(&[], &["working…", "> hello", "footer"], at(1, 7));
    assert!(out.starts_with("\x1b[?2026h\x1b[?25l"), "{out:?}");
    assert!(out.ends_with("\x1b[?25h\x1b[?2026l"), "{out:?}");
    assert_eq!(h.all(), ["$ rab", "working…", "> hello", "footer"]);
    assert_eq!(h.cursor(), (2, 7));
    assert!(!h.vt.screen().hide_cursor());
    // An identical frame writes nothing.
    assert_eq!(h.frame(&[], &["working…", "> hello", "footer"], at(1, 7)), "");
    // Moving only the cursor writes only a cursor move.
    assert_eq!(h.frame(&[], &["working…", "> hello", "footer"], at(1, 3)), "\x1b[4G\x1b[?25h");
    assert_eq!(h.cursor(), (2, 3));
}

#[test]
fn live_region_grows_and_shrinks_in_place() {
    let mut h = Harness::new(40, 10);
    h.live(&["a", "b"]);
    h.live(&["a", "b", "c", "d"]);
    assert_eq!(h.all(), ["$ rab", "a", "b", "c", "d"]);
    h.live(&["a", "x"]);
    assert_eq!(h.all(), ["$ rab", "a", "x"]);
    h.live(&[]);
    assert_eq!(h.all(), ["$ rab"]);
    h.live(&["again"]);
    assert_eq!(h.all(), ["$ rab", "again"]);
}

#[test]
fn streaming_a_token_rewrites_only_the_new_cells() {
    let mut h = Harness::new(80, 24);
    let mut text = String::from("The answer is");
    h.frame(&[], &[&text, "", "╭──╮", "│ > │", "╰──╯", "~/rab · main"], at(3, 4));
    for token in [" forty", " two", ", of", " course."] {
        text.push_str(token);
        let out = h.frame(&[], &[&text, "", "╭──╮", "│ > │", "╰──╯", "~/rab · main"], at(3, 4));
        assert!(out.contains(token), "{out:?}");
        // Sync, hide, move up, column, token, move back, column, show, sync end.
        assert!(out.len() <= 50 + token.len(), "{} bytes: {out:?}", out.len());
    }
    assert_eq!(h.visible()[1], "The answer is forty two, of course.");
    assert_eq!(h.cursor(), (4, 4));
}

#[test]
fn a_wrapped_stream_line_shifts_the_editor_down_without_rewriting_it() {
    let mut h = Harness::new(30, 8);
    let editor = ["────────────────────", "> draft", "────────────────────", "footer"];
    let mut live = vec!["streamed words that"];
    live.extend(editor);
    h.frame(&[], &live, at(2, 7));
    // The stream wraps: one line changes, one is inserted above the editor.
    let mut next = vec!["streamed words", "that wrap"];
    next.extend(editor);
    let out = h.frame(&[], &next, at(3, 7));
    assert!(out.contains("\x1b[1L"), "{out:?}");
    assert!(!out.contains("draft") && !out.contains("footer"), "{out:?}");
    let mut expected = vec!["$ rab"];
    expected.extend(&next);
    assert_eq!(h.all(), expected);
    // And back: a line removed above the editor shifts it up.
    let out = h.frame(&[], &live, at(2, 7));
    assert!(out.contains("\x1b[1M") && !out.contains("footer"), "{out:?}");
    assert_eq!(h.all()[1..], live);
    // At the bottom of the screen the insertion scrolls history up first.
    let filler: Vec<String> = (0..6).map(|i| format!("history {i}")).collect();
    h.frame(&strs(&filler), &live, at(2, 7));
    h.frame(&[], &next, at(3, 7));
    let all = h.all();
    assert_eq!(all[all.len() - next.len()..], next);
    assert_eq!(all[all.len() - next.len() - 1], "history 5");
}

#[test]
fn patching_a_styled_line_keeps_the_style_of_the_unchanged_part() {
    let mut h = Harness::new(40, 5);
    h.live(&["\x1b[31mred text\x1b[0m", "next"]);
    let out = h.live(&["\x1b[31mred text and more\x1b[0m", "next"]);
    assert!(out.contains("\x1b[31mt and more"), "{out:?}");
    assert_eq!(h.visible()[1], "red text and more");
    let cell = h.vt.screen().cell(1, 12).unwrap();
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(1));
    assert_eq!(h.vt.screen().cell(2, 0).unwrap().fgcolor(), vt100::Color::Default);
    // A shorter line erases what the old one had beyond it.
    h.live(&["\x1b[31mred\x1b[0m", "next"]);
    assert_eq!(h.visible()[1], "red");
}

#[test]
fn commits_go_to_the_scrollback_once_in_order() {
    let mut h = Harness::new(30, 6);
    let mut expected = vec!["$ rab".to_owned()];
    for i in 0..20 {
        let line = format!("message {i}");
        let live = [format!("streaming {i}"), ">".to_owned(), "footer".to_owned()];
        h.frame(&[line.as_str()], &strs(&live), at(1, 2));
        expected.push(line);
        let mut all = expected.clone();
        all.extend(live.iter().cloned());
        assert_eq!(h.all(), all);
        let (row, col) = h.cursor();
        assert_eq!((h.visible()[usize::from(row)].as_str(), col), (">", 2));
    }
}

#[test]
fn committed_lines_already_drawn_are_adopted_not_rewritten() {
    let mut h = Harness::new(40, 10);
    h.frame(&[], &["assistant: done", "with two lines", ">", "footer"], at(2, 2));
    let out = h.frame(&["assistant: done", "with two lines"], &[">", "footer"], at(0, 2));
    assert!(!out.contains("assistant"), "{out:?}");
    assert_eq!(h.all(), ["$ rab", "assistant: done", "with two lines", ">", "footer"]);
    // Partly adopted: the first line is on screen, the second is new.
    h.frame(&[], &["tool: ls", ">", "footer"], at(1, 2));
    let out = h.frame(&["tool: ls", "file a"], &[">", "footer"], at(0, 2));
    assert!(!out.contains("tool: ls"), "{out:?}");
    assert_eq!(
        h.all(),
        ["$ rab", "assistant: done", "with two lines", "tool: ls", "file a", ">", "footer"]
    );
    // Everything adopted and the live region emptied.
    h.frame(&[">", "footer"], &[] as &[&str], None);
    h.live(&["new"]);
    assert_eq!(h.all()[5..], [">", "footer", "new"]);
}

#[test]
fn adopting_every_live_line_then_resizing_keeps_the_committed_lines() {
    let mut h = Harness::new(30, 8);
    h.frame(&[], &["answer"], None);
    h.frame(&["answer"], &[] as &[&str], None);
    h.resize(40, 8);
    h.frame(&["next"], &["> "], at(0, 2));
    assert_eq!(h.all(), ["$ rab", "answer", "next", ">"]);
    // The same with the cursor left on an adopted line.
    h.frame(&[], &["done", "> "], at(0, 0));
    h.frame(&["done"], &["> "], None);
    h.resize(50, 8);
    h.frame(&[], &["> x"], at(0, 3));
    assert_eq!(h.all(), ["$ rab", "answer", "next", "done", "> x"]);
}

#[test]
fn tall_live_region_shows_its_bottom_and_keeps_the_scrollback_clean() {
    let mut h = Harness::new(20, 5);
    let lines: Vec<String> = (0..12).map(|i| format!("line {i}")).collect();
    for n in 1..=lines.len() {
        let mut live = strs(&lines[..n]);
        live.push(">");
        h.frame(&[], &live, at(n, 2));
        let start = (n + 1).saturating_sub(5);
        let mut expected = vec!["$ rab"];
        expected.extend(&live[start..]);
        assert_eq!(h.all(), expected);
        let (row, col) = h.cursor();
        assert_eq!((h.visible()[usize::from(row)].as_str(), col), (">", 2));
    }
    // Nothing of the live region leaked into the scrollback except the prompt.
    let all = h.all();
    assert_eq!(all.iter().filter(|l| l.starts_with("line 0")).count(), 0, "{all:?}");
    assert_eq!(all[all.len() - 5..], ["line 8", "line 9", "line 10", "line 11", ">"]);
    // Committing it all puts every line in the scrollback once.
    h.frame(&strs(&lines), &[">"], at(0, 2));
    let all = h.all();
    for l in &lines {
        assert_eq!(all.iter().filter(|a| *a == l).count(), 1, "{l}: {all:?}");
    }
    assert_eq!(all.last().map(String::as_str), Some(">"));
}

#[test]
fn lines_wider_than_the_terminal_are_cut_so_rows_stay_in_sync() {
    let mut h = Harness::new(10, 6);
    h.live(&["0123456789abcdef", "日本語テキストです", "tail"]);
    assert_eq!(h.all(), ["$ rab", "0123456789", "日本語テキ", "tail"]);
    h.live(&["0123456789abcdef", "short", "tail!"]);
    assert_eq!(h.all(), ["$ rab", "0123456789", "short", "tail!"]);
    // Control characters cannot move the cursor.
    h.live(&["a\tb\rc\nd", "tail"]);
    assert_eq!(h.all(), ["$ rab", "a bcd", "tail"]);
}

#[test]
fn widening_redraws_the_live_region_once() {
    let mut h = Harness::new(40, 10);
    h.frame(&["history"], &["stream", "> typed", "footer"], at(1, 7));
    h.resize(60, 10);
    h.frame(&[], &["stream", "> typed", "footer wider"], at(1, 7));
    assert_eq!(h.all(), ["$ rab", "history", "stream", "> typed", "footer wider"]);
    assert_eq!(h.cursor(), (3, 7));
}

#[test]
fn narrowing_on_a_terminal_without_reflow_leaves_no_torn_copies() {
    let mut h = Harness::new(40, 10);
    let border = "─".repeat(40);
    h.frame(&["history 1", "history 2"], &[&border, "> typed", &border], at(1, 7));
    h.resize(20, 10);
    let border = "─".repeat(20);
    h.frame(&[], &[&border, "> typed", &border], at(1, 7));
    let all = h.all();
    // The live region is there once, at the end; what precedes it is intact history
    // (some of it may have been cleared, see the module docs).
    assert_eq!(all[all.len() - 3..], [border.clone(), "> typed".into(), border.clone()]);
    let before = &all[..all.len() - 3];
    assert!(["$ rab", "history 1", "history 2"].starts_with(&strs(before)), "{all:?}");
}

/// Emulates a terminal that reflows on resize (kitty, VTE, iTerm2): the screen's logical
/// lines are rewrapped to the new width and the cursor follows its character.
fn reflow(vt: &mut vt100::Parser, cols: u16, rows: u16) -> vt100::Parser {
    let (old_rows, old_cols) = vt.screen().size();
    let history = all_rows(vt);
    let screen_rows: Vec<String> = vt.screen().rows(0, old_cols).collect();
    let scrolled = history.len().saturating_sub(usize::from(old_rows)).min(history.len());
    let (cr, cc) = vt.screen().cursor_position();
    let mut logical: Vec<String> = Vec::new();
    let mut cursor = (0, 0);
    let mut joining = false;
    for (r, text) in screen_rows.iter().enumerate() {
        if !joining {
            logical.push(String::new());
        }
        let idx = logical.len() - 1;
        let line = &mut logical[idx];
        if r == usize::from(cr) {
            cursor = (idx, line.chars().count() + usize::from(cc));
        }
        line.push_str(if vt.screen().row_wrapped(r as u16) { text } else { text.trim_end() });
        joining = vt.screen().row_wrapped(r as u16);
    }
    logical.truncate(cursor.0 + 1);
    let mut new = vt100::Parser::new(rows, cols, 10_000);
    for line in &history[..scrolled] {
        new.process(format!("{line}\r\n").as_bytes());
    }
    let rows_of = |l: &String| l.chars().count().div_ceil(usize::from(cols)).max(1);
    for (i, line) in logical.iter().enumerate() {
        new.process(line.as_bytes());
        if i + 1 < logical.len() {
            new.process(b"\r\n");
        }
    }
    let end_row = usize::from(new.screen().cursor_position().0);
    let last = logical.last().unwrap();
    let start_of_cursor_line = end_row + 1 - rows_of(last);
    let row = start_of_cursor_line + cursor.1 / usize::from(cols);
    let col = cursor.1 % usize::from(cols);
    new.process(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
    new
}

#[test]
fn narrowing_on_a_reflowing_terminal_clears_exactly_the_old_region() {
    let mut h = Harness::new(40, 12);
    let border = "─".repeat(40);
    let live = ["streaming text", border.as_str(), "> typed", border.as_str(), "footer"];
    h.frame(&["history 1", "history 2"], &live, at(2, 7));
    h.vt = reflow(&mut h.vt, 24, 12);
    h.screen.resize(24, 12);
    let border = "─".repeat(24);
    let live = ["streaming text", border.as_str(), "> typed", border.as_str(), "footer"];
    h.frame(&[], &live, at(2, 7));
    let mut expected = vec!["$ rab", "history 1", "history 2"];
    expected.extend(live);
    assert_eq!(h.all(), expected);
    assert_eq!(h.cursor(), (5, 7));
}

#[test]
fn clear_live_and_finish_hand_the_terminal_back() {
    let mut h = Harness::new(40, 10);
    h.frame(&["kept"], &["live 1", "live 2"], at(0, 0));
    h.screen.clear_live().unwrap();
    let out = h.screen.terminal_mut().take_output();
    h.vt.process(&out);
    assert_eq!(h.all(), ["$ rab", "kept"]);
    assert_eq!(h.cursor(), (2, 0));
    h.vt.process(b"$ shell output\r\n");
    h.frame(&[], &["live again", "footer"], at(0, 2));
    h.screen.finish().unwrap();
    let out = h.screen.terminal_mut().take_output();
    h.vt.process(&out);
    h.vt.process(b"$ ");
    assert_eq!(h.all(), ["$ rab", "kept", "$ shell output", "live again", "footer", "$"]);
}

/// A deterministic pseudo-random sequence (no test dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn random_frames_always_show_history_then_the_live_region() {
    let words = ["alpha", "beta", "\x1b[1mbold\x1b[0m", "日本", "\x1b[32mgreen", "e\u{301}", "x"];
    for seed in 0..150 {
        let mut rng = Lcg(seed);
        let (mut cols, rows) = (12 + rng.next(30) as u16, 4 + rng.next(10) as u16);
        let mut h = Harness::new(cols, rows);
        let mut history = vec!["$ rab".to_owned()];
        let mut live: Vec<String> = Vec::new();
        for step in 0..80 {
            // Mutate the live region: edit, append to, insert or remove lines.
            match rng.next(9) {
                6 if !live.is_empty() => {
                    let i = rng.next(live.len());
                    let keep = rng.next(live[i].len() + 1);
                    let cut = ansi::truncate(&live[i], keep, "");
                    live[i] = cut;
                }
                7 => {
                    let at = rng.next(live.len() + 1);
                    live.splice(at..at, [format!("m{step}"), format!("k{step}")]);
                }
                8 if rng.next(4) == 0 => {
                    // Widening: exact on any terminal, so the invariant still holds.
                    cols += 1 + rng.next(5) as u16;
                    h.resize(cols, rows);
                }
                0 if !live.is_empty() => {
                    let i = rng.next(live.len());
                    live[i].push_str(words[rng.next(words.len())]);
                }
                1 if !live.is_empty() => {
                    let i = rng.next(live.len());
                    live.remove(i);
                }
                2 => live.insert(rng.next(live.len() + 1), format!("n{step}")),
                _ => {
                    let n = live.len();
                    if n > 0 {
                        live[n - 1].push_str(words[rng.next(words.len())]);
                    } else {
                        live.push(String::new());
                    }
                }
            }
            let mut commit: Vec<String> = Vec::new();
            if rng.next(5) == 0 && !live.is_empty() {
                // Move finished lines from the top of the live region to the history.
                let k = 1 + rng.next(live.len());
                commit =
                    live.drain(..k).map(|l| ansi::truncate(&l, usize::from(cols), "")).collect();
            } else if rng.next(9) == 0 {
                commit.push(format!("c{step}"));
            }
            let cursor =
                (!live.is_empty()).then(|| CursorPos { row: rng.next(live.len()), col: 1 });
            if rng.next(25) == 0 {
                h.screen.invalidate();
            }
            h.frame(&strs(&commit), &strs(&live), cursor);
            history.extend(commit.iter().map(|l| ansi::strip(l).trim_end().to_owned()));
            let start = live.len().saturating_sub(usize::from(rows));
            let mut expected = history.clone();
            expected.extend(live[start..].iter().map(|l| {
                ansi::strip(&ansi::truncate(l, usize::from(cols), "")).trim_end().to_owned()
            }));
            while expected.last().is_some_and(String::is_empty) {
                expected.pop();
            }
            assert_eq!(h.all(), expected, "seed {seed} step {step} size {cols}x{rows}");
        }
    }
}

#[test]
fn patch_point_finds_the_shared_prefix_and_its_styles() {
    let p = patch_point("\x1b[31mab\x1b[0m", "\x1b[31mabc\x1b[0m").unwrap();
    assert_eq!(p, PatchPoint { byte: 6, col: 1, styles: "\x1b[31m".into() });
    // One grapheme early, so a combining mark added to the last shared letter is redrawn.
    let p = patch_point("cafe", "cafe\u{301}").unwrap();
    assert_eq!((p.byte, p.col), (2, 2));
    // Wide characters count two cells.
    let p = patch_point("日本x", "日本y").unwrap();
    assert_eq!((p.byte, p.col), (3, 2));
    // A reset clears the styles to re-establish.
    let p = patch_point("\x1b[1ma\x1b[0mbc", "\x1b[1ma\x1b[0mbd").unwrap();
    assert_eq!(p.styles, "");
    // Hyperlinks cannot be resumed mid-line.
    assert_eq!(patch_point("\x1b]8;;u\x07ab", "\x1b]8;;u\x07ac"), None);
    assert_eq!(patch_point("abc", "xyz"), None);
}

#[test]
fn stats_count_bytes_and_full_redraws() {
    let mut h = Harness::new(40, 10);
    h.live(&["a"]);
    h.live(&["ab"]);
    let s = h.screen.stats();
    assert_eq!((s.frames, s.full_redraws), (2, 1));
    assert_eq!(s.bytes, h.screen.terminal().total_bytes);
    assert!(s.last_frame_bytes > 0 && s.last_frame_bytes < 40, "{s:?}");
}
