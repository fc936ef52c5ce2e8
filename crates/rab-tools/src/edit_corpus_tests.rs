//! The edit corpus (`fixtures/edit_corpus/*.json`): cases of the mistakes models make
//! when they edit, each with the file, the arguments and the expected file or refusal,
//! run through `edit` and, where a patch can say the same, through `apply_patch`. The
//! test fails on any wrong content, false accept or refusal that does not say what the
//! case expects; it prints the score per category and tool.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Workspace;
use crate::edit::{Replacement, apply_edits};

#[derive(Deserialize)]
struct Case {
    name: String,
    #[serde(default)]
    path: Option<String>,
    file: String,
    edits: Vec<EditArgs>,
    #[serde(default)]
    expect: Option<String>,
    #[serde(default)]
    refuse: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct EditArgs {
    old_text: String,
    new_text: String,
    #[serde(default)]
    replace_all: Option<bool>,
}

/// How a tool did on a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Correct,
    CorrectRefusal,
    FalseReject,
    WrongContent,
    FalseAccept,
    WrongRefusalText,
}

#[derive(Default)]
struct Score {
    counts: BTreeMap<Outcome, usize>,
    failures: Vec<String>,
    rejects: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/fixtures/edit_corpus")
}

/// `patch`: what `edit` calls edit N, a patch calls operation N.
fn judge(case: &Case, result: Result<String, String>, patch: bool) -> (Outcome, String) {
    let refuse: Option<Vec<String>> = case.refuse.as_ref().map(|parts| {
        parts
            .iter()
            .map(|p| match p.strip_prefix("edit ") {
                Some(n) if patch => format!("operation {n}"),
                _ => p.clone(),
            })
            .collect()
    });
    match (result, &case.expect, &refuse) {
        (Ok(got), Some(want), _) if got == *want => (Outcome::Correct, String::new()),
        (Ok(got), Some(want), _) => {
            (Outcome::WrongContent, format!("wrote {got:?}\n      expected {want:?}"))
        }
        (Ok(got), None, _) => (Outcome::FalseAccept, format!("wrote {got:?}")),
        (Err(e), Some(_), _) => (Outcome::FalseReject, e),
        (Err(e), None, Some(parts)) => match parts.iter().find(|p| !e.contains(p.as_str())) {
            None => (Outcome::CorrectRefusal, String::new()),
            Some(missing) => (Outcome::WrongRefusalText, format!("{e}\n      lacks {missing:?}")),
        },
        (Err(_), None, None) => (Outcome::CorrectRefusal, String::new()),
    }
}

fn run_edit(dir: &Path, case: &Case) -> Result<String, String> {
    let name = case.path.as_deref().unwrap_or("case.txt");
    let path = dir.join(name);
    fs::write(&path, &case.file).unwrap();
    let edits: Vec<Replacement> = case
        .edits
        .iter()
        .map(|e| Replacement {
            old_text: e.old_text.clone(),
            new_text: e.new_text.clone(),
            replace_all: e.replace_all,
        })
        .collect();
    let ws = Workspace::new(dir);
    apply_edits(&ws, &path, &edits).map(|a| a.on_disk).map_err(|e| format!("{e}"))
}

/// The case as a patch, when one can say it: each edit replaces whole lines (every
/// verbatim occurrence of its old text starts and ends a line) and none is
/// `replace_all`. Each edit is an `*** Update File` of its own, applied in turn.
fn as_patch(case: &Case) -> Option<String> {
    let name = case.path.as_deref().unwrap_or("case.txt");
    let mut text = case.file.replace("\r\n", "\n");
    let mut patch = String::from("*** Begin Patch\n");
    for e in &case.edits {
        if e.replace_all == Some(true) {
            return None;
        }
        let old = e.old_text.replace("\r\n", "\n");
        let new = e.new_text.replace("\r\n", "\n");
        let old_body = old.strip_suffix('\n').unwrap_or(&old);
        let new_body = new.strip_suffix('\n').unwrap_or(&new);
        if old_body.is_empty() {
            return None;
        }
        let whole_lines = text.match_indices(old_body).all(|(at, _)| {
            let end = at + old_body.len();
            (at == 0 || text.as_bytes()[at - 1] == b'\n')
                && (end == text.len() || text.as_bytes()[end] == b'\n')
        });
        if !whole_lines {
            return None;
        }
        patch.push_str(&format!("*** Update File: {name}\n@@\n"));
        for line in old_body.split('\n') {
            patch.push_str(&format!("-{line}\n"));
        }
        if !new_body.is_empty() || !new.is_empty() {
            for line in new_body.split('\n') {
                patch.push_str(&format!("+{line}\n"));
            }
        }
        // Later edits see this one's result; a verbatim one is enough to follow.
        if text.contains(old_body) {
            text = text.replacen(old_body, new_body, 1);
        }
    }
    patch.push_str("*** End Patch\n");
    Some(patch)
}

