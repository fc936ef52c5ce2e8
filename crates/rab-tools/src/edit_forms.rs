//! What the model may have meant when its `old_text` matches nothing as given: read
//! output pasted with its line numbers, a final newline added to both texts, arguments
//! escaped once too often (`\n` typed as backslash-n) or once too few (a real newline
//! where the file's string has `\n`, `é` where an ASCII-escaped JSON file has
//! `\u00e9`). Each form is tried in turn by `edit_match::apply`, and used only when it
//! matches where the text as given matched nothing.

/// `old_text` and `new_text` in another form, and the note that says which.
pub(crate) struct Form {
    pub old: String,
    pub new: String,
    pub note: String,
    /// The form stands for whole lines (pasted read output, a final newline): it must
    /// not match inside a line.
    pub whole_lines: bool,
}

/// The forms worth trying for this pair, most likely first. `python`: characters
/// beyond the BMP are escaped `\U0001f600` (else as a JSON surrogate pair).
pub(crate) fn forms(old: &str, new: &str, python: bool) -> Vec<Form> {
    let mut out = Vec::new();
    if let Some((stripped, numbers)) = strip_line_numbers(old) {
        out.push(Form {
            old: stripped,
            new: strip_line_numbers_where_present(new, &numbers),
            note: "removed the line numbers copied from read output".to_owned(),
            whole_lines: true,
        });
    }
    if let (Some(o), Some(n)) = (old.strip_suffix('\n'), new.strip_suffix('\n'))
        && !o.is_empty()
    {
        out.push(Form {
            old: o.to_owned(),
            new: n.to_owned(),
            note: "ignored the final newline of old_text and new_text".to_owned(),
            whole_lines: true,
        });
    }
    if let Some(o) = unescape(old) {
        out.push(Form {
            old: o,
            new: unescape(new).unwrap_or_else(|| new.to_owned()),
            note: "read \\n, \\t, \\\" and \\\\ in your text as the characters they escape"
                .to_owned(),
            whole_lines: false,
        });
    }
    if old.contains(['\n', '\t']) {
        out.push(Form {
            old: escape_controls(old),
            new: escape_controls(new),
            note: "wrote newlines and tabs as \\n and \\t, as the file's string has them"
                .to_owned(),
            whole_lines: false,
        });
    }
    if !old.is_ascii() {
        for upper in [false, true] {
            out.push(Form {
                old: escape_unicode(old, upper, python),
                new: escape_unicode(new, upper, python),
                note: "wrote non-ASCII characters as \\u escapes, as the file does".to_owned(),
                whole_lines: false,
            });
        }
    }
    out
}

/// The length of a line-number prefix as `read`, `cat -n` and others print them:
/// `12\t`, `    12\t`, `12: `, `12→`, and the number.
fn prefix(line: &str) -> Option<(usize, u64)> {
    let padded = line.trim_start_matches(' ');
    let pad = line.len() - padded.len();
    let digits = padded.len() - padded.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n = padded[..digits].parse().ok()?;
    let rest = &padded[digits..];
    let sep = ["\t", ": ", "→ ", "→", "| "].iter().find(|s| rest.starts_with(**s))?;
    Some((pad + digits + sep.len(), n))
}

/// `text` without line numbers, when every line carries one and they count up by one;
/// and the numbers with the prefix format (its separator).
fn strip_line_numbers(text: &str) -> Option<(String, (u64, u64, String))> {
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap_or(text).split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut expected = None;
    let mut first = None;
    let mut sep = None;
    for line in &lines {
        let (len, n) = prefix(line)?;
        if expected.is_some_and(|e| e != n) {
            return None;
        }
        let this_sep = separator(line, len);
        if sep.get_or_insert_with(|| this_sep.clone()) != &this_sep {
            return None;
        }
        first.get_or_insert(n);
        expected = Some(n + 1);
        out.push(&line[len..]);
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Some((joined, (first?, expected? - 1, sep?)))
}

/// The separator of a line-number prefix of `len` bytes (`\t`, `: `, `→`).
fn separator(line: &str, len: usize) -> String {
    line[..len]
        .trim_start_matches([' '])
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .to_owned()
}

/// `text` with the line numbers removed from the lines that carry one in the format of
/// the old text, numbered near its lines (new lines the model added may have none;
/// `404: Not Found` is content).
fn strip_line_numbers_where_present(text: &str, (first, last, sep): &(u64, u64, String)) -> String {
    let span = last - first + 1;
    text.split('\n')
        .map(|line| match prefix(line) {
            Some((len, n))
                if separator(line, len) == *sep && n + span >= *first && n <= last + span =>
            {
                &line[len..]
            }
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with `\n`, `\t`, `\r`, `\"`, `\'` and `\\` read as what they escape, if it
/// has any.
fn unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let replaced = match chars.peek() {
                Some('n') => Some('\n'),
                Some('t') => Some('\t'),
                Some('r') => Some('\r'),
                Some('"') => Some('"'),
                Some('\'') => Some('\''),
                Some('\\') => Some('\\'),
                _ => None,
            };
            if let Some(r) = replaced {
                chars.next();
                out.push(r);
                changed = true;
                continue;
            }
        }
        out.push(c);
    }
    changed.then_some(out)
}

/// `text` with real newlines and tabs written as `\n` and `\t`.
fn escape_controls(text: &str) -> String {
    text.replace('\n', "\\n").replace('\t', "\\t")
}

/// `text` with every non-ASCII character as a `\uXXXX` escape; one beyond the BMP as a
/// surrogate pair (JSON, JavaScript), or `\U0001f600` for Python.
fn escape_unicode(text: &str, upper: bool, python: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let hex = |n: u32, width: usize| {
        if upper { format!("{n:0width$X}") } else { format!("{n:0width$x}") }
    };
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if python && (c as u32) > 0xFFFF {
            out.push_str(&format!("\\U{}", hex(c as u32, 8)));
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{}", hex(u32::from(*unit), 4)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_number_formats_are_recognised_and_must_count_up() {
        for text in ["6\ta\n7\tb", "     6\ta\n     7\tb", "6: a\n7: b", "6→a\n7→b"] {
            let stripped = strip_line_numbers(text).map(|(t, _)| t);
            assert_eq!(stripped.as_deref(), Some("a\nb"), "{text:?}");
        }
        assert_eq!(strip_line_numbers("6\ta\n9\tb"), None);
        assert_eq!(strip_line_numbers("6\ta\nb"), None);
        let (_, numbers) = strip_line_numbers("6: a\n7: b").unwrap();
        assert_eq!(strip_line_numbers_where_present("6: a\nnew\n7: b", &numbers), "a\nnew\nb");
        // Content that looks like a prefix stays.
        assert_eq!(
            strip_line_numbers_where_present("6: a\n  301: Moved", &numbers),
            "a\n  301: Moved"
        );
    }

    #[test]
    fn escapes_both_ways() {
        assert_eq!(unescape("a\\nb \\\"c\\\" \\\\n").as_deref(), Some("a\nb \"c\" \\n"));
        assert_eq!(unescape("plain"), None);
        assert_eq!(escape_controls("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(escape_unicode("café 😀", false, false), "caf\\u00e9 \\ud83d\\ude00");
        assert_eq!(escape_unicode("é", true, false), "\\u00E9");
        assert_eq!(escape_unicode("😀", false, true), "\\U0001f600");
    }
}
