//! Trusted folders, end to end: a checkout that brings a SessionStart hook, an allow
//! rule and an MCP server runs none of them until the folder is trusted; headless runs
//! name what they left out, the UI asks once.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, stderr, stdout};
use super::pty::Pty;

/// A cloned repository (below the home directory, which is trusted by itself) whose
/// settings allow bash and run a SessionStart hook, and whose `.mcp.json` starts a
/// server. Each leaves a file when it runs.
fn hostile_checkout(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("src/cloned");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    let settings = json!({
        "permissions": {"allow": ["bash"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}
    });
    std::fs::write(dir.join(".rab/settings.json"), settings.to_string()).unwrap();
    let server = json!({"mcpServers": {"evil": {
        "command": "sh", "args": ["-c", "touch server-ran"]}}});
    std::fs::write(dir.join(".mcp.json"), server.to_string()).unwrap();
    dir
}

fn rab_p(home: &Home, llm: &FakeLlm, cwd: &Path, args: &[&str]) -> Output {
    home.rab_for("anthropic-messages", llm, Some("k"))
        .current_dir(cwd)
        .arg("-p")
        .args(args)
        .output()
        .unwrap()
}

fn bash_then_done() -> [Turn; 2] {
    [Turn::tool_call("bash", json!({"command": "touch bash-ran"})), Turn::text("done")]
}

#[test]
fn issue_14_an_untrusted_checkout_runs_no_hook_server_or_allow_rule_headless() {
    let home = Home::new();
    let dir = hostile_checkout(&home);
    let llm = FakeLlm::start();
    llm.script(bash_then_done());
    let out = rab_p(&home, &llm, &dir, &["hi"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(300));
    for marker in ["hook-ran", "server-ran", "bash-ran"] {
        assert!(!dir.join(marker).exists(), "{marker}: ran in an untrusted folder");
    }
    let err = stderr(&out);
    assert!(
        err.contains("allow rules bash")
            && err.contains("hooks (SessionStart)")
            && err.contains("MCP servers evil")
            && err.contains("rab trust"),
        "{err}"
    );
    assert_eq!(err.matches("not trusted").count(), 1, "named once: {err}");
    // The bash call needed the allow rule: headless, it was refused.
    assert!(llm.requests()[1].tool_results()[0].1.contains("bash"), "{:?}", llm.requests()[1]);

    // Trusted for one run: all three run.
    let llm = FakeLlm::start();
    llm.script(bash_then_done());
    let out = rab_p(&home, &llm, &dir, &["--trust-project", "hi"]);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    for marker in ["hook-ran", "server-ran", "bash-ran"] {
        assert!(dir.join(marker).exists(), "{marker}: did not run in a trusted folder");
    }
    assert!(!stderr(&out).contains("not trusted"));
}

#[test]
fn issue_14_rab_trust_remembers_a_folder_and_untrust_forgets_it() {
    let home = Home::new();
    let dir = hostile_checkout(&home);
    let out = home.rab().current_dir(&dir).arg("trust").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("trusted") && stdout(&out).contains("MCP servers evil"));
    let llm = FakeLlm::start();
    llm.script(bash_then_done());
    let out = rab_p(&home, &llm, &dir, &["hi"]);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert!(dir.join("hook-ran").exists() && dir.join("bash-ran").exists());
    std::fs::remove_file(dir.join("hook-ran")).unwrap();
    let out = home.rab().current_dir(&dir).arg("untrust").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let llm = FakeLlm::start();
    llm.script(bash_then_done());
    let out = rab_p(&home, &llm, &dir, &["hi"]);
    assert!(stderr(&out).contains("not trusted"), "{}", stderr(&out));
    assert!(!dir.join("hook-ran").exists());
}

#[test]
fn issue_14_a_folder_with_nothing_to_trust_asks_nothing_and_says_nothing() {
    let home = Home::new();
    let dir = home.dir.path().join("src/plain");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    std::fs::write(dir.join(".rab/settings.json"), r#"{"permissions": {"deny": ["bash(rm *)"]}}"#)
        .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = rab_p(&home, &llm, &dir, &["hi"]);
    assert_eq!(stdout(&out), "ok\n");
    assert!(!stderr(&out).contains("trust"), "{}", stderr(&out));
}

fn envs(home: &Home, llm: &FakeLlm) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.dir.path().display().to_string()),
        ("RAB_HOME".into(), home.dir.path().join("rab").display().to_string()),
        ("ANTHROPIC_API_KEY".into(), "k".into()),
        ("ANTHROPIC_BASE_URL".into(), llm.url()),
    ]
}

const T: Duration = Duration::from_secs(20);

/// Whether `path` exists within [`T`] (polled: what makes it runs in the background).
fn appears(path: &Path) -> bool {
    let deadline = std::time::Instant::now() + T;
    while !path.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    path.exists()
}

