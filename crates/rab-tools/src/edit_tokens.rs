//! Lines as the tolerant edit pass sees them: a sequence of tokens (indentation, words,
//! whitespace runs, punctuation, trailing whitespace), each with a key that ignores what
//! the pass tolerates — typographic quotes and dashes, odd spaces, Unicode form. Two
//! lines match when their keys do, and because both come from the same tokens, every
//! token of the model's line can be paired with the file bytes it stands for.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// The whitespace a line starts with (possibly empty: every line has one).
    Indent,
    /// Letters, digits, `_` and combining marks.
    Word,
    /// A run of whitespace inside a line.
    Space,
    /// One other character, with the combining marks that follow it.
    Punct,
    /// Zero-width characters the pass ignores (BOM, zero-width space).
    Invisible,
    /// The whitespace a line ends with (possibly empty: every line has one).
    Trail,
    /// The end of a line.
    Newline,
}

/// A piece of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Token<'a> {
    pub kind: Kind,
    pub raw: &'a str,
}

impl Token<'_> {
    /// What the tolerant pass compares: empty for indentation, trailing whitespace and
    /// invisible characters, one space for a whitespace run, typographic punctuation as
    /// ASCII, words in NFC.
    pub fn key(&self) -> Cow<'_, str> {
        match self.kind {
            Kind::Indent | Kind::Trail | Kind::Invisible => Cow::Borrowed(""),
            Kind::Newline => Cow::Borrowed("\n"),
            Kind::Space => Cow::Borrowed(" "),
            Kind::Word | Kind::Punct if self.raw.is_ascii() => Cow::Borrowed(self.raw),
            Kind::Punct => {
                let mut chars = self.raw.chars();
                match (chars.next().and_then(fold), chars.next()) {
                    (Some(ascii), None) => Cow::Borrowed(ascii),
                    _ => Cow::Owned(self.raw.nfc().collect()),
                }
            }
            Kind::Word => Cow::Owned(self.raw.nfc().collect()),
        }
    }
}

/// Characters that are dropped when comparing: a BOM, a zero-width space, a word
/// joiner, a soft hyphen. (Not the zero-width joiner: emoji are built with it.)
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{feff}' | '\u{200b}' | '\u{2060}' | '\u{ad}')
}

/// Whether a line holds a character [`is_invisible`] drops (a word may hide one).
pub(crate) fn has_invisible(line: &str) -> bool {
    !line.is_ascii() && line.contains(is_invisible)
}

/// Whitespace inside a line.
pub(crate) fn is_space(c: char) -> bool {
    c != '\n' && c.is_whitespace()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || is_combining_mark(c)
}

/// Typographic punctuation and its ASCII form.
pub(crate) fn fold(c: char) -> Option<&'static str> {
    Some(match c {
        '“' | '”' | '„' | '‟' | '″' => "\"",
        '‘' | '’' | '‚' | '‛' | '′' => "'",
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => "-",
        '…' => "...",
        _ => return None,
    })
}

/// The tokens of one line (no `\n` in it): an indent, the body, a trail.
pub(crate) fn line_tokens(line: &str) -> Vec<Token<'_>> {
    let blank = |c: char| is_space(c) || is_invisible(c);
    let lead = line.len() - line.trim_start_matches(blank).len();
    let body_end = line.trim_end_matches(blank).len().max(lead);
    let mut out = vec![Token { kind: Kind::Indent, raw: &line[..lead] }];
    let body = &line[lead..body_end];
    let mut at = 0;
    while let Some(c) = body[at..].chars().next() {
        let rest = &body[at..];
        let span = |pred: fn(char) -> bool, from: usize| {
            from + rest[from..].len() - rest[from..].trim_start_matches(pred).len()
        };
        let (kind, len) = if blank(c) {
            let len = span(|c| is_space(c) || is_invisible(c), 0);
            let kind =
                if rest[..len].chars().any(is_space) { Kind::Space } else { Kind::Invisible };
            (kind, len)
        } else if is_word(c) {
            (Kind::Word, span(is_word, 0))
        } else if rest.starts_with("...") {
            // Three dots are one token, as `…` is: the two align.
            (Kind::Punct, 3)
        } else {
            (Kind::Punct, span(is_combining_mark, c.len_utf8()))
        };
        out.push(Token { kind, raw: &rest[..len] });
        at += len;
    }
    out.push(Token { kind: Kind::Trail, raw: &line[body_end..] });
    out
}

/// The tokens of a text of several lines: each line's tokens, with a newline between.
pub(crate) fn text_tokens<'a>(lines: &[&'a str]) -> Vec<Token<'a>> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(Token { kind: Kind::Newline, raw: "\n" });
        }
        out.extend(line_tokens(line));
    }
    out
}

/// A line as the tolerant pass compares it: the keys of its tokens.
pub(crate) fn normalize(line: &str) -> String {
    if line.is_ascii() {
        // The same as the token keys, without building tokens.
        let mut out = String::with_capacity(line.len());
        for word in line.split_ascii_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
        return out;
    }
    line_tokens(line).iter().map(|t| t.key()).collect()
}

/// How many columns an indentation spans (a tab 4, an ideographic space 2).
pub(crate) fn columns(indent: &str) -> usize {
    indent
        .chars()
        .map(|c| match c {
            '\t' => TAB_COLS,
            '\u{3000}' => 2,
            c if is_invisible(c) => 0,
            _ => 1,
        })
        .sum()
}

/// Columns a tab counts for.
pub(crate) const TAB_COLS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(line: &str) -> Vec<String> {
        line_tokens(line).iter().map(|t| format!("{:?}:{}", t.kind, t.key())).collect()
    }

    #[test]
    fn tokens_cover_the_line_and_keys_ignore_what_the_pass_tolerates() {
        let line = "\t  x = “a–b”\u{a0}…  ";
        let toks = line_tokens(line);
        assert_eq!(toks.iter().map(|t| t.raw).collect::<String>(), line);
        assert_eq!(normalize(line), "x = \"a-b\" ...");
        assert_eq!(normalize("  x   =  1 "), "x = 1");
        assert_eq!(keys("e\u{301}")[1], "Word:\u{e9}");
        assert_eq!(normalize("caf\u{e9}"), normalize("cafe\u{301}"));
        assert_eq!(normalize("a\u{200b}b"), "ab");
        assert_eq!(normalize("\u{3000}\u{3000}x"), "x");
    }

    #[test]
    fn ascii_fast_path_agrees_with_tokens() {
        for line in ["", "   ", "a", " a  b\tc ", "x=1;  // y", "\t\tif (a) {"] {
            let slow: String = line_tokens(line).iter().map(|t| t.key()).collect();
            assert_eq!(normalize(line), slow, "{line:?}");
        }
    }
}
