//! How `edit` finds the text to replace, in five steps:
//!
//! 1. **Exact**: `old_text` as a substring; it must occur once (or `replace_all`).
//! 2. **Tolerant**, on a miss: line by line, comparing lines with indentation, trailing
//!    whitespace and whitespace runs ignored, typographic quotes, dashes, ellipses and
//!    odd spaces folded to ASCII and letters in NFC ([`normalize`]). A unique matching
//!    run of whole lines is replaced faithfully (`edit_faithful`): what the model kept is
//!    written with the file's bytes, what it changed in the file's style.
//! 3. **Forms**, on a miss: `old_text` as the model may have garbled it — line numbers
//!    pasted from `read`, a final newline on both texts, over- or under-escaped — tried
//!    in turn (`edit_forms`); one that matches is used, with a note saying so.
//! 4. **Views**, on a miss: the file with one encoding undone (entities, escapes, emoji
//!    joiners, alignment runs, table-cell padding; `edit_views`), matched as in 1–2 and
//!    written back in the file's encoding.
//! 5. **Closest**, on a last miss: the window of lines most similar to `old_text`, so
//!    the error can show the model what the file really says there.
//!
//! An exact occurrence only inside longer words or numbers is refused with its lines,
//! and a Markdown table row the edit writes is padded to its table (`edit_table`).
//!
//! Content here is LF-only; `edit` converts CRLF files before and after.

use std::time::Duration;

use similar::TextDiff;

use crate::edit_faithful::{Differences, rewrite};
use crate::edit_indent::detect_style;
use crate::edit_tokens::has_invisible;
pub(crate) use crate::edit_tokens::normalize;
use crate::edit_views::{Decoder, View, reencode};

/// How an edit matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchKind {
    /// `old_text` occurs verbatim.
    Exact,
    /// Matched line by line after [`normalize`].
    Tolerant,
}

/// One replaced range of the content and what goes there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Splice {
    /// Bytes of the content replaced.
    pub range: std::ops::Range<usize>,
    /// Their replacement.
    pub text: String,
}

/// `content` with `splices` (sorted, not overlapping) applied.
pub(crate) fn splice(content: &str, splices: &[Splice]) -> String {
    let grown: usize = splices.iter().map(|s| s.text.len()).sum();
    let mut out = String::with_capacity(content.len() + grown);
    let mut copied = 0;
    for s in splices {
        debug_assert!(s.range.start >= copied, "overlapping splices");
        out.push_str(&content[copied..s.range.start.max(copied)]);
        out.push_str(&s.text);
        copied = s.range.end.max(copied);
    }
    out.push_str(&content[copied..]);
    out
}

/// A successfully applied edit.
#[derive(Debug, PartialEq)]
pub(crate) struct Applied {
    /// The ranges of the content replaced, in order, and their new text.
    pub splices: Vec<Splice>,
    /// Places replaced.
    pub count: usize,
    /// How the match was found.
    pub kind: MatchKind,
    /// What had to be tolerated or converted, for the model ("matched ignoring
    /// indentation; kept the file's tabs").
    pub notes: Vec<String>,
}

/// Why an edit could not be applied.
#[derive(Debug, PartialEq)]
pub(crate) enum Miss {
    /// `old_text` occurs in several places: the 1-based first line of each.
    Ambiguous { lines: Vec<usize> },
    /// `old_text` does not occur; the most similar region, if any is close enough.
    NotFound { closest: Option<Candidate> },
    /// `old_text` matched tolerantly, but which of the file's bytes to keep is unclear:
    /// the region as it is, and why.
    Unclear { region: Candidate, why: String },
    /// `old_text` occurs only inside longer words or numbers (`TIMEOUT = 3` in
    /// `TIMEOUT = 30`): the lines where it does, as they are.
    Partial { lines: Vec<usize>, numbered: String },
}

/// The region of the file most like `old_text`.
#[derive(Debug, PartialEq)]
pub(crate) struct Candidate {
    /// 1-based first line.
    pub first_line: usize,
    /// 1-based last line, inclusive.
    pub last_line: usize,
    /// 0..=1, from a character diff of the normalized texts.
    pub similarity: f32,
    /// The region as `{n}\t{line}` lines, as `read` shows them.
    pub numbered: String,
}