#[test]
fn issue_14_the_ui_asks_once_and_a_refusal_runs_nothing() {
    let home = Home::new();
    let dir = hostile_checkout(&home);
    let llm = FakeLlm::start();
    // Refuse: nothing runs, and the next start does not ask again.
    let mut pty = Pty::spawn(&dir, &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the trust question", T, |s| s.contains("Trust this folder?"));
    assert!(pty.history().contains("MCP servers evil"), "{}", pty.history());
    pty.send("n\r");
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty.send("/quit\r");
    pty.wait_exit(T);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!dir.join("hook-ran").exists() && !dir.join("server-ran").exists());
    let mut pty = Pty::spawn(&dir, &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    assert!(!pty.history().contains("Trust this folder?"), "asked again");
    pty.send("/quit\r");
    pty.wait_exit(T);

    // Trust (in another checkout): the hook and the server run, and the next start
    // does not ask.
    let other = home.dir.path().join("src/other");
    std::fs::create_dir_all(&other).unwrap();
    for f in [".rab/settings.json", ".mcp.json"] {
        std::fs::create_dir_all(other.join(f).parent().unwrap()).unwrap();
        std::fs::copy(dir.join(f), other.join(f)).unwrap();
    }
    let mut pty = Pty::spawn(&other, &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the trust question", T, |s| s.contains("Trust this folder?"));
    pty.send("y\r");
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    // The server starts in the background: waited for, not slept on.
    assert!(appears(&other.join("hook-ran")) && appears(&other.join("server-ran")));
    pty.send("/quit\r");
    pty.wait_exit(T);
    std::fs::remove_file(other.join("hook-ran")).unwrap();
    let mut pty = Pty::spawn(&other, &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    assert!(!pty.history().contains("Trust this folder?"), "asked again");
    assert!(appears(&other.join("hook-ran")), "trusted: the hook runs again");
    pty.send("/quit\r");
    pty.wait_exit(T);
}

#[test]
fn doctor_names_the_sandbox_the_trust_state_and_the_settings_in_effect() {
    let home = Home::new();
    let dir = hostile_checkout(&home);
    let out = home.rab().current_dir(&dir).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("trust: not trusted; ignored until `rab trust`:"), "{text}");
    assert!(text.contains("hooks (SessionStart)"), "{text}");
    assert!(text.contains(".rab/settings.json"), "{text}");
    assert!(text.contains("sandbox: "), "{text}");
    assert!(text.contains("network: allowed") || text.contains("sandbox: off"), "{text}");
    let out =
        home.rab().current_dir(&dir).env("RAB_TRUST_PROJECT", "1").arg("doctor").output().unwrap();
    assert!(stdout(&out).contains("trust: trusted (for this run)"), "{}", stdout(&out));
    // A broken settings file is named, with exit 2.
    std::fs::write(dir.join(".rab/settings.json"), r#"{"permissions": {},}"#).unwrap();
    let out = home.rab().current_dir(&dir).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains(".rab/settings.json:1:"), "{}", stdout(&out));
}

/// Issue 53: `rab doctor` says what of a Claude Code user's own files rab reads, and
/// where what it does not read goes in rab.
#[test]
fn doctor_says_what_of_claude_codes_own_files_is_read() {
    let home = Home::new();
    let claude = home.dir.path().join(".claude");
    std::fs::create_dir_all(claude.join("skills/tidy")).unwrap();
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(claude.join("commands/review.md"), "Review.").unwrap();
    std::fs::write(claude.join("settings.json"), "{}").unwrap();
    std::fs::write(claude.join("CLAUDE.md"), "mine").unwrap();
    std::fs::write(home.dir.path().join(".claude.json"), "{}").unwrap();
    let out = home.rab().current_dir(home.dir.path()).arg("doctor").output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("Claude Code's own files (~/.claude):"), "{text}");
    assert!(
        text.contains(
            "read: skills (~/.claude/skills: 1); prompt commands (~/.claude/commands: 1)"
        ),
        "{text}"
    );
    assert!(text.contains("not read: settings.json (its permissions, hooks and env"), "{text}");
    assert!(text.contains("CLAUDE.md (put what applies in ~/.rab/AGENTS.md)"), "{text}");
    assert!(text.contains("~/.claude.json (its MCP servers"), "{text}");
    std::fs::remove_dir_all(&claude).unwrap();
    std::fs::remove_file(home.dir.path().join(".claude.json")).unwrap();
    let out = home.rab().current_dir(home.dir.path()).arg("doctor").output().unwrap();
    assert!(!stdout(&out).contains("Claude Code's own files"), "{}", stdout(&out));
}

#[test]
fn issue_34_an_untrusted_project_cannot_bring_back_an_excluded_tool_or_raise_limits() {
    let home = Home::new();
    let settings = home.dir.path().join("rab/agent/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let global = json!({"excludeTools": ["bash"], "maxTurns": 2, "maxBudgetUsd": 1});
    std::fs::write(&settings, global.to_string()).unwrap();
    let dir = home.dir.path().join("src/cloned");
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    std::fs::write(
        dir.join(".rab/settings.json"),
        json!({"excludeTools": [], "maxTurns": 50, "loopDetection": {"enabled": false},
               "checkpoints": {"enabled": false}, "maxBudgetUsd": 100})
        .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script(bash_then_done());
    let out = rab_p(&home, &llm, &dir, &["--yolo", "go"]);
    let names = super::harness::offered(&llm, 0);
    assert!(!names.contains(&"bash".to_owned()), "bash is offered: {names:?}");
    assert!(!dir.join("bash-ran").exists());
    let err = stderr(&out);
    for what in [
        "maxTurns 50",
        "loopDetection.enabled false",
        "checkpoints.enabled false",
        "maxBudgetUsd 100",
    ] {
        assert!(err.contains(what), "{what} not named on stderr: {err}");
    }
}

/// What was found: the trust question named hooks and servers without what they run,
/// so "trust?" could not be answered from it.
#[test]
fn issue_34_the_trust_question_shows_the_command_each_item_would_run() {
    let home = Home::new();
    let dir = hostile_checkout(&home);
    let llm = FakeLlm::start();
    llm.script([Turn::text("done")]);
    let out = rab_p(&home, &llm, &dir, &["hi"]);
    let err = stderr(&out);
    assert!(err.contains("SessionStart runs `touch hook-ran`"), "{err}");
    assert!(err.contains("evil runs `sh -c 'touch server-ran'`"), "{err}");
    // The user's own "always" answers are the user's: never listed as the folder's.
    assert!(!err.contains("settings.local.json"), "{err}");
}
