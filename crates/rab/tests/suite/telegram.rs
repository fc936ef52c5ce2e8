//! `rab telegram` end to end: the real binary against the fake Bot API server and the
//! fake model — a task with a question answered by a button, strangers refused, 429s
//! waited out, long replies split, a crash mid-turn and a restart, a clean shutdown.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rab_fake_llm::{FakeLlm, Turn};
use rab_fake_telegram::{FakeTelegram, Fault, TOKEN, User};
use serde_json::json;

use super::harness::Home;

const T: Duration = Duration::from_secs(30);

fn alice() -> User {
    User::new(1001, "alice")
}

/// A project folder and the bot's settings (alice by id, bob by name).
fn setup(home: &Home, tg: &FakeTelegram) -> PathBuf {
    let project = home.dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let settings = json!({"channels": {"telegram": {
        "allowedUsers": [1001, "@bob"], "apiBase": tg.api_base(), "questionTimeoutSecs": 60,
    }}});
    std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
    std::fs::write(home.dir.path().join("rab/agent/settings.json"), settings.to_string()).unwrap();
    project
}

/// `rab telegram` in `project`, its stderr in `stderr.log` of the home.
fn start(home: &Home, llm: &FakeLlm, project: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.dir.path().join("stderr.log"))
        .unwrap();
    home.rab()
        .current_dir(project)
        .args(["telegram", "--provider", "anthropic", "--api", "anthropic-messages"])
        .env("ANTHROPIC_BASE_URL", llm.url())
        .env("ANTHROPIC_API_KEY", "k")
        .env("TELEGRAM_BOT_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

fn stderr_of(home: &Home) -> String {
    std::fs::read_to_string(home.dir.path().join("stderr.log")).unwrap_or_default()
}

fn texts(tg: &FakeTelegram, chat: i64) -> Vec<String> {
    tg.messages(chat).into_iter().map(|m| m.text).collect()
}

fn has_text(tg: &FakeTelegram, chat: i64, needle: &str) -> bool {
    texts(tg, chat).iter().any(|t| t.contains(needle))
}

/// The message with buttons that is still waiting, and its id.
fn question(tg: &FakeTelegram, chat: i64) -> Option<(i64, Vec<(String, String)>)> {
    tg.messages(chat)
        .into_iter()
        .rev()
        .find(|m| !m.buttons.is_empty())
        .map(|m| (m.message_id, m.buttons.concat()))
}

fn press(tg: &FakeTelegram, user: &User, label: &str) {
    let (id, buttons) = question(tg, user.id).unwrap();
    let data = buttons.iter().find(|(l, _)| l == label).map(|(_, d)| d.clone()).unwrap();
    tg.press(user, id, &data);
}

/// The last tool result request `i` carries.
fn last_result(llm: &FakeLlm, i: usize) -> String {
    llm.requests()[i].tool_results().last().map(|r| r.1.clone()).unwrap_or_default()
}

fn stop(mut child: Child) -> (std::process::ExitStatus, Duration) {
    let started = Instant::now();
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    (status, started.elapsed())
}

#[test]
fn a_task_runs_with_its_edit_approved_by_a_button_and_the_answer_streamed() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    std::fs::write(project.join("hello.txt"), "hello\n").unwrap();
    let llm = FakeLlm::start();
    let edit =
        json!({"path": "hello.txt", "edits": [{"old_text": "hello", "new_text": "hello, rab"}]});
    llm.script([
        Turn::tool_call("read", json!({"path": "hello.txt"})),
        Turn::tool_call("edit", edit),
        Turn::tool_call("bash", json!({"command": "cat hello.txt"})),
        Turn::text("Done: **hello.txt** now says `hello, rab` & <nothing> else."),
    ]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "greet rab in hello.txt");
    tg.wait_until("the edit's question", T, |t| {
        question(t, alice.id).is_some_and(|(_, b)| b.len() == 3)
    });
    let (_, buttons) = question(&tg, alice.id).unwrap();
    let labels: Vec<&str> = buttons.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["Allow once", "Always", "Deny"]);
    // Someone else pressing alice's button changes nothing.
    let (qid, _) = question(&tg, alice.id).unwrap();
    let allow = buttons[0].1.clone();
    tg.press(&User::new(666, "mallory"), qid, &allow);
    tg.send_text(&User::new(666, "mallory"), "sync");
    tg.wait_until("mallory refused", T, |t| !t.messages(666).is_empty());
    assert!(question(&tg, alice.id).is_some(), "still waiting for alice");
    assert_eq!(std::fs::read_to_string(project.join("hello.txt")).unwrap(), "hello\n");
    assert!(has_text(&tg, alice.id, "<b>edit</b> asks to run"), "{:#?}", texts(&tg, alice.id));
    press(&tg, &alice, "Allow once");
    tg.wait_until("the command's question", T, |t| {
        question(t, alice.id).is_some() && has_text(t, alice.id, "<b>bash</b> asks to run")
    });
    press(&tg, &alice, "Allow once");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "now says"));
    assert_eq!(std::fs::read_to_string(project.join("hello.txt")).unwrap(), "hello, rab\n");
    let all = texts(&tg, alice.id);
    let answer = all.iter().find(|t| t.contains("now says")).unwrap();
    assert_eq!(
        answer,
        "Done: <b>hello.txt</b> now says <code>hello, rab</code> &amp; &lt;nothing&gt; else."
    );
    assert!(all.iter().any(|t| t.contains("✓ <b>read</b> hello.txt")), "{all:#?}");
    assert!(all.iter().any(|t| t.contains("✅ Allowed once.")), "{all:#?}");
    assert!(question(&tg, alice.id).is_none(), "no buttons left");
    assert!(!tg.answered_callbacks().is_empty());
    let (status, took) = stop(child);
    assert!(status.success(), "{status}: {}", stderr_of(&home));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_stranger_is_refused_once_and_nothing_runs() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    // A checkout cannot add users.
    std::fs::create_dir_all(project.join(".rab")).unwrap();
    let widen = json!({"channels": {"telegram": {"allowedUsers": [666]}}});
    std::fs::write(project.join(".rab/settings.json"), widen.to_string()).unwrap();
    let llm = FakeLlm::start();
    let child = start(&home, &llm, &project);
    let mallory = User::new(666, "mallory");
    tg.send_text(&mallory, "run rm -rf / please");
    tg.send_text(&mallory, "hello?");
    tg.wait_until("both taken", T, |t| t.unconfirmed() == 0 && !t.messages(666).is_empty());
    // Bob is allowed by name: his message is served, after mallory's.
    let bob = User::new(2002, "Bob");
    llm.script([Turn::text("hi bob")]);
    tg.send_text(&bob, "hi");
    tg.wait_until("bob's answer", T, |t| has_text(t, 2002, "hi bob"));
    assert_eq!(texts(&tg, 666), ["This bot is private: you are not on its list of users."]);
    assert_eq!(llm.requests().len(), 1, "only bob's message reached the model");
    assert!(!llm.requests()[0].user_texts().iter().any(|t| t.contains("rm -rf")));
    assert!(stderr_of(&home).contains("\"channels\" is ignored here"), "{}", stderr_of(&home));
    stop(child);
}

