//! Writing a tolerant edit without damaging the file. The model's `old_text` matched a
//! region only after normalisation, so its bytes are not the file's. The replacement is
//! built from two alignments: `old_text` with the region (token by token, see
//! `edit_tokens`), and `old_text` with `new_text` (a token diff). Every token of
//! `new_text` the model kept from `old_text` is written with the file's bytes; only what
//! the model changed is new, and that takes the region's style: its indentation, the
//! whitespace it uses where the model typed other whitespace, its quotes, dashes and
//! spaces, its Unicode form. Where the alignments cannot say which bytes to write, the
//! edit is refused rather than guessed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_deadline};
use unicode_normalization::UnicodeNormalization;

use crate::edit_indent::{IndentMap, Style, indent_of};
use crate::edit_tokens::{Kind, Token, fold, line_tokens, text_tokens};

/// What the tolerant match had to ignore, and what it kept of the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Differences {
    /// Indentation differed; the file's style.
    pub indentation: Option<Style>,
    /// Whitespace inside lines or at their ends differed.
    pub spacing: bool,
    /// Typographic quotes, dashes, ellipses or odd spaces differed.
    pub typography: bool,
    /// The same letters in another Unicode form (NFC/NFD).
    pub unicode_form: bool,
    /// Zero-width characters or a BOM in the model's text.
    pub invisible: bool,
    /// Characters the model typed in its new text were written as the file's.
    pub converted: Vec<(String, String)>,
}

/// Why a tolerant match cannot be written faithfully.
#[derive(Debug, PartialEq)]
pub(crate) struct Unclear(pub String);

/// The replacement for a matched region (lines without their newline; `\r` removed),
/// joined with `\n`.
pub(crate) fn rewrite(
    region: &[&str],
    old: &[&str],
    new: &[&str],
    file_style: Option<Style>,
) -> Result<(String, Differences), Unclear> {
    let mut diffs = Differences::default();
    let mut old_stream: Vec<Token<'_>> = Vec::new();
    let mut origin: Vec<Origin> = Vec::new();
    let mut lines: Vec<Line<'_>> = Vec::with_capacity(region.len());
    let mut learned: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for (k, (o, f)) in old.iter().zip(region).enumerate() {
        if k > 0 {
            old_stream.push(Token { kind: Kind::Newline, raw: "\n" });
            origin.push(Origin::Newline);
        }
        let line = align(o, f, k, &mut old_stream, &mut origin, &mut diffs)?;
        for g in &line.groups {
            if let (Some(model), Some(file)) = (g.model, g.file) {
                learned.entry(model).or_default().push(file);
            }
        }
        if !o.trim().is_empty() && !f.trim().is_empty() {
            pairs.push((indent_of(o), indent_of(f)));
        }
        lines.push(line);
    }
    let indents = IndentMap::new(&pairs, &[old, new].concat(), region, file_style);
    if indents.differs() {
        diffs.indentation = Some(indents.file_style());
    }
    let new_stream: Vec<Token<'_>> =
        text_tokens(new).into_iter().filter(|t| t.kind != Kind::Invisible).collect();
    diffs.invisible |= new.iter().any(|l| line_tokens(l).iter().any(|t| t.kind == Kind::Invisible));
    let style = Typography::of(region, &learned);
    let deadline = Instant::now() + Duration::from_millis(200);
    let ops = capture_diff_deadline(
        Algorithm::Myers,
        &old_stream,
        0..old_stream.len(),
        &new_stream,
        0..new_stream.len(),
        Some(deadline),
    );
    let mut out = String::new();
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for op in ops {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for o in &origin[old_index..old_index + len] {
                    match *o {
                        Origin::Indent(k) => out.push_str(lines[k].indent),
                        Origin::Trail(k) => out.push_str(lines[k].trail),
                        Origin::Newline => out.push('\n'),
                        Origin::Content { line, group } => {
                            let g = &lines[line].groups[group];
                            let n = seen.entry((line, group)).or_default();
                            *n += 1;
                            if *n == g.model_len {
                                out.push_str(&g.file_raw);
                            }
                        }
                    }
                }
            }
            DiffOp::Insert { new_index, new_len, .. }
            | DiffOp::Replace { new_index, new_len, .. } => {
                for t in &new_stream[new_index..new_index + new_len] {
                    let text = match t.kind {
                        Kind::Indent => indents.map(t.raw),
                        Kind::Newline => "\n".to_owned(),
                        Kind::Trail => t.raw.to_owned(),
                        _ => style.convert(t, &out, &mut diffs)?,
                    };
                    out.push_str(&text);
                }
            }
            DiffOp::Delete { .. } => {}
        }
    }
    // A group the model kept only part of (`…` in the file, `...` typed, one dot
    // changed) has no bytes of the file to write.
    for ((line, group), n) in seen {
        let g = &lines[line].groups[group];
        if n != g.model_len {
            return Err(Unclear(format!(
                "the change splits \"{}\" (the file's \"{}\") on line {} of the match",
                g.model_text,
                g.file_raw,
                line + 1
            )));
        }
    }
    Ok((out, diffs))
}

