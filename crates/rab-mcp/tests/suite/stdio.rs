//! The manager against the in-repo test server over stdio.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rab_agent::{ToolError, ToolLevel};
use rab_mcp::{McpManager, PromptArgumentInfo, PromptInfo, ServerState};
use serde_json::json;

use super::*;

#[tokio::test]
async fn starts_lists_tools_and_calls_them() {
    let manager = start_ready(vec![test_server("test")]).await;
    let status = &manager.servers()[0];
    assert_eq!(status.state, ServerState::Ready);
    assert_eq!(
        status.tools,
        ["echo", "add", "fail", "crash", "add_tool", "env", "write_file"].map(String::from)
    );
    assert_eq!(status.resource_count, 2);
    assert_eq!(
        status.instructions.as_deref(),
        Some("A test server: echo, add, fail, crash and friends.")
    );

    let source = manager.tool_source();
    let names: Vec<String> = source.tools().iter().map(|t| t.spec().name).collect();
    assert_eq!(
        names,
        [
            "mcp__test__echo",
            "mcp__test__add",
            "mcp__test__fail",
            "mcp__test__crash",
            "mcp__test__add_tool",
            "mcp__test__env",
            "mcp__test__write_file",
            "list_mcp_resources",
            "read_mcp_resource",
        ]
        .map(String::from)
    );
    let echo = tool(&source, "mcp__test__echo");
    // The server says echo is read-only; rab does not trust that.
    assert_eq!(echo.level(), ToolLevel::Execute);
    assert_eq!(echo.spec().description, "Echo the text back.");
    // `fail` declares `{}`: the model still gets an object schema.
    assert_eq!(
        tool(&source, "mcp__test__fail").spec().parameters,
        json!({"type": "object", "properties": {}})
    );

    let out = call(&source, "mcp__test__echo", json!({"text": "hello"})).await.unwrap();
    assert_eq!(text(&out), "hello");
    let out = call(&source, "mcp__test__add", json!({"a": 2, "b": 3.5})).await.unwrap();
    assert_eq!(text(&out), "5.5");
}

#[tokio::test]
async fn generated_tools_are_offered_for_size_benchmarks() {
    let config = stdio(
        "bench",
        rab_mcp::test_support::test_server_path(),
        &[],
        &[("RAB_MCP_TEST_TOOLS", "50")],
    );
    let manager = start_ready(vec![config]).await;
    let tools = manager.tool_source().tools();
    assert_eq!(tools.len(), 7 + 50 + 2);
    let spec = tool(&manager.tool_source(), "mcp__bench__search_issues_49").spec();
    assert!(spec.description.len() > 300, "{}", spec.description);
    assert_eq!(spec.parameters["required"], json!(["query"]));
}

#[tokio::test]
async fn an_error_result_is_a_model_error() {
    let manager = start_ready(vec![test_server("test")]).await;
    let err = call(&manager.tool_source(), "mcp__test__fail", json!({})).await.unwrap_err();
    assert_eq!(err, ToolError::Model("this tool always fails".into()));
}

#[tokio::test]
async fn resources_are_listed_and_read_through_the_resource_tools() {
    let manager = start_ready(vec![test_server("test")]).await;
    let source = manager.tool_source();
    assert_eq!(tool(&source, "list_mcp_resources").level(), ToolLevel::ReadOnly);
    let listed = call(&source, "list_mcp_resources", json!({})).await.unwrap();
    assert_eq!(
        text(&listed),
        "server `test`:\n\
         - test://greeting (greeting, text/plain): A friendly greeting\n\
         - test://config (config, application/json)"
    );
    let read =
        call(&source, "read_mcp_resource", json!({"server": "test", "uri": "test://greeting"}))
            .await
            .unwrap();
    assert_eq!(text(&read), "hello from resources");
    let read =
        call(&source, "read_mcp_resource", json!({"server": "test", "uri": "test://config"}))
            .await
            .unwrap();
    assert_eq!(text(&read), r#"{"level":3,"name":"test"}"#);
    let err = call(&source, "list_mcp_resources", json!({"server": "nope"})).await.unwrap_err();
    assert!(matches!(err, ToolError::Model(m) if m.contains("no ready MCP server named `nope`")));
}

#[tokio::test]
async fn prompts_are_fetched_with_arguments_from_a_command_line() {
    let manager = start_ready(vec![test_server("test")]).await;
    let arg = |name: &str, description: &str, is_required| PromptArgumentInfo {
        name: name.into(),
        description: Some(description.into()),
        is_required,
    };
    assert_eq!(
        manager.prompts(),
        [PromptInfo {
            server: "test".into(),
            name: "review".into(),
            description: Some("Review a file".into()),
            arguments: vec![
                arg("file", "File to review", true),
                arg("focus", "What to look at", false)
            ],
        }]
    );
    let text = manager.get_prompt("test", "review", "src/lib.rs error handling").await.unwrap();
    assert_eq!(text, "Please review src/lib.rs, focusing on error handling.");
    let err = manager.get_prompt("test", "review", "").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "prompt `review` of MCP server `test` needs the argument `file`; usage: review <file> [focus]"
    );
    let err = manager.get_prompt("test", "nope", "").await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server `test` has no prompt `nope`; its prompts: review");
}

