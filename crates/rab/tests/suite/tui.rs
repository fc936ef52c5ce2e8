//! The terminal UI in a pseudo-terminal, against the fake server, asserting on the
//! parsed screen.

use std::time::Duration;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::Home;
use super::pty::Pty;

pub(super) const T: Duration = Duration::from_secs(20);

pub(super) fn envs(home: &Home, llm: &FakeLlm) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.dir.path().display().to_string()),
        ("RAB_HOME".into(), home.dir.path().join("rab").display().to_string()),
        ("ANTHROPIC_API_KEY".into(), "k".into()),
        ("ANTHROPIC_BASE_URL".into(), llm.url()),
    ]
}

pub(super) fn start(
    home: &Home,
    llm: &FakeLlm,
    cwd: &std::path::Path,
    cols: u16,
    rows: u16,
) -> Pty {
    start_with(home, llm, cwd, cols, rows, &[])
}

pub(super) fn start_with(
    home: &Home,
    llm: &FakeLlm,
    cwd: &std::path::Path,
    cols: u16,
    rows: u16,
    extra: &[&str],
) -> Pty {
    let args: Vec<&str> = ["--provider", "anthropic"].iter().chain(extra).copied().collect();
    let pty = Pty::spawn(cwd, &args, &envs(home, llm), cols, rows);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty
}

#[test]
fn a_full_run_renders_the_prompt_tools_diff_and_markdown_answer() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("hello.sh"), "echo \"hello, world\"\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "hello.sh"})),
        Turn::tool_call("edit", json!({"path": "hello.sh", "edits": [{"old_text": "hello, world", "new_text": "hello, rab"}]})),
        Turn::tool_call("bash", json!({"command": "sh hello.sh"})),
        Turn::text("## Done\n\nThe script now prints **hello, rab**:\n\n- edited `hello.sh`\n- ran it\n"),
    ]);
    let mut pty = start(&home, &llm, &repo, 100, 40);
    pty.send("make the script greet rab\r");
    // The edit asks first, showing its diff; allowed once.
    pty.wait_for("the edit question", T, |s| {
        s.contains("Allow edit?")
            && s.contains("+echo \"hello, rab\"")
            && s.contains("Yes, this time")
    });
    pty.send("\r");
    // Then bash, showing the command; allowed always, which saves the rule.
    pty.wait_for("the bash question", T, |s| {
        s.contains("Allow bash?") && s.contains("$ sh hello.sh")
    });
    pty.send("\x1b[B\r");
    pty.wait_for("the final answer", T, |s| s.contains("The script now prints hello, rab"));
    let h = pty.history();
    assert!(h.contains("make the script greet rab"), "{h}");
    assert!(h.contains("read hello.sh"), "{h}");
    assert!(h.contains("edit hello.sh"), "{h}");
    assert!(
        h.contains("- echo \"hello, world\"") || h.contains("-echo \"hello, world\""),
        "diff removed line: {h}"
    );
    assert!(
        h.contains("+ echo \"hello, rab\"") || h.contains("+echo \"hello, rab\""),
        "diff added line: {h}"
    );
    assert!(h.contains("$ sh hello.sh"), "{h}");
    assert!(h.contains("Done") && !h.contains("## Done"), "heading rendered: {h}");
    assert!(h.contains("• edited hello.sh") || h.contains("- edited"), "list rendered: {h}");
    assert!(!h.contains("**hello"), "emphasis rendered: {h}");
    let saved = std::fs::read_to_string(home.dir.path().join("rab/agent/answers.json")).unwrap();
    assert!(saved.contains("\"bash(sh hello.sh:*)\""), "{saved}");
    assert!(!repo.join(".rab/settings.local.json").exists());
    pty.send("\x03\x03");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn a_message_typed_while_streaming_is_queued_then_delivered() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut slow = Turn::text("streaming words keep coming ".repeat(12));
    slow.chunk_chars = Some(6);
    llm.script([slow.slow(40), Turn::text("Got your second message.")]);
    let mut pty = start(&home, &llm, home.dir.path(), 90, 30);
    pty.send("first message\r");
    pty.wait_for("streaming to start", T, |s| s.contains("streaming words"));
    pty.send("second message\r");
    pty.wait_for("the queued message", T, |s| s.contains("queued: second message"));
    pty.wait_for("the second answer", T, |s| s.contains("Got your second message."));
    let second = &llm.requests()[1];
    assert_eq!(second.last_user_text().as_deref(), Some("second message"));
    let screen = pty.screen();
    assert!(!screen.contains("queued: second message"), "the queue is empty again: {screen}");
}