/// Where a token of the model's old text came from.
#[derive(Clone, Copy)]
enum Origin {
    Indent(usize),
    Trail(usize),
    Newline,
    Content { line: usize, group: usize },
}

/// A line of the region paired with the model's.
struct Line<'a> {
    indent: &'a str,
    trail: &'a str,
    groups: Vec<Group<'a>>,
}

/// Tokens of the model's line and of the file's that stand for the same text.
struct Group<'a> {
    /// Model tokens in the group.
    model_len: usize,
    /// Their text.
    model_text: String,
    /// The file's bytes for them (zero-width characters after them included).
    file_raw: String,
    /// When the group is one token on each side, of a kind whose spelling can differ
    /// (punctuation, whitespace): the model's and the file's.
    model: Option<&'a str>,
    file: Option<&'a str>,
}

/// Pairs the tokens of the model's line `o` with the file's line `f` (equal once
/// normalised), appending the model's tokens to `stream`.
fn align<'a>(
    o: &'a str,
    f: &'a str,
    k: usize,
    stream: &mut Vec<Token<'a>>,
    origin: &mut Vec<Origin>,
    diffs: &mut Differences,
) -> Result<Line<'a>, Unclear> {
    let ot = line_tokens(o);
    let ft = line_tokens(f);
    let (o_indent, o_trail) = (ot[0], ot[ot.len() - 1]);
    let (f_indent, f_trail) = (ft[0], ft[ft.len() - 1]);
    diffs.spacing |= o_trail.raw != f_trail.raw;
    diffs.invisible |= ot.iter().any(|t| t.kind == Kind::Invisible);
    let model: Vec<Token<'a>> =
        ot[1..ot.len() - 1].iter().copied().filter(|t| t.kind != Kind::Invisible).collect();
    let file = &ft[1..ft.len() - 1];
    let ends = |toks: &[Token<'_>]| {
        let mut at = 0;
        toks.iter()
            .map(|t| {
                at += t.key().len();
                at
            })
            .collect::<Vec<usize>>()
    };
    let (m_ends, f_ends) = (ends(&model), ends(file));
    if m_ends.last() != f_ends.last() {
        return Err(Unclear(format!("line {} of the match could not be aligned", k + 1)));
    }
    // Groups end where both sides have a token boundary.
    let bounds: Vec<usize> =
        m_ends.iter().copied().filter(|e| f_ends.binary_search(e).is_ok()).collect();
    let group_of = |end: usize| bounds.partition_point(|b| *b < end);
    let mut groups: Vec<Group<'a>> = (0..bounds.len())
        .map(|_| Group {
            model_len: 0,
            model_text: String::new(),
            file_raw: String::new(),
            model: None,
            file: None,
        })
        .collect();
    // The first model token of each group.
    let mut first_of: Vec<Option<usize>> = vec![None; bounds.len()];
    for (i, (t, end)) in model.iter().zip(&m_ends).enumerate() {
        let g = group_of(*end).min(groups.len().saturating_sub(1));
        groups[g].model_len += 1;
        groups[g].model_text.push_str(t.raw);
        first_of[g] = first_of[g].or(Some(i));
    }
    let mut file_counts = vec![0usize; bounds.len()];
    for (t, end) in file.iter().zip(&f_ends) {
        let g = group_of(*end).min(groups.len().saturating_sub(1));
        groups[g].file_raw.push_str(t.raw);
        if t.kind != Kind::Invisible {
            file_counts[g] += 1;
            groups[g].file = Some(t.raw);
        }
    }
    for (g, group) in groups.iter_mut().enumerate() {
        let one = group.model_len == 1 && file_counts[g] == 1;
        let m = first_of[g].and_then(|i| model.get(i)).copied();
        match m {
            Some(m) if one && matches!(m.kind, Kind::Punct | Kind::Space) => {
                group.model = Some(m.raw)
            }
            _ => group.file = None,
        }
        if group.model_text != group.file_raw.replace(['\u{feff}', '\u{200b}'], "") {
            match m.map(|t| t.kind) {
                Some(Kind::Space) => diffs.spacing = true,
                Some(Kind::Word) => diffs.unicode_form = true,
                _ => diffs.typography = true,
            }
        }
    }
    stream.push(o_indent);
    origin.push(Origin::Indent(k));
    for (i, t) in model.iter().enumerate() {
        stream.push(*t);
        let end = m_ends[i];
        origin.push(Origin::Content { line: k, group: group_of(end).min(groups.len() - 1) });
    }
    stream.push(o_trail);
    origin.push(Origin::Trail(k));
    Ok(Line { indent: f_indent.raw, trail: f_trail.raw, groups })
}

