//! The `edit` tool: one or more replacements in a file, each located in the content as
//! the model read it and applied together in memory (in order, each on the result of the
//! one before, only when that fails), then written once, atomically, so either every
//! edit lands or none does.
//! Matching (exact, then tolerant, then the closest candidate for the error) lives in
//! `edit_match.rs`. A CRLF file is edited as LF and written back as CRLF, a BOM is
//! kept, and a missing final newline stays missing.

use std::io;
use std::path::Path;

use rab_agent::{
    ExecutionMode, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::json;

use crate::Workspace;
use crate::edit_match::{self, MatchKind, Miss, Splice};
use crate::handle::FileHandle;
use crate::read::missing_file_message;
use crate::text_diff;

/// Replaces text in a file.
pub struct Edit {
    ws: Workspace,
}

impl Edit {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `edit`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// The file to change.
    #[schemars(description = "")]
    pub path: String,
    /// The replacements, each matched in the file as read.
    #[serde(deserialize_with = "array_or_json_string")]
    #[schemars(description = "")]
    pub edits: Vec<Replacement>,
}

/// One replacement.
#[derive(Deserialize, JsonSchema)]
#[schemars(inline, description = "")]
pub struct Replacement {
    /// Text to replace.
    #[serde(alias = "old_string", alias = "oldText")]
    #[schemars(description = "")]
    pub old_text: String,
    /// Its replacement.
    #[serde(alias = "new_string", alias = "newText")]
    #[schemars(description = "")]
    pub new_text: String,
    /// Replace every match instead of requiring one.
    #[schemars(description = "")]
    pub replace_all: Option<bool>,
}

/// The edits as an array, or as a string holding a JSON array: some models stringify
/// nested arguments, and rejecting that would cost a turn for no reason.
fn array_or_json_string<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Replacement>, D::Error> {
    let value = match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => serde_json::from_str(&s).map_err(D::Error::custom)?,
        other => other,
    };
    serde_json::from_value(value).map_err(D::Error::custom)
}

impl Tool for Edit {
    type Args = Args;
    const NAME: &'static str = "edit";
    const LEVEL: ToolLevel = ToolLevel::Edit;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["Edit", "MultiEdit"],
        covered_by: &["write"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(args.path.clone())
    }

    fn description(&self) -> String {
        "Replace text in a file: each old_text must match exactly once (add nearby lines to \
         make it unique) unless replace_all. Edits match the file as read; all or none."
            .to_owned()
    }

    // Two edits of one file in the same turn must not interleave.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    fn preview(&self, args: &Args) -> Option<String> {
        let path = self.ws.resolve(&args.path);
        Some(match apply_edits(&self.ws, &path, &args.edits) {
            Ok(applied) => applied.diff,
            Err(e) => format!("(this edit will fail: {e})"),
        })
    }

    fn doomed(&self, args: &Args) -> Option<String> {
        // An editor's buffer (ACP) may hold other text than the disk: only the run,
        // which reads it, can tell.
        let editor = self.ws.editor();
        if editor.reader().is_some() || editor.writer().is_some() {
            return None;
        }
        let path = self.ws.resolve(&args.path);
        apply_edits(&self.ws, &path, &args.edits).err().map(|e| e.to_string())
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let (path, file) = self.ws.resolve_handle(&args.path, crate::sandbox::Access::Write)?;
        let editor = self.ws.editor();
        if editor.reader().is_some() || editor.writer().is_some() {
            return self.edit_in_editor(&path, &file, &args.edits).await;
        }
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || edit_file(&ws, &file, &path, &args.edits))
            .await
            .map_err(|e| ToolError::Model(format!("edit failed: {e}")))?
    }
}