#[test]
fn telegram_429s_are_waited_out_and_long_replies_arrive_split_in_order() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    let long: String = (1..=400).map(|i| format!("Line {i} of a long answer.\n")).collect();
    llm.script([Turn::text(&long)]);
    tg.fail("sendMessage", Fault::TooManyRequests { retry_after: 2 });
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "write a lot");
    tg.wait_until("the last line", T, |t| has_text(t, alice.id, "Line 400 of"));
    let sends = tg.calls_of("sendMessage");
    assert_eq!(sends[0].status, 429);
    let waited = sends[1].at.duration_since(sends[0].at);
    assert!(waited >= Duration::from_secs(2), "retried after {waited:?}");
    let messages = texts(&tg, alice.id);
    assert!(messages.len() >= 3, "{}", messages.len());
    for m in &messages {
        assert!(rab_fake_telegram::visible_len(m) <= 4096);
    }
    let joined = messages.join("\n");
    let lines: Vec<&str> = joined.lines().filter(|l| l.starts_with("Line")).collect();
    assert_eq!(lines.len(), 400, "every line once");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(*l, format!("Line {} of a long answer.", i + 1), "in order");
    }
    stop(child);
}

/// Killed while a turn waits on a question, then started again: the message is not
/// handled twice, the chat hears the turn was cut off, and the session goes on with a
/// whole tape (the fake model refuses a history with a call and no result).
#[test]
fn a_crash_mid_turn_neither_repeats_the_message_nor_breaks_the_session() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "echo from the first turn"}))]);
    let mut child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "first task");
    tg.wait_until("the question", T, |t| question(t, alice.id).is_some());
    child.kill().unwrap();
    child.wait().unwrap();

    llm.script([Turn::text("going on from here")]);
    let child = start(&home, &llm, &project);
    tg.wait_until("the cut-off notice", T, |t| has_text(t, alice.id, "rab restarted while"));
    assert_eq!(llm.requests().len(), 1, "the first message was not handled again");
    // The old question's button no longer does anything but lose its buttons.
    press(&tg, &alice, "Allow once");
    tg.wait_until("the buttons gone", T, |t| question(t, alice.id).is_none());
    tg.send_text(&alice, "go on");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "going on from here"));
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let prompts = requests[1].user_texts();
    assert_eq!(prompts.iter().filter(|t| t.contains("first task")).count(), 1, "{prompts:?}");
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 1, "the interrupted call has its result");
    assert!(results[0].1.contains("stopped before this tool call finished"), "{results:?}");
    stop(child);
}

