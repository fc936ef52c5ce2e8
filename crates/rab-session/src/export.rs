//! Export of a session: a self-contained HTML page (tree, tool calls, diffs; no network),
//! Markdown for pasting, or JSON. (Skeleton: the implementation comes next.)

use crate::Tape;

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

/// Renders the session in `format`.
pub fn export(tape: &Tape, format: ExportFormat) -> Result<String, crate::Error> {
    let _ = (tape, format);
    Ok(String::new())
}
