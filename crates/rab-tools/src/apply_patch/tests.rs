use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn ws(dir: &Path) -> Workspace {
    Workspace::new(dir)
}

fn run(dir: &Path, patch: &str) -> Result<String, String> {
    match apply(&ws(dir), patch) {
        Ok(out) => Ok(rab_ai::Content::join_text(&out.content)),
        Err(ToolError::Model(m)) => Err(m),
        Err(e) => Err(format!("{e:?}")),
    }
}

#[test]
fn a_patch_touching_two_files_applies_both() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.rs"), "fn a() {\n    1\n}\n").unwrap();
    fs::write(dir.path().join("b.rs"), "fn b() {\n    2\n}\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.rs\n@@ fn a() {\n-    1\n+    10\n\
                 *** Update File: b.rs\n fn b() {\n-    2\n+    20\n }\n*** End Patch\n";
    let out = run(dir.path(), patch).unwrap();
    assert!(out.starts_with("Success. Updated the following files:\nM a.rs\nM b.rs"), "{out}");
    assert_eq!(fs::read_to_string(dir.path().join("a.rs")).unwrap(), "fn a() {\n    10\n}\n");
    assert_eq!(fs::read_to_string(dir.path().join("b.rs")).unwrap(), "fn b() {\n    20\n}\n");
}

#[test]
fn a_patch_whose_second_file_fails_changes_neither() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.rs"), "one\n").unwrap();
    fs::write(dir.path().join("b.rs"), "two\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.rs\n-one\n+ONE\n*** Add File: c.rs\n+new\n\
                 *** Update File: b.rs\n-three\n+THREE\n*** End Patch";
    let err = run(dir.path(), patch).unwrap_err();
    assert!(
        err.contains("are not found in b.rs") && err.ends_with("Nothing was changed."),
        "{err}"
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.rs")).unwrap(), "one\n");
    assert!(!dir.path().join("c.rs").exists());
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn adds_deletes_and_moves() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("old.txt"), "x\ny\n").unwrap();
    fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: sub/new.txt\n+hello\n*** Delete File: gone.txt\n\
                 *** Update File: old.txt\n*** Move to: moved.txt\n x\n-y\n+z\n*** End Patch";
    let out = run(dir.path(), patch).unwrap();
    assert!(out.contains("A sub/new.txt") && out.contains("D gone.txt"), "{out}");
    assert_eq!(fs::read_to_string(dir.path().join("sub/new.txt")).unwrap(), "hello\n");
    assert!(!dir.path().join("gone.txt").exists() && !dir.path().join("old.txt").exists());
    assert_eq!(fs::read_to_string(dir.path().join("moved.txt")).unwrap(), "x\nz\n");
}

#[test]
fn keeps_crlf_bom_and_the_files_own_characters() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.md"), "\u{feff}Title\r\n“Quote” here\r\nend\r\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.md\n Title\n-\"Quote\" here\n+\"Quote\" there\n end\n*** End Patch";
    let out = run(dir.path(), patch).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("a.md")).unwrap(),
        "\u{feff}Title\r\n“Quote” there\r\nend\r\n"
    );
    assert!(out.contains("matched ignoring quotes"), "{out}");
}

#[test]
fn errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "k\nk\n").unwrap();
    let e = run(dir.path(), "*** Begin Patch\n*** Update File: a.txt\n-k\n+z\n*** End Patch")
        .unwrap_err();
    assert!(e.contains("matches 2 places (lines 1, 2)"), "{e}");
    let e = run(dir.path(), "*** Begin Patch\n*** Add File: a.txt\n+z\n*** End Patch").unwrap_err();
    assert!(e.contains("already exists"), "{e}");
    let e = run(dir.path(), "*** Begin Patch\n*** Update File: nope.txt\n-k\n+z\n*** End Patch")
        .unwrap_err();
    assert!(e.contains("does not exist"), "{e}");
    let e = run(dir.path(), "{\"input\": 1}").unwrap_err();
    assert!(e.contains("must start with \"*** Begin Patch\""), "{e}");
    let e = run(dir.path(), "*** Begin Patch\n*** Update File: ../x\n-k\n+z\n*** End Patch");
    assert!(e.is_err());
}

#[test]
fn written_paths_name_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ApplyPatch::new(ws(dir.path()));
    let args = Args {
        input: "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n*** Move to: c\n-x\n+y\n\
                *** End Patch"
            .into(),
    };
    assert_eq!(Tool::written_paths(&tool, &args), ["a", "b", "c"]);
}

/// A case of `fixtures/patch_corpus.json`: files (and symbolic links) before, a patch,
/// and the files after or a refusal (every file as it was).
#[derive(serde::Deserialize)]
struct PatchCase {
    name: String,
    files: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    symlinks: std::collections::BTreeMap<String, String>,
    patch: String,
    #[serde(default)]
    expect_files: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    refuse: Option<serde_json::Value>,
}

#[test]
fn patch_corpus() {
    let cases: Vec<PatchCase> =
        serde_json::from_str(include_str!("../fixtures/patch_corpus.json")).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in &case.files {
            let p = dir.path().join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, content).unwrap();
        }
        for (link, target) in &case.symlinks {
            std::os::unix::fs::symlink(target, dir.path().join(link)).unwrap();
        }
        let result = run(dir.path(), &case.patch);
        let read = |path: &str| fs::read_to_string(dir.path().join(path)).ok();
        match (&result, &case.expect_files, &case.refuse) {
            (Ok(_), Some(expect), _) => {
                for (path, want) in expect {
                    if read(path).as_deref() != Some(want.as_str()) {
                        failures.push(format!(
                            "{}: {path} is {:?}, want {want:?}",
                            case.name,
                            read(path)
                        ));
                    }
                }
            }
            (Err(e), Some(_), _) => failures.push(format!("{}: refused: {e}", case.name)),
            (Ok(out), None, _) => failures.push(format!("{}: applied: {out}", case.name)),
            (Err(_), None, refuse) => {
                assert!(refuse.is_some(), "{}: give expect_files or refuse", case.name);
                for (path, before) in &case.files {
                    if read(path).as_deref() != Some(before.as_str()) {
                        failures.push(format!("{}: refused but changed {path}", case.name));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