impl Edit {
    /// The edit made on the editor's text of the file (unsaved changes included) and
    /// written through the editor, where it reads and writes files.
    async fn edit_in_editor(
        &self,
        path: &Path,
        file: &FileHandle,
        edits: &[Replacement],
    ) -> Result<ToolOutput, ToolError> {
        let shown = self.ws.display(path);
        check_edits(edits)?;
        let from_editor = match self.ws.editor().reader() {
            Some(e) => e.read(path).await.ok(),
            None => None,
        };
        // A file the editor does not have is read from the disk (which says if it is
        // missing).
        let content = match from_editor {
            Some(text) => text,
            None => read_text_at(&self.ws, file, path, &shown)?,
        };
        let applied = apply_to(&content, path, shown, edits)?;
        match self.ws.editor().writer() {
            Some(e) => e
                .write(path, applied.on_disk.clone())
                .await
                .map_err(|e| ToolError::Model(format!("cannot write {}: {e}", applied.shown)))?,
            None => file
                .write_atomic(applied.on_disk.as_bytes())
                .map_err(|e| ToolError::Model(format!("cannot write {}: {e}", applied.shown)))?,
        }
        Ok(edit_output(applied, edits.len()))
    }
}

/// The edits applied in memory: what would be written and the diff.
pub(crate) struct Applied {
    shown: String,
    diff: String,
    /// The bytes to write.
    pub(crate) on_disk: String,
    /// Per edit that needed tolerance: its number and what was tolerated.
    notes: Vec<(usize, Vec<String>)>,
}

pub(crate) fn apply_edits(
    ws: &Workspace,
    path: &Path,
    edits: &[Replacement],
) -> Result<Applied, ToolError> {
    let file = handle_for(ws, path)?;
    apply_edits_at(ws, &file, path, edits)
}

/// [`apply_edits`] on the file `file` pins (`path` as the model named it).
fn apply_edits_at(
    ws: &Workspace,
    file: &FileHandle,
    path: &Path,
    edits: &[Replacement],
) -> Result<Applied, ToolError> {
    let shown = ws.display(path);
    check_edits(edits)?;
    let content = read_text_at(ws, file, path, &shown)?;
    apply_to(&content, path, shown, edits)
}

/// A handle for `path` beneath the workspace's roots.
fn handle_for(ws: &Workspace, path: &Path) -> Result<FileHandle, ToolError> {
    FileHandle::new(path, ws.sandbox().roots())
        .map_err(|e| ToolError::Model(format!("cannot open {}: {e}", ws.display(path))))
}

/// The edits applied to `content`, the text of `path`. Each edit is located in the
/// file as the model read it, all are checked, and then they are applied together: an
/// edit the model sent twice lands once, two edits that change the same text are
/// refused, and an edit whose text became ambiguous only through another edit still
/// lands. Only when that fails are the edits applied in turn, each to the result of the
/// one before (a later edit may quote what an earlier one wrote).
fn apply_to(
    content: &str,
    path: &Path,
    shown: String,
    edits: &[Replacement],
) -> Result<Applied, ToolError> {
    let (encoding, original) = Encoding::decode(content);
    let hints = edit_match::Hints::for_path(path);
    let prepared: Vec<Prepared> = edits.iter().map(|e| Prepared::new(e, encoding)).collect();
    let (text, notes) = match as_read(&original, &prepared, hints, &shown) {
        Ok(done) => done,
        // Two edits that change the same text disagree on what the file becomes; and
        // the first edit sees the same text in turn as as read, so it would fail alike.
        Err(first) if first.overlap || first.at == 0 => {
            return Err(ToolError::Model(first.message));
        }
        Err(first) => match in_turn(&original, &prepared, hints, &shown) {
            Ok(done) => done,
            // The failure of the pass that got further says more.
            Err(second) if second.at > first.at => return Err(ToolError::Model(second.message)),
            Err(_) => return Err(ToolError::Model(first.message)),
        },
    };
    if text == original {
        return Err(ToolError::Model(format!("the edits leave {shown} unchanged")));
    }
    let diff = text_diff::unified(&original, &text, &shown, 3);
    Ok(Applied { shown, diff, on_disk: encoding.encode(&text), notes })
}

/// An edit's texts as matched: LF endings, the file's BOM not doubled.
struct Prepared {
    old: String,
    new: String,
    replace_all: bool,
}

