//! Deny rules that hold: every spelling of a denied command is refused, in yolo mode,
//! by the real binary against the fake server, and the file it would delete survives.

use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, stderr};

/// A project with files `f1`..`f15` and a global `deny: ["bash(rm *)"]`.
fn setup(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 1..=15 {
        std::fs::write(dir.join(format!("f{i}")), "keep\n").unwrap();
    }
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(global.join("settings.json"), r#"{"permissions": {"deny": ["bash(rm *)"]}}"#)
        .unwrap();
    dir
}

fn run(home: &Home, llm: &FakeLlm, cwd: &Path, args: &[&str]) -> Output {
    home.rab_for("anthropic-messages", llm, Some("k"))
        .current_dir(cwd)
        .arg("-p")
        .args(args)
        .output()
        .unwrap()
}

/// The 14 spellings that once walked past a deny rule, and a heredoc-fed `sh`.
const SPELLINGS: [&str; 15] = [
    "echo $(rm f1)",
    "/bin/rm f2",
    "FOO=1 rm f3",
    "sh -c 'rm f4'",
    "command rm f5",
    "echo `rm f6`",
    "\\rm f7",
    "env rm f8",
    "bash -c \"rm f9\"",
    "echo f10 | xargs rm",
    "eval 'rm f11'",
    "$(printf rm) f12",
    "timeout 5 rm f13",
    "nice rm f14",
    "sh <<EOF\nrm f15\nEOF",
];

#[test]
fn every_spelling_of_a_denied_command_is_refused_in_yolo_and_the_files_survive() {
    let home = Home::new();
    let dir = setup(&home);
    let llm = FakeLlm::start();
    let mut turn = Turn::tool_call("bash", json!({"command": SPELLINGS[0]}));
    for cmd in &SPELLINGS[1..] {
        turn = turn.and_tool_call("bash", json!({"command": cmd}));
    }
    llm.script([turn, Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--yolo", "clean up"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!(results.len(), SPELLINGS.len());
    for (i, (cmd, (_, result))) in SPELLINGS.iter().zip(&results).enumerate() {
        assert!(result.starts_with("permission denied"), "{cmd}: {result}");
        let file = dir.join(format!("f{}", i + 1));
        assert!(file.exists(), "{cmd} deleted {}", file.display());
    }
    // Where the command word is only known when it runs, the result says so.
    assert!(results[11].1.contains("cannot tell which commands"), "{}", results[11].1);
    assert!(results[0].1.contains("denied by the rule \"bash(rm *)\""), "{}", results[0].1);
}

#[test]
fn a_word_rm_that_is_not_the_command_is_not_denied() {
    let home = Home::new();
    let dir = setup(&home);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "f1"]);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo rm"}))
            .and_tool_call("bash", json!({"command": "git rm -q --cached f1"})),
        // Calls of one message may run at once: the check comes after.
        Turn::tool_call("bash", json!({"command": "git status --short f1"})),
        Turn::text("ok"),
    ]);
    // Default mode: the allow rules decide, the deny rule only sees `rm` as a command.
    let out = run(
        &home,
        &llm,
        &dir,
        &["--allowed-tools", "bash(echo:*),bash(git rm:*),bash(git status:*)", "go"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "rm");
    assert!(!results[1].1.contains("denied"), "{}", results[1].1);
    let status = &llm.requests()[2].tool_results().last().unwrap().1.clone();
    assert_eq!(status, "?? f1", "git rm --cached ran and kept the file");
    assert!(dir.join("f1").exists());
}

