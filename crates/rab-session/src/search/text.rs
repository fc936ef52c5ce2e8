//! What search sees of a tape line: the searchable text of an entry, its words, and a
//! one-line snippet around a match. Indexing and answering share these functions, so
//! a word is cut and lowercased the same way on both sides.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Longest indexed word, in bytes; longer words are cut (at a char boundary) on both
/// sides, so a long identifier is still found by its first 64 bytes.
pub(crate) const MAX_TERM: usize = 64;

/// ASCII letters and digits: the fast path of the tokenizer.
const fn ascii_word_table() -> [bool; 128] {
    let mut t = [false; 128];
    let mut i = 0;
    while i < 128 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric();
        i += 1;
    }
    t
}
const ASCII_WORD: [bool; 128] = ascii_word_table();

/// Han, kana and CJK compatibility ideographs: scripts written without spaces, so each
/// character is its own word (a word of several is searched as a phrase).
fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Calls `f(word, start)` for each word of `text`: a run of alphanumeric characters,
/// lowercased (Unicode-aware), cut to [`MAX_TERM`] bytes. `start` is its byte offset.
/// `buf` is scratch space, reused across calls to avoid an allocation per word.
pub(crate) fn for_each_word(text: &str, buf: &mut Vec<u8>, mut f: impl FnMut(&[u8], usize)) {
    let bytes = text.as_bytes();
    let mut start: Option<usize> = None;
    let mut i = 0;
    buf.clear();
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if ASCII_WORD[usize::from(b)] {
                if start.is_none() {
                    start = Some(i);
                    buf.clear();
                }
                if buf.len() < MAX_TERM {
                    buf.push(b.to_ascii_lowercase());
                }
            } else if let Some(s) = start.take() {
                f(buf, s);
            }
            i += 1;
            continue;
        }
        let Some(c) = text.get(i..).and_then(|s| s.chars().next()) else { break };
        if is_cjk(c) {
            if let Some(s) = start.take() {
                f(buf, s);
            }
            buf.clear();
            push_lower(buf, c);
            f(buf, i);
        } else if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
                buf.clear();
            }
            push_lower(buf, c);
        } else if let Some(s) = start.take() {
            f(buf, s);
        }
        i += c.len_utf8();
    }
    if let Some(s) = start {
        f(buf, s);
    }
}

/// Appends `c` lowercased, whole characters only and only while the word fits.
fn push_lower(buf: &mut Vec<u8>, c: char) {
    for l in c.to_lowercase() {
        let mut enc = [0u8; 4];
        let s = l.encode_utf8(&mut enc);
        if buf.len() + s.len() > MAX_TERM {
            return;
        }
        buf.extend_from_slice(s.as_bytes());
    }
}

/// A JSON string, borrowed from the line when it has no escapes.
#[derive(Debug)]
pub(crate) struct Str<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Every string value inside a JSON value (tool-call arguments: commands, paths, edits),
/// without building a `serde_json::Value`.
#[derive(Debug, Default)]
struct Leaves<'a>(Vec<Str<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Leaves<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Leaves<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Leaves(vec![Str(Cow::Borrowed(v))]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Leaves(vec![Str(Cow::Owned(v.to_owned()))]))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Leaves::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Leaves::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Leaves::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Leaves::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Leaves::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(Leaves(v)) = seq.next_element()? {
                    out.extend(v);
                }
                Ok(Leaves(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while map.next_key::<IgnoredAny>()?.is_some() {
                    out.extend(map.next_value::<Leaves<'de>>()?.0);
                }
                Ok(Leaves(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A content block: `text` of text blocks, `arguments` of tool calls. Thinking,
/// signatures and image data are skipped unread.
#[derive(Deserialize)]
struct RawBlock<'a> {
    #[serde(borrow, default)]
    text: Option<Str<'a>>,
    #[serde(borrow, default)]
    arguments: Option<Leaves<'a>>,
}

#[derive(Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Vec<RawBlock<'a>>,
}

/// The fields of any entry line that search reads; `details` and the rest are skipped.
#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Str<'a>>,
    #[serde(borrow, default)]
    message: Option<RawMessage<'a>>,
    #[serde(borrow, default)]
    summary: Option<Str<'a>>,
    #[serde(borrow, default)]
    label: Option<Str<'a>>,
}

/// The searchable part of one entry line.
#[derive(Debug)]
pub(crate) struct LineText<'a> {
    /// Entry id.
    pub(crate) id: Cow<'a, str>,
    /// `user`, `assistant`, `toolResult`, or the entry type (`compaction`, `label`).
    pub(crate) role: Cow<'a, str>,
    /// RFC 3339.
    pub(crate) timestamp: Cow<'a, str>,
    /// Texts of the entry in order (blocks, argument strings); may be empty.
    pub(crate) parts: Vec<Cow<'a, str>>,
}

impl LineText<'_> {
    /// The parts as one text, as the verifier and the snippet see it. Words never span
    /// a separator, so this tokenizes exactly like the parts one by one.
    pub(crate) fn joined(&self) -> String {
        self.parts.join("\n")
    }
}

