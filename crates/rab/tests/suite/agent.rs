//! The agent end to end: the real binary runs tools on a real directory against the
//! fake server, per wire format.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use rab_session::{INTERRUPTED_RESULT, Tape};
use serde_json::{Value, json};

use super::harness::{Home, WIRES, stderr, stdout};

fn git_repo(home: &Home) -> std::path::PathBuf {
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("hello.sh"), "echo \"hello, world\"\n").unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init");
    repo
}

#[test]
fn read_edit_bash_answer_on_a_real_repo_for_every_wire_format() {
    for wire in WIRES {
        let home = Home::new();
        let repo = git_repo(&home);
        let llm = FakeLlm::start();
        // OpenAI's default model edits with apply_patch: a custom tool on the Responses
        // API, a function with one `input` string on Chat Completions.
        let patch = "*** Begin Patch\n*** Update File: hello.sh\n-echo \"hello, world\"\n\
                     +echo \"hello, rab\"\n*** End Patch\n";
        let edit = match wire {
            "openai-responses" => {
                let mut turn = Turn::tool_call("apply_patch", json!({}));
                turn.tool_calls[0].input = Some(patch.into());
                turn
            }
            "openai-completions" => Turn::tool_call("apply_patch", json!({"input": patch})),
            _ => Turn::tool_call(
                "edit",
                json!({"path": "hello.sh", "edits": [{"old_text": "hello, world", "new_text": "hello, rab"}]}),
            ),
        };
        llm.script([
            Turn::tool_call("read", json!({"path": "hello.sh"})),
            edit,
            Turn::tool_call("bash", json!({"command": "sh hello.sh"})),
            Turn::text("The script now greets rab."),
        ]);
        let out = home
            .rab_for(wire, &llm, Some("k"))
            .current_dir(&repo)
            .args(["-p", "--yolo", "make the script greet rab"])
            .output()
            .unwrap();
        assert_eq!(stdout(&out), "The script now greets rab.\n", "{wire}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{wire}");
        assert_eq!(
            std::fs::read_to_string(repo.join("hello.sh")).unwrap(),
            "echo \"hello, rab\"\n"
        );
        let reqs = llm.requests();
        assert_eq!(reqs.len(), 4, "{wire}");
        let read_result = &reqs[1].tool_results()[0].1;
        assert!(read_result.starts_with("1\techo \"hello, world\""), "{wire}: {read_result}");
        let bash_result = &reqs[3].tool_results()[2].1;
        assert!(
            bash_result.contains("hello, rab"),
            "{wire}: bash output reached the model: {bash_result}"
        );
    }
}

#[test]
fn two_tool_calls_of_one_message_run_concurrently() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "sleep 1"}))
            .and_tool_call("bash", json!({"command": "sleep 1"})),
        Turn::text("slept"),
    ]);
    let start = Instant::now();
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "sleep twice"])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    assert_eq!(stdout(&out), "slept\n", "{}", stderr(&out));
    assert!(
        elapsed < Duration::from_millis(1800),
        "two 1 s sleeps took {elapsed:?}: not concurrent"
    );
}

#[test]
fn an_unknown_tool_and_invalid_arguments_are_reported_to_the_model_and_the_run_completes() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut bad = Turn::tool_call("read", json!({}));
    bad.tool_calls[0].raw_arguments = Some("{\"path\": ".into());
    llm.script([
        Turn::tool_call("teleport", json!({"to": "mars"}))
            .and_tool_call("read", json!({"file": "x"})),
        bad,
        Turn::text("recovered"),
    ]);
    let out = home
        .rab_for("openai-responses", &llm, Some("k"))
        .args(["-p", "--yolo", "go"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "recovered\n", "{}", stderr(&out));
    let results = llm.requests()[2].tool_results();
    assert!(
        results[0]
            .1
            .starts_with("unknown tool 'teleport'; available tools: read, apply_patch, bash"),
        "{results:?}"
    );
    assert!(
        results[1].1.contains("invalid arguments for read: missing field `path`"),
        "{results:?}"
    );
    assert!(results[2].1.starts_with("invalid JSON arguments for read"), "{results:?}");
}

