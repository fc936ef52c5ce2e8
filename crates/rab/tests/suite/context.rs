//! Context management end to end: compaction (threshold, overflow, circuit breaker),
//! the spending cap, prompt-cache prefixes, branching and handoff.

use std::process::Output;

use rab_fake_llm::{FakeLlm, Item, ScriptedUsage, Turn};
use rab_session::{EntryBody, Tape};
use serde_json::json;

use super::harness::{Home, stderr, stdout, with_stdin};

/// A small-window model served by the fake (Anthropic wire), and tight compaction
/// settings, so a few turns cross the threshold.
fn small_model(home: &Home, llm: &FakeLlm, settings: serde_json::Value) {
    let dir = home.dir.path().join("rab");
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let models = json!({"providers": {"small": {
        "baseUrl": llm.url(), "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "tiny", "contextWindow": 2000, "maxTokens": 500,
                    "cost": {"input": 1000, "output": 1000, "cacheRead": 100, "cacheWrite": 0}}]}}});
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    std::fs::write(dir.join("agent/settings.json"), settings.to_string()).unwrap();
}

fn tight() -> serde_json::Value {
    json!({"compaction": {"reserveTokens": 200, "keepRecentTokens": 300}, "retry": {"maxRetries": 0}})
}

fn usage(input: u64) -> ScriptedUsage {
    ScriptedUsage { input, output: 10, ..Default::default() }
}

fn rab(home: &Home, args: &[&str]) -> Output {
    home.rab().args(["--model", "small/tiny"]).args(args).output().unwrap()
}

fn repl(home: &Home, input: &str) -> Output {
    let mut cmd = home.rab();
    cmd.args(["--model", "small/tiny", "--repl"]);
    with_stdin(cmd, input)
}

fn tape_of(home: &Home) -> Tape {
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()).collect();
    files.sort();
    Tape::open(files.last().unwrap()).unwrap().0
}

#[test]
fn crossing_the_threshold_summarises_the_old_part_and_sends_summary_and_tail() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    // ~1,900 characters of output: more than keepRecentTokens (300) on its own, so the
    // cut falls on the tool result and must move back to the call that produced it.
    let big = json!({"command": "seq 1000 1380"});
    llm.script([
        Turn::text("done one").with_usage(usage(1000)),
        Turn::text("done two").with_usage(usage(1200)),
        Turn::tool_call("bash", big).with_usage(usage(1400)),
        Turn::text("## Goal\nThe user works through three tasks."),
        Turn::text("done three"),
        Turn::text("done four"),
    ]);
    assert_eq!(stdout(&rab(&home, &["-p", "first task: rename the parser"])), "done one\n");
    assert_eq!(stdout(&rab(&home, &["-c", "-p", "second task: add tests"])), "done two\n");
    let out = rab(&home, &["-c", "-p", "--yolo", "third task: count"]);
    assert_eq!(stdout(&out), "done three\n", "{}", stderr(&out));
    let err = stderr(&out);
    let notice = err.find("compacting the conversation").expect("a notice before it runs");
    assert!(err[notice..].contains("compacted (summarised)"), "{err}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 5);
    // The summary request holds the cut-off part, and nothing of the kept tail.
    let summary_request = reqs[3].last_user_text().unwrap();
    for cut_off in
        ["first task: rename the parser", "done one", "second task: add tests", "third task: count"]
    {
        assert!(summary_request.contains(cut_off), "{cut_off} in {summary_request}");
    }
    assert!(!summary_request.contains("1380"), "the kept tool result is not summarised");
    // The next request: the summary, then the tool call and its result, whole (the fake
    // server answers 400 to an orphan call or result).
    let next = reqs[4].transcript().items;
    assert_eq!(next.len(), 3, "summary + the kept tail: {next:?}");
    assert!(
        matches!(&next[0], Item::User(t) if t.contains("conversation_summary") && t.contains("three tasks"))
    );
    assert!(matches!(&next[1], Item::Assistant { calls, .. } if calls.len() == 1));
    assert!(matches!(&next[2], Item::ToolResult { text, .. } if text.contains("1380")));
    assert_eq!(reqs[4].status, 200);
    let tape = tape_of(&home);
    let (summary, first_kept, before, after) = tape
        .entries()
        .into_iter()
        .find_map(|e| match &e.body {
            EntryBody::Compaction { summary, first_kept_entry_id, tokens_before, tokens_after } => {
                Some((summary.clone(), first_kept_entry_id.clone(), *tokens_before, *tokens_after))
            }
            _ => None,
        })
        .expect("a compaction entry");
    assert!(summary.contains("three tasks"));
    assert!(before > 1800 && after < before, "{before} -> {after}");
    let kept = tape.entry(&first_kept).unwrap();
    assert!(
        matches!(kept.message(), Some(rab_ai::Message::Assistant(_))),
        "the call starts the tail"
    );
    assert_eq!(tape.messages().len(), 4, "summary, call, result, answer");
    assert_eq!(
        tape.entries().iter().filter(|e| e.message().is_some()).count(),
        8,
        "what was summarised stays in the tape"
    );
    // Continuing the session later starts from the summary and the kept tail.
    let out = rab(&home, &["-c", "-p", "fourth task"]);
    assert_eq!(stdout(&out), "done four\n", "{}", stderr(&out));
    assert!(!stderr(&out).contains("compacting"), "{}", stderr(&out));
    let items = llm.requests()[5].transcript().items;
    assert_eq!(items.len(), 5, "summary, call, result, answer, new prompt: {items:?}");
    assert!(matches!(&items[0], Item::User(t) if t.contains("three tasks")));
}

