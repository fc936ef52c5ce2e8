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
