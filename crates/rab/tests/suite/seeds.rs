//! The smaller capabilities the three seed designs describe, end to end through the real
//! binary against the fake server (issue 22).

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, put, stderr, stdout, with_stdin};

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

/// Coven's skill tool: `list` names the skills and the prompt commands, and a command
/// from `~/.claude/commands` loads like a skill (and runs as `/name`).
#[test]
fn the_skill_tool_lists_and_loads_commands_from_the_users_claude_folder() {
    let home = Home::new();
    let h = home.dir.path();
    put(
        &h.join(".claude/commands/deploy.md"),
        "---\ndescription: Deploy the service\nargument-hint: [env]\n---\nDeploy to $1 now.\n",
    );
    put(
        &h.join(".rab/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Write release notes\n---\nWrite notes.\n",
    );
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("skill", json!({"name": "list"})),
        Turn::tool_call("skill", json!({"name": "deploy", "arguments": "prod"})),
        Turn::tool_call("skill", json!({"name": "nothing"})),
        Turn::text("done"),
        Turn::text("deployed"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "what can you do?"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let results = llm.requests()[3].tool_results();
    let text = |i: usize| results[i].1.clone();
    assert_eq!(
        text(0),
        "Skills:\n- notes: Write release notes\nPrompt commands:\n- deploy [env]: Deploy the service"
    );
    assert!(text(1).contains("Deploy to prod now."), "{}", text(1));
    assert!(text(1).contains(".claude/commands/deploy.md"), "{}", text(1));
    assert!(
        text(2).contains("no skill or prompt command named nothing; there are: notes, deploy"),
        "{}",
        text(2)
    );
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--no-tools", "/deploy staging"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "deployed\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[4].last_user_text().unwrap(), "Deploy to staging now.");
}

/// The rab seed's OpenCode Go provider: its key from `auth.json`'s `opencode_go` entry,
/// DeepSeek V4 Flash by default, and one `x-opencode-session` for the conversation.
#[test]
fn opencode_go_is_a_provider_with_the_seeds_key_name_and_default_model() {
    let home = Home::new();
    let agent = home.dir.path().join("rab/agent");
    put(&agent.join("auth.json"), r#"{"opencode_go": {"type": "api_key", "key": "oc_test"}}"#);
    let llm = FakeLlm::start();
    llm.require_api_key(Some("oc_test"));
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("listed")]);
    let out = home
        .rab()
        .env("OPENCODE_GO_BASE_URL", llm.openai_url())
        .args(["--provider", "opencode_go", "-p", "--yolo", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "listed\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs[0].body["model"], "deepseek-v4-flash");
    let session = reqs[0].header("x-opencode-session").expect("a session header");
    assert!(!session.is_empty());
    assert_eq!(reqs[1].header("x-opencode-session"), Some(session), "one id per conversation");
    let out = home.rab().args(["--list-models", "opencode_go"]).output().unwrap();
    assert!(stdout(&out).contains("opencode_go/deepseek-v4-pro"), "{}", stdout(&out));
}

/// Coven's `task` parameters on the call itself: a tool subset, a system prompt, a turn
/// limit and a model, each checked.
#[test]
fn task_takes_tools_system_prompt_max_turns_and_model_on_the_call() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let call = |extra: serde_json::Value| {
        let mut args = json!({"description": "look", "prompt": "read a.txt"});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        args
    };
    llm.script([
        Turn::tool_call(
            "task",
            call(json!({"tools": ["read"], "system_prompt": "You are terse.", "max_turns": 2,
                        "model": "anthropic/claude-haiku-5-5"})),
        ),
        Turn::tool_call("read", json!({"path": "a.txt"})),
        Turn::tool_call("read", json!({"path": "a.txt"})),
        Turn::tool_call("task", call(json!({"tools": ["read", "nosuch"]})))
            .and_tool_call("task", call(json!({"model": "gpt-6.1-sol"})))
            .and_tool_call("task", call(json!({"max_turns": 0}))),
        Turn::text("done"),
    ]);
    std::fs::write(home.dir.path().join("a.txt"), "alpha").unwrap();
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "--model", "claude-sonnet-5-5", "go"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let reqs = llm.requests();
    let sub = &reqs[1];
    assert_eq!(sub.body["model"], "claude-haiku-5-5");
    assert!(sub.system().starts_with("You are terse."), "{}", sub.system());
    let offered: Vec<&str> =
        sub.body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(offered.contains(&"read") && !offered.contains(&"bash"), "{offered:?}");
    // Two turns, then the limit: the caller hears why.
    let stopped = &reqs[3].tool_results()[0].1;
    assert!(stopped.contains("the sub-agent stopped after 2 turns"), "{stopped}");
    let errors: Vec<String> = reqs[4].tool_results().into_iter().skip(1).map(|r| r.1).collect();
    assert!(errors[0].contains("tools: 'nosuch' is not among this agent's tools"), "{errors:?}");
    assert!(
        errors[1].contains("model gpt-6.1-sol, which is openai's; sub-agents run on the session's provider (anthropic)"),
        "{errors:?}"
    );
    assert_eq!(errors[2], "max_turns must be between 1 and 100 (the session's limit), got 0");
}

/// CrabClaw's sliding window as a mode: past `windowMessages` the oldest messages are
/// dropped with a notice, and the model is never asked for a summary.
#[test]
fn the_window_strategy_drops_old_messages_without_asking_for_a_summary() {
    let home = Home::new();
    put(
        &home.dir.path().join("rab/agent/settings.json"),
        r#"{"compaction": {"strategy": "window", "windowMessages": 4}}"#,
    );
    let llm = FakeLlm::start();
    let mut turns: Vec<Turn> =
        (0..5).map(|i| Turn::tool_call("glob", json!({"pattern": format!("*{i}")}))).collect();
    turns.push(Turn::text("done"));
    llm.script(turns);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "look around"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 6, "no summary request");
    let last = &reqs[5];
    let texts = last.user_texts();
    assert!(
        texts[0].contains("earlier messages were dropped")
            && texts[0].contains("compaction.strategy is window, 4 messages"),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("look around")), "the first prompt is gone");
    let messages = last.body["messages"].as_array().unwrap();
    assert!(messages.len() <= 5, "the notice and at most 4 messages: {}", messages.len());
    // A strategy that does not exist is refused, naming the key.
    put(
        &home.dir.path().join("rab/agent/settings.json"),
        r#"{"compaction": {"strategy": "sliding"}}"#,
    );
    let out =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("strategy"), "{}", stderr(&out));
}

