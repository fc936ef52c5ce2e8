//! The GitHub Action's scripts (action/run.sh, action/comment.sh) as the runner would
//! run them, with the real binary against the fake server: outputs, trust by event,
//! and the pull-request comment (to a local stand-in for the GitHub API).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rab_fake_llm::{FakeLlm, ScriptedUsage, Turn};
use serde_json::json;

use super::harness::{Home, stderr};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether the tools the scripts use are here; the caller skips (saying so) if not.
fn has_tools() -> bool {
    let ok = ["bash", "jq", "curl"]
        .iter()
        .all(|t| Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success()));
    if !ok {
        eprintln!("SKIPPED: the GitHub Action script tests need bash, jq and curl");
    }
    ok
}

/// A checkout whose settings carry a hook and an allow rule for everything.
fn checkout(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("work/repo");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    let settings = json!({
        "permissions": {"allow": ["bash"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}
    });
    std::fs::write(dir.join(".rab/settings.json"), settings.to_string()).unwrap();
    dir
}

/// Runs action/run.sh in `dir` for `event` (`push`, or a pull request from `head`).
fn run_action(home: &Home, llm: &FakeLlm, dir: &Path, head: Option<&str>) -> (Output, String) {
    run_action_with(home, llm, dir, head, &[])
}

/// [`run_action`] with more `INPUT_*` (or other) variables.
fn run_action_with(
    home: &Home,
    llm: &FakeLlm,
    dir: &Path,
    head: Option<&str>,
    vars: &[(&str, &str)],
) -> (Output, String) {
    let runner = home.dir.path().join("runner");
    std::fs::create_dir_all(&runner).unwrap();
    let output = runner.join("output");
    let _ = std::fs::remove_file(&output);
    let event = runner.join("event.json");
    let name = match head {
        Some(repo) => {
            let body =
                json!({"pull_request": {"number": 7, "head": {"repo": {"full_name": repo}}}});
            std::fs::write(&event, body.to_string()).unwrap();
            "pull_request"
        }
        None => {
            std::fs::write(&event, "{}").unwrap();
            "push"
        }
    };
    let out = Command::new("bash")
        .arg(repo_root().join("action/run.sh"))
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.dir.path())
        .env("RAB_HOME", home.dir.path().join("rab"))
        .env("RAB_BIN", env!("CARGO_BIN_EXE_rab"))
        .env("RUNNER_TEMP", &runner)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_EVENT_NAME", name)
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "owner/repo")
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", llm.url())
        .env("INPUT_PROMPT", "run the tests")
        .env("INPUT_PROVIDER", "anthropic")
        .env("INPUT_MAX_TURNS", "5")
        .env("INPUT_PERMISSION_MODE", "default")
        .env("INPUT_TRUST", "auto")
        .env("INPUT_FAIL_ON_ERROR", "true")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let written = std::fs::read_to_string(&output).unwrap_or_default();
    (out, written)
}

fn script() -> [Turn; 2] {
    let usage = ScriptedUsage { input: 1000, output: 100, ..ScriptedUsage::default() };
    [
        Turn::tool_call("bash", json!({"command": "touch bash-ran"})).with_usage(usage),
        Turn::text("All 12 tests pass.\nNothing to fix.").with_usage(usage),
    ]
}