/// Below this similarity a region is not worth showing.
const MIN_SIMILARITY: f32 = 0.4;
/// Line comparisons the closest-region scan may spend before it samples.
const SCAN_BUDGET: usize = 300_000;
/// Most lines of a candidate shown.
const MAX_CANDIDATE_LINES: usize = 30;

/// What the file's name says about how to write into it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Hints {
    /// Prose (Markdown, plain text): typed quotes and dashes follow the file's
    /// typography on added lines too.
    pub prose: bool,
    /// Python: a character beyond the BMP is escaped `\U0001f600`, not as a UTF-16
    /// surrogate pair.
    pub python: bool,
}

impl Hints {
    /// Hints from a file's extension.
    pub fn for_path(path: &std::path::Path) -> Self {
        let ext =
            path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
        Self {
            prose: matches!(
                ext.as_str(),
                "md" | "markdown"
                    | "mdx"
                    | "txt"
                    | "text"
                    | "rst"
                    | "adoc"
                    | "asciidoc"
                    | "org"
                    | "tex"
            ),
            python: matches!(ext.as_str(), "py" | "pyi"),
        }
    }
}

/// Replaces `old` with `new` in `content` (see the module docs for how it matches).
#[cfg(test)]
pub(crate) fn apply(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, Miss> {
    apply_with(content, old, new, replace_all, Hints::default())
}

/// [`apply`] for a file with these hints.
pub(crate) fn apply_with(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    hints: Hints,
) -> Result<Applied, Miss> {
    // Text that ended a line and now does not would join two lines: the model meant
    // the newline.
    let mut added_newline = false;
    let fixed;
    let new = if old.ends_with('\n') && !new.is_empty() && !new.ends_with('\n') {
        added_newline = true;
        fixed = format!("{new}\n");
        fixed.as_str()
    } else {
        new
    };
    let note = |mut applied: Applied| {
        if added_newline {
            applied.notes.insert(0, "kept the newline old_text ends with".to_owned());
        }
        if hints.prose
            && let [only] = applied.splices.as_mut_slice()
            && crate::edit_table::repad(content, only)
        {
            applied.notes.push("padded the table rows to the table's columns".to_owned());
        }
        applied
    };
    let miss = match apply_as_given(content, old, new, replace_all, hints, false, true) {
        Err(miss @ Miss::NotFound { .. }) => miss,
        other => return other.map(note),
    };
    for form in crate::edit_forms::forms(old, new, hints.python) {
        let (o, n) = (&form.old, &form.new);
        match apply_as_given(content, o, n, replace_all, hints, form.whole_lines, false) {
            Ok(mut applied) => {
                applied.notes.insert(0, form.note);
                return Ok(note(applied));
            }
            Err(Miss::NotFound { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    for decoder in Decoder::ALL {
        if !decoder.worth_trying(content, old) {
            continue;
        }
        if let Some(result) = through_view(decoder, content, old, new, replace_all, hints) {
            return result.map(note);
        }
    }
    Err(miss)
}

/// The edit matched in `content` seen through `decoder` (`edit_views`), written back
/// in the file's encoding; `None` when it matches nothing there either.
fn through_view(
    decoder: Decoder,
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    hints: Hints,
) -> Option<Result<Applied, Miss>> {
    // A view keeps its offsets in 32 bits.
    if content.len() >= u32::MAX as usize || old.len() + new.len() >= u32::MAX as usize {
        return None;
    }
    let old_v = View::of(decoder, old);
    if old_v.text.trim().is_empty() {
        return None;
    }
    // No view changes a word: one the file lacks means no match, without a view of a
    // big file (the longest words first, they are the rarest).
    let mut words: Vec<&str> = old_v
        .text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .collect();
    words.sort_unstable_by_key(|w| std::cmp::Reverse(w.len()));
    words.dedup();
    if words.iter().take(8).any(|w| !content.contains(w)) {
        return None;
    }
    let view = View::of(decoder, content);
    if view.text.len() == content.len() && old_v.text == old && view.text == content {
        return None;
    }
    let new_v = View::of(decoder, new);
    match apply_as_given(&view.text, &old_v.text, &new_v.text, replace_all, hints, false, false) {
        Err(Miss::NotFound { .. }) => None,
        // A view keeps every line where it is: the lines quoted are the file's own.
        Err(Miss::Partial { lines, .. }) => {
            let starts: Vec<usize> = lines.iter().map(|&l| line_start(content, l)).collect();
            Some(Err(partial(content, &starts)))
        }
        Err(Miss::Unclear { mut region, why }) => {
            let raw: Vec<&str> = content.split('\n').collect();
            let m = region.last_line + 1 - region.first_line;
            region.numbered = numbered(&raw, region.first_line - 1, m);
            Some(Err(Miss::Unclear { region, why }))
        }
        Err(other) => Some(Err(other)),
        Ok(mut applied) => {
            for s in &mut applied.splices {
                let raw_new = (s.text == new_v.text).then_some(&new_v);
                let range = view.source(s.range.start)..view.source(s.range.end);
                match reencode(decoder, content, &view, s.range.clone(), &s.text, raw_new, new) {
                    Ok(text) => s.text = text,
                    Err(why) => {
                        let raw: Vec<&str> = content.split('\n').collect();
                        let (first, last) =
                            (line_of(content, range.start), line_of(content, range.end));
                        let region = Candidate {
                            first_line: first,
                            last_line: last,
                            similarity: 1.0,
                            numbered: numbered(&raw, first - 1, last + 1 - first),
                        };
                        return Some(Err(Miss::Unclear { region, why }));
                    }
                }
                s.range = range;
            }
            applied.notes.insert(0, decoder.note().to_owned());
            Some(Ok(applied))
        }
    }
}

/// How an exact occurrence sits in its line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// At word and line boundaries as the text's own edges suggest.
    Clean,
    /// Starting or ending inside an identifier (`retries` in `max_retries`).
    InWord,
    /// Starting inside the line's indentation: the model's indentation differs.
    InIndent,
    /// Not whole lines, where whole lines are wanted.
    MidLine,
}

fn fit(content: &str, at: usize, old: &str, whole_lines: bool) -> Fit {
    let end = at + old.len();
    let line_start = content[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &content[line_start..at];
    let at_line_start = before.is_empty();
    let at_line_end =
        old.ends_with('\n') || end == content.len() || content[end..].starts_with(['\n', '\r']);
    if whole_lines && !(at_line_start && at_line_end) {
        return Fit::MidLine;
    }
    if !at_line_start
        && old.starts_with([' ', '\t'])
        && before.chars().all(|c| c == ' ' || c == '\t')
    {
        return Fit::InIndent;
    }
    let word =
        |c: Option<char>| c.is_some_and(|c| (c.is_alphanumeric() || c == '_') && !spaceless(c));
    let starts_inside = word(before.chars().last()) && word(old.chars().next());
    let ends_inside = word(content[end..].chars().next()) && word(old.chars().last());
    if starts_inside || ends_inside { Fit::InWord } else { Fit::Clean }
}

/// Whether `c` belongs to a script written without spaces between words (Han, kana,
/// Thai, Lao, Khmer, Myanmar): there a fragment of a run of letters is a word of its own.
fn spaceless(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x3040..=0x30FF
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F
        | 0x20000..=0x3FFFF)
}

/// Exact, then tolerant. An occurrence inside the line's indentation does not count; one
/// only inside longer words or numbers is refused. `closest`: a miss looks for the
/// closest region.
fn apply_as_given(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    hints: Hints,
    whole_lines: bool,
    closest: bool,
) -> Result<Applied, Miss> {
    let starts = exact_starts(content, old);
    let fits: Vec<(usize, Fit)> =
        starts.iter().map(|&s| (s, fit(content, s, old, whole_lines))).collect();
    let clean: Vec<usize> =
        fits.iter().filter(|(_, f)| *f == Fit::Clean).map(|(s, _)| *s).collect();
    let in_word: Vec<usize> =
        fits.iter().filter(|(_, f)| *f == Fit::InWord).map(|(s, _)| *s).collect();
    let chosen = if !clean.is_empty() {
        clean
    } else {
        let tolerant = apply_tolerant(content, old, new, replace_all, hints, closest);
        match (tolerant, in_word.is_empty()) {
            (t, true) => return t,
            // Only inside longer words or numbers: a stale or clipped copy, not the text
            // the model meant. Writing there would damage the token.
            (Err(Miss::NotFound { .. }), false) if in_word.len() > 1 && !replace_all => {
                let lines = in_word.iter().map(|&s| line_of(content, s)).collect();
                return Err(Miss::Ambiguous { lines });
            }
            (Err(Miss::NotFound { .. }), false) => return Err(partial(content, &in_word)),
            (Ok(_) | Err(Miss::Ambiguous { .. }), false) => {
                let mut lines: Vec<usize> = in_word.iter().map(|&s| line_of(content, s)).collect();
                lines.extend(tolerant_starts(content, old).iter().map(|s| s + 1));
                lines.sort_unstable();
                lines.dedup();
                return Err(Miss::Ambiguous { lines });
            }
            (Err(other), false) => return Err(other),
        }
    };
    if chosen.len() > 1 && !replace_all {
        let lines = chosen.iter().map(|&s| line_of(content, s)).collect();
        return Err(Miss::Ambiguous { lines });
    }
    // One line sent without its indentation and replaced by several: the added lines
    // belong at the line's indentation, not at column 0. The tolerant pass re-indents
    // whole lines in the file's style; a match that ends inside the line gives the
    // added lines its indentation as it is. (The later lines of a longer old_text
    // matched with their real indentation, so new_text's are as typed; and new lines
    // that all start with the line's indentation are taken as already indented.)
    let first_indent = chosen.first().map_or("", |&s| indent_before(content, s));
    let added: Vec<&str> = new.split('\n').skip(1).filter(|l| !l.trim().is_empty()).collect();
    let candidate = !added.is_empty()
        && !old.trim_end_matches('\n').contains('\n')
        && !old.starts_with([' ', '\t'])
        && !first_indent.is_empty()
        && !added.iter().all(|l| l.starts_with(first_indent));
    // Indented from column 0 only when an added line is at column 0; lines indented
    // some but less than the line could be either (a dedented `else:`, or nesting
    // typed from column 0), and guessing would break the block.
    let unindented = candidate && added.iter().any(|l| !l.starts_with([' ', '\t']));
    if candidate && !unindented {
        let at = chosen[0];
        let line = line_of(content, at);
        let raw: Vec<&str> = content.split('\n').collect();
        return Err(Miss::Unclear {
            region: Candidate {
                first_line: line,
                last_line: line,
                similarity: 1.0,
                numbered: numbered(&raw, line - 1, 1),
            },
            why: format!(
                "old_text starts after the line's indentation ({} columns), and the added \
                 lines of new_text are indented neither from column 0 nor from the line",
                crate::edit_tokens::columns(first_indent)
            ),
        });
    }
    if unindented {
        let whole = chosen.iter().all(|&s| {
            let end = s + old.len();
            old.ends_with('\n') || end == content.len() || content[end..].starts_with('\n')
        });
        // The tolerant pass takes whole lines only: with replace_all it must have found
        // every occurrence, or each is indented here.
        if whole
            && let Ok(mut applied) = apply_tolerant(content, old, new, replace_all, hints, false)
            && applied.count == chosen.len()
        {
            applied.kind = MatchKind::Exact;
            applied.notes.push("indented your new lines as the line you sent".to_owned());
            return Ok(applied);
        }
    }
    let mut splices = Vec::with_capacity(chosen.len());
    let mut copied = 0;
    let mut notes = Vec::new();
    for s in chosen {
        if s < copied {
            continue; // overlaps the previous replacement
        }
        let indent = indent_before(content, s);
        let text = if unindented && !indent.is_empty() {
            if notes.is_empty() {
                notes.push("indented your new lines as the line you sent".to_owned());
            }
            indent_following(new, indent)
        } else {
            new.to_owned()
        };
        splices.push(Splice { range: s..s + old.len(), text });
        copied = s + old.len();
    }
    let count = splices.len();
    Ok(Applied { splices, count, kind: MatchKind::Exact, notes })
}

/// The line's text before byte `at`, when it is all whitespace (else empty).
fn indent_before(content: &str, at: usize) -> &str {
    let start = content[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &content[start..at];
    if before.chars().all(|c| c == ' ' || c == '\t') { before } else { "" }
}

/// `text` with `indent` before every line after the first that has content.
fn indent_following(text: &str, indent: &str) -> String {
    let mut out = String::with_capacity(text.len() + indent.len() * 4);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(indent);
            }
        }
        out.push_str(line);
    }
    out
}

/// The refusal for `old_text` found only inside longer tokens at `starts`.
fn partial(content: &str, starts: &[usize]) -> Miss {
    let mut lines: Vec<usize> = starts.iter().map(|&s| line_of(content, s)).collect();
    lines.dedup();
    let raw: Vec<&str> = content.split('\n').collect();
    let numbered =
        lines.iter().take(5).map(|&l| numbered(&raw, l - 1, 1)).collect::<Vec<_>>().join("\n");
    Miss::Partial { lines, numbered }
}

/// The first lines (0-based) of the runs `old` matches tolerantly, overlapping ones too.
fn tolerant_starts(content: &str, old: &str) -> Vec<usize> {
    let spans = spans(content);
    let raw: Vec<&str> = spans.iter().map(|s| &content[s.start..s.end]).collect();
    let norm_old: Vec<String> = split_lines(old).iter().map(|l| normalize(l)).collect();
    if norm_old.iter().all(String::is_empty) {
        return Vec::new();
    }
    all_regions(&raw, &norm_old, 0)
}

/// Byte offsets of every occurrence of `old`, overlapping ones included: "aa" in "aaa"
/// is ambiguous even though a non-overlapping search finds it once.
fn exact_starts(content: &str, old: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = content[from..].find(old) {
        let at = from + i;
        starts.push(at);
        let step = content[at..].chars().next().map_or(1, char::len_utf8);
        from = at + step;
        if from > content.len() {
            break;
        }
    }
    starts
}

/// The byte where 1-based line `line` starts.
fn line_start(content: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    content.match_indices('\n').nth(line - 2).map_or(content.len(), |(i, _)| i + 1)
}

fn line_of(content: &str, byte: usize) -> usize {
    content[..byte].matches('\n').count() + 1
}

/// A line of the content: `start..end` without its newline, `next` after it.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    next: usize,
}

fn spans(content: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in content.split_inclusive('\n') {
        let next = start + piece.len();
        let end = if piece.ends_with('\n') { next - 1 } else { next };
        out.push(Span { start, end, next });
        start = next;
    }
    out
}

/// Lines of an edit's text; a final newline does not start another line.
fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n').unwrap_or(text).split('\n').collect()
}

