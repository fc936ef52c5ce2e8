//! Output limits shared by the tools: 2000 lines or 50 KB, whichever comes first.
//! `head` keeps the start (file reads), `tail` keeps the end (command output, where the
//! error usually is). Cuts happen at line boundaries, and never inside a UTF-8 character.

/// Most lines a tool result carries.
pub const MAX_LINES: usize = 2000;
/// Most bytes a tool result carries.
pub const MAX_BYTES: usize = 50 * 1024;

/// A possibly shortened text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncated {
    /// The text kept.
    pub text: String,
    /// Whether anything was cut.
    pub is_truncated: bool,
    /// Lines in the whole input.
    pub total_lines: usize,
    /// Bytes in the whole input.
    pub total_bytes: usize,
    /// Lines kept.
    pub kept_lines: usize,
}

fn count_lines(text: &str) -> usize {
    if text.is_empty() { 0 } else { text.lines().count() }
}

/// Keeps the first lines of `text` within the limits. A first line longer than
/// `max_bytes` is cut at a character boundary.
pub fn head(text: &str, max_lines: usize, max_bytes: usize) -> Truncated {
    let total_lines = count_lines(text);
    let mut end = 0;
    let mut kept = 0;
    for line in text.split_inclusive('\n') {
        if kept == max_lines || end + line.len() > max_bytes {
            break;
        }
        end += line.len();
        kept += 1;
    }
    if kept == 0 && !text.is_empty() && max_lines > 0 {
        end = text.floor_char_boundary(max_bytes);
        kept = 1;
    }
    Truncated {
        text: text[..end].to_owned(),
        is_truncated: end < text.len(),
        total_lines,
        total_bytes: text.len(),
        kept_lines: kept,
    }
}

/// Keeps the last lines of `text` within the limits. A last line longer than
/// `max_bytes` keeps its end.
pub fn tail(text: &str, max_lines: usize, max_bytes: usize) -> Truncated {
    let total_lines = count_lines(text);
    let mut start = text.len();
    let mut kept = 0;
    let mut search_end = text.strip_suffix('\n').map_or(text.len(), str::len);
    while !text.is_empty() && kept < max_lines {
        let line_start = text[..search_end].rfind('\n').map_or(0, |i| i + 1);
        if text.len() - line_start > max_bytes {
            break;
        }
        start = line_start;
        kept += 1;
        if line_start == 0 {
            break;
        }
        search_end = line_start - 1;
    }
    if kept == 0 && !text.is_empty() && max_lines > 0 {
        start = text.ceil_char_boundary(text.len().saturating_sub(max_bytes));
        kept = 1;
    }
    Truncated {
        text: text[start..].to_owned(),
        is_truncated: start > 0,
        total_lines,
        total_bytes: text.len(),
        kept_lines: kept,
    }
}

/// A human size: `812 B`, `14.2 KB`, `3.1 MB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn head_keeps_whole_lines_within_both_limits() {
        let text = "a\nbb\nccc\n";
        let t = head(text, 2, 100);
        assert_eq!(
            (t.text.as_str(), t.is_truncated, t.kept_lines, t.total_lines),
            ("a\nbb\n", true, 2, 3)
        );
        let t = head(text, 10, 5);
        assert_eq!(t.text, "a\nbb\n");
        assert_eq!(head(text, 10, 100).is_truncated, false);
    }

    #[test]
    fn tail_keeps_the_end() {
        let text = "one\ntwo\nthree\n";
        let t = tail(text, 2, 100);
        assert_eq!((t.text.as_str(), t.is_truncated, t.kept_lines), ("two\nthree\n", true, 2));
        assert_eq!(tail(text, 10, 100).text, text);
        assert_eq!(tail("x\ny", 1, 100).text, "y");
    }

    #[test]
    fn a_single_huge_line_is_cut_at_a_char_boundary() {
        let text = "é".repeat(100);
        let h = head(&text, 10, 11);
        assert_eq!(h.text, "é".repeat(5));
        let t = tail(&text, 10, 11);
        assert_eq!(t.text, "é".repeat(5));
    }
}