impl Prepared {
    fn new(e: &Replacement, encoding: Encoding) -> Self {
        let mut old = e.old_text.replace("\r\n", "\n");
        let mut new = e.new_text.replace("\r\n", "\n");
        // The file's BOM is its own, not text: a model that copied it is not doubled.
        if encoding.has_bom() && old.starts_with('\u{feff}') == new.starts_with('\u{feff}') {
            old = old.trim_start_matches('\u{feff}').to_owned();
            new = new.trim_start_matches('\u{feff}').to_owned();
        } else if encoding.has_bom() {
            new = new.trim_start_matches('\u{feff}').to_owned();
        }
        Self { old, new, replace_all: e.replace_all.unwrap_or(false) }
    }

    fn apply(&self, text: &str, hints: edit_match::Hints) -> Result<edit_match::Applied, Miss> {
        edit_match::apply_with(text, &self.old, &self.new, self.replace_all, hints)
    }

    /// Whether `other` is the same edit.
    fn same(&self, other: &Self) -> bool {
        self.old == other.old && self.new == other.new && self.replace_all == other.replace_all
    }
}

/// Why a pass failed: the edit it failed at and the message.
struct Failed {
    at: usize,
    message: String,
    /// Two edits change the same text.
    overlap: bool,
}

/// Notes per edit that needed them: its number and what was tolerated.
type Notes = Vec<(usize, Vec<String>)>;

fn note_for(notes: &mut Notes, i: usize, applied: &edit_match::Applied) {
    if applied.kind == MatchKind::Tolerant || !applied.notes.is_empty() {
        notes.push((i + 1, applied.notes.clone()));
    }
}

/// Every edit located in `original`, checked against the others, and applied together.
fn as_read(
    original: &str,
    edits: &[Prepared],
    hints: edit_match::Hints,
    shown: &str,
) -> Result<(String, Notes), Failed> {
    let count = edits.len();
    let mut notes = Notes::new();
    let mut all: Vec<(usize, Splice)> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let applied = e.apply(original, hints).map_err(|miss| Failed {
            at: i,
            message: miss_message(&miss, shown, i, count, false),
            overlap: false,
        })?;
        note_for(&mut notes, i, &applied);
        all.extend(applied.splices.into_iter().map(|s| (i, s)));
    }
    all.sort_by_key(|(i, s)| (s.range.start, s.range.end, *i));
    let mut kept: Vec<(usize, Splice)> = Vec::with_capacity(all.len());
    let mut repeated: Vec<(usize, usize)> = Vec::new();
    for (i, s) in all {
        match kept.last() {
            Some((j, prev)) if *prev == s => {
                if !repeated.iter().any(|r| r.0 == i) {
                    repeated.push((i, *j));
                }
            }
            Some((j, prev)) if s.range.start < prev.range.end => {
                let lines = |r: &std::ops::Range<usize>| {
                    let first = original[..r.start].matches('\n').count() + 1;
                    let last = first
                        + original[r.start..r.end].trim_end_matches('\n').matches('\n').count();
                    if first == last {
                        format!("line {first}")
                    } else {
                        format!("lines {first}-{last}")
                    }
                };
                let (a, b) = ((*j).min(i), (*j).max(i));
                return Err(Failed {
                    at: b,
                    message: format!(
                        "edits {} and {} overlap in {shown} ({} and {} of the file as you read \
                         it): each edit must change its own text. Combine them into one edit. No \
                         edits were applied.",
                        a + 1,
                        b + 1,
                        lines(&prev.range),
                        lines(&s.range)
                    ),
                    overlap: true,
                });
            }
            _ => kept.push((i, s)),
        }
    }
    for (i, j) in repeated {
        notes.push((i + 1, vec![format!("the same change as edit {}: applied once", j + 1)]));
    }
    notes.sort_by_key(|(i, _)| *i);
    let splices: Vec<Splice> = kept.into_iter().map(|(_, s)| s).collect();
    Ok((edit_match::splice(original, &splices), notes))
}