/// SIGTERM while a turn waits: rab ends within 5 s, the turn is recorded as aborted,
/// and the next start continues the chat's session.
#[test]
fn sigterm_shuts_down_within_five_seconds_and_the_session_continues() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "echo waiting"}))]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "start something");
    tg.wait_until("the question", T, |t| question(t, alice.id).is_some());
    let (status, took) = stop(child);
    assert!(status.success(), "{status}: {}", stderr_of(&home));
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(has_text(&tg, alice.id, "rab is shutting down"), "{:#?}", texts(&tg, alice.id));
    let log = stderr_of(&home);
    assert!(
        log.contains("rab: telegram: starting") && log.contains("rab: telegram: stopped"),
        "{log}"
    );

    llm.script([Turn::text("back again")]);
    let child = start(&home, &llm, &project);
    tg.send_text(&alice, "are you there?");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "back again"));
    assert!(!has_text(&tg, alice.id, "rab restarted while"), "a clean stop cuts nothing off");
    let results = llm.requests()[1].tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    stop(child);
}

/// Photos reach the model as images and text documents as text; other files are
/// refused with a reason; an `ask_user` question is answered by a button or a reply; a
/// question nobody answers counts as deny; 500s and dropped connections are retried;
/// long code arrives as a file.
#[test]
fn attachments_questions_retries_and_files() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let settings = json!({"channels": {"telegram": {
        "allowedUsers": [1001], "apiBase": tg.api_base(), "questionTimeoutSecs": 5,
    }}});
    std::fs::write(home.dir.path().join("rab/agent/settings.json"), settings.to_string()).unwrap();
    let llm = FakeLlm::start();
    let code =
        (1..=200).map(|i| format!("print({i})  # a line of generated code\n")).collect::<String>();
    llm.script([
        Turn::text("a photo"),
        Turn::text("a note"),
        Turn::tool_call(
            "ask_user",
            json!({"question": "Which colour?", "options": ["red", "blue"]}),
        ),
        Turn::text("blue it is"),
        Turn::tool_call("ask_user", json!({"question": "Anything else?", "options": ["no"]})),
        Turn::text("noted"),
        Turn::tool_call("bash", json!({"command": "echo never"})),
        Turn::text("denied, fine"),
        Turn::text(format!("Here:\n\n```python\n{code}```\n\nThat is all.")),
    ]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    let png = b"\x89PNG\r\n\x1a\n fake image bytes".to_vec();
    tg.send_photo(&alice, png.clone(), Some("what is this?"));
    tg.wait_until("the photo's answer", T, |t| has_text(t, alice.id, "a photo"));
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    assert!(
        String::from_utf8_lossy(&llm.requests()[0].raw).contains(&b64),
        "the image reached the model"
    );
    assert!(llm.requests()[0].user_texts().iter().any(|t| t.contains("what is this?")));

    tg.send_document(
        &alice,
        "notes.txt",
        "text/plain",
        b"line one\nthe secret plan".to_vec(),
        None,
    );
    tg.wait_until("the note's answer", T, |t| has_text(t, alice.id, "a note"));
    let prompt = llm.requests()[1].user_texts().concat();
    assert!(
        prompt.contains("<file name=\"notes.txt\">") && prompt.contains("the secret plan"),
        "{prompt}"
    );
    tg.send_document(&alice, "scan.pdf", "application/pdf", vec![0, 159, 146, 150], None);
    tg.wait_until("the refusal", T, |t| has_text(t, alice.id, "scan.pdf was not passed on"));
    assert_eq!(llm.requests().len(), 2);

    // A button answers an ask_user question; a reply answers another.
    tg.send_text(&alice, "pick a colour");
    tg.wait_until("the question", T, |t| has_text(t, alice.id, "Which colour?"));
    press(&tg, &alice, "blue");
    tg.wait_until("its answer", T, |t| has_text(t, alice.id, "blue it is"));
    assert_eq!(llm.requests()[3].tool_results()[0].1, "The user answered: blue");
    tg.send_text(&alice, "anything?");
    tg.wait_until("the second question", T, |t| has_text(t, alice.id, "Anything else?"));
    tg.send_text(&alice, "yes: write tests");
    tg.wait_until("its answer", T, |t| has_text(t, alice.id, "noted"));
    assert!(last_result(&llm, 5).contains("yes: write tests"), "{}", last_result(&llm, 5));

    // Nobody presses: denied after the timeout (5 s here). Telegram fails meanwhile.
    tg.fail("editMessageText", Fault::ServerError);
    tg.fail("sendMessage", Fault::Drop);
    tg.send_text(&alice, "run it");
    tg.wait_until("the timeout", Duration::from_secs(40), |t| {
        has_text(t, alice.id, "No answer within 5 s: denied")
    });
    tg.wait_until("the answer after it", T, |t| has_text(t, alice.id, "denied, fine"));
    assert!(last_result(&llm, 7).contains("nobody answered"), "{}", last_result(&llm, 7));
    let statuses: Vec<u16> = tg.calls().iter().map(|c| c.status).collect();
    assert!(statuses.contains(&500) && statuses.contains(&0), "both faults happened: {statuses:?}");
    // The failures were logged, and the token (part of every API URL) with none of them.
    let logs = stderr_of(&home)
        + &std::fs::read_to_string(home.dir.path().join("rab/logs/rab.log")).unwrap_or_default();
    assert!(logs.contains("retrying"), "{logs}");
    assert!(!logs.contains(TOKEN) && !logs.contains(TOKEN.split(':').nth(1).unwrap()), "{logs}");

    // Long code goes as a file, named in the answer.
    tg.send_text(&alice, "write code");
    tg.wait_until("the file", T, |t| {
        !t.documents(alice.id).is_empty() && has_text(t, alice.id, "That is all.")
    });
    let docs = tg.documents(alice.id);
    assert_eq!(docs[0].file_name, "code-1.py");
    assert_eq!(String::from_utf8_lossy(&docs[0].content), code.trim_end());
    assert!(has_text(&tg, alice.id, "code-1.py (200 lines of code, sent as a file)"));
    stop(child);
}