#[test]
fn max_turns_stops_with_exit_code_3() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("ls", json!({})),
        Turn::tool_call("ls", json!({})),
        Turn::text("never reached"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "--max-turns", "2", "loop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped after 2 turns"), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 2);
}

#[test]
fn continue_sends_the_whole_previous_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("ls", json!({})),
        Turn::text("first done"),
        Turn::text("second done"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "first task"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "first done\n", "{}", stderr(&out));
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-c", "-p", "second task"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "second done\n", "{}", stderr(&out));
    let items = llm.requests()[2].transcript().items;
    assert_eq!(items.len(), 5, "user, assistant+call, result, assistant, user: {items:?}");
    assert_eq!(llm.requests()[2].last_user_text().as_deref(), Some("second task"));
    let list = home.rab().args(["sessions", "list"]).output().unwrap();
    assert!(stdout(&list).contains("first task"), "{}", stdout(&list));
    assert_eq!(stdout(&list).lines().count(), 2, "one session, continued: {}", stdout(&list));
}

#[test]
fn no_session_writes_nothing_and_json_output_reports_the_run() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("answer")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--no-session", "--output-format", "json", "q"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["type"], "result");
    assert_eq!(v["status"], "success");
    assert_eq!(v["result"], "answer");
    assert_eq!(v["turns"], 1);
    assert!(v["usage"]["input"].as_u64().unwrap() > 0);
    assert!(v["sessionPath"].is_null());
    assert!(!home.dir.path().join("rab/sessions").exists());
}

#[test]
fn stream_json_prints_one_event_per_line_ending_with_the_result() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("listed")]);
    let out = home
        .rab_for("openai-completions", &llm, Some("k"))
        .args(["-p", "--output-format", "stream-json", "list"])
        .output()
        .unwrap();
    let events: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types[..2], ["system", "agent_start"], "the init line, then the run");
    assert!(
        types.contains(&"tool_call")
            && types.contains(&"tool_result")
            && types.contains(&"text_delta")
    );
    assert_eq!(&types[types.len() - 2..], ["agent_end", "result"]);
    assert_eq!(events.last().unwrap()["result"], "listed");
}

fn wait_for(path_glob_dir: &Path, what: &str, pred: impl Fn(&str) -> bool) -> std::path::PathBuf {
    for _ in 0..500 {
        if let Ok(rd) = std::fs::read_dir(path_glob_dir) {
            for e in rd.filter_map(Result::ok) {
                for f in std::fs::read_dir(e.path()).into_iter().flatten().filter_map(Result::ok) {
                    if std::fs::read_to_string(f.path()).is_ok_and(|t| pred(&t)) {
                        return f.path();
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn kill_9_mid_run_leaves_a_tape_that_loads_and_continue_records_the_interrupted_call() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "sleep 30"})), Turn::text("resumed")]);
    let mut child = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "long task"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sessions = home.dir.path().join("rab/sessions");
    let tape_path = wait_for(&sessions, "the tool call on the tape", |t| t.contains("sleep 30"));
    std::thread::sleep(Duration::from_millis(100));
    let _ = Command::new("kill").args(["-9", &child.id().to_string()]).status();
    let _ = child.wait();
    let (tape, warnings) = Tape::open(&tape_path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let msgs = tape.messages();
    assert!(
        matches!(msgs.last(), Some(rab_ai::Message::ToolResult(r)) if r.text() == INTERRUPTED_RESULT)
    );
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-c", "-p", "go on"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "resumed\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("recorded 1 unfinished tool call"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&tape_path).unwrap();
    assert!(text.contains(INTERRUPTED_RESULT), "the saved tape now has the result");
}

#[test]
fn sigint_cancels_cleanly_with_exit_130_and_an_aborted_result_on_the_tape() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "sleep 30"}))]);
    let child = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "long task"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sessions = home.dir.path().join("rab/sessions");
    let tape_path = wait_for(&sessions, "the tool call on the tape", |t| t.contains("sleep 30"));
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(10), "cancelled promptly");
    let (tape, _) = Tape::open(&tape_path).unwrap();
    let last = tape.leaf().unwrap();
    match last.message() {
        Some(rab_ai::Message::ToolResult(r)) => {
            assert!(r.text().starts_with("aborted"), "{}", r.text())
        }
        other => panic!("{other:?}"),
    }
}