#[test]
fn escape_interrupts_and_every_tool_call_gets_a_result_on_the_tape() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "sleep 30"}))]);
    let mut pty = start_with(&home, &llm, home.dir.path(), 90, 30, &["--yolo"]);
    pty.send("run something long\r");
    pty.wait_for("the tool to run", T, |s| s.contains("$ sleep 30") && s.contains("running"));
    pty.send("queued text\r");
    pty.wait_for("the queued message", T, |s| s.contains("queued: queued text"));
    pty.send("\x1b");
    pty.wait_for("the interrupt", T, |s| s.contains("Interrupted."));
    pty.wait_for("the queued message back in the editor", T, |s| {
        s.lines().any(|l| l.contains("queued text") && !l.contains("queued:"))
    });
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let (tape, _) = rab_session::Tape::open(&file).unwrap();
    let last = tape.leaf().unwrap();
    match last.message() {
        Some(rab_ai::Message::ToolResult(r)) => {
            assert!(r.text().starts_with("aborted"), "{}", r.text())
        }
        other => panic!("{other:?}"),
    }
    pty.send("\x03\x03\x03");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn resizing_mid_stream_leaves_a_correct_screen() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut slow = Turn::text("alpha beta gamma delta epsilon ".repeat(20));
    slow.chunk_chars = Some(8);
    llm.script([slow.slow(20)]);
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.send("stream please\r");
    pty.wait_for("streaming to start", T, |s| s.contains("alpha beta"));
    pty.resize(60, 24);
    pty.wait_for("the end of the answer", T, |s| {
        s.contains("Working").then_some(()).is_none() && s.matches("epsilon").count() >= 10
    });
    let screen = pty.screen();
    let borders =
        screen.lines().filter(|l| l.starts_with("────") && l.chars().count() == 60).count();
    assert_eq!(borders, 2, "one editor, drawn at the new width:\n{screen}");
    assert!(screen.lines().all(|l| l.chars().count() <= 60), "{screen}");
    assert!(screen.contains("thinking off"), "footer present: {screen}");
}

#[test]
fn pasting_five_thousand_lines_stays_responsive() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("received")]);
    let mut pty = start(&home, &llm, home.dir.path(), 90, 30);
    let text: String = (0..5000).map(|i| format!("line {i} of the pasted log\n")).collect();
    let start = std::time::Instant::now();
    pty.paste(&text);
    pty.wait_for("the paste marker", T, |s| s.contains("[paste #1 +5000 lines]"));
    pty.send(" typed after");
    pty.wait_for("typing after the paste", T, |s| s.contains("typed after"));
    // A guard against per-line work, not a benchmark: loose enough for a busy machine.
    assert!(start.elapsed() < Duration::from_secs(15), "took {:?}", start.elapsed());
    pty.send("\r");
    pty.wait_for("the answer", T, |s| s.contains("received"));
    let sent = llm.requests()[0].last_user_text().unwrap();
    assert_eq!(sent.lines().count(), 5001, "5000 pasted lines and the typed one");
    assert!(sent.starts_with("line 0 of the pasted log") && sent.ends_with("typed after"));
}

#[test]
fn tab_completes_commands_and_bang_runs_a_shell_command() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 90, 30);
    pty.send("/hotk\t");
    pty.wait_for("the completed command", T, |s| s.contains("/hotkeys"));
    pty.send("\r");
    pty.wait_for("the shortcuts overlay", T, |s| {
        s.contains("Keyboard shortcuts") && s.contains("Interrupt the agent")
    });
    pty.send("\x1b");
    // Esc and the next key in one read would be Alt+key: let the overlay close first.
    pty.wait_for_screen("the overlay to close", T, |s| !s.contains("Interrupt the agent"));
    pty.send("!!echo from-the-shell\r");
    pty.wait_for("the command output", T, |s| {
        s.contains("$ echo from-the-shell") && s.contains("(not sent to the model)")
    });
    assert!(llm.requests().is_empty());
}

#[test]
fn works_at_80_by_24_without_colour() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("A *plain* answer with `code` and a [link](https://example.com).")]);
    let mut e = envs(&home, &llm);
    e.push(("NO_COLOR".into(), "1".into()));
    let mut pty = Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &e, 80, 24);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty.send("hi\r");
    pty.wait_for("the answer", T, |s| s.contains("A plain answer with"));
    assert!(pty.screen().lines().all(|l| l.chars().count() <= 80));
    assert!(!pty.has_colour(), "NO_COLOR: no foreground or background colours on screen");
}