fn apply_tolerant(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    hints: Hints,
    closest: bool,
) -> Result<Applied, Miss> {
    let spans = spans(content);
    let raw: Vec<&str> = spans.iter().map(|s| &content[s.start..s.end]).collect();
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let norm_old: Vec<String> = old_lines.iter().map(|l| normalize(l)).collect();
    if norm_old.iter().all(String::is_empty) {
        return Err(Miss::NotFound { closest: None });
    }
    let regions = find_regions(&raw, &norm_old, 0);
    if regions.is_empty() {
        // Only the match as given shows the closest region: a form or a view that also
        // misses would search the whole file again for the same answer.
        if !closest {
            return Err(Miss::NotFound { closest: None });
        }
        let norm_file: Vec<String> = raw.iter().map(|l| normalize(l)).collect();
        return Err(Miss::NotFound { closest: closest_in(&raw, &norm_file, &norm_old) });
    }
    if !replace_all {
        // Overlapping runs are ambiguous too.
        let all = all_regions(&raw, &norm_old, regions[0]);
        if all.len() > 1 || regions.len() > 1 {
            let mut lines: Vec<usize> = all.iter().chain(&regions).map(|r| r + 1).collect();
            lines.sort_unstable();
            lines.dedup();
            return Err(Miss::Ambiguous { lines });
        }
    }
    let file_style = detect_style(raw.iter().copied());
    let m = norm_old.len();
    let mut splices: Vec<Splice> = Vec::with_capacity(regions.len());
    let mut seen = Differences::default();
    for &s in &regions {
        let (first, last) = (spans[s], spans[s + m - 1]);
        let mut range = first.start..last.end;
        if new_lines.is_empty() {
            // Deleting whole lines takes their newline too, or the newline before them
            // at the end of a file without a final newline.
            if last.next > last.end {
                range.end = last.next;
            } else if s > 0 {
                // The whole line ending before, `\r` included, unless the region before
                // (replace_all) already took it.
                let before = spans[s - 1].end;
                range.start = if content[..before].ends_with('\r') { before - 1 } else { before };
                range.start = range.start.max(splices.last().map_or(0, |p| p.range.end));
            }
        }
        // In a file with mixed endings, a region of CRLF lines stays CRLF.
        // (A region of mixed endings keeps each line's `\r` as trailing whitespace.)
        let is_crlf = raw[s..s + m].iter().all(|l| l.ends_with('\r'));
        let region: Vec<&str> = if is_crlf {
            raw[s..s + m].iter().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
        } else {
            raw[s..s + m].to_vec()
        };
        let (mut replacement, diffs) =
            rewrite(&region, &old_lines, &new_lines, file_style, hints.prose).map_err(
                |unclear| Miss::Unclear {
                    region: Candidate {
                        first_line: s + 1,
                        last_line: s + m,
                        similarity: 1.0,
                        numbered: numbered(&raw, s, m),
                    },
                    why: unclear.0,
                },
            )?;
        if is_crlf {
            replacement = replacement.replace('\n', "\r\n");
            if !new_lines.is_empty() {
                replacement.push('\r');
            }
        }
        merge(&mut seen, diffs);
        splices.push(Splice { range, text: replacement });
    }
    Ok(Applied {
        splices,
        count: regions.len(),
        kind: MatchKind::Tolerant,
        notes: describe_differences(&seen),
    })
}

