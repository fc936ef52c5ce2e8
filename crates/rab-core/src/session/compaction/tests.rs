use super::*;
use pretty_assertions::assert_eq;
use rab_ai::{Api, AssistantMessage, Client, RetryPolicy, ToolCall, ToolResultMessage};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

fn user(t: &str) -> Message {
    Message::user(t)
}

fn assistant_call(id: &str) -> Message {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "m");
    a.content.push(AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    }));
    Message::Assistant(a)
}

fn result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![Content::text(text)],
        is_error: false,
    })
}

fn long_history() -> Vec<Message> {
    let mut m = Vec::new();
    for i in 0..6 {
        m.push(user(&format!("task {i}: {}", "words ".repeat(200))));
        m.push(assistant_call(&format!("c{i}")));
        m.push(result(&format!("c{i}"), &"output line\n".repeat(100)));
    }
    m
}

#[test]
fn the_cut_never_starts_the_kept_part_with_a_tool_result() {
    let m = long_history();
    for keep in [1, 50, 300, 600, 1200, 2000] {
        if let Some(cut) = cut_point(&m, keep) {
            assert!(cut > 0 && cut < m.len(), "keep {keep}: cut {cut}");
            assert!(!matches!(m[cut], Message::ToolResult(_)), "keep {keep}: cut at a result");
        }
    }
    assert_eq!(cut_point(&m[..1], 10), None, "one message: nothing to summarise");
}

#[test]
fn a_previous_summary_alone_is_not_compacted_again() {
    let m = vec![Message::summary("earlier"), user("now")];
    assert_eq!(cut_point(&m, 1), None);
}

/// One prompt and its many tool rounds (a long turn): the cut falls inside it, at a
/// call, whether `keep` is reached or the whole conversation is smaller than `keep`.
#[test]
fn a_long_single_turn_is_cut_inside_at_a_call() {
    let mut m = vec![Message::summary("earlier work"), user("read everything")];
    for i in 0..20 {
        m.push(assistant_call(&format!("c{i}")));
        m.push(result(&format!("c{i}"), &"output line\n".repeat(50)));
    }
    let cut = cut_point(&m, 1000).expect("a cut inside the turn");
    assert!(cut > 2 && matches!(m[cut], Message::Assistant(_)), "cut {cut}");
    assert_eq!(cut_point(&m, 1_000_000), None, "keep more than all: the latest turn is all");
    let cut = newer_half(&m).expect("the newer half");
    assert!(matches!(m[cut], Message::Assistant(_)), "cut {cut}");
    assert!((18..=24).contains(&cut), "about half: {cut}");
}

#[test]
fn transcript_always_keeps_a_leading_summary() {
    let mut m = vec![Message::summary("GOAL: migrate the parser")];
    m.extend(long_history());
    let t = transcript(&m, 3000);
    assert!(t.contains("GOAL: migrate the parser"), "{t}");
    assert!(t.contains("earlier messages omitted") && t.contains("task 5"));
}

#[test]
fn transcript_keeps_the_newest_part_within_the_budget() {
    let m = long_history();
    let t = transcript(&m, 3000);
    assert!(t.len() < 6000, "{}", t.len());
    assert!(t.starts_with('['), "notes what was omitted");
    assert!(t.contains("task 5"), "the newest part is kept");
    let full = transcript(&m, usize::MAX);
    assert!(full.contains("USER:\ntask 0") && full.contains("[tool call read"));
}

#[test]
fn the_sliding_window_drops_old_messages_with_a_notice() {
    let m = long_history();
    let done = sliding_window(&m, 6, "test");
    assert!(done.is_fallback);
    assert_eq!(done.messages.len(), m.len() - 6 + 1);
    assert!(done.messages[0].is_summary());
    assert!(done.tokens_after < done.tokens_before);
}

fn model(llm: &FakeLlm, window: u64) -> Model {
    let mut m = Model::custom("test-model", "anthropic", Api::AnthropicMessages, &llm.url());
    m.context_window = window;
    m
}

fn settings() -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 300,
        ..CompactionSettings::default()
    }
}

#[tokio::test]
async fn summarises_the_old_part_and_keeps_the_tail() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("## Goal\nFix things.")]);
    let c = ModelCompactor::new(Arc::new(Client::new()), settings());
    let m = long_history();
    let model = model(&llm, 1000);
    assert!(c.needs_compaction(&m, &model).is_some());
    let opts = StreamOptions {
        api_key: Some("k".into()),
        retry: RetryPolicy::none(),
        ..Default::default()
    };
    let done = c
        .compact(&m, &model, &opts, CompactReason::Threshold, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.summary, "## Goal\nFix things.");
    assert_eq!(done.messages[1..], m[done.first_kept..]);
    let sent = llm.requests()[0].last_user_text().unwrap();
    assert!(
        sent.contains("task 4") && sent.contains("task 5") && sent.contains("## Open tasks"),
        "the cut-off part is summarised: {sent}"
    );
    assert!(
        sent.contains("earlier messages omitted"),
        "the oldest part did not fit the summary request's budget, and it says so"
    );
    assert!(!sent.contains("output line\noutput line\n".repeat(60).as_str()), "the kept result");
}

#[tokio::test]
async fn three_failures_turn_automatic_compaction_off() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("x")
        .after_fault(500, None)
        .after_fault(500, None)
        .after_fault(500, None)]);
    let c = ModelCompactor::new(Arc::new(Client::new()), settings());
    let m = long_history();
    let model = model(&llm, 1000);
    let opts = StreamOptions {
        api_key: Some("k".into()),
        retry: RetryPolicy::none(),
        ..Default::default()
    };
    let cancel = CancellationToken::new();
    let mut errors = Vec::new();
    for _ in 0..3 {
        errors.push(
            c.compact(&m, &model, &opts, CompactReason::Threshold, &cancel).await.unwrap_err(),
        );
    }
    assert_eq!(errors.iter().map(|e| e.is_disabled).collect::<Vec<_>>(), [false, false, true]);
    assert!(
        errors[2].message.contains("automatic compaction is off after 3 failures"),
        "{}",
        errors[2].message
    );
    assert!(!c.is_auto());
    assert_eq!(c.needs_compaction(&m, &model), None);
}

#[test]
fn issue_35_compaction_keeps_a_request_under_the_input_limit_not_only_the_window() {
    // GPT-6.1 Sol: a 1,050,000-token window but at most 922,000 input tokens. A
    // conversation of ~950,000 tokens fits the window yet gets a 400: compact first.
    let sol = rab_ai::Registry::builtin()
        .resolve(&rab_ai::ModelQuery { model: Some("gpt-6.1-sol"), ..Default::default() })
        .unwrap()
        .model;
    assert_eq!((sol.context_window, sol.input_limit()), (1_050_000, 922_000));
    let c = ModelCompactor::new(
        Arc::new(Client::new()),
        CompactionSettings { enabled: true, ..CompactionSettings::default() },
    );
    let big = vec![user(&"abcd".repeat(950_000))];
    let tokens = estimate_context_tokens(&big);
    assert!(tokens > 922_000 && tokens < 1_000_000, "{tokens}");
    assert_eq!(c.needs_compaction(&big, &sol), Some(tokens));
    // A model without a separate limit still goes by its window.
    let mut open = sol.clone();
    open.max_input = None;
    assert_eq!(c.needs_compaction(&big, &open), None);
}
