//! One budget for every agent of a run, and headless results that say what was refused.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, ScriptedUsage, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stderr, stdout};

fn project(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn result(out: &std::process::Output) -> Value {
    let text = stdout(out);
    serde_json::from_str(text.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(out)))
}

/// The first turn starts `n` sub-agents at once; each sub-agent's reply bills 2,000
/// input and 20,000 output tokens (less when its request allows less, as providers do)
/// and streams slowly, so all are under way together.
fn parallel_sub_agents(llm: &FakeLlm, n: usize) {
    let mut first = Turn::text("splitting");
    for i in 0..n {
        first = first.and_tool_call("task", json!({"description": i.to_string(), "prompt": "go"}));
    }
    let mut turns =
        vec![first.with_usage(ScriptedUsage { input: 1_000, output: 50, ..Default::default() })];
    for _ in 0..n {
        let mut t = Turn::text("sub report").with_usage(ScriptedUsage {
            input: 2_000,
            output: 20_000,
            ..Default::default()
        });
        t.chunk_delay_ms = Some(100);
        turns.push(t);
    }
    turns.push(Turn::text("never sent"));
    llm.script(turns);
}

#[test]
fn issue_34_sixteen_parallel_sub_agents_stay_within_the_budget() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    parallel_sub_agents(&llm, 16);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--yolo", "--max-budget-usd", "0.30", "--output-format", "json", "split"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let r = result(&out);
    assert_eq!(r["status"], "error_budget");
    let total = r["costUsd"].as_f64().unwrap();
    // Each request reserved its worst case: together they cannot pass the cap (the
    // input is estimated before it is sent; the slack allows for that estimate).
    assert!(total <= 0.30 + 0.01, "spent ${total}: {r}");
    let sub = r["subAgents"]["costUsd"].as_f64().unwrap();
    assert!(sub > 0.0 && total > sub, "both kinds are counted: {r}");
    // Every request sent had its output limit cut to what the budget left.
    for req in llm.requests() {
        let max = req.body["max_tokens"].as_u64().unwrap();
        assert!((4_096..32_000).contains(&max), "max_tokens {max}");
    }
    assert!(llm.requests().len() < 17, "the sub-agents that did not fit sent nothing");
    assert!(stderr(&out).contains("budget"), "{}", stderr(&out));
}

#[test]
fn the_first_estimate_counts_the_system_prompt_and_the_tool_schemas() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([Turn::text("hi")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--max-budget-usd", "0.00001", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(llm.requests().is_empty(), "a request of thousands of tokens is not sent");
}

#[test]
fn a_budget_for_a_model_without_prices_is_refused_at_start() {
    let home = Home::new();
    let dir = project(&home);
    let out = home
        .rab()
        .current_dir(&dir)
        .args(["-p", "--provider", "ollama", "--model", "qwen9", "--max-budget-usd", "1", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("needs the model's prices") && err.contains("ollama/qwen9"), "{err}");
    assert!(err.contains("models.json"), "{err}");
}

#[test]
fn a_run_with_refused_calls_lists_them_and_exits_5() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "rm -rf build"}))
            .and_tool_call("write", json!({"path": "x.txt", "content": "x"})),
        Turn::text("could not"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--output-format", "json", "--disallowed-tools", "bash(rm *)", "clean"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let r = result(&out);
    assert_eq!(r["status"], "success_with_denials");
    assert_eq!(r["exitCode"], 5);
    assert_eq!(r["permissionDenialCount"], 2);
    let denials = r["permissionDenials"].as_array().unwrap();
    assert_eq!(denials[0]["tool"], "bash");
    assert_eq!(denials[0]["input"], "rm -rf build");
    assert!(denials[0]["reason"].as_str().unwrap().contains("bash(rm *)"), "{r}");
    assert_eq!(denials[1]["tool"], "write");
    assert_eq!(denials[1]["input"], "x.txt");
    assert!(denials[1]["reason"].as_str().unwrap().contains("headless"), "{r}");
    assert!(stderr(&out).contains("2 tool calls were refused"), "{}", stderr(&out));
    // A run without refusals is a plain success.
    llm.script([Turn::text("fine")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--output-format", "json", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = result(&out);
    assert_eq!(
        (r["status"].as_str(), r["permissionDenialCount"].as_u64()),
        (Some("success"), Some(0))
    );
}

/// A reply that bills 1,000 input and 20,000 output tokens.
fn costly() -> Turn {
    Turn::text("a long answer").with_usage(ScriptedUsage {
        input: 1_000,
        output: 20_000,
        ..Default::default()
    })
}

/// What one [`costly`] reply costs the default Anthropic model, measured in a home of
/// its own (so the tests do not hard-code the catalog's prices).
fn cost_of_one_reply() -> f64 {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([costly()]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--output-format", "json", "one"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    result(&out)["costUsd"].as_f64().unwrap()
}

/// What was found: a resumed session's `/cost` and footer started at $0, and so did its
/// budget. The spent total belongs to the session: with a limit just above what the
/// first run spent, the resumed run cannot send a request whose output would pass it
/// (it could if the session counted from $0), and `/cost` still shows the first request.
#[test]
fn issue_53_a_resumed_session_keeps_its_spent_total_and_budget() {
    let one = cost_of_one_reply();
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([costly(), costly()]);
    let run = |args: &[&str]| {
        home.rab_for("anthropic-messages", &llm, Some("k"))
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap()
    };
    let first = run(&["-p", "--output-format", "json", "one"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let limit = format!("{:.4}", one + 0.001);
    let second = run(&["-c", "-p", "--max-budget-usd", &limit, "--output-format", "json", "two"]);
    assert_eq!(second.status.code(), Some(4), "{}\n{}", stdout(&second), stderr(&second));
    assert_eq!(result(&second)["status"], "error_budget");
    assert_eq!(llm.requests().len(), 1, "the resumed run sent nothing");
    let cost = run(&["-c", "-p", "/cost"]);
    let text = stdout(&cost);
    assert!(text.contains(&format!("${one:.4} over 1 requests")), "{text}");
}

/// What was found: `/reload` (also run when `/settings` closes) reset the spent total,
/// so a run the budget had refused went ahead after it.
#[test]
fn issue_53_a_reload_keeps_the_spent_total_and_budget() {
    let one = cost_of_one_reply();
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([costly(), costly()]);
    let limit = format!("{:.4}", one + 0.001);
    let mut rpc = super::harness::Rpc::start_in(&home, &llm, &dir, &["--max-budget-usd", &limit]);
    rpc.send(r#"{"type": "prompt", "message": "one"}"#);
    rpc.event("agent_end");
    rpc.send(r#"{"type": "prompt", "message": "/reload"}"#);
    assert_eq!(rpc.response("prompt")["success"], true);
    rpc.send(r#"{"type": "prompt", "message": "two"}"#);
    rpc.event("agent_end");
    assert_eq!(llm.requests().len(), 1, "the budget still holds after the reload");
    rpc.send(r#"{"type": "get_session_stats"}"#);
    let stats = rpc.response("get_session_stats");
    let cost = stats["data"]["cost"].as_f64().unwrap_or(-1.0);
    assert!((cost - one).abs() < 1e-6, "{stats}");
    rpc.end();
}