fn run_patch(dir: &Path, case: &Case, patch: &str) -> Result<String, String> {
    let name = case.path.as_deref().unwrap_or("case.txt");
    let path = dir.join(name);
    fs::write(&path, &case.file).unwrap();
    let ws = Workspace::new(dir);
    match crate::apply_patch::apply(&ws, patch) {
        Ok(_) => Ok(fs::read_to_string(&path).unwrap_or_default()),
        Err(e) => {
            // A failed patch leaves the file as it was.
            assert_eq!(
                fs::read_to_string(&path).unwrap(),
                case.file,
                "{}: changed on failure",
                case.name
            );
            Err(format!("{e}"))
        }
    }
}

#[test]
fn edit_corpus() {
    let mut files: Vec<PathBuf> = fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut scores: BTreeMap<(String, &str), Score> = BTreeMap::new();
    let mut total = 0;
    for file in files {
        let category = file.file_stem().unwrap().to_string_lossy().into_owned();
        let cases: Vec<Case> = serde_json::from_str(&fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in &cases {
            assert!(
                case.expect.is_some() != case.refuse.is_some(),
                "{}: give expect or refuse",
                case.name
            );
            total += 1;
            let dir = tempfile::tempdir().unwrap();
            let (outcome, detail) = judge(case, run_edit(dir.path(), case), false);
            record(scores.entry((category.clone(), "edit")).or_default(), case, outcome, detail);
            // A patch's operations apply in turn; `as_read` cases are about edits located
            // in the file as read, which a patch of separate operations does not say.
            let patch = if category == "as_read" { None } else { as_patch(case) };
            if let Some(patch) = patch {
                let dir = tempfile::tempdir().unwrap();
                let (outcome, detail) = judge(case, run_patch(dir.path(), case, &patch), true);
                let score = scores.entry((category.clone(), "apply_patch")).or_default();
                record(score, case, outcome, detail);
            }
        }
    }
    let mut report = String::from(
        "category          tool         cases  right  refused-right  false-reject  wrong  false-accept  bad-refusal\n",
    );
    let mut failures = Vec::new();
    for ((category, tool), score) in &scores {
        let n = |o| score.counts.get(&o).copied().unwrap_or(0);
        let cases: usize = score.counts.values().sum();
        report.push_str(&format!(
            "{category:<17} {tool:<12} {cases:>5}  {:>5}  {:>13}  {:>12}  {:>5}  {:>12}  {:>11}\n",
            n(Outcome::Correct),
            n(Outcome::CorrectRefusal),
            n(Outcome::FalseReject),
            n(Outcome::WrongContent),
            n(Outcome::FalseAccept),
            n(Outcome::WrongRefusalText),
        ));
        failures.extend(score.failures.iter().map(|f| format!("{tool}: {f}")));
        for r in &score.rejects {
            eprintln!("false reject, {tool}: {r}");
        }
    }
    eprintln!("{report}");
    assert!(total >= 120, "the corpus has {total} cases");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

fn record(score: &mut Score, case: &Case, outcome: Outcome, detail: String) {
    *score.counts.entry(outcome).or_default() += 1;
    match outcome {
        Outcome::Correct | Outcome::CorrectRefusal => {}
        Outcome::FalseReject => score.rejects.push(format!("{}: {detail}", case.name)),
        _ => score.failures.push(format!("{} ({outcome:?}): {detail}", case.name)),
    }
}