#[test]
fn the_tree_overlay_branches_with_a_summary_of_the_branch_left_behind() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("answer one"),
        Turn::text("answer two"),
        Turn::text("## Goal\nTried a second approach."),
        Turn::text("answer on the new branch"),
    ]);
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.send("first message\r");
    pty.wait_for("the first answer", T, |s| s.contains("answer one"));
    pty.send("second message\r");
    pty.wait_for("the second answer", T, |s| s.contains("answer two"));
    pty.send("/tree");
    pty.wait_for("the typed command", T, |s| s.contains("/tree"));
    pty.send("\r");
    pty.wait_for("the tree", T, |s| s.contains("Session tree") && s.contains("second message"));
    pty.send("\r"); // the last message is selected
    pty.wait_for("the summary choice", T, |s| s.contains("Summarise the branch left behind"));
    pty.send("\x1b[B\r");
    pty.wait_for("the new branch", T, |s| s.contains("Continuing on a new branch ("));
    // The conversation from the jump on is drawn again (issue 36): the first exchange.
    pty.wait_for("the redrawn branch", T, |s| {
        s.split("The conversation from here on")
            .nth(1)
            .is_some_and(|after| after.contains("first message") && after.contains("answer one"))
    });
    // The picked message is back in the editor, to change and send.
    pty.send(" again\r");
    pty.wait_for("the answer on the new branch", T, |s| s.contains("answer on the new branch"));
    let reqs = llm.requests();
    let summary_request = reqs[2].last_user_text().unwrap();
    assert!(summary_request.contains("second message") && summary_request.contains("answer two"));
    assert!(!summary_request.contains("first message"), "only the abandoned part");
    let users = reqs[3].user_texts();
    assert_eq!(users.len(), 3, "{users:?}");
    assert_eq!(users[0], "first message");
    assert!(users[1].contains("Tried a second approach"), "{users:?}");
    assert_eq!(users[2], "second message again");
    pty.send("\x03\x03\x03");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn todo_lists_render_as_a_checklist_and_shift_tab_cycles_the_mode() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "todo_write",
            json!({"todos": [
                {"content": "Read the code", "status": "completed"},
                {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
                {"content": "Run the tests", "status": "pending"}
            ]}),
        ),
        Turn::text("Working on it."),
    ]);
    let mut pty = start(&home, &llm, home.dir.path(), 90, 30);
    pty.send("plan the fix\r");
    pty.wait_for("the checklist", T, |s| {
        s.contains("☒ Read the code")
            && s.contains("▶ Fixing the bug")
            && s.contains("☐ Run the tests")
    });
    pty.send("\x1b[Z");
    pty.wait_for("accept-edits in the footer", T, |s| s.contains("accept-edits mode"));
    pty.send("\x1b[Z");
    pty.wait_for("plan in the footer", T, |s| s.contains("plan mode (shift+tab"));
    pty.send("\x03\x03");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn tab_completes_a_commands_argument_and_login_masks_the_key() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.send("/thinking hi");
    pty.wait_for_screen("the argument list", T, |s| s.contains("high"));
    pty.send("\t");
    pty.wait_for_screen("the completed argument", T, |s| s.contains("/thinking high"));
    pty.send("\r");
    pty.wait_for("the thinking level", T, |s| s.contains("thinking: high"));
    pty.send("/login openai\r");
    pty.wait_for_screen("the key prompt", T, |s| s.contains("Paste the openai API key"));
    pty.paste("sk-pasted-secret-1234");
    pty.wait_for_screen("the masked key", T, |s| s.contains("•••••") && !s.contains("sk-pasted"));
    pty.send("\r");
    pty.wait_for("the stored note", T, |s| s.contains("stored the openai key"));
    assert!(!pty.history().contains("sk-pasted"));
    let auth = std::fs::read_to_string(home.dir.path().join("rab/agent/auth.json")).unwrap();
    assert!(auth.contains("sk-pasted-secret-1234"));
}

#[test]
fn the_ui_reports_an_mcp_server_that_fails_without_waiting_for_it() {
    let home = Home::new();
    let config = serde_json::json!({"mcpServers": {
        "broken": {"command": "/nonexistent/mcp-server"},
        "test": {"command": rab_mcp::test_support::test_server_path()},
    }});
    std::fs::create_dir_all(home.dir.path().join(".rab")).unwrap();
    std::fs::write(home.dir.path().join(".rab/mcp.json"), config.to_string()).unwrap();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 120, 30);
    pty.wait_for("the failure note", T, |s| s.contains("MCP server broken failed"));
    // The other server may still be starting on a loaded machine: ask until it is ready.
    let deadline = std::time::Instant::now() + T;
    while !pty.history().contains("test  ready") {
        assert!(std::time::Instant::now() < deadline, "never ready: {}", pty.history());
        pty.send("/mcp\r");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(pty.history().contains("mcp__test__echo"));
    // The server's prompt arrived after start-up and is offered as a command.
    pty.send("/mcp__test__rev");
    pty.wait_for_screen("the prompt command", T, |s| s.contains("Review a file"));
}