fn merge(into: &mut Differences, d: Differences) {
    into.indentation = into.indentation.or(d.indentation);
    into.spacing |= d.spacing;
    into.typography |= d.typography;
    into.unicode_form |= d.unicode_form;
    into.invisible |= d.invisible;
    for c in d.converted {
        if !into.converted.contains(&c) {
            into.converted.push(c);
        }
    }
}

/// What a tolerant match tolerated, in words.
pub(crate) fn describe_differences(d: &Differences) -> Vec<String> {
    let mut ignored = Vec::new();
    if d.indentation.is_some() {
        ignored.push("indentation");
    }
    if d.spacing {
        ignored.push("whitespace");
    }
    if d.typography {
        ignored.push("quotes, dashes and spaces");
    }
    if d.unicode_form {
        ignored.push("Unicode form (NFC/NFD)");
    }
    if d.invisible {
        ignored.push("zero-width characters");
    }
    let mut kept = Vec::new();
    if let Some(style) = d.indentation {
        kept.push(format!("the file's {}", style.describe()));
    }
    if d.typography || d.spacing || d.unicode_form {
        kept.push("its characters in the lines you kept".to_owned());
    }
    let mut notes = Vec::new();
    if ignored.is_empty() {
        notes.push("matched line by line".to_owned());
    } else {
        let mut note = format!("matched ignoring {}", ignored.join(", "));
        if !kept.is_empty() {
            note.push_str(&format!("; kept {}", kept.join(" and ")));
        }
        notes.push(note);
    }
    if !d.converted.is_empty() {
        let list: Vec<String> = d
            .converted
            .iter()
            .take(5)
            .map(|(from, to)| format!("{} as {}", shown(from), shown(to)))
            .collect();
        notes.push(format!("wrote {} in your new text, as the file does", list.join(", ")));
    }
    notes
}