fn cut(turn: Turn) -> Turn {
    Turn { stop_reason: Some("length".into()), ..turn }
}

/// Coven's max-tokens outcome: a reply cut off at the output limit is continued once
/// (with a notice), a second cut-off is its own exit, and a tool call cut off mid-
/// arguments tells the model why.
#[test]
fn a_reply_cut_off_at_the_output_limit_is_continued_once_then_reported() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut truncated = Turn::tool_call("write", json!({}));
    truncated.tool_calls[0].raw_arguments =
        Some("{\"path\": \"big.txt\", \"content\": \"aaa".into());
    llm.script([
        cut(Turn::text("The first half,")),
        Turn::text(" and the second."),
        cut(truncated),
        Turn::text("wrote it in parts"),
        cut(Turn::text("one")),
        cut(Turn::text("two")),
    ]);
    let run = |prompt: &str| {
        home.rab_for("anthropic-messages", &llm, Some("k"))
            .args(["-p", "--yolo", prompt])
            .output()
            .unwrap()
    };
    let out = run("explain");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The first half, and the second.\n");
    assert!(stderr(&out).contains("hit the output limit; asking the model to continue"));
    let reqs = llm.requests();
    let asked = reqs[1].last_user_text().unwrap();
    assert!(asked.starts_with("[rab: your reply was cut off at the output limit ("), "{asked}");

    let out = run("write a big file");
    assert_eq!(stdout(&out), "wrote it in parts\n", "{}", stderr(&out));
    let result = &llm.requests()[3].tool_results()[0].1;
    assert!(
        result.contains("invalid JSON arguments for write")
            && result.contains("Your reply hit the output limit (")
            && result.contains("write it in parts"),
        "{result}"
    );

    let out = run("again");
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stderr(&out).contains("cut off at the output limit"), "{}", stderr(&out));
}

