//! The `edit` tool's matcher on arbitrary text: the input split at NUL bytes into the
//! file's content, `old_text`, `new_text` and options (`a`: replace_all; `p`, `m`, `h`,
//! `j`: the file is Python, Markdown, HTML or JSON, else Rust), and optionally a second
//! edit's `old_text` and `new_text` (the edits of one call are located as read). The
//! edits apply or are refused with a message for the model, never a panic.

use std::path::Path;

use rab_tools::edit::{Replacement, edit_text};

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    // `edit` refuses a file that is not UTF-8 before matching.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts = text.splitn(4, '\0');
    let content = parts.next().unwrap_or_default();
    let old = parts.next().unwrap_or_default();
    let new = parts.next().unwrap_or_default();
    let rest = parts.next().unwrap_or_default();
    let (options, second) = rest.split_once('\0').unwrap_or((rest, ""));
    let path = if options.contains('p') {
        Path::new("/w/f.py")
    } else if options.contains('m') {
        Path::new("/w/f.md")
    } else if options.contains('h') {
        Path::new("/w/f.html")
    } else if options.contains('j') {
        Path::new("/w/f.json")
    } else {
        Path::new("/w/f.rs")
    };
    let mut edits = vec![Replacement {
        old_text: old.to_owned(),
        new_text: new.to_owned(),
        replace_all: Some(options.contains('a')),
    }];
    if let Some((old2, new2)) = second.split_once('\0') {
        edits.push(Replacement {
            old_text: old2.to_owned(),
            new_text: new2.to_owned(),
            replace_all: None,
        });
    }
    let _ = edit_text(content, path, &edits);
}