/// Parses an entry line; `None` when it is not a JSON entry (a torn line) or has no
/// kind of text search covers (model changes, custom data).
pub(crate) fn parse_line(line: &[u8]) -> Option<LineText<'_>> {
    let raw: RawLine<'_> = serde_json::from_slice(line).ok()?;
    let mut parts = Vec::new();
    let role = match raw.kind.0.as_ref() {
        "message" => {
            let message = raw.message?;
            for block in message.content {
                parts.extend(block.text.map(|t| t.0));
                if let Some(Leaves(args)) = block.arguments {
                    parts.extend(args.into_iter().map(|s| s.0));
                }
            }
            message.role.0
        }
        "compaction" => {
            parts.extend(raw.summary.map(|s| s.0));
            raw.kind.0
        }
        "label" => {
            parts.extend(raw.label.map(|s| s.0));
            raw.kind.0
        }
        _ => return None,
    };
    parts.retain(|p| !p.is_empty());
    Some(LineText {
        id: raw.id.map(|s| s.0).unwrap_or_default(),
        role,
        timestamp: raw.timestamp.map(|s| s.0).unwrap_or_default(),
        parts,
    })
}

/// About `width` characters of `text` around byte offset `at`, on one line: runs of
/// whitespace become one space, and an ellipsis marks each cut end.
pub(crate) fn snippet(text: &str, at: usize, width: usize) -> String {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    // A third of the window before the match gives it context without hiding it.
    let before = width / 3;
    let start = text[..at].char_indices().rev().take(before).last().map_or(at, |(i, _)| i);
    let mut out = String::with_capacity(width + 8);
    if text[..start].chars().any(|c| !c.is_whitespace()) {
        out.push('…');
    }
    let mut count = 0;
    let mut last_space = true;
    let mut cut = false;
    for c in text[start..].chars() {
        if count >= width {
            cut = true;
            break;
        }
        if c.is_whitespace() || c.is_control() {
            if !last_space {
                out.push(' ');
                count += 1;
            }
            last_space = true;
        } else {
            out.push(c);
            count += 1;
            last_space = false;
        }
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if cut {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for_each_word(text, &mut buf, |w, s| out.push((String::from_utf8_lossy(w).into(), s)));
        out
    }

    #[test]
    fn words_are_lowercased_alphanumeric_runs() {
        let got = words("Fix the off-by-one in ÉCOLE_mod2, 東京!");
        let want = [
            ("fix", 0),
            ("the", 4),
            ("off", 8),
            ("by", 12),
            ("one", 15),
            ("in", 19),
            ("école", 22),
            ("mod2", 29),
            ("東", 35),
            ("京", 38),
        ];
        assert_eq!(got, want.map(|(w, s)| (w.to_owned(), s)).to_vec());
    }

    #[test]
    fn long_words_are_cut_at_a_char_boundary() {
        let long = "é".repeat(40);
        let got = words(&long);
        assert_eq!(got[0].0, "é".repeat(32));
    }

    #[test]
    fn lines_yield_text_of_messages_and_tool_arguments() {
        let line = br#"{"type":"message","id":"e1","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"secret"},{"type":"text","text":"Run it\n"},{"type":"tool_call","id":"c","name":"bash","arguments":{"command":"cargo test","n":[1,{"x":"deep"}]}}]}}"#;
        let t = parse_line(line).unwrap();
        assert_eq!((t.id.as_ref(), t.role.as_ref()), ("e1", "assistant"));
        assert_eq!(t.parts, ["Run it\n", "cargo test", "deep"]);
        assert!(parse_line(br#"{"type":"model_change","id":"x"}"#).is_none());
        assert!(parse_line(br#"{"type":"message","id":"#).is_none());
    }

    #[test]
    fn snippets_are_one_line_with_ellipses() {
        let text = format!("{}\nthe needle\tis here\n{}", "a ".repeat(100), "b ".repeat(100));
        let at = text.find("needle").unwrap();
        let s = snippet(&text, at, 40);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("the needle is here"), "{s}");
        assert!(!s.contains('\n'));
        assert_eq!(snippet("short text", 6, 120), "short text");
        assert_eq!(snippet("ééé", 2, 120), "ééé");
    }
}
