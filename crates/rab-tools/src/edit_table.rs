//! Markdown table rows written by an edit, padded to the table's columns. A model
//! sends rows unpadded (`| backoff | 2 | factor |`); in a table whose rows all share
//! one set of column widths, each row the edit writes is padded to them, as the rows
//! around it are. A table that is not aligned, a cell wider than its column, or a row
//! of another number of cells is left as the model wrote it: re-padding the whole
//! table would change lines the model did not touch.

use crate::edit_match::Splice;

/// A row's cells: the text before the first `|`, each cell between pipes, and the
/// text after the last `|`.
struct Row<'a> {
    lead: &'a str,
    cells: Vec<&'a str>,
    tail: &'a str,
}

/// `line` as a table row, if it is one (it starts with `|` after its indentation).
fn row(line: &str) -> Option<Row<'_>> {
    let body = line.trim_start_matches([' ', '\t']);
    if !body.starts_with('|') {
        return None;
    }
    let lead = &line[..line.len() - body.len()];
    let mut pipes: Vec<usize> = Vec::new();
    let bytes = body.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'|' && (i == 0 || bytes[i - 1] != b'\\') {
            pipes.push(i);
        }
    }
    if pipes.len() < 2 {
        return None;
    }
    let cells = pipes.windows(2).map(|w| &body[w[0] + 1..w[1]]).collect();
    let last = pipes[pipes.len() - 1];
    Some(Row { lead, cells, tail: &body[last + 1..] })
}

/// Column widths of a row, in characters.
fn widths(r: &Row<'_>) -> Vec<usize> {
    r.cells.iter().map(|c| c.chars().count()).collect()
}

/// Whether a cell is part of a delimiter row (`---`, `:--:`).
fn is_rule(cell: &str) -> bool {
    let t = cell.trim();
    !t.is_empty() && t.contains('-') && t.chars().all(|c| c == '-' || c == ':')
}

/// Pads the table rows `splice` writes into `content` to the columns of the table they
/// stand in. Returns whether it changed anything.
pub(crate) fn repad(content: &str, splice: &mut Splice) -> bool {
    let begin = content[..splice.range.start].rfind('\n').map_or(0, |i| i + 1);
    // A range that ends a line (its newline included) ends there; else at its line's end.
    let ends_line = splice.range.end > splice.range.start
        && content[..splice.range.end].ends_with('\n')
        && splice.text.ends_with('\n');
    let end = if ends_line {
        splice.range.end - 1
    } else {
        content[splice.range.end..].find('\n').map_or(content.len(), |i| splice.range.end + i)
    };
    if !splice.text.contains('|') && !content[begin..end].contains('|') {
        return false;
    }
    // A new delimiter row: the model is laying the table out itself.
    if splice.text.split('\n').any(|l| row(l).is_some_and(|r| r.cells.iter().all(|c| is_rule(c)))) {
        return false;
    }
    // The rows around the replaced lines (and the replaced lines themselves).
    let above = content[..begin].strip_suffix('\n').unwrap_or("");
    let table: Vec<&str> = above
        .rsplit('\n')
        .take_while(|l| row(l).is_some())
        .chain(content[begin..end].split('\n').filter(|l| row(l).is_some()))
        .chain(
            content[end..]
                .strip_prefix('\n')
                .unwrap_or("")
                .split('\n')
                .take_while(|l| row(l).is_some()),
        )
        .collect();
    let Some(first) = table.first().and_then(|l| row(l)) else {
        return false;
    };
    let cols = widths(&first);
    let wide = |l: &str| l.chars().any(|c| c as u32 > 0x10ff || c == '\t');
    if table.len() < 2 || table.iter().any(|l| wide(l) || row(l).is_none_or(|r| widths(&r) != cols))
    {
        return false;
    }
    // Each column's alignment, from the delimiter row.
    let align: Vec<Align> = table
        .iter()
        .filter_map(|l| row(l))
        .find(|r| r.cells.iter().all(|c| is_rule(c)))
        .map(|r| {
            r.cells
                .iter()
                .map(|c| match (c.trim().starts_with(':'), c.trim().ends_with(':')) {
                    (true, true) => Align::Center,
                    (false, true) => Align::Right,
                    _ => Align::Left,
                })
                .collect()
        })
        .unwrap_or_else(|| vec![Align::Left; cols.len()]);
    let prefix = &content[begin..splice.range.start];
    let (text, suffix) = match ends_line {
        true => (&splice.text[..splice.text.len() - 1], ""),
        false => (splice.text.as_str(), &content[splice.range.end..end]),
    };
    let whole = format!("{prefix}{text}{suffix}");
    let mut changed = false;
    let lines: Vec<String> = whole
        .split('\n')
        .map(|line| match row(line) {
            Some(r)
                if r.cells.len() == cols.len()
                    && !wide(line)
                    && !r.cells.iter().all(|c| is_rule(c)) =>
            {
                match padded(&r, &cols, &align) {
                    Some(p) if p != line => {
                        changed = true;
                        p
                    }
                    _ => line.to_owned(),
                }
            }
            _ => line.to_owned(),
        })
        .collect();
    if !changed {
        return false;
    }
    let mut joined = lines.join("\n");
    if ends_line {
        joined.push('\n');
    }
    // Back to the splice's own range: the prefix and suffix are unchanged text of the
    // file's lines, so the splice grows to whole lines.
    splice.range = begin..end;
    splice.text = joined;
    true
}