/// Commands in a chat: /stop interrupts a run, /new starts a fresh session, /cost
/// answers without the model, `,cmd` runs through the permission question and `!cmd` is
/// refused; an answer streams by edits of one message.
#[test]
fn chat_commands_and_streamed_edits() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    let story: String = (1..=40).map(|i| format!("word{i} ")).collect();
    llm.script([Turn::text(&story).slow(150), Turn::text("fresh start")]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "tell a long story");
    tg.wait_until("the answer under way", T, |t| has_text(t, alice.id, "word3"));
    tg.wait_until("an edit", T, |t| t.messages(alice.id).iter().any(|m| m.edits > 0));
    tg.send_text(&alice, "/stop");
    tg.wait_until("the stop", T, |t| has_text(t, alice.id, "⏹ Stopped."));
    assert!(!has_text(&tg, alice.id, "word40"), "the run did not go on");

    tg.send_text(&alice, "/new");
    tg.wait_until("the new session", T, |t| has_text(t, alice.id, "A new session starts here"));
    tg.send_text(&alice, "hello again");
    tg.wait_until("its answer", T, |t| has_text(t, alice.id, "fresh start"));
    let texts_sent = llm.requests()[1].user_texts();
    assert_eq!(texts_sent, ["hello again"], "the new session has no history");

    tg.send_text(&alice, "/cost");
    tg.wait_until("the cost", T, |t| has_text(t, alice.id, "$"));
    tg.send_text(&alice, "!ls");
    tg.wait_until("the refusal", T, |t| {
        has_text(t, alice.id, "Shell lines starting with ! are not run")
    });
    std::fs::write(project.join("marker.txt"), "x").unwrap();
    tg.send_text(&alice, ",ls");
    tg.wait_until("the command's question", T, |t| question(t, alice.id).is_some());
    press(&tg, &alice, "Allow once");
    tg.wait_until("its output", T, |t| has_text(t, alice.id, "marker.txt"));
    assert_eq!(llm.requests().len(), 2, "commands and shell lines need no model");
    stop(child);
}