/// A headless run stops at 100 turns unless told otherwise; `temperature` reaches the
/// request where the model takes one, and a bad value is a usage error.
#[test]
fn print_mode_has_a_default_turn_limit_and_temperature_is_sent_where_accepted() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let turns: Vec<Turn> =
        (0..101).map(|i| Turn::tool_call("glob", json!({"pattern": format!("*{i}")}))).collect();
    llm.script(turns);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "--no-session", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped after 100 turns"), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 100);

    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b"), Turn::text("c"), Turn::text("d")]);
    put(&home.dir.path().join("rab/agent/settings.json"), r#"{"temperature": 0.3}"#);
    let run = |args: &[&str]| {
        home.rab_for("anthropic-messages", &llm, Some("k"))
            .args(["-p", "--no-tools"])
            .args(args)
            .arg("hi")
            .output()
            .unwrap()
    };
    assert_eq!(stdout(&run(&["--model", "claude-haiku-4-5"])), "a\n");
    assert_eq!(stdout(&run(&["--model", "claude-haiku-4-5", "--temperature", "0.7"])), "b\n");
    assert_eq!(stdout(&run(&["--model", "claude-haiku-4-5", "--thinking", "high"])), "c\n");
    // Claude Sonnet 5.5 fixes its own sampling: the fake server refuses a temperature.
    let off = run(&["--model", "claude-sonnet-5-5", "--thinking", "off"]);
    assert_eq!(stdout(&off), "d\n", "{}", stderr(&off));
    let reqs = llm.requests();
    let temp = |i: usize| reqs[i].body["temperature"].as_f64().map(|t| (t * 10.0).round());
    assert_eq!((temp(0), temp(1), temp(2), temp(3)), (Some(3.0), Some(7.0), None, None));
    let out = run(&["--temperature", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("expected a number from 0 to 2"), "{}", stderr(&out));
}

/// CrabClaw's multi-profile configuration: a named overlay of ordinary settings keys,
/// over the files and under the command line, chosen with `--profile` or `/profile`.
#[test]
fn profiles_overlay_the_settings_and_are_chosen_by_flag_or_command() {
    let home = Home::new();
    put(
        &home.dir.path().join("rab/agent/settings.json"),
        r#"{"defaultModel": "claude-haiku-4-5",
            "profiles": {"review": {"defaultModel": "claude-opus-5-5", "tools": ["read", "grep"]},
                         "fast": {"defaultModel": "claude-haiku-5-5"}}}"#,
    );
    put(
        &home.dir.path().join(".rab/settings.json"),
        r#"{"profiles": {"review": {"excludeTools": ["grep"]}}}"#,
    );
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("a"),
        Turn::text("b"),
        Turn::text("c"),
        Turn::text("d"),
        Turn::text("e"),
        Turn::text("f"),
    ]);
    // No --provider: the settings choose the model.
    let base = || {
        let mut cmd = home.rab();
        cmd.env("ANTHROPIC_BASE_URL", llm.url()).env("ANTHROPIC_API_KEY", "k");
        cmd
    };
    let rab = |args: &[&str]| base().args(args).output().unwrap();
    assert_eq!(stdout(&rab(&["-p", "hi"])), "a\n");
    let out = rab(&["-p", "--profile", "review", "hi"]);
    assert_eq!(stdout(&out), "b\n", "{}", stderr(&out));
    let out = rab(&["-p", "--profile", "review", "--model", "claude-sonnet-5-5", "hi"]);
    assert_eq!(stdout(&out), "c\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs[0].model(), "claude-haiku-4-5");
    assert_eq!(reqs[1].model(), "claude-opus-5-5", "the profile's model");
    let tools: Vec<&str> = reqs[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read"], "the global part's tools, less the project part's exclusion");
    assert_eq!(reqs[2].model(), "claude-sonnet-5-5", "the command line wins");
    // Issue 53: only --provider given: the settings' model of that provider is used.
    let out = rab(&["-p", "--provider", "anthropic", "--profile", "fast", "hi"]);
    assert_eq!(stdout(&out), "d\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[3].model(), "claude-haiku-5-5", "the profile's model");

    let out = rab(&["-p", "--profile", "nope", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown profile \"nope\"; the profiles are: review, fast"),
        "{}",
        stderr(&out)
    );

    let mut cmd = base();
    cmd.arg("--repl");
    let out = with_stdin(cmd, "/profile\n/profile fast\n/profile\nhello\n/profile none\nagain\n");
    let text = stdout(&out);
    assert!(text.contains("  review\n  fast"), "{text}");
    assert!(text.contains("Profile fast applied"), "{text}");
    assert!(text.contains("  review\n* fast"), "{text}");
    assert!(text.contains("No profile:"), "{text}");
    let reqs = llm.requests();
    assert_eq!(reqs[4].model(), "claude-haiku-5-5", "after /profile fast");
    assert_eq!(reqs[5].model(), "claude-haiku-4-5", "after /profile none");
}

/// `rab` for `llm` with a `pwsh` on PATH that stands for PowerShell 7: it prints the
/// arguments it was started with and runs the command's last statement with sh (it is
/// no PowerShell; the test after this one runs the real one where installed).
fn with_fake_pwsh(home: &Home, llm: &FakeLlm) -> std::process::Command {
    let bin = home.dir.path().join("pwsh-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = "#!/bin/sh\necho \"pwsh $1 $2 $3 $4\"\nsh -c \"${5##*; }\"\n";
    std::fs::write(bin.join("pwsh"), script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("pwsh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env("PATH", format!("{}:{path}", bin.display()));
    cmd
}

/// The Coven spec's PowerShell tool: offered beside bash wherever `pwsh` is installed,
/// started as `pwsh -NoLogo -NoProfile -NonInteractive -Command`, through the same
/// sandbox and output handling as bash; not offered where it is not installed.
#[test]
fn the_powershell_tool_is_offered_where_pwsh_is_installed_and_runs_it() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("no pwsh here")]);
    let out =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "hi"]).output().unwrap();
    assert_eq!(stdout(&out), "no pwsh here\n", "{}", stderr(&out));
    let installed = std::process::Command::new("pwsh").arg("-Version").output().is_ok();
    assert_eq!(super::harness::offered(&llm, 0).contains(&"powershell".to_owned()), installed);
    llm.script([
        Turn::tool_call("powershell", json!({"command": "echo from-the-shell"})),
        Turn::text("ran it"),
    ]);
    let out = with_fake_pwsh(&home, &llm).args(["-p", "--yolo", "run it"]).output().unwrap();
    assert_eq!(stdout(&out), "ran it\n", "{}", stderr(&out));
    assert!(super::harness::offered(&llm, 1).contains(&"powershell".to_owned()));
    assert!(super::harness::offered(&llm, 1).contains(&"bash".to_owned()), "beside bash");
    let results = llm.requests()[2].tool_results();
    assert_eq!(results[0].1, "pwsh -NoLogo -NoProfile -NonInteractive -Command\nfrom-the-shell");
}

