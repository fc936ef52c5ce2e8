//! `rab sessions search|export|list` and the session commands of the REPL (`/name`,
//! `/anchor`, `/anchors`, `/export`, `,handoff`), on the real binary.

use std::path::{Path, PathBuf};
use std::process::Output;

use rab_fake_llm::{FakeLlm, Turn};
use rab_session::Tape;

use super::harness::{Home, stderr, stdout, with_stdin};

fn prompt_in(home: &Home, llm: &FakeLlm, cwd: &Path, text: &str) -> Output {
    std::fs::create_dir_all(cwd).unwrap();
    home.rab_for("anthropic-messages", llm, Some("k"))
        .current_dir(cwd)
        .args(["-p", text])
        .output()
        .unwrap()
}

fn repl_in(home: &Home, llm: &FakeLlm, cwd: &Path, input: &str) -> Output {
    std::fs::create_dir_all(cwd).unwrap();
    let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
    cmd.current_dir(cwd).arg("--repl");
    with_stdin(cmd, input)
}

/// Every session file under RAB_HOME, with its header's cwd.
fn session_files(home: &Home) -> Vec<(PathBuf, String)> {
    let root = home.dir.path().join("rab/sessions");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            let (tape, _) = Tape::open(&path).unwrap();
            out.push((path, tape.header().cwd.clone()));
        }
    }
    out.sort();
    out
}

#[test]
fn search_finds_a_phrase_from_another_directorys_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("I will look at the tokenizer."), Turn::text("Done.")]);
    let (a, b) = (home.dir.path().join("project-a"), home.dir.path().join("project-b"));
    let out = prompt_in(&home, &llm, &a, "the flaky parser test fails on Tuesdays");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    prompt_in(&home, &llm, &b, "rename the config loader");
    let sessions = session_files(&home);
    let (a_file, _) = sessions.iter().find(|(_, cwd)| Path::new(cwd) == a).unwrap();
    let a_id = Tape::open(a_file).unwrap().0.id().to_owned();

    // From the other project's directory, quoted phrase and loose words alike.
    let search = |args: &[&str]| {
        home.rab().current_dir(&b).args(["sessions", "search"]).args(args).output().unwrap()
    };
    let out = search(&["\"parser test\""]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains(&a_id), "{text}");
    assert!(text.contains(&a.display().to_string()), "the hit names its directory: {text}");
    assert!(text.contains("the flaky parser test fails on Tuesdays"), "a snippet: {text}");

    let out = search(&["--json", "TUESDAYS", "flaky"]);
    let hits: Vec<serde_json::Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["sessionId"], a_id.as_str());
    assert_eq!(hits[0]["role"], "user");
    let entry = hits[0]["entryId"].as_str().unwrap();
    assert!(Tape::open(a_file).unwrap().0.entry(entry).is_some(), "the hit names its entry");

    let out = search(&["\"test parser\""]);
    assert!(stdout(&out).contains("no matches"), "a phrase matches in order only");
    // The assistant's words are searched too, and a new session is found at once.
    prompt_in(&home, &llm, &b, "the tokenizer again");
    let out = search(&["tokenizer"]);
    assert_eq!(stdout(&out).matches("    ").count(), 2, "{}", stdout(&out));
}

