//! Compile-time extensions (the `hello_extension` example: rab as a library with one
//! more extension), `--no-builtin-tools`, `--no-extensions`, command conflicts and a
//! prompt command's `allowed-tools`.

use std::path::{Path, PathBuf};
use std::process::Command;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, offered, stderr, stdout};

/// The example binary, built by `cargo test` with the other targets (built here when a
/// filtered run left it out).
fn hello_bin() -> PathBuf {
    let rab = PathBuf::from(env!("CARGO_BIN_EXE_rab"));
    let bin = rab.parent().unwrap().join("examples").join("hello_extension");
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "rab", "--example", "hello_extension"])
            .status()
            .unwrap();
        assert!(status.success(), "building the hello_extension example failed");
    }
    bin
}

/// Like `Home::rab_for` (anthropic wire) but running `program`.
fn cmd(home: &Home, program: &Path, llm: &FakeLlm) -> Command {
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.dir.path())
        .env("RAB_HOME", home.dir.path().join("rab"))
        .env("ANTHROPIC_BASE_URL", llm.url())
        .env("ANTHROPIC_API_KEY", "k")
        .args(["--provider", "anthropic", "--api", "anthropic-messages"])
        .current_dir(home.dir.path())
        .stdin(std::process::Stdio::null());
    c
}

