//! `rab --mode rpc` over pipes against the fake model: prompts with streamed events,
//! steering and follow-ups while a run goes on, abort, questions answered remotely,
//! state, messages, model changes, and bad lines that get an error and change nothing.

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, Rpc};

#[test]
fn a_prompt_streams_its_events_and_state_and_messages_answer_at_any_time() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("Hello over RPC.")]);
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send(r#"{"id": 1, "type": "prompt", "message": "hi"}"#);
    let r = rpc.response("prompt");
    assert_eq!((r["success"].clone(), r["id"].clone()), (json!(true), json!(1)));
    rpc.update("text_delta");
    rpc.event("agent_end");
    rpc.send(r#"{"type": "get_messages"}"#);
    let r = rpc.response("get_messages");
    let messages = r["data"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state")["data"].clone();
    assert_eq!(state["isStreaming"], false);
    assert_eq!(state["messageCount"], 2);
    assert!(state["sessionFile"].as_str().is_some_and(|f| f.ends_with(".jsonl")), "{state}");
    rpc.end();
}

#[test]
fn bad_lines_get_an_error_and_rab_keeps_serving() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send("{not json");
    let r = rpc.response("parse");
    assert_eq!(r["success"], false);
    assert!(r["error"].as_str().unwrap().starts_with("not JSON"), "{r}");
    rpc.send(r#"{"id": "x", "type": "teleport"}"#);
    let r = rpc.response("teleport");
    assert_eq!(r["error"], "unknown request type \"teleport\"");
    assert_eq!(r["id"], "x");
    rpc.send(r#"{"type": "prompt"}"#);
    let r = rpc.response("prompt");
    assert!(r["error"].as_str().unwrap().contains("missing field `message`"), "{r}");
    rpc.send(r#"{"type": "answer", "questionId": 9, "decision": "allow"}"#);
    assert_eq!(rpc.response("answer")["error"], "no open question 9");
    rpc.send(r#"{"type": "get_state"}"#);
    assert_eq!(rpc.response("get_state")["success"], true);
    assert!(llm.requests().is_empty());
    rpc.end();
}

/// What was found: a follow-up that arrived just after a run ended was refused
/// ("nothing is running: send a prompt"), where pi queues it. With nothing running, a
/// follow-up or a steering message starts a run of its own.
#[test]
fn issue_53_a_follow_up_or_steer_with_nothing_running_starts_a_run() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer"), Turn::text("second answer"), Turn::text("third")]);
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send(r#"{"type": "prompt", "message": "first"}"#);
    rpc.event("agent_end");
    rpc.send(r#"{"type": "follow_up", "message": "a late follow-up"}"#);
    assert_eq!(rpc.response("follow_up")["success"], true);
    rpc.event("agent_end");
    rpc.send(r#"{"type": "steer", "message": "a late steer"}"#);
    assert_eq!(rpc.response("steer")["success"], true);
    rpc.event("agent_end");
    let sent: Vec<String> =
        llm.requests().iter().map(|r| r.last_user_text().unwrap_or_default()).collect();
    assert_eq!(sent, ["first", "a late follow-up", "a late steer"]);
    rpc.end();
}

#[test]
fn issue_34_a_line_that_is_not_utf8_gets_an_error_and_rab_keeps_serving() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send_bytes(b"{\"type\": \"get_state\", \"x\": \"\xff\xfe\"}\n");
    let r = rpc.response("parse");
    assert_eq!(r["success"], false);
    assert!(r["error"].as_str().unwrap().contains("not UTF-8"), "{r}");
    rpc.send(r#"{"type": "get_state"}"#);
    assert_eq!(rpc.response("get_state")["success"], true);
    rpc.end();
}

#[test]
fn questions_are_answered_remotely_allow_and_deny() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "touch allowed.txt"})),
        Turn::tool_call("bash", json!({"command": "touch denied.txt"})),
        Turn::text("done"),
    ]);
    let mut rpc = Rpc::start_in(&home, &llm, &dir, &[]);
    rpc.send(r#"{"type": "prompt", "message": "make files"}"#);
    let q = rpc.event("question");
    assert_eq!(q["kind"], "permission");
    assert_eq!(q["tool"], "bash");
    assert_eq!(q["rule"], "bash(touch allowed.txt:*)");
    rpc.send(&format!(
        r#"{{"type": "answer", "questionId": {}, "decision": "allow"}}"#,
        q["questionId"]
    ));
    assert_eq!(rpc.response("answer")["success"], true);
    let q = rpc.event("question");
    rpc.send(&format!(
        r#"{{"type": "answer", "questionId": {}, "decision": "deny", "reason": "not that one"}}"#,
        q["questionId"]
    ));
    rpc.event("agent_end");
    assert!(dir.join("allowed.txt").exists());
    assert!(!dir.join("denied.txt").exists());
    let results = llm.requests()[2].tool_results();
    assert!(results[1].1.contains("not that one"), "{results:?}");
    rpc.end();
}

#[test]
fn steer_and_follow_up_reach_the_running_agent_and_abort_stops_it() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("sleep", json!({"seconds": 1})),
        Turn::text("after the steer"),
        Turn::text("after the follow-up"),
        Turn::text("slow ".repeat(200)).slow(20),
    ]);
    let mut rpc = Rpc::start(&home, &llm, &["--yolo"]);
    rpc.send(r#"{"type": "prompt", "message": "wait a bit"}"#);
    rpc.response("prompt");
    rpc.event("tool_execution_start");
    rpc.send(r#"{"type": "steer", "message": "STEERED"}"#);
    assert_eq!(rpc.response("steer")["success"], true);
    rpc.send(r#"{"type": "follow_up", "message": "FOLLOWED"}"#);
    assert_eq!(rpc.response("follow_up")["success"], true);
    rpc.send(r#"{"type": "prompt", "message": "too soon"}"#);
    assert!(rpc.response("prompt")["error"].as_str().unwrap().starts_with("a run is going on"));
    rpc.event("agent_end");
    let texts = |i: usize| llm.requests()[i].user_texts().join("|");
    assert!(texts(1).contains("STEERED"), "{}", texts(1));
    assert!(texts(2).contains("FOLLOWED"), "{}", texts(2));
    // A slow answer, aborted after its first words: the run ends, the tape stays whole.
    rpc.send(r#"{"type": "prompt", "message": "talk slowly"}"#);
    rpc.update("text_delta");
    rpc.send(r#"{"type": "abort"}"#);
    rpc.response("abort");
    let end = rpc.event("agent_end");
    assert!(end.to_string().contains("bort"), "{end}");
    rpc.send(r#"{"type": "get_messages"}"#);
    let messages = rpc.response("get_messages")["data"]["messages"].as_array().unwrap().len();
    rpc.send(r#"{"type": "get_state"}"#);
    let file = rpc.response("get_state")["data"]["sessionFile"].as_str().unwrap().to_owned();
    rpc.end();
    // The tape is whole: it reads without warnings, every call has its result, and it
    // holds what the runtime reported.
    let (mut tape, warnings) = rab_session::Tape::open(std::path::Path::new(&file)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(tape.repair().unwrap(), 0, "no call without its result");
    assert_eq!(tape.messages().len(), messages);
}

#[test]
fn set_model_and_thinking_level_show_in_the_state() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send(r#"{"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-5"}"#);
    assert_eq!(rpc.response("set_model")["success"], true);
    rpc.send(r#"{"type": "set_thinking_level", "level": "high"}"#);
    assert_eq!(rpc.response("set_thinking_level")["success"], true);
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state")["data"].clone();
    assert_eq!(
        (state["model"]["id"].clone(), state["thinkingLevel"].clone()),
        (json!("claude-sonnet-5"), json!("high"))
    );
    rpc.send(r#"{"type": "set_model", "modelId": "no-such-model", "provider": "nope"}"#);
    assert_eq!(rpc.response("set_model")["success"], false);
    rpc.end();
}

#[test]
fn issue_34_switching_model_keeps_the_endpoint_and_key_given_on_the_command_line() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("from the gateway")]);
    // The endpoint and key only on the command line (a company gateway): nothing in
    // the environment.
    let mut cmd = home.rab();
    cmd.args(["--provider", "anthropic", "--base-url", &llm.url(), "--api-key", "gw-key-123"])
        .args(["--mode", "rpc"]);
    let mut rpc = Rpc(super::harness::Piped::spawn(cmd));
    rpc.send(r#"{"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-5"}"#);
    let r = rpc.response("set_model");
    assert_eq!(r["success"], true, "{r}");
    rpc.send(r#"{"type": "prompt", "message": "hi"}"#);
    rpc.event("agent_end");
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "the prompt reached the configured endpoint");
    assert_eq!(requests[0].body["model"], "claude-sonnet-5");
    assert_eq!(requests[0].header("x-api-key"), Some("gw-key-123"));
    // A model of another provider with no key of its own is refused with the reason.
    rpc.send(r#"{"type": "set_model", "provider": "openai", "modelId": "gpt-5"}"#);
    let r = rpc.response("set_model");
    assert_eq!(r["success"], false, "{r}");
    rpc.end();
}

#[test]
fn new_session_fork_and_switch_session_replace_the_session() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer")]);
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.send(r#"{"type": "prompt", "message": "hi"}"#);
    rpc.event("agent_end");
    rpc.send(r#"{"type": "get_state"}"#);
    let first = rpc.response("get_state")["data"]["sessionFile"].as_str().unwrap().to_owned();
    rpc.send(r#"{"type": "new_session"}"#);
    rpc.event("session_replaced");
    assert_eq!(rpc.response("new_session")["success"], true);
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state")["data"].clone();
    assert_ne!(state["sessionFile"], first.as_str());
    assert_eq!(state["messageCount"], 0);
    rpc.send(&json!({"type": "switch_session", "sessionPath": first}).to_string());
    assert_eq!(rpc.response("switch_session")["success"], true);
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state")["data"].clone();
    assert_eq!(
        (state["sessionFile"].clone(), state["messageCount"].clone()),
        (json!(first), json!(2))
    );
    rpc.send(r#"{"type": "fork"}"#);
    let r = rpc.response("fork");
    assert!(r["data"]["text"].as_str().unwrap().starts_with("forked into"), "{r}");
    rpc.send(r#"{"type": "switch_session", "sessionPath": "/no/such.jsonl"}"#);
    assert_eq!(rpc.response("switch_session")["success"], false);
    rpc.end();
}

#[test]
fn mcp_servers_report_their_status_as_lines() {
    let home = Home::new();
    let config = json!({"mcpServers": {
        "test": {"command": rab_mcp::test_support::test_server_path()},
        "broken": {"command": "/nonexistent/mcp-server"},
    }});
    std::fs::create_dir_all(home.dir.path().join(".rab")).unwrap();
    std::fs::write(home.dir.path().join(".rab/mcp.json"), config.to_string()).unwrap();
    let llm = FakeLlm::start();
    let mut rpc = Rpc::start(&home, &llm, &[]);
    let settled = |v: &Value| v["type"] == "service_status" && v["state"] != "starting";
    let (a, b) = (rpc.wait("a status", settled), rpc.wait("another status", settled));
    let by_name = |n: &str| [&a, &b].into_iter().find(|v| v["name"] == n).cloned().unwrap();
    let (ready, broken) = (by_name("test"), by_name("broken"));
    assert_eq!(ready["state"], "ready", "{ready}");
    assert!(ready["tools"].as_u64().unwrap() > 0, "{ready}");
    assert_eq!(broken["state"], "failed", "{broken}");
    assert!(broken["detail"].as_str().unwrap().contains("nonexistent"), "{broken}");
    rpc.end();
}

#[test]
fn issue_37_a_prompt_with_a_streaming_behaviour_queues_itself_even_sent_at_once() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("sleep", json!({"seconds": 1})),
        Turn::text("after the steer"),
        Turn::text("after the follow-up"),
        Turn::text("Hello, world"),
    ]);
    std::fs::create_dir_all(home.dir.path().join("rab/commands")).unwrap();
    std::fs::write(home.dir.path().join("rab/commands/greet.md"), "Say hello to $ARGUMENTS")
        .unwrap();
    let mut rpc = Rpc::start(&home, &llm, &["--yolo"]);
    // The second line goes out before rab has said the first run started.
    rpc.send(r#"{"id": "a", "type": "prompt", "message": "wait a bit"}"#);
    rpc.send(
        r#"{"id": "b", "type": "prompt", "message": "FOLLOWED", "streamingBehavior": "followUp"}"#,
    );
    rpc.event("tool_execution_start");
    rpc.send(
        r#"{"id": "c", "type": "prompt", "message": "STEERED", "streamingBehavior": "steer"}"#,
    );
    rpc.send(r#"{"id": "d", "type": "prompt", "message": "x", "streamingBehavior": "later"}"#);
    let d = rpc.wait("d", |v| v["id"] == "d");
    assert!(d["error"].as_str().unwrap().contains("steer or followUp"), "{d}");
    let queued = rpc.wait("queue_update", |v| {
        v["type"] == "queue_update" && v["steering"] == json!(["STEERED"])
    });
    assert_eq!(queued["followUp"], json!(["FOLLOWED"]), "{queued}");
    rpc.event("agent_end");
    for id in ["a", "b", "c"] {
        assert_eq!(rpc.seen.iter().find(|v| v["id"] == id).unwrap()["success"], true, "{id}");
    }
    let texts = |i: usize| llm.requests()[i].user_texts().join("|");
    assert!(texts(1).contains("STEERED"), "{}", texts(1));
    assert!(texts(2).contains("FOLLOWED"), "{}", texts(2));
    // A prompt naming a prompt command runs it.
    rpc.send(r#"{"type": "prompt", "message": "/greet world"}"#);
    rpc.event("agent_end");
    assert!(texts(3).contains("Say hello to world"), "{}", texts(3));
    rpc.end();
}

#[test]
fn issue_37_bad_arguments_to_pis_requests_get_a_reason_and_change_nothing() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut rpc = Rpc::start(&home, &llm, &[]);
    let refused = |rpc: &mut Rpc, line: Value, command: &str, says: &str| {
        rpc.send(&line.to_string());
        let r = rpc.response(command);
        assert_eq!(r["success"], false, "{r}");
        assert!(r["error"].as_str().unwrap().contains(says), "{r}");
    };
    refused(&mut rpc, json!({"type": "fork", "entryId": "nope"}), "fork", "no entry \"nope\"");
    refused(
        &mut rpc,
        json!({"type": "set_session_name", "name": "  "}),
        "set_session_name",
        "cannot be empty",
    );
    refused(
        &mut rpc,
        json!({"type": "set_session_name", "name": "a\nb"}),
        "set_session_name",
        "one line",
    );
    refused(
        &mut rpc,
        json!({"type": "set_steering_mode", "mode": "most"}),
        "set_steering_mode",
        "all or one-at-a-time",
    );
    refused(&mut rpc, json!({"type": "bash", "command": " "}), "bash", "needs a command");
    refused(&mut rpc, json!({"type": "set_auto_retry"}), "set_auto_retry", "enabled");
    // A folder that cannot be made (a file stands where it would go).
    let blocked = home.dir.path().join("a-file");
    std::fs::write(&blocked, "x").unwrap();
    let path = blocked.join("x.html");
    refused(
        &mut rpc,
        json!({"type": "export_html", "outputPath": path}),
        "export_html",
        "cannot write",
    );
    // Nothing was changed by them.
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state")["data"].clone();
    assert_eq!(
        (state["sessionName"].clone(), state["steeringMode"].clone()),
        (Value::Null, json!("one-at-a-time"))
    );
    rpc.end();
}