#[cfg(feature = "plugins")]
#[test]
fn the_ui_reports_plugins_without_waiting_for_them_and_runs_their_commands() {
    let home = Home::new();
    let extensions = home.dir.path().join("rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(extensions.join("good.wasm"), rab_plugin_host::test_support::component(true))
        .unwrap();
    std::fs::write(extensions.join("broken.wasm"), b"not a component").unwrap();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 120, 30);
    pty.wait_for("the failure note", T, |s| {
        s.contains("plugin broken failed") && s.contains("/reload-plugins tries again")
    });
    pty.send("/plugins\r");
    pty.wait_for("the listing", T, |s| s.contains("test-plugin (loaded)"));
    assert!(pty.history().contains("echo [read-only]"), "{}", pty.history());
    pty.send("/greet\r");
    pty.wait_for("the command's answer", T, |s| s.matches("test-plugin").count() >= 2);
}

#[test]
fn the_title_progress_and_a_notification_reach_the_terminal() {
    let home = Home::new();
    let repo = home.dir.path().join("myrepo");
    std::fs::create_dir_all(&repo).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("all done").slow(30)]);
    let mut e = envs(&home, &llm);
    e.push(("TERM_PROGRAM".into(), "ghostty".into()));
    let mut pty = Pty::spawn(&repo, &["--provider", "anthropic"], &e, 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    let raw = pty.raw();
    assert!(raw.contains("\x1b[22;0t") && raw.contains("\x1b[?1004h"), "{raw:?}");
    assert!(raw.contains("\x1b]0;rab · myrepo\x07"), "{raw:?}");
    // The terminal says it lost focus; the turn's end is then a notification.
    pty.send("\x1b[O");
    pty.send("hello\r");
    pty.wait_for_raw("the working title and progress", T, |r| {
        r.contains("\x1b]0;⋯ rab · myrepo\x07") && r.contains("\x1b]9;4;3;\x07")
    });
    pty.wait_for_raw("the notification", T, |r| r.contains("\x1b]9;rab finished\x07"));
    let raw = pty.raw();
    let end =
        raw.rfind("\x1b]0;rab · myrepo\x07\x1b]9;4;0;\x07").expect("idle title, progress cleared");
    assert!(end > raw.find("\x1b]9;4;3;\x07").unwrap());
    // Focused again: no notification for the next turn.
    llm.script([Turn::text("second")]);
    pty.send("\x1b[I");
    pty.send("again\r");
    pty.wait_for("the second answer", T, |s| s.contains("second"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(pty.raw().matches("\x1b]9;rab finished").count(), 1);
    // Leaving gives the terminal its title and focus mode back.
    pty.send("/quit\r");
    pty.wait_exit(T);
    let raw = pty.raw();
    assert!(raw.contains("\x1b[?1004l") && raw.contains("\x1b[23;0t"), "{raw:?}");
}

#[test]
fn a_plain_terminal_gets_the_title_but_no_progress_escape() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.send("hi\r");
    pty.wait_for("the answer", T, |s| s.contains("ok"));
    let raw = pty.raw();
    assert!(raw.contains("\x1b]0;⋯ rab · "), "{raw:?}");
    assert!(!raw.contains("\x1b]9;"), "OSC 9 sent to a terminal not known to read it: {raw:?}");
}

#[test]
fn the_theme_follows_the_background_the_terminal_reports() {
    use rab_tui::{ColorDepth, Role, Theme};
    let depth = ColorDepth::detect(false, None, Some("xterm-256color"));
    // The welcome line's "rab", as each theme paints it.
    let mark = |name: &str| {
        let t = Theme::builtin(name, depth).unwrap();
        t.fg(Role::Accent, &t.bold("rab"))
    };
    let (light, dark) = (mark("light"), mark("dark"));
    assert_ne!(light, dark);
    for (background, expected, other) in
        [("rgb:ffff/ffff/ffff", &light, &dark), ("rgb:1e1e/1e1e/2e2e", &dark, &light)]
    {
        let home = Home::new();
        let llm = FakeLlm::start();
        let pty = Pty::spawn_with_background(
            home.dir.path(),
            &["--provider", "anthropic"],
            &envs(&home, &llm),
            100,
            30,
            Some(background),
        );
        pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
        let raw = pty.raw();
        assert!(raw.contains("\x1b]11;?\x07"), "no query: {raw:?}");
        assert!(raw.contains(expected.as_str()), "{background}: {raw:?}");
        assert!(!raw.contains(other.as_str()), "{background}: {raw:?}");
    }
}

#[test]
fn an_at_file_in_the_editor_attaches_its_content_to_the_request() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("notes.txt"), "remember the milk\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("noted")]);
    let mut pty = start(&home, &llm, &repo, 100, 30);
    pty.send("what does @notes.txt say?\r");
    pty.wait_for("the attachment and the answer", T, |s| {
        s.contains("Attached notes.txt (1 line)") && s.contains("noted")
    });
    let body = String::from_utf8_lossy(&llm.requests()[0].raw).into_owned();
    assert!(body.contains(r#"<file path=\"notes.txt\">\n1\tremember the milk"#), "{body}");
    // The scrollback shows what was typed and names the file; its content went to the
    // model, not to the screen.
    let h = pty.history();
    assert!(h.contains("📎 notes.txt") && !h.contains("remember the milk"), "{h}");
}

#[test]
fn without_a_key_the_ui_opens_and_login_makes_the_session_work() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.require_api_key(Some("sk-typed-in-login"));
    llm.script([Turn::text("hello with a key")]);
    let envs = vec![
        ("HOME".into(), home.dir.path().display().to_string()),
        ("RAB_HOME".into(), home.dir.path().join("rab").display().to_string()),
        ("ANTHROPIC_BASE_URL".into(), llm.url()),
    ];
    let mut pty = Pty::spawn(home.dir.path(), &[], &envs, 100, 30);
    pty.wait_for("the editor and the hint", T, |s| {
        s.contains("/help for commands") && s.contains("Type /login anthropic")
    });
    pty.send("/login anthropic\r");
    pty.wait_for_screen("the key prompt", T, |s| s.contains("Paste the anthropic API key"));
    pty.paste("sk-typed-in-login");
    pty.send("\r");
    pty.wait_for("the stored note", T, |s| s.contains("uses it from now on"));
    pty.send("hi\r");
    pty.wait_for("the answer", T, |s| s.contains("hello with a key"));
    assert_eq!(llm.requests()[0].header("x-api-key"), Some("sk-typed-in-login"));
}

#[test]
fn print_mode_without_a_key_still_fails_and_names_login() {
    let home = Home::new();
    let out = home.rab().args(["-p", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/login"), "{err}");
}

#[test]
fn the_footer_counts_each_response_and_a_tool_timer_skips_the_question() {
    use rab_fake_llm::ScriptedUsage;
    let home = Home::new();
    let llm = FakeLlm::start();
    let usage = ScriptedUsage { input: 12_000, output: 3_000, ..ScriptedUsage::default() };
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo hi"})).with_usage(usage),
        Turn::text("done"),
    ]);
    let mut pty = start(&home, &llm, home.dir.path(), 120, 30);
    pty.send("run it\r");
    // Mid-run, while the question waits, the footer already has the first response.
    pty.wait_for("the question", T, |s| s.contains("Allow bash?"));
    pty.wait_for_screen("the footer's tokens", T, |s| s.contains("↑12.0k ↓3.0k"));
    // Issue 53: the call says it waits for the user, not "running 4.0s".
    pty.wait_for_screen("the call waiting", T, |s| s.contains("waiting for your answer"));
    std::thread::sleep(Duration::from_millis(1500));
    pty.send("\r");
    pty.wait_for("the answer", T, |s| s.contains("done"));
    // `echo` took milliseconds: no 1.5 s of waiting for the user in its time.
    let h = pty.history();
    // The call's time line: "  N.Ns" under its output.
    let times: Vec<&str> = h
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with('s') && l[..l.len() - 1].parse::<f64>().is_ok())
        .collect();
    assert_eq!(times.len(), 1, "{h}");
    // Under the 1.5 s the question waited, however busy the machine.
    let secs: f64 = times[0].trim_end_matches('s').parse().unwrap();
    assert!(secs < 1.5, "{h}");
}