/// The edits applied in turn, each to the result of the one before; an edit that
/// repeats an earlier one is not applied again.
fn in_turn(
    original: &str,
    edits: &[Prepared],
    hints: edit_match::Hints,
    shown: &str,
) -> Result<(String, Notes), Failed> {
    let count = edits.len();
    let mut text = original.to_owned();
    let mut notes = Notes::new();
    for (i, e) in edits.iter().enumerate() {
        if let Some(j) = edits[..i].iter().position(|earlier| earlier.same(e)) {
            notes.push((i + 1, vec![format!("the same change as edit {}: applied once", j + 1)]));
            continue;
        }
        let applied = e.apply(&text, hints).map_err(|miss| Failed {
            at: i,
            message: miss_message(&miss, shown, i, count, i > 0),
            overlap: false,
        })?;
        note_for(&mut notes, i, &applied);
        text = edit_match::splice(&text, &applied.splices);
    }
    Ok((text, notes))
}

/// The text `edit` would write after applying `edits` to `content`, the text of the
/// file at `path` (its extension picks the matching hints), or the message the model
/// would get; nothing is read or written. For the fuzz targets; not part of the stable
/// API.
#[doc(hidden)]
pub fn edit_text(content: &str, path: &Path, edits: &[Replacement]) -> Result<String, ToolError> {
    check_edits(edits)?;
    apply_to(content, path, path.display().to_string(), edits).map(|applied| applied.on_disk)
}

/// How a text file is stored: with a BOM, with CRLF endings. The edit tools change it
/// as LF text and store it as it was.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Encoding {
    bom: bool,
    crlf: bool,
}

impl Encoding {
    /// The file's encoding and its text as LF lines. Only a file with CRLF on every
    /// line is converted; a mixed file is edited as is, where the tolerant pass still
    /// matches its lines.
    pub(crate) fn decode(content: &str) -> (Self, String) {
        let (bom, body) = match content.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, content),
        };
        let crlf =
            body.contains("\r\n") && body.matches('\n').count() == body.matches("\r\n").count();
        let text = if crlf { body.replace("\r\n", "\n") } else { body.to_owned() };
        (Self { bom, crlf }, text)
    }

    /// Whether the file starts with a BOM.
    pub(crate) fn has_bom(self) -> bool {
        self.bom
    }

    /// `text` (LF) as the file stores it.
    pub(crate) fn encode(self, text: &str) -> String {
        let body = if self.crlf { text.replace('\n', "\r\n") } else { text.to_owned() };
        if self.bom { format!("\u{feff}{body}") } else { body }
    }
}

fn edit_file(
    ws: &Workspace,
    file: &FileHandle,
    path: &Path,
    edits: &[Replacement],
) -> Result<ToolOutput, ToolError> {
    // Read and written through one handle: the file that was checked is the one changed.
    let applied = apply_edits_at(ws, file, path, edits)?;
    file.write_atomic(applied.on_disk.as_bytes())
        .map_err(|e| ToolError::Model(format!("cannot write {}: {e}", applied.shown)))?;
    Ok(edit_output(applied, edits.len()))
}

/// What the model is told of edits made.
fn edit_output(applied: Applied, count: usize) -> ToolOutput {
    let Applied { shown, diff, notes, .. } = applied;
    let plural = if count == 1 { "" } else { "s" };
    let note: String = notes
        .iter()
        .map(|(i, n)| {
            let which = if count == 1 { String::new() } else { format!("edit {i}: ") };
            format!("\n{which}{}", n.join("; "))
        })
        .collect();
    let text = format!("edited {shown} ({count} edit{plural}){note}\n{}", diff.trim_end());
    ToolOutput::text(text).with_details(json!({"path": shown, "diff": diff}))
}

fn check_edits(edits: &[Replacement]) -> Result<(), ToolError> {
    if edits.is_empty() {
        return Err(ToolError::Model(
            "edits is empty: give at least one {old_text, new_text}".into(),
        ));
    }
    for (i, e) in edits.iter().enumerate() {
        let label = label(i, edits.len());
        if e.old_text.is_empty() {
            return Err(ToolError::Model(format!(
                "{label}old_text is empty; to create or overwrite a whole file use write"
            )));
        }
        if e.old_text == e.new_text {
            return Err(ToolError::Model(format!(
                "{label}old_text and new_text are identical; nothing to change"
            )));
        }
    }
    Ok(())
}

