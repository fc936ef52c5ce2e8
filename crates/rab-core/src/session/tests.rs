use super::*;
use pretty_assertions::assert_eq;
use rab_agent::{DrainMode, Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use rab_ai::{Api, Client, Model, RetryPolicy, StreamOptions};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

struct Echo;
impl Tool for Echo {
    type Args = EchoArgs;
    const NAME: &'static str = "echo";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "echo".into()
    }
    async fn run(&self, args: EchoArgs, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text).with_details(json!({"echoed": true})))
    }
}

fn config(llm: &FakeLlm) -> AgentConfig {
    let mut model = Model::custom("test-model", "anthropic", Api::AnthropicMessages, &llm.url());
    model.cost.input = 1.0;
    AgentConfig {
        model,
        options: StreamOptions {
            api_key: Some("k".into()),
            retry: RetryPolicy::none(),
            ..Default::default()
        },
        max_turns: None,
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    }
}

fn session(llm: &FakeLlm, tape: Tape) -> AgentSession {
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo)];
    AgentSession::new(Arc::new(Client::new()), config(llm), "sys".into(), tools, tape).unwrap().0
}

#[tokio::test]
async fn every_message_is_on_the_tape_and_subscribers_see_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("echo", json!({"text": "hi"})), Turn::text("done")]);
    let mut s = session(&llm, Tape::create(dir.path(), std::path::Path::new("/p"), None));
    let mut rx = s.subscribe();
    let stop = s.prompt("go".into(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    let (tape, _) = Tape::open(s.tape().path().unwrap()).unwrap();
    let kinds: Vec<String> = tape
        .entries()
        .iter()
        .map(|e| match &e.body {
            EntryBody::Message { message: Message::User(_), .. } => "user".into(),
            EntryBody::Message { message: Message::Assistant(_), .. } => "assistant".into(),
            EntryBody::Message { message: Message::ToolResult(_), details } => {
                format!("result {details:?}")
            }
            other => format!("{other:?}").split_whitespace().next().unwrap_or_default().to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "ModelChange",
            "ThinkingLevelChange",
            "Context",
            "user",
            "assistant",
            "result Some(Object {\"echoed\": Bool(true)})",
            "assistant"
        ]
    );
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    assert!(matches!(events.first(), Some(AgentEvent::AgentStart)));
    assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { stop: StopCause::Done })));
    assert_eq!(s.totals().turns, 2);
    assert!(s.totals().cost > 0.0);
}

#[tokio::test]
async fn a_resumed_session_sends_the_whole_history_and_records_the_model_once() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer"), Turn::text("second answer")]);
    let mut s = session(&llm, Tape::create(dir.path(), std::path::Path::new("/p"), None));
    s.prompt("first question".into(), CancellationToken::new()).await;
    let path = s.tape().path().unwrap().to_owned();
    drop(s);
    let (tape, _) = Tape::open(&path).unwrap();
    let mut s = session(&llm, tape);
    s.prompt("second question".into(), CancellationToken::new()).await;
    let items = llm.requests()[1].transcript().items;
    assert_eq!(items.len(), 3, "{items:?}");
    let (tape, _) = Tape::open(&path).unwrap();
    let model_changes =
        tape.entries().iter().filter(|e| matches!(e.body, EntryBody::ModelChange { .. })).count();
    assert_eq!(model_changes, 1);
}

#[tokio::test]
async fn issue_13_a_resumed_session_keeps_its_first_prompt_and_says_what_changed_once() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two"), Turn::text("three")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo)];
    let open = |prompt: &str, tape: Tape| {
        AgentSession::new(Arc::new(Client::new()), config(&llm), prompt.into(), tools.clone(), tape)
            .unwrap()
            .0
    };
    let day1 = "Be brief.\n\nCurrent date: 2026-11-24";
    let day2 = "Be brief.\n\nCurrent date: 2026-11-25";
    let mut s = open(day1, Tape::create(dir.path(), std::path::Path::new("/p"), None));
    s.prompt("a".into(), CancellationToken::new()).await;
    let path = s.tape().path().unwrap().to_owned();
    drop(s);
    // Resumed the next day, twice.
    for prompt in ["b", "c"] {
        let (tape, _) = Tape::open(&path).unwrap();
        let mut s = open(day2, tape);
        assert_eq!(s.agent().system_prompt(), day1, "the prompt the conversation began with");
        s.prompt(prompt.into(), CancellationToken::new()).await;
    }
    let reqs = llm.requests();
    assert!(reqs.iter().all(|r| r.system() == day1));
    let said = |i: usize| String::from_utf8_lossy(&reqs[i].raw).matches("2026-11-25").count();
    assert_eq!((said(0), said(1), said(2)), (0, 1, 1), "said once, then kept in the history");
    let (tape, _) = Tape::open(&path).unwrap();
    let contexts =
        tape.entries().iter().filter(|e| matches!(e.body, EntryBody::Context { .. })).count();
    assert_eq!(contexts, 1, "declared once");
}

