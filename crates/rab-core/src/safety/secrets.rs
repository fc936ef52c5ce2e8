//! The secret firewall: secrets in tool results are replaced by a marker naming what
//! was removed before the result reaches the model, the UI or the tape.
//!
//! It knows the values of the keys rab itself uses (provider keys from the environment
//! and auth.json), learns the values of `.env` files the agent reads, and recognises
//! strings shaped like keys: `sk-…`, GitHub tokens, AWS access key ids, Slack and
//! Google keys, PEM private keys, and `*_KEY=`/`*_TOKEN=`/`*SECRET*=`/`*PASSWORD*=`
//! assignments.

use std::sync::RwLock;

/// Shorter values are not treated as secrets: they would match ordinary text.
const MIN_SECRET_LEN: usize = 8;

/// Redacts secrets from text.
#[derive(Debug, Default)]
pub struct Redactor {
    /// (what it is, value), longest first.
    known: RwLock<Vec<(String, String)>>,
}

/// A key shape: prefix, characters allowed after it, minimum count, what it is.
type Shape = (&'static str, fn(char) -> bool, usize, &'static str);

/// The shapes recognised.
const SHAPES: [Shape; 10] = [
    ("sk-", key_char, 20, "API key (sk-…)"),
    ("ghp_", alnum, 30, "GitHub token"),
    ("gho_", alnum, 30, "GitHub token"),
    ("ghu_", alnum, 30, "GitHub token"),
    ("ghs_", alnum, 30, "GitHub token"),
    ("github_pat_", key_char, 30, "GitHub token"),
    ("AKIA", upper_digit, 16, "AWS access key id"),
    ("ASIA", upper_digit, 16, "AWS access key id"),
    ("xoxb-", key_char, 10, "Slack token"),
    ("AIza", key_char, 35, "Google API key"),
];

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}
fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}
fn upper_digit(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

impl Redactor {
    /// A redactor knowing these secrets: `(name, value)`, e.g. `("ANTHROPIC_API_KEY", "sk-…")`.
    pub fn new(known: impl IntoIterator<Item = (String, String)>) -> Self {
        let r = Self::default();
        for (name, value) in known {
            r.learn(&name, &value);
        }
        r
    }

    /// Adds a secret value, and its reversed, hex and base64 forms (a command that prints
    /// a key reversed or encoded must not get it past the firewall).
    pub fn learn(&self, name: &str, value: &str) {
        let value = value.trim();
        if value.len() < MIN_SECRET_LEN {
            return;
        }
        let Ok(mut known) = self.known.write() else { return };
        if known.iter().any(|(_, v)| v == value) {
            return;
        }
        known.push((name.to_owned(), value.to_owned()));
        for (how, form) in encodings(value.as_bytes()) {
            if form.len() >= MIN_SECRET_LEN && !known.iter().any(|(_, v)| *v == form) {
                known.push((format!("{name}, {how}"), form));
            }
        }
        known.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    }

    /// Learns every value of a `.env` file's text (`KEY=value`, `export KEY="value"`;
    /// `N\t` line-number prefixes from the read tool are skipped).
    pub fn learn_env_file(&self, text: &str) {
        for line in text.lines() {
            let line =
                line.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('\t');
            let line = line.trim().trim_start_matches("export ").trim();
            if line.starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let value = value.trim().trim_matches(['"', '\'']);
            if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.learn(&format!("value of {key} from a .env file"), value);
            }
        }
    }

    /// Learns what a file the read deny rules cover holds, so that its content printed
    /// another way — `git show HEAD:FILE`, `git log -p`, a hard link made before rab
    /// started — is masked too: its `KEY=value` values, and its lines of 20 characters
    /// or more (at most `budget` lines; the rest of a long file is not learned).
    /// Returns how many lines it learned.
    pub fn learn_denied_file(&self, what: &str, text: &str, budget: usize) -> usize {
        self.learn_env_file(text);
        let mut learned = 0;
        for line in text.lines().map(str::trim).filter(|l| l.len() >= 20) {
            if learned >= budget {
                break;
            }
            self.learn(&format!("a line of {what}"), line);
            learned += 1;
        }
        learned
    }

    /// `text` with every secret replaced by `[REDACTED: what]`, and what was found.
    pub fn redact(&self, text: &str) -> (String, Vec<String>) {
        let mut found = Vec::new();
        let mut out = text.to_owned();
        if let Ok(known) = self.known.read() {
            for (name, value) in known.iter() {
                if out.contains(value.as_str()) {
                    out = out.replace(value.as_str(), &format!("[REDACTED: {name}]"));
                    found.push(name.clone());
                }
            }
            if !known.is_empty() {
                out = redact_loose(&out, &known, &mut found);
            }
        }
        // Each pass copies the text, so only the passes that can match run.
        if out.contains("-----BEGIN ") {
            out = redact_pem(&out, &mut found);
        }
        for (prefix, ok, min, what) in SHAPES {
            if out.contains(prefix) {
                out = redact_shape(&out, prefix, ok, min, what, &mut found);
            }
        }
        if out.contains('=') {
            out = redact_assignments(&out, &mut found);
        }
        found.dedup();
        (out, found)
    }
}

/// Characters a command may put between a secret's characters to get it past an exact
/// match: spaced out, dashed, quoted in pieces, split across lines.
fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '-' | '_' | '.' | ',' | ':' | ';' | '|' | '\'' | '"' | '`' | '\\' | '/' | '+' | '*'
        )
}

