//! Rewinding a session with its files (issue 23): checkpoints on the tape, `rab sessions
//! rewind`, undo, and files changed by someone else.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, stderr, stdout};

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn session_file(home: &Home) -> PathBuf {
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one session: {files:?}");
    files[0].clone()
}

/// One session of `prompts` in `proj`, each a `rab -p` (the later ones continuing it).
fn run_prompts(home: &Home, llm: &FakeLlm, proj: &Path, prompts: &[&str]) {
    for (i, prompt) in prompts.iter().enumerate() {
        let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
        cmd.current_dir(proj).args(["-p", "--yolo"]);
        if i > 0 {
            cmd.arg("-c");
        }
        let out = cmd.arg(prompt).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

/// A session of `prompts` against `script` in a new project: the home, the project
/// and the session file.
fn recorded(script: Vec<Turn>, prompts: &[&str]) -> (Home, PathBuf, PathBuf) {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let llm = FakeLlm::start();
    llm.script(script);
    run_prompts(&home, &llm, &proj, prompts);
    let file = session_file(&home);
    (home, proj, file)
}

/// `rab sessions rewind FILE ARGS…` in `proj`.
fn rewind_in(home: &Home, proj: &Path, file: &Path, args: &[&str]) -> std::process::Output {
    home.rab()
        .current_dir(proj)
        .args(["sessions", "rewind", file.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

fn last_entry(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[test]
fn a_session_rewound_to_turn_two_gets_its_files_back_and_the_rewind_undoes() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    for (name, text) in [("a.txt", "a0\n"), ("b.txt", "b0\n"), ("c.txt", "c0\n")] {
        std::fs::write(proj.join(name), text).unwrap();
    }
    let write = |path: &str, content: &str| {
        Turn::tool_call("write", json!({"path": path, "content": content}))
    };
    let llm = FakeLlm::start();
    llm.script([
        write("a.txt", "a1\n"),
        Turn::text("one"),
        // `edit` wants the file read first.
        Turn::tool_call("read", json!({"path": "b.txt"})),
        Turn::tool_call(
            "edit",
            json!({"path": "b.txt", "edits": [{"old_string": "b0", "new_string": "b1"}]}),
        )
        .and_tool_call("write", json!({"path": "c.txt", "content": "c1\n"})),
        Turn::text("two"),
        write("a.txt", "a3\n"),
        Turn::text("three"),
        write("b.txt", "b4\n"),
        Turn::text("four"),
        write("c.txt", "c5\n"),
        Turn::text("five"),
    ]);
    run_prompts(&home, &llm, &proj, &["first", "second", "third", "fourth", "fifth"]);
    let now = |dir: &Path| (read(dir, "a.txt"), read(dir, "b.txt"), read(dir, "c.txt"));
    let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    assert_eq!(now(&proj), s("a3\n", "b4\n", "c5\n"));
    let tape = session_file(&home);
    let rewind = |args: &[&str]| {
        home.rab()
            .current_dir(&proj)
            .args(["sessions", "rewind", tape.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };

    // Back to the end of turn 2, files only.
    let out = rewind(&["2", "--files"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(now(&proj), s("a1\n", "b1\n", "c1\n"));
    let entry = last_entry(&tape);
    assert_eq!(
        (entry["type"].as_str(), entry["customType"].as_str()),
        (Some("custom"), Some("rewind"))
    );
    assert_eq!(entry["data"]["files"].as_array().unwrap().len(), 3, "{entry}");
    assert!(stdout(&out).contains("undo with: rab sessions rewind"), "{}", stdout(&out));

    // Undone: the files are as before the rewind.
    let out = rewind(&["--undo"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(now(&proj), s("a3\n", "b4\n", "c5\n"));
    // Undone once: a second undo finds nothing left to undo, and changes nothing.
    let out = rewind(&["--undo"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("no rewind to undo"), "{}", stderr(&out));
    assert_eq!(now(&proj), s("a3\n", "b4\n", "c5\n"));

    // Someone edits c.txt: it is reported and kept, the others go back.
    std::fs::write(proj.join("c.txt"), "mine\n").unwrap();
    let out = rewind(&["2", "--files"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(now(&proj), s("a1\n", "b1\n", "mine\n"));
    assert!(
        stdout(&out)
            .contains("c.txt: changed since rab's last change to it (--force overwrites it)"),
        "{}",
        stdout(&out)
    );

    // Before everything: a file the session created would go; these existed, so they get
    // their first content back (c.txt still refused).
    let out = rewind(&["0", "--files"]);
    assert_eq!(now(&proj), s("a0\n", "b0\n", "mine\n"), "{}", stdout(&out));
    let out = rewind(&["9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("has 5 prompt(s)"), "{}", stderr(&out));

    // The conversation alone: the next prompt continues from the end of turn 2.
    let out = rewind(&["2", "--conversation"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(now(&proj), s("a0\n", "b0\n", "mine\n"), "files untouched");
    llm.script([Turn::text("from turn two")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&proj)
        .args(["-p", "-c", "again"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "from turn two\n", "{}", stderr(&out));
    let users = llm.requests().last().unwrap().user_texts();
    assert!(users.iter().any(|u| u == "second"), "{users:?}");
    assert!(!users.iter().any(|u| u == "third" || u == "fifth"), "{users:?}");
}

/// `/fork N files`: a new session from the end of prompt N's turn, its files as they
/// were then; `/rewind undo` in the new session puts them back.
#[test]
fn fork_from_a_point_takes_the_files_of_that_point() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("write", json!({"path": "x.txt", "content": "x1\n"})),
        Turn::text("one"),
        Turn::tool_call("write", json!({"path": "x.txt", "content": "x2\n"})),
        Turn::text("two"),
    ]);
    run_prompts(&home, &llm, &proj, &["first", "second"]);
    let repl = |line: &str| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.current_dir(&proj).args(["--repl", "-c"]);
        super::harness::with_stdin(cmd, &format!("{line}\n"))
    };
    let out = repl("/fork 1 files");
    assert!(
        stdout(&out).contains("forked into") && stdout(&out).contains("restored"),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(&proj, "x.txt"), "x1\n");
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "the fork is a session of its own");
    let out = repl("/rewind undo");
    assert!(stdout(&out).contains("restored"), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(read(&proj, "x.txt"), "x2\n");
}

/// A rewind records itself after it restores the files: when the session is open in
/// another rab, the record cannot be written, so no file may be touched either.
#[test]
fn a_session_open_elsewhere_is_not_rewound_and_its_files_stay() {
    let (home, proj, file) = recorded(
        vec![
            Turn::tool_call("write", json!({"path": "a.txt", "content": "one\n"})),
            Turn::text("done"),
        ],
        &["write it"],
    );
    let before = std::fs::read_to_string(&file).unwrap();
    // This test process holds the session, as a running rab would.
    let (mut held, _) = rab_session::Tape::open(&file).unwrap();
    held.claim().unwrap();
    let out = rewind_in(&home, &proj, &file, &["0", "--files"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("open in another rab process"), "{}", stderr(&out));
    assert_eq!(read(&proj, "a.txt"), "one\n", "the file is left as it is");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    drop(held);
    let out = rewind_in(&home, &proj, &file, &["0", "--files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!proj.join("a.txt").exists(), "rewound to before it was written");
}

/// A call that changed nothing (here an edit that failed) gives rab no claim on the
/// file: a forced rewind leaves the user's own later change to it alone.
#[test]
fn a_forced_rewind_leaves_files_that_rab_never_changed() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("notes.md"), "n0\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "notes.md"})),
        Turn::tool_call(
            "edit",
            json!({"path": "notes.md", "edits": [{"old_string": "absent", "new_string": "x"}]}),
        )
        .and_tool_call("write", json!({"path": "a.txt", "content": "one\n"})),
        Turn::text("done"),
    ]);
    run_prompts(&home, &llm, &proj, &["try it"]);
    assert_eq!(read(&proj, "notes.md"), "n0\n", "the edit failed");
    std::fs::write(proj.join("notes.md"), "mine\n").unwrap();
    let file = session_file(&home);
    let out = rewind_in(&home, &proj, &file, &["0", "--files", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&proj, "notes.md"), "mine\n", "{}", stdout(&out));
    assert!(!stdout(&out).contains("notes.md"), "{}", stdout(&out));
    assert!(!proj.join("a.txt").exists(), "what rab wrote is rewound: {}", stdout(&out));
}

/// The files on disk hold what every branch did: after the conversation went back, a
/// files rewind still sets back what the branch it left had changed.
#[test]
fn a_files_rewind_sees_the_changes_of_a_branch_the_conversation_left() {
    let (home, proj, file) = recorded(
        vec![
            Turn::tool_call("write", json!({"path": "a.txt", "content": "one\n"})),
            Turn::text("first"),
            Turn::tool_call("write", json!({"path": "b.txt", "content": "two\n"})),
            Turn::text("second"),
        ],
        &["write a", "write b"],
    );
    let rewind = |args: &[&str]| {
        let out = rewind_in(&home, &proj, &file, args);
        assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    rewind(&["1", "--conversation"]);
    assert!(proj.join("b.txt").exists(), "a conversation rewind leaves the files");
    let out = rewind(&["0", "--files"]);
    assert!(!proj.join("a.txt").exists() && !proj.join("b.txt").exists(), "{out}");
}

/// A session file is only text: one written elsewhere (or edited) could name any file
/// for a rewind to delete or overwrite. Checkpoint and rewind entries carry a seal made
/// with a key only this rab home has; a rewind passes over entries without a valid one.
#[test]
fn a_session_file_cannot_make_a_rewind_touch_files_it_names() {
    let (home, proj, file) = recorded(
        vec![
            Turn::tool_call("write", json!({"path": "a.txt", "content": "one\n"})),
            Turn::text("done"),
        ],
        &["write it"],
    );
    let victim = home.dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sealed = lines.iter().find(|l| l["customType"] == "checkpoint").unwrap().clone();
    assert!(sealed["data"]["seal"].is_string(), "rab seals its own: {sealed}");
    let last_id = lines.last().unwrap()["id"].as_str().unwrap().to_owned();
    // Forged: the victim "did not exist" before a call, and "is as rab left it" after.
    let victim_path = victim.display().to_string();
    let hash = rab_session::content_hash(b"precious\n");
    let entry = |id: &str, parent: &str, kind: &str, file: serde_json::Value| {
        json!({"type": "custom", "id": id, "parentId": parent,
            "timestamp": "2026-11-27T00:00:00.000Z", "customType": kind,
            "data": {"callId": "forged", "files": [file], "seal": "00".repeat(32)}})
    };
    let mut forged = vec![
        entry("f1", &last_id, "checkpoint", json!({"path": victim_path, "hash": null})),
        entry("f2", "f1", "checkpoint_after", json!({"path": victim_path, "hash": hash})),
    ];
    // And rab's own sealed entry, moved to name the victim.
    let mut moved = sealed.clone();
    moved["id"] = json!("f3");
    moved["parentId"] = json!("f2");
    moved["data"]["files"][0]["path"] = json!(victim_path);
    forged.push(moved);
    let mut text = std::fs::read_to_string(&file).unwrap();
    for f in &forged {
        text.push_str(&format!("{f}\n"));
    }
    std::fs::write(&file, text).unwrap();

    let out = rewind_in(&home, &proj, &file, &["0", "--files", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "{}", stdout(&out));
    assert!(stdout(&out).contains("passed over 3 checkpoint entr(ies)"), "{}", stdout(&out));
    assert!(!proj.join("a.txt").exists(), "rab's own entries still rewind: {}", stdout(&out));
    // The key is this home's own, readable by the user only.
    let key = home.dir.path().join("rab/checkpoints/key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