#[test]
fn a_context_overflow_error_compacts_and_retries_once() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    let mut overflow = Turn::text("## Goal\nSummary of the first exchange.");
    overflow.faults.push(rab_fake_llm::HttpFault {
        status: 400,
        retry_after: None,
        message: Some("prompt is too long: 250000 tokens > 200000 maximum".into()),
        ..Default::default()
    });
    llm.script([Turn::text("first answer"), overflow, Turn::text("answer after the retry")]);
    assert_eq!(stdout(&rab(&home, &["-p", "first question"])), "first answer\n");
    let out = rab(&home, &["-c", "-p", "second question"]);
    assert_eq!(stdout(&out), "answer after the retry\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4, "request, overflow, summary, retry");
    assert_eq!(reqs[1].status, 400);
    let retry = reqs[3].transcript().items;
    assert_eq!(retry.len(), 2, "{retry:?}");
}

#[test]
fn when_summarising_fails_on_overflow_older_messages_are_dropped_with_a_notice() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    let mut second = Turn::text("answer after dropping");
    second.faults.push(rab_fake_llm::HttpFault {
        status: 400,
        retry_after: None,
        message: Some("prompt is too long: 250000 tokens > 200000 maximum".into()),
        ..Default::default()
    });
    let second = second.after_fault(500, None); // the summary request fails
    llm.script([Turn::text("first answer"), second]);
    assert_eq!(stdout(&rab(&home, &["-p", "first question"])), "first answer\n");
    let out = rab(&home, &["-c", "-p", "second question"]);
    assert_eq!(stdout(&out), "answer after dropping\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("compacted (dropped older messages)"), "{}", stderr(&out));
    let reqs = llm.requests();
    assert_eq!(reqs.iter().map(|r| r.status).collect::<Vec<_>>(), [200, 400, 500, 200]);
    let retry = reqs[3].transcript().items;
    assert_eq!(retry.len(), 2, "notice + the kept question: {retry:?}");
    assert!(
        matches!(&retry[0], Item::User(t) if t.contains("2 earlier messages were dropped")),
        "{retry:?}"
    );
    assert!(matches!(&retry[1], Item::User(t) if t == "second question"));
    // The dropped messages are still in the file, and the fallback is recorded.
    let tape = tape_of(&home);
    assert_eq!(tape.entries().iter().filter(|e| e.message().is_some()).count(), 4);
    assert!(tape.entries().iter().any(|e| matches!(&e.body,
        EntryBody::Compaction { summary, .. } if summary.contains("dropped"))));
}

