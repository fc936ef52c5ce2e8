//! The diff view: a unified diff as coloured lines with a line-number gutter, hunk
//! headers, and the changed words of paired `-`/`+` lines highlighted with a background.
//! Input is either old and new text (diffed here with `similar`) or the unified diff
//! string the edit and write tools put in their details; both go through the same parser
//! so they look alike. Long lines wrap under the gutter (or are cut with `…`), and a line
//! budget ends the view with `… N more lines`.

use similar::{Algorithm, DiffTag, TextDiff, capture_diff_slices};
use unicode_width::UnicodeWidthStr;

use crate::ansi::{self, RESET};
use crate::highlight::sanitize_line;
use crate::theme::{ColorDepth, Role, Theme};
use crate::wrap::wrap;

/// How to show a diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    /// Unchanged lines around each change (for old/new input).
    pub context: usize,
    /// Wrap long lines (otherwise cut them with `…`).
    pub wrap: bool,
    /// Most lines to render; the last shows how many diff lines were left out.
    pub max_lines: Option<usize>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions { context: 3, wrap: true, max_lines: None }
    }
}

/// One parsed diff line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DiffLine {
    Hunk(String),
    Context {
        new: usize,
        text: String,
    },
    Remove {
        old: usize,
        text: String,
    },
    Add {
        new: usize,
        text: String,
    },
    /// `\ No newline at end of file` and anything else worth showing dimmed.
    Note(String),
}

/// Renders the diff between two texts.
pub fn render_text_diff(
    old: &str,
    new: &str,
    width: usize,
    theme: &Theme,
    opts: &DiffOptions,
) -> Vec<String> {
    let diff = TextDiff::from_lines(old, new);
    let unified = diff.unified_diff().context_radius(opts.context).to_string();
    render_unified_diff(&unified, width, theme, opts)
}

/// Renders a unified diff string (`---`/`+++`/`@@` headers optional). Lines before the
/// first hunk (`diff --git`, `index`, file headers) are skipped: the caller shows the
/// path.
pub fn render_unified_diff(
    diff: &str,
    width: usize,
    theme: &Theme,
    opts: &DiffOptions,
) -> Vec<String> {
    let lines = parse(diff);
    let strong = strong_ranges(&lines);
    let num_w = lines
        .iter()
        .filter_map(|l| match l {
            DiffLine::Context { new, .. } | DiffLine::Add { new, .. } => Some(*new),
            DiffLine::Remove { old, .. } => Some(*old),
            DiffLine::Hunk(_) | DiffLine::Note(_) => None,
        })
        .max()
        .map_or(1, |n| n.to_string().len());
    let width = width.max(1);
    // Rendered rows with the index of the diff line they show.
    let mut rows: Vec<(usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for row in render_line(line, strong[i].as_deref(), num_w, width, theme, opts) {
            rows.push((i, row));
        }
    }
    match opts.max_lines {
        Some(max) if rows.len() > max => {
            let keep = max.saturating_sub(1);
            let shown_up_to = if keep == 0 { 0 } else { rows[keep - 1].0 + 1 };
            let more = lines.len() - shown_up_to;
            let mut out: Vec<String> = rows.into_iter().take(keep).map(|(_, r)| r).collect();
            let note = ansi::truncate(&format!("… {more} more lines"), width, "…");
            out.push(theme.dim(&note));
            out
        }
        _ => rows.into_iter().map(|(_, r)| r).collect(),
    }
}

/// Counts of added and removed lines in a unified diff (for a `+3 -1` summary).
pub fn diff_stats(diff: &str) -> (usize, usize) {
    parse(diff).iter().fold((0, 0), |(a, r), l| match l {
        DiffLine::Add { .. } => (a + 1, r),
        DiffLine::Remove { .. } => (a, r + 1),
        DiffLine::Hunk(_) | DiffLine::Context { .. } | DiffLine::Note(_) => (a, r),
    })
}

fn parse(diff: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    let mut in_hunk = false;
    for raw in diff.lines() {
        if let Some((o, n)) = hunk_starts(raw) {
            (old, new) = (o, n);
            in_hunk = true;
            out.push(DiffLine::Hunk(raw.to_owned()));
            continue;
        }
        if !in_hunk {
            continue;
        }
        let (tag, text) = raw.split_at(raw.chars().next().map_or(0, char::len_utf8));
        let text = text.to_owned();
        match tag {
            "+" => {
                out.push(DiffLine::Add { new, text });
                new += 1;
            }
            "-" => {
                out.push(DiffLine::Remove { old, text });
                old += 1;
            }
            "\\" => out.push(DiffLine::Note(raw.to_owned())),
            // Some tools strip the space of empty context lines.
            " " | "" => {
                out.push(DiffLine::Context { new, text });
                old += 1;
                new += 1;
            }
            _ => {
                // Not part of a hunk (e.g. the next file's `diff --git`): wait for `@@`.
                in_hunk = false;
            }
        }
    }
    out
}

/// The old and new start lines of a `@@ -a,b +c,d @@` header.
fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let start = |s: &str| s.split(',').next()?.parse::<usize>().ok();
    Some((start(old)?, start(new)?))
}

