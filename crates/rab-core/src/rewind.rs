//! Rewind: a session's files (and, if asked, its conversation) back to a point of its
//! active branch, from the checkpoints on the tape (`checkpoint.rs`).
//!
//! For each file the agent changed after the point, the content it had then is the
//! first `checkpoint` after the point. A file whose content on disk is not what rab's
//! last change left (the last `checkpoint_after`) was changed by someone else: it is
//! listed and left alone unless forced. What each file held just before the rewind is
//! stored too, and the rewind is an entry on the tape (`rewind`), so it can be undone.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rab_session::{CheckpointStore, Entry, EntryBody, Tape};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{CHECKPOINT, CHECKPOINT_AFTER, Checkpoint, FileState, snapshot};

pub use rab_session::checkpoints::REWIND;
use rab_session::checkpoints::REWIND_ENTRY_TYPES;

/// One file a rewind wrote (or removed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// Absolute path.
    pub path: String,
    /// Its content just before the rewind (stored); `None`: it did not exist.
    pub before: Option<String>,
    /// The content the rewind gave it; `None`: removed.
    pub after: Option<String>,
}

/// The data of a `rewind` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindRecord {
    /// The point rewound to (`None`: before the first entry).
    pub target: Option<String>,
    /// The conversation went back too: the leaf it left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_leaf: Option<String>,
    /// The rewind this one undoes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The files written.
    pub files: Vec<Restored>,
}

/// What a rewind did and did not do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files given back their earlier content (or removed).
    pub restored: Vec<Restored>,
    /// Files that already had it.
    pub unchanged: Vec<String>,
    /// Files left alone, with why (changed by someone else since rab's last change).
    pub conflicts: Vec<(String, String)>,
    /// Files that cannot be restored, with why (too large to checkpoint, pruned).
    pub unrestorable: Vec<(String, String)>,
    /// Checkpoint and rewind entries passed over: their seal is not this rab's (a
    /// session file written elsewhere, or changed by hand).
    pub ignored: usize,
    /// The `rewind` entry written.
    pub entry: Option<String>,
}

impl Report {
    /// What it did, a line each (for people).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.restored {
            let how = if r.after.is_none() { "removed" } else { "restored" };
            out.push(format!("{how} {}", r.path));
        }
        if !self.unchanged.is_empty() {
            out.push(format!("{} file(s) already as they were", self.unchanged.len()));
        }
        for (path, why) in &self.conflicts {
            out.push(format!("left alone {path}: {why} (--force overwrites it)"));
        }
        for (path, why) in &self.unrestorable {
            out.push(format!("cannot restore {path}: {why}"));
        }
        if self.ignored > 0 {
            out.push(format!(
                "passed over {} checkpoint entr(ies) this rab did not write (no valid seal: \
                 a session file from elsewhere, or changed by hand)",
                self.ignored
            ));
        }
        out
    }
}

/// What to rewind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct What {
    /// The files.
    pub files: bool,
    /// The conversation (the next prompt continues from the point).
    pub conversation: bool,
    /// Overwrite files changed by someone else too.
    pub force: bool,
}

/// One file to set: the content wanted, and what rab last left in it (`None`: no
/// record of that).
struct Want {
    path: String,
    want: FileState,
    last: Option<FileState>,
}