#[test]
fn a_read_deny_rule_hides_files_from_grep_glob_and_ls() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(dir.join("secrets")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("secrets/prod.env"), "KEY=do-not-leak\n").unwrap();
    std::fs::write(dir.join("src/app.rs"), "let k = env(\"KEY\");\n").unwrap();
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join("settings.json"),
        r#"{"permissions": {"deny": ["read(secrets/**)"]}}"#,
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("grep", json!({"pattern": "KEY", "path": "."}))
            .and_tool_call("glob", json!({"pattern": "**/*"}))
            .and_tool_call("ls", json!({}))
            .and_tool_call("read", json!({"path": "secrets/prod.env"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["look for keys"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    for (name, text) in &results[..3] {
        assert!(!text.contains("do-not-leak") && !text.contains("prod.env"), "{name}: {text}");
        assert!(text.contains("under read deny rules left out"), "{name}: {text}");
    }
    assert!(results[0].1.contains("src/app.rs:1:"), "{}", results[0].1);
    assert!(results[3].1.starts_with("permission denied"), "{}", results[3].1);
}

#[test]
fn a_domain_rule_sees_the_host_the_fetch_would_reach() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    // To a hand-rolled parser the host is docs.rs (after the last '@'); to the fetch,
    // which parses as browsers do, it is 127.0.0.1.
    llm.script([
        Turn::tool_call("web_fetch", json!({"url": "http://127.0.0.1:9\\@docs.rs/"})),
        Turn::text("ok"),
    ]);
    let out =
        run(&home, &llm, &dir, &["--allowed-tools", "web_fetch(domain:docs.rs)", "fetch the docs"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(result.starts_with("permission denied"), "{result}");
    assert!(result.contains("no rule allows it"), "{result}");
}

#[test]
fn issue_36_a_misspelled_settings_key_is_a_warning_naming_the_file_and_the_key_meant() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(global.join("settings.json"), r#"{"permisions": {"deny": ["bash(rm *)"]}}"#)
        .unwrap();
    std::fs::create_dir_all(dir.join(".rab")).unwrap();
    std::fs::write(dir.join(".rab/settings.json"), r#"{"verbose": false, "maxTurns": "five"}"#)
        .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("hello")]);
    let out = run(&home, &llm, &dir, &["hi"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "agent/settings.json: unknown setting \"permisions\"; did you mean \"permissions\"?"
        ),
        "{err}"
    );
    assert!(err.contains(".rab/settings.json: unknown setting \"verbose\""), "{err}");
    assert!(err.contains(".rab/settings.json: maxTurns: expected a whole number"), "{err}");
    assert_eq!(llm.requests().len(), 1);
    // A bad value in the user's own file is still an error: they can mend it.
    std::fs::write(global.join("settings.json"), r#"{"maxTurns": "five"}"#).unwrap();
    let out = run(&home, &llm, &dir, &["hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("maxTurns: expected a whole number"), "{}", stderr(&out));
}

#[test]
fn an_allow_rule_does_not_allow_output_to_a_file_or_a_longer_command_word() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo hi > out.txt"}))
            .and_tool_call("bash", json!({"command": "lsof -v"}))
            .and_tool_call("bash", json!({"command": "echo fine"})),
        Turn::text("ok"),
    ]);
    let out = run(&home, &llm, &dir, &["--allowed-tools", "bash(echo*),bash(ls:*)", "go"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.starts_with("permission denied"), "{results:?}");
    assert!(!dir.join("out.txt").exists());
    assert!(results[1].1.starts_with("permission denied"), "{results:?}");
    assert_eq!(results[2].1, "fine");
}

/// What was found: seven of 254 spellings of `rm` walked past the deny rule — a coproc,
/// chroot, the dynamic loader run as a program, and a shell fed on an explicit fd 0.
#[test]
fn issue_34_wrappers_and_fd0_fed_shells_are_read_or_fail_closed() {
    let home = Home::new();
    let dir = setup(&home);
    let spellings = [
        "coproc rm f1",
        "chroot / rm f2",
        "/lib64/ld-linux-x86-64.so.2 /bin/rm f3",
        "sh 0<<<'rm f4'",
        "sh 0</dev/stdin <<EOF\nrm f5\nEOF",
        "nsenter -t 1 -m rm f6",
        "capsh -- -c 'rm f7'",
        "sudo -u nobody rm f8",
    ];
    let llm = FakeLlm::start();
    let mut turn = Turn::tool_call("bash", json!({"command": spellings[0]}));
    for cmd in &spellings[1..] {
        turn = turn.and_tool_call("bash", json!({"command": cmd}));
    }
    llm.script([turn, Turn::text("ok")]);
    let out = run(&home, &llm, &dir, &["--yolo", "clean up"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!(results.len(), spellings.len());
    for (i, (cmd, (_, result))) in spellings.iter().zip(&results).enumerate() {
        assert!(result.starts_with("permission denied"), "{cmd}: {result}");
        let file = dir.join(format!("f{}", i + 1));
        assert!(file.exists(), "{cmd} deleted {}", file.display());
    }
}
