//! The runtime with a real set-up against the fake model: typed lines classified once
//! (commands, shell lines, prompts with shared output), views, questions withdrawn when
//! their run is aborted.

use std::sync::Arc;
use std::time::Duration;

use rab_config::{Env, Paths};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::{Event, Op, RuntimeHandle, View, start_with};
use crate::setup::{RuntimeOptions, Setup, TapeChoice};

/// A runtime over a new session in a temporary project, talking to `llm`.
fn runtime(llm: &FakeLlm, dir: &std::path::Path) -> RuntimeHandle {
    let cwd = dir.join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let env = Env::from_pairs([
        ("HOME", dir.display().to_string()),
        ("ANTHROPIC_API_KEY", "k".to_owned()),
        ("ANTHROPIC_BASE_URL", llm.url()),
    ]);
    let mut options = RuntimeOptions::new(env, Paths::at(dir.join("rab")), cwd);
    options.model.provider = Some("anthropic".into());
    options.safety.sandbox = Some("off".into());
    let setup = Setup::new(options).unwrap();
    let (tape, _) = setup.tape(&TapeChoice::default()).unwrap();
    let (session, _) = setup.session(tape).unwrap();
    start_with(Arc::new(setup), session)
}

/// Events until `submission` is done (and its run, if it started one, has ended).
async fn until_done(rt: &mut RuntimeHandle, submission: u64) -> Vec<Event> {
    let mut out = Vec::new();
    let mut is_running = false;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), rt.events.recv())
            .await
            .unwrap_or_else(|_| panic!("the runtime answers; saw {out:?}"))
            .expect("the runtime is alive");
        let end = match &event {
            Event::RunStarted { submission: s } if *s == submission => {
                is_running = true;
                false
            }
            Event::RunEnded { submission: s, .. } => *s == submission,
            Event::Done { submission: s, .. } => *s == submission && !is_running,
            _ => false,
        };
        out.push(event);
        if end {
            return out;
        }
    }
}

fn infos(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Info { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn refusal(events: &[Event]) -> Option<&str> {
    events.iter().find_map(|e| match e {
        Event::Done { result: Err(why), .. } => Some(why.as_str()),
        _ => None,
    })
}

#[tokio::test]
async fn typed_lines_are_commands_shell_lines_or_prompts_classified_once() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let mut rt = runtime(&llm, dir.path());

    let id = rt.submit(Op::Line { text: "/name first".into() });
    assert_eq!(infos(&until_done(&mut rt, id).await), ["named: first"]);
    let id = rt.submit(Op::Line { text: "/nosuch".into() });
    let events = until_done(&mut rt, id).await;
    assert!(refusal(&events).is_some_and(|r| r.contains("unknown command /nosuch")));

    // `!cmd` keeps its output for the next prompt; `!!cmd` does not.
    let id = rt.submit(Op::Line { text: "!echo shared-output".into() });
    let events = until_done(&mut rt, id).await;
    assert!(events.iter().any(|e| matches!(e, Event::ShellStarted { .. })));
    let shared = events.iter().any(|e| {
        matches!(e, Event::ShellEnded { output, is_shared: true, .. } if output.contains("shared-output"))
    });
    assert!(shared, "{events:?}");
    let id = rt.submit(Op::Line { text: "!!echo private-output".into() });
    let events = until_done(&mut rt, id).await;
    assert!(events.iter().any(|e| matches!(e, Event::ShellEnded { is_shared: false, .. })));
    assert!(llm.requests().is_empty(), "no shell line called the model");

    let id = rt.submit(Op::Line { text: "hello".into() });
    let events = until_done(&mut rt, id).await;
    assert!(events.iter().any(|e| matches!(e, Event::RunEnded { .. })));
    let sent = llm.requests()[0].last_user_text().unwrap();
    assert!(sent.contains("shared-output") && sent.ends_with("hello"), "{sent}");
    assert!(!sent.contains("private-output"), "{sent}");

    // What needs a person comes as a view.
    let id = rt.submit(Op::Line { text: "/tree".into() });
    let events = until_done(&mut rt, id).await;
    let tree = events.iter().find_map(|e| match e {
        Event::Show { view: View::Tree(items), .. } => Some(items),
        _ => None,
    });
    let items = tree.expect("the tree view");
    assert_eq!(items.len(), 1, "one user message: {items:?}");
    assert!(items[0].full_text.ends_with("hello"));
}

#[tokio::test]
async fn an_aborted_run_withdraws_its_question_and_a_line_waits_for_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("bash", json!({"command": "echo asked"}))]);
    let mut rt = runtime(&llm, dir.path());
    let id = rt.submit(Op::Prompt { text: "run it".into(), images: Vec::new() });
    let question = loop {
        match rt.events.recv().await.unwrap() {
            Event::ApprovalRequested { id, request } => {
                assert_eq!(request.tool, "bash");
                assert!(!request.call_id.is_empty());
                break id;
            }
            _ => continue,
        }
    };
    // A line while the run goes on is refused, not queued behind it.
    let line = rt.submit(Op::Line { text: "/name busy".into() });
    rt.submit(Op::Abort);
    let events = until_done(&mut rt, id).await;
    let closed =
        events.iter().any(|e| matches!(e, Event::QuestionClosed { id } if *id == question));
    assert!(closed, "{events:?}");
    let refused = events
        .iter()
        .any(|e| matches!(e, Event::Done { submission, result: Err(_) } if *submission == line));
    assert!(refused, "{events:?}");
    let stop = events.iter().find_map(|e| match e {
        Event::RunEnded { stop, .. } => Some(stop.clone()),
        _ => None,
    });
    assert_eq!(stop, Some(rab_agent::StopCause::Aborted));
}

