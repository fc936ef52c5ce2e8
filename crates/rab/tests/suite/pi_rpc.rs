//! pi's own `RpcClient` (from the npm package `@mariozechner/pi-coding-agent`, which
//! `.ci/run` unpacks into `target/pi-rpc`) drives `rab --mode rpc` through every method
//! it has: the script is tests/pi_rpc/drive.mjs, run with node. It skips, saying so,
//! when node or the client is missing; rab's own RPC tests (rpc.rs) cover the protocol
//! without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::Home;

/// Every method of pi's `RpcClient` (0.73.1), as drive.mjs calls them.
const METHODS: [&str; 30] = [
    "prompt",
    "promptAndWait",
    "steer",
    "followUp",
    "abort",
    "newSession",
    "getState",
    "setModel",
    "cycleModel",
    "getAvailableModels",
    "setThinkingLevel",
    "cycleThinkingLevel",
    "setSteeringMode",
    "setFollowUpMode",
    "compact",
    "setAutoCompaction",
    "setAutoRetry",
    "abortRetry",
    "bash",
    "abortBash",
    "getSessionStats",
    "exportHtml",
    "switchSession",
    "fork",
    "clone",
    "getForkMessages",
    "getLastAssistantText",
    "setSessionName",
    "getMessages",
    "getCommands",
];

/// pi's RpcClient, when `.ci/run` unpacked it.
fn pi_client() -> Option<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    let client = workspace.join("target/pi-rpc/package/dist/modes/rpc/rpc-client.js");
    client.is_file().then_some(client)
}

#[test]
fn pis_own_rpc_client_drives_rab_through_every_method() {
    let Some(client) = pi_client() else {
        eprintln!(
            "skipped: pi's RpcClient is not unpacked in target/pi-rpc (.ci/run gets it with \
             `npm pack @mariozechner/pi-coding-agent`); rpc.rs tests the protocol without it"
        );
        return;
    };
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("skipped: node is not installed");
        return;
    }
    let home = Home::new();
    let project = home.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let rab_home = home.dir.path().join("rab");
    std::fs::create_dir_all(rab_home.join("commands")).unwrap();
    std::fs::write(
        rab_home.join("commands/greet.md"),
        "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS",
    )
    .unwrap();
    std::fs::create_dir_all(rab_home.join("skills/tidy")).unwrap();
    std::fs::write(
        rab_home.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidy the code\n---\nTidy it.",
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("Hello from rab."),
        Turn::tool_call("bash", json!({"command": "echo tool-out"})),
        Turn::text("ran it"),
        Turn::tool_call("sleep", json!({"seconds": 1})),
        Turn::text("steered"),
        Turn::text("followed"),
        Turn::text("SUMMARY: we said hello and ran commands"),
        Turn::text("slow ".repeat(400)).slow(20),
    ]);
    let args = json!(["--provider", "anthropic", "--api", "anthropic-messages", "--yolo"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pi_rpc/drive.mjs");
    let out = home
        .node(&script, &llm)
        .env("PI_RPC_CLIENT", &client)
        .env("PROJECT_DIR", &project)
        .env("RAB_ARGS", args.to_string())
        .current_dir(&project)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "drive.mjs failed:\n{stdout}\n{stderr}");
    let report: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no report from drive.mjs:\n{stdout}\n{stderr}"));
    let failures = report["failures"].as_array().unwrap();
    assert!(failures.is_empty(), "pi's client found these:\n{failures:#?}\nstderr:\n{stderr}");
    let called: Vec<&str> =
        report["called"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let missing: Vec<&&str> = METHODS.iter().filter(|m| !called.contains(m)).collect();
    assert!(missing.is_empty(), "methods not exercised: {missing:?}");
    let events: Vec<&str> =
        report["events"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for name in [
        "agent_start",
        "turn_start",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "turn_end",
        "agent_end",
        "queue_update",
        "compaction_start",
        "compaction_end",
        "thinking_level_changed",
        "session_info_changed",
    ] {
        assert!(events.contains(&name), "pi's event {name} never came: {events:?}");
    }
}

#[test]
fn the_python_example_client_prints_the_streamed_answer_and_the_tool_calls() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("ls", json!({"path": "."})), Turn::text("Two files here.")]);
    let bin = Path::new(env!("CARGO_BIN_EXE_rab")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rpc_client.py");
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    let envs: Vec<(String, String)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    cmd = Command::new("python3");
    cmd.arg(&example).arg("list the files").env_clear().envs(envs).env("PATH", path);
    cmd.current_dir(home.dir.path());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("[ls] {\"path\": \".\"}"), "{stdout}");
    assert!(stdout.contains("Two files here."), "{stdout}");
}
