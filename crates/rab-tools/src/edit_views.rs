//! The file seen through one encoding undone, for an `old_text` that matches nothing as
//! given because the model undid or added that encoding when it copied the text: HTML
//! and XML entities read as their characters (`&amp;` typed `&`), string escapes read
//! as what they stand for (`\\d` typed `\d`, `\"` typed `"`, `\/` typed `/`), emoji
//! joiners and variation selectors dropped or added, alignment runs inside a line
//! collapsed to one space, and the padding of Markdown table cells left out.
//!
//! A view is the decoded text and, for each of its bytes, where it came from in the
//! file. `edit_match` matches the decoded `old_text` in the view as it matches in the
//! file; each replaced range is then mapped back to the file's bytes, and the
//! replacement is written faithfully: what the model kept is written with the file's
//! bytes (its entities, its escapes, its joiners, its alignment), and what it changed
//! is encoded the way the region around it is (`&` as `&amp;` where the region writes
//! every `&` so).

use std::time::Duration;

use similar::{DiffOp, TextDiff};

/// One encoding a view undoes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoder {
    /// `&amp;`, `&lt;`, `&rsquo;`, `&#39;`, `&#x2014;` as their characters.
    Entities,
    /// `\\`, `\"` and `\/` as `\`, `"` and `/`.
    Escapes,
    /// U+200D (zero-width joiner) and U+FE0E/U+FE0F (variation selectors) left out.
    Joiners,
    /// A run of spaces and tabs inside a line (after text, before text) as one space.
    Spacing,
    /// In a Markdown table row, the spaces and tabs beside each `|` left out.
    Cells,
}

impl Decoder {
    /// Every decoder, in the order they are tried.
    pub const ALL: [Decoder; 5] =
        [Decoder::Entities, Decoder::Escapes, Decoder::Joiners, Decoder::Spacing, Decoder::Cells];

    /// Whether a view can help: cheap tests on the file and `old_text`, so a miss in a
    /// big file does not build views that cannot match.
    pub fn worth_trying(self, content: &str, old: &str) -> bool {
        match self {
            Decoder::Entities => {
                content.contains('&') && old.contains(|c| ENTITIES.iter().any(|(_, e)| *e == c))
            }
            Decoder::Escapes => content.contains('\\') || old.contains('\\'),
            Decoder::Joiners => old.contains(is_joiner) || content.contains(is_joiner),
            Decoder::Spacing => {
                old.contains(' ') && (content.contains("  ") || content.contains('\t'))
            }
            Decoder::Cells => old.trim_start().starts_with('|'),
        }
    }

    /// What the note says the edit read through.
    pub fn note(self) -> &'static str {
        match self {
            Decoder::Entities => {
                "read the file's HTML entities (&amp;, &lt;, …) as the characters you typed; \
                 kept them, and wrote your new text's characters as the file does"
            }
            Decoder::Escapes => {
                "read the file's \\\\, \\\" and \\/ escapes as the characters you typed; kept \
                 them, and escaped your new text as the file does"
            }
            Decoder::Joiners => {
                "matched ignoring emoji joiners and variation selectors; kept the file's"
            }
            Decoder::Spacing => {
                "matched ignoring the width of spaces inside lines; kept the file's"
            }
            Decoder::Cells => "matched ignoring the padding of table cells; kept the file's",
        }
    }

    /// Whether what the model added is encoded as the region encodes it (else written as
    /// the model typed it).
    fn encodes(self) -> bool {
        matches!(self, Decoder::Entities | Decoder::Escapes)
    }
}

/// Named entities read, and the character each stands for.
const ENTITIES: [(&str, char); 20] = [
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("rsquo", '’'),
    ("lsquo", '‘'),
    ("rdquo", '”'),
    ("ldquo", '“'),
    ("ndash", '–'),
    ("mdash", '—'),
    ("hellip", '…'),
    ("copy", '©'),
    ("reg", '®'),
    ("trade", '™'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("middot", '·'),
    ("times", '×'),
];

fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200d}' | '\u{fe0e}' | '\u{fe0f}')
}

