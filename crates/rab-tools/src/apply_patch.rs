//! The `apply_patch` tool, for the models trained on its envelope (see
//! `patch_parse.rs`): it adds, deletes, moves and changes files. Every chunk is located
//! as `edit` locates text — exactly, then tolerantly, written faithfully — and the whole
//! patch is checked before anything is written: every file changes, or none does.

use std::collections::HashMap;
use std::path::PathBuf;

use rab_agent::{
    ExecutionMode, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::Workspace;
use crate::edit::{Encoding, read_text_at};
use crate::edit_forms::forms;
use crate::edit_lines::{Replaced, replace_lines};
use crate::edit_match::{Hints, Miss};
use crate::handle::{FileHandle, Staged};
use crate::patch_parse::{Chunk, FileOp, parse};
use crate::text_diff;

/// The grammar the model's patch follows, sent with the tool where the API constrains
/// free-form input by one (a Lark grammar).
pub const GRAMMAR: &str = r#"start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"#;

/// The tool's name.
pub const NAME: &str = "apply_patch";

/// Adds, deletes, moves and changes files with one patch.
pub struct ApplyPatch {
    ws: Workspace,
}

impl ApplyPatch {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `apply_patch` (as a JSON tool; as a free-form tool the text is `input`).
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    #[schemars(description = "The whole patch, from *** Begin Patch to *** End Patch.")]
    pub input: String,
}

impl Tool for ApplyPatch {
    type Args = Args;
    const NAME: &'static str = NAME;
    const LEVEL: ToolLevel = ToolLevel::Edit;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &[],
        covered_by: &["edit", "write"],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        let files = Tool::written_paths(self, args);
        Some(if files.is_empty() {
            "(a patch rab cannot read)".to_owned()
        } else {
            files.join(", ")
        })
    }

    fn description(&self) -> String {
        "Edit files with a patch: *** Begin Patch, then per file *** Add File: PATH (+ lines), \
         *** Delete File: PATH, or *** Update File: PATH (optionally *** Move to: PATH) with \
         chunks: @@ [a line locating it], then ' ' kept, '-' removed, '+' added lines (about 3 \
         kept around each change); *** End Patch. Relative paths; all files change or none."
            .to_owned()
    }

    fn grammar(&self) -> Option<String> {
        Some(GRAMMAR.to_owned())
    }

    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    fn written_paths(&self, args: &Args) -> Vec<String> {
        let Ok(patch) = parse(&args.input) else { return Vec::new() };
        let mut out = Vec::new();
        for op in &patch.ops {
            out.push(op.path().to_owned());
            if let FileOp::Update { move_to: Some(dest), .. } = op {
                out.push(dest.clone());
            }
        }
        out
    }

    fn preview(&self, args: &Args) -> Option<String> {
        Some(match plan(&self.ws, &args.input) {
            Ok(changes) => changes.iter().map(|c| c.diff.as_str()).collect::<Vec<_>>().join("\n"),
            Err(e) => format!("(this patch will fail: {e})"),
        })
    }

    fn doomed(&self, args: &Args) -> Option<String> {
        plan(&self.ws, &args.input).err().map(|e| e.to_string())
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || apply(&ws, &args.input))
            .await
            .map_err(|e| ToolError::Model(format!("apply_patch failed: {e}")))?
    }
}

/// What the patch does to one file.
struct Change {
    /// The file, pinned when it was checked: every read and write goes through it.
    file: FileHandle,
    shown: String,
    /// `A`dded, `M`odified, `D`eleted.
    kind: char,
    /// The bytes to write; `None` deletes the file.
    bytes: Option<String>,
    diff: String,
    notes: Vec<String>,
}

/// Checks and applies a patch.
pub(crate) fn apply(ws: &Workspace, input: &str) -> Result<ToolOutput, ToolError> {
    let changes = plan(ws, input)?;
    commit(&changes)?;
    let mut text = String::from("Success. Updated the following files:");
    for c in &changes {
        text.push_str(&format!("\n{} {}", c.kind, c.shown));
        for note in &c.notes {
            text.push_str(&format!(" ({note})"));
        }
    }
    let diff: String = changes.iter().map(|c| c.diff.as_str()).collect::<Vec<_>>().join("\n");
    text.push('\n');
    text.push_str(diff.trim_end());
    let files: Vec<_> =
        changes.iter().map(|c| json!({"path": c.shown, "kind": c.kind.to_string()})).collect();
    Ok(ToolOutput::text(text).with_details(json!({"files": files, "diff": diff})))
}

