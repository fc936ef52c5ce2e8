//! Markdown tables drawn with box characters: columns get their natural width when the
//! table fits, otherwise the width is shared out so narrow columns keep theirs and wide
//! ones wrap; cells are aligned as the delimiter row says.

use pulldown_cmark::Alignment;

use crate::ansi::{self, RESET};
use crate::theme::{Role, Theme};
use crate::wrap::wrap;

/// Narrowest a column gets before the table gives up on a grid.
const MIN_COL: usize = 3;

/// Renders a table to lines of at most `width` cells.
pub(crate) fn render_table(
    head: &[String],
    body: &[Vec<String>],
    aligns: &[Alignment],
    width: usize,
    theme: &Theme,
) -> Vec<String> {
    let ncols = aligns.len().max(head.len()).max(body.iter().map(Vec::len).max().unwrap_or(0));
    if ncols == 0 {
        return Vec::new();
    }
    let overhead = 3 * ncols + 1;
    if width < overhead + MIN_COL * ncols {
        return fallback(head, body, width, theme);
    }
    let cell = |row: &[String], c: usize| row.get(c).cloned().unwrap_or_default();
    let natural: Vec<usize> = (0..ncols)
        .map(|c| {
            std::iter::once(head)
                .chain(body.iter().map(Vec::as_slice))
                .map(|r| ansi::width(&cell(r, c)))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let widths = fit(&natural, width - overhead);
    let border = |l: &str, m: &str, r: &str| {
        let segs: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        theme.fg(Role::Border, &format!("{l}{}{r}", segs.join(m)))
    };
    let bar = theme.fg(Role::Border, "│");
    let mut out = vec![border("┌", "┬", "┐")];
    let row_lines = |row: &[String], bold: bool, out: &mut Vec<String>| {
        let cells: Vec<Vec<String>> = (0..ncols)
            .map(|c| {
                let text = cell(row, c);
                let text = if bold { format!("\x1b[1m{text}{RESET}") } else { text };
                wrap(&text, widths[c])
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            let mut line = bar.clone();
            for (c, parts) in cells.iter().enumerate() {
                let part = parts.get(i).map_or("", String::as_str);
                let align = aligns.get(c).copied().unwrap_or(Alignment::None);
                line.push(' ');
                line.push_str(&align_cell(part, widths[c], align));
                line.push(' ');
                line.push_str(&bar);
            }
            out.push(line);
        }
    };
    row_lines(head, true, &mut out);
    out.push(border("├", "┼", "┤"));
    for row in body {
        row_lines(row, false, &mut out);
    }
    out.push(border("└", "┴", "┘"));
    out
}

/// Column widths that sum to at most `avail`: columns that fit in an equal share keep
/// their natural width, the rest split what is left.
fn fit(natural: &[usize], avail: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= avail {
        return natural.to_vec();
    }
    let mut widths = vec![0; natural.len()];
    let mut open: Vec<usize> = (0..natural.len()).collect();
    let mut left = avail;
    loop {
        let share = left / open.len().max(1);
        let (fits, rest): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&c| natural[c] <= share);
        if fits.is_empty() {
            for (k, &c) in rest.iter().enumerate() {
                widths[c] = share + usize::from(k < left % rest.len().max(1));
            }
            return widths;
        }
        for c in fits {
            widths[c] = natural[c];
            left -= natural[c];
        }
        open = rest;
        if open.is_empty() {
            return widths;
        }
    }
}

fn align_cell(text: &str, w: usize, align: Alignment) -> String {
    let have = ansi::width(text);
    let pad = w.saturating_sub(have);
    let (l, r) = match align {
        Alignment::Right => (pad, 0),
        Alignment::Center => (pad / 2, pad - pad / 2),
        Alignment::Left | Alignment::None => (0, pad),
    };
    format!("{}{text}{}", " ".repeat(l), " ".repeat(r))
}

/// Too narrow for a grid: one line per row, cells separated by `│`, cut to the width.
fn fallback(head: &[String], body: &[Vec<String>], width: usize, theme: &Theme) -> Vec<String> {
    let sep = theme.fg(Role::Border, " │ ");
    std::iter::once(head)
        .chain(body.iter().map(Vec::as_slice))
        .map(|row| ansi::truncate(&row.join(&sep), width, "…"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn fit_keeps_narrow_columns_and_shares_the_rest() {
        assert_eq!(fit(&[3, 4], 20), vec![3, 4]);
        assert_eq!(fit(&[3, 40, 40], 30), vec![3, 14, 13]);
        assert_eq!(fit(&[10, 10, 10], 12), vec![4, 4, 4]);
    }

    #[test]
    fn cells_align() {
        assert_eq!(align_cell("ab", 5, Alignment::Right), "   ab");
        assert_eq!(align_cell("ab", 5, Alignment::Center), " ab  ");
        assert_eq!(align_cell("ab", 5, Alignment::None), "ab   ");
    }
}