/// Byte ranges to emphasise, per line: for each run of removed lines followed by added
/// lines, each removed line is paired with the next added line (in order) that shares
/// enough with it, so an inserted line between two edited ones does not misalign them.
fn strong_ranges(lines: &[DiffLine]) -> Vec<Option<Vec<(usize, usize)>>> {
    let mut out = vec![None; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let removes =
            lines[i..].iter().take_while(|l| matches!(l, DiffLine::Remove { .. })).count();
        let adds =
            lines[i + removes..].iter().take_while(|l| matches!(l, DiffLine::Add { .. })).count();
        if removes == 0 || adds == 0 {
            i += removes.max(1);
            continue;
        }
        // Searching costs removes × adds word diffs; huge blocks pair by index only.
        let search = removes * adds <= 400;
        let mut next_add = 0;
        for k in 0..removes {
            let candidates = if search { next_add..adds } else { k..(k + 1).min(adds) };
            for j in candidates {
                let (DiffLine::Remove { text: a, .. }, DiffLine::Add { text: b, .. }) =
                    (&lines[i + k], &lines[i + removes + j])
                else {
                    continue;
                };
                if let Some((ra, rb)) = word_changes(&sanitize_line(a), &sanitize_line(b)) {
                    out[i + k] = Some(ra);
                    out[i + removes + j] = Some(rb);
                    next_add = j + 1;
                    break;
                }
            }
        }
        i += removes + adds;
    }
    out
}

/// Words, runs of whitespace, and single other characters.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<u8> = None;
    for (i, c) in s.char_indices() {
        let class = if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        };
        if prev.is_some_and(|p| p != class || class == 2) {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(class);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

type Ranges = Vec<(usize, usize)>;

/// The changed byte ranges of `a` and `b`, or `None` when the lines share too little for
/// word highlights to help (then the whole line's colour says enough).
fn word_changes(a: &str, b: &str) -> Option<(Ranges, Ranges)> {
    let (ta, tb) = (tokens(a), tokens(b));
    let ops = capture_diff_slices(Algorithm::Myers, &ta, &tb);
    let offsets = |t: &[&str]| {
        let mut v = Vec::with_capacity(t.len() + 1);
        let mut o = 0;
        v.push(0);
        for s in t {
            o += s.len();
            v.push(o);
        }
        v
    };
    let (oa, ob) = (offsets(&ta), offsets(&tb));
    let (mut ra, mut rb, mut same) = (Vec::new(), Vec::new(), 0usize);
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                same +=
                    ta[old].iter().filter(|t| !t.trim().is_empty()).map(|t| t.len()).sum::<usize>();
            }
            DiffTag::Delete | DiffTag::Insert | DiffTag::Replace => {
                if !old.is_empty() {
                    ra.push((oa[old.start], oa[old.end]));
                }
                if !new.is_empty() {
                    rb.push((ob[new.start], ob[new.end]));
                }
            }
        }
    }
    let longest = a.trim().len().max(b.trim().len()).max(1);
    (same * 10 >= longest * 4 && (!ra.is_empty() || !rb.is_empty())).then_some((ra, rb))
}

fn render_line(
    line: &DiffLine,
    strong: Option<&[(usize, usize)]>,
    num_w: usize,
    width: usize,
    theme: &Theme,
    opts: &DiffOptions,
) -> Vec<String> {
    let (num, sign, text, role, strong_role) = match line {
        DiffLine::Hunk(h) => {
            return vec![theme.fg(Role::DiffContext, &ansi::truncate(h, width, "…"))];
        }
        DiffLine::Note(n) => return vec![theme.dim(&ansi::truncate(n, width, "…"))],
        DiffLine::Context { new, text } => (*new, ' ', text, Role::DiffContext, None),
        DiffLine::Remove { old, text } => {
            (*old, '-', text, Role::DiffRemove, Some(Role::DiffRemoveStrong))
        }
        DiffLine::Add { new, text } => (*new, '+', text, Role::DiffAdd, Some(Role::DiffAddStrong)),
    };
    let gutter_w = num_w + 3;
    let text = sanitize_line(text);
    let fg = theme.fg_code(role);
    let mut body = fg.clone();
    match (strong, strong_role) {
        (Some(ranges), Some(sr)) => {
            let (on, off) = strong_codes(theme, sr);
            let mut at = 0;
            for &(s, e) in ranges {
                body.push_str(&text[at..s]);
                body.push_str(&on);
                body.push_str(&text[s..e]);
                body.push_str(&off);
                at = e;
            }
            body.push_str(&text[at..]);
        }
        _ => body.push_str(&text),
    }
    if !fg.is_empty() || strong.is_some() {
        body.push_str(RESET);
    }
    let gutter = theme.fg(role, &format!("{num:>num_w$} {sign} "));
    if width < gutter_w + 8 {
        // Too narrow for a gutter: sign and text only.
        let line = format!("{}{body}", theme.fg(role, &format!("{sign} ")));
        return vec![ansi::truncate(&line, width, "…")];
    }
    let room = width - gutter_w;
    let parts = if opts.wrap || UnicodeWidthStr::width(text.as_ref()) <= room {
        wrap(&body, room)
    } else {
        vec![ansi::truncate(&body, room, "…")]
    };
    let blank = " ".repeat(gutter_w);
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| if i == 0 { format!("{gutter}{p}") } else { format!("{blank}{p}") })
        .collect()
}

/// Escapes that turn the emphasis of changed words on and off; reverse video when the
/// terminal shows no colour, so the change is still visible.
fn strong_codes(theme: &Theme, role: Role) -> (String, String) {
    if theme.depth == ColorDepth::None {
        return ("\x1b[7m".to_owned(), "\x1b[27m".to_owned());
    }
    let bg = theme.bg_code(role);
    if bg.is_empty() {
        ("\x1b[1m".to_owned(), "\x1b[22m".to_owned())
    } else {
        (bg, "\x1b[49m".to_owned())
    }
}

#[cfg(test)]
mod tests;