#[test]
fn help_in_the_ui_lists_the_commands_and_the_keys() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 100, 60);
    pty.send("/help\r");
    pty.wait_for_screen("the help", T, |s| {
        s.contains("/export") && s.contains("Keys:") && s.contains("Interrupt")
    });
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_external_editor() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("got it")]);
    // An "editor" that appends a line to the file it is given.
    let editor = home.dir.path().join("fake-editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nprintf ' and from the editor\\n' >> \"$1\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut e = envs(&home, &llm);
    e.push(("EDITOR".into(), editor.display().to_string()));
    let mut pty = Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &e, 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty.send("typed here");
    pty.wait_for_screen("the typed text", T, |s| s.contains("typed here"));
    pty.send("\x07");
    pty.wait_for_screen("the edited prompt", T, |s| s.contains("typed here and from the editor"));
    pty.send("\r");
    pty.wait_for("the answer", T, |s| s.contains("got it"));
    let body = String::from_utf8_lossy(&llm.requests()[0].raw).into_owned();
    assert!(body.contains("typed here and from the editor"), "{body}");
    // Keys still reach rab afterwards.
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn settings_changes_the_theme_and_saves_to_the_file_chosen() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, &repo, 110, 40);
    pty.send("/settings\r");
    pty.wait_for_screen("the settings editor", T, |s| {
        s.contains("saving to: global") && s.contains("defaultThinkingLevel")
    });
    // Filter to the theme, type a new value.
    pty.send("theme");
    pty.wait_for_screen("the filtered list", T, |s| !s.contains("maxTurns"));
    pty.send("\r");
    pty.wait_for_screen("the themes", T, |s| s.contains("dark") && s.contains("light"));
    pty.send("\x1b[B\r");
    pty.wait_for_screen("the saved note", T, |s| s.contains("theme = \"light\" saved to"));
    let global = home.dir.path().join("rab/agent/settings.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(saved["theme"], "light");
    // The UI now paints with the light theme.
    let depth = rab_tui::ColorDepth::detect(false, None, Some("xterm-256color"));
    let light = rab_tui::Theme::builtin("light", depth).unwrap();
    let accent = light.fg(rab_tui::Role::Accent, &light.bold("Settings"));
    pty.wait_for_raw("the light theme", T, |r| r.contains(&accent));
    // Tab to the project's shared file; a choice from its submenu.
    pty.send("\x15");
    for _ in 0..5 {
        pty.send("\x7f");
    }
    pty.send("\t");
    pty.wait_for_screen("the project file", T, |s| {
        s.contains("saving to: project (.rab/settings.json")
    });
    pty.send("steering");
    pty.wait_for_screen("the steering row", T, |s| s.contains("steeringMode"));
    pty.send("\r");
    pty.wait_for_screen("the choices", T, |s| s.contains("one-at-a-time") && s.contains("all"));
    pty.send("\x1b[B\r");
    pty.wait_for_screen("the saved note", T, |s| s.contains("steeringMode = \"all\" saved"));
    let project: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".rab/settings.json")).unwrap())
            .unwrap();
    assert_eq!(project["steeringMode"], "all");
    // A value the settings would not load is refused and nothing is written.
    pty.send("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f");
    pty.send("maxTurns");
    pty.wait_for_screen("the maxTurns row", T, |s| s.contains("› maxTurns"));
    pty.send("\r");
    pty.send("many\r");
    pty.wait_for_screen("the refusal", T, |s| s.contains("expected a whole number"));
    pty.send("\x1b");
    pty.wait_for_screen("the list again", T, |s| s.contains("Enter change · Tab file"));
    std::thread::sleep(Duration::from_millis(100));
    pty.send("\x1b");
    // Closing applies the rest with a reload.
    pty.wait_for("the reload", T, |s| s.contains("Reloaded:"));
}

