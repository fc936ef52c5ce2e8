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

#[test]
fn two_parallel_sub_agents_that_together_pass_the_budget_stop_the_run() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    // Each sub-agent's reply costs dollars (a million output tokens) and streams slowly,
    // so both requests are under way before either is priced.
    let costly = || {
        let mut t = Turn::text("sub report").with_usage(ScriptedUsage {
            input: 1_000,
            output: 1_000_000,
            ..Default::default()
        });
        t.chunk_delay_ms = Some(150);
        t
    };
    llm.script([
        Turn::tool_call("task", json!({"description": "a", "prompt": "do a"}))
            .and_tool_call("task", json!({"description": "b", "prompt": "do b"}))
            .with_usage(ScriptedUsage { input: 1_000, output: 50, ..Default::default() }),
        costly(),
        costly(),
        Turn::text("never sent"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--yolo", "--max-budget-usd", "0.5", "--output-format", "json", "split"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 3, "the main agent's next request was not sent");
    let r = result(&out);
    assert_eq!(r["status"], "error_budget");
    assert_eq!(r["subAgents"]["requests"], 2, "{r}");
    let sub = r["subAgents"]["costUsd"].as_f64().unwrap();
    let total = r["costUsd"].as_f64().unwrap();
    assert!(sub > 1.0, "both sub-agents' costs are counted: {r}");
    assert!(total > sub, "the total holds the main agent's and the sub-agents' costs: {r}");
    assert_eq!(r["usage"]["output"], 2_000_050, "{r}");
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
