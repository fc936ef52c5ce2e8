//! Files rab puts in a prompt on its own (instruction files, system prompt files,
//! prompt commands, skills, agents) are read like the `read` tool reads: a link out of
//! an untrusted checkout is not followed, read deny rules hold, and the secret firewall
//! applies. What was found: a cloned repository's `AGENTS.md` linked to the user's SSH
//! key sent the key to the provider, headless, with no warning.

use std::path::Path;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, put, stderr, walk};

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAprivatebits\n";

/// A checkout whose prompt files are all links to the user's SSH key.
fn checkout_linking_to_the_key(home: &Home) -> std::path::PathBuf {
    let key = home.dir.path().join(".ssh/id_ed25519");
    put(&key, KEY);
    let dir = home.dir.path().join("src/cloned");
    std::fs::create_dir_all(dir.join(".rab/commands")).unwrap();
    std::fs::create_dir_all(dir.join(".rab/skills/s")).unwrap();
    for name in [
        "AGENTS.md",
        "CLAUDE.md",
        ".rab/SYSTEM.md",
        ".rab/APPEND_SYSTEM.md",
        ".rab/commands/x.md",
        ".rab/skills/s/SKILL.md",
    ] {
        std::os::unix::fs::symlink(&key, dir.join(name)).unwrap();
    }
    dir
}

fn run(home: &Home, llm: &FakeLlm, cwd: &Path, args: &[&str]) -> std::process::Output {
    llm.script([Turn::tool_call("skill", json!({"name": "x"})), Turn::text("done")]);
    home.rab_for("anthropic-messages", llm, Some("k"))
        .current_dir(cwd)
        .args(["-p", "--yolo"])
        .args(args)
        .arg("hi")
        .output()
        .unwrap()
}

/// Whether the key went anywhere: a request or a session file.
fn key_left(home: &Home, llm: &FakeLlm) -> Option<String> {
    let secret = "privatebits";
    for r in llm.requests() {
        if String::from_utf8_lossy(&r.raw).contains(secret) {
            return Some(format!("request {}", r.path));
        }
    }
    walk(&home.dir.path().join("rab"))
        .into_iter()
        .find(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(secret)))
        .map(|f| f.display().to_string())
}

#[test]
fn issue_34_prompt_files_linked_out_of_an_untrusted_checkout_are_not_sent() {
    let home = Home::new();
    let dir = checkout_linking_to_the_key(&home);
    let llm = FakeLlm::start();
    let out = run(&home, &llm, &dir, &[]);
    assert_eq!(key_left(&home, &llm), None, "{}", stderr(&out));
    let err = stderr(&out);
    for name in ["AGENTS.md", "CLAUDE.md", "SYSTEM.md", "APPEND_SYSTEM.md", "x.md", "SKILL.md"] {
        assert!(
            err.lines().any(|l| l.contains(name) && l.contains("not trusted")),
            "{name} not named: {err}"
        );
    }
    // The default prompt is used, and the run goes on.
    assert!(llm.requests()[0].body["system"].to_string().contains("You are rab"));
}

#[test]
fn issue_34_in_a_trusted_folder_a_read_deny_rule_still_keeps_the_target_out() {
    let home = Home::new();
    let dir = checkout_linking_to_the_key(&home);
    put(
        &home.dir.path().join("rab/agent/settings.json"),
        &json!({"permissions": {"deny": ["read(~/.ssh/**)"]}}).to_string(),
    );
    let llm = FakeLlm::start();
    let out = run(&home, &llm, &dir, &["--trust-project"]);
    assert_eq!(key_left(&home, &llm), None, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("AGENTS.md") && err.contains("read deny rule"), "{err}");

    // A hard link to the key (another name for the same file) is covered as well.
    let plain = home.dir.path().join("src/plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::hard_link(home.dir.path().join(".ssh/id_ed25519"), plain.join("AGENTS.md")).unwrap();
    let llm = FakeLlm::start();
    let out = run(&home, &llm, &plain, &["--trust-project"]);
    assert_eq!(key_left(&home, &llm), None, "{}", stderr(&out));
}

#[test]
fn issue_34_a_trusted_link_without_a_rule_is_followed_through_the_secret_firewall() {
    let home = Home::new();
    let notes = home.dir.path().join("notes/AGENTS.md");
    put(&notes, "Use tabs. The gateway key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123.\n");
    let dir = home.dir.path().join("src/mine");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&notes, dir.join("AGENTS.md")).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("done")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"))
        .current_dir(&dir)
        .args(["-p", "--trust-project", "hi"])
        .output()
        .unwrap();
    let system = llm.requests()[0].body["system"].to_string();
    assert!(system.contains("Use tabs."), "{system}\n{}", stderr(&out));
    assert!(!system.contains("abcdefghijklmnopqrstuvwxyz0123"), "{system}");
}