/// The classes of characters a model mistypes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Double,
    Single,
    Dash,
    Space,
}

fn class_of(c: char) -> Option<Class> {
    match c {
        '"' | '“' | '”' | '„' | '‟' | '″' => Some(Class::Double),
        '\'' | '‘' | '’' | '‚' | '‛' | '′' => Some(Class::Single),
        '-' | '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => Some(Class::Dash),
        c if c != '\n' && c.is_whitespace() => Some(Class::Space),
        _ => None,
    }
}

/// The typography of a region: what it uses in each class, and what the model's typing
/// stood for.
struct Typography<'a> {
    /// Characters of each class the region uses.
    used: Vec<(Class, char)>,
    /// The file's spellings of each model spelling, from the kept text.
    learned: &'a HashMap<&'a str, Vec<&'a str>>,
    /// The form of the region's non-ASCII words: NFD when any is decomposed.
    nfd: Option<bool>,
    /// Whether the region writes ellipses as three dots, and as `…`.
    ellipses: (bool, bool),
}

impl<'a> Typography<'a> {
    fn of(region: &[&str], learned: &'a HashMap<&'a str, Vec<&'a str>>) -> Self {
        let mut used: Vec<(Class, char)> = Vec::new();
        let mut nfd = None;
        for line in region {
            for c in line.chars() {
                if let Some(k) = class_of(c)
                    && !used.contains(&(k, c))
                {
                    used.push((k, c));
                }
            }
            if !line.is_ascii() {
                let decomposed = !line.chars().eq(line.nfc());
                nfd = Some(nfd.unwrap_or(false) || decomposed);
            }
        }
        let ellipses =
            (region.iter().any(|l| l.contains("...")), region.iter().any(|l| l.contains('…')));
        Self { used, learned, nfd, ellipses }
    }

