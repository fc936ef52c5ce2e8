//! How `edit` finds the text to replace, in three steps:
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
//! 4. **Closest**, on a last miss: the window of lines most similar to `old_text`, so
//!    the error can show the model what the file really says there.
//!
//! Content here is LF-only; `edit` converts CRLF files before and after.

use std::time::Duration;

use similar::TextDiff;

use crate::edit_faithful::{Differences, rewrite};
use crate::edit_indent::detect_style;
use crate::edit_tokens::has_invisible;
pub(crate) use crate::edit_tokens::normalize;

/// How an edit matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchKind {
    /// `old_text` occurs verbatim.
    Exact,
    /// Matched line by line after [`normalize`].
    Tolerant,
}

/// A successfully applied edit.
#[derive(Debug, PartialEq)]
pub(crate) struct Applied {
    /// The whole new content.
    pub text: String,
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
        applied
    };
    let miss = match apply_as_given(content, old, new, replace_all, hints, false) {
        Err(miss @ Miss::NotFound { .. }) => miss,
        other => return other.map(note),
    };
    for form in crate::edit_forms::forms(old, new, hints.python) {
        match apply_as_given(content, &form.old, &form.new, replace_all, hints, form.whole_lines) {
            Ok(mut applied) => {
                applied.notes.insert(0, form.note);
                return Ok(note(applied));
            }
            Err(Miss::NotFound { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Err(miss)
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
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let starts_inside = word(before.chars().last()) && word(old.chars().next());
    let ends_inside = word(content[end..].chars().next()) && word(old.chars().last());
    if starts_inside || ends_inside { Fit::InWord } else { Fit::Clean }
}

/// Exact, then tolerant. An occurrence inside the line's indentation does not count; one
/// inside an identifier counts only when nothing else matches, tolerantly included.
fn apply_as_given(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    hints: Hints,
    whole_lines: bool,
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
        let tolerant = apply_tolerant(content, old, new, replace_all, hints);
        match (tolerant, in_word.is_empty()) {
            (t, true) => return t,
            (Err(Miss::NotFound { .. }), false) => in_word,
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
    let mut text = String::with_capacity(content.len() + new.len());
    let mut copied = 0;
    let mut count = 0;
    for s in chosen {
        if s < copied {
            continue; // overlaps the previous replacement
        }
        text.push_str(&content[copied..s]);
        text.push_str(new);
        copied = s + old.len();
        count += 1;
    }
    text.push_str(&content[copied..]);
    Ok(Applied { text, count, kind: MatchKind::Exact, notes: Vec::new() })
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
    let mut text = String::with_capacity(content.len());
    let mut copied = 0;
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
                // The whole line ending before, `\r` included.
                let before = spans[s - 1].end;
                range.start = if content[..before].ends_with('\r') { before - 1 } else { before };
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
        text.push_str(&content[copied..range.start]);
        text.push_str(&replacement);
        copied = range.end;
    }
    text.push_str(&content[copied..]);
    Ok(Applied {
        text,
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