/// Works out every file's new content, reading and checking all of them first.
fn plan(ws: &Workspace, input: &str) -> Result<Vec<Change>, ToolError> {
    let patch = parse(input).map_err(|e| {
        ToolError::Model(format!("apply_patch could not read the patch: {e}. Nothing was changed."))
    })?;
    // Files as the patch leaves them so far: `None` is deleted.
    let mut state: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut originals: HashMap<PathBuf, (Option<String>, Encoding)> = HashMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    let mut notes: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut handles: HashMap<PathBuf, FileHandle> = HashMap::new();
    let count = patch.ops.len();
    for (index, op) in patch.ops.iter().enumerate() {
        // Errors name the operation when there are several.
        let failed = |what: String| {
            let which = if count > 1 {
                format!("operation {} of {count}: ", index + 1)
            } else {
                String::new()
            };
            ToolError::Model(format!("{which}{what}. Nothing was changed."))
        };
        // A file reached through a symbolic link is the file: two names of it see
        // each other's changes.
        let path = pin(ws, op.path(), &mut handles)?;
        let shown = ws.display(&path);
        let current = load(ws, &path, &shown, &handles, &mut state, &mut originals, &mut order)?;
        match op {
            FileOp::Add { lines, .. } => {
                if current.is_some() {
                    return Err(failed(format!(
                        "*** Add File: {shown} already exists; change it with *** Update File, \
                         or delete it first with *** Delete File"
                    )));
                }
                let mut text = lines.join("\n");
                if !lines.is_empty() {
                    text.push('\n');
                }
                state.insert(path, Some(text));
            }
            FileOp::Delete { .. } => {
                if current.is_none() {
                    return Err(failed(format!("*** Delete File: {shown} does not exist")));
                }
                state.insert(path, None);
            }
            FileOp::Update { move_to, chunks, .. } => {
                let Some(mut text) = current else {
                    return Err(failed(format!(
                        "*** Update File: {shown} does not exist (use *** Add File to create it)"
                    )));
                };
                let mut cursor = 0;
                for (n, chunk) in chunks.iter().enumerate() {
                    if chunk.old == chunk.new {
                        return Err(failed(format!(
                            "chunk {} of {shown} changes nothing: its '-' and '+' lines are the \
                             same",
                            n + 1
                        )));
                    }
                    // Each `@@` line is found after the one before; the chunk is looked
                    // for from the last one's line (its first kept line may be it).
                    let mut from = cursor;
                    for (h, header) in chunk.headers.iter().enumerate() {
                        let after = if h == 0 { from } else { from + 1 };
                        from = locate_header(&text, after, header).ok_or_else(|| {
                            failed(format!(
                                "chunk {} of {shown}: no line after line {after} reads \"@@ \
                                 {header}\"",
                                n + 1
                            ))
                        })?;
                    }
                    if chunk.old.is_empty() && !chunk.headers.is_empty() {
                        return Err(failed(format!(
                            "chunk {} of {shown} only adds lines: add the kept lines around \
                             the place (with ' ') so rab knows where under \"@@ {}\" they go",
                            n + 1,
                            chunk.headers.join(" / ")
                        )));
                    }
                    // Under a header, the chunk is looked for before the header's text
                    // comes again (`def save` of the next class).
                    let to = match chunk.headers.last() {
                        Some(h) => locate_header(&text, from + 1, h).unwrap_or(usize::MAX),
                        None => usize::MAX,
                    };
                    let hints = Hints::for_path(&path);
                    let mut replaced = replace_chunk(&text, (from, to), chunk, hints)
                        .map_err(|miss| failed(miss_text(&miss, &shown, n + 1, chunks.len())))?;
                    if hints.prose && chunk.new.iter().any(|l| l.contains('|')) {
                        let (padded, changed) = crate::edit_table::repad_text(&text, replaced.text);
                        replaced.text = padded;
                        if changed {
                            let note = "padded the table rows to the table's columns".to_owned();
                            replaced.notes.push(note);
                        }
                    }
                    text = replaced.text;
                    cursor = replaced.next_line;
                    let file_notes = notes.entry(path.clone()).or_default();
                    for note in replaced.notes {
                        if !file_notes.contains(&note) {
                            file_notes.push(note);
                        }
                    }
                }
                match move_to {
                    Some(dest) => {
                        let dest = pin(ws, dest, &mut handles)?;
                        let dest_shown = ws.display(&dest);
                        let at_dest = load(
                            ws,
                            &dest,
                            &dest_shown,
                            &handles,
                            &mut state,
                            &mut originals,
                            &mut order,
                        )?;
                        if at_dest.is_some() && dest != path {
                            return Err(failed(format!(
                                "*** Move to: {dest_shown} already exists"
                            )));
                        }
                        // The moved file keeps its line endings and BOM.
                        let encoding = originals.get(&path).map(|(_, e)| *e);
                        if let (Some(e), Some((None, dest_encoding))) =
                            (encoding, originals.get_mut(&dest))
                        {
                            *dest_encoding = e;
                        }
                        state.insert(path, None);
                        state.insert(dest, Some(text));
                    }
                    None => {
                        state.insert(path, Some(text));
                    }
                }
            }
        }
    }
    let mut changes = Vec::new();
    for path in order {
        let (before, encoding) = originals.remove(&path).unwrap_or_default();
        let after = state.remove(&path).flatten();
        if before == after {
            continue;
        }
        let shown = ws.display(&path);
        let kind = match (&before, &after) {
            (None, _) => 'A',
            (_, None) => 'D',
            _ => 'M',
        };
        let diff = text_diff::unified(
            before.as_deref().unwrap_or_default(),
            after.as_deref().unwrap_or_default(),
            &shown,
            3,
        );
        let bytes = after.map(|text| encoding.encode(&text));
        let notes = notes.remove(&path).unwrap_or_default();
        let Some(file) = handles.remove(&path) else { continue };
        changes.push(Change { file, shown, kind, bytes, diff, notes });
    }
    if changes.is_empty() {
        return Err(ToolError::Model(
            "the patch leaves every file as it is. Nothing was changed.".to_owned(),
        ));
    }
    Ok(changes)
}