/// `after` (`before` with some lines replaced) with the table rows it changed padded
/// to their table's columns, for tools that replace whole texts (`apply_patch`).
pub(crate) fn repad_text(before: &str, after: String) -> (String, bool) {
    let mut start = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    while !after.is_char_boundary(start) || !before.is_char_boundary(start) {
        start -= 1;
    }
    let most = before.len().min(after.len()) - start;
    let mut back = before
        .bytes()
        .rev()
        .zip(after.bytes().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    while !after.is_char_boundary(after.len() - back)
        || !before.is_char_boundary(before.len() - back)
    {
        back -= 1;
    }
    let mut s = Splice {
        range: start..before.len() - back,
        text: after[start..after.len() - back].to_owned(),
    };
    if repad(before, &mut s) {
        (crate::edit_match::splice(before, &[s]), true)
    } else {
        (after, false)
    }
}

/// How a column aligns its cells.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
    Center,
}

/// `r` with each cell padded to `cols`, or `None` when a cell does not fit.
fn padded(r: &Row<'_>, cols: &[usize], align: &[Align]) -> Option<String> {
    let mut out = format!("{}|", r.lead);
    for ((cell, &width), &align) in r.cells.iter().zip(cols).zip(align) {
        let text = cell.trim();
        let len = text.chars().count();
        if len + 2 > width {
            return None;
        }
        let free = width - len - 2;
        let before = match align {
            Align::Left => 0,
            Align::Right => free,
            Align::Center => free / 2,
        };
        out.push_str(&format!(" {}{text}{} |", " ".repeat(before), " ".repeat(free - before)));
    }
    out.push_str(r.tail);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(content: &str, old: &str, new: &str) -> String {
        let at = content.find(old).unwrap();
        let mut s = Splice { range: at..at + old.len(), text: new.to_owned() };
        repad(content, &mut s);
        crate::edit_match::splice(content, &[s])
    }

    #[test]
    fn new_rows_take_the_tables_columns() {
        let t = "| a   | bb |\n|-----|---:|\n| x   |  1 |\n";
        assert_eq!(
            pad(t, "| x   |  1 |", "| x   |  1 |\n| yy | 22 |"),
            "| a   | bb |\n|-----|---:|\n| x   |  1 |\n| yy  | 22 |\n"
        );
        // A cell too wide for its column leaves the row as typed.
        assert_eq!(
            pad(t, "| x   |  1 |", "| x   |  1 |\n| long-name | 2 |"),
            "| a   | bb |\n|-----|---:|\n| x   |  1 |\n| long-name | 2 |\n"
        );
        // An edit that ends with its row's newline grows over no other row.
        let t2 = "| a | b |\n|---|:-:|\n| x | 1 |\n| y | 2 |\n";
        let at = t2.find("| x | 1 |\n").unwrap();
        let mut s = Splice { range: at..at + 10, text: "| x | 22222 |\n".to_owned() };
        assert!(!repad(t2, &mut s));
        assert_eq!(s.range, at..at + 10);
        // Centered columns stay centered; a new delimiter row is the model's layout.
        let t3 = "| a | bbbbb |\n|---|:-----:|\n| x |   1   |\n";
        assert_eq!(
            pad(t3, "| x |   1   |", "| x |   1   |\n| y | 22 |"),
            "| a | bbbbb |\n|---|:-----:|\n| x |   1   |\n| y |  22   |\n"
        );
        assert_eq!(pad(t3, "|---|:-----:|", "|-|:-:|"), "| a | bbbbb |\n|-|:-:|\n| x |   1   |\n");
        // A table that is not aligned is left alone.
        let ragged = "| a | b |\n|---|---|\n| xx | 1 |\n";
        assert_eq!(
            pad(ragged, "| xx | 1 |", "| xx | 1 |\n| y | 2 |"),
            "| a | b |\n|---|---|\n| xx | 1 |\n| y | 2 |\n"
        );
    }
}