/// A text with one encoding undone, and where each of its bytes came from.
pub(crate) struct View {
    /// The decoded text.
    pub text: String,
    /// For each byte of `text` and one past its end: the offset in the source of the
    /// piece that byte was decoded from. A left-out character belongs to the piece
    /// before it.
    map: Vec<u32>,
}

impl View {
    /// `source` seen through `decoder`; it must be shorter than 4 GiB (offsets are kept
    /// in 32 bits, a quarter of the memory a view of a big file would take in 64).
    pub fn of(decoder: Decoder, source: &str) -> Self {
        let mut view = View { text: String::with_capacity(source.len()), map: Vec::new() };
        view.map.reserve(source.len() + 1);
        let mut at = 0;
        let mut line_start = true;
        let mut in_row = is_row(source);
        while let Some(c) = source[at..].chars().next() {
            let (len, out) = match decoder {
                Decoder::Entities if c == '&' => match entity(&source[at..]) {
                    Some((len, d)) => (len, Some(d)),
                    None => (1, Some(c)),
                },
                Decoder::Escapes if c == '\\' => match source[at + 1..].chars().next() {
                    Some(d @ ('\\' | '"' | '/')) => (2, Some(d)),
                    _ => (1, Some(c)),
                },
                Decoder::Joiners if is_joiner(c) => (c.len_utf8(), None),
                Decoder::Spacing if (c == ' ' || c == '\t') && !line_start => {
                    let len = run(&source[at..]);
                    let trailing =
                        source[at + len..].starts_with(['\n', '\r']) || at + len == source.len();
                    if trailing {
                        view.push_raw(&source[at..at + len], at);
                        at += len;
                        continue;
                    }
                    (len, Some(' '))
                }
                Decoder::Cells if in_row && (c == ' ' || c == '\t') => {
                    let len = run(&source[at..]);
                    if !line_start && source[at + len..].starts_with('|') {
                        // The padding before a `|` is the `|`'s, so a changed cell
                        // keeps it: the run and the `|` read as one `|`.
                        (len + 1, Some('|'))
                    } else if view.text.ends_with('|') {
                        // The padding after a `|` is the `|`'s too.
                        (len, None)
                    } else {
                        // Spaces inside a cell, or the row's indentation.
                        view.push_raw(&source[at..at + len], at);
                        at += len;
                        continue;
                    }
                }
                _ => (c.len_utf8(), Some(c)),
            };
            if let Some(d) = out {
                let start = view.text.len();
                view.text.push(d);
                view.map.extend(std::iter::repeat_n(at as u32, view.text.len() - start));
            }
            if c == '\n' {
                line_start = true;
                in_row = is_row(&source[at + 1..]);
            } else if !(c == ' ' || c == '\t') {
                line_start = false;
            }
            at += len;
        }
        view.map.push(source.len() as u32);
        view
    }

    /// Copies `raw` (at `at` in the source) as it is.
    fn push_raw(&mut self, raw: &str, at: usize) {
        self.text.push_str(raw);
        self.map.extend(at as u32..(at + raw.len()) as u32);
    }

    /// The source offset of view byte `i` (`text.len()` included).
    pub fn source(&self, i: usize) -> usize {
        self.map[i] as usize
    }
}

/// Whether the line `text` starts with is a Markdown table row.
fn is_row(text: &str) -> bool {
    text.trim_start_matches([' ', '\t']).starts_with('|')
}

/// The length of the run of spaces and tabs `text` starts with.
fn run(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t']).len()
}

/// The entity `text` starts with (`&amp;`, `&#39;`, `&#x2014;`): its length and its
/// character.
fn entity(text: &str) -> Option<(usize, char)> {
    let end = text.bytes().take(12).position(|b| b == b';')?;
    let name = &text[1..end];
    let c = if let Some(num) = name.strip_prefix('#') {
        let n = match num.strip_prefix(['x', 'X']) {
            Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                u32::from_str_radix(hex, 16).ok()?
            }
            None if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) => {
                num.parse().ok()?
            }
            _ => return None,
        };
        char::from_u32(n)?
    } else {
        ENTITIES.iter().find(|(n, _)| *n == name)?.1
    };
    Some((end + 1, c))
}