#[test]
fn openai_requests_keep_one_cache_key_and_a_byte_stable_prefix() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("ok")]);
    let out = home
        .rab_for("openai-responses", &llm, Some("k"))
        .args(["-p", "--yolo", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let bodies: Vec<serde_json::Value> =
        llm.requests().iter().map(|r| serde_json::from_slice(&r.raw).unwrap()).collect();
    let session_id = tape_of(&home).id().to_owned();
    for body in &bodies {
        assert_eq!(body["prompt_cache_key"], session_id.as_str());
    }
    for key in ["instructions", "tools", "model"] {
        assert_eq!(bodies[0][key], bodies[1][key], "{key} is the same on every turn");
    }
    let (first, second) = (&bodies[0]["input"], &bodies[1]["input"]);
    let n = first.as_array().unwrap().len();
    assert_eq!(first.as_array().unwrap()[..], second.as_array().unwrap()[..n]);
}

#[test]
fn three_failed_summaries_turn_automatic_compaction_off_with_a_message() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    let big = json!({"command": "seq 1 2000"});
    llm.script([
        Turn::tool_call("bash", big.clone()).with_usage(usage(1900)),
        Turn::tool_call("bash", big.clone()).with_usage(usage(1900)).after_fault(500, None),
        Turn::tool_call("bash", big).with_usage(usage(1900)).after_fault(500, None),
        Turn::text("finished anyway").after_fault(500, None),
    ]);
    let out = rab(&home, &["-p", "--yolo", "count a lot"]);
    assert_eq!(stdout(&out), "finished anyway\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("compaction failed").count(), 3, "{err}");
    assert!(err.contains("automatic compaction is off after 3 failures"), "{err}");
}

#[test]
fn the_budget_stops_before_the_request_that_would_cross_it() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    // The first estimate (system prompt, tool schemas, 500 tokens of output: about $3 at
    // $1000 per million) fits; after a $6 reply, the second does not.
    llm.script([Turn::tool_call("ls", json!({})).with_usage(usage(6000)), Turn::text("never")]);
    let out =
        rab(&home, &["-p", "--yolo", "--max-budget-usd", "8", "--output-format", "json", "go"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("budget"), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 1, "the second request was not sent");
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["status"], "error_budget");
    assert!(v["costUsd"].as_f64().unwrap() > 1.0);
    assert_eq!(v["perTurn"].as_array().unwrap().len(), 1);
}

#[test]
fn consecutive_anthropic_requests_share_a_byte_identical_prefix() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("ls", json!({})),
        Turn::tool_call("ls", json!({"path": "."})),
        Turn::tool_call("glob", json!({"pattern": "*"})),
        Turn::text("ok"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "list a few times"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let bodies: Vec<Vec<u8>> = llm.requests().iter().map(|r| r.raw.clone()).collect();
    assert_eq!(bodies.len(), 4);
    const MARK: &[u8] = b",\"cache_control\":{\"type\":\"ephemeral\"}";
    for (n, pair) in bodies.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        // Tools, system prompt and every message of turn N come first in turn N+1,
        // unchanged but for where the moving breakpoints sit.
        let (a_plain, b_plain) = (strip(a, MARK), strip(b, MARK));
        let common = a_plain.iter().zip(&b_plain).take_while(|(x, y)| x == y).count();
        assert!(a_plain.ends_with(b"]}"), "messages are the last field");
        assert_eq!(
            common,
            a_plain.len() - 2,
            "turn {} repeats turn {} through its last message",
            n + 2,
            n + 1
        );
        // Breakpoints: the system prompt (which caches the tools before it), the last
        // message, and (from turn 2 on) the message that was last in turn N, so that
        // turn N+1 reads turn N's cache entry exactly. Anthropic leaves the markers out
        // of the cache key, so moving them does not break the prefix.
        let (in_a, in_b) = (marks(a, MARK), marks(b, MARK));
        assert_eq!(in_a.len(), if n == 0 { 2 } else { 3 }, "{}", String::from_utf8_lossy(a));
        assert_eq!(in_b.len(), 3, "{}", String::from_utf8_lossy(b));
        let messages_at = |plain: &[u8]| find_all(plain, b"\"messages\":")[0];
        assert!(in_a[0] < messages_at(&a_plain) && in_b[0] < messages_at(&b_plain));
        assert!(in_a[1..].iter().all(|&m| m > messages_at(&a_plain)));
        let last_of_a = *in_a.last().unwrap();
        // On the last block of the last turn: a system message after it (the first
        // request's list of deferred tools) takes no marker.
        let last_start = find_all(&a_plain, b"{\"role\":\"").last().copied().unwrap();
        let turn_end = if a_plain[last_start..].starts_with(b"{\"role\":\"system\"") {
            last_start - 4
        } else {
            a_plain.len() - 5
        };
        assert_eq!(last_of_a, turn_end, "on the last block of the last turn");
        assert!(in_b.contains(&last_of_a), "turn N+1 marks where turn N's prefix ends");
    }
}

