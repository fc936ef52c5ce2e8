//! Text with ANSI SGR escapes: display width, stripping, cutting to a width. Every
//! rendered line in the toolkit is a `String` that may contain `ESC [ … m` sequences
//! (and OSC 8 hyperlinks); these functions measure and cut such lines by what the
//! terminal shows, counting wide characters as two cells and grapheme clusters as one
//! character.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Resets all attributes.
pub const RESET: &str = "\x1b[0m";

/// Length in bytes of the escape sequence at the start of `s`, if one starts there. One
/// cut off by the end of `s` runs to its end (a terminal would take what follows as part
/// of it), so a loop stepping over escapes always moves on.
pub fn escape_len(s: &str) -> Option<usize> {
    escape(s).map(|(n, _)| n)
}

/// The escape sequence at the start of `s`: its length in bytes and whether it is
/// complete (see [`escape_len`]).
pub(crate) fn escape(s: &str) -> Option<(usize, bool)> {
    let b = s.as_bytes();
    if b.first() != Some(&0x1b) {
        return None;
    }
    let len = match b.get(1) {
        // CSI: ESC [ params… final byte in 0x40..=0x7e
        Some(b'[') => b[2..].iter().position(|c| (0x40..=0x7e).contains(c)).map(|i| i + 3),
        // APC (kitty graphics) and DCS: ESC _ / ESC P … terminated by ESC \
        Some(b'_' | b'P') => b[2..].windows(2).position(|w| w == b"\x1b\\").map(|i| i + 4),
        // OSC: ESC ] … terminated by BEL or ESC \
        Some(b']') => {
            let rest = &b[2..];
            let bel = rest.iter().position(|&c| c == 0x07).map(|i| i + 3);
            let st = rest.windows(2).position(|w| w == b"\x1b\\").map(|i| i + 4);
            match (bel, st) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        // ESC and one character, which may take several bytes.
        Some(_) => s[1..].chars().next().map(|c| 1 + c.len_utf8()),
        None => None,
    };
    Some(len.map_or((s.len(), false), |n| (n, true)))
}

/// Cells a string occupies on screen.
pub fn width(s: &str) -> usize {
    let mut w = 0;
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(n) = escape_len(rest) {
            rest = &rest[n..];
            continue;
        }
        let next = rest.find('\x1b').unwrap_or(rest.len());
        w += UnicodeWidthStr::width(&rest[..next]);
        rest = &rest[next..];
    }
    w
}

/// The text without escapes.
pub fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(n) = escape_len(rest) {
            rest = &rest[n..];
            continue;
        }
        let next = rest.find('\x1b').unwrap_or(rest.len());
        out.push_str(&rest[..next]);
        rest = &rest[next..];
    }
    out
}

/// Cuts `s` to at most `max` cells, keeping escapes (so styles still close) and never
/// splitting a grapheme; appends `ellipsis` when something was cut and it fits.
pub fn truncate(s: &str, max: usize, ellipsis: &str) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    let room = max.saturating_sub(width(ellipsis));
    let mut out = String::with_capacity(s.len());
    let mut used = 0;
    let mut rest = s;
    let mut cut = false;
    while !rest.is_empty() {
        if let Some(n) = escape_len(rest) {
            out.push_str(&rest[..n]);
            rest = &rest[n..];
            continue;
        }
        let next = rest.find('\x1b').unwrap_or(rest.len());
        for g in rest[..next].graphemes(true) {
            let gw = UnicodeWidthStr::width(g);
            if cut || used + gw > room {
                cut = true;
                continue;
            }
            used += gw;
            out.push_str(g);
        }
        rest = &rest[next..];
    }
    if max >= width(ellipsis) {
        out.push_str(ellipsis);
    }
    out.push_str(RESET);
    out
}

/// Pads `s` with spaces to `w` cells (no-op when already wider).
pub fn pad(s: &str, w: usize) -> String {
    let have = width(s);
    if have >= w { s.to_owned() } else { format!("{s}{}", " ".repeat(w - have)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn width_ignores_escapes_and_counts_wide_chars() {
        assert_eq!(width("\x1b[1;31mhi\x1b[0m"), 2);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("\x1b]8;;http://x\x07link\x1b]8;;\x07"), 4);
        assert_eq!(width("\x1b_Ga=T,f=100;AAAA\x1b\\  "), 2);
        assert_eq!(truncate("\x1b_Gm=0;AAAA\x1b\\abc", 2, ""), "\x1b_Gm=0;AAAA\x1b\\ab\x1b[0m");
        assert_eq!(strip("\x1b[2ma\x1b[0mb"), "ab");
    }

    #[test]
    fn an_escape_cut_off_by_the_end_runs_to_the_end() {
        // Measuring these used to loop forever.
        assert_eq!(width("ab\x1b]8;;http://x"), 2);
        assert_eq!(strip("ab\x1b[31"), "ab");
        assert_eq!(truncate("ab\x1b]8;;x", 1, ""), "a\x1b]8;;x\x1b[0m");
        // ESC before a multi-byte character takes the whole character (it used to split it).
        assert_eq!(escape_len("\x1b日x"), Some(4));
        assert_eq!(width("\x1b日x"), 1);
    }

    #[test]
    fn truncate_keeps_styles_and_graphemes() {
        assert_eq!(truncate("\x1b[1mhello world\x1b[0m", 8, "…"), "\x1b[1mhello w\x1b[0m…\x1b[0m");
        assert_eq!(width(&truncate("日本語テキスト", 5, "…")), 5);
        assert_eq!(truncate("short", 10, "…"), "short");
        assert_eq!(strip(&truncate("e\u{301}e\u{301}e\u{301}", 2, "")), "e\u{301}e\u{301}");
    }
}
