//! Issue 36: the seams a new user crosses in the first hour and a team crosses every day
//! in CI — output into a closed pipe, settings from newer or other agents, JSON results
//! for every exit, resuming where you were.

use std::process::Stdio;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stderr, stdout};

/// Runs `cmd` with its stdout a pipe whose reader has already gone (`| head -1` after
/// the first line): rab must stop writing quietly, not panic (exit 101).
fn into_a_closed_pipe(mut cmd: std::process::Command) -> std::process::Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn issue_36_output_into_a_closed_pipe_ends_quietly() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut list = home.rab();
    list.args(["sessions", "list", "--all"]);
    let mut help = home.rab_for("anthropic-messages", &llm, Some("k"));
    help.args(["-p", "/help"]);
    let mut models = home.rab();
    models.arg("--list-models");
    for (what, cmd) in [("sessions list", list), ("-p /help", help), ("--list-models", models)] {
        let out = into_a_closed_pipe(cmd);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
}

/// The JSON lines on stdout of `out`.
fn json_out(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect()
}

#[test]
fn issue_36_every_exit_of_a_json_run_prints_one_result_object() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let user = home.dir.path().join("rab/agent/settings.json");
    // (what, extra arguments, key, user settings, exit code, words of the error)
    type Case<'a> = (&'a str, &'a [&'a str], Option<&'a str>, &'a str, i32, &'a str);
    let cases: [Case<'_>; 5] = [
        ("no key", &[], None, "", 1, "no API key"),
        ("bad flag", &["--bogus"], Some("k"), "", 2, "--bogus"),
        ("bad settings", &[], Some("k"), r#"{"maxTurns": "five"}"#, 2, "maxTurns"),
        ("unknown profile", &["--profile", "nope"], Some("k"), "", 2, "unknown profile"),
        (
            "unpriced budget",
            &["--model", "local-x", "--base-url", "http://127.0.0.1:9/v1", "--max-budget-usd", "1"],
            Some("k"),
            "",
            2,
            "price",
        ),
    ];
    for format in ["json", "stream-json"] {
        for (what, extra, key, settings, code, words) in cases {
            let _ = std::fs::remove_file(&user);
            if !settings.is_empty() {
                super::harness::put(&user, settings);
            }
            let out = home
                .rab_for("anthropic-messages", &llm, key)
                .args(["-p", "--output-format", format])
                .args(extra)
                .arg("hi")
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(code), "{format} {what}: {err}");
            let lines = json_out(&out);
            assert_eq!(lines.len(), 1, "{format} {what}: one line: {}", stdout(&out));
            let r = &lines[0];
            assert_eq!(
                (r["type"].as_str(), r["status"].as_str(), r["isError"].as_bool()),
                (Some("result"), Some("error"), Some(true)),
                "{format} {what}: {r}"
            );
            assert_eq!(r["exitCode"], code, "{format} {what}: {r}");
            let error = r["error"].as_str().unwrap_or_default();
            assert!(error.contains(words), "{format} {what}: {words} not in {r}");
        }
    }
    assert!(llm.requests().is_empty());
}

#[test]
fn issue_36_a_stopped_run_says_why_in_error_and_stream_json_opens_with_init() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::tool_call("ls", json!({}))]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "--max-turns", "2", "--output-format", "stream-json", "loop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let lines = json_out(&out);
    let init = &lines[0];
    assert_eq!((init["type"].as_str(), init["subtype"].as_str()), (Some("system"), Some("init")));
    let result = lines.last().unwrap();
    assert_eq!(init["sessionId"], result["sessionId"], "{init}");
    assert!(init["sessionId"].as_str().is_some_and(|s| !s.is_empty()), "{init}");
    assert_eq!(init["model"], result["model"]);
    assert_eq!(init["cwd"].as_str(), Some(home.dir.path().to_str().unwrap()), "{init}");
    assert_eq!(init["permissionMode"], "yolo");
    let tools: Vec<&str> =
        init["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"bash") && tools.contains(&"read"), "{tools:?}");
    assert_eq!(result["status"], "error_max_turns");
    assert!(
        result["error"].as_str().is_some_and(|e| e.contains("stopped after 2 turns")),
        "{result}"
    );
    // A command that needs a person, in print mode: still a result object.
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "/tree"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let r = &json_out(&out)[0];
    assert!(r["error"].as_str().is_some_and(|e| e.contains("/tree needs")), "{r}");
    assert!(r["sessionId"].as_str().is_some(), "{r}");
}