#[test]
fn a_compile_time_extension_adds_a_tool_and_a_command_that_work_end_to_end() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("hello", json!({"name": "Ada"})), Turn::text("greeted")]);
    let out = cmd(&home, &hello_bin(), &llm).args(["-p", "greet Ada"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeted"));
    assert!(offered(&llm, 0).contains(&"hello".to_owned()));
    assert!(offered(&llm, 0).contains(&"read".to_owned()), "built-ins are still there");
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "Hello, Ada! (from the hello extension)");
    // The tool's guidelines are in the system prompt while it is offered.
    let system = llm.requests()[0].system();
    assert!(
        system.contains(
            "<tool_guidelines>\n<tool name=\"hello\">\nGreet people with hello before you answer"
        ),
        "{system}"
    );

    // The command, through the same registry as the built-ins (here as `,hello`).
    let out = cmd(&home, &hello_bin(), &llm).args(["-p", ",hello Grace"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hello, Grace (0 messages so far)");
    assert_eq!(llm.requests().len(), 2, "a command sends nothing to the model");

    // /help lists it with the built-ins.
    let out = cmd(&home, &hello_bin(), &llm).args(["-p", ",help"]).output().unwrap();
    let help = stdout(&out);
    assert!(help.contains("/hello") && help.contains("/model") && help.contains("/mcp"), "{help}");
}

/// The example's `transform_context` prunes the output of tool calls older than the
/// newest two from what the model is sent; the session keeps every result whole, and a
/// resumed session sends the pruned form again (the transform runs on each request).
#[test]
fn an_extensions_context_transform_changes_the_request_not_the_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script(["Ada", "Grace", "Edsger"].map(|n| Turn::tool_call("hello", json!({"name": n}))));
    llm.script([Turn::text("greeted all three"), Turn::text("still here")]);
    let out = cmd(&home, &hello_bin(), &llm).args(["-p", "greet three people"]).output().unwrap();
    assert_eq!(stdout(&out), "greeted all three\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert!(reqs.iter().all(|r| r.status == 200), "the pruned requests are valid");
    let texts = |i: usize| -> Vec<String> {
        llm.requests()[i].tool_results().into_iter().map(|(_, t)| t).collect()
    };
    assert_eq!(
        texts(2),
        ["Hello, Ada! (from the hello extension)", "Hello, Grace! (from the hello extension)"]
    );
    assert_eq!(
        texts(3),
        [
            "[output of hello pruned by the hello extension: 38 characters]",
            "Hello, Grace! (from the hello extension)",
            "Hello, Edsger! (from the hello extension)",
        ]
    );
    let out = cmd(&home, &hello_bin(), &llm).args(["-c", "-p", "and now?"]).output().unwrap();
    assert_eq!(stdout(&out), "still here\n", "{}", stderr(&out));
    assert_eq!(texts(4)[0], "[output of hello pruned by the hello extension: 38 characters]");
    // The session file has every result whole.
    let sessions = home.dir.path().join("rab/sessions");
    let tape: String =
        walk(&sessions).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(tape.contains("Hello, Ada! (from the hello extension)"));
    assert!(!tape.contains("pruned by the hello extension"));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[test]
fn no_builtin_tools_keeps_extension_tools_and_no_extensions_drops_them() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b")]);
    let out =
        cmd(&home, &hello_bin(), &llm).args(["-p", "--no-builtin-tools", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(offered(&llm, 0), ["hello"]);
    let out =
        cmd(&home, &hello_bin(), &llm).args(["-p", "--no-extensions", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(offered(&llm, 1), Vec::<String>::new());
    // The extension's command is gone too, while rab's own commands stay.
    let out =
        cmd(&home, &hello_bin(), &llm).args(["-p", "--no-extensions", ",help"]).output().unwrap();
    let help = stdout(&out);
    assert!(help.contains("/quit") && !help.contains("/hello"), "{help}");
}

#[test]
fn a_command_name_taken_twice_keeps_the_first_and_says_so_once() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let dir = home.dir.path().join(".rab/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hello.md"), "Say hello from the prompt command.\n").unwrap();
    llm.script([Turn::text("ok")]);
    let out = cmd(&home, &hello_bin(), &llm).args(["-p", ",hello"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(
        err.matches("command /hello of extension hello is left out").count(),
        1,
        "reported once: {err}"
    );
    assert!(err.contains("extension skills-and-prompt-commands already provides it"), "{err}");
    // The prompt command (loaded first) won: its text went to the model.
    let users = llm.requests()[0].transcript().items;
    assert!(format!("{users:?}").contains("Say hello from the prompt command."));
}

#[test]
fn a_prompt_commands_allowed_tools_let_its_run_use_them_without_asking() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let dir = home.dir.path().join(".rab/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("echo-check.md"),
        "---\nallowed-tools: Bash(echo granted:*)\n---\nRun echo granted.\n",
    )
    .unwrap();
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo granted"})),
        Turn::text("done"),
        Turn::tool_call("bash", json!({"command": "echo granted"})),
        Turn::text("done"),
    ]);
    // Headless default mode refuses bash unless a rule allows it: the command's grant does.
    let out = Home::rab_for(&home, "anthropic-messages", &llm, Some("k"))
        .args(["-p", ",echo-check"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(llm.requests()[1].tool_results()[0].1.trim(), "granted");
    // A plain prompt gets no grant.
    let out = Home::rab_for(&home, "anthropic-messages", &llm, Some("k"))
        .args(["-p", "run echo granted"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let refused = &llm.requests()[3].tool_results()[0].1;
    assert!(refused.contains("not allowed") || refused.contains("denied"), "{refused}");
}

#[test]
fn login_stores_a_key_privately_and_logout_forgets_it() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut c = home.rab_for("anthropic-messages", &llm, Some("k"));
    c.arg("--repl");
    let out = super::harness::with_stdin(
        c,
        "/login openai\nsk-test-0123456789abcdef\n/login\n/login nosuch\n/logout openai\n",
    );
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains("stored the openai key in"), "{text}\n{err}");
    assert!(!text.contains("sk-test-0123456789abcdef"), "the key is never printed: {text}");
    assert!(text.contains("anthropic") && text.contains("from $ANTHROPIC_API_KEY"), "{text}");
    assert!(err.contains("unknown provider nosuch; providers with keys:"), "{err}");
    assert!(text.contains("forgot the openai key"), "{text}");
    let auth = home.dir.path().join("rab/agent/auth.json");
    let stored = std::fs::read_to_string(&auth).unwrap();
    assert!(!stored.contains("sk-test"), "{stored}");
    assert_eq!(llm.requests().len(), 0, "nothing went to the model");
}

#[test]
fn reload_picks_up_a_prompt_command_added_while_running_and_keeps_the_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first"), Turn::text("late done")]);
    let mut c = home.rab_for("anthropic-messages", &llm, Some("k"));
    c.arg("--repl");
    let out = super::harness::with_stdin(
        c,
        "hello\n/late\n!!mkdir -p .rab/commands && echo 'Late command body.' > .rab/commands/late.md\n/reload\n/late\n",
    );
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(err.contains("unknown command /late"), "before the reload: {err}");
    assert!(text.contains("Reloaded:"), "{text}\n{err}");
    assert!(text.contains("late done"), "{text}\n{err}");
    let items = format!("{:?}", llm.requests()[1].transcript().items);
    assert!(
        items.contains("hello") && items.contains("Late command body."),
        "same session: {items}"
    );
}

#[test]
fn reload_keeps_the_scheduled_cron_jobs() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("cron_create", json!({"cron": "0 0 1 1 *", "prompt": "new year"})),
        Turn::text("scheduled"),
        Turn::tool_call("cron_list", json!({})),
        Turn::text("listed"),
    ]);
    let mut c = home.rab_for("anthropic-messages", &llm, Some("k"));
    c.args(["--repl", "--yolo"]);
    let out = super::harness::with_stdin(c, "schedule it\n/reload\nwhat is scheduled\n");
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains("Reloaded:"), "{text}\n{err}");
    let listed = llm.requests()[3].tool_results().last().unwrap().1.clone();
    assert!(listed.contains("new year"), "the job survived the reload: {listed}");
}