/// A valid 1x1 PNG.
fn tiny_png() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
        .unwrap()
}

#[test]
fn an_image_pasted_as_a_path_is_sent_as_an_image() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let png = tiny_png();
    std::fs::write(repo.join("screen shot.png"), &png).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("a red pixel")]);
    let mut pty = start(&home, &llm, &repo, 100, 30);
    // As a terminal pastes a dropped file: quoted, absolute.
    pty.paste(&format!("'{}'", repo.join("screen shot.png").display()));
    pty.wait_for_screen("the marker", T, |s| s.contains("[image #1: screen shot.png 1x1]"));
    pty.send("what is this?\r");
    pty.wait_for("the answer", T, |s| s.contains("a red pixel"));
    let body = &llm.requests()[0].body;
    let content = &body["messages"][0]["content"];
    let image =
        content.as_array().unwrap().iter().find(|b| b["type"] == "image").expect("an image block");
    assert_eq!(image["source"]["media_type"], "image/png");
    use base64::Engine as _;
    let sent = base64::engine::general_purpose::STANDARD
        .decode(image["source"]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(sent, png);
    let text = content.to_string();
    assert!(text.contains("[image #1: screen shot.png 1x1] what is this?"), "{text}");
    // In a terminal without graphics the message shows the image by name and size.
    assert!(pty.history().contains("[image 1x1 image/png]"), "{}", pty.history());
}

