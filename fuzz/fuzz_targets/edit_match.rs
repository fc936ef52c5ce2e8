//! The `edit` tool's matcher on arbitrary text: the input split at NUL bytes into the
//! file's content, `old_text`, `new_text` and options (`a`: replace_all; `p`, `m`: the
//! file is Python or Markdown, else Rust). The edit applies or is refused with a message
//! for the model, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rab_tools::edit::{Replacement, edit_text};

fuzz_target!(|data: &[u8]| {
    // `edit` refuses a file that is not UTF-8 before matching.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts = text.splitn(4, '\0');
    let content = parts.next().unwrap_or_default();
    let old = parts.next().unwrap_or_default();
    let new = parts.next().unwrap_or_default();
    let options = parts.next().unwrap_or_default();
    let path = if options.contains('p') {
        Path::new("/w/f.py")
    } else if options.contains('m') {
        Path::new("/w/f.md")
    } else {
        Path::new("/w/f.rs")
    };
    let edit = Replacement {
        old_text: old.to_owned(),
        new_text: new.to_owned(),
        replace_all: Some(options.contains('a')),
    };
    let _ = edit_text(content, path, &[edit]);
});