/// Shorter known values (separators left out) are not looked for loosely: they could
/// be pieced together from ordinary text.
const MIN_LOOSE_LEN: usize = 12;

/// Known secrets found with separators inserted (`s k - a n t …`, a key printed in two
/// halves on two lines): the text with separators left out is searched, and the span
/// of the original text that holds the match, separators and all, is replaced.
fn redact_loose(text: &str, known: &[(String, String)], found: &mut Vec<String>) -> String {
    // The text without separators; for each of its bytes that starts a character, the
    // byte in `text` where that character is.
    let mut flat = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if !is_separator(c) {
            flat.push(c);
            origin.extend(std::iter::repeat_n(i, c.len_utf8()));
        }
    }
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for (name, value) in known {
        let needle: String = value.chars().filter(|c| !is_separator(*c)).collect();
        if needle.chars().count() < MIN_LOOSE_LEN {
            continue;
        }
        let mut from = 0;
        while let Some(at) = flat.get(from..).and_then(|rest| rest.find(&needle)) {
            let (first, last) = (from + at, from + at + needle.len() - 1);
            let end = origin[last] + text[origin[last]..].chars().next().map_or(1, char::len_utf8);
            spans.push((origin[first], end, name));
            from = first + needle.len();
        }
    }
    if spans.is_empty() {
        return text.to_owned();
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, name) in spans {
        if start < at {
            continue; // inside a span already replaced
        }
        out.push_str(&text[at..start]);
        out.push_str(&format!("[REDACTED: {name}]"));
        found.push(name.to_owned());
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// The forms a secret takes when a command prints it reversed, as hex or as base64.
/// Base64 is matched wherever the secret sits in the encoded text: for each of the three
/// offsets it can start at, the characters that depend on the secret alone.
fn encodings(value: &[u8]) -> Vec<(&'static str, String)> {
    const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = Vec::new();
    if let Ok(text) = std::str::from_utf8(value) {
        out.push(("reversed", text.chars().rev().collect()));
    }
    let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
    out.push(("hex", hex.to_uppercase()));
    out.push(("hex", hex));
    for alphabet in [STANDARD, URL] {
        for offset in 0..3 {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(value);
            let encoded = base64_unpadded(&bytes, alphabet);
            let (start, end) = ((4 * offset).div_ceil(3), 4 * (offset + value.len()) / 3);
            if let Some(part) = encoded.get(start..end) {
                out.push(("base64", part.to_owned()));
            }
        }
    }
    out
}

/// Base64 without padding.
fn base64_unpadded(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn redact_shape(
    text: &str,
    prefix: &str,
    ok: fn(char) -> bool,
    min: usize,
    what: &str,
    found: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        let tail = &rest[i + prefix.len()..];
        let len: usize = tail.chars().take_while(|c| ok(*c)).map(char::len_utf8).sum();
        let at_boundary = before.is_none_or(|c| !c.is_ascii_alphanumeric());
        if at_boundary && len >= min {
            out.push_str(&rest[..i]);
            out.push_str(&format!("[REDACTED: {what}]"));
            found.push(what.to_owned());
            rest = &tail[len..];
        } else {
            out.push_str(&rest[..i + prefix.len()]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn redact_pem(text: &str, found: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let header_end = rest[start..]
            .find("-----\n")
            .or_else(|| rest[start + 11..].find("-----").map(|i| i + 11));
        let is_private = header_end.is_some_and(|e| rest[start..start + e].contains("PRIVATE KEY"));
        if !is_private {
            out.push_str(&rest[..start + 11]);
            rest = &rest[start + 11..];
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str("[REDACTED: private key]");
        found.push("private key".into());
        // To the end marker's closing dashes, or to the end of the text.
        rest = match rest[start..].find("-----END ") {
            Some(e) => {
                let after = &rest[start + e + 9..];
                after.find("-----").map_or("", |d| &after[d + 5..])
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// `NAME=value` where the name says it is a secret.
fn redact_assignments(text: &str, found: &mut Vec<String>) -> String {
    let secretish = |name: &str| {
        let n = name.to_ascii_uppercase();
        ["_KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"].iter().any(|w| n.contains(w))
    };
    let mut changed = false;
    let lines: Vec<String> = text
        .split_inclusive('\n')
        .map(|line| {
            // Indentation and the read tool's `N\t` line numbers stay.
            let body =
                line.trim_start_matches(|c: char| c.is_ascii_whitespace() || c.is_ascii_digit());
            // A diff's line marker (`+DB_PASSWORD=…` in `git log -p`) stays too.
            let body = body.strip_prefix(['+', '-']).map_or(body, str::trim_start);
            let lead = &line[..line.len() - body.len()];
            let (export, body) = match body.strip_prefix("export ") {
                Some(b) => ("export ", b),
                None => ("", body),
            };
            let Some((name, value)) = body.split_once('=') else { return line.to_owned() };
            let v = value.trim().trim_matches(['"', '\'']);
            let is_name =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !is_name
                || !secretish(name)
                || v.len() < MIN_SECRET_LEN
                || v.starts_with("[REDACTED")
            {
                return line.to_owned();
            }
            changed = true;
            found.push(format!("value of {name}"));
            let eol = if line.ends_with('\n') { "\n" } else { "" };
            format!("{lead}{export}{name}=[REDACTED: value of {name}]{eol}")
        })
        .collect();
    if changed { lines.concat() } else { text.to_owned() }
}

#[cfg(test)]
mod tests;