/// Rewinds the active branch of `tape` to `target` (an entry id on it; `None`: before
/// the first entry).
pub fn rewind(
    tape: &mut Tape,
    store: &CheckpointStore,
    target: Option<&str>,
    what: What,
) -> Result<Report, String> {
    // The record is written after the files: make sure it can be, before any file is.
    tape.claim().map_err(|e| e.to_string())?;
    let branch = tape.active_branch();
    let start = match target {
        None => 0,
        Some(id) => {
            branch
                .iter()
                .position(|e| e.id == id)
                .ok_or_else(|| format!("entry {id} is not on the session's current branch"))?
                + 1
        }
    };
    let mut report = Report::default();
    let mut wants: Vec<Want> = Vec::new();
    let mut last: HashMap<String, FileState> = HashMap::new();
    // What each call found in its files, to tell the calls that changed them from those
    // that did not (denied, failed): a file no one of rab's changed is not rab's to set
    // back, even with --force. A call with no record of what it left counts as changing.
    let mut found: HashMap<(String, String), Option<String>> = HashMap::new();
    let mut changed: HashSet<String> = HashSet::new();
    for entry in in_order(tape, &branch, start) {
        let EntryBody::Custom { custom_type, data } = &entry.body else { continue };
        if !REWIND_ENTRY_TYPES.contains(&custom_type.as_str()) {
            continue;
        }
        if !store.is_sealed(data) {
            report.ignored += 1;
            continue;
        }
        let (befores, afters): (Vec<FileState>, Vec<FileState>) = match custom_type.as_str() {
            CHECKPOINT => match serde_json::from_value::<Checkpoint>(data.clone()) {
                Ok(c) => {
                    for f in &c.files {
                        found.insert((c.call_id.clone(), f.path.clone()), f.hash.clone());
                    }
                    (c.files, Vec::new())
                }
                Err(_) => continue,
            },
            CHECKPOINT_AFTER => match serde_json::from_value::<Checkpoint>(data.clone()) {
                Ok(c) => {
                    for f in &c.files {
                        match found.remove(&(c.call_id.clone(), f.path.clone())) {
                            Some(before) if before == f.hash && f.skipped.is_none() => {}
                            _ => {
                                changed.insert(f.path.clone());
                            }
                        }
                    }
                    (Vec::new(), c.files)
                }
                Err(_) => continue,
            },
            REWIND => match serde_json::from_value::<RewindRecord>(data.clone()) {
                Ok(r) => {
                    changed.extend(r.files.iter().map(|f| f.path.clone()));
                    r.files
                        .into_iter()
                        .map(|f| {
                            let state =
                                |hash| FileState { path: f.path.clone(), hash, skipped: None };
                            (state(f.before), state(f.after))
                        })
                        .unzip()
                }
                Err(_) => continue,
            },
            _ => continue,
        };
        for b in befores {
            if !wants.iter().any(|w| w.path == b.path) {
                wants.push(Want { path: b.path.clone(), want: b, last: None });
            }
        }
        for a in afters {
            last.insert(a.path.clone(), a);
        }
    }
    changed.extend(found.into_keys().map(|(_, path)| path));
    wants.retain(|w| changed.contains(&w.path));
    for w in &mut wants {
        w.last = last.remove(&w.path);
    }
    let left_leaf = tape.leaf().map(|e| e.id.clone());
    if what.files {
        set_files(store, wants, what.force, &mut report);
    }
    if what.conversation {
        tape.branch_from(target).map_err(|e| e.to_string())?;
    }
    let record = RewindRecord {
        target: target.map(str::to_owned),
        left_leaf: what.conversation.then_some(left_leaf).flatten(),
        undoes: None,
        files: report.restored.clone(),
    };
    report.entry = Some(append(tape, store, &record)?);
    Ok(report)
}

/// The entries of `branch` from `start`, with the branches a conversation rewind left
/// put back in front of that rewind's entry, as they happened: their calls changed the
/// files on disk too, so a later files rewind must see them.
fn in_order<'a>(tape: &'a Tape, branch: &[&'a Entry], start: usize) -> Vec<&'a Entry> {
    let mut seen: HashSet<&str> = branch.iter().map(|e| e.id.as_str()).collect();
    let mut out = Vec::new();
    for entry in &branch[start..] {
        left_branch(tape, entry, &mut seen, &mut out, 0);
        out.push(*entry);
    }
    out
}

/// Appends what `entry` (a conversation rewind) left behind, oldest first, down to an
/// entry already seen; the rewinds in it are followed the same way (to a depth of 64:
/// the tape is a file, and its nesting must not run the stack out).
fn left_branch<'a>(
    tape: &'a Tape,
    entry: &'a Entry,
    seen: &mut HashSet<&'a str>,
    out: &mut Vec<&'a Entry>,
    depth: usize,
) {
    let EntryBody::Custom { custom_type, data } = &entry.body else { return };
    if custom_type != REWIND || depth > 64 {
        return;
    }
    let Some(leaf) = data.get("leftLeaf").and_then(|v| v.as_str()) else { return };
    let mut segment = Vec::new();
    let mut at = tape.entry(leaf);
    while let Some(e) = at {
        if !seen.insert(e.id.as_str()) {
            break;
        }
        segment.push(e);
        at = e.parent_id.as_deref().and_then(|p| tape.entry(p));
    }
    for e in segment.into_iter().rev() {
        left_branch(tape, e, seen, out, depth + 1);
        out.push(e);
    }
}