/// A character for a note: visible, with its code point when it is a space.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' => "TAB".to_owned(),
            ' ' => "a space".to_owned(),
            c if c.is_whitespace() => format!("U+{:04X}", c as u32),
            c => format!("\"{c}\""),
        })
        .collect::<Vec<_>>()
        .join("")
}

/// Starts (from line `from` on) of every run of `raw` lines that equals `old` once
/// normalised, overlapping ones included.
pub(crate) fn all_regions(raw: &[&str], old: &[String], from: usize) -> Vec<usize> {
    let m = old.len();
    let needle = needle(&old[0]);
    (from..=raw.len().saturating_sub(m))
        .filter(|&s| s + m <= raw.len())
        .filter(|&s| needle.is_none_or(|n| raw[s].contains(n) || has_invisible(raw[s])))
        .filter(|&s| (0..m).all(|k| normalize(raw[s + k]) == old[k]))
        .collect()
}

/// Starts (from line `from` on) of the non-overlapping runs of `raw` lines that equal
/// `old` once normalised. Only lines holding a word of `old`'s first line are
/// normalised (a word survives normalisation as written), so a big file costs a scan
/// for that word, not a normalisation of every line.
pub(crate) fn find_regions(raw: &[&str], old: &[String], from: usize) -> Vec<usize> {
    let m = old.len();
    let needle = needle(&old[0]);
    let mut out = Vec::new();
    let mut s = from;
    while s + m <= raw.len() {
        let maybe = needle.is_none_or(|n| raw[s].contains(n) || has_invisible(raw[s]));
        if maybe && (0..m).all(|k| normalize(raw[s + k]) == old[k]) {
            out.push(s);
            s += m;
        } else {
            s += 1;
        }
    }
    out
}

