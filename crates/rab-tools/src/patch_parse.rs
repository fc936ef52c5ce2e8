//! Reading an `apply_patch` envelope:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        then `+line` lines
//! *** Delete File: path
//! *** Update File: path     optionally `*** Move to: path`, then chunks:
//! @@ optional context line  (`@@` alone, or several stacked)
//!  kept line / -removed line / +added line
//! *** End of File           (the chunk ends at the end of the file)
//! *** End Patch
//! ```
//!
//! Read leniently, as the models trained on it write it: the markers may carry
//! surrounding whitespace, the patch may be wrapped in a heredoc (`<<'EOF'` … `EOF`), an
//! empty line inside a chunk is an empty kept line, and the first chunk may omit `@@`.

use thiserror::Error;

/// A parsed patch: its file operations in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Patch {
    pub ops: Vec<FileOp>,
}

/// One operation on one file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// Create a file with these lines.
    Add { path: String, lines: Vec<String> },
    /// Delete a file.
    Delete { path: String },
    /// Change a file in place, or move it and change it.
    Update { path: String, move_to: Option<String>, chunks: Vec<Chunk> },
}

impl FileOp {
    /// The file the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// A change to part of a file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// `@@ text` lines that locate the chunk (a class, a function), outermost first.
    pub headers: Vec<String>,
    /// The lines the chunk expects: kept and removed ones.
    pub old: Vec<String>,
    /// The lines it leaves: kept and added ones.
    pub new: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub at_end: bool,
}

/// Why a patch cannot be read; each names the line.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum ParseError {
    #[error("the patch must start with \"*** Begin Patch\" (it starts with {0:?})")]
    NoBegin(String),
    #[error("the patch must end with \"*** End Patch\" (its last line is {0:?})")]
    NoEnd(String),
    #[error("the patch changes no file: add \"*** Update File: PATH\" and its changes")]
    Empty,
    #[error("line {line}: {what}")]
    At { line: usize, what: String },
}