/// The file's bytes for the replacement `decoded` of view range `range` of `file` (the
/// source of `view`): what the replacement keeps of the region is written with the
/// file's bytes; what it adds takes the model's own bytes (`raw_new`, the view of the
/// model's `new_text`, when the replacement is that text as decoded), with each
/// character it typed plainly encoded as the region encodes it. An error says why the
/// encoding of an added character is unclear.
pub(crate) fn reencode(
    decoder: Decoder,
    file: &str,
    view: &View,
    range: std::ops::Range<usize>,
    decoded: &str,
    raw_new: Option<&View>,
    new_source: &str,
) -> Result<String, String> {
    let region = &view.text[range.clone()];
    let table =
        if decoder.encodes() { Table::of(file, view, range.clone()) } else { Table::default() };
    let old_at: Vec<usize> = region.char_indices().map(|(i, _)| i).chain([region.len()]).collect();
    let new_at: Vec<usize> =
        decoded.char_indices().map(|(i, _)| i).chain([decoded.len()]).collect();
    let diff =
        TextDiff::configure().timeout(Duration::from_millis(100)).diff_chars(region, decoded);
    let mut out = String::with_capacity(decoded.len() + 16);
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, len, .. } => {
                let from = view.source(range.start + old_at[old_index]);
                let to = view.source(range.start + old_at[old_index + len]);
                out.push_str(&file[from..to]);
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_index, new_len, .. }
            | DiffOp::Replace { new_index, new_len, .. } => {
                let (a, b) = (new_at[new_index], new_at[new_index + new_len]);
                match raw_new {
                    // Dropped characters (joiners, padding): the model's bytes as typed.
                    Some(v) if !decoder.encodes() => {
                        out.push_str(&new_source[v.source(a)..v.source(b)]);
                    }
                    Some(v) => {
                        for (i, c) in decoded[a..b].char_indices() {
                            let at = a + i;
                            let typed = &new_source[v.source(at)..v.source(at + c.len_utf8())];
                            if typed.chars().eq([c]) {
                                table.encode(decoder, c, &decoded[at..], &mut out)?;
                            } else {
                                // The model wrote the encoded form itself.
                                out.push_str(typed);
                            }
                        }
                    }
                    None => {
                        for (i, c) in decoded[a..b].char_indices() {
                            table.encode(decoder, c, &decoded[a + i..], &mut out)?;
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// How the region writes the characters it writes encoded.
#[derive(Default)]
struct Table {
    /// Characters written only encoded, and how.
    encoded: Vec<(char, String)>,
    /// Characters written both raw and encoded.
    both: Vec<char>,
    /// Inside a tag the model typed (`<code>`): written as typed.
    in_tag: std::cell::Cell<bool>,
}

impl Table {
    fn of(file: &str, view: &View, range: std::ops::Range<usize>) -> Self {
        let mut encoded: Vec<(char, String)> = Vec::new();
        let mut raw: Vec<char> = Vec::new();
        let region = &view.text[range.clone()];
        for (i, c) in region.char_indices() {
            let at = range.start + i;
            let bytes = &file[view.source(at)..view.source(at + c.len_utf8())];
            if bytes.chars().eq([c]) {
                if !raw.contains(&c) {
                    raw.push(c);
                }
            } else if !encoded.iter().any(|(e, _)| *e == c) {
                encoded.push((c, bytes.to_owned()));
            }
        }
        let both = encoded.iter().filter(|(c, _)| raw.contains(c)).map(|(c, _)| *c).collect();
        encoded.retain(|(c, _)| !raw.contains(c));
        Table { encoded, both, in_tag: std::cell::Cell::new(false) }
    }

    /// Writes `c` (at the start of `rest`) as the region would.
    fn encode(
        &self,
        decoder: Decoder,
        c: char,
        rest: &str,
        out: &mut String,
    ) -> Result<(), String> {
        // A tag the model typed is markup, whatever the region escapes.
        if decoder == Decoder::Entities {
            let starts_tag = c == '<'
                && rest[1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '/' || n == '!');
            if starts_tag {
                self.in_tag.set(true);
            }
            if self.in_tag.get() {
                if c == '>' {
                    self.in_tag.set(false);
                }
                out.push(c);
                return Ok(());
            }
        }
        if self.both.contains(&c) {
            return Err(format!(
                "the region writes {c:?} both as is and escaped, so rab cannot tell how to write \
                 the {c:?} you added; type it as the file should have it"
            ));
        }
        match self.encoded.iter().find(|(e, _)| *e == c) {
            Some((_, as_file)) => out.push_str(as_file),
            None => out.push(c),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(decoder: Decoder, s: &str) -> String {
        View::of(decoder, s).text
    }

    #[test]
    fn views_undo_one_encoding_and_map_back() {
        assert_eq!(
            decoded(Decoder::Entities, "a &amp; b &lt;c&gt; &#39;x&#x2014; &bogus;"),
            "a & b <c> 'x— &bogus;"
        );
        assert_eq!(decoded(Decoder::Escapes, r#""\\d \"q\" a\/b \n""#), r#""\d "q" a/b \n""#);
        assert_eq!(
            decoded(Decoder::Joiners, "\u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469}"),
            "\u{2764} \u{1f468}\u{1f469}"
        );
        assert_eq!(decoded(Decoder::Spacing, "    a   =\t1  \n\tb"), "    a = 1  \n\tb");
        assert_eq!(decoded(Decoder::Cells, "| a b |  c |\nx | y\n  | z|"), "|a b|c|\nx | y\n  |z|");
        let v = View::of(Decoder::Entities, "x &amp; y");
        assert_eq!((v.source(2), v.source(3), v.source(v.text.len())), (2, 7, 9));
    }

    /// `new` written into all of `file` through `decoder`, as the model typed it.
    fn through(decoder: Decoder, file: &str, new: &str) -> Result<String, String> {
        let view = View::of(decoder, file);
        let new_v = View::of(decoder, new);
        reencode(decoder, file, &view, 0..view.text.len(), &new_v.text, Some(&new_v), new)
    }

    #[test]
    fn kept_text_keeps_the_files_bytes_and_added_text_is_encoded_like_the_region() {
        assert_eq!(
            through(Decoder::Entities, "a &amp; b", "a & b & c").as_deref(),
            Ok("a &amp; b &amp; c")
        );
        // An entity the model typed stays; a tag it typed is markup.
        assert_eq!(
            through(Decoder::Entities, "Tom &amp; Jerry", "Tom & Jerry &lt;3").as_deref(),
            Ok("Tom &amp; Jerry &lt;3")
        );
        assert_eq!(
            through(Decoder::Entities, "Use a &lt; b here.", "Use <code>a < b</code> here.")
                .as_deref(),
            Ok("Use <code>a &lt; b</code> here.")
        );
        // A character the region writes both ways is refused, unless typed encoded.
        let json = r#""say \"hi\" to all""#;
        let err = through(Decoder::Escapes, json, r#""say "hi" and "bye" to all""#).unwrap_err();
        assert!(err.contains("both as is and escaped"), "{err}");
        assert_eq!(
            through(Decoder::Escapes, json, r#""say "hi" and \"bye\" to all""#).as_deref(),
            Ok(r#""say \"hi\" and \"bye\" to all""#)
        );
        // Joiners the model typed in new text are its own.
        assert_eq!(
            through(
                Decoder::Joiners,
                "a \u{2764}\u{fe0f}",
                "a \u{2764} \u{1f468}\u{200d}\u{1f469}"
            )
            .as_deref(),
            Ok("a \u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469}")
        );
        // A changed cell keeps the padding on both sides of its `|`.
        assert_eq!(
            through(Decoder::Cells, "| Edit    | \u{2713}      |", "|Edit|\u{2717}|").as_deref(),
            Ok("| Edit    | \u{2717}      |")
        );
    }
}