    /// A token of the model's new text, in the region's typography.
    fn convert(
        &self,
        t: &Token<'_>,
        before: &str,
        diffs: &mut Differences,
    ) -> Result<String, Unclear> {
        let out = match t.kind {
            Kind::Word if !t.raw.is_ascii() => match self.nfd {
                Some(true) => t.raw.nfd().collect(),
                Some(false) => t.raw.nfc().collect(),
                None => t.raw.to_owned(),
            },
            Kind::Space => self.space(t.raw)?,
            Kind::Punct if matches!(t.raw, "..." | "…") => self.ellipsis(t.raw),
            Kind::Punct => {
                let mut chars = t.raw.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if class_of(c).is_some() => self.char(c, before)?.to_string(),
                    _ => t.raw.to_owned(),
                }
            }
            _ => t.raw.to_owned(),
        };
        if out != t.raw && !(t.kind == Kind::Word) {
            diffs.converted.push((t.raw.to_owned(), out.clone()));
        }
        Ok(out)
    }

    /// An ellipsis: as the file spells it where the model kept one, else as the region
    /// writes ellipses when it writes them one way only.
    fn ellipsis(&self, raw: &str) -> String {
        if let Some(seen) = self.learned.get(raw)
            && let Some(first) = seen.first()
            && seen.iter().all(|s| s == first)
        {
            return (*first).to_owned();
        }
        match (self.ellipses.0, self.ellipses.1) {
            (true, false) => "...".to_owned(),
            (false, true) => "…".to_owned(),
            _ => raw.to_owned(),
        }
    }

    /// A whitespace run: as the file spells the same run where the model kept one,
    /// else with each odd space the region does not use made a plain space.
    fn space(&self, raw: &str) -> Result<String, Unclear> {
        if let Some(seen) = self.learned.get(raw) {
            if seen.contains(&raw) {
                return Ok(raw.to_owned());
            }
            if let Some(first) = seen.first()
                && seen.iter().all(|s| s == first)
            {
                return Ok((*first).to_owned());
            }
        }
        Ok(raw
            .chars()
            .map(|c| match c {
                ' ' | '\t' => c,
                c if self.used.contains(&(Class::Space, c)) => c,
                _ => ' ',
            })
            .collect())
    }

    /// A quote or dash: as the file spells it where the model typed it in kept text,
    /// else the region's own variant of its class.
    fn char(&self, c: char, before: &str) -> Result<char, Unclear> {
        let Some(class) = class_of(c) else { return Ok(c) };
        let mut buf = [0u8; 4];
        let spelled: &str = c.encode_utf8(&mut buf);
        let learned: Vec<char> = self
            .learned
            .get(spelled)
            .map(|v| v.iter().filter_map(|s| s.chars().next()).collect())
            .unwrap_or_default();
        let mut options: Vec<char> = Vec::new();
        if !learned.is_empty() {
            if learned.contains(&c) {
                return Ok(c);
            }
            for l in learned {
                if !options.contains(&l) {
                    options.push(l);
                }
            }
        } else {
            let used: Vec<char> =
                self.used.iter().filter(|(k, _)| *k == class).map(|(_, c)| *c).collect();
            if used.is_empty() || used.contains(&c) {
                return Ok(c);
            }
            let ascii = fold(c).is_none();
            let typographic: Vec<char> =
                used.iter().copied().filter(|u| fold(*u).is_some()).collect();
            if ascii && typographic.len() < used.len() {
                return Ok(c);
            }
            options = if ascii || typographic.is_empty() {
                if typographic.is_empty() { used } else { typographic }
            } else {
                typographic
            };
        }
        match options.as_slice() {
            [one] => Ok(*one),
            _ => quote_by_position(&options, before).ok_or_else(|| {
                Unclear(format!(
                    "\"{c}\" in the new text could be any of {} here",
                    options.iter().map(|o| format!("\"{o}\"")).collect::<Vec<_>>().join(", ")
                ))
            }),
        }
    }
}

/// An opening or closing quote chosen by what precedes it, when the options are a pair.
fn quote_by_position(options: &[char], before: &str) -> Option<char> {
    let pair = |open: char, close: char| {
        options.iter().all(|o| *o == open || *o == close).then_some((open, close))
    };
    let (open, close) = pair('“', '”').or_else(|| pair('‘', '’')).or_else(|| pair('„', '“'))?;
    let prev = before.chars().last();
    let opening = prev.is_none_or(|p| p.is_whitespace() || "([{<—–-/".contains(p));
    Some(if opening { open } else { close })
}