#[test]
fn export_writes_html_markdown_and_json() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("write", serde_json::json!({"path": "a.txt", "content": "hello\n"})),
        Turn::text("Wrote **a.txt**."),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "create a.txt <b>now</b>"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (file, _) = session_files(&home).remove(0);
    let id = Tape::open(&file).unwrap().0.id().to_owned();

    let export = |format: &str| {
        home.rab().args(["sessions", "export", &id[..13], "--format", format]).output().unwrap()
    };
    let md = stdout(&export("md"));
    assert!(md.contains("create a.txt <b>now</b>") && md.contains("Wrote **a.txt**."), "{md}");
    assert!(md.contains("write"), "the tool call is shown: {md}");

    let json: serde_json::Value = serde_json::from_str(&stdout(&export("json"))).unwrap();
    assert_eq!(json["header"]["id"], id.as_str());
    assert_eq!(json["entries"].as_array().unwrap().len(), Tape::open(&file).unwrap().0.len());

    let page = home.dir.path().join("out/page.html");
    let out = home.rab().args(["sessions", "export", &id, "-o"]).arg(&page).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"));
    assert!(html.contains("create a.txt &lt;b&gt;now&lt;/b&gt;"), "escaped user text");
    for remote in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(remote), "loads nothing from the network: {remote}");
    }

    let out = home.rab().args(["sessions", "export", "no-such-session"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no session matches"), "{}", stderr(&out));
}

#[test]
fn names_anchors_and_export_from_the_repl() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two"), Turn::text("back at the anchor")]);
    let cwd = home.dir.path().join("work");
    let input = "first\n/name parser rewrite\n,anchor after-first\nsecond\n/anchors\n\
                 /anchors after-first\nthird\n/export notes.md\n/search \"at the anchor\"\n/quit\n";
    let out = repl_in(&home, &llm, &cwd, input);
    let text = stdout(&out);
    assert!(text.contains("after-first"), "{text}\n{}", stderr(&out));
    assert!(
        text.lines().any(|l| l.contains("[assistant "))
            && text.contains("]\n    back at the anchor"),
        "/search: {text}"
    );
    // Continuing from the anchor: the third request holds the path up to "one" only.
    assert_eq!(llm.requests()[2].user_texts(), ["first", "third"]);
    let md = std::fs::read_to_string(cwd.join("notes.md")).unwrap();
    assert!(md.contains("back at the anchor") && !md.contains("two"), "the active branch: {md}");
    // The name shows in the listing and in the --resume picker's data.
    let out = home.rab().current_dir(&cwd).args(["sessions", "list"]).output().unwrap();
    assert!(stdout(&out).contains("[parser rewrite] first"), "{}", stdout(&out));
}

#[test]
fn fork_copies_the_branch_into_a_new_linked_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two after the fork")]);
    let cwd = home.dir.path().join("work");
    let out = repl_in(&home, &llm, &cwd, "first\n/fork\nsecond\n/quit\n");
    assert!(stdout(&out).contains("forked into"), "{}\n{}", stdout(&out), stderr(&out));
    let files = session_files(&home);
    assert_eq!(files.len(), 2);
    let tapes: Vec<Tape> = files.iter().map(|(p, _)| Tape::open(p).unwrap().0).collect();
    let (old, new) = if tapes[0].header().parent_session.is_some() {
        (&tapes[1], &tapes[0])
    } else {
        (&tapes[0], &tapes[1])
    };
    let old_path = old.path().unwrap().display().to_string();
    assert_eq!(new.header().parent_session.as_deref(), Some(old_path.as_str()));
    assert_eq!(old.messages().len(), 2, "the original is left as it was");
    assert_eq!(new.messages().len(), 4, "the copy goes on");
    assert_eq!(new.messages()[..2], old.messages()[..]);
    assert_eq!(llm.requests()[1].transcript().items.len(), 3);
}

#[test]
fn control_characters_from_sessions_and_models_reach_the_terminal_inert() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let dir = home.dir.path().join("proj");
    // A prompt that would set the terminal's title, clear the screen and ring the bell,
    // with a C1 control and a right-to-left override.
    llm.script([Turn::text("ok")]);
    let hostile = "\x1b]0;pwned\x07\x1b[2J\u{9b}31m evil\u{202e}txt";
    let out = prompt_in(&home, &llm, &dir, hostile);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = home.rab().current_dir(&dir).args(["sessions", "list"]).output().unwrap();
    let text = stdout(&list);
    for raw in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
        assert!(!text.contains(raw), "{raw:?} printed raw: {text:?}");
    }
    assert!(text.contains("^[]0;pwned^G^[[2J\\u{9b}31m evil\\u{202e}txt"), "{text:?}");
    // The REPL shows a reply's escapes instead of obeying them.
    llm.script([Turn::text("before\x1b[2J\x1b]52;c;aGk=\x07after\0end")]);
    let out = repl_in(&home, &llm, &dir, "hi\n");
    let text = stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\0'), "{text:?}");
    assert!(text.contains("before^[[2J^[]52;c;aGk=^Gafter^@end"), "{text:?}");
}

