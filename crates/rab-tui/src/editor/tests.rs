use super::*;
use crate::ansi::{strip, width as cells};
use crate::component::CursorPos;
use crate::theme::{ColorDepth, Theme};
use pretty_assertions::assert_eq;
use std::time::{Duration, Instant};

fn typed(s: &str) -> Editor {
    let mut e = Editor::new();
    for c in s.chars() {
        e.insert_char(c);
    }
    e
}

fn theme() -> Theme {
    Theme::builtin("dark", ColorDepth::TrueColor).unwrap()
}

/// Text with `|` at the cursor.
fn show(e: &Editor) -> String {
    let mut t = e.display_text();
    let before = e.display_text_len_before_cursor();
    t.insert(before, '|');
    t
}

impl Editor {
    fn display_text_len_before_cursor(&self) -> usize {
        let mut n = 0;
        for c in self.text[..self.cursor].chars() {
            n += match self.marker_id(c) {
                Some(id) => self.marker_label(id).len(),
                None => c.len_utf8(),
            };
        }
        n
    }
}

fn plain(lines: &[String]) -> Vec<String> {
    lines.iter().map(|l| strip(l)).collect()
}

#[test]
fn typing_inserts_at_the_cursor() {
    let mut e = typed("helo");
    e.move_left();
    e.insert_char('l');
    assert_eq!(show(&e), "hell|o");
    e.move_buffer_end();
    e.newline();
    e.insert_str("a\tb\r\nc\x1b");
    assert_eq!(e.text(), "hello\na    b\nc");
    assert_eq!(show(&e), "hello\na    b\nc|");
}

#[test]
fn deletes_by_grapheme() {
    let mut e = typed("ae\u{301}👨‍👩‍👧x");
    e.move_left();
    e.delete_back();
    assert_eq!(show(&e), "ae\u{301}|x");
    e.move_left();
    e.delete_forward();
    assert_eq!(show(&e), "a|x");
    e.move_buffer_start();
    e.delete_back();
    e.move_buffer_end();
    e.delete_forward();
    assert_eq!(show(&e), "ax|");
}

#[test]
fn moves_by_grapheme_word_line_and_buffer() {
    let mut e = typed("foo.bar  baz\nqux e\u{301}");
    e.move_left();
    assert_eq!(show(&e), "foo.bar  baz\nqux |e\u{301}");
    e.move_word_left();
    assert_eq!(show(&e), "foo.bar  baz\n|qux e\u{301}");
    e.move_word_left();
    assert_eq!(show(&e), "foo.bar  |baz\nqux e\u{301}");
    e.move_word_left();
    assert_eq!(show(&e), "foo.|bar  baz\nqux e\u{301}");
    e.move_word_left();
    assert_eq!(show(&e), "foo|.bar  baz\nqux e\u{301}");
    e.move_word_right();
    assert_eq!(show(&e), "foo.|bar  baz\nqux e\u{301}");
    e.move_word_right();
    assert_eq!(show(&e), "foo.bar|  baz\nqux e\u{301}");
    e.move_line_end();
    assert_eq!(show(&e), "foo.bar  baz|\nqux e\u{301}");
    e.move_right();
    e.move_line_end();
    e.move_line_start();
    assert_eq!(show(&e), "foo.bar  baz\n|qux e\u{301}");
    e.move_buffer_start();
    assert_eq!(e.cursor(), 0);
    e.move_buffer_end();
    assert_eq!(e.cursor(), e.text.len());
}

#[test]
fn word_deletes_feed_the_kill_ring() {
    let mut e = typed("one two three");
    e.delete_word_back();
    assert_eq!(show(&e), "one two |");
    e.delete_word_back();
    assert_eq!(show(&e), "one |");
    e.move_buffer_start();
    e.delete_word_forward();
    assert_eq!(show(&e), "| ");
    e.move_buffer_end();
    // The forward kill started a new ring entry; yank shows it.
    e.yank();
    assert_eq!(show(&e), " one|");
    e.yank_pop();
    assert_eq!(show(&e), " two three|");
}

