//! The smaller capabilities the three seed designs describe, end to end through the real
//! binary against the fake server (issue 22).

use std::path::Path;

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{Home, stderr, stdout};

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// CrabClaw's project prompt file replaces the default prompt; `.rab/SYSTEM.md` wins over it.
#[test]
fn agent_system_prompt_md_is_the_projects_prompt() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    put(&proj.join(".agent/system-prompt.md"), "You are the release helper.\n");
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two")]);
    let run = |llm: &FakeLlm| {
        let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
        let out = cmd.current_dir(&proj).args(["-p", "--no-tools", "hi"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(run(&llm), "one\n");
    let system = llm.requests()[0].system();
    assert!(system.starts_with("You are the release helper."), "{system}");
    put(&proj.join(".rab/SYSTEM.md"), "You are rab's own prompt.\n");
    assert_eq!(run(&llm), "two\n");
    assert!(llm.requests()[1].system().starts_with("You are rab's own prompt."));
}