#[tokio::test]
async fn a_crash_is_reported_and_restart_brings_the_server_back() {
    let manager = start_ready(vec![test_server("test")]).await;
    let source = manager.tool_source();
    let echo = tool(&source, "mcp__test__echo");
    // The call itself fails: the server is gone before it answers.
    assert!(call(&source, "mcp__test__crash", json!({})).await.is_err());
    wait_until(&manager, |m| matches!(state(m, "test"), ServerState::Crashed(_))).await;
    let ServerState::Crashed(why) = state(&manager, "test") else { unreachable!() };
    assert_eq!(why, "exited with code 3; stderr:\ntest server: crashing on purpose");
    assert!(source.tools().is_empty());

    let err = echo
        .execute(json!({"text": "hi"}), rab_agent::ToolContext::detached("c"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::Model(format!(
            "MCP server `test` crashed: {why}; restart it with /mcp restart test"
        ))
    );

    let before = source.version();
    manager.restart("test").unwrap();
    assert_eq!(state(&manager, "test"), ServerState::Starting);
    assert!(manager.wait_ready(PATIENCE).await);
    assert_eq!(state(&manager, "test"), ServerState::Ready);
    assert_ne!(source.version(), before);
    // The tool taken before the crash works again: calls look the server up when they run.
    let out =
        echo.execute(json!({"text": "back"}), rab_agent::ToolContext::detached("c")).await.unwrap();
    assert_eq!(text(&out), "back");
    assert!(matches!(manager.restart("nope"), Err(rab_mcp::Error::UnknownServer { .. })));
}

#[tokio::test]
async fn a_tool_list_change_bumps_the_version_and_offers_the_new_tool() {
    let manager = start_ready(vec![test_server("test")]).await;
    let source = manager.tool_source();
    let before = source.version();
    let out = call(&source, "mcp__test__add_tool", json!({"name": "late"})).await.unwrap();
    assert_eq!(text(&out), "added late");
    wait_until(&manager, |m| m.servers()[0].tools.iter().any(|t| t == "late")).await;
    assert_ne!(source.version(), before);
    let out = call(&source, "mcp__test__late", json!({"text": "new tool"})).await.unwrap();
    assert_eq!(text(&out), "new tool");
    // The prompt list changed too (the test server adds a prompt of the same name).
    wait_until(&manager, |m| m.prompts().iter().any(|p| p.name == "late")).await;
    assert_eq!(manager.get_prompt("test", "late", "").await.unwrap(), "The late prompt.");
}

#[tokio::test]
async fn scrubbed_variables_are_removed_and_config_env_is_added() {
    // Setting a variable in this process needs `unsafe` (forbidden here), so the test
    // scrubs one this process inherited, and checks another inherited one passes through.
    let inherited: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !["PATH", "LD_LIBRARY_PATH", "RAB_TEST_SECRET_KEY"].contains(&k.as_str()))
        .take(2)
        .collect();
    let [(scrubbed, _), (kept, kept_value)] = inherited.as_slice() else {
        eprintln!("skipping: this process has fewer than two environment variables");
        return;
    };
    let mut options = options();
    options.sandbox = rab_tools::Sandbox::default()
        .with_scrubbed_env(vec![scrubbed.clone(), "RAB_TEST_SECRET_KEY".into()]);
    let config = stdio(
        "test",
        rab_mcp::test_support::test_server_path(),
        &[],
        &[("RAB_MCP_CONFIG_VALUE", "from config")],
    );
    let manager = McpManager::start(vec![config], options);
    assert!(manager.wait_ready(PATIENCE).await);
    let source = manager.tool_source();
    for (name, expected) in [
        (scrubbed.as_str(), "(unset)"),
        ("RAB_TEST_SECRET_KEY", "(unset)"),
        ("RAB_MCP_CONFIG_VALUE", "from config"),
        (kept.as_str(), kept_value.as_str()),
    ] {
        let out = call(&source, "mcp__test__env", json!({"name": name})).await.unwrap();
        assert_eq!(text(&out), expected, "{name}");
    }
}