/// Two processes on one session: the second is told another rab writes it and that
/// `--fork` continues a copy; with `--fork` it does, and the original's lines are the
/// first process's only.
#[test]
fn a_session_open_in_another_process_is_refused_and_can_be_forked() {
    use super::harness::Rpc;
    let home = super::harness::Home::new();
    let llm = rab_fake_llm::FakeLlm::start();
    llm.script([
        rab_fake_llm::Turn::text("first"),
        rab_fake_llm::Turn::text("from the fork"),
        rab_fake_llm::Turn::text("still mine"),
    ]);
    let first =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "one"]).output().unwrap();
    assert!(first.status.success());
    // An RPC host continues it and keeps it.
    let mut rpc = Rpc::start(&home, &llm, &["-c"]);
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state");
    let file = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    let lines_before = std::fs::read_to_string(&file).unwrap().lines().count();

    let second = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-c", "-p", "two"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    let err = super::harness::stderr(&second);
    assert!(err.contains("is open in another rab process") && err.contains("--fork"), "{err}");
    assert_eq!(llm.requests().len(), 1, "nothing was sent");

    let forked = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-c", "--fork", "-p", "two"])
        .output()
        .unwrap();
    assert!(forked.status.success(), "{}", super::harness::stderr(&forked));
    assert_eq!(super::harness::stdout(&forked), "from the fork\n");
    assert!(super::harness::stderr(&forked).contains("continuing a copy of"));
    assert_eq!(llm.requests()[1].user_texts(), ["one", "two"], "the copy has the history");
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), lines_before, "untouched");

    // The first process goes on writing its own file.
    rpc.send(r#"{"type": "prompt", "message": "three"}"#);
    rpc.event("agent_end");
    assert!(std::fs::read_to_string(&file).unwrap().lines().count() > lines_before);
    rpc.end();
}

/// Issue 53: a session is resumed by its id as in Claude Code (`-r ID`, `--resume ID`,
/// headless too), from any folder; `--session` given an id looks it up, and an id that
/// names no session is an error, never a file of that name made in the project.
#[test]
fn a_session_is_resumed_by_its_id_and_session_takes_an_id() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two"), Turn::text("three")]);
    let first = home.dir.path().join("first");
    assert_eq!(stdout(&prompt_in(&home, &llm, &first, "remember the word kiwi")), "one\n");
    let (path, _) = session_files(&home).remove(0);
    let (tape, _) = Tape::open(&path).unwrap();
    let id = tape.id().to_owned();
    let elsewhere = home.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |args: &[&str]| {
        home.rab_for("anthropic-messages", &llm, Some("k"))
            .current_dir(&elsewhere)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["-p", "-r", &id[..8], "which word?"]);
    assert_eq!(stdout(&out), "two\n", "{}", stderr(&out));
    let sent = llm.requests()[1].transcript();
    assert!(format!("{sent:?}").contains("kiwi"), "the resumed conversation was sent");
    let out = run(&["-p", "--session", &id, "and again?"]);
    assert_eq!(stdout(&out), "three\n", "{}", stderr(&out));
    assert_eq!(session_files(&home).len(), 1, "both went on in the same session");
    let out = run(&["-p", "--session", "nosuch", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no session matches 'nosuch'"), "{}", stderr(&out));
    assert!(stderr(&out).contains("give a path (./nosuch.jsonl)"), "{}", stderr(&out));
    assert!(!elsewhere.join("nosuch").exists(), "no file named like the id");
}