/// Undoes the last rewind on the active branch: its files back to what they held
/// before it, and the conversation back to the leaf it left.
pub fn undo(tape: &mut Tape, store: &CheckpointStore, force: bool) -> Result<Report, String> {
    tape.claim().map_err(|e| e.to_string())?;
    // The newest rewind not undone already (a files-only rewind and its undo are both on
    // the branch).
    let mut undone: Vec<String> = Vec::new();
    let mut ignored = 0;
    let (id, record) = tape
        .active_branch()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EntryBody::Custom { custom_type, data } if custom_type == REWIND => {
                if !store.is_sealed(data) {
                    ignored += 1;
                    return None;
                }
                let r: RewindRecord = serde_json::from_value(data.clone()).ok()?;
                match &r.undoes {
                    Some(earlier) => {
                        undone.push(earlier.clone());
                        None
                    }
                    None if undone.contains(&e.id) => None,
                    None => Some((e.id.clone(), r)),
                }
            }
            _ => None,
        })
        .ok_or("no rewind to undo on this branch")?;
    let state = |path: &str, hash: &Option<String>| FileState {
        path: path.to_owned(),
        hash: hash.clone(),
        skipped: None,
    };
    let wants = record
        .files
        .iter()
        .map(|f| Want {
            path: f.path.clone(),
            want: state(&f.path, &f.before),
            last: Some(state(&f.path, &f.after)),
        })
        .collect();
    let mut report = Report { ignored, ..Report::default() };
    set_files(store, wants, force, &mut report);
    if let Some(leaf) = &record.left_leaf {
        tape.branch_from(Some(leaf)).map_err(|e| e.to_string())?;
    }
    let undone = RewindRecord {
        target: None,
        left_leaf: None,
        undoes: Some(id),
        files: report.restored.clone(),
    };
    report.entry = Some(append(tape, store, &undone)?);
    Ok(report)
}

/// Records on `tape` that `files` were set to their content at `target` (a fork with
/// the files of a point), so `/rewind undo` there puts them back.
pub fn record(
    tape: &mut Tape,
    store: &CheckpointStore,
    target: Option<&str>,
    files: &[Restored],
) -> Result<String, String> {
    let record = RewindRecord {
        target: target.map(str::to_owned),
        left_leaf: None,
        undoes: None,
        files: files.to_vec(),
    };
    append(tape, store, &record)
}

fn append(
    tape: &mut Tape,
    store: &CheckpointStore,
    record: &RewindRecord,
) -> Result<String, String> {
    let data = store.seal(serde_json::to_value(record).map_err(|e| e.to_string())?);
    let body = EntryBody::Custom { custom_type: REWIND.to_owned(), data };
    tape.append(body).map(|e| e.id.clone()).map_err(|e| format!("cannot write the session: {e}"))
}