/// The UTF-8 text of the file `file` pins.
pub(crate) fn read_text_at(
    ws: &Workspace,
    file: &FileHandle,
    path: &Path,
    shown: &str,
) -> Result<String, ToolError> {
    // Changing a file means reading it, and what edit reads can reach the model (a
    // near match, a diff): a file read deny rules cover is refused before it is opened.
    if ws.read_filter().hides(path, false) || ws.read_filter().hides(file.real(), false) {
        return Err(ToolError::Model(format!(
            "{shown} is covered by a read deny rule: changing it means reading it, so it is \
             refused (nothing was read)"
        )));
    }
    let cannot = |e: io::Error| ToolError::Model(format!("cannot read {shown}: {e}"));
    match file.meta() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let msg = missing_file_message(ws, path);
            return Err(ToolError::Model(format!("{msg} (use write to create a new file)")));
        }
        Err(e) => return Err(cannot(e)),
        Ok(meta) if meta.is_dir => {
            return Err(ToolError::Model(format!("{shown} is a directory, not a file")));
        }
        // Reading a FIFO or a device could block forever.
        Ok(meta) if !meta.is_file => {
            return Err(ToolError::Model(format!("{shown} is not a regular file")));
        }
        Ok(_) => {}
    }
    let bytes = file.read().map_err(cannot)?;
    String::from_utf8(bytes).map_err(|_| {
        ToolError::Model(format!(
            "{shown} is not valid UTF-8 text, so edit cannot change it safely; use write to \
             replace it whole"
        ))
    })
}

/// `edit 2 of 3: ` when there are several edits, else nothing.
fn label(i: usize, count: usize) -> String {
    if count > 1 { format!("edit {} of {count}: ", i + 1) } else { String::new() }
}

/// The message for edit `i` of `count` that missed; `after`: it was matched against the
/// result of the edits before it.
pub(crate) fn miss_message(
    miss: &Miss,
    shown: &str,
    i: usize,
    count: usize,
    after: bool,
) -> String {
    let label = label(i, count);
    let after = if after { " (line numbers are after the earlier edits)" } else { "" };
    let none = if count > 1 { " No edits were applied." } else { "" };
    match miss {
        Miss::Ambiguous { lines } => {
            let mut list: Vec<String> = lines.iter().take(10).map(usize::to_string).collect();
            if lines.len() > 10 {
                list.push("…".to_owned());
            }
            format!(
                "{label}old_text matches {} places in {shown} (lines {}){after}; add surrounding \
                 lines to make it unique, or set replace_all to change every one.{none}",
                lines.len(),
                list.join(", ")
            )
        }
        Miss::NotFound { closest: Some(c) } => {
            let lines = if c.first_line == c.last_line {
                format!("line {}", c.first_line)
            } else {
                format!("lines {}-{}", c.first_line, c.last_line)
            };
            format!(
                "{label}old_text not found in {shown}. Closest match, {lines}{after} ({:.0}% \
                 similar):\n{}\nCopy old_text exactly from the file (read it again if \
                 unsure).{none}",
                c.similarity * 100.0,
                c.numbered
            )
        }
        Miss::Unclear { region, why } => format!(
            "{label}old_text matches lines {}-{} of {shown}{after} only once whitespace, quotes \
             or Unicode form are ignored, and rab cannot tell which of the file's characters \
             to keep: {why}. The file has:\n{}\nCopy old_text and the parts of new_text you \
             keep exactly from these lines.{none}",
            region.first_line, region.last_line, region.numbered
        ),
        Miss::NotFound { closest: None } => format!(
            "{label}old_text not found in {shown}, and nothing similar is there; read the file \
             to see its current content.{none}"
        ),
        Miss::Partial { lines, numbered } => {
            let which = if lines.len() == 1 { "line" } else { "lines" };
            let list: Vec<String> = lines.iter().take(10).map(usize::to_string).collect();
            format!(
                "{label}old_text occurs in {shown} only inside longer words or numbers ({which} \
                 {}){after}, so it is not the text you meant (a stale or clipped copy?). The \
                 file has:\n{numbered}\nCopy old_text exactly from these lines, whole words \
                 and numbers included.{none}",
                list.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests;
