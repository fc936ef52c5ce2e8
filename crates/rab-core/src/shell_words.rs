//! The text of words as bash sees them once quotes and escapes are removed.

use tree_sitter::Node;

/// What a word says once quotes are removed.
#[derive(Debug, Default)]
pub(super) struct WordText {
    /// The text: literal parts unquoted, expansions as written (`$x`).
    pub text: String,
    /// No expansion can change it when it runs (no `$`, no substitution, no unquoted
    /// glob or brace).
    pub fixed: bool,
}

impl WordText {
    pub fn literal(text: impl Into<String>) -> Self {
        Self { text: text.into(), fixed: true }
    }
}

/// The source text of a node.
pub(super) fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    node.utf8_text(src).unwrap_or_default()
}

/// The text of a word-like node, unquoted.
pub(super) fn word_text(node: Node<'_>, src: &[u8]) -> WordText {
    let raw = text(node, src);
    match node.kind() {
        "word" => {
            let mut out = WordText::literal(String::with_capacity(raw.len()));
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some('\n') | None => {}
                        Some(next) => out.text.push(next),
                    },
                    '*' | '?' | '[' | '{' => {
                        out.fixed = false;
                        out.text.push(c);
                    }
                    _ => out.text.push(c),
                }
            }
            out
        }
        "raw_string" => WordText::literal(raw.trim_start_matches('\'').trim_end_matches('\'')),
        "ansi_c_string" => {
            let inner = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
            WordText::literal(unescape_ansi_c(inner))
        }
        "string" | "translated_string" | "concatenation" | "command_name" => {
            let (open, close) = match node.kind() {
                "string" => (1, 1),
                _ => (0, 0),
            };
            let start = node.start_byte() + open;
            let end = node.end_byte().saturating_sub(close).max(start);
            let mut out = WordText::literal(String::new());
            let mut at = start;
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                let gap = std::str::from_utf8(src.get(at..child.start_byte()).unwrap_or_default())
                    .unwrap_or_default();
                out.text.push_str(&unescape_dq(gap, open == 1));
                let piece = if child.kind() == "string_content" {
                    WordText::literal(unescape_dq(text(child, src), true))
                } else {
                    word_text(child, src)
                };
                out.fixed &= piece.fixed;
                out.text.push_str(&piece.text);
                at = child.end_byte();
            }
            let gap = std::str::from_utf8(src.get(at..end).unwrap_or_default()).unwrap_or_default();
            out.text.push_str(&unescape_dq(gap, open == 1));
            out
        }
        "number" if node.named_child_count() == 0 => WordText::literal(raw),
        // Expansions, substitutions, globs: only known when the command runs.
        _ => WordText { text: raw.to_owned(), fixed: false },
    }
}

/// Removes the backslashes bash removes: inside double quotes only before `$`, `` ` ``,
/// `"`, `\` and a newline; outside, before anything.
fn unescape_dq(s: &str, quoted: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('\n') => {
                chars.next();
            }
            Some(&next) if !quoted || matches!(next, '$' | '`' | '"' | '\\') => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The text of `$'…'`: `\n`, `\t`, `\xHH`, `\NNN` octal, `\uHHHH` and the rest.
fn unescape_ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push(c);
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max && chars.peek().is_some_and(|d| d.is_digit(radix)) {
                digits.extend(chars.next());
            }
            u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'x' => number(16, 2, None),
            'u' => number(16, 4, None),
            'U' => number(16, 8, None),
            '0'..='7' => number(8, 3, Some(e)),
            other => Some(other),
        };
        out.extend(decoded);
    }
    out
}