#[test]
fn an_image_in_a_tool_result_is_drawn_inline_in_a_kitty_terminal_and_named_elsewhere() {
    for kitty in [true, false] {
        let home = Home::new();
        let repo = home.dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("pixel.png"), tiny_png()).unwrap();
        let llm = FakeLlm::start();
        llm.script([Turn::tool_call("read", json!({"path": "pixel.png"})), Turn::text("seen it")]);
        let mut e = envs(&home, &llm);
        if kitty {
            e.push(("KITTY_WINDOW_ID".into(), "1".into()));
        }
        let mut pty = Pty::spawn(&repo, &["--provider", "anthropic"], &e, 100, 30);
        pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
        pty.send("look at the image\r");
        pty.wait_for("the answer", T, |s| s.contains("seen it"));
        let raw = pty.raw();
        if kitty {
            assert!(raw.contains("\x1b_Ga=T,f=100,c=1,r=1,C=1,q=2,m=0;"), "{raw:?}");
        } else {
            assert!(!raw.contains("\x1b_G"), "{raw:?}");
            assert!(pty.history().contains("[image 1x1 image/png]"), "{}", pty.history());
        }
    }
}

/// Esc twice on an empty editor opens the tree; going back before the second message
/// with its files restores what the agent wrote since (issue 23).
#[test]
fn esc_esc_rewinds_the_files_to_an_earlier_message() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("notes.txt"), "original\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("answer one"),
        Turn::tool_call("write", json!({"path": "notes.txt", "content": "rewritten\n"})),
        Turn::text("answer two"),
    ]);
    let mut pty = start_with(&home, &llm, &proj, 100, 30, &["--yolo"]);
    pty.send("first message\r");
    pty.wait_for("the first answer", T, |s| s.contains("answer one"));
    pty.send("second message\r");
    pty.wait_for("the second answer", T, |s| s.contains("answer two"));
    assert_eq!(std::fs::read_to_string(proj.join("notes.txt")).unwrap(), "rewritten\n");
    pty.send("\x1b");
    std::thread::sleep(Duration::from_millis(100));
    pty.send("\x1b");
    pty.wait_for("the tree", T, |s| s.contains("Session tree") && s.contains("second message"));
    pty.send("\r"); // the last message is selected
    pty.wait_for("the choices", T, |s| s.contains("Restore the files only"));
    pty.send("\x1b[B\x1b[B\x1b[B\r");
    pty.wait_for("the rewind", T, |s| s.contains("/rewind undo puts it back"));
    assert_eq!(std::fs::read_to_string(proj.join("notes.txt")).unwrap(), "original\n");
    pty.send("/rewind undo\r");
    pty.wait_for("the undo", T, |s| s.matches("/rewind undo puts it back").count() >= 2);
    assert_eq!(std::fs::read_to_string(proj.join("notes.txt")).unwrap(), "rewritten\n");
    pty.send("\x03\x03\x03");
    assert_eq!(pty.wait_exit(T), Some(0));
}

#[test]
fn issue_35_a_web_search_shows_its_query_pages_and_the_sources_cited() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("tool_search", json!({"query": "select:web_search"})),
        Turn::text("Rust 1.91 came out on 30 October 2025.").with_search(
            "rust 1.91 release date",
            &[
                ("https://blog.rust-lang.org/2025/10/30/Rust-1.91.0/", "Announcing Rust 1.91.0"),
                // A hostile title: its escape sequence must not reach the terminal.
                ("https://example.org/x", "Evil \u{1b}]0;pwned\u{7} page"),
            ],
        ),
    ]);
    let mut pty = start(&home, &llm, &repo, 110, 40);
    pty.send("when did rust 1.91 come out?\r");
    pty.wait_for("the answer with its sources", T, |s| {
        s.contains("Rust 1.91 came out") && s.contains("Sources:")
    });
    let h = pty.history();
    assert!(h.contains("web_search rust 1.91 release date"), "{h}");
    assert!(h.contains("2 results"), "{h}");
    assert!(h.contains("Announcing Rust 1.91.0"), "{h}");
    assert!(h.contains("[1] Announcing Rust 1.91.0"), "the cited page: {h}");
    // Shown as visible escapes, not obeyed (the title would otherwise change, unseen).
    assert!(h.contains("Evil ^[]0;pwned^G page"), "escapes shown, not obeyed: {h}");
    // The search comes before the answer it grounds.
    let search_at = h.find("web_search rust").unwrap();
    let answer_at = h.find("Rust 1.91 came out").unwrap();
    assert!(search_at < answer_at, "{h}");
}

/// The state letter of process `pid` (`T`: stopped).
#[cfg(target_os = "linux")]
fn process_state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()).unwrap_or('?')
}