/// Reads a patch.
pub(crate) fn parse(input: &str) -> Result<Patch, ParseError> {
    let text = unwrap_heredoc(input.trim());
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.first().map(|l| l.trim()).unwrap_or_default();
    if first != "*** Begin Patch" {
        return Err(ParseError::NoBegin(first.chars().take(60).collect()));
    }
    let last = lines.last().map(|l| l.trim()).unwrap_or_default();
    if lines.len() < 2 || last != "*** End Patch" {
        return Err(ParseError::NoEnd(last.chars().take(60).collect()));
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    let at = |i: usize, what: String| ParseError::At { line: i + 2, what };
    while i < body.len() {
        let line = body[i].trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = header(line, "*** Add File:") {
            i += 1;
            let mut added = Vec::new();
            while let Some(l) = body.get(i) {
                let Some(rest) = l.strip_prefix('+') else { break };
                added.push(rest.to_owned());
                i += 1;
            }
            ops.push(FileOp::Add { path: path.to_owned(), lines: added });
        } else if let Some(path) = header(line, "*** Delete File:") {
            ops.push(FileOp::Delete { path: path.to_owned() });
            i += 1;
        } else if let Some(path) = header(line, "*** Update File:") {
            i += 1;
            let move_to = match body.get(i).and_then(|l| header(l.trim(), "*** Move to:")) {
                Some(dest) => {
                    i += 1;
                    Some(dest.to_owned())
                }
                None => None,
            };
            let (chunks, next) = chunks(body, i).map_err(|(line, what)| at(line, what))?;
            if chunks.is_empty() && move_to.is_none() {
                return Err(at(i, format!("\"*** Update File: {path}\" has no changes")));
            }
            i = next;
            ops.push(FileOp::Update { path: path.to_owned(), move_to, chunks });
        } else {
            return Err(at(
                i,
                format!(
                    "expected \"*** Add File:\", \"*** Delete File:\" or \"*** Update File:\", \
                     found {:?}",
                    line.chars().take(60).collect::<String>()
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(Patch { ops })
}

/// The path after an operation marker, if `line` is one.
fn header<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.strip_prefix(marker).map(str::trim).filter(|p| !p.is_empty())
}

/// The chunks of an update, from line `i` to the next operation; and where it ended.
fn chunks(body: &[&str], mut i: usize) -> Result<(Vec<Chunk>, usize), (usize, String)> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut current = Chunk::default();
    let has_lines = |c: &Chunk| !c.old.is_empty() || !c.new.is_empty();
    while let Some(&line) = body.get(i) {
        // Markers start a line; a kept line starts with a space, whatever follows it
        // (`    *** Update File:` in a document, Ruby's `  @@count`).
        let marker = line.trim_end();
        if marker.starts_with("*** ") && marker != "*** End of File" {
            break;
        }
        if marker == "*** End of File" {
            current.at_end = true;
            i += 1;
            continue;
        }
        // A blank line before a chunk's first line is the gap after a header.
        if marker.is_empty() && !has_lines(&current) {
            i += 1;
            continue;
        }
        if let Some(rest) = marker.strip_prefix("@@") {
            if has_lines(&current) || current.at_end {
                out.push(std::mem::take(&mut current));
            }
            let context = rest.trim();
            // `@@ -12,4 +12,5 @@` (a unified diff's header) locates nothing here.
            if !context.is_empty() && !context.starts_with('-') {
                current.headers.push(context.to_owned());
            }
            i += 1;
            continue;
        }
        if current.at_end {
            return Err((i, "a change after \"*** End of File\": start it with \"@@\"".into()));
        }
        match line.chars().next() {
            None => {
                current.old.push(String::new());
                current.new.push(String::new());
            }
            Some(' ') => {
                current.old.push(line[1..].to_owned());
                current.new.push(line[1..].to_owned());
            }
            Some('-') => current.old.push(line[1..].to_owned()),
            Some('+') => current.new.push(line[1..].to_owned()),
            Some(_) => {
                return Err((
                    i,
                    format!(
                        "a changed line must start with ' ', '-' or '+', found {:?}",
                        line.chars().take(60).collect::<String>()
                    ),
                ));
            }
        }
        i += 1;
    }
    if has_lines(&current) {
        out.push(current);
    }
    // Trailing empty lines are the gap before the next operation, not kept lines.
    for chunk in &mut out {
        while chunk.old.last().is_some_and(String::is_empty)
            && chunk.new.last().is_some_and(String::is_empty)
            && chunk.old.len() > 1
        {
            chunk.old.pop();
            chunk.new.pop();
        }
    }
    Ok((out, i))
}

/// The patch without a heredoc around it (`<<'EOF'` … `EOF`), as some models send it.
fn unwrap_heredoc(text: &str) -> &str {
    let Some(first_end) = text.find('\n') else { return text };
    let first = text[..first_end].trim();
    let Some(delimiter) = first.strip_prefix("<<") else { return text };
    let delimiter = delimiter.trim().trim_matches(['\'', '"']);
    let rest = &text[first_end + 1..];
    match rest.trim_end().strip_suffix(delimiter) {
        Some(inner) if !delimiter.is_empty() => inner.trim(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_operation() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n*** Delete File: b.txt\n\
                     *** Update File: c.rs\n*** Move to: d.rs\n@@ fn main\n keep\n-old\n+new\n\
                     @@\n-x\n+y\n*** End of File\n*** End Patch\n";
        let p = parse(patch).unwrap();
        assert_eq!(p.ops.len(), 3);
        assert_eq!(
            p.ops[0],
            FileOp::Add { path: "a.txt".into(), lines: vec!["one".into(), "".into()] }
        );
        assert_eq!(p.ops[1], FileOp::Delete { path: "b.txt".into() });
        let FileOp::Update { path, move_to, chunks } = &p.ops[2] else { panic!() };
        assert_eq!((path.as_str(), move_to.as_deref()), ("c.rs", Some("d.rs")));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].headers, ["fn main"]);
        assert_eq!(chunks[0].old, ["keep", "old"]);
        assert_eq!(chunks[0].new, ["keep", "new"]);
        assert!(chunks[1].at_end && chunks[1].old == ["x"]);
    }

    #[test]
    fn markers_start_a_line_and_a_kept_line_may_look_like_one() {
        let p = parse("*** Begin Patch\n*** Update File: a\n\n     *** Update File: b\n   @@x = 1\n-y\n+z\n*** End Patch").unwrap();
        assert_eq!(p.ops.len(), 1);
        let FileOp::Update { chunks, .. } = &p.ops[0] else { panic!() };
        assert_eq!(chunks[0].old, ["    *** Update File: b", "  @@x = 1", "y"]);
    }

    #[test]
    fn lenient_forms_are_read() {
        let p =
            parse("<<'EOF'\n *** Begin Patch \n*** Update File: a\n-x\n+y\n*** End Patch\nEOF\n");
        assert!(p.is_ok(), "{p:?}");
        let p = parse("*** Begin Patch\n*** Update File: a\n@@ class A\n@@ def f\n a\n\n-b\n+c\n*** End Patch").unwrap();
        let FileOp::Update { chunks, .. } = &p.ops[0] else { panic!() };
        assert_eq!(chunks[0].headers, ["class A", "def f"]);
        assert_eq!(chunks[0].old, ["a", "", "b"]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(matches!(parse("hello"), Err(ParseError::NoBegin(_))));
        assert!(matches!(parse("*** Begin Patch\n*** Add File: a\n+x"), Err(ParseError::NoEnd(_))));
        assert_eq!(parse("*** Begin Patch\n*** End Patch"), Err(ParseError::Empty));
        let e = parse("*** Begin Patch\n*** Update File: a\nx\n*** End Patch").unwrap_err();
        assert!(e.to_string().starts_with("line 3: a changed line must start"), "{e}");
        let e = parse("*** Begin Patch\n*** Update File: a\n*** End Patch").unwrap_err();
        assert!(e.to_string().contains("has no changes"), "{e}");
    }
}