#[tokio::test]
async fn branch_fork_names_and_anchors_keep_the_tape_and_the_conversation_in_step() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two"), Turn::text("three")]);
    let mut s = session(&llm, Tape::create(dir.path(), std::path::Path::new("/p"), None));
    assert!(s.add_anchor("start").is_err(), "nothing to anchor before a message");
    s.prompt("first".into(), CancellationToken::new()).await;
    s.add_anchor("after-first").unwrap();
    s.prompt("second".into(), CancellationToken::new()).await;
    s.set_name("my session").unwrap();
    assert_eq!(s.name().as_deref(), Some("my session"));
    let tree = s.tree();
    assert_eq!(tree.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["first", "second"]);
    assert!(tree.iter().all(|t| t.is_active));
    let (anchor, at) = s.anchors()[0].clone();
    assert_eq!(anchor, "after-first");
    // Back to the anchor: the next message starts a branch there; the old one stays.
    s.branch_to(Some(&at), false, CancellationToken::new()).await.unwrap();
    assert_eq!(s.agent().messages().len(), 2, "first and its answer");
    s.prompt("other".into(), CancellationToken::new()).await;
    let tree = s.tree();
    let texts: Vec<(&str, bool)> = tree.iter().map(|t| (t.text.as_str(), t.is_active)).collect();
    assert_eq!(texts, [("first", true), ("second", false), ("other", true)]);
    assert!(tree[1].depth > tree[0].depth, "the branch point indents its children");
    // A fork copies the active branch into a new file and continues there.
    let old = s.tape().path().unwrap().to_path_buf();
    let forked = s.fork(dir.path()).unwrap();
    assert_ne!(forked, old);
    let (tape, _) = Tape::open(&forked).unwrap();
    assert_eq!(tape.header().parent_session.as_deref(), Some(old.display().to_string().as_str()));
    let users: Vec<String> = s
        .agent()
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(rab_ai::Content::join_text(&u.content)),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["first", "other"]);
}

/// Appends fail from the `fail_from`-th on, as on a disk that has filled up.
#[derive(Debug)]
struct FillingDisk {
    appends: usize,
    fail_from: usize,
    lines: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl rab_session::TapeSink for FillingDisk {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.appends += 1;
        if self.appends >= self.fail_from {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        self.lines.lock().unwrap().extend_from_slice(bytes);
        Ok(())
    }
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.lines.lock().unwrap().len() as u64)
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.lines.lock().unwrap().truncate(len as usize);
        Ok(())
    }
}

static TOUCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Touch;
impl Tool for Touch {
    type Args = EchoArgs;
    const NAME: &'static str = "touch";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "touch".into()
    }
    async fn run(&self, _: EchoArgs, _: ToolContext) -> Result<ToolOutput, ToolError> {
        TOUCHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(ToolOutput::text("touched"))
    }
}

#[tokio::test]
async fn a_full_disk_stops_the_run_before_a_call_that_was_not_recorded_runs() {
    use std::sync::atomic::Ordering;
    // Appends: model, thinking level, context, prompt, the reply with the call, its
    // result. The disk fills at each of them in turn.
    for fail_from in 1..=6 {
        let dir = tempfile::tempdir().unwrap();
        let llm = FakeLlm::start();
        llm.script([Turn::tool_call("touch", json!({"text": "x"})), Turn::text("done")]);
        let lines = std::sync::Arc::default();
        let mut tape = Tape::create(dir.path(), std::path::Path::new("/p"), None);
        let disk = FillingDisk { appends: 0, fail_from, lines: std::sync::Arc::clone(&lines) };
        tape.set_sink(Box::new(disk));
        let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Touch)];
        let mut s =
            AgentSession::new(Arc::new(Client::new()), config(&llm), "sys".into(), tools, tape)
                .unwrap()
                .0;
        let before = TOUCHED.load(Ordering::SeqCst);
        let stop = s.prompt("go".into(), CancellationToken::new()).await;
        let ran = TOUCHED.load(Ordering::SeqCst) - before;
        let StopCause::Error { message } = &stop else { panic!("{fail_from}: {stop:?}") };
        assert!(message.contains("No space left on device"), "{fail_from}: {message}");
        // The call runs only once the reply that asked for it is on the disk.
        assert_eq!(ran, usize::from(fail_from == 6), "{fail_from}");
        // What did reach the disk is whole lines of a session that loads.
        let bytes = lines.lock().unwrap().clone();
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "{fail_from}");
        if !bytes.is_empty() {
            let path = dir.path().join("copy.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let (loaded, warnings) = Tape::open(&path).unwrap();
            assert!(warnings.is_empty(), "{fail_from}: {warnings:?}");
            assert_eq!(loaded.entries().len(), fail_from - 1, "{fail_from}");
        }
        // No request goes out for a prompt that was not recorded.
        let sent = llm.requests().len();
        assert_eq!(sent, usize::from(fail_from >= 5), "{fail_from}: {sent} requests");
    }
}

/// A long-lived session's per-request list stops growing; the totals still count and
/// price every request.
#[test]
fn the_per_request_list_is_bounded_and_the_totals_are_not() {
    let mut totals = Totals::default();
    let mut turns = Vec::new();
    let price = rab_ai::ModelCost { input: 1.0, ..rab_ai::ModelCost::default() };
    let usage = rab_ai::Usage { input: 1_000_000, ..rab_ai::Usage::default() };
    for _ in 0..5 * LISTED_REQUESTS + 3 {
        add_request(&mut totals, &mut turns, &usage, &price, false);
        assert!(turns.len() <= 2 * LISTED_REQUESTS);
    }
    assert_eq!(totals.turns as usize, 5 * LISTED_REQUESTS + 3);
    assert!(turns.len() >= LISTED_REQUESTS);
    assert!((totals.cost - (5 * LISTED_REQUESTS + 3) as f64).abs() < 1e-6, "{}", totals.cost);
}