#[tokio::test]
async fn a_missing_command_fails_alone() {
    let missing = stdio("broken", "/nonexistent/rab-no-such-server".into(), &[], &[]);
    let manager = start_ready(vec![missing, test_server("test")]).await;
    let ServerState::Failed(why) = state(&manager, "broken") else {
        panic!("{:?}", manager.servers())
    };
    assert!(why.starts_with("cannot run `/nonexistent/rab-no-such-server`: No such file"), "{why}");
    assert!(why.contains("Fix `command` in /test/mcp.json"), "{why}");
    assert_eq!(state(&manager, "test"), ServerState::Ready);
    let out = call(&manager.tool_source(), "mcp__test__echo", json!({"text": "ok"})).await.unwrap();
    assert_eq!(text(&out), "ok");
}

#[tokio::test]
async fn a_slow_start_fails_on_the_timeout_without_blocking_start() {
    let mut slow = stdio(
        "slow",
        rab_mcp::test_support::test_server_path(),
        &[],
        &[("RAB_MCP_TEST_STARTUP_MS", "30000")],
    );
    // Seconds, so that a busy machine cannot pass the timeout before the state is read.
    slow.startup_timeout = Some(Duration::from_secs(3));
    let began = Instant::now();
    let manager = McpManager::start(vec![slow], options());
    assert!(began.elapsed() < Duration::from_secs(3), "start must not wait for servers");
    assert_eq!(state(&manager, "slow"), ServerState::Starting);
    assert!(manager.wait_ready(PATIENCE).await);
    let ServerState::Failed(why) = state(&manager, "slow") else {
        panic!("{:?}", manager.servers())
    };
    assert!(
        why.starts_with("did not finish starting within 3000 ms (its startup timeout)"),
        "{why}"
    );
}

#[tokio::test]
async fn disabled_and_misconfigured_servers_are_listed_but_not_started() {
    let mut disabled = test_server("off");
    disabled.disabled = true;
    let mut problem = test_server("unset");
    problem.problem = Some("environment variable `TOKEN` is not set".into());
    let manager = start_ready(vec![disabled, problem]).await;
    assert_eq!(state(&manager, "off"), ServerState::Disabled);
    assert_eq!(
        state(&manager, "unset"),
        ServerState::Failed("environment variable `TOKEN` is not set".into())
    );
    assert!(manager.restart("off").is_err());
    assert!(manager.tool_source().tools().is_empty());
}

