//! Indentation for lines the model adds in a tolerant edit: the file's style (tabs,
//! spaces of some width, ideographic spaces), and a mapping from the model's
//! indentation to the file's learned from the lines both have.

use crate::edit_tokens::{TAB_COLS, columns, is_invisible, is_space};

/// How a text indents: with `unit` (a tab, a space, an ideographic space), `width`
/// columns per level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    pub unit: char,
    pub width: usize,
}

impl Style {
    /// Indentation of `cols` columns in this style.
    pub fn render(self, cols: usize) -> String {
        match self.unit {
            '\t' => format!("{}{}", "\t".repeat(cols / TAB_COLS), " ".repeat(cols % TAB_COLS)),
            '\u{3000}' => format!("{}{}", "\u{3000}".repeat(cols / 2), " ".repeat(cols % 2)),
            _ => " ".repeat(cols),
        }
    }

    /// How the style reads in a note: "tabs", "4-space indentation".
    pub fn describe(self) -> String {
        match self.unit {
            '\t' => "tabs".to_owned(),
            '\u{3000}' => "ideographic-space indentation".to_owned(),
            _ => format!("{}-space indentation", self.width),
        }
    }
}

/// The whitespace a line starts with.
pub(crate) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches(|c| is_space(c) || is_invisible(c)).len()]
}

/// The indentation style of `lines`: the unit most lines start with, and the most common
/// increase between consecutive lines as the level width. `None` when nothing is
/// indented.
pub(crate) fn detect_style<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Style> {
    let mut counts: Vec<(char, usize)> = Vec::new();
    let mut steps = [0usize; 9];
    let mut prev = 0;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let indent = indent_of(line);
        // A comment's continuation (` * `) is aligned, not indented.
        if line[indent.len()..].starts_with('*') {
            continue;
        }
        if let Some(unit) = indent.chars().find(|c| !is_invisible(*c)) {
            match counts.iter_mut().find(|(c, _)| *c == unit) {
                Some((_, n)) => *n += 1,
                None => counts.push((unit, 1)),
            }
        }
        let width = columns(indent);
        if width > prev && width - prev < steps.len() {
            steps[width - prev] += 1;
        }
        prev = width;
    }
    // Ties go to the first unit met.
    let unit = counts.iter().rev().max_by_key(|(_, n)| *n).map(|(c, _)| *c)?;
    let width = match unit {
        '\t' => TAB_COLS,
        // Steps of one column are alignment, not a level; ties go to the larger step
        // (4 over 2 when a file has both).
        _ => (2..steps.len())
            .max_by_key(|&w| steps[w])
            .filter(|&w| steps[w] > 0)
            .unwrap_or(if unit == '\u{3000}' { 2 } else { TAB_COLS }),
    };
    Some(Style { unit, width })
}

/// How the model's indentation maps to the file's, learned from the lines of the
/// matched region and the model's old text.
pub(crate) struct IndentMap {
    /// Per model indentation (in columns): the file's indentation on each line (by
    /// index in the region) where the model wrote it.
    anchors: Vec<(usize, Vec<(usize, String)>)>,
    model: Style,
    file: Style,
    /// The model indents as the file does: its indentation is kept as typed.
    same: bool,
}

impl IndentMap {
    /// Learns the mapping from `(region line, model indent, file indent)` of the
    /// non-blank lines both have.
    pub fn new(
        pairs: &[(usize, &str, &str)],
        model_lines: &[&str],
        region: &[&str],
        file_style: Option<Style>,
    ) -> Self {
        let model = detect_style(model_lines.iter().copied()).or(file_style);
        let model = model.unwrap_or(Style { unit: ' ', width: TAB_COLS });
        let file = detect_style(region.iter().copied()).or(file_style).unwrap_or(model);
        // The file's own style wins over one guessed from a few region lines, unless the
        // region itself shows another unit.
        let file = match file_style {
            Some(f) if f.unit == file.unit => f,
            _ => file,
        };
        // Kept lines without indentation say nothing: then the styles must agree.
        let indented = pairs.iter().any(|(_, o, f)| !o.is_empty() || !f.is_empty());
        let same = pairs.iter().all(|(_, o, f)| o == f)
            && (indented || file_style.is_none_or(|f| f.unit == model.unit));
        let mut anchors: Vec<(usize, Vec<(usize, String)>)> = Vec::new();
        for (k, o, f) in pairs {
            let cols = columns(o);
            match anchors.iter_mut().find(|(c, _)| *c == cols) {
                Some((_, seen)) => seen.push((*k, (*f).to_owned())),
                None => anchors.push((cols, vec![(*k, (*f).to_owned())])),
            }
        }
        Self { anchors, model, file, same }
    }

    /// Whether the model's indentation differed from the file's.
    pub fn differs(&self) -> bool {
        !self.same
    }

    /// The file's style, for notes.
    pub fn file_style(&self) -> Style {
        self.file
    }

    /// The file's indentation for a line the model indented with `indent`, near region
    /// line `near`; an error when the file indents that model level at different depths.
    pub fn map(&self, indent: &str, near: Option<usize>) -> Result<String, String> {
        if self.same {
            return Ok(indent.to_owned());
        }
        let cols = columns(indent);
        let pick = |seen: &[(usize, String)]| -> Result<String, String> {
            let depth = columns(&seen[0].1);
            // A file that mixes tabs and spaces (a Makefile's continuation lines beside
            // its recipes, an old C file) gives one level of the model's several
            // spellings, which count differently; that is not a disagreement on depth.
            let mixed = seen.iter().any(|(_, f)| f.contains('\t'))
                && seen.iter().any(|(_, f)| !f.contains('\t'));
            if !mixed && seen.iter().any(|(_, f)| columns(f) != depth) {
                return Err(format!(
                    "lines you indented alike ({cols} columns) are at different depths in the file"
                ));
            }
            // The same depth spelled differently (tabs, spaces): the nearest line's.
            let before = seen.iter().rev().find(|(k, _)| near.is_some_and(|n| *k <= n));
            Ok(before.unwrap_or(&seen[0]).1.clone())
        };
        if let Some((_, seen)) = self.anchors.iter().find(|(c, _)| *c == cols) {
            return pick(seen);
        }
        let below = self.anchors.iter().filter(|(c, _)| *c <= cols).max_by_key(|(c, _)| *c);
        let Some((anchor, seen)) = below.or_else(|| self.anchors.iter().min_by_key(|(c, _)| *c))
        else {
            let levels = cols / self.model.width.max(1);
            return Ok(self.file.render(levels * self.file.width + cols % self.model.width.max(1)));
        };
        let f = pick(seen)?;
        let base = columns(&f);
        let width = self.model.width.max(1);
        let (levels, rest) = (cols.abs_diff(*anchor) / width, cols.abs_diff(*anchor) % width);
        let shift = levels * self.file.width + rest;
        Ok(if cols >= *anchor {
            // Deeper than the anchor: its indentation as is, then the file's levels.
            format!("{f}{}", self.file.render(shift))
        } else {
            self.file.render(base.saturating_sub(shift))
        })
    }
}