/// Scheduling from a chat: `/cron` and the model's cron tools add prompts that are kept
/// under rab's home for that chat, survive a restart, and run without a message — a run
/// missed by less than 12 hours runs once at start and answers in the chat; a one-off
/// missed by more is dropped, and the chat is told both.
#[test]
fn scheduled_prompts_from_a_chat_survive_a_restart_and_answer_in_that_chat() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("cron_create", json!({"cron": "15 7 * * *", "prompt": "water the plants"})),
        Turn::text("I will remind you every morning."),
    ]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "/cron add 0 8 * * * check CI and tell me");
    tg.wait_until("the job", T, |t| has_text(t, alice.id, "cron_1 scheduled: 0 8 * * * (UTC)"));
    tg.send_text(&alice, "/cron once 30 9 * * * one-off reminder");
    tg.wait_until("the one-off", T, |t| has_text(t, alice.id, "cron_2 scheduled"));
    tg.send_text(&alice, "remind me to water the plants at 7:15");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "remind you every morning"));
    assert!(super::harness::offered(&llm, 0).contains(&"cron_create".to_owned()));
    tg.send_text(&alice, "/cron");
    tg.wait_until("the list", T, |t| {
        has_text(t, alice.id, "cron_3") && has_text(t, alice.id, "kept across restarts")
    });
    assert!(stop(child).0.success(), "{}", stderr_of(&home));

    // While rab was down: cron_1 came due an hour ago, the one-off two days ago.
    let bot = TOKEN.split(':').next().unwrap();
    let file = home.dir.path().join(format!("rab/cron/telegram/{bot}/{}.json", alice.id));
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let now = now.as_millis() as u64;
    for job in saved["jobs"].as_array_mut().unwrap() {
        match job["id"].as_str().unwrap() {
            "cron_1" => job["next_ms"] = json!(now - 3_600_000),
            "cron_2" => job["next_ms"] = json!(now - 2 * 86_400_000),
            _ => {}
        }
    }
    std::fs::write(&file, saved.to_string()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "only the user reads the prompts: {mode:o}");
    }

    llm.script([Turn::text("CI is green on main.")]);
    let child = start(&home, &llm, &project);
    tg.wait_until("the late run's answer", T, |t| has_text(t, alice.id, "CI is green on main."));
    assert!(has_text(&tg, alice.id, "was due at"), "{:#?}", texts(&tg, alice.id));
    assert!(has_text(&tg, alice.id, "one-off reminder\") missed its run"));
    assert!(has_text(&tg, alice.id, "⏰ check CI and tell me"));
    let last = llm.requests().last().unwrap().user_texts();
    assert_eq!(last.last().unwrap(), "check CI and tell me");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let ids: Vec<&str> =
        saved["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["cron_1", "cron_3"], "the one-off is gone");
    assert!(saved["jobs"][0]["next_ms"].as_u64().unwrap() > now, "cron_1 waits for its next time");
    stop(child);
}