#[test]
fn kill_to_line_end_and_yank() {
    let mut e = typed("abc\ndef");
    e.move_buffer_start();
    e.move_right();
    e.kill_to_line_end();
    assert_eq!(show(&e), "a|\ndef");
    // At the end of a line, Ctrl+K joins the next; consecutive kills make one entry.
    e.kill_to_line_end();
    assert_eq!(show(&e), "a|def");
    e.move_buffer_end();
    e.yank();
    assert_eq!(show(&e), "adefbc\n|");
    assert_eq!(e.kill_ring, vec!["bc\n".to_owned()]);
}

#[test]
fn kill_whole_line_and_to_line_start() {
    let mut e = typed("one\ntwo\nthree");
    e.up();
    e.kill_line();
    assert_eq!(e.text(), "one\nthree");
    e.move_buffer_end();
    e.kill_to_line_start();
    assert_eq!(show(&e), "one\n|");
    e.kill_line();
    assert_eq!(e.text(), "one");
    e.kill_line();
    assert_eq!(e.text(), "");
    // Consecutive kills grew one entry: "three", then the line break and "one" before it.
    e.yank();
    assert_eq!(e.text(), "one\nthree");
}

#[test]
fn undo_folds_a_run_of_typing_per_word() {
    let mut e = typed("hello world");
    assert!(e.undo());
    assert_eq!(show(&e), "hello|");
    assert!(e.undo());
    assert_eq!(show(&e), "|");
    assert!(!e.undo());
    assert!(e.redo());
    assert!(e.redo());
    assert_eq!(show(&e), "hello world|");
    assert!(!e.redo());
    // Moving ends the run, so typing after it is its own step.
    e.move_left();
    e.insert_char('X');
    e.insert_char('Y');
    e.undo();
    assert_eq!(show(&e), "hello worl|d");
    e.delete_back();
    e.undo();
    assert_eq!(show(&e), "hello worl|d");
}

#[test]
fn undo_restores_paste_and_kill() {
    let mut e = typed("abc");
    e.paste(&"x\n".repeat(50));
    e.undo();
    assert_eq!(e.text(), "abc");
    e.kill_to_line_start();
    e.undo();
    assert_eq!(show(&e), "abc|");
}

#[test]
fn small_paste_is_inline_large_paste_is_a_marker() {
    let mut e = Editor::new();
    e.paste("one\r\ntwo");
    assert_eq!(e.text(), "one\ntwo");
    let big: String = (1..=120).map(|i| format!("line {i}\n")).collect();
    e.paste(&big);
    assert_eq!(e.display_text(), "one\ntwo[paste #1 +120 lines]");
    e.paste(&"y".repeat(1500));
    assert_eq!(e.display_text(), "one\ntwo[paste #1 +120 lines][paste #2 1500 chars]");
    // The cursor skips a marker in one step and one backspace deletes it.
    e.move_left();
    assert_eq!(show(&e), "one\ntwo[paste #1 +120 lines]|[paste #2 1500 chars]");
    e.delete_back();
    assert_eq!(show(&e), "one\ntwo|[paste #2 1500 chars]");
    e.move_word_right();
    assert_eq!(show(&e), "one\ntwo[paste #2 1500 chars]|");
    let out = e.submit();
    assert_eq!(out, format!("one\ntwo{}", "y".repeat(1500)));
    assert!(e.is_empty());
    // Numbering restarts per prompt.
    e.paste(&big);
    assert_eq!(e.display_text(), "[paste #1 +120 lines]");
    assert_eq!(e.submit(), big);
}

