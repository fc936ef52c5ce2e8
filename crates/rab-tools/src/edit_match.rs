//! How `edit` finds the text to replace, in three steps:
//!
//! 1. **Exact**: `old_text` as a substring; it must occur once (or `replace_all`).
//! 2. **Tolerant**, on a miss: line by line, comparing lines with indentation, trailing
//!    whitespace and whitespace runs ignored and typographic quotes, dashes, ellipses and
//!    odd spaces folded to ASCII ([`normalize`]). A unique matching run of whole lines is
//!    replaced by `new_text` re-indented to the file's style ([`reindent`]): models often
//!    retype a tab-indented file with spaces, or "fix" quotes while copying.
//! 3. **Closest**, on a second miss: the window of lines most similar to `old_text`, so
//!    the error can show the model what the file really says there.
//!
//! Content here is LF-only; `edit` converts CRLF files before and after.

use std::time::Duration;

use similar::TextDiff;

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
}

/// Why an edit could not be applied.
#[derive(Debug, PartialEq)]
pub(crate) enum Miss {
    /// `old_text` occurs in several places: the 1-based first line of each.
    Ambiguous { lines: Vec<usize> },
    /// `old_text` does not occur; the most similar region, if any is close enough.
    NotFound { closest: Option<Candidate> },
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

/// Columns a tab counts for when comparing indentation.
const TAB_COLS: usize = 4;
/// Below this similarity a region is not worth showing.
const MIN_SIMILARITY: f32 = 0.4;
/// Line comparisons the closest-region scan may spend before it samples.
const SCAN_BUDGET: usize = 300_000;
/// Most lines of a candidate shown.
const MAX_CANDIDATE_LINES: usize = 30;

/// Replaces `old` with `new` in `content` (see the module docs for how it matches).
pub(crate) fn apply(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, Miss> {
    let starts = exact_starts(content, old);
    if starts.is_empty() {
        return apply_tolerant(content, old, new, replace_all);
    }
    if starts.len() > 1 && !replace_all {
        let lines = starts.iter().map(|&s| line_of(content, s)).collect();
        return Err(Miss::Ambiguous { lines });
    }
    Ok(Applied {
        text: content.replace(old, new),
        count: content.matches(old).count(),
        kind: MatchKind::Exact,
    })
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

fn apply_tolerant(content: &str, old: &str, new: &str, replace_all: bool) -> Result<Applied, Miss> {
    let spans = spans(content);
    let raw: Vec<&str> = spans.iter().map(|s| &content[s.start..s.end]).collect();
    let norm_file: Vec<String> = raw.iter().map(|l| normalize(l)).collect();
    let mut old_lines = split_lines(old);
    let mut new_lines = split_lines(new);
    // Models sometimes paste `read` output, line numbers and all.
    if has_line_numbers(&old_lines) {
        old_lines = strip_line_numbers(&old_lines);
        if has_line_numbers(&new_lines) {
            new_lines = strip_line_numbers(&new_lines);
        }
    }
    let norm_old: Vec<String> = old_lines.iter().map(|l| normalize(l)).collect();
    if norm_old.iter().all(String::is_empty) {
        return Err(Miss::NotFound { closest: None });
    }
    let regions = find_regions(&norm_file, &norm_old);
    if regions.is_empty() {
        return Err(Miss::NotFound { closest: closest(&raw, &norm_file, &norm_old) });
    }
    if regions.len() > 1 && !replace_all {
        return Err(Miss::Ambiguous { lines: regions.iter().map(|r| r + 1).collect() });
    }
    let file_style = detect_style(raw.iter().copied());
    let m = norm_old.len();
    let mut text = String::with_capacity(content.len());
    let mut copied = 0;
    for &s in &regions {
        let (first, last) = (spans[s], spans[s + m - 1]);
        let mut range = first.start..last.end;
        if new_lines.is_empty() {
            // Deleting whole lines takes their newline too, or the newline before them
            // at the end of a file without a final newline.
            if last.next > last.end {
                range.end = last.next;
            } else if s > 0 {
                range.start = spans[s - 1].end;
            }
        }
        let region = &raw[s..s + m];
        // In a file with mixed endings, a region of CRLF lines stays CRLF.
        let is_crlf = region.iter().all(|l| l.ends_with('\r'));
        let mut replacement = reindent(region, &old_lines, &new_lines, file_style)
            .join(if is_crlf { "\r\n" } else { "\n" });
        if is_crlf && !new_lines.is_empty() {
            replacement.push('\r');
        }
        text.push_str(&content[copied..range.start]);
        text.push_str(&replacement);
        copied = range.end;
    }
    text.push_str(&content[copied..]);
    Ok(Applied { text, count: regions.len(), kind: MatchKind::Tolerant })
}

/// Starts of the non-overlapping runs of `file` lines equal to `old`.
fn find_regions(file: &[String], old: &[String]) -> Vec<usize> {
    let m = old.len();
    let mut out = Vec::new();
    let mut s = 0;
    while s + m <= file.len() {
        if file[s..s + m] == *old {
            out.push(s);
            s += m;
        } else {
            s += 1;
        }
    }
    out
}

fn line_number_prefix(line: &str) -> Option<usize> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0 && line[digits..].starts_with('\t')).then_some(digits + 1)
}

fn has_line_numbers(lines: &[&str]) -> bool {
    !lines.is_empty() && lines.iter().all(|l| line_number_prefix(l).is_some())
}

fn strip_line_numbers<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines.iter().map(|l| line_number_prefix(l).map_or(*l, |n| &l[n..])).collect()
}

