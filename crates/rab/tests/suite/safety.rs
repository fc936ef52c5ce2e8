//! Permissions, hooks, the sandbox and the secret firewall, end to end: the real
//! binary, headless, against the fake server.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, stderr, stdout, walk};

fn project(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    std::fs::write(dir.join("notes.txt"), "alpha\n").unwrap();
    dir
}

/// `rab -p` in `cwd`, a folder these tests trust (its rules, hooks and agents are
/// what they test; `trust.rs` tests the untrusted case).
fn run(home: &Home, llm: &FakeLlm, cwd: &Path, args: &[&str]) -> Output {
    home.rab_for("anthropic-messages", llm, Some("k"))
        .current_dir(cwd)
        .env("RAB_TRUST_PROJECT", "1")
        .arg("-p")
        .args(args)
        .output()
        .unwrap()
}

/// One message calling read, edit and bash, then an answer.
fn three_calls() -> Vec<Turn> {
    vec![
        Turn::tool_call("read", json!({"path": "notes.txt"}))
            .and_tool_call(
                "edit",
                json!({"path": "notes.txt", "edits": [{"old_text": "alpha", "new_text": "beta"}]}),
            )
            .and_tool_call("bash", json!({"command": "echo ran > ran.txt"})),
        Turn::text("done"),
    ]
}

fn outcome(text: &str) -> &'static str {
    if text.starts_with("permission denied") { "denied" } else { "ran" }
}

#[test]
fn each_mode_allows_or_denies_a_read_an_edit_and_a_bash_call() {
    let cases = [
        ("default", ["ran", "denied", "denied"]),
        ("accept-edits", ["ran", "ran", "denied"]),
        ("plan", ["ran", "denied", "denied"]),
        ("yolo", ["ran", "ran", "ran"]),
    ];
    for (mode, expected) in cases {
        let home = Home::new();
        let dir = project(&home);
        let llm = FakeLlm::start();
        llm.script(three_calls());
        let started = Instant::now();
        let out = run(&home, &llm, &dir, &["--permission-mode", mode, "go"]);
        assert!(started.elapsed() < Duration::from_secs(20), "{mode}: no hang");
        // A run with refused calls finishes with exit 5.
        let code = if expected.contains(&"denied") { 5 } else { 0 };
        assert_eq!(out.status.code(), Some(code), "{mode}: {}", stderr(&out));
        assert_eq!(stdout(&out), "done\n");
        let results = llm.requests()[1].tool_results();
        let got: Vec<&str> = results.iter().map(|(_, t)| outcome(t)).collect();
        assert_eq!(got, expected, "{mode}: {results:?}");
        let edited = std::fs::read_to_string(dir.join("notes.txt")).unwrap() == "beta\n";
        assert_eq!(edited, expected[1] == "ran", "{mode}");
        assert_eq!(dir.join("ran.txt").exists(), expected[2] == "ran", "{mode}");
        if mode == "plan" {
            assert!(
                results[1]
                    .1
                    .contains("plan mode allows read-only tools and read-only commands only"),
                "{results:?}"
            );
        }
    }
}

#[test]
fn headless_asking_is_a_denial_with_advice_for_the_model_and_a_note_on_stderr() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "git status --short"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["check git"]);
    assert_eq!(out.status.code(), Some(5));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(result.contains("running headless with nobody to approve it"), "{result}");
    assert!(result.contains("--allowed-tools 'bash(git status:*)'"), "{result}");
    assert!(stderr(&out).contains("rab: denied bash"), "{}", stderr(&out));
}