/// Where `mark` occurs in `body`, as offsets into `body` with every `mark` removed.
fn marks(body: &[u8], mark: &[u8]) -> Vec<usize> {
    find_all(body, mark).iter().enumerate().map(|(k, &at)| at - k * mark.len()).collect()
}

fn strip(body: &[u8], mark: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(mark) {
            i += mark.len();
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    out
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    (0..hay.len().saturating_sub(needle.len() - 1))
        .filter(|&i| hay[i..].starts_with(needle))
        .collect()
}

#[test]
fn tree_branch_and_continue_sends_only_the_new_branch() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, json!({}));
    llm.script([
        Turn::text("answer one"),
        Turn::text("answer two"),
        Turn::text("answer on the new branch"),
    ]);
    let out = repl(&home, "first message\nsecond message\n/tree\n/tree 2\nalternative second\n");
    let text = stdout(&out);
    assert!(text.contains("  1. first message") && text.contains("  2. second message"), "{text}");
    assert!(text.contains("Continuing on a new branch ("), "{text}\n{}", stderr(&out));
    assert_eq!(llm.requests()[2].user_texts(), ["first message", "alternative second"]);
    let tape = tape_of(&home);
    assert_eq!(
        tape.entries().iter().filter(|e| e.message().is_some()).count(),
        6,
        "both branches stay in the file"
    );
}

#[test]
fn handoff_continues_in_a_new_session_linked_both_ways() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, json!({}));
    llm.script([
        Turn::text("did the task"),
        Turn::text("## Goal\nHandoff summary."),
        Turn::text("fresh answer"),
    ]);
    let out = repl(&home, "do the task\n/handoff keep the API notes\nnext step\n");
    let text = stdout(&out);
    assert!(text.contains("Handed off to"), "{text}\n{}", stderr(&out));
    let summary_req = llm.requests()[1].last_user_text().unwrap();
    assert!(summary_req.contains("do the task") && summary_req.contains("keep the API notes"));
    let fresh = llm.requests()[2].transcript().items;
    assert_eq!(fresh.len(), 2, "summary + next step: {fresh:?}");
    let sessions = home.dir.path().join("rab/sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let (old, _) = Tape::open(&files[0]).unwrap();
    let (new, _) = Tape::open(&files[1]).unwrap();
    assert_eq!(
        new.header().parent_session.as_deref(),
        Some(files[0].display().to_string().as_str())
    );
    let link = old.entries().into_iter().find_map(|e| match &e.body {
        EntryBody::Custom { custom_type, data } if custom_type == "handoff" => {
            data["to"].as_str().map(str::to_owned)
        }
        _ => None,
    });
    assert_eq!(link.as_deref(), Some(files[1].display().to_string().as_str()));
}