/// A tool's label and its own drawing of the call and the result, in the terminal UI of
/// a custom rab (the example's `hello`).
#[test]
fn an_extension_tool_draws_its_own_call_and_result_in_the_ui() {
    use super::pty::Pty;
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("hello", json!({"name": "Ada"})), Turn::text("greeted")]);
    let envs = vec![
        ("HOME".to_owned(), home.dir.path().display().to_string()),
        ("RAB_HOME".to_owned(), home.dir.path().join("rab").display().to_string()),
        ("ANTHROPIC_API_KEY".to_owned(), "k".to_owned()),
        ("ANTHROPIC_BASE_URL".to_owned(), llm.url()),
    ];
    let t = std::time::Duration::from_secs(20);
    let mut pty = Pty::spawn_program(
        &hello_bin(),
        home.dir.path(),
        &["--provider", "anthropic"],
        &envs,
        (100, 30),
        None,
    );
    pty.wait_for("the editor", t, |s| s.contains("/help for commands"));
    pty.send("greet Ada\r");
    pty.wait_for("the tool's own drawing", t, |s| {
        s.contains("Greeter → Ada")
            && s.contains("(a friendly hello)")
            && s.contains("✉ Hello, Ada! (from the hello extension)")
            && s.contains("greeted")
    });
    assert!(!pty.screen().contains("{\"name\""), "not the raw arguments");
    pty.send("\x03\x03");
    assert_eq!(pty.wait_exit(t), Some(0));
}

/// An extension's hook gets the run's cancellation token: interrupted while it waits,
/// it sees the interrupt at once (and leaves a mark that it did).
#[test]
fn an_extension_hook_sees_the_interrupt_through_its_cancellation_token() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("hello", json!({"name": "patience"}))]);
    let child = cmd(&home, &hello_bin(), &llm)
        .args(["-p", "greet patiently"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // The hook says when it waits: interrupted before, it would not be there to see it.
    let waiting = home.dir.path().join("hook-is-waiting");
    while !waiting.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(waiting.exists(), "the hook never started waiting: {:?}", llm.requests().len());
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(home.dir.path().join("hook-saw-the-interrupt").exists(), "the hook saw the token");
}
