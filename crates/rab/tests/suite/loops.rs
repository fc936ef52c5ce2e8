//! Runaway loops: a model that repeats its tool calls, or the same text, is stopped
//! with exit 6 and a notice saying what repeated; the session keeps what happened.

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, WIRES, stderr, stdout};

fn settings(home: &Home, settings: Value) {
    let dir = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

fn result(out: &std::process::Output) -> Value {
    let text = stdout(out);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(out)))
}

#[test]
fn the_same_tool_call_reply_after_reply_stops_the_run_with_exit_6() {
    for wire in WIRES {
        let home = Home::new();
        std::fs::write(home.dir.path().join("a.txt"), "a\n").unwrap();
        let llm = FakeLlm::start();
        let stuck = || Turn::tool_call("read", json!({"path": "a.txt"}));
        // Different calls first (no loop), then the same one over and over.
        llm.script([
            Turn::tool_call("ls", json!({})),
            stuck(),
            stuck(),
            stuck(),
            stuck(),
            stuck(),
            stuck(),
        ]);
        let out = home
            .rab_for(wire, &llm, Some("k"))
            .args(["-p", "--yolo", "--output-format", "json", "read a.txt"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(6), "{wire}: {err}");
        assert!(
            err.contains("rab: stopped: the same tool call 5 times in a row: read("),
            "{wire}: {err}"
        );
        assert_eq!(llm.requests().len(), 6, "{wire}: one ls, five reads, nothing after");
        let r = result(&out);
        assert_eq!(r["status"], "error_loop", "{wire}: {r}");
        assert_eq!(r["exitCode"], 6, "{wire}: {r}");
        // The fifth read was answered (every call gets a result) but not run.
        let tape = std::fs::read_to_string(r["sessionPath"].as_str().unwrap()).unwrap();
        assert_eq!(tape.matches("not run: rab stopped a loop").count(), 1, "{wire}: {tape}");
        // The session goes on: the next prompt sees every result.
        llm.script([Turn::text("done differently")]);
        let out = home
            .rab_for(wire, &llm, Some("k"))
            .args(["-c", "-p", "--yolo", "try another way"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{wire}: {}", stderr(&out));
        assert_eq!(stdout(&out), "done differently\n");
        let results = llm.requests()[6].tool_results();
        assert_eq!(results.len(), 6, "{wire}: {results:?}");
        assert!(results[5].1.starts_with("not run: rab stopped a loop"), "{wire}: {results:?}");
    }
}

#[test]
fn a_reply_repeating_the_same_text_is_cut_off() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let sentence = "I should check the configuration file again before going on. ";
    let stuck = format!("Let me think.\n{}", sentence.repeat(400));
    llm.script([Turn::text(stuck.clone())]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--output-format", "json", "think"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(err.contains("the same text 10 times in a row in one reply"), "{err}");
    assert!(err.contains("I should check the configuration file"), "{err}");
    // Cut off soon after the tenth copy, not streamed to the end; what came is kept.
    let r = result(&out);
    assert_eq!(r["status"], "error_loop", "{r}");
    let kept = r["result"].as_str().unwrap();
    assert!(kept.starts_with("Let me think.\nI should check"), "{kept}");
    let copies = kept.matches(sentence.trim()).count();
    assert!((10..20).contains(&copies), "{copies} copies shown");
}

#[test]
fn repeated_code_is_not_a_loop_and_settings_tune_or_disable_detection() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let code = format!("```\n{}```\n", "assert_eq!(parse(\"x\"), Ok(Value::Null));\n".repeat(60));
    llm.script([Turn::text(code.clone())]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "write tests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), code);

    // A lower limit stops sooner; disabled, nothing stops.
    settings(&home, json!({"loopDetection": {"callRepeats": 2}}));
    llm.script([Turn::tool_call("ls", json!({})), Turn::tool_call("ls", json!({}))]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "ls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 times in a row"), "{}", stderr(&out));

    settings(&home, json!({"loopDetection": {"enabled": false}}));
    let mut turns: Vec<Turn> = (0..7).map(|_| Turn::tool_call("ls", json!({}))).collect();
    turns.push(Turn::text("listed"));
    llm.script(turns);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "ls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "listed\n");

    // A count below 2 is refused with the key named.
    settings(&home, json!({"loopDetection": {"textRepeats": 1}}));
    let out =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "x"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("settings.json") && err.contains("at least 2"), "{err}");
}

#[test]
fn a_looping_sub_agent_is_stopped_and_the_main_agent_is_told() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut turns = vec![Turn::tool_call("task", json!({"description": "a", "prompt": "do a"}))];
    turns.extend((0..5).map(|_| Turn::tool_call("ls", json!({}))));
    turns.push(Turn::text("the helper got stuck; done myself"));
    llm.script(turns);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--yolo", "delegate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "the helper got stuck; done myself\n");
    let requests = llm.requests();
    assert_eq!(requests.len(), 7);
    let results = requests[6].tool_results();
    assert!(
        results[0].1.contains("the sub-agent was stopped: the same tool call 5 times in a row"),
        "{results:?}"
    );
}