/// The longest run of ASCII letters, digits and `_` in a normalised line, if it has 3
/// or more characters: a raw line that normalises to it contains it.
pub(crate) fn needle(norm: &str) -> Option<&str> {
    norm.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .max_by_key(|w| w.len())
        .filter(|w| w.len() >= 3)
}

/// The window of `old.len()` lines most similar to `old`: a cheap character-overlap score
/// over every window picks a few, and a character diff ranks those.
pub(crate) fn closest_in(raw: &[&str], file: &[String], old: &[String]) -> Option<Candidate> {
    let n = file.len();
    let m = old.len().min(n);
    if m == 0 {
        return None;
    }
    let sorted = |l: &String| {
        let mut v: Vec<char> = l.chars().collect();
        v.sort_unstable();
        v
    };
    let file_chars: Vec<Vec<char>> = file.iter().map(sorted).collect();
    let old_chars: Vec<Vec<char>> = old[..m].iter().map(sorted).collect();
    // Sample `old` lines when scoring every window against every line is too slow.
    let step = (m * (n - m + 1)).div_ceil(SCAN_BUDGET).max(1);
    let mut scored: Vec<(f32, usize)> = (0..=n - m)
        .map(|s| {
            let (mut common, mut total) = (0, 0);
            for i in (0..m).step_by(step) {
                common += overlap(&file_chars[s + i], &old_chars[i]);
                total += file_chars[s + i].len() + old_chars[i].len();
            }
            (if total == 0 { 0.0 } else { 2.0 * common as f32 / total as f32 }, s)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let wanted = old[..m].join("\n");
    let (similarity, s) = scored
        .iter()
        .take(8)
        .map(|&(_, s)| {
            let window = file[s..s + m].join("\n");
            let diff = TextDiff::configure()
                .timeout(Duration::from_millis(50))
                .diff_chars(window.as_str(), wanted.as_str());
            (diff.ratio(), s)
        })
        .fold(None, |best: Option<(f32, usize)>, (r, s)| match best {
            Some((b, _)) if b >= r => best,
            _ => Some((r, s)),
        })?;
    (similarity >= MIN_SIMILARITY).then(|| Candidate {
        first_line: s + 1,
        last_line: s + m,
        similarity,
        numbered: numbered(raw, s, m),
    })
}

/// Characters two sorted lists share, counted with multiplicity.
fn overlap(a: &[char], b: &[char]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

pub(crate) fn numbered(raw: &[&str], s: usize, m: usize) -> String {
    let mut lines: Vec<String> = raw[s..s + m.min(MAX_CANDIDATE_LINES)]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            let cut: String = l.chars().take(500).collect();
            format!("{}\t{cut}", s + i + 1)
        })
        .collect();
    if m > MAX_CANDIDATE_LINES {
        lines.push(format!("… {} more lines", m - MAX_CANDIDATE_LINES));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests;