#[test]
fn a_budget_that_is_not_a_dollar_amount_is_a_usage_error() {
    let home = Home::new();
    let llm = FakeLlm::start();
    small_model(&home, &llm, tight());
    for bad in ["-1", "NaN", "inf", "lots"] {
        let out = rab(&home, &["-p", &format!("--max-budget-usd={bad}"), "go"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("max-budget-usd"), "{bad}: {}", stderr(&out));
    }
    assert!(llm.requests().is_empty());
}

/// A local model with a 12k window and default settings works through one long prompt
/// of many tool calls: compaction cuts inside the turn (there is no earlier turn to
/// cut at) and keeps only as much of the tail as such a window has room for, so no
/// request is refused and automatic compaction never gives up.
#[test]
fn a_12k_window_works_through_a_long_turn_with_default_settings() {
    let home = Home::new();
    let llm = FakeLlm::start();
    local_12k(&home, &llm);
    for i in 0..6 {
        let line = format!("file {i}: the value of entry {{}} is {{}} and it is fine\n");
        let text: String = (0..(50 + i * 10)).map(|n| line.replace("{}", &n.to_string())).collect();
        std::fs::write(home.dir.path().join(format!("f{i}.txt")), text).unwrap();
    }
    llm.limit_context(12_000);
    llm.measure_input();
    llm.summarise_with("## Goal\nCheck every file.\n## Open tasks\nKeep reading.");
    let calls = 40;
    llm.script(
        (0..calls).map(|i| Turn::tool_call("read", json!({"path": format!("f{}.txt", i % 6)}))),
    );
    llm.script([Turn::text("all files checked")]);
    let out = home
        .rab()
        .args(["--model", "local/small-12k", "-p", "--yolo", "read every file, many times"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(stdout(&out), "all files checked\n", "{err}");
    assert!(!err.contains("nothing to compact"), "{err}");
    assert!(!err.contains("compaction is off"), "{err}");
    let reqs = llm.requests();
    let refused: Vec<_> =
        reqs.iter().filter(|r| r.status != 200).map(|r| r.raw.len() / 4).collect();
    assert!(refused.is_empty(), "requests over the window (tokens): {refused:?}\n{err}");
    let summaries =
        reqs.iter().filter(|r| r.body["tools"].as_array().is_none_or(Vec::is_empty)).count();
    assert!(summaries >= 2, "{summaries} compactions\n{err}");
    let tape = tape_of(&home);
    let compactions =
        tape.entries().iter().filter(|e| matches!(e.body, EntryBody::Compaction { .. })).count();
    assert_eq!(compactions, summaries);
    let largest = reqs.iter().map(|r| r.raw.len() / 4).max().unwrap_or(0);
    eprintln!("{} requests, {summaries} compactions, largest ~{largest} tokens", reqs.len());
}

/// A local model with a 12k window, served by `llm`, which refuses requests larger
/// than the window; default settings.
fn local_12k(home: &Home, llm: &FakeLlm) {
    let dir = home.dir.path().join("rab");
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let models = json!({"providers": {"local": {
        "baseUrl": llm.url(), "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "small-12k", "contextWindow": 12000, "maxTokens": 2048}]}}});
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    llm.limit_context(12_000);
    llm.measure_input();
}

/// A tool result larger than a small window could hold (`read` gives up to 50 KB, the
/// whole 12k window is ~48 KB) is cut to a quarter of the window, keeping its head and
/// end, so the next request fits.
#[test]
fn a_tool_result_larger_than_a_small_window_is_cut_to_fit() {
    let home = Home::new();
    let llm = FakeLlm::start();
    local_12k(&home, &llm);
    let text: String =
        (0..1000).map(|n| format!("line {n:04} of a long generated file here\n")).collect();
    std::fs::write(home.dir.path().join("big.txt"), &text).unwrap();
    llm.script([Turn::tool_call("read", json!({"path": "big.txt"})), Turn::text("read it")]);
    let out = home
        .rab()
        .args(["--model", "local/small-12k", "-p", "--yolo", "read big.txt"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "read it\n", "{}", stderr(&out));
    let reqs = llm.requests();
    assert!(reqs.iter().all(|r| r.status == 200));
    let results = reqs[1].tool_results();
    let (_, seen) = &results[0];
    assert!(seen.len() < 13_000, "{}", seen.len());
    assert!(seen.contains("line 0000") && seen.contains("line 0999"), "head and end kept");
    assert!(seen.contains("cut here to fit the model's 12000-token context window"), "{seen}");
}
