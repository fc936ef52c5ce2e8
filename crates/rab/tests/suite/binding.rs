//! A session with thinking on, through everything that used to rewrite what the model
//! saw before (tools arriving, a deferred tool expanded, a resume on a later day,
//! compaction), against the fake server binding each thinking block to its prefix as
//! Anthropic's API does: every request is accepted, nothing is dropped, and the
//! thinking that could stay did.

use std::process::Output;

use rab_fake_llm::{FakeLlm, RecordedRequest, ScriptedUsage, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stderr, stdout};

/// `claude/claude-sonnet-5-5`: the real model's wire behaviour, with a window small
/// enough to compact on a scripted usage report.
fn setup(home: &Home, llm: &FakeLlm) {
    let dir = home.dir.path().join("rab");
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let compat = json!({"thinking": "anthropic-adaptive",
                        "efforts": ["between_tools", "low", "medium", "high", "xhigh", "max"],
                        "systemMessages": true, "toolChanges": true,
                        "preservedThinking": true});
    let models = json!({"providers": {"claude": {
        "baseUrl": llm.url(), "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "claude-sonnet-5-5", "reasoning": true, "contextWindow": 200000,
                    "maxTokens": 8000, "compat": compat}]}}});
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    let settings = json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 2000},
                          "retry": {"maxRetries": 0}});
    std::fs::write(dir.join("agent/settings.json"), settings.to_string()).unwrap();
    let mcp = json!({"mcpServers": {"test": {
        "command": rab_mcp::test_support::test_server_path(), "env": {}}}});
    std::fs::create_dir_all(home.dir.path().join(".rab")).unwrap();
    std::fs::write(home.dir.path().join(".rab/mcp.json"), mcp.to_string()).unwrap();
}

fn rab(home: &Home, today: &str, args: &[&str]) -> Output {
    home.rab()
        .env("RAB_TODAY", today)
        .args(["--model", "claude/claude-sonnet-5-5", "--thinking", "high", "--yolo", "-p"])
        .args(args)
        .output()
        .unwrap()
}

fn blocks<'a>(req: &'a RecordedRequest, kind: &str) -> Vec<&'a Value> {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == kind)
        .collect()
}

fn system_messages(req: &RecordedRequest) -> Vec<&Value> {
    req.body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "system").collect()
}

fn thought(n: u32) -> String {
    format!("Step {n}: decide what to do next.")
}

#[test]
fn issue_13_a_thinking_session_stays_bound_through_tools_search_resume_and_compaction() {
    let home = Home::new();
    let llm = FakeLlm::start();
    setup(&home, &llm);
    let small = |input| ScriptedUsage { input, output: 20, ..Default::default() };
    llm.script([
        // 1: an MCP call that makes the server offer a new tool (list_changed).
        Turn::tool_call("mcp__test__add_tool", json!({"name": "late"})).with_thinking(thought(1)),
        // 2: the tool that arrived mid-session.
        Turn::tool_call("mcp__test__late", json!({"text": "late works"})).with_thinking(thought(2)),
        // 3, 4: a deferred tool loaded with tool_search, then called.
        Turn::tool_call("tool_search", json!({"query": "select:todo_write"}))
            .with_thinking(thought(3)),
        Turn::tool_call(
            "todo_write",
            json!({"todos": [{"content": "check", "status": "pending"}]}),
        )
        .with_thinking(thought(4)),
        Turn::text("day one done").with_thinking(thought(5)).with_usage(small(1000)),
        // 6: the next day, resumed.
        Turn::text("day two").with_thinking(thought(6)).with_usage(small(199_500)),
        // 7: the summary (the window is nearly full), 8: the answer after compaction.
        Turn::text("## Goal\nKeep going."),
        Turn::text("after compaction").with_thinking(thought(8)),
    ]);
    let out = rab(&home, "2026-11-24", &["start"]);
    assert_eq!(stdout(&out), "day one done\n", "{}", stderr(&out));
    let out = rab(&home, "2026-11-25", &["-c", "and now?"]);
    assert_eq!(stdout(&out), "day two\n", "{}", stderr(&out));
    let out = rab(&home, "2026-11-25", &["-c", "go on"]);
    assert_eq!(stdout(&out), "after compaction\n", "{}", stderr(&out));

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 8);
    for (n, r) in reqs.iter().enumerate() {
        assert_eq!(r.status, 200, "request {}", n + 1);
        assert!(r.transformations.is_empty(), "request {}: the server dropped thinking", n + 1);
    }
    let day_one = reqs[0].body["system"].clone();
    assert!(day_one.to_string().contains("Current date: 2026-11-24"));

    // (c) The MCP tool that arrived: a deferred name in a system message, the tools
    // declared at the start unchanged, and the first reply's thinking sent back.
    assert_eq!(reqs[1].body["tools"], reqs[0].body["tools"]);
    let update = system_messages(&reqs[1]);
    assert_eq!(update.len(), 1, "{update:?}");
    assert!(update[0].to_string().contains("mcp__test__late"), "{update:?}");
    assert_eq!(blocks(&reqs[1], "thinking").len(), 1);

    // (d) The expanded tool: appended deferred and offered with tool_addition, under
    // the beta, the earlier tools as they were.
    let tools = reqs[3].body["tools"].as_array().unwrap();
    let declared = reqs[0].body["tools"].as_array().unwrap();
    assert_eq!(&tools[..declared.len()], &declared[..]);
    assert!(
        tools[declared.len()..]
            .iter()
            .any(|t| t["name"] == "todo_write" && t["defer_loading"] == true)
    );
    assert_eq!(blocks(&reqs[3], "tool_addition")[0]["tool"]["name"], "todo_write");
    assert!(
        reqs[3]
            .header("anthropic-beta")
            .unwrap()
            .contains("mid-conversation-tool-changes-2026-07-01")
    );
    assert_eq!(blocks(&reqs[3], "thinking").len(), 3);

    // (b) The next day: the same system prompt, the new date in a system message, and
    // all of day one's thinking still there.
    assert_eq!(reqs[5].body["system"], day_one);
    assert_eq!(reqs[5].body["tools"], reqs[4].body["tools"]);
    let dated = system_messages(&reqs[5])
        .into_iter()
        .any(|m| m.to_string().contains("Current date: 2026-11-25"));
    assert!(dated, "{:?}", system_messages(&reqs[5]));
    assert_eq!(blocks(&reqs[5], "thinking").len(), 5);
    // The tool loaded with tool_search on day one is still offered, not withdrawn.
    assert!(blocks(&reqs[5], "tool_removal").is_empty(), "{:?}", system_messages(&reqs[5]));

    // (a) After compaction: the summary first, the kept turns without their thinking
    // (it was bound to the history the summary replaced), and the request accepted.
    let after = &reqs[7];
    let first = after.body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(first.starts_with("<conversation_summary>"), "{first}");
    assert!(blocks(after, "thinking").is_empty());
    assert_eq!(after.body["system"], day_one);
    // The changed date was said once, not again on the next resume.
    let said = after.raw.windows(24).filter(|w| w == b"Current date: 2026-11-25").count();
    assert_eq!(said, 1, "{:?}", system_messages(after));
}