/// Gives each file its wanted content, unless someone else changed it since rab did.
fn set_files(store: &CheckpointStore, wants: Vec<Want>, force: bool, report: &mut Report) {
    for Want { path, want, last } in wants {
        if let Some(why) = &want.skipped {
            report.unrestorable.push((path, format!("it was not checkpointed ({why})")));
            continue;
        }
        let now = snapshot(store, Path::new(&path), false);
        if now.hash == want.hash && now.skipped.is_none() {
            report.unchanged.push(path);
            continue;
        }
        let changed_elsewhere = match &last {
            Some(l) => l.skipped.is_some() || l.hash != now.hash,
            None => true,
        };
        if changed_elsewhere && !force {
            let why = if last.is_some() {
                "changed since rab's last change to it"
            } else {
                "rab has no record of what its last change left"
            };
            report.conflicts.push((path, why.to_owned()));
            continue;
        }
        let content = match &want.hash {
            Some(hash) => match store.get(hash) {
                Ok(bytes) => Some(bytes),
                Err(e) => {
                    report.unrestorable.push((path, e.to_string()));
                    continue;
                }
            },
            None => None,
        };
        // What it holds now, kept, so the rewind can be undone.
        let before = snapshot(store, Path::new(&path), true);
        if let Some(why) = before.skipped {
            report.unrestorable.push((path, format!("its current content cannot be kept ({why})")));
            continue;
        }
        // Through the recorded real path, never a link: where one was put on the way
        // since (a folder replaced by a link to someone else's), this fails and says so.
        let written =
            rab_tools::handle::FileHandle::recorded(Path::new(&path)).and_then(
                |file| match &content {
                    Some(bytes) => file.write_atomic(bytes),
                    None => match file.remove() {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                        _ => Ok(()),
                    },
                },
            );
        match written {
            Ok(()) => {
                report.restored.push(Restored { path, before: before.hash, after: want.hash })
            }
            Err(e) => report.unrestorable.push((path, e.to_string())),
        }
    }
}

/// The entry `point` names on the active branch: an entry's whole id, else `N`, the end
/// of the N-th prompt's turn (`0`: before everything, `None`), else a unique prefix of
/// an id. (An id is eight hex digits, so now and then all decimal: the whole id wins
/// over a prompt number, or the UI, which passes ids, would rewind to the wrong place.)
pub fn resolve_point(tape: &Tape, point: &str) -> Result<Option<String>, String> {
    if tape.entries().iter().any(|e| e.id == point) {
        return Ok(Some(point.to_owned()));
    }
    let branch = tape.active_branch();
    if let Ok(n) = point.parse::<usize>() {
        let prompts: Vec<usize> = branch
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.message(), Some(rab_ai::Message::User(_))))
            .map(|(i, _)| i)
            .collect();
        return match (n, prompts.get(n)) {
            (0, _) => Ok(None),
            (_, Some(&next)) => Ok(Some(branch[next - 1].id.clone())),
            (n, None) if n == prompts.len() => Ok(tape.leaf().map(|e| e.id.clone())),
            (n, None) => Err(format!(
                "the session has {} prompt(s) on its current branch, not {n}",
                prompts.len()
            )),
        };
    }
    let found: Vec<&str> =
        tape.entries().iter().map(|e| e.id.as_str()).filter(|id| id.starts_with(point)).collect();
    match found.as_slice() {
        [id] => Ok(Some((*id).to_owned())),
        [] => Err(format!("no entry {point} in this session; give an entry id or a prompt number")),
        _ => Err(format!("{point} names {} entries; give more of the id", found.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_id_of_decimal_digits_is_an_id_not_a_prompt_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let entry = |id: &str, parent: Option<&str>, role: &str, text: &str| {
            let message = if role == "user" {
                serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}]})
            } else {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                    "usage": {"input": 1, "output": 1}, "stopReason": "stop"})
            };
            serde_json::json!({"id": id, "parentId": parent, "timestamp": "2026-11-28T00:00:00.000Z",
                               "type": "message", "message": message})
            .to_string()
        };
        let lines = [
            serde_json::json!({"type": "session", "version": 1, "id": "s", "cwd": "/",
                               "timestamp": "2026-11-28T00:00:00.000Z"})
            .to_string(),
            entry("aaaaaaaa", None, "user", "first"),
            entry("27251709", Some("aaaaaaaa"), "assistant", "one"),
            entry("bbbbbbbb", Some("27251709"), "user", "second"),
            entry("cccccccc", Some("bbbbbbbb"), "assistant", "two"),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let (tape, _) = Tape::open(&path).unwrap();
        assert_eq!(resolve_point(&tape, "27251709").unwrap().as_deref(), Some("27251709"));
        // Prompt numbers and prefixes still work.
        assert_eq!(resolve_point(&tape, "1").unwrap().as_deref(), Some("27251709"));
        assert_eq!(resolve_point(&tape, "0").unwrap(), None);
        assert_eq!(resolve_point(&tape, "ccc").unwrap().as_deref(), Some("cccccccc"));
        assert!(resolve_point(&tape, "7").is_err());
    }
}
