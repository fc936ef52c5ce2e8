//! Word wrapping of ANSI-styled text to a width, by grapheme and display width. Styles
//! active at a break are closed at the end of the line and reopened on the next, so each
//! line renders correctly on its own (the renderer may redraw any line alone).

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::ansi::{RESET, escape_len};

/// Wraps one logical line (no `\n`) to lines of at most `width` cells. Breaks at spaces
/// where possible; a word longer than the width is broken by grapheme.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    if crate::ansi::width(line) <= width {
        return vec![line.to_owned()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_w = 0;
    // SGR sequences seen since the last reset, to reopen on continuation lines.
    let mut active: Vec<String> = Vec::new();
    // `active` as it was where the pending word began: a break before the word must
    // close and reopen those, not what the word's own escapes (e.g. its reset) changed.
    let mut word_active: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut word_w = 0;
    let mut rest = line;
    let flush_word = |cur: &mut String,
                      cur_w: &mut usize,
                      word: &mut String,
                      word_w: &mut usize,
                      out: &mut Vec<String>,
                      active: &Vec<String>| {
        if *cur_w + *word_w > width && *cur_w > 0 {
            let trimmed = cur.trim_end_matches(' ').to_owned();
            out.push(if active.is_empty() { trimmed } else { format!("{trimmed}{RESET}") });
            *cur = active.concat();
            *cur_w = 0;
            let w = word.trim_start_matches(' ');
            *word_w -= word.len() - w.len();
            *word = w.to_owned();
        }
        cur.push_str(word);
        *cur_w += *word_w;
        word.clear();
        *word_w = 0;
    };
    while !rest.is_empty() {
        if let Some(n) = escape_len(rest) {
            let esc = &rest[..n];
            if esc.ends_with('m') {
                if esc == RESET || esc == "\x1b[m" {
                    active.clear();
                } else {
                    active.push(esc.to_owned());
                }
            }
            word.push_str(esc);
            rest = &rest[n..];
            continue;
        }
        let next = rest.find('\x1b').unwrap_or(rest.len());
        for g in rest[..next].graphemes(true) {
            let gw = UnicodeWidthStr::width(g);
            if g == " " {
                flush_word(&mut cur, &mut cur_w, &mut word, &mut word_w, &mut out, &word_active);
                word_active.clone_from(&active);
            }
            if word_w + gw > width {
                // A word longer than a line: break it here.
                flush_word(&mut cur, &mut cur_w, &mut word, &mut word_w, &mut out, &word_active);
                word_active.clone_from(&active);
                if cur_w + gw > width {
                    out.push(if active.is_empty() { cur.clone() } else { format!("{cur}{RESET}") });
                    cur = active.concat();
                    cur_w = 0;
                }
            }
            word.push_str(g);
            word_w += gw;
        }
        rest = &rest[next..];
    }
    flush_word(&mut cur, &mut cur_w, &mut word, &mut word_w, &mut out, &word_active);
    out.push(cur);
    out
}

/// Wraps text that may contain newlines.
pub fn wrap_text(text: &str, width: usize) -> Vec<String> {
    text.split('\n').flat_map(|l| wrap(l, width)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ansi::{strip, width as w};
    use pretty_assertions::assert_eq;

    #[test]
    fn wraps_at_spaces_and_breaks_long_words() {
        let lines: Vec<String> =
            wrap("the quick brown fox jumps", 10).iter().map(|l| strip(l)).collect();
        assert_eq!(lines, ["the quick", "brown fox", "jumps"]);
        let lines: Vec<String> = wrap("abcdefghijklmnop", 5).iter().map(|l| strip(l)).collect();
        assert_eq!(lines, ["abcde", "fghij", "klmno", "p"]);
    }

    #[test]
    fn every_line_fits_and_styles_are_reopened() {
        let styled = "\x1b[31mred words that go on and on\x1b[0m tail";
        let lines = wrap(styled, 9);
        assert!(lines.iter().all(|l| w(l) <= 9), "{lines:?}");
        assert!(lines[1].starts_with("\x1b[31m"), "{lines:?}");
        assert_eq!(strip(&lines.concat()).replace(' ', ""), strip(styled).replace(' ', ""));
    }

    #[test]
    fn a_break_before_a_styled_word_reopens_its_style() {
        // The word's own reset comes after the break; the new line must still be red.
        let lines = wrap("\x1b[31mone two\x1b[0m", 4);
        assert_eq!(lines, vec!["\x1b[31mone\x1b[0m", "\x1b[31mtwo\x1b[0m"]);
    }

    #[test]
    fn wide_characters_count_double() {
        let lines = wrap("日本語のテキスト", 6);
        assert!(lines.iter().all(|l| w(l) <= 6), "{lines:?}");
        assert_eq!(lines.len(), 3);
    }
}