#[tokio::test]
async fn servers_run_through_the_sandbox_helper_in_their_cwd() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in for `rab __sandbox`: records its arguments, then runs the program.
    let helper = dir.path().join("helper.sh");
    std::fs::write(
        &helper,
        "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/helper-args\"\n\
         while [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut options = options();
    options.sandbox = rab_tools::Sandbox::new(
        rab_tools::SandboxMode::WorkspaceWrite,
        std::slice::from_ref(&work),
        &[],
    )
    .with_helper(Some(helper));
    let mut config = test_server("test");
    if let rab_mcp::Transport::Stdio { cwd, .. } = &mut config.transport {
        *cwd = Some(work.clone());
    }
    let manager = McpManager::start(vec![config], options);
    assert!(manager.wait_ready(PATIENCE).await);
    let args = std::fs::read_to_string(dir.path().join("helper-args")).unwrap();
    assert!(args.starts_with("__sandbox --write "), "{args}");
    assert!(args.contains(" -- ") && args.trim_end().ends_with("rab-mcp-test-server"), "{args}");
    let source = manager.tool_source();
    call(&source, "mcp__test__write_file", json!({"path": "out.txt", "text": "x"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(work.join("out.txt")).unwrap(), "x");
}

#[tokio::test]
async fn shutdown_stops_every_server() {
    let manager = start_ready(vec![test_server("a"), test_server("b")]).await;
    let source = manager.tool_source();
    assert_eq!(source.tools().len(), 7 * 2 + 2);
    manager.shutdown().await;
    assert!(source.tools().is_empty());
    assert!(matches!(state(&manager, "a"), ServerState::Failed(_)));
}

#[tokio::test]
async fn a_cancelled_call_stops_waiting() {
    let mut slow_tools = test_server("test");
    slow_tools.startup_timeout = Some(PATIENCE);
    let manager = start_ready(vec![slow_tools]).await;
    let echo = tool(&manager.tool_source(), "mcp__test__echo");
    let cx = rab_agent::ToolContext::detached("c");
    cx.cancel.cancel();
    let err = echo.execute(json!({"text": "never"}), cx).await.unwrap_err();
    assert_eq!(err, ToolError::Model("cancelled".into()));
}

/// Pids of live (not yet reaped) children of this process whose environment has `mark`.
fn children_marked(mark: &str) -> Vec<u32> {
    let me = std::process::id().to_string();
    let needle = format!("RAB_MCP_MARK={mark}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`; comm may hold spaces, so split after the last `)`.
        let fields: Vec<&str> =
            stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace().collect();
        if fields.get(1) != Some(&me.as_str()) {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until none of `pids` exists any more, zombies included (so they were reaped).
async fn wait_gone(pids: &[u32]) {
    let gone = tokio::time::timeout(PATIENCE, async {
        while pids.iter().any(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "processes {pids:?} still exist");
}

fn marked_server(mark: &str) -> rab_mcp::ServerConfig {
    stdio("test", rab_mcp::test_support::test_server_path(), &[], &[("RAB_MCP_MARK", mark)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_manager_kills_and_reaps_its_servers() {
    let manager = start_ready(vec![marked_server("drop")]).await;
    let pids = children_marked("drop");
    assert_eq!(pids.len(), 1);
    drop(manager);
    wait_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_and_restart_leave_no_processes_behind() {
    let manager = start_ready(vec![marked_server("restart")]).await;
    let first = children_marked("restart");
    manager.restart("test").unwrap();
    assert!(manager.wait_ready(PATIENCE).await);
    wait_gone(&first).await;
    let second = children_marked("restart");
    assert_eq!(second.len(), 1);
    manager.shutdown().await;
    wait_gone(&second).await;
}

#[test]
fn starting_without_a_runtime_fails_the_servers_instead_of_panicking() {
    let manager = McpManager::start(vec![marked_server("no-runtime")], options());
    assert_eq!(
        state(&manager, "test"),
        ServerState::Failed("no tokio runtime was running when MCP servers were started".into())
    );
}

/// Class 8 of the third containment audit: a tool call that never answers ends at the
/// server's `toolTimeout` with a clear error; a reply over 16 MiB ends the connection
/// at once, with the reason in the server's report, instead of leaving the call
/// waiting for ever.
#[tokio::test]
async fn a_hung_call_times_out_and_an_oversized_reply_ends_the_connection() {
    let mut hostile = stdio(
        "test",
        rab_mcp::test_support::test_server_path(),
        &[],
        &[("RAB_MCP_TEST_HOSTILE", "1")],
    );
    hostile.tool_timeout = Some(Duration::from_millis(300));
    let manager = start_ready(vec![hostile.clone()]).await;
    let source = manager.tool_source();
    let started = std::time::Instant::now();
    let err = call(&source, "mcp__test__hang", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let ToolError::Model(message) = err else { panic!("{err:?}") };
    assert!(
        message.contains("did not answer within 0 s") && message.contains("toolTimeout"),
        "{message}"
    );
    // The server still answers other calls.
    let out = call(&source, "mcp__test__echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(text(&out), "still here");

    hostile.tool_timeout = Some(PATIENCE * 3);
    let manager = start_ready(vec![hostile]).await;
    let source = manager.tool_source();
    let started = std::time::Instant::now();
    let mb = rab_mcp::MAX_MESSAGE / (1024 * 1024) + 2;
    let err = call(&source, "mcp__test__big", json!({"mb": mb})).await.unwrap_err();
    assert!(started.elapsed() < PATIENCE, "ended at once: {:?}", started.elapsed());
    let ToolError::Model(message) = err else { panic!("{err:?}") };
    assert!(message.contains("connection to the server is closed"), "{message}");
    wait_until(&manager, |m| matches!(state(m, "test"), ServerState::Crashed(_))).await;
    let ServerState::Crashed(why) = state(&manager, "test") else { unreachable!() };
    assert!(why.contains("over 16 MiB"), "{why}");
    // A large reply under the limit is fine.
    let manager = start_ready(vec![stdio(
        "test",
        rab_mcp::test_support::test_server_path(),
        &[],
        &[("RAB_MCP_TEST_HOSTILE", "1")],
    )])
    .await;
    let out = call(&manager.tool_source(), "mcp__test__big", json!({"mb": 1})).await.unwrap();
    assert!(text(&out).starts_with("xxx"));
}
