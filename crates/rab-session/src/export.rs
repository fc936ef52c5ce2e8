//! Export of a session: a self-contained HTML page (the whole tree with a branch
//! switcher, tool calls, coloured diffs; inline CSS and JS, no network), Markdown of the
//! active branch for pasting, or JSON with the header and every entry as stored.
//!
//! Everything in a session came from a user, a model or a tool, so the HTML export
//! escapes all of it; its Markdown renderer emits only a fixed set of tags.

use serde::Serialize;

use crate::{Entry, Error, Header, Tape};

mod html;
mod markdown;
mod markup;
mod tree;

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// One HTML file with inline CSS and JS.
    Html,
    /// Markdown of the active branch.
    Markdown,
    /// The header and every entry as one JSON document.
    Json,
}

impl ExportFormat {
    /// The usual file extension, without the dot (for naming `/export` files).
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

/// Renders the session in `format`.
pub fn export(tape: &Tape, format: ExportFormat) -> Result<String, Error> {
    match format {
        ExportFormat::Html => Ok(html::page(tape)),
        ExportFormat::Markdown => Ok(markdown::document(tape)),
        ExportFormat::Json => json(tape),
    }
}

/// The JSON export: the same serde types as the tape, so it reads back as entries.
#[derive(Serialize)]
struct Document<'a> {
    header: &'a Header,
    entries: Vec<&'a Entry>,
}

fn json(tape: &Tape) -> Result<String, Error> {
    let doc = Document { header: tape.header(), entries: tape.entries() };
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| Error::Encode(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The first `max_lines` lines of `text`, at most `max_chars` bytes (cut on a char
/// boundary), and how many lines were left out. Huge tool output would bury the
/// conversation in a pasted transcript.
fn truncate(text: &str, max_lines: usize, max_chars: usize) -> (&str, usize) {
    let mut end = text.len();
    if let Some((i, _)) = text.match_indices('\n').nth(max_lines.saturating_sub(1)) {
        end = i;
    }
    if end > max_chars {
        end = max_chars;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    let kept = &text[..end];
    let rest = &text[end..];
    let dropped = if rest.trim().is_empty() {
        0
    } else {
        // A line cut in the middle counts as left out too.
        rest.trim_start_matches('\n').lines().count()
    };
    (kept, dropped)
}

/// A one-line preview of `text`: whitespace collapsed, at most `max` chars.
fn snippet(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, word) in text.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() > max {
            let cut: String = out.chars().take(max.saturating_sub(1)).collect();
            return format!("{}…", cut.trim_end());
        }
    }
    out
}

#[cfg(test)]
mod tests;