#[tokio::test]
async fn a_compaction_runs_off_the_actor_and_abort_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    // A long first exchange (older than what compaction keeps), a short second one, then
    // a summary that streams slowly.
    llm.script([
        Turn::text("word ".repeat(40_000)),
        Turn::text("short"),
        Turn::text("summary ".repeat(400)).slow(20),
    ]);
    let mut rt = runtime(&llm, dir.path());
    for text in ["hello", "again"] {
        let id = rt.submit(Op::Line { text: text.into() });
        until_done(&mut rt, id).await;
    }
    let id = rt.submit(Op::Line { text: "/compact".into() });
    loop {
        match rt.events.recv().await.unwrap() {
            Event::OpStarted { submission, label } if submission == id => {
                assert_eq!(label, "Compacting…");
                break;
            }
            _ => continue,
        }
    }
    // The actor still serves ops while the summary streams.
    let state = rt.submit(Op::GetState);
    let events = until_done(&mut rt, state).await;
    assert!(events.iter().any(|e| matches!(e, Event::State { .. })));
    rt.submit(Op::Abort);
    let events = until_done(&mut rt, id).await;
    assert!(refusal(&events).is_some(), "the compaction was stopped: {events:?}");
    // The session is back.
    let id = rt.submit(Op::Line { text: "/name after".into() });
    assert_eq!(infos(&until_done(&mut rt, id).await), ["named: after"]);
}

/// A front end's work on the session runs between runs and is refused during one; a
/// fork it makes is reported as a replaced session; a shell line can be stopped.
#[tokio::test]
async fn work_on_the_session_waits_for_no_run_and_a_shell_line_stops_when_asked() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("slow ".repeat(200)).slow(10)]);
    let dir = tempfile::tempdir().unwrap();
    let mut rt = runtime(&llm, dir.path());
    let name = |text: &'static str| {
        Op::WithSession(super::SessionFn(Box::new(move |s, setup| {
            assert!(setup.is_some());
            s.set_name(text).map(|()| json!({"named": text}))
        })))
    };
    let id = rt.submit(name("first"));
    let events = until_done(&mut rt, id).await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Data { value, .. } if value["named"] == "first")),
        "{events:?}"
    );
    let run = rt.submit(Op::Prompt { text: "talk".into(), images: Vec::new() });
    let busy = rt.submit(name("second"));
    let mut seen = Vec::new();
    let refused = loop {
        let event = rt.events.recv().await.unwrap();
        if let Event::Done { submission, result } = &event
            && *submission == busy
        {
            break result.clone();
        }
        seen.push(event);
    };
    assert!(refused.unwrap_err().starts_with("a run is going on"));
    rt.submit(Op::Abort);
    let _ = until_done(&mut rt, run).await;
    let fork = Op::WithSession(super::SessionFn(Box::new(|s, setup| {
        let dir =
            rab_session::session_dir(&setup.unwrap().paths.sessions_dir(), &setup.unwrap().cwd);
        s.fork(&dir).map(|p| json!(p))
    })));
    let id = rt.submit(fork);
    let events = until_done(&mut rt, id).await;
    assert!(events.iter().any(|e| matches!(e, Event::SessionReplaced { .. })), "{events:?}");
    // `!sleep 30` stopped at once.
    let started = std::time::Instant::now();
    let shell = rt.submit(Op::Line { text: "!sleep 30".into() });
    tokio::time::sleep(Duration::from_millis(300)).await;
    rt.submit(Op::AbortShell);
    let events = until_done(&mut rt, shell).await;
    let ended = events.iter().find_map(|e| match e {
        Event::ShellEnded { is_error, output, .. } => Some((*is_error, output.clone())),
        _ => None,
    });
    assert!(matches!(&ended, Some((true, _))), "{ended:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "stopped, not waited out");
}

