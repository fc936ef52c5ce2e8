//! `--output-compat claude`: print mode's JSON in Claude Code's schema. The keys checked
//! are those Claude Code's own SDKs read: `@anthropic-ai/claude-agent-sdk` 0.3.337
//! `sdk.d.ts` (`SDKSystemMessage`, `SDKAssistantMessage`, `SDKUserMessage`,
//! `SDKResultSuccess`/`SDKResultError`) and the Python `claude-agent-sdk` 0.2.190
//! message parser (the keys it indexes without a default), read 2026-12-07.

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stdout};

fn has(v: &Value, keys: &[&str]) {
    for key in keys {
        assert!(v.get(key).is_some(), "no {key} in {v}");
    }
}

const RESULT_KEYS: &[&str] = &[
    "type",
    "subtype",
    "is_error",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "session_id",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "uuid",
];

#[test]
fn stream_json_follows_claude_codes_messages() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("listed")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "stream-json", "--verbose", "--output-compat", "claude"])
        .arg("list")
        .output()
        .unwrap();
    let lines: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let init = &lines[0];
    assert_eq!((init["type"].as_str(), init["subtype"].as_str()), (Some("system"), Some("init")));
    has(
        init,
        &[
            "apiKeySource",
            "claude_code_version",
            "cwd",
            "tools",
            "mcp_servers",
            "model",
            "permissionMode",
            "slash_commands",
            "output_style",
            "skills",
            "plugins",
            "uuid",
            "session_id",
        ],
    );
    let session = init["session_id"].as_str().unwrap();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["system", "assistant", "user", "assistant", "result"]);
    let call = &lines[1];
    has(call, &["message", "parent_tool_use_id", "session_id", "uuid"]);
    assert!(call["message"]["model"].is_string());
    let block = &call["message"]["content"][0];
    assert_eq!((block["type"].as_str(), block["name"].as_str()), (Some("tool_use"), Some("ls")));
    let result_block = &lines[2]["message"]["content"][0];
    assert_eq!(result_block["type"], "tool_result");
    assert_eq!(result_block["tool_use_id"], block["id"]);
    assert_eq!(lines[3]["message"]["content"][0], json!({"type": "text", "text": "listed"}));
    assert_eq!(lines[3]["message"]["stop_reason"], "end_turn");
    let result = lines.last().unwrap();
    has(result, RESULT_KEYS);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "listed");
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["session_id"], session);
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
    for line in &lines[1..] {
        assert_eq!(line["session_id"], session, "{line}");
    }
    assert!(out.status.success());
}

#[test]
fn json_reports_a_stopped_run_as_claude_code_does() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::tool_call("ls", json!({}))]);
    let out = home
        .rab_for("openai-completions", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "--output-compat", "claude", "--max-turns", "1"])
        .arg("list")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one compact line: {text}");
    let result: Value = serde_json::from_str(text.trim()).unwrap();
    has(&result, RESULT_KEYS);
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert!(result.get("result").is_none(), "error results carry no result: {result}");
    assert!(result["errors"][0].as_str().unwrap().contains("turns"), "{result}");
    assert!(!out.status.success());
}

#[test]
fn a_bad_command_line_still_gets_a_claude_result() {
    let home = Home::new();
    let out = home
        .rab()
        .args(["-p", "--output-format", "json", "--output-compat", "claude", "--bogus", "q"])
        .output()
        .unwrap();
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    has(&result, RESULT_KEYS);
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    assert_eq!(out.status.code(), Some(2));
}

/// Claude Code's `-p --output-format json --verbose` prints every message it emitted and
/// the result as one JSON array (CLI 2.1.110, read 2026-12-07), not the result alone.
#[test]
fn json_with_verbose_is_every_message_then_the_result_in_one_array() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({})), Turn::text("listed")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "--verbose", "--output-compat", "claude"])
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::harness::stderr(&out));
    let all: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let lines = all.as_array().expect("an array");
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["system", "assistant", "user", "assistant", "result"]);
    assert_eq!(lines[0]["subtype"], "init");
    has(lines.last().unwrap(), RESULT_KEYS);
    assert_eq!(lines.last().unwrap()["result"], "listed");
}

