//! The plain REPL (`--repl`, or a terminal that cannot do the UI).

use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{Home, stderr, stdout, with_stdin};

fn repl(home: &Home, llm: &FakeLlm, input: &str) -> std::process::Output {
    let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
    cmd.arg("--repl");
    with_stdin(cmd, input)
}

#[test]
fn answers_each_line_and_keeps_the_conversation() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer"), Turn::text("second answer")]);
    let out = repl(&home, &llm, "one\ntwo\n/quit\n");
    let text = stdout(&out);
    assert!(
        text.contains("first answer") && text.contains("second answer"),
        "{text}\n{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        llm.requests()[1].transcript().items.len(),
        3,
        "the second request carries the first exchange"
    );
}

#[test]
fn bang_output_goes_to_the_model_with_the_next_message_and_double_bang_does_not() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("seen")]);
    let out = repl(&home, &llm, "!echo shared-output\n!!echo private-output\nwhat did it print?\n");
    let text = stdout(&out);
    assert!(text.contains("shared-output") && text.contains("private-output"), "{text}");
    let sent = llm.requests()[0].last_user_text().unwrap();
    assert!(
        sent.contains("I ran `echo shared-output`") && sent.contains("shared-output"),
        "{sent}"
    );
    assert!(!sent.contains("private-output"), "{sent}");
    assert!(sent.ends_with("what did it print?"), "{sent}");
}

#[test]
fn slash_commands_work_without_a_model_call() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let out = repl(&home, &llm, "/help\n/thinking high\n/thinking extreme\n/nosuch\n/session\n");
    let text = stdout(&out);
    assert!(text.contains("/model") && text.contains("thinking: high"), "{text}");
    assert!(stderr(&out).contains("/thinking takes one of"), "{}", stderr(&out));
    assert!(stderr(&out).contains("unknown command /nosuch"), "{}", stderr(&out));
    assert!(text.contains("session ") && text.contains("file:"), "{text}");
    assert!(llm.requests().is_empty());
}

#[test]
fn permission_questions_are_answered_on_stdin_once_always_or_no_with_a_reason() {
    let home = Home::new();
    std::fs::write(home.dir.path().join("a.txt"), "one\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "edit",
            serde_json::json!({"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}),
        ),
        Turn::tool_call("bash", serde_json::json!({"command": "echo hi"})),
        Turn::tool_call("bash", serde_json::json!({"command": "rm a.txt"})),
        Turn::text("done"),
    ]);
    let out = repl(&home, &llm, "go\ny\na\nn not that file\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("? Allow edit") && text.contains("+two"), "the diff is shown: {text}");
    assert!(text.contains("$ echo hi"), "{text}");
    let reqs = llm.requests();
    assert!(
        reqs[1].tool_results()[0].1.starts_with("edited a.txt"),
        "{:?}",
        reqs[1].tool_results()
    );
    assert_eq!(reqs[2].tool_results()[1].1, "hi");
    assert_eq!(reqs[3].tool_results()[2].1, "the user denied this call: not that file");
    // "Always" is the user's own answer: kept in rab's home for this folder, never in
    // the repository's files.
    let saved = std::fs::read_to_string(home.dir.path().join("rab/agent/answers.json")).unwrap();
    assert!(saved.contains("bash(echo hi:*)"), "{saved}");
    assert!(!home.dir.path().join(".rab").exists(), "nothing written in the folder");
    assert!(home.dir.path().join("a.txt").exists());
}

#[test]
fn tools_lists_levels_the_mode_and_deferred_schemas() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.args(["--repl", "--permission-mode", "plan"]);
    let out = with_stdin(cmd, "/tools\n");
    let text = stdout(&out);
    assert!(text.contains("Permission mode: plan"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("bash").contains("execute") && !line("bash").contains("tool_search"), "{text}");
    assert!(
        line("web_fetch").contains("network") && line("web_fetch").contains("tool_search"),
        "{text}"
    );
    assert!(line("read").contains("read-only"), "{text}");
}

#[test]
fn issue_34_an_always_answer_is_the_users_and_holds_in_an_untrusted_folder() {
    let home = Home::new();
    let dir = home.dir.path().join("src/cloned");
    std::fs::create_dir_all(&dir).unwrap();
    // The folder is not trusted and brings nothing: no question about it.
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", serde_json::json!({"command": "echo hi"})),
        Turn::text("ok"),
    ]);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.current_dir(&dir).arg("--repl");
    let out = with_stdin(cmd, "go\na\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!dir.join(".rab").exists(), "the answer is not written into the folder");
    // Headless, still untrusted: the answer allows the command, and is not listed as
    // something the folder brings.
    llm.script([
        Turn::tool_call("bash", serde_json::json!({"command": "echo hi there"})),
        Turn::text("ok"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = llm.requests();
    let last = requests.last().expect("the second run asked the model");
    assert_eq!(last.tool_results().last().unwrap().1, "hi there");
    assert!(!stderr(&out).contains("brings"), "{}", stderr(&out));
}