/// What was found: a follow-up sent as a run ended was lost (queued after the agent's
/// last look at its queue, or refused with "nothing is running" a moment later). Raced
/// here thousands of times at every point of a run: each steering or follow-up message
/// must reach the conversation, in the run going on or in one of its own.
#[tokio::test]
async fn a_message_queued_at_any_moment_of_a_run_reaches_the_conversation() {
    use rab_agent::AgentEvent;
    let script =
        rab_fake_llm::Script { turns: vec![Turn::text("ok")], repeat: true, ..Default::default() };
    let llm = FakeLlm::try_start(script, "127.0.0.1:0").unwrap();
    llm.forget_requests();
    let mut rng = fastrand::Rng::with_seed(53);
    let (rounds, per_runtime) = (2000, 100);
    let mut delivered = 0;
    for block in 0..rounds / per_runtime {
        // A new session now and then keeps each request's history short.
        let dir = tempfile::tempdir().unwrap();
        let mut rt = runtime(&llm, dir.path());
        for i in 0..per_runtime {
            let n = block * per_runtime + i;
            let prompt = rt.submit(Op::Prompt { text: format!("prompt {n}"), images: Vec::new() });
            // Sent after a random number of the run's events: before it starts, while
            // it streams, as it ends, or after it has ended.
            let wait = rng.usize(0..14);
            let mut seen = Vec::new();
            while seen.len() < wait {
                let event = tokio::time::timeout(Duration::from_secs(20), rt.events.recv())
                    .await
                    .unwrap_or_else(|_| panic!("round {n}: the runtime answers; saw {seen:?}"))
                    .unwrap();
                if let Event::Done { submission, result: Err(why) } = &event
                    && *submission == prompt
                {
                    panic!("round {n}: the prompt was refused: {why}");
                }
                let ended =
                    matches!(event, Event::RunEnded { submission, .. } if submission == prompt);
                seen.push(event);
                if ended {
                    break;
                }
            }
            let text = format!("queued {n}");
            let op = if n % 2 == 0 {
                Op::FollowUp { text: text.clone(), images: Vec::new() }
            } else {
                Op::Steer { text: text.clone(), images: Vec::new() }
            };
            let queued = rt.submit(op);
            // Until the queued message has been in a user message and its run ended.
            let (mut arrived, mut answered) = (false, false);
            while !(arrived && answered) {
                let event = tokio::time::timeout(Duration::from_secs(20), rt.events.recv())
                    .await
                    .unwrap_or_else(|_| {
                        panic!("round {n} (sent after {wait} events): \"{text}\" was lost")
                    })
                    .unwrap();
                match &event {
                    Event::Agent(AgentEvent::MessageEnd { message: rab_ai::Message::User(u) })
                        if rab_ai::Content::join_text(&u.content).contains(&text) =>
                    {
                        arrived = true;
                    }
                    Event::RunEnded { .. } if arrived => answered = true,
                    Event::Done { submission, result: Err(why) } if *submission == queued => {
                        panic!("round {n}: \"{text}\" was refused: {why}")
                    }
                    _ => {}
                }
                seen.push(event);
            }
            delivered += 1;
        }
    }
    assert_eq!(delivered, rounds);
}

/// Issue 53: `/clear` starts a new conversation, as in Claude Code (the screen alone is
/// cleared with a key of its own).
#[tokio::test]
async fn clear_starts_a_new_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let mut rt = runtime(&llm, dir.path());
    let id = rt.submit(Op::Line { text: "remember this".into() });
    until_done(&mut rt, id).await;
    let id = rt.submit(Op::Line { text: "/clear".into() });
    let events = until_done(&mut rt, id).await;
    assert!(events.iter().any(|e| matches!(e, Event::SessionReplaced { .. })), "{events:?}");
    let id = rt.submit(Op::GetMessages);
    let events = until_done(&mut rt, id).await;
    let empty =
        events.iter().any(|e| matches!(e, Event::Messages { messages, .. } if messages.is_empty()));
    assert!(empty, "{events:?}");
}