/// A deny rule for bash commands cannot be held for PowerShell (rab reads only sh), so
/// while one is in effect PowerShell commands are refused, even with --yolo.
#[test]
fn a_bash_deny_rule_refuses_powershell_commands() {
    let home = Home::new();
    let llm = FakeLlm::start();
    put(
        &home.dir.path().join("rab/agent/settings.json"),
        r#"{"permissions": {"deny": ["bash(rm:*)"]}}"#,
    );
    llm.script([
        Turn::tool_call("powershell", json!({"command": "Remove-Item -Recurse src"})),
        Turn::text("refused"),
    ]);
    let out = with_fake_pwsh(&home, &llm).args(["-p", "--yolo", "clean"]).output().unwrap();
    assert_eq!(stdout(&out), "refused\n", "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(
        results[0].1.contains("a deny rule for bash (\"bash(rm:*)\") is in effect"),
        "{results:?}"
    );
    assert!(!results[0].1.contains("pwsh -NoLogo"), "it did not run");
}

/// Real PowerShell 7, where it is installed (it is not on the machine rab is developed
/// on: no package source for it is reachable there).
#[test]
fn real_pwsh_runs_a_cmdlet_where_installed() {
    if std::process::Command::new("pwsh").arg("-Version").output().is_err() {
        eprintln!("SKIP real_pwsh_runs_a_cmdlet_where_installed: pwsh is not installed");
        return;
    }
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("powershell", json!({"command": "Write-Output (6*7); 'é' | Write-Output"})),
        Turn::text("done"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "multiply"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[1].tool_results()[0].1.trim(), "42\né");
}
