//! Custom prompt commands and skills from every discovery directory, end to end in the
//! REPL against the fake server.

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, put, stderr, stdout, with_stdin};

fn skill(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill\n---\nSteps of {name} for $ARGUMENTS.\n"
    )
}

#[test]
fn prompt_commands_and_skills_from_every_directory_work() {
    let home = Home::new();
    let h = home.dir.path();
    let proj = h.join("proj");
    put(
        &proj.join(".rab/commands/fix.md"),
        "---\ndescription: Fix an issue\nargument-hint: [issue]\n---\nFix issue #$1 carefully.\n",
    );
    put(&proj.join(".claude/commands/explain.md"), "Explain this project.\n");
    put(&h.join("rab/commands/greet.md"), "Say hello to $ARGUMENTS.\n");
    put(&proj.join(".rab/skills/one/SKILL.md"), &skill("one"));
    put(&proj.join(".agent/skills/two/SKILL.md"), &skill("two"));
    put(&proj.join(".claude/skills/three/SKILL.md"), &skill("three"));
    put(&h.join("rab/skills/four/SKILL.md"), &skill("four"));
    put(&h.join(".claude/skills/five/SKILL.md"), &skill("five"));
    put(&proj.join(".rab/skills/broken/SKILL.md"), "---\nname: broken\n---\nno description\n");
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("a"),
        Turn::text("b"),
        Turn::text("c"),
        Turn::text("d"),
        Turn::tool_call("skill", json!({"name": "five", "arguments": "the release"})),
        Turn::text("e"),
    ]);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.current_dir(&proj).arg("--repl");
    let out =
        with_stdin(cmd, "/fix 42\n,explain\n/greet the team\n/skill:one the tests\nuse a skill\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let broken = proj.join(".rab/skills/broken/SKILL.md");
    assert!(err.contains(&broken.display().to_string()) && err.contains("'description'"), "{err}");
    let reqs = llm.requests();
    let last = |i: usize| reqs[i].last_user_text().unwrap();
    assert_eq!(last(0), "Fix issue #42 carefully.");
    assert_eq!(last(1), "Explain this project.");
    assert_eq!(last(2), "Say hello to the team.");
    assert!(
        last(3).contains("<skill name=\"one\"") && last(3).contains("Steps of one for the tests."),
        "{}",
        last(3)
    );
    let system = reqs[0].system();
    for name in ["one", "two", "three", "four", "five"] {
        assert!(
            system.contains(&format!("<skill name=\"{name}\">The {name} skill</skill>")),
            "{name}: {system}"
        );
    }
    assert!(!system.contains("broken"));
    let loaded = &reqs[5].tool_results()[0].1;
    assert!(
        loaded.contains("Steps of five for the release.") && loaded.contains(".claude/skills/five"),
        "{loaded}"
    );
}

#[test]
fn comma_help_and_slash_help_print_the_same() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let run = |line: &str| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.arg("--repl");
        let out = with_stdin(cmd, &format!("{line}\n"));
        stdout(&out)
    };
    let slash = run("/help");
    assert!(slash.contains("/compact"), "{slash}");
    assert_eq!(run(",help"), slash);
}

#[test]
fn comma_lines_run_in_the_shell_through_the_gate_and_double_comma_asks_the_model() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let rab = |args: &[&str]| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.arg("-p").args(args).output().unwrap()
    };
    let out = rab(&["--allowed-tools", "bash(echo *)", ",echo hi"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), "hi\n"), "{}", stderr(&out));
    assert!(llm.requests().is_empty(), "a single comma does not call the model");
    let out = rab(&[",echo hi"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("--allowed-tools 'bash(echo hi:*)'"),
        "the gate asked: {}",
        stderr(&out)
    );
    let out = rab(&[",help"]);
    assert!(stdout(&out).contains("/compact"), "a known command runs: {}", stdout(&out));

    llm.script([Turn::text("The file is missing; create it first.")]);
    let out = rab(&["--yolo", ",,cat missing.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The file is missing; create it first.\n");
    let sent = llm.requests()[0].last_user_text().unwrap();
    assert!(sent.starts_with("I ran `cat missing.txt` in the shell and it failed:"), "{sent}");
    assert!(sent.contains("No such file") && sent.contains("correct it"), "{sent}");
}

#[test]
fn assistant_routing_is_off_by_default_and_when_on_passes_the_deny_rules() {
    let answer = "Let me look.\n,echo routed-output\n,rm -rf build\n";
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text(answer)]);
    let run = |llm: &FakeLlm| {
        let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
        cmd.args(["-p", "--yolo", "go"]).output().unwrap()
    };
    let out = run(&llm);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 1, "off by default: nothing ran");

    let settings = json!({"routeAssistantCommands": true, "permissions": {"deny": ["bash(rm *)"]}});
    put(&home.dir.path().join(".rab/settings.json"), &settings.to_string());
    let llm = FakeLlm::start();
    llm.script([Turn::text(answer), Turn::text("done")]);
    let out = run(&llm);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let fed = llm.requests()[1].last_user_text().unwrap();
    assert!(fed.starts_with("Results of the comma commands in your answer:"), "{fed}");
    assert!(fed.contains("$ echo routed-output\n```\nrouted-output\n```"), "{fed}");
    assert!(
        fed.contains("$ rm -rf build (failed)")
            && fed.contains("denied by the rule \"bash(rm *)\""),
        "{fed}"
    );
}