#[test]
fn a_push_runs_trusted_and_writes_the_outputs() {
    if !has_tools() {
        return;
    }
    let home = Home::new();
    let dir = checkout(&home);
    let llm = FakeLlm::start();
    llm.script(script());
    let (out, written) = run_action(&home, &llm, &dir, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(written.contains("exit-code=0\n"), "{written}");
    assert!(written.contains("result<<rab_"), "{written}");
    assert!(written.contains("All 12 tests pass.\nNothing to fix.\n"), "{written}");
    let cost: f64 = written
        .lines()
        .find_map(|l| l.strip_prefix("cost-usd="))
        .and_then(|c| c.parse().ok())
        .expect("a cost output");
    assert!(cost > 0.0, "{written}");
    assert!(written.lines().any(|l| l.starts_with("session-id=0")), "{written}");
    // Trusted: the checkout's hook ran and its allow rule let bash run headless.
    assert!(dir.join("hook-ran").exists());
    assert!(dir.join("bash-ran").exists());
    // The result file is in Claude Code's schema by default (issue 53), rab's on request.
    let file = written.lines().find_map(|l| l.strip_prefix("result-file=")).unwrap().to_owned();
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0, "{result}");
    llm.script(script());
    let (out, written) =
        run_action_with(&home, &llm, &dir, None, &[("INPUT_OUTPUT_SCHEMA", "rab")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert!(written.contains("All 12 tests pass."), "{written}");
    let (out, _) = run_action_with(&home, &llm, &dir, None, &[("INPUT_OUTPUT_SCHEMA", "pi")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("output-schema must be claude or rab"), "{}", stderr(&out));
}

#[test]
fn a_pull_request_from_a_fork_runs_untrusted() {
    if !has_tools() {
        return;
    }
    let home = Home::new();
    let dir = checkout(&home);
    let llm = FakeLlm::start();
    llm.script(script());
    let (out, written) = run_action(&home, &llm, &dir, Some("stranger/repo"));
    // bash was refused (no allow rule applies, nobody to ask): exit 5, and the step fails.
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("running untrusted"), "{}", stderr(&out));
    assert!(written.contains("exit-code=5\n"), "{written}");
    assert!(!dir.join("hook-ran").exists(), "the fork's hook must not run");
    assert!(!dir.join("bash-ran").exists(), "the fork's allow rule must not apply");
    // The same repository's own pull request is trusted.
    let llm = FakeLlm::start();
    llm.script(script());
    let (out, _) = run_action(&home, &llm, &dir, Some("owner/repo"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.join("hook-ran").exists());
}

#[test]
fn the_answer_is_posted_as_a_pull_request_comment() {
    if !has_tools() {
        return;
    }
    let home = Home::new();
    // rab's schema, then Claude Code's (the action's default) for a stopped run.
    let answer = json!({"type": "result", "exitCode": 0, "result": "Looks good.\nOne nit.",
                        "costUsd": 0.25, "subAgents": {"costUsd": 0.05}});
    let (head, text) = post_comment(&home, &answer, "0");
    assert!(head.starts_with("POST /repos/owner/repo/issues/7/comments "), "{head}");
    assert!(head.contains("Bearer ghs_token"), "{head}");
    assert!(text.contains("Looks good.\nOne nit."), "{text}");
    assert!(text.contains("exit 0 · $0.3</sub>"), "{text}");
    let answer = json!({"type": "result", "subtype": "error_max_turns", "is_error": true,
                        "total_cost_usd": 0.125, "errors": ["stopped after 5 turns"]});
    let (_, text) = post_comment(&home, &answer, "3");
    assert!(text.contains("rab stopped: stopped after 5 turns"), "{text}");
    assert!(text.contains("exit 3 · $0.125</sub>"), "{text}");
}

/// Runs action/comment.sh on `answer` against a stand-in for the GitHub API; returns
/// the request's head and the comment's text.
fn post_comment(home: &Home, answer: &serde_json::Value, exit_code: &str) -> (String, String) {
    let result = home.dir.path().join("result.json");
    std::fs::write(&result, answer.to_string()).unwrap();
    // A stand-in for the GitHub API: one request, answered 201.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut head = String::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        conn.write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}").unwrap();
        (head, String::from_utf8(body).unwrap())
    });
    let out = Command::new("bash")
        .arg(repo_root().join("action/comment.sh"))
        .env("GITHUB_TOKEN", "ghs_token")
        .env("PR_NUMBER", "7")
        .env("GITHUB_REPOSITORY", "owner/repo")
        .env("GITHUB_API_URL", &api)
        .env("RESULT_FILE", &result)
        .env("EXIT_CODE", exit_code)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (head, body) = server.join().unwrap();
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    (head, body["body"].as_str().unwrap().to_owned())
}

#[test]
fn issue_36_rules_and_args_arrive_whole_one_per_line() {
    if !has_tools() {
        return;
    }
    let home = Home::new();
    let dir = checkout(&home);
    // Files a glob would expand `*` to.
    std::fs::write(dir.join("a.txt"), "").unwrap();
    let llm = FakeLlm::start();
    llm.script(script());
    let vars = [
        ("INPUT_ALLOWED_TOOLS", "bash(touch *)\n\n  read  \n"),
        ("INPUT_DISALLOWED_TOOLS", "bash(git push:*)"),
        ("INPUT_ARGS", "--append-system-prompt\nAnswer in * one line, with (parens)\n"),
    ];
    // A fork: no allow rule of the checkout applies, only the input's.
    let (out, written) = run_action_with(&home, &llm, &dir, Some("stranger/repo"), &vars);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(written.contains("exit-code=0\n"), "{written}");
    assert!(dir.join("bash-ran").exists(), "the allowed-tools input let bash run");
    let system = llm.requests()[0].body["system"].to_string();
    assert!(system.contains("Answer in * one line, with (parens)"), "{system}");
}

#[test]
fn issue_36_outputs_are_never_empty_and_an_empty_result_posts_nothing() {
    if !has_tools() {
        return;
    }
    let home = Home::new();
    let dir = checkout(&home);
    let llm = FakeLlm::start();
    // No key: rab fails before the model; the result says why.
    let (out, written) = run_action_with(
        &home,
        &llm,
        &dir,
        None,
        &[("ANTHROPIC_API_KEY", ""), ("INPUT_FAIL_ON_ERROR", "false")],
    );
    assert_eq!(out.status.code(), Some(0), "fail-on-error false: {}", stderr(&out));
    assert!(written.contains("exit-code=1\n"), "{written}");
    let result = written.split("result<<").nth(1).unwrap_or_default();
    assert!(result.contains("API key"), "the result output says why: {written}");
    // A binary that prints nothing at all: the outputs still say what happened.
    let (out, written) = run_action_with(
        &home,
        &llm,
        &dir,
        None,
        &[("RAB_BIN", "false"), ("INPUT_FAIL_ON_ERROR", "false")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(written.contains("rab printed no result (exit 1)"), "{written}");
    // The comment step with nothing to post says so and succeeds without calling GitHub.
    let empty = home.dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"type": "result", "result": "", "error": null}"#).unwrap();
    let out = Command::new("bash")
        .arg(repo_root().join("action/comment.sh"))
        .env("RESULT_FILE", &empty)
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to post"));
}