#[cfg(target_os = "linux")]
fn wait_for_state(pid: u32, state: char) {
    let start = std::time::Instant::now();
    while process_state(pid) != state {
        assert!(start.elapsed() < T, "rab's state is {}, not {state}", process_state(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 53: Ctrl+Z suspends as in a shell (the terminal handed back first), a SIGTSTP
/// from outside does the same, and continuing brings the screen and the prompt back;
/// undo is Ctrl+_.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_z_suspends_and_continuing_brings_the_screen_back() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty =
        Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty.send("kept prompt");
    pty.wait_for_screen("the typed text", T, |s| s.contains("kept prompt"));
    let pid = pty.pid();
    let signal = |name: &str| {
        let ok = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    pty.send("\x1a");
    wait_for_state(pid, 'T');
    pty.wait_for_raw("the note", T, |s| s.contains("rab stopped; `fg` brings it back"));
    let drawn = pty.raw().len();
    signal("CONT");
    pty.wait_for_raw("a fresh screen", T, |s| s.len() > drawn && s[drawn..].contains("\x1b[2J"));
    pty.wait_for_screen("the prompt again", T, |s| s.contains("kept prompt"));
    // From outside, as a shell's job control or `kill -TSTP` sends it.
    signal("TSTP");
    wait_for_state(pid, 'T');
    // Keys typed before rab has the terminal back in raw mode would meet the cooked
    // terminal: the test types only once rab has drawn a fresh screen (the old screen
    // still shows the prompt, so it cannot tell).
    let drawn = pty.raw().len();
    signal("CONT");
    pty.wait_for_raw("a fresh screen", T, |s| s.len() > drawn && s[drawn..].contains("\x1b[2J"));
    pty.wait_for_screen("the prompt again", T, |s| s.contains("kept prompt"));
    // Undo is Ctrl+_ now, and keys still reach rab.
    pty.send(" more");
    pty.wait_for_screen("the added text", T, |s| s.contains("kept prompt more"));
    pty.send("\x1f");
    pty.wait_for_screen("the undone text", T, |s| !s.contains("kept prompt more"));
    pty.send("\x15/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// Issue 53: at 40 columns the header still reads and the footer keeps the cost and
/// the context share (the least useful parts go first).
#[test]
fn header_and_footer_survive_forty_columns() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("done")]);
    let mut pty =
        Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &envs(&home, &llm), 40, 20);
    pty.wait_for("the editor", T, |s| s.contains("all keys"));
    pty.send("hi\r");
    pty.wait_for("the answer", T, |s| s.contains("done"));
    let screen = pty.screen();
    assert!(screen.lines().all(|l| l.chars().count() <= 40), "{screen}");
    // The header breaks between words, not inside them.
    assert!(screen.contains("twice to quit") || screen.contains("twice to\nquit"), "{screen}");
    assert!(!screen.contains("q\nuit") && !screen.contains("(anthropic\n)"), "{screen}");
    let stats = screen.lines().rev().find(|l| l.contains("ctx")).unwrap_or_default().to_owned();
    assert!(stats.contains('$') && stats.contains("ctx "), "cost and context stay: {screen}");
    assert!(screen.contains("rab "), "{screen}");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// A failing hook's stderr is shown as a notice with its escapes made harmless: a hook
/// cannot retitle the window or move the cursor through rab's screen.
#[test]
fn a_hook_failure_notice_is_shown_without_its_escapes() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("listed")]);
    let hook = r"printf '\033]0;pwned-title\007hook broke' >&2; exit 1";
    std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
    std::fs::write(
        home.dir.path().join("rab/agent/settings.json"),
        json!({"hooks": {"PostToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let mut pty =
        Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("all keys"));
    pty.send("list\r");
    pty.wait_for("the notice", T, |s| s.contains("hook broke"));
    pty.wait_for("the answer", T, |s| s.contains("listed"));
    assert!(!pty.raw().contains("\x1b]0;pwned-title"), "the hook's escape reached the terminal");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// Issue 53: on a terminal, a mistyped subcommand is asked about (yes by default) and a
/// lone command word too (no by default), with one question helper for both.
#[test]
fn a_mistyped_subcommand_and_a_command_word_are_asked_about_on_a_terminal() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = Pty::spawn(home.dir.path(), &["sesions", "list"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the question", T, |s| s.contains("Run `rab sessions list` instead? [Y/n]"));
    pty.send("\r");
    pty.wait_for("the subcommand's output", T, |s| s.contains("saved sessions in this directory"));
    assert_eq!(pty.wait_exit(T), Some(0));
    let mut pty = Pty::spawn(home.dir.path(), &["upgrade"], &envs(&home, &llm), 100, 30);
    pty.wait_for("the question", T, |s| {
        s.contains("'upgrade' reads as a command") && s.contains("[y/N]")
    });
    pty.send("\r");
    assert_eq!(pty.wait_exit(T), Some(2));
    assert!(llm.requests().is_empty(), "nothing was sent");
}
