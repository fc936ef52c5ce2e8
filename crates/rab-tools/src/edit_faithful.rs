//! Writing a tolerant edit without damaging the file. The model's `old_text` matched a
//! region only after normalisation, so its bytes are not the file's. The replacement is
//! built from two alignments: `old_text` with the region (token by token, see
//! `edit_tokens`), and `old_text` with `new_text` (a token diff). Every token of
//! `new_text` the model kept from `old_text` is written with the file's bytes; only what
//! the model changed is new, and that takes the region's style: its indentation, the
//! whitespace it uses where the model typed other whitespace, its quotes, dashes and
//! spaces, its Unicode form (`edit_typography`). Each line of `new_text` is written as
//! the line of the region it came from, when it came from one: its indentation and
//! trailing whitespace are that line's. Where the alignments cannot say which bytes to
//! write, the edit is refused rather than guessed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_deadline};

use crate::edit_indent::{IndentMap, Style, indent_of};
use crate::edit_tokens::{Kind, Token, line_tokens, text_tokens};
use crate::edit_typography::{Ctx, Learned, Typography};

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

/// The replacement for a matched region (its lines without `\n`), joined with `\n`.
/// `prose`: the file is prose, where typed quotes and dashes follow the file's
/// typography on added lines too.
pub(crate) fn rewrite(
    region: &[&str],
    old: &[&str],
    new: &[&str],
    file_style: Option<Style>,
    prose: bool,
) -> Result<(String, Differences), Unclear> {
    let mut diffs = Differences::default();
    let mut old_stream: Vec<Token<'_>> = Vec::new();
    let mut origin: Vec<Origin> = Vec::new();
    let mut lines: Vec<Line<'_>> = Vec::with_capacity(region.len());
    let mut learned: Learned<'_> = HashMap::new();
    let mut pairs: Vec<(usize, &str, &str)> = Vec::new();
    for (k, (o, f)) in old.iter().zip(region).enumerate() {
        if k > 0 {
            old_stream.push(Token { kind: Kind::Newline, raw: "\n" });
            origin.push(Origin::Newline);
        }
        let line = align(o, f, k, &mut old_stream, &mut origin, &mut diffs)?;
        for g in &line.groups {
            if let (Some(model), Some(file)) = (g.model, g.file) {
                learned.entry(model).or_default().push((file, g.around));
            }
        }
        if !o.trim().is_empty() && !f.trim().is_empty() {
            pairs.push((k, indent_of(o), indent_of(f)));
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
    // For each token of the new text, the old token it was kept as.
    let mut kept: Vec<Option<usize>> = vec![None; new_stream.len()];
    for op in ops {
        if let DiffOp::Equal { old_index, new_index, len } = op {
            for i in 0..len {
                kept[new_index + i] = Some(old_index + i);
            }
        }
    }
    let mut out = String::new();
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    let mut near: Option<usize> = None;
    let mut start = 0;
    while start <= new_stream.len() {
        let end = new_stream[start..]
            .iter()
            .position(|t| t.kind == Kind::Newline)
            .map_or(new_stream.len(), |p| start + p);
        if start > 0 {
            out.push('\n');
        }
        let emit = Emit { lines: &lines, origin: &origin, style: &style, indents: &indents, prose };
        emit.line(&new_stream, &kept, start..end, &mut near, &mut seen, &mut out, &mut diffs)?;
        start = end + 1;
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

/// What writing a line of the new text needs.
struct Emit<'r, 'a> {
    lines: &'r [Line<'a>],
    origin: &'r [Origin],
    style: &'r Typography<'r>,
    indents: &'r IndentMap,
    prose: bool,
}

impl Emit<'_, '_> {
    /// Writes the new text's tokens `range` (one line) to `out`.
    #[allow(clippy::too_many_arguments)]
    fn line(
        &self,
        tokens: &[Token<'_>],
        kept: &[Option<usize>],
        range: std::ops::Range<usize>,
        near: &mut Option<usize>,
        seen: &mut HashMap<(usize, usize), usize>,
        out: &mut String,
        diffs: &mut Differences,
    ) -> Result<(), Unclear> {
        let toks = &tokens[range.clone()];
        let kept = &kept[range];
        // The region line this line came from: where most of its kept words are.
        let mut votes: Vec<(usize, usize)> = Vec::new();
        for o in kept.iter().flatten() {
            if let Origin::Content { line, .. } = self.origin[*o] {
                match votes.iter_mut().find(|(l, _)| *l == line) {
                    Some((_, n)) => *n += 1,
                    None => votes.push((line, 1)),
                }
            }
        }
        let source = votes.iter().max_by_key(|(_, n)| *n).map(|(l, _)| *l);
        if source.is_some() {
            *near = source;
        }
        let has_content = toks.iter().any(|t| !matches!(t.kind, Kind::Indent | Kind::Trail));
        let line_start = out.len();
        for (i, t) in toks.iter().enumerate() {
            let from = kept[i].map(|o| self.origin[o]);
            match t.kind {
                Kind::Indent => {
                    let text = match (from, source) {
                        // A blank line the model kept keeps the file's whitespace: the
                        // blank line it was paired with, or the one after the last line
                        // written.
                        (_, None) if !has_content => {
                            let paired = match from {
                                Some(Origin::Indent(k)) => Some(k),
                                _ => None,
                            };
                            let next_blank = near.map_or(0, |n| n + 1);
                            paired
                                .into_iter()
                                .chain([next_blank])
                                .find(|k| self.lines.get(*k).is_some_and(|l| l.blank))
                                .map(|k| self.lines[k].indent.to_owned())
                                .unwrap_or_default()
                        }
                        (Some(Origin::Indent(k)), Some(s)) if k == s => {
                            self.lines[k].indent.to_owned()
                        }
                        (_, Some(s)) if t.raw == self.lines[s].model_indent => {
                            self.lines[s].indent.to_owned()
                        }
                        _ => self.indents.map(t.raw, *near).map_err(Unclear)?,
                    };
                    out.push_str(&text);
                }
                Kind::Trail => match source {
                    Some(s) if t.raw == self.lines[s].model_trail => {
                        out.push_str(self.lines[s].trail);
                    }
                    // An added line's trailing whitespace is noise.
                    _ => {}
                },
                _ => {
                    let ctx = || Ctx {
                        prev: out[line_start..].chars().last(),
                        next: toks.get(i + 1).and_then(|n| n.raw.chars().next()),
                        around: (
                            i > 0 && toks[i - 1].kind == Kind::Word,
                            toks.get(i + 1).is_some_and(|n| n.kind == Kind::Word),
                        ),
                        modified: source.is_some(),
                        prose: self.prose,
                    };
                    match from {
                        Some(Origin::Content { line, group }) => {
                            let g = &self.lines[line].groups[group];
                            // A changed spelling kept where its neighbours changed is
                            // spelled for where it is now (a no-break space before `!`
                            // that now stands between two words).
                            // (Not a run of alignment spaces: that stays as wide as it
                            // is, whatever now stands beside it.)
                            let moved = g.file.is_some_and(|f| Some(f) != g.model)
                                && ctx().around != g.around
                                && !g.file_raw.chars().all(|c| c == ' ' || c == '\t');
                            if moved {
                                *seen.entry((line, group)).or_default() += 1;
                                let text = self.style.convert(t, &ctx(), diffs)?;
                                out.push_str(&text);
                                continue;
                            }
                            let n = seen.entry((line, group)).or_default();
                            *n += 1;
                            if *n == g.model_len {
                                out.push_str(&g.file_raw);
                            }
                        }
                        _ => {
                            let text = self.style.convert(t, &ctx(), diffs)?;
                            out.push_str(&text);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where a token of the model's old text came from.
#[derive(Clone, Copy)]
enum Origin {
    Indent(usize),
    Trail,
    Newline,
    Content { line: usize, group: usize },
}

/// A line of the region paired with the model's.
struct Line<'a> {
    indent: &'a str,
    trail: &'a str,
    /// The model's indentation and trailing whitespace for it.
    model_indent: &'a str,
    model_trail: &'a str,
    /// The model's line is blank.
    blank: bool,
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
    /// Word tokens before and after the group in the model's line.
    around: (bool, bool),
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
            around: (false, false),
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
        if let Some(i) = first_of[g] {
            let last = i + group.model_len.saturating_sub(1);
            group.around = (
                i > 0 && model[i - 1].kind == Kind::Word,
                model.get(last + 1).is_some_and(|n| n.kind == Kind::Word),
            );
        }
        match m {
            Some(m) if one && matches!(m.kind, Kind::Punct | Kind::Space) => {
                group.model = Some(m.raw)
            }
            _ => group.file = None,
        }
        if group.model_text != group.file_raw.replace(crate::edit_tokens::is_invisible, "") {
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
    origin.push(Origin::Trail);
    Ok(Line {
        indent: f_indent.raw,
        trail: f_trail.raw,
        model_indent: o_indent.raw,
        model_trail: o_trail.raw,
        blank: model.is_empty(),
        groups,
    })
}