#[test]
fn a_deny_rule_beats_an_allow_rule_and_an_allow_rule_lets_a_call_run() {
    let home = Home::new();
    let dir = project(&home);
    std::fs::write(
        dir.join(".rab/settings.json"),
        r#"{"permissions": {"allow": ["bash(echo *)"], "deny": ["bash(echo secret*)"]}}"#,
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo public"}))
            .and_tool_call("bash", json!({"command": "echo secret stuff"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--allowed-tools", "read,bash(echo secret*)", "go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "public");
    assert!(results[1].1.contains("denied by the rule \"bash(echo secret*)\""), "{results:?}");
}

#[test]
fn an_unknown_tool_in_a_rule_fails_at_load_naming_the_file_and_the_rule() {
    let home = Home::new();
    let dir = project(&home);
    let settings = dir.join(".rab/settings.json");
    std::fs::write(&settings, r#"{"permissions": {"deny": ["bsh(rm *)"]}}"#).unwrap();
    let llm = FakeLlm::start();
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&settings.display().to_string()), "{err}");
    assert!(err.contains("unknown tool 'bsh'") && err.contains("\"bsh(rm *)\""), "{err}");
    assert!(llm.requests().is_empty(), "nothing was sent");
    std::fs::remove_file(&settings).unwrap();
    for bad in [&["--permission-mode", "careful", "go"][..], &["--sandbox", "strict", "go"]] {
        let out = run(&home, &llm, &dir, bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains(bad[1]), "{}", stderr(&out));
    }
}

/// What was found: `/permissions allow Bogus(x)` wrote a rule that stopped rab from
/// starting until the file was fixed by hand. The rule is read back as the loader reads
/// it before anything is written (with the tool meant, when a name is near one); and a
/// tool rab does not have in the user's own settings (Claude Code's `NotebookEdit`,
/// `Agent`) is a warning at start, not a refusal.
#[test]
fn issue_53_a_rule_rab_cannot_read_is_never_written_and_an_unknown_tool_only_warns() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    let user = home.dir.path().join("rab/agent/settings.json");
    let out = run(&home, &llm, &dir, &["/permissions allow Bogus(x)"]);
    let err = stderr(&out);
    assert!(err.contains("Bogus(x) is not a rule rab can use: unknown tool 'Bogus'"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    let out = run(&home, &llm, &dir, &["/permissions deny bsh(rm *)"]);
    assert!(stderr(&out).contains("did you mean \"bash\"?"), "{}", stderr(&out));
    let written = std::fs::read_to_string(&user).unwrap_or_default();
    assert!(!written.contains("Bogus") && !written.contains("bsh"), "{written}");
    let out = run(&home, &llm, &dir, &["/permissions allow bash(cargo test:*)"]);
    assert!(stdout(&out).contains("bash(cargo test:*): added"), "{}", stderr(&out));
    // Claude Code's tools in the user's own settings: a warning, and rab starts.
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let settings = json!({"permissions": {"allow": ["NotebookEdit", "bash(cargo test:*)"], "deny": ["Agent(x)"]}});
    std::fs::write(&user, settings.to_string()).unwrap();
    llm.script([Turn::text("started")]);
    let out = run(&home, &llm, &dir, &["hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "started\n");
    let err = stderr(&out);
    assert!(err.contains("rule \"NotebookEdit\" skipped: unknown tool 'NotebookEdit'"), "{err}");
    assert!(err.contains("rule \"Agent(x)\" skipped"), "{err}");
}

#[test]
fn a_pre_tool_use_hook_blocks_with_exit_2_and_another_rewrites_the_input() {
    let home = Home::new();
    let dir = project(&home);
    let hooks = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command",
            "command": "grep -q 'rm -rf' && { echo 'destructive commands are not allowed' >&2; exit 2; }; exit 0"}]},
        {"matcher": "Bash", "hooks": [{"type": "command",
            "command": "grep -q 'echo one' && echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"updatedInput\": {\"command\": \"echo rewritten\"}}}'; exit 0"}]}
    ]}});
    std::fs::write(dir.join(".rab/settings.json"), hooks.to_string()).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "rm -rf build"}))
            .and_tool_call("bash", json!({"command": "echo one"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "blocked by a PreToolUse hook: destructive commands are not allowed");
    assert_eq!(results[1].1, "rewritten");
}

#[test]
fn the_workspace_sandbox_refuses_escapes_by_path_symlink_and_shell() {
    let home = Home::new();
    let dir = project(&home);
    std::fs::write(home.dir.path().join("outside.txt"), "private").unwrap();
    std::os::unix::fs::symlink(home.dir.path(), dir.join("link")).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "../outside.txt"}))
            .and_tool_call("read", json!({"path": "link/outside.txt"}))
            .and_tool_call("bash", json!({"command": "echo x > /etc/rab-test"}))
            .and_tool_call("bash", json!({"command": "echo inside > in.txt && cat in.txt"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "--sandbox", "workspace-write", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("is outside the workspace"), "{results:?}");
    assert!(results[1].1.contains("which resolves to"), "{results:?}");
    assert!(!results.iter().any(|(_, t)| t.contains("private")), "{results:?}");
    // Landlock says "Permission denied"; the namespace sandbox's read-only view says
    // "Read-only file system".
    let refused = ["ermission denied", "Read-only file system"];
    assert!(
        results[2].1.contains("exit code") && refused.iter().any(|r| results[2].1.contains(r)),
        "{results:?}"
    );
    assert!(!Path::new("/etc/rab-test").exists());
    assert_eq!(results[3].1, "inside", "writing inside the workspace works");
}

#[test]
fn secrets_are_redacted_before_the_model_and_the_tape_see_them() {
    let home = Home::new();
    let dir = project(&home);
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    std::fs::write(dir.join("config.txt"), format!("token = {key}\n")).unwrap();
    std::fs::write(dir.join(".env"), "DB_PASSWORD=correct-horse-battery\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "config.txt"}))
            .and_tool_call("read", json!({"path": ".env"})),
        Turn::tool_call("bash", json!({"command": "echo the pw is $(cut -d= -f2 .env)"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for r in llm.requests() {
        let raw = String::from_utf8_lossy(&r.raw);
        assert!(!raw.contains(key) && !raw.contains("correct-horse-battery"), "{raw}");
    }
    let results = llm.requests()[2].tool_results();
    assert!(results[0].1.contains("[REDACTED: API key (sk-…)]"), "{results:?}");
    assert!(results[2].1.contains("the pw is [REDACTED: value of DB_PASSWORD"), "{results:?}");
    let sessions = home.dir.path().join("rab/sessions");
    let tape = walk(&sessions).into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let text = std::fs::read_to_string(tape.unwrap()).unwrap();
    assert!(!text.contains(key) && !text.contains("correct-horse-battery"));
    assert!(text.contains("REDACTED"));
}

#[test]
fn the_api_key_is_not_in_a_commands_environment() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "env | grep -c API_KEY || true"})),
        Turn::text("ok"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k-secret-value-123"))
        .current_dir(&dir)
        .env("OTHER_API_KEY", "other-secret-456")
        .args(["-p", "--yolo", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(llm.requests()[1].tool_results()[0].1, "0");
}

#[test]
fn plan_mode_entered_by_the_model_refuses_an_edit_and_headless_cannot_approve_the_plan() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("enter_plan_mode", json!({})),
        Turn::tool_call(
            "edit",
            json!({"path": "notes.txt", "edits": [{"old_text": "alpha", "new_text": "beta"}]}),
        ),
        Turn::tool_call("exit_plan_mode", json!({"plan": "1. change alpha to beta"})),
        Turn::text("Plan: change alpha to beta."),
    ]);
    let out = run(&home, &llm, &dir, &["--permission-mode", "accept-edits", "plan it"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let reqs = llm.requests();
    // exit_plan_mode is offered only in plan mode: not declared at the start, announced
    // (with its schema) once plan mode is on.
    let first = reqs[0].transcript();
    assert!(first.tools.iter().any(|t| t == "enter_plan_mode" || t == "tool_search"));
    assert!(!first.tools.contains(&"exit_plan_mode".to_owned()), "{:?}", first.tools);
    let announced = reqs[1]
        .transcript()
        .items
        .iter()
        .any(|i| matches!(i, rab_fake_llm::Item::System(t) if t.contains("exit_plan_mode")));
    assert!(announced, "{:?}", reqs[1].transcript().items);
    assert!(reqs[1].tool_results()[0].1.starts_with("Plan mode"), "{:?}", reqs[1].tool_results());
    let edit = &reqs[2].tool_results()[1].1;
    assert!(
        edit.contains("plan mode allows read-only tools and read-only commands only"),
        "{edit}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "alpha\n");
    let exit = &reqs[3].tool_results()[2].1;
    assert!(exit.contains("nobody can approve the plan"), "{exit}");
}

#[test]
fn task_runs_two_sub_agents_in_parallel_each_with_its_own_tools() {
    let home = Home::new();
    let dir = project(&home);
    let agents = dir.join(".rab/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("a.md"),
        "---\nname: left\ndescription: d\ntools: bash, read\n---\nYou are left.",
    )
    .unwrap();
    std::fs::write(
        agents.join("b.md"),
        "---\nname: right\ndescription: d\ntools: bash, grep\n---\nYou are right.",
    )
    .unwrap();
    // Each sub-agent's command finishes only once the other's has started: they pass
    // only if both run at the same time.
    let meet = |me: &str, other: &str| {
        format!(
            "touch {me}; i=0; while [ ! -f {other} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; test -f {other} && echo met"
        )
    };
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "task",
            json!({"description": "left", "prompt": "go left", "subagent_type": "left"}),
        )
        .and_tool_call(
            "task",
            json!({"description": "right", "prompt": "go right", "subagent_type": "right"}),
        ),
        Turn::tool_call("bash", json!({"command": meet("x", "y")})),
        Turn::tool_call("bash", json!({"command": meet("y", "x")})),
        Turn::text("sub report"),
        Turn::text("sub report"),
        Turn::text("both done"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "split it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "both done\n");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 6);
    let tools_of = |r: &rab_fake_llm::RecordedRequest| -> Vec<String> {
        r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut sub: Vec<(String, Vec<String>)> = reqs[1..3]
        .iter()
        .map(|r| (r.system().lines().next().unwrap_or_default().to_owned(), tools_of(r)))
        .collect();
    sub.sort();
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        sub,
        [
            ("You are left.".to_owned(), names(&["bash", "read", "send_message"])),
            ("You are right.".to_owned(), names(&["bash", "grep", "send_message"])),
        ]
    );
    assert!(reqs[1].system().contains("Your id is task-"), "{}", reqs[1].system());
    for r in &reqs[3..5] {
        assert_eq!(r.tool_results()[0].1, "met", "the two ran side by side");
    }
    let results = reqs[5].tool_results();
    assert_eq!(
        results.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        ["sub report", "sub report"]
    );
    assert!(tools_of(&reqs[0]).contains(&"task".to_owned()));
}

#[test]
fn tool_search_expands_a_deferred_schema_for_the_next_request() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("tool_search", json!({"query": "fetch a web page"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = llm.requests();
    let tools = |i: usize| reqs[i].body["tools"].as_array().unwrap().clone();
    let schema = |i: usize| {
        tools(i).into_iter().find(|t| t["name"] == "web_fetch").unwrap()["input_schema"].clone()
    };
    assert!(!tools(0).iter().any(|t| t["name"] == "web_fetch"), "deferred: left out");
    let search = tools(0).into_iter().find(|t| t["name"] == "tool_search").unwrap();
    assert!(search["description"].as_str().unwrap().contains("web_fetch"), "named in tool_search");
    assert_eq!(
        schema(1)["properties"]["url"]["type"],
        "string",
        "expanded: {:?} {}",
        reqs[1].tool_results(),
        schema(1)
    );
    assert!(reqs[1].tool_results()[0].1.contains("\"url\""));
    let read = |i: usize| {
        let tools = reqs[i].body["tools"].as_array().unwrap().clone();
        tools.into_iter().find(|t| t["name"] == "read").unwrap()["input_schema"].clone()
    };
    assert_eq!(read(0)["properties"]["path"]["type"], "string", "core tools always in full");
}

#[test]
fn worktree_enter_moves_the_tools_and_exit_removes_it() {
    let home = Home::new();
    let dir = project(&home);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(&dir).status().unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "add", "notes.txt"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("enter_worktree", json!({"branch": "try-it"})),
        Turn::tool_call("write", json!({"path": "new.txt", "content": "in the worktree\n"})),
        Turn::tool_call("bash", json!({"command": "git branch --show-current && pwd"})),
        Turn::tool_call("exit_worktree", json!({"action": "remove"})),
        Turn::tool_call("exit_worktree", json!({"action": "remove", "discard_changes": true})),
        Turn::text("done"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "try it on a branch"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = llm.requests();
    let last = |i: usize| reqs[i].tool_results().last().unwrap().1.clone();
    let worktree = dir.join(".rab/worktrees/try-it");
    assert!(last(1).contains("try-it"), "{}", last(1));
    let shell = last(3);
    assert!(shell.starts_with("try-it\n"), "{shell}");
    assert!(shell.trim_end().ends_with(".rab/worktrees/try-it"), "{shell}");
    assert!(last(4).contains("uncommitted") || last(4).contains("changes"), "{}", last(4));
    assert!(!last(5).contains("error"), "{}", last(5));
    assert!(!worktree.exists(), "removed");
    assert!(!dir.join("new.txt").exists(), "the main checkout never saw the file");

    // Kept: left on disk and locked, so a `git worktree prune` never drops it.
    llm.script([
        Turn::tool_call("enter_worktree", json!({"branch": "keep-it"})),
        Turn::tool_call("exit_worktree", json!({"action": "keep"})),
        Turn::text("kept"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "keep a branch"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kept = llm.requests().last().unwrap().tool_results().last().unwrap().1.clone();
    assert!(kept.contains("kept and locked"), "{kept}");
    let list = std::process::Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("keep-it") && list.contains("locked kept by rab"), "{list}");
}

#[test]
fn prompt_session_and_stop_hooks_add_context_block_and_send_the_agent_back() {
    let home = Home::new();
    let dir = project(&home);
    let log = dir.join("hook.log");
    let hooks = json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'project uses tabs'"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "if grep -q forbidden; then echo 'that topic is off limits' >&2; exit 2; fi; echo 'branch: main'"}]}],
        "Stop": [{"hooks": [{"type": "command",
            "command": "if grep -q '\"stop_hook_active\":false'; then echo 'run the tests first' >&2; exit 2; fi"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": format!("cat >> {}", log.display())}]}]
    }});
    std::fs::write(dir.join(".rab/settings.json"), hooks.to_string()).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer"), Turn::text("tests pass")]);
    let out = run(&home, &llm, &dir, &["--yolo", "fix it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "the Stop hook sent the agent back once");
    assert_eq!(stdout(&out), "tests pass\n", "the final answer is the one after the hook");
    let first = reqs[0].user_texts().join("\n");
    assert!(
        first.contains("fix it")
            && first.contains("project uses tabs")
            && first.contains("branch: main"),
        "{first}"
    );
    assert_eq!(
        reqs[1].last_user_text().as_deref(),
        Some("Stop hook feedback: run the tests first")
    );
    let ended = std::fs::read_to_string(&log).unwrap();
    assert!(
        ended.contains("\"hook_event_name\":\"SessionEnd\"")
            && ended.contains("\"reason\":\"exit\""),
        "{ended}"
    );

    let llm = FakeLlm::start();
    let out = run(&home, &llm, &dir, &["--yolo", "tell me the forbidden thing"]);
    assert!(llm.requests().is_empty(), "a blocked prompt is not sent");
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("that topic is off limits"), "{}", stderr(&out));
}

#[test]
fn sandboxed_commands_have_no_network_unless_allowed() {
    if std::process::Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skipped: curl is not installed");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Answer every connection with a minimal HTTP response.
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut s = stream;
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    let cmd = format!("curl -s -m 5 http://127.0.0.1:{port}/ && echo reached || echo blocked");
    for (network, expected) in [(false, "blocked"), (true, "okreached")] {
        let home = Home::new();
        let dir = project(&home);
        std::fs::write(
            dir.join(".rab/settings.json"),
            json!({"sandbox": {"network": network}}).to_string(),
        )
        .unwrap();
        let llm = FakeLlm::start();
        llm.script([Turn::tool_call("bash", json!({"command": cmd})), Turn::text("ok")]);
        let out = run(&home, &llm, &dir, &["--yolo", "--sandbox", "workspace-write", "go"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(llm.requests()[1].tool_results()[0].1, expected, "network {network}");
    }
}

#[test]
fn the_sandbox_is_on_by_default_and_says_so_when_it_refuses_a_write() {
    if !rab_tools::sandbox::is_landlock_available() {
        eprintln!("skipped: Landlock is not available here (the sandbox is then off by default)");
        return;
    }
    let home = Home::new();
    let dir = project(&home);
    std::fs::create_dir_all(home.dir.path().join(".cache/tool")).unwrap();
    // Outside the project, the temp directory (/tmp, where the test's home is) and caches.
    let outside = PathBuf::from(format!("/var/tmp/rab-sandbox-test-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let llm = FakeLlm::start();
    let write_outside = format!("echo x > {}", outside.display());
    llm.script([
        Turn::tool_call("bash", json!({"command": write_outside}))
            .and_tool_call("bash", json!({"command": "echo in > in.txt && cat in.txt"}))
            .and_tool_call(
                "bash",
                json!({"command": "echo c > ~/.cache/tool/c && cat ~/.cache/tool/c"}),
            ),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("this may be the sandbox (workspace-write)"), "{results:?}");
    assert!(results[0].1.contains("--add-dir"), "{results:?}");
    assert!(!outside.exists());
    assert_eq!(results[1].1, "in");
    assert_eq!(results[2].1, "c", "tool caches are writable");
    // Opting out.
    llm.script([Turn::tool_call("bash", json!({"command": write_outside})), Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--yolo", "--sandbox", "off", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(outside.exists());
    let _ = std::fs::remove_file(&outside);
}

#[test]
fn config_set_is_an_edit_refused_in_plan_mode_while_get_runs() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("config", json!({"action": "get", "key": "theme"}))
            .and_tool_call("config", json!({"action": "set", "key": "theme", "value": "light"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--permission-mode", "plan", "look"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.starts_with("theme = "), "{results:?}");
    assert!(
        results[1].1.contains("plan mode allows read-only tools and read-only commands only"),
        "{results:?}"
    );
    let global = home.dir.path().join("rab/agent/settings.json");
    assert!(!std::fs::read_to_string(&global).unwrap_or_default().contains("light"));
    // An edit deny rule over the settings file covers config set, even in yolo.
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, r#"{"permissions": {"deny": ["edit(~/rab/**)"]}}"#).unwrap();
    llm.script([
        Turn::tool_call("config", json!({"action": "set", "key": "theme", "value": "light"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--yolo", "look"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let result = &llm.requests()[3].tool_results().last().unwrap().1.clone();
    assert!(result.contains("denied by the rule \"edit(~/rab/**)\""), "{result}");
}

#[test]
fn a_claude_code_hook_that_tests_tool_name_bash_sees_bash() {
    let home = Home::new();
    let dir = project(&home);
    // A Claude Code hook as people write them: blocks when tool_name is "Bash".
    let hook = r#"grep -q '"tool_name":"Bash"' && { echo 'no shell today' >&2; exit 2; }; exit 0"#;
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "echo ran"})), Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--yolo", "go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(result.contains("no shell today"), "{result}");
}

#[test]
fn issue_34_a_known_key_printed_reversed_as_hex_or_base64_is_redacted() {
    let home = Home::new();
    let dir = project(&home);
    let key = "sk-ant-api03-firewall-encodings-0123456789";
    std::fs::write(dir.join("k.txt"), format!("{{\"key\": \"{key}\"}}\n")).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "rev k.txt; echo; base64 -w0 k.txt; echo; od -An -tx1 k.txt | tr -d ' \\n'"})),
        Turn::text("ok"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some(key))
        .current_dir(&dir)
        .args(["-p", "--yolo", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    let reversed: String = key.chars().rev().collect();
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    assert!(!result.contains(&reversed) && !result.contains(&hex), "{result}");
    assert!(result.matches("[REDACTED:").count() >= 3, "{result}");
    let raw = String::from_utf8_lossy(&llm.requests()[1].raw).into_owned();
    assert!(!raw.contains(&reversed), "{raw}");
}

#[test]
fn issue_34_a_read_denied_file_is_never_read_by_edit_or_apply_patch_nor_through_a_hard_link() {
    let home = Home::new();
    let dir = project(&home);
    let secret = "DB_HOST=db.internal\nDB_PASSWORD=correct-horse-battery-staple\n";
    std::fs::write(dir.join(".env"), secret).unwrap();
    std::fs::hard_link(dir.join(".env"), dir.join("notes-copy.txt")).unwrap();
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"permissions": {"deny": ["read(**/.env)"]}}).to_string(),
    )
    .unwrap();
    let patch = "*** Begin Patch\n*** Update File: .env\n@@\n-DB_HOST=x\n+DB_HOST=y\n*** End Patch";
    let llm = FakeLlm::start();
    llm.script([
        // A blind edit whose "closest match" would quote the file.
        Turn::tool_call(
            "edit",
            json!({"path": ".env", "edits": [{"old_text": "DB_HOST=", "new_text": "X="}]}),
        )
        .and_tool_call(
            "edit",
            json!({"path": ".env", "edits": [{"old_text": "DB_HOST=nope", "new_text": "X"}]}),
        )
        .and_tool_call("read", json!({"path": "notes-copy.txt"}))
        .and_tool_call("grep", json!({"pattern": "DB_", "path": "."}))
        // A match only inside a longer word, whose refusal quotes the lines it is in,
        // and one through a view (escapes) that quotes nothing if it misses.
        .and_tool_call(
            "edit",
            json!({"path": ".env", "edits": [{"old_text": "DB_PASSWORD=corr", "new_text": "X"}]}),
        )
        .and_tool_call(
            "edit",
            json!({"path": ".env", "edits": [{"old_text": "DB_HOST=db\\x", "new_text": "X"}]}),
        ),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--permission-mode", "accept-edits", "go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    for (_, text) in &results {
        assert!(!text.contains("correct-horse") && !text.contains("db.internal"), "{results:?}");
    }
    assert!(results[0].1.contains("read deny rule"), "{results:?}");
    assert!(results[2].1.contains("another name"), "{results:?}");
    assert!(results[4].1.contains("read deny rule"), "{results:?}");
    assert!(results[5].1.contains("read deny rule"), "{results:?}");
    assert_eq!(std::fs::read_to_string(dir.join(".env")).unwrap(), secret, "nothing changed");
    // apply_patch, for models that edit with it.
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"editTool": "apply_patch", "permissions": {"deny": ["read(**/.env)"]}}).to_string(),
    )
    .unwrap();
    llm.script([Turn::tool_call("apply_patch", json!({"input": patch})), Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--permission-mode", "accept-edits", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("read deny rule"), "{results:?}");
    assert!(!results[0].1.contains("db.internal"), "{results:?}");
}

/// What was found: a headless `config set` was refused with advice that could not work:
/// stderr said `--allowed-tools ''`, and the model was told to add `config(PATH)`, a
/// rule rab cannot read. Both now name the rule that works, and with it in the user's
/// own settings the same call runs headless.
#[test]
fn issue_53_config_set_headless_names_a_rule_that_works_and_runs_with_it() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    let set =
        || Turn::tool_call("config", json!({"action": "set", "key": "theme", "value": "light"}));
    llm.script([set(), Turn::text("refused"), set(), Turn::text("set")]);
    let global = home.dir.path().join("rab/agent/settings.json");
    let rule = format!("edit({})", global.display());
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("add the rule \"{rule}\" to permissions.allow")), "{err}");
    assert!(!err.contains("--allowed-tools ''"), "{err}");
    let result = llm.requests()[1].tool_results()[0].1.clone();
    assert!(result.contains(&format!("add the rule \"{rule}\"")), "{result}");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, json!({"permissions": {"allow": [rule]}}).to_string()).unwrap();
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "set\n");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(saved["theme"], "light", "{saved}");
}

/// Issue 53: the user's own hooks run as written (outside the sandbox, as Claude Code
/// runs them) and hear the mode in Claude Code's words; a project's hook stays in the
/// sandbox, and its failure is shown on stderr with the reason.
#[test]
fn own_hooks_run_as_written_and_a_project_hooks_failure_says_why() {
    let home = Home::new();
    let dir = project(&home);
    let outside = home.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let own = format!("cat > {}/own-input.json", outside.display());
    std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
    std::fs::write(
        home.dir.path().join("rab/agent/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": own}]}]}})
            .to_string(),
    )
    .unwrap();
    let project_hook = format!("touch {}/project-hook-ran", outside.display());
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"hooks": {"PostToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": project_hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("read", json!({"path": "notes.txt"})), Turn::text("ok")]);
    let out = run(
        &home,
        &llm,
        &dir,
        &["--permission-mode", "accept-edits", "--sandbox", "workspace-write", "go"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outside.join("own-input.json")).unwrap())
            .unwrap();
    assert_eq!(input["permission_mode"], "acceptEdits", "{input}");
    assert_eq!(input["tool_name"], "Read", "{input}");
    assert!(!outside.join("project-hook-ran").exists(), "a project's hook stays in the sandbox");
    let err = stderr(&out);
    assert!(err.contains("PostToolUse hook"), "the failure is shown: {err}");
    assert!(err.contains("hooks from this project run in the sandbox"), "{err}");
}

/// Issue 53: a SessionEnd hook's failure is shown too (stderr, as the run ends), with
/// the reason; it used to go to the log only.
#[test]
fn a_session_end_hooks_failure_is_shown_as_rab_exits() {
    let home = Home::new();
    let dir = project(&home);
    let outside = home.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let hook = format!("touch {}/session-ended", outside.display());
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--sandbox", "workspace-write", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!outside.join("session-ended").exists(), "a project's hook stays in the sandbox");
    let err = stderr(&out);
    assert!(err.contains("SessionEnd hook"), "the failure is shown: {err}");
    assert!(err.contains("hooks from this project run in the sandbox"), "{err}");
}

/// Issue 53: a call that would fail is not put to the user (here: headless, where a
/// question is a refusal and exit 5); the model hears why, and nothing runs.
#[test]
fn an_edit_that_would_fail_is_not_put_to_the_user() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "edit",
            json!({"path": "notes.txt", "edits": [{"old_text": "not in the file", "new_text": "x"}]}),
        ),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(0), "not a refusal: {}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(result.contains("not run: nothing was changed"), "{result}");
    assert!(!result.contains("permission"), "{result}");
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "alpha\n");
    // One that would work is still asked (and refused headless).
    llm.script([
        Turn::tool_call(
            "edit",
            json!({"path": "notes.txt", "edits": [{"old_text": "alpha", "new_text": "beta"}]}),
        ),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "alpha\n");
}