/// A line as the tolerant pass compares it: no leading or trailing whitespace, inner
/// whitespace runs as one space, typographic punctuation as ASCII, no BOM or zero-width
/// space.
pub(crate) fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut is_in_space = false;
    for c in line.chars() {
        if matches!(c, '\u{feff}' | '\u{200b}') {
            continue;
        }
        if c.is_whitespace() {
            is_in_space = !out.is_empty();
            continue;
        }
        if is_in_space {
            out.push(' ');
            is_in_space = false;
        }
        match c {
            '“' | '”' | '„' | '‟' | '″' => out.push('"'),
            '‘' | '’' | '‚' | '‛' | '′' => out.push('\''),
            '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => out.push('-'),
            '…' => out.push_str("..."),
            c => out.push(c),
        }
    }
    out
}

/// How a text indents: with tabs, or with `width` spaces per level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    uses_tabs: bool,
    width: usize,
}

impl Style {
    fn render(self, cols: usize) -> String {
        if self.uses_tabs {
            format!("{}{}", "\t".repeat(cols / TAB_COLS), " ".repeat(cols % TAB_COLS))
        } else {
            " ".repeat(cols)
        }
    }
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn columns(indent: &str) -> usize {
    indent.chars().map(|c| if c == '\t' { TAB_COLS } else { 1 }).sum()
}

/// The indentation style of `lines`: tabs if more lines start with a tab than with a
/// space, else spaces with the most common increase between consecutive lines as the
/// level width. `None` when nothing is indented.
pub(crate) fn detect_style<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Style> {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps = [0usize; 9];
    let mut prev = 0;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let indent = indent_of(line);
        if indent.starts_with('\t') {
            tabs += 1;
            continue;
        }
        if indent.starts_with(' ') {
            spaces += 1;
        }
        let width = indent.len();
        if width > prev && width - prev < steps.len() {
            steps[width - prev] += 1;
        }
        prev = width;
    }
    if tabs == 0 && spaces == 0 {
        return None;
    }
    if tabs > spaces {
        return Some(Style { uses_tabs: true, width: TAB_COLS });
    }
    // Ties go to the larger step: 4 over 2 when a file has both.
    let width = (1..steps.len()).rev().max_by_key(|&w| steps[w]).filter(|&w| steps[w] > 0);
    Some(Style { uses_tabs: false, width: width.unwrap_or(TAB_COLS) })
}

/// `new` re-indented to match the file: the matched `region` lines pair up with the
/// `old` lines, which shows how the model's indentation maps to the file's. A `new` line
/// indented like some `old` line gets that line's file indentation; any other line is
/// placed relative to the nearest such level, converting levels between the model's and
/// the file's style. Relative indentation within `new` is kept.
fn reindent(region: &[&str], old: &[&str], new: &[&str], file_style: Option<Style>) -> Vec<String> {
    let pairs: Vec<(&str, &str)> = old
        .iter()
        .zip(region)
        .filter(|(o, f)| !o.trim().is_empty() && !f.trim().is_empty())
        .map(|(o, f)| (indent_of(o), indent_of(f)))
        .collect();
    if pairs.iter().all(|(o, f)| o == f) {
        return new.iter().map(|l| (*l).to_owned()).collect();
    }
    let model = detect_style(old.iter().chain(new).copied()).or(file_style);
    let model = model.unwrap_or(Style { uses_tabs: false, width: TAB_COLS });
    let file = file_style.or_else(|| detect_style(region.iter().copied())).unwrap_or(model);
    let mut anchors: Vec<(usize, &str)> = Vec::new();
    for (o, f) in &pairs {
        let cols = columns(o);
        if !anchors.iter().any(|(c, _)| *c == cols) {
            anchors.push((cols, f));
        }
    }
    new.iter()
        .map(|line| {
            if line.trim().is_empty() {
                return String::new();
            }
            let indent = indent_of(line);
            let rest = &line[indent.len()..];
            format!("{}{rest}", map_indent(columns(indent), &anchors, model, file))
        })
        .collect()
}

fn map_indent(cols: usize, anchors: &[(usize, &str)], model: Style, file: Style) -> String {
    if let Some((_, f)) = anchors.iter().find(|(c, _)| *c == cols) {
        return (*f).to_owned();
    }
    let below = anchors.iter().filter(|(c, _)| *c <= cols).max_by_key(|(c, _)| *c);
    let Some(&(anchor, f)) = below.or_else(|| anchors.iter().min_by_key(|(c, _)| *c)) else {
        return file.render(cols);
    };
    let base = columns(f);
    let (levels, rest) = (cols.abs_diff(anchor) / model.width, cols.abs_diff(anchor) % model.width);
    let shift = levels * file.width + rest;
    let target = if cols >= anchor { base + shift } else { base.saturating_sub(shift) };
    file.render(target)
}

/// The window of `old.len()` lines most similar to `old`: a cheap character-overlap score
/// over every window picks a few, and a character diff ranks those.
fn closest(raw: &[&str], file: &[String], old: &[String]) -> Option<Candidate> {
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

fn numbered(raw: &[&str], s: usize, m: usize) -> String {
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
#[path = "edit_match_tests.rs"]
mod tests;