/// `git` in `dir`, failing the test if it fails.
fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn issue_36_plan_mode_runs_read_only_commands_for_a_review_and_nothing_else() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        eprintln!("SKIPPED: the plan-mode review test needs git");
        return;
    }
    let home = Home::new();
    let dir = home.dir.path().join("repo");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    std::fs::write(dir.join(".rab/settings.json"), r#"{"permissions": {"deny": ["read(.env)"]}}"#)
        .unwrap();
    std::fs::write(dir.join("README.md"), "first\n").unwrap();
    std::fs::write(dir.join(".env"), "TOKEN=1\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "README.md"]);
    git(&dir, &["commit", "-qm", "one"]);
    git(&dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("README.md"), "first\nsecond\n").unwrap();
    git(&dir, &["commit", "-qam", "two"]);
    let allowed = [
        "git diff main...HEAD",
        "git log --oneline -5 && git status --short",
        "ls -a | sort",
        "cat README.md",
        "grep -rn second README.md",
    ];
    let refused = [
        ("rm README.md", "rm is not a read-only command"),
        ("cat .env", "read(.env)"),
        ("cat ../../etc/passwd", "outside the project"),
        ("git diff --output=out.txt", "--output"),
        ("ls > listing.txt", "writes to a file"),
    ];
    let mut turn = Turn::tool_call("bash", json!({"command": allowed[0]}));
    for c in allowed[1..].iter().chain(refused.iter().map(|(c, _)| c)) {
        turn = turn.and_tool_call("bash", json!({"command": c}));
    }
    let llm = FakeLlm::start();
    llm.script([turn, Turn::text("Looks fine.")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .env("RAB_TRUST_PROJECT", "1")
        .args(["-p", "--permission-mode", "plan", "review this branch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "the refused ones are denials: {}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("+second"), "git diff ran: {results:?}");
    assert!(results[1].1.contains("two"), "{results:?}");
    assert!(results[2].1.contains("README.md"), "{results:?}");
    assert!(results[3].1.contains("second"), "{results:?}");
    assert!(results[4].1.contains("2:second"), "{results:?}");
    for (i, (command, why)) in refused.iter().enumerate() {
        let text = &results[allowed.len() + i].1;
        assert!(text.starts_with("permission denied: plan mode"), "{command}: {text}");
        assert!(text.contains(why), "{command}: {why} not in {text}");
        assert!(!text.contains("wait for approval"), "{command}: {text}");
    }
    assert!(dir.join("README.md").exists() && !dir.join("out.txt").exists());
    assert!(!dir.join("listing.txt").exists());
}

#[test]
fn issue_36_status_permissions_and_quick_memory_for_people_moving_over() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |line: &str| {
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .current_dir(&dir)
            .args(["-p", line])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
        stdout(&out)
    };
    let status = run("/status");
    for what in [
        "model: claude-",
        "endpoint: http://127.0.0.1",
        "key: $ANTHROPIC_API_KEY",
        "sandbox: ",
        "permission mode: default",
        "context: ~0 of",
    ] {
        assert!(status.contains(what), "{what} not in {status}");
    }
    // Rules: added to the user's own file, listed, removed.
    let added = run("/permissions deny bash(git push:*)");
    assert!(added.contains("added"), "{added}");
    let user = home.dir.path().join("rab/agent/settings.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["deny"], json!(["bash(git push:*)"]));
    assert!(run("/permissions").contains("deny: bash(git push:*)"));
    assert!(run("/permissions remove bash(git push:*)").contains("removed"));
    assert!(run("/permissions").contains("deny: (none)"));
    // `# note`: the project's AGENTS.md; `#~ note`: the user's own; no model request.
    assert!(run("# use pnpm, not npm").contains("Remembered in"));
    assert!(run("#~ answer briefly").contains("Remembered in"));
    assert_eq!(std::fs::read_to_string(dir.join("AGENTS.md")).unwrap(), "- use pnpm, not npm\n");
    let own = home.dir.path().join("rab/AGENTS.md");
    assert_eq!(std::fs::read_to_string(own).unwrap(), "- answer briefly\n");
    assert!(llm.requests().is_empty());
    // The next session's prompt holds the note.
    llm.script([Turn::text("ok")]);
    run("hello");
    let system = llm.requests()[0].body["system"].to_string();
    assert!(system.contains("use pnpm, not npm") && system.contains("answer briefly"), "{system}");
}

#[test]
fn issue_36_init_headless_writes_nothing_and_answers_with_the_proposal() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("```markdown\n# Guide\n- run `cargo test`\n```")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "/init"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("# Guide"), "{}", stdout(&out));
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!home.dir.path().join("AGENTS.md").exists(), "nobody approved it");
}
