//! Replacing whole lines, for `apply_patch`: a chunk's old lines are looked for from a
//! line onward (or at the end of the file), exactly and then as the tolerant pass
//! compares lines, and replaced faithfully (`edit_faithful`), as `edit` does.

use crate::edit_faithful::rewrite;
use crate::edit_indent::detect_style;
use crate::edit_match::{
    Candidate, Hints, Miss, all_regions, closest_in, describe_differences, numbered,
};
use crate::edit_tokens::normalize;

/// A chunk applied: the new content, the line after the replaced ones, notes.
pub(crate) struct Replaced {
    pub text: String,
    pub next_line: usize,
    pub notes: Vec<String>,
}

/// Replaces the lines `old` with `new` in `content` (LF only), looking for runs that
/// start in lines `from..to` (0-based); with `at_end`, only where they end the file.
/// Empty `old` appends `new` at the end of the file.
#[allow(clippy::too_many_arguments)]
pub(crate) fn replace_lines(
    content: &str,
    from: usize,
    to: usize,
    old: &[String],
    new: &[String],
    at_end: bool,
    hints: Hints,
) -> Result<Replaced, Miss> {
    let ends_with_newline = content.is_empty() || content.ends_with('\n');
    let lines: Vec<&str> = split(content);
    if old.is_empty() {
        let mut text = content.to_owned();
        if !ends_with_newline {
            text.push('\n');
        }
        for line in new {
            text.push_str(line);
            text.push('\n');
        }
        return Ok(Replaced { text, next_line: lines.len() + new.len(), notes: Vec::new() });
    }
    let m = old.len();
    let from = from.min(lines.len());
    let starts: Vec<usize> = if at_end {
        // The end of the text: blank lines after it do not count.
        let len = lines.len() - lines.iter().rev().take_while(|l| l.trim().is_empty()).count();
        let len = if old.last().is_some_and(|l| l.trim().is_empty()) { lines.len() } else { len };
        len.checked_sub(m).filter(|s| *s >= from).into_iter().collect()
    } else {
        (from..=lines.len().saturating_sub(m)).filter(|s| s + m <= lines.len()).collect()
    };
    let starts: Vec<usize> = starts.into_iter().filter(|s| *s < to).collect();
    let exact: Vec<usize> =
        starts.iter().copied().filter(|&s| lines[s..s + m].iter().eq(old.iter())).collect();
    let (start, tolerant) = match exact.as_slice() {
        [one] => (*one, false),
        [_, _, ..] => return Err(Miss::Ambiguous { lines: exact.iter().map(|s| s + 1).collect() }),
        [] => {
            let norm_old: Vec<String> = old.iter().map(|l| normalize(l)).collect();
            let found: Vec<usize> = if at_end {
                starts
                    .iter()
                    .copied()
                    .filter(|&s| (0..m).all(|k| normalize(lines[s + k]) == norm_old[k]))
                    .collect()
            } else {
                all_regions(&lines, &norm_old, from).into_iter().filter(|s| *s < to).collect()
            };
            match found.as_slice() {
                [one] => (*one, true),
                [] => {
                    let norm: Vec<String> = lines.iter().map(|l| normalize(l)).collect();
                    let closest = closest_in(&lines, &norm, &norm_old);
                    return Err(Miss::NotFound { closest });
                }
                _ => {
                    return Err(Miss::Ambiguous { lines: found.iter().map(|s| s + 1).collect() });
                }
            }
        }
    };
    let (replacement, notes): (Vec<String>, Vec<String>) =
        if tolerant {
            let region: Vec<&str> = lines[start..start + m].to_vec();
            let old_lines: Vec<&str> = old.iter().map(String::as_str).collect();
            let new_lines: Vec<&str> = new.iter().map(String::as_str).collect();
            let style = detect_style(lines.iter().copied());
            let (text, diffs) = rewrite(&region, &old_lines, &new_lines, style, hints.prose)
                .map_err(|u| Miss::Unclear {
                    region: Candidate {
                        first_line: start + 1,
                        last_line: start + m,
                        similarity: 1.0,
                        numbered: numbered(&lines, start, m),
                    },
                    why: u.0,
                })?;
            let lines = if new.is_empty() { Vec::new() } else { split_owned(&text) };
            (lines, describe_differences(&diffs))
        } else {
            (new.to_vec(), Vec::new())
        };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + replacement.len());
    out.extend(&lines[..start]);
    out.extend(replacement.iter().map(String::as_str));
    out.extend(&lines[start + m..]);
    let mut text = out.join("\n");
    if ends_with_newline && !out.is_empty() {
        text.push('\n');
    } else if start + m == lines.len() && text.ends_with('\r') {
        // The last lines went: the line now last loses its ending, `\r` too.
        text.pop();
    }
    Ok(Replaced { text, next_line: start + replacement.len(), notes })
}

/// The lines of a text, without a last empty one after a final newline.
fn split(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    content.strip_suffix('\n').unwrap_or(content).split('\n').collect()
}

fn split_owned(text: &str) -> Vec<String> {
    text.split('\n').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Hints = Hints { prose: false, python: false };

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn replaces_exactly_then_tolerantly_and_keeps_the_files_bytes() {
        let r = replace_lines("a\nb\nc\n", 0, usize::MAX, &v(&["b"]), &v(&["B", "b2"]), false, H)
            .unwrap();
        assert_eq!((r.text.as_str(), r.next_line), ("a\nB\nb2\nc\n", 3));
        let r = replace_lines(
            "x\n\tif (“a”) {\n",
            0,
            usize::MAX,
            &v(&["    if (\"a\") {"]),
            &v(&["    if (\"a\") {", "        go();"]),
            false,
            H,
        )
        .unwrap();
        assert_eq!(r.text, "x\n\tif (“a”) {\n\t\tgo();\n");
    }

    #[test]
    fn searches_from_the_cursor_and_at_the_end() {
        let content = "k\nk\nk\n";
        assert!(matches!(
            replace_lines(content, 0, usize::MAX, &v(&["k"]), &v(&["z"]), false, H),
            Err(Miss::Ambiguous { .. })
        ));
        let r = replace_lines(content, 0, usize::MAX, &v(&["k"]), &v(&["z"]), true, H).unwrap();
        assert_eq!(r.text, "k\nk\nz\n");
        let r = replace_lines("a\nb", 0, usize::MAX, &[], &v(&["c"]), false, H).unwrap();
        assert_eq!(r.text, "a\nb\nc\n");
    }
}
