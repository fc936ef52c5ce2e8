//! The text of words as bash sees them once quotes and escapes are removed.

use tree_sitter::Node;

/// What a word says once quotes are removed.
#[derive(Clone, Debug, Default)]
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
            let mut chars = raw.char_indices();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some((_, '\n')) | None => {}
                        Some((_, next)) => out.text.push(next),
                    },
                    '*' | '?' | '[' => {
                        out.fixed = false;
                        out.text.push(c);
                    }
                    // A brace expands only with a `,` or `..` after it (`{}` stays).
                    '{' => {
                        let after = &raw[at..];
                        out.fixed &= !(after.contains(',') || after.contains(".."));
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
        // `$"…"`: the string, translated (the same text here).
        "translated_string" => {
            let mut cursor = node.walk();
            let inner = node.named_children(&mut cursor).find(|c| c.kind() == "string");
            inner.map_or(WordText { text: raw.to_owned(), fixed: false }, |s| word_text(s, src))
        }
        "string" | "concatenation" | "command_name" => {
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
                // Between the pieces of a word there is nothing but tokens the parser
                // did not name (an empty `` `` ``, a `$`): not plain text.
                out.fixed &= quiet_gap(gap, open == 1);
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
            out.fixed &= quiet_gap(gap, open == 1);
            out.text.push_str(&unescape_dq(gap, open == 1));
            // The parser splits `{a,b}` into pieces: a brace with a `,` or `..` after it
            // may expand (a quoted one too, here: stricter than bash).
            if open == 0
                && let Some(at) = raw.find('{')
            {
                out.fixed &= !(raw[at..].contains(',') || raw[at..].contains(".."));
            }
            out
        }
        "number" if node.named_child_count() == 0 => WordText::literal(raw),
        // Expansions, substitutions, globs: only known when the command runs.
        _ => WordText { text: raw.to_owned(), fixed: false },
    }
}

/// The literal text of a word once quotes are removed, each expansion or substitution
/// the parser read standing as U+0001: what is left is text bash does not expand here
/// but may evaluate later (as an array subscript).
pub(super) fn plain_text(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "word" | "raw_string" | "ansi_c_string" | "number" => word_text(node, src).text,
        "translated_string" => {
            let mut cursor = node.walk();
            let inner = node.named_children(&mut cursor).find(|c| c.kind() == "string");
            inner.map_or_else(|| "\u{1}".to_owned(), |s| plain_text(s, src))
        }
        "string" | "concatenation" => {
            let quoted = node.kind() == "string";
            let open = usize::from(quoted);
            let start = node.start_byte() + open;
            let end = node.end_byte().saturating_sub(open).max(start);
            let gap = |from: usize, to: usize| {
                let raw = std::str::from_utf8(src.get(from..to).unwrap_or_default());
                unescape_dq(raw.unwrap_or_default(), quoted)
            };
            let mut out = String::new();
            let mut at = start;
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                out.push_str(&gap(at, child.start_byte()));
                if child.kind() == "string_content" {
                    out.push_str(&unescape_dq(text(child, src), true));
                } else {
                    out.push_str(&plain_text(child, src));
                }
                at = child.end_byte();
            }
            out.push_str(&gap(at, end));
            out
        }
        _ => "\u{1}".to_owned(),
    }
}

/// Whether text the parser left between a word's pieces is plain: inside double quotes,
/// text without `$` or a backtick; outside, nothing at all.
fn quiet_gap(gap: &str, quoted: bool) -> bool {
    if quoted { !gap.contains(['$', '`']) } else { gap.is_empty() }
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
            // `\cX`: the control character X & 0x1f.
            'c' => chars.next().and_then(|x| char::from_u32(u32::from(x) & 0x1f)),
            other => Some(other),
        };
        // Bash cuts a `$'…'` string at a NUL.
        if decoded == Some('\0') {
            break;
        }
        out.extend(decoded);
    }
    out
}

/// Whether `text` holds a command substitution bash would run: an unescaped `$(` or a
/// backtick (`escaped_backticks`: an escaped one too, as inside backticks it nests).
pub(super) fn has_live_substitution(text: &str, escaped_backticks: bool) -> bool {
    // Bash joins backslash-newline first: `$\<newline>(` is `$(`.
    let joined;
    let text = if text.contains("\\\n") {
        joined = text.replace("\\\n", "");
        &joined
    } else {
        text
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next() == Some('`') && escaped_backticks => return true,
            '`' => return true,
            '$' if chars.peek() == Some(&'(') => return true,
            _ => {}
        }
    }
    false
}

/// Where in `text` each command substitution bash would run starts (`$(` or a
/// backtick, escaped backticks included).
pub(super) fn substitution_starts(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, '`')) = chars.next() {
                    out.push(i);
                }
            }
            '`' => out.push(i),
            '$' if chars.peek().is_some_and(|(_, n)| *n == '(') => out.push(i),
            _ => {}
        }
    }
    out
}

/// Whether a `$'…'` node ends where bash ends it: no unescaped `'` inside.
pub(super) fn ansi_c_is_sound(raw: &str) -> bool {
    let Some(inner) = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')) else {
        return false;
    };
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' => return false,
            _ => {}
        }
    }
    true
}

/// A heredoc's delimiter as bash compares it (quotes and backslashes removed), and
/// whether it was quoted (then the body is literal).
pub(super) fn heredoc_delimiter(word: &str) -> (String, bool) {
    let mut out = String::with_capacity(word.len());
    let mut quoted = false;
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => quoted = true,
            '\\' => {
                quoted = true;
                out.extend(chars.next());
            }
            _ => out.push(c),
        }
    }
    (out, quoted)
}

/// Whether bash ends the heredoc whose `body` the parser read, at `end_line`: no
/// earlier line is the delimiter, and the end line is it.
pub(super) fn heredoc_agrees(
    body: &str,
    end_line: &str,
    delimiter: &str,
    quoted: bool,
    strip_tabs: bool,
) -> bool {
    fn norm(line: &str, strip_tabs: bool) -> &str {
        if strip_tabs { line.trim_start_matches('\t') } else { line }
    }
    // Unquoted, bash joins backslash-newline before it compares lines.
    let joined;
    let body = if quoted {
        body
    } else {
        joined = body.replace("\\\n", "");
        &joined
    };
    // Inside `$( … )` bash also ends it at the delimiter followed by the `)`.
    let ends = |line: &str| {
        let line = norm(line, strip_tabs);
        line == delimiter
            || line.strip_prefix(delimiter).is_some_and(|r| r.trim_start().starts_with(')'))
    };
    ends(end_line) && !body.lines().any(ends)
}

/// An unquoted heredoc's body as the command reads it: `\\`, `\$` and `` \` `` lose
/// their backslash and a backslash-newline is removed.
pub(super) fn heredoc_unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(&n @ ('\\' | '$' | '`')) => {
                    chars.next();
                    out.push(n);
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The text between backticks as bash parses it: `\\`, `\$` and `` \` `` lose their
/// backslash (and `\"`, as it does inside double quotes; outside them this reading
/// sees a command bash does not run, which only makes the check stricter).
pub(super) fn unescape_backquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '\\' | '"')) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}