/// A chat message must not choose a file of the user's to replace: `/export FILE` from
/// a chat writes only inside the workspace and never a protected path (class 13 of the
/// third containment audit: `/export md ~/.bashrc` replaced it).
#[test]
fn export_from_a_chat_writes_only_inside_the_workspace() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = setup(&home, &tg);
    let llm = FakeLlm::start();
    llm.script([Turn::text("hello there")]);
    let child = start(&home, &llm, &project);
    let alice = alice();
    tg.send_text(&alice, "hi");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "hello there"));
    let bashrc = home.dir.path().join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").unwrap();
    tg.send_text(&alice, &format!("/export md {}", bashrc.display()));
    tg.wait_until("the refusal", T, |t| has_text(t, alice.id, "only inside the workspace"));
    tg.send_text(&alice, "/export md .git/hooks/pre-commit");
    tg.wait_until("the second refusal", T, |t| has_text(t, alice.id, "protected path"));
    tg.send_text(&alice, "/export md chat.md");
    tg.wait_until("the export", T, |t| has_text(t, alice.id, "exported to"));
    stop(child);
    assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# mine\n");
    assert!(!project.join(".git/hooks/pre-commit").exists());
    assert!(std::fs::read_to_string(project.join("chat.md")).unwrap().contains("hello there"));
}

/// The bot's token, from the variable `tokenEnv` names, reaches no command, and a
/// command that prints it spaced out or split gets it past the firewall to nobody
/// (class 3 of the third containment audit).
#[test]
fn the_bot_token_reaches_no_command_and_no_model() {
    let home = Home::new();
    let tg = FakeTelegram::start();
    let project = home.dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let settings = json!({"channels": {"telegram": {
        "allowedUsers": [1001], "apiBase": tg.api_base(), "tokenEnv": "MY_BOT",
    }}});
    std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
    std::fs::write(home.dir.path().join("rab/agent/settings.json"), settings.to_string()).unwrap();
    let spaced: String = TOKEN.chars().flat_map(|c| [c, ' ']).collect();
    let (half, rest) = TOKEN.split_at(10);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "bash",
            json!({"command": format!(
                "echo \"var:${{MY_BOT:-unset}}\"; env | grep -c '{half}'; echo '{spaced}'; \
                 echo '{half}'; echo '{rest}'"
            )}),
        ),
        Turn::text("looked"),
    ]);
    let child = home
        .rab()
        .current_dir(&project)
        .args(["telegram", "--provider", "anthropic", "--api", "anthropic-messages"])
        .env("ANTHROPIC_BASE_URL", llm.url())
        .env("ANTHROPIC_API_KEY", "k")
        .env("MY_BOT", TOKEN)
        .env_remove("TELEGRAM_BOT_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let alice = alice();
    tg.send_text(&alice, "look around");
    tg.wait_until("the command's question", T, |t| question(t, alice.id).is_some());
    press(&tg, &alice, "Allow once");
    tg.wait_until("the answer", T, |t| has_text(t, alice.id, "looked"));
    stop(child);
    let result = last_result(&llm, 1);
    assert!(result.contains("var:unset"), "{result}");
    assert!(result.starts_with("var:unset\n0\n"), "no variable holds it: {result}");
    assert!(result.contains("[REDACTED: the Telegram bot token]"), "{result}");
    assert!(!result.contains("T E S T") && !result.contains("for-rab"), "{result}");
}