/// Checks the patch's path `given` and pins the file: its real path, the key it goes by.
fn pin(
    ws: &Workspace,
    given: &str,
    handles: &mut HashMap<PathBuf, FileHandle>,
) -> Result<PathBuf, ToolError> {
    let (_, file) = ws.resolve_handle(given, crate::sandbox::Access::Write)?;
    let path = file.real().to_path_buf();
    handles.entry(path.clone()).or_insert(file);
    Ok(path)
}

/// A file's content as the patch has left it so far, read from disk the first time.
#[allow(clippy::too_many_arguments)]
fn load(
    ws: &Workspace,
    path: &PathBuf,
    shown: &str,
    handles: &HashMap<PathBuf, FileHandle>,
    state: &mut HashMap<PathBuf, Option<String>>,
    originals: &mut HashMap<PathBuf, (Option<String>, Encoding)>,
    order: &mut Vec<PathBuf>,
) -> Result<Option<String>, ToolError> {
    if let Some(current) = state.get(path) {
        return Ok(current.clone());
    }
    let Some(file) = handles.get(path) else {
        return Err(ToolError::Model(format!("{shown}: not checked. Nothing was changed.")));
    };
    let (text, encoding) = match file.meta() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, Encoding::default()),
        Err(e) => {
            return Err(ToolError::Model(format!(
                "cannot read {shown}: {e}. Nothing was changed."
            )));
        }
        Ok(_) => {
            let content = read_text_at(ws, file, path, shown).map_err(|e| match e {
                ToolError::Model(m) => ToolError::Model(format!("{m}. Nothing was changed.")),
                other => other,
            })?;
            let (encoding, text) = Encoding::decode(&content);
            (Some(text), encoding)
        }
    };
    originals.insert(path.clone(), (text.clone(), encoding));
    state.insert(path.clone(), text.clone());
    order.push(path.clone());
    Ok(text)
}

