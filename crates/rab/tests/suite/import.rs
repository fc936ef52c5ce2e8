//! `rab sessions import claude|pi` (issue 23): fixture sessions in each source format
//! (tests/fixtures/import/README.md says where the formats come from) become tapes that
//! load, keep their branches, are found by search and continue with `-c`.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use rab_ai::{AssistantBlock, Content, Message};
use rab_fake_llm::{FakeLlm, Turn};
use rab_session::Tape;

use super::harness::{Home, stderr, stdout};

/// The fixtures of `source`, with `{{CWD}}` made `cwd`, copied under `home`.
fn fixtures(home: &Home, source: &str, cwd: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(source);
    let to = home.dir.path().join("source").join(source);
    for dir in std::fs::read_dir(&from).unwrap() {
        let dir = dir.unwrap().path();
        let into = to.join(dir.file_name().unwrap());
        std::fs::create_dir_all(&into).unwrap();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let text = std::fs::read_to_string(&file).unwrap();
            let text = text.replace("{{CWD}}", &cwd.display().to_string());
            std::fs::write(into.join(file.file_name().unwrap()), text).unwrap();
        }
    }
    to
}

fn imported_tape(home: &Home, name: &str) -> Tape {
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let (tape, warnings) = Tape::open(&dir.join(name)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    tape
}

fn import(home: &Home, source: &str, path: &Path) -> std::process::Output {
    home.rab().args(["sessions", "import", source]).arg(path).output().unwrap()
}

#[test]
fn claude_code_sessions_import_once_with_branches_tools_thinking_and_images() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let source = fixtures(&home, "claude", &proj);
    let out = import(&home, "claude", &source);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("1 imported, 0 already there, 0 failed"), "{text}");
    assert!(text.contains("1 summary line(s) not imported"), "{text}");
    assert!(text.contains("1 sub-agent (sidechain) line(s) not imported"), "{text}");
    assert!(text.contains("1 system line(s) not imported"), "{text}");

    let tape = imported_tape(&home, "import-claude-7f3c2a10-5b6e-4c1d-9a8b-0c1d2e3f4a5b.jsonl");
    assert_eq!(tape.header().cwd, proj.display().to_string());
    assert_eq!(tape.entries().len(), 8, "the reply's two lines are one entry");
    // Entries keep the times Claude Code gave them; the session starts with the first.
    assert_eq!(tape.header().timestamp, "2026-10-01T10:00:00.000Z");
    let times: Vec<String> = tape.entries().iter().map(|e| e.timestamp.clone()).collect();
    assert!(times.iter().all(|t| t.starts_with("2026-10-01T10:0")), "{times:?}");
    // The active branch is the last answer's: the screenshot branch is beside it.
    let messages = tape.messages();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| match m {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "result",
            Message::System(_) => "system",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "result", "assistant", "user", "assistant"]);
    let Message::Assistant(first) = &messages[1] else { panic!() };
    assert!(matches!(&first.content[0], AssistantBlock::Thinking { thinking, signature: None, .. }
        if thinking.starts_with("The test names parse")));
    let AssistantBlock::ToolCall(call) = &first.content[1] else { panic!("{first:?}") };
    let Message::ToolResult(result) = &messages[2] else { panic!() };
    assert_eq!(
        (result.tool_call_id.as_str(), result.tool_name.as_str()),
        (call.id.as_str(), "Read")
    );
    let image = tape.entries().into_iter().filter_map(|e| e.message()).any(|m| {
        matches!(m, Message::User(u) if u.content.iter().any(|c| matches!(c, Content::Image { mime_type, .. } if mime_type == "image/png")))
    });
    assert!(image, "the screenshot is kept on its branch");

    // Again: nothing new.
    let out = import(&home, "claude", &source);
    assert!(stdout(&out).contains("0 imported, 1 already there"), "{}", stdout(&out));

    // Found by search, continued with -c (the fake server checks the history's shape).
    let out = home.rab().args(["sessions", "search", "lexer"]).output().unwrap();
    let found = stdout(&out);
    assert!(!found.contains("no matches") && found.contains("lexer"), "{found}");
    assert!(found.contains("2026-10-01 10:01"), "dated as in the source: {found}");
    let llm = FakeLlm::start();
    llm.script([Turn::text("continuing")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&proj)
        .args(["-p", "-c", "--no-tools", "go on"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "continuing\n", "{}", stderr(&out));
    let users = llm.requests()[0].user_texts();
    assert!(users.iter().any(|u| u == "Also check the lexer"), "{users:?}");
    assert!(!users.iter().any(|u| u.contains("screenshot")), "the other branch: {users:?}");
}

#[test]
fn pi_sessions_import_with_model_changes_labels_and_tool_calls() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let source = fixtures(&home, "pi", &proj);
    let out = import(&home, "pi", &source);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("1 bashExecution message entr(ies) not imported"),
        "{}",
        stdout(&out)
    );
    let tape = imported_tape(&home, "import-pi-3d9e1c22-7a41-4f0e-b5d2-6c8f9a0b1c2d.jsonl");
    let messages = tape.messages();
    assert_eq!(messages.len(), 6, "{messages:?}");
    let Message::Assistant(a) = &messages[1] else { panic!() };
    assert!(matches!(&a.content[1], AssistantBlock::ToolCall(c) if c.name == "bash"));
    assert_eq!(tape.header().timestamp, "2026-10-02T09:00:00.000Z", "pi's header time");
    assert_eq!(tape.entries()[0].timestamp, "2026-10-02T09:00:00.100Z");
    let Message::ToolResult(r) = &messages[2] else { panic!() };
    assert_eq!(r.text(), "src/a.rs:3: let foo = 1;");
    let texts: Vec<String> =
        tape.entries().iter().map(|e| serde_json::to_string(e).unwrap()).collect();
    assert!(
        texts.iter().any(|t| t.contains("\"model_change\"") && t.contains("claude-sonnet-5-5"))
    );
    assert!(texts.iter().any(|t| t.contains("\"label\":\"renamed\"")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("my-extension")), "an extension's entry is kept");
    assert!(!texts.iter().any(|t| t.contains("\"rewind\"")), "rab's own types are not");
    assert!(stdout(&out).contains("1 custom entr(ies) not imported"), "{}", stdout(&out));
    let out = import(&home, "pi", &source);
    assert!(stdout(&out).contains("0 imported, 1 already there"), "{}", stdout(&out));

    let llm = FakeLlm::start();
    llm.script([Turn::text("on it")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&proj)
        .args(["-p", "-c", "--no-tools", "and the docs"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "on it\n", "{}", stderr(&out));
    let users = llm.requests()[0].user_texts();
    assert!(users.iter().any(|u| u == "Now update the changelog"), "{users:?}");

    let out = home.rab().args(["sessions", "import", "pi", "/nonexistent/pi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/pi does not exist"), "{}", stderr(&out));
}

/// Session files are someone else's words: their ids and working directories must not
/// steer where rab writes, nor make two sessions share one file.
#[test]
fn hostile_ids_and_directories_stay_inside_the_sessions_directory() {
    let home = Home::new();
    let source = home.dir.path().join("hostile");
    std::fs::create_dir_all(&source).unwrap();
    let pi = |id: &str, cwd: &str| {
        let header = serde_json::json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-10-02T09:00:00.000Z", "cwd": cwd});
        let message = serde_json::json!({"type": "message", "id": "m1", "parentId": null,
            "timestamp": "not a time", "message": {"role": "user",
            "content": [{"type": "text", "text": format!("hello from {id}")}]}});
        format!("{header}\n{message}\n")
    };
    for (i, (id, cwd)) in [
        ("../../../../escaped", "/../../../tmp"),
        // Same directory, and the same letters once cleaned: still two sessions.
        ("..\\..\\escaped", "/../../../tmp"),
        ("/etc/passwd", ""),
        ("", "/work/x"),
    ]
    .into_iter()
    .enumerate()
    {
        // A line cut off, and one nested past what a JSON reader takes.
        let bad = format!(
            "{{\"type\": \"message\", \"id\": \"cut\n{}{}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        std::fs::write(source.join(format!("{i}.jsonl")), pi(id, cwd) + &bad).unwrap();
    }
    let out = import(&home, "pi", &source);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    // Each gets a file of its own, the empty id too.
    assert!(stdout(&out).contains("4 imported, 0 already there, 0 failed"), "{}", stdout(&out));
    assert!(stdout(&out).contains("2 unreadable line(s) not imported"), "{}", stdout(&out));

    let sessions = home.dir.path().join("rab/sessions");
    let mut written = Vec::new();
    let mut stack = vec![home.dir.path().to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.starts_with(&sessions) {
                written.push(path);
            } else {
                // rab's own log is the only other file it writes here.
                let ok = path.starts_with(&source) || path.ends_with("rab/logs/rab.log");
                assert!(ok, "written outside the sessions: {path:?}");
            }
        }
    }
    assert_eq!(written.len(), 4, "{written:?}");
    for path in &written {
        let rel = path.strip_prefix(&sessions).unwrap();
        assert_eq!(rel.components().count(), 2, "{rel:?}");
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("import-pi-") && !name.contains(".."), "{name}");
        assert!(name.ends_with(".jsonl"), "no partial file is left: {name}");
        let (tape, warnings) = Tape::open(path).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        // A time that does not parse takes the session's.
        assert_eq!(tape.entries()[0].timestamp, "2026-10-02T09:00:00.000Z");
    }
    assert!(!Path::new("/tmp/escaped").exists() && !sessions.join("../escaped").exists());
}

#[test]
fn issue_36_an_import_sorts_by_when_it_happened_so_continue_keeps_the_newer_session() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("native answer"), Turn::text("continued")]);
    let run = |args: &[&str]| {
        home.rab_for("anthropic-messages", &llm, Some("k"))
            .current_dir(&proj)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["-p", "the native session"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Imported afterwards, but it happened on 2026-10-01: older than the native one.
    let out = import(&home, "claude", &fixtures(&home, "claude", &proj));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["-c", "-p", "go on"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let users = llm.requests()[1].user_texts();
    assert_eq!(users.first().map(String::as_str), Some("the native session"), "{users:?}");
    let imported = home.rab().current_dir(&proj).args(["sessions", "list"]).output().unwrap();
    let list = stdout(&imported);
    let native = list.find("the native session").unwrap();
    let old = list.find("Fix the failing parser test").expect("the import is listed");
    assert!(old > native, "newest first: {list}");
}