#[test]
fn five_thousand_line_paste_is_fast() {
    let big: String = (0..5000).map(|i| format!("{i:>6} some pasted code line;\n")).collect();
    let start = Instant::now();
    let mut e = Editor::new();
    e.paste(&big);
    let (lines, _) = e.render(80, &theme());
    let out = e.submit();
    let took = start.elapsed();
    assert_eq!(out, big);
    assert_eq!(plain(&lines)[1], "[paste #1 +5000 lines]");
    // Guards against per-character work, not a benchmark (bench/ times the editor):
    // loose enough for a busy machine.
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Plain large inserts (set_text, history) are one splice, not per-char work.
    let start = Instant::now();
    e.insert_str(&big);
    e.insert_char('x');
    let (lines, cur) = e.render(80, &theme());
    assert_eq!(lines.len(), 10);
    assert_eq!(cur.row, 8);
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn history_walks_with_up_and_down_and_keeps_the_draft() {
    let mut e = Editor::new();
    e.set_text("first");
    e.submit();
    e.set_text("second\nline");
    e.submit();
    e.push_history("second\nline");
    e.set_text("draft");
    e.up();
    assert_eq!(show(&e), "second|\nline");
    assert!(e.is_browsing_history());
    e.up();
    assert_eq!(show(&e), "first|");
    e.up();
    assert_eq!(show(&e), "|first");
    e.down();
    assert_eq!(show(&e), "second\nline|");
    e.down();
    assert_eq!(show(&e), "draft|");
    assert!(!e.is_browsing_history());
    e.down();
    assert_eq!(show(&e), "draft|");
}

#[test]
fn history_keeps_pastes_of_recalled_entries() {
    let mut e = Editor::new();
    let big = "z\n".repeat(20);
    e.paste(&big);
    e.submit();
    e.up();
    assert_eq!(e.display_text(), "[paste #1 +20 lines]");
    e.paste(&big);
    assert_eq!(e.display_text(), "[paste #1 +20 lines][paste #2 +20 lines]");
    assert_eq!(e.submit(), format!("{big}{big}"));
}

#[test]
fn up_and_down_move_across_wrapped_rows_with_a_sticky_column() {
    let mut e = Editor::new();
    e.set_text("0123456789abcdefghij\nxy\n0123456789");
    let _ = e.render(10, &theme());
    // Rows: "0123456789" "abcdefghij" "" (full rows leave a cursor row), "xy", "0123456789", "".
    e.move_buffer_start();
    for _ in 0..7 {
        e.move_right();
    }
    e.down();
    assert_eq!(e.cursor(), 17);
    e.down();
    e.down();
    assert_eq!(show(&e), "0123456789abcdefghij\nxy|\n0123456789");
    e.down();
    assert_eq!(show(&e), "0123456789abcdefghij\nxy\n0123456|789");
    e.up();
    e.up();
    e.up();
    assert_eq!(e.cursor(), 17);
}

#[test]
fn word_wrap_breaks_at_spaces() {
    let mut e = Editor::new();
    e.set_text("the quick brown fox jumps over");
    let (lines, cur) = e.render(12, &theme());
    assert_eq!(
        plain(&lines),
        vec!["────────────", "the quick ", "brown fox ", "jumps over", "────────────"]
    );
    assert_eq!(cur, CursorPos { row: 3, col: 10 });
    assert!(lines.iter().all(|l| cells(l) <= 12));
}

#[test]
fn scrolls_to_keep_the_cursor_visible() {
    let mut e = Editor::new();
    e.set_max_rows(3);
    e.set_text(&(1..=8).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n"));
    let (lines, cur) = e.render(20, &theme());
    assert_eq!(
        plain(&lines),
        vec!["─── ↑ 5 more ───────", "line 6", "line 7", "line 8", "────────────────────"]
    );
    assert_eq!(cur, CursorPos { row: 3, col: 6 });
    e.move_buffer_start();
    let (lines, cur) = e.render(20, &theme());
    assert_eq!(plain(&lines)[4], "─── ↓ 5 more ───────");
    assert_eq!(cur, CursorPos { row: 1, col: 0 });
}

#[test]
fn replace_range_applies_a_completion() {
    let mut e = typed("see @src/ma");
    let end = e.text_before_cursor().len();
    e.replace_range(4..end, "@src/main.rs ");
    assert_eq!(show(&e), "see @src/main.rs |");
    e.undo();
    assert_eq!(show(&e), "see @src/ma|");
}

#[test]
fn snapshot_editor_80_and_120() {
    let mut e = Editor::new();
    e.set_text(
        "Refactor the session loader so that torn lines at the end of a JSONL tape are \
         recovered instead of failing the whole load.\n\nAlso look at this:",
    );
    e.paste(&"fn main() {}\n".repeat(40));
    e.insert_str(" and tell me what you think — 日本語 too.");
    for width in [80, 120] {
        let (lines, cur) = e.render(width, &theme());
        assert!(lines.iter().all(|l| cells(l) <= width));
        let mut text = plain(&lines).join("\n");
        text.push_str(&format!("\ncursor: {cur:?}"));
        insta::assert_snapshot!(format!("editor_{width}"), text);
    }
}

#[test]
fn narrow_widths_keep_lines_and_cursor_in_bounds() {
    let mut e = Editor::new();
    e.set_text("日本語のテキスト averyveryverylongword e\u{301}e\u{301} tail\n\nx");
    e.paste(&"p\n".repeat(30));
    e.insert_str(" 終わり");
    for width in 2..=24 {
        e.move_buffer_start();
        let rows = e.layout(width).len();
        for _ in 0..rows + 2 {
            let (lines, cur) = e.render(width, &theme());
            assert!(lines.iter().all(|l| cells(l) <= width), "{width}: {lines:?}");
            assert!(cur.col < width && cur.row >= 1 && cur.row < lines.len() - 1, "{width}");
            assert!(e.text.is_char_boundary(e.cursor()));
            e.down();
        }
        assert_eq!(e.cursor(), e.text.len(), "{width}");
    }
}

#[test]
fn random_edit_sequences_never_panic() {
    // A fixed pseudo-random walk over every operation, checking invariants as it goes.
    let mut e = Editor::new();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let samples = ["a", " ", "日", "e\u{301}", "\n", "👨‍👩‍👧", "word "];
    for step in 0..3000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        match seed % 24 {
            0..=5 => e.insert_str(samples[(seed >> 8) as usize % samples.len()]),
            6 => e.paste(&"line\n".repeat(12)),
            7 => e.delete_back(),
            8 => e.delete_forward(),
            9 => e.delete_word_back(),
            10 => e.delete_word_forward(),
            11 => e.move_left(),
            12 => e.move_right(),
            13 => e.move_word_left(),
            14 => e.move_word_right(),
            15 => e.up(),
            16 => e.down(),
            17 => e.kill_to_line_end(),
            18 => e.kill_line(),
            19 => e.yank(),
            20 => e.yank_pop(),
            21 => {
                e.undo();
            }
            22 => {
                e.redo();
            }
            _ => {
                if step % 5 == 0 {
                    e.submit();
                } else {
                    e.move_line_start();
                }
            }
        }
        assert!(e.text.is_char_boundary(e.cursor()), "step {step}");
        let width = 5 + (seed >> 16) as usize % 40;
        let (lines, cur) = e.render(width, &theme());
        assert!(lines.iter().all(|l| cells(l) <= width), "step {step}");
        assert!(cur.col < width);
    }
}

#[test]
fn the_border_takes_the_colour_it_is_given() {
    let t = theme();
    let e = Editor::new();
    let (plain, _) = e.render(20, &t);
    assert_eq!(plain[0], t.fg(crate::Role::Border, &"─".repeat(20)));
    e.set_border(crate::Role::Bash);
    let (bash, _) = e.render(20, &t);
    assert_eq!(bash[0], t.fg(crate::Role::Bash, &"─".repeat(20)));
    assert_eq!(bash.last(), Some(&t.fg(crate::Role::Bash, &"─".repeat(20))));
    assert_ne!(plain[0], bash[0]);
}