/// Applies a chunk as written or, when its lines are nowhere, in the forms `edit` also
/// tries (line numbers pasted from `read`, over- or under-escaped text).
fn replace_chunk(
    text: &str,
    (from, to): (usize, usize),
    chunk: &Chunk,
    hints: Hints,
) -> Result<Replaced, Miss> {
    let miss = match replace_lines(text, from, to, &chunk.old, &chunk.new, chunk.at_end, hints) {
        Err(miss @ Miss::NotFound { .. }) => miss,
        other => return other,
    };
    let lines = |t: &str| t.split('\n').map(str::to_owned).collect::<Vec<String>>();
    for form in forms(&chunk.old.join("\n"), &chunk.new.join("\n"), hints.python) {
        let new = if chunk.new.is_empty() { Vec::new() } else { lines(&form.new) };
        match replace_lines(text, from, to, &lines(&form.old), &new, chunk.at_end, hints) {
            Ok(mut replaced) => {
                replaced.notes.insert(0, form.note);
                return Ok(replaced);
            }
            Err(Miss::NotFound { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Err(miss)
}

/// The first line from `from` on that reads `header` (as the tolerant pass compares
/// lines, or starting with it).
fn locate_header(text: &str, from: usize, header: &str) -> Option<usize> {
    let wanted = crate::edit_tokens::normalize(header);
    let needle = crate::edit_match::needle(&wanted);
    text.split('\n')
        .enumerate()
        .skip(from)
        .filter(|(_, line)| {
            needle.is_none_or(|n| line.contains(n) || crate::edit_tokens::has_invisible(line))
        })
        .find(|(_, line)| {
            let line = crate::edit_tokens::normalize(line);
            line == wanted || (!wanted.is_empty() && line.starts_with(&wanted))
        })
        .map(|(i, _)| i)
}

/// Why a chunk did not apply, for the model.
fn miss_text(miss: &Miss, shown: &str, n: usize, count: usize) -> String {
    let which = if count > 1 { format!("chunk {n} of {count}") } else { "the chunk".to_owned() };
    match miss {
        Miss::Ambiguous { lines } => format!(
            "{which} for {shown} matches {} places (lines {}); add kept lines around the change \
             or an \"@@ …\" line naming the function or class",
            lines.len(),
            lines.iter().take(10).map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
        Miss::NotFound { closest: Some(c) } => format!(
            "{which}: its ' ' and '-' lines are not found in {shown}. Nearest, lines {}-{} \
             ({:.0}% similar):\n{}\nCopy those lines exactly from the file",
            c.first_line,
            c.last_line,
            c.similarity * 100.0,
            c.numbered
        ),
        Miss::NotFound { closest: None } => format!(
            "{which}: its ' ' and '-' lines are not found in {shown}, and nothing similar is \
             there; read the file again"
        ),
        Miss::Unclear { region, why } => format!(
            "{which} matches lines {}-{} of {shown} only once whitespace, quotes or Unicode form \
             are ignored, and rab cannot tell which of the file's characters to keep: {why}. \
             The file has:\n{}\nCopy the ' ' and '-' lines exactly from these lines",
            region.first_line, region.last_line, region.numbered
        ),
        Miss::Partial { numbered, .. } => format!(
            "{which}: its lines occur in {shown} only inside longer words or numbers:\n\
             {numbered}\nCopy those lines exactly from the file"
        ),
    }
}

/// Writes every change, or none: all new contents are staged next to their files
/// first; then they are renamed into place and deleted files removed. A failure while
/// staging changes nothing; one while renaming puts back what was already replaced.
fn commit(changes: &[Change]) -> Result<(), ToolError> {
    let fail = |shown: &str, e: std::io::Error| {
        ToolError::Model(format!("cannot write {shown}: {e}. Nothing was changed."))
    };
    let mut staged: Vec<(usize, Staged)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if let Some(bytes) = &c.bytes {
            staged.push((i, c.file.stage(bytes.as_bytes()).map_err(|e| fail(&c.shown, e))?));
        }
    }
    // What each file held, to put back if a later step fails.
    let backups: Vec<Option<Vec<u8>>> = changes.iter().map(|c| c.file.read().ok()).collect();
    let mut done: Vec<usize> = Vec::new();
    let mut result = Ok(());
    for (i, s) in staged {
        match s.commit() {
            Ok(()) => done.push(i),
            Err(e) => {
                result = Err(fail(&changes[i].shown, e));
                break;
            }
        }
    }
    if result.is_ok() {
        for (i, c) in changes.iter().enumerate().filter(|(_, c)| c.bytes.is_none()) {
            match c.file.remove() {
                Ok(()) => done.push(i),
                Err(e) => {
                    result = Err(fail(&c.shown, e));
                    break;
                }
            }
        }
    }
    if result.is_err() {
        for i in done {
            let c = &changes[i];
            let restored = match &backups[i] {
                Some(bytes) => c.file.write_atomic(bytes),
                None => c.file.remove(),
            };
            if let Err(e) = restored {
                tracing::warn!("apply_patch could not restore {}: {e}", c.shown);
            }
        }
    }
    result
}

#[cfg(test)]
mod tests;