/// `--include-partial-messages`: each reply also as the Messages API's stream events in
/// `stream_event` lines (`SDKPartialAssistantMessage`: `event`, `session_id`,
/// `parent_tool_use_id`, `uuid`), before the reply's `assistant` lines.
#[test]
fn partial_messages_stream_each_reply_as_the_messages_apis_events() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("ls", json!({"path": "."})).with_thinking("look first"),
        Turn::text("listed the files"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "stream-json", "--verbose", "--output-compat", "claude"])
        .args(["--include-partial-messages", "list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::harness::stderr(&out));
    let lines: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let session = lines[0]["session_id"].clone();
    let events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "stream_event").collect();
    for e in &events {
        has(e, &["event", "session_id", "parent_tool_use_id", "uuid"]);
        assert_eq!(e["session_id"], session);
    }
    let kinds: Vec<&str> = events.iter().map(|e| e["event"]["type"].as_str().unwrap()).collect();
    // Two replies, each opened and closed; the first has a thinking and a tool_use block.
    assert_eq!(kinds.iter().filter(|k| **k == "message_start").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "message_stop").count(), 2, "{kinds:?}");
    assert_eq!(kinds.first(), Some(&"message_start"));
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"]["type"] == "content_block_start")
        .map(|e| &e["event"]["content_block"])
        .collect();
    let block_kinds: Vec<&str> = starts.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(block_kinds, ["thinking", "tool_use", "text"]);
    assert_eq!(starts[1]["name"], "ls");
    let deltas = |kind: &str, field: &str| -> String {
        events
            .iter()
            .filter(|e| e["event"]["delta"]["type"] == kind)
            .map(|e| e["event"]["delta"][field].as_str().unwrap())
            .collect()
    };
    assert_eq!(deltas("thinking_delta", "thinking"), "look first");
    assert_eq!(deltas("text_delta", "text"), "listed the files");
    let args: Value = serde_json::from_str(&deltas("input_json_delta", "partial_json")).unwrap();
    assert_eq!(args, json!({"path": "."}));
    // Indexes count the reply's blocks from 0; each block is stopped.
    let first_reply_stops: Vec<u64> = events
        .iter()
        .take_while(|e| e["event"]["type"] != "message_stop")
        .filter(|e| e["event"]["type"] == "content_block_stop")
        .map(|e| e["event"]["index"].as_u64().unwrap())
        .collect();
    assert_eq!(first_reply_stops, [0, 1]);
    let stop = events.iter().find(|e| e["event"]["type"] == "message_delta").unwrap();
    assert_eq!(stop["event"]["delta"]["stop_reason"], "tool_use");
    // The whole messages still come, each after its reply's events.
    let order: Vec<&str> = lines
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "stream_event" if l["event"]["type"] == "message_stop" => "stop",
            "stream_event" => "",
            other => other,
        })
        .filter(|k| !k.is_empty())
        .collect();
    assert_eq!(
        order,
        ["system", "stop", "assistant", "assistant", "user", "stop", "assistant", "result"]
    );
}

#[test]
fn partial_messages_need_stream_json() {
    let home = Home::new();
    let out = home
        .rab()
        .args(["-p", "--output-format", "json", "--include-partial-messages", "q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(super::harness::stderr(&out).contains("--output-format stream-json"));
}

/// `permission_denials[]` names the refused call as Claude Code's result does:
/// `tool_use_id` is the call's id and `tool_input` its arguments.
#[test]
fn a_refused_call_is_listed_with_its_id_and_arguments() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "touch made"})),
        Turn::text("could not"),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "stream-json", "--output-compat", "claude", "make it"])
        .output()
        .unwrap();
    let lines: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let call = lines
        .iter()
        .find(|l| l["type"] == "assistant" && l["message"]["content"][0]["type"] == "tool_use")
        .expect("the call");
    let id = call["message"]["content"][0]["id"].as_str().unwrap();
    assert!(!id.is_empty());
    let result = lines.last().unwrap();
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "bash", "tool_use_id": id, "tool_input": {"command": "touch made"}}])
    );
    assert!(!home.dir.path().join("made").exists());
}

/// `modelUsage` has an entry per model the session used, which add up to `usage` and
/// `total_cost_usd` (a resumed session's earlier replies under their own model).
#[test]
fn model_usage_has_each_model_of_the_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("one")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["--model", "claude-sonnet-5-5", "-p", "first"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::harness::stderr(&out));
    llm.script([Turn::text("two")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["--model", "claude-haiku-5-5", "-c", "-p", "--output-format", "json"])
        .args(["--output-compat", "claude", "second"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::harness::stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let models = result["modelUsage"].as_object().unwrap();
    let mut names: Vec<&str> = models.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["claude-haiku-5-5", "claude-sonnet-5-5"], "{result}");
    let sum = |key: &str| models.values().map(|m| m[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("inputTokens"), result["usage"]["input_tokens"].as_u64().unwrap());
    assert_eq!(sum("outputTokens"), result["usage"]["output_tokens"].as_u64().unwrap());
    let cost: f64 = models.values().map(|m| m["costUSD"].as_f64().unwrap()).sum();
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!(total > 0.0 && (cost - total).abs() < 1e-9, "{cost} vs {total}");
    for m in models.values() {
        assert!(m["contextWindow"].as_u64().unwrap() > 0, "{m}");
        assert!(m["inputTokens"].as_u64().unwrap() > 0, "{m}");
    }
}

/// rab keeps the first 100 refusals for the result; the rest are not dropped silently:
/// the Claude result says how many were left out, rab's own counts them all, and
/// stderr says which is which.
#[test]
fn refusals_past_the_first_hundred_are_counted_not_dropped_silently() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut turn = Turn::tool_call("bash", json!({"command": "touch 0"}));
    for n in 1..130 {
        turn = turn.and_tool_call("bash", json!({"command": format!("touch {n}")}));
    }
    llm.script([turn.clone(), Turn::text("could not")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "--output-compat", "claude", "make them"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", super::harness::stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["permission_denials"].as_array().unwrap().len(), 100);
    assert_eq!(result["permission_denials_left_out"], 30, "{result}");
    let err = super::harness::stderr(&out);
    assert!(err.contains("130 tool calls were refused") && err.contains("first 100"), "{err}");
    llm.script([turn, Turn::text("could not")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "make them"])
        .output()
        .unwrap();
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["permissionDenials"].as_array().unwrap().len(), 100);
    assert_eq!(result["permissionDenialCount"], 130);
}
