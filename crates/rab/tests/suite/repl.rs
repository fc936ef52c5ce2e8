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
