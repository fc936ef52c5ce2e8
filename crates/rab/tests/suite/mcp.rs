//! MCP servers end to end: the real binary with `.rab/mcp.json` (or Claude Code's
//! `.mcp.json`) pointing at the in-repo test server and, when installed, the reference
//! servers; the model's calls come from the fake server.

use std::path::Path;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, offered, stderr, stdout, with_stdin};

fn write_config(dir: &Path, file: &str, servers: Value) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, json!({ "mcpServers": servers }).to_string()).unwrap();
}

fn test_server(env: Value) -> Value {
    json!({"command": rab_mcp::test_support::test_server_path(), "env": env})
}

fn rab_p(home: &Home, llm: &FakeLlm, args: &[&str]) -> std::process::Output {
    home.rab_for("anthropic-messages", llm, Some("k")).arg("-p").args(args).output().unwrap()
}

#[test]
fn a_servers_tools_resources_and_list_changes_work_through_the_agent_loop() {
    let home = Home::new();
    write_config(home.dir.path(), ".rab/mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("mcp__test__echo", json!({"text": "hello over mcp"})).and_tool_call(
            "read_mcp_resource",
            json!({"server": "test", "uri": "test://greeting"}),
        ),
        Turn::tool_call("mcp__test__add_tool", json!({"name": "late"})),
        Turn::tool_call("mcp__test__late", json!({"text": "late tool works"})),
        Turn::text("all done"),
    ]);
    // MCP tools run programs: allowed here by a rule naming the server.
    let out = rab_p(&home, &llm, &["--allowed-tools", "mcp__test", "use the server"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("all done"));
    let first = offered(&llm, 0);
    for name in ["mcp__test__echo", "mcp__test__add", "list_mcp_resources", "read_mcp_resource"] {
        assert!(first.contains(&name.to_owned()), "{name} missing from {first:?}");
    }
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "hello over mcp");
    assert_eq!(results[1].1, "hello from resources");
    assert!(!first.contains(&"mcp__test__late".to_owned()));
    assert!(offered(&llm, 2).contains(&"mcp__test__late".to_owned()), "list_changed honoured");
    assert_eq!(llm.requests()[3].tool_results().last().unwrap().1, "late tool works");
}

/// The rab seed's `{"servers": [...]}` list form starts its servers like the named forms.
#[test]
fn the_seeds_list_form_starts_each_server_under_a_name_made_from_it() {
    let home = Home::new();
    let server = rab_mcp::test_support::test_server_path();
    let config = json!({"servers": [{"command": server}, {"name": "second", "command": server}]});
    std::fs::create_dir_all(home.dir.path().join(".rab")).unwrap();
    std::fs::write(home.dir.path().join(".rab/mcp.json"), config.to_string()).unwrap();
    let stem = server.file_stem().unwrap().to_string_lossy().replace('.', "_");
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(format!("mcp__{stem}__echo"), json!({"text": "first"}))
            .and_tool_call("mcp__second__echo", json!({"text": "second"})),
        Turn::text("both answered"),
    ]);
    let first = format!("mcp__{stem}");
    let out = rab_p(
        &home,
        &llm,
        &["--allowed-tools", &first, "--allowed-tools", "mcp__second", "use both"],
    );
    assert_eq!(stdout(&out), "both answered\n", "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert_eq!((results[0].1.as_str(), results[1].1.as_str()), ("first", "second"));
}

#[test]
fn sub_agents_get_the_servers_tools_deferred_like_the_main_agent() {
    let home = Home::new();
    write_config(home.dir.path(), ".rab/mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("task", json!({"description": "ask", "prompt": "echo via mcp"})),
        Turn::tool_call("mcp__test__echo", json!({"text": "from the sub-agent"})),
        Turn::text("sub report"),
        Turn::text("done"),
    ]);
    let out = rab_p(&home, &llm, &["--yolo", "delegate"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sub = offered(&llm, 1);
    assert!(sub.contains(&"mcp__test__echo".to_owned()), "{sub:?}");
    assert!(sub.contains(&"tool_search".to_owned()), "deferred in the sub-agent too: {sub:?}");
    assert_eq!(llm.requests()[2].tool_results()[0].1, "from the sub-agent");
}

#[test]
fn without_a_rule_headless_refuses_mcp_tools_and_a_deny_rule_holds_in_yolo() {
    let home = Home::new();
    write_config(home.dir.path(), ".mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("mcp__test__echo", json!({"text": "x"})),
        Turn::text("a"),
        Turn::tool_call("mcp__test__echo", json!({"text": "x"})),
        Turn::text("b"),
    ]);
    let out = rab_p(&home, &llm, &["go"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(stderr(&out).contains("rab: denied"), "{}", stderr(&out));
    let refused = &llm.requests()[1].tool_results()[0].1;
    assert!(refused.contains("mcp__test__echo"), "{refused}");
    let out = rab_p(&home, &llm, &["--yolo", "--disallowed-tools", "mcp__test__echo", "go"]);
    assert_eq!(out.status.code(), Some(5));
    let refused = &llm.requests()[3].tool_results().last().unwrap().1.clone();
    assert!(refused.contains("denied by the rule"), "{refused}");
}

#[test]
fn a_crashing_server_is_reported_and_rab_goes_on() {
    let home = Home::new();
    write_config(home.dir.path(), ".rab/mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("mcp__test__crash", json!({})),
        Turn::tool_call("mcp__test__echo", json!({"text": "still there?"})),
        Turn::text("noted"),
    ]);
    let out = rab_p(&home, &llm, &["--yolo", "crash it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("noted"));
    // The call that crashed it says so. The next call fails with the same advice or,
    // once the crash is seen and its tools are gone from the list, as an unknown tool.
    let crashed = &llm.requests()[1].tool_results()[0].1;
    assert!(crashed.contains("/mcp restart test"), "{crashed}");
    let next = &llm.requests()[2].tool_results()[1].1;
    assert!(
        next.contains("crashed: exited with code 3")
            || next.contains("unknown tool 'mcp__test__echo'"),
        "{next}"
    );
}

#[test]
fn mcp_status_and_prompts_as_commands() {
    let home = Home::new();
    write_config(
        home.dir.path(),
        ".rab/mcp.json",
        json!({"test": test_server(json!({})), "broken": {"command": "/nonexistent/server"}}),
    );
    let llm = FakeLlm::start();
    llm.script([Turn::text("reviewed")]);
    let out = rab_p(&home, &llm, &[",mcp"]);
    let text = stdout(&out);
    assert!(text.contains("test  ready"), "{text}");
    assert!(text.contains("mcp__test__echo") && text.contains("/mcp__test__review"), "{text}");
    assert!(text.contains("broken  failed") && text.contains("/mcp restart broken"), "{text}");
    // A prompt: fetched from the server, sent as the message.
    let out = rab_p(&home, &llm, &[",mcp__test__review src/main.rs error handling"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = format!("{:?}", llm.requests()[0].transcript().items);
    assert!(sent.contains("Please review src/main.rs, focusing on error handling."), "{sent}");
    let out = rab_p(&home, &llm, &[",mcp__test__review"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("file"), "{}", stderr(&out));
}

#[test]
fn the_ui_and_repl_do_not_wait_for_servers() {
    let home = Home::new();
    // A server that takes 30 s to start: the REPL answers long before.
    let slow = test_server(json!({"RAB_MCP_TEST_STARTUP_MS": "30000"}));
    write_config(home.dir.path(), ".rab/mcp.json", json!({"slow": slow}));
    let llm = FakeLlm::start();
    llm.script([Turn::text("answered")]);
    let start = std::time::Instant::now();
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.arg("--repl");
    let out = with_stdin(cmd, "/mcp\nhello\n");
    let text = stdout(&out);
    assert!(text.contains("slow  starting"), "{text}");
    assert!(text.contains("answered"), "{text}");
    assert!(!offered(&llm, 0).iter().any(|n| n.starts_with("mcp__slow")));
    // Generous: the point is not waiting the 30 s (and exiting kills the server).
    assert!(start.elapsed() < std::time::Duration::from_secs(25));
}

#[test]
fn issue_36_print_mode_says_which_servers_it_waits_for() {
    let home = Home::new();
    let slow = test_server(json!({"RAB_MCP_TEST_STARTUP_MS": "3500"}));
    write_config(home.dir.path(), ".rab/mcp.json", json!({"slow": slow}));
    let llm = FakeLlm::start();
    llm.script([Turn::text("answered")]);
    let out = rab_p(&home, &llm, &["hello"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("rab: waiting for MCP server slow to start"), "{err}");
    assert!(offered(&llm, 0).iter().any(|n| n.starts_with("mcp__slow")), "it waited");
}

#[test]
fn reference_servers_everything_and_filesystem_through_the_agent_loop() {
    let (Some(everything), Some(filesystem)) = (
        rab_mcp::test_support::reference_server("everything"),
        rab_mcp::test_support::reference_server("filesystem"),
    ) else {
        eprintln!(
            "skipped: the MCP reference servers are not installed (.ci/run installs them with \
             npm into target/mcp-reference)"
        );
        return;
    };
    let home = Home::new();
    let files = home.dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "x").unwrap();
    write_config(
        home.dir.path(),
        ".mcp.json",
        json!({
            "everything": {"command": "node", "args": [everything]},
            "fs": {"command": "node", "args": [filesystem, files]},
        }),
    );
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("mcp__everything__echo", json!({"message": "hi there"}))
            .and_tool_call("mcp__fs__list_directory", json!({"path": files})),
        Turn::text("done"),
    ]);
    let out = rab_p(&home, &llm, &["--yolo", "use both"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("Echo: hi there"), "{}", results[0].1);
    assert!(results[1].1.contains("[FILE] notes.txt"), "{}", results[1].1);
}

fn call_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(rmcp::model::ContentBlock::as_text)
        .map(|t| t.text.clone())
        .collect()
}

#[tokio::test]
async fn rab_mcp_serve_answers_initialize_tools_list_and_tools_call() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let home = Home::new();
    std::fs::write(home.dir.path().join("notes.txt"), "served by rab\n").unwrap();
    let settings = home.dir.path().join(".rab/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(settings, r#"{"permissions": {"deny": ["read(secret.txt)"]}}"#).unwrap();
    let mut cmd = tokio::process::Command::from(home.rab());
    cmd.args(["mcp", "serve", "--disallowed-tools", "write"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let limit = std::time::Duration::from_secs(60);
    let client = tokio::time::timeout(limit, ().serve((stdout, stdin))).await.unwrap().unwrap();
    assert_eq!(client.peer_info().unwrap().server_info.as_ref().unwrap().name, "rab");
    let mut names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["bash", "edit", "glob", "grep", "ls", "read", "web_fetch", "write"]);
    let args = |v: Value| v.as_object().unwrap().clone();
    let read =
        CallToolRequestParams::new("read").with_arguments(args(json!({"path": "notes.txt"})));
    let result = client.call_tool(read).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert!(call_text(&result).contains("served by rab"), "{}", call_text(&result));
    // The permission rules hold: a deny rule, and bash, which would ask, is refused.
    let denied =
        CallToolRequestParams::new("read").with_arguments(args(json!({"path": "secret.txt"})));
    let result = client.call_tool(denied).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(call_text(&result).contains("denied by the rule"), "{}", call_text(&result));
    let bash = CallToolRequestParams::new("bash")
        .with_arguments(args(json!({"command": "touch made-by-bash"})));
    let result = client.call_tool(bash).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{}", call_text(&result));
    assert!(!home.dir.path().join("made-by-bash").exists());
    let write = CallToolRequestParams::new("write")
        .with_arguments(args(json!({"path": "w.txt", "content": "x"})));
    let result = client.call_tool(write).await.unwrap();
    assert!(call_text(&result).contains("denied by the rule \"write\""), "{}", call_text(&result));
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(limit, child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn a_small_server_is_sent_in_full_and_a_big_one_is_deferred() {
    // With few built-in tools, deferring a small server's schemas would save less than
    // tool_search costs, and cost the model a round trip: they are sent in full.
    let names_sent = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let home = Home::new();
    write_config(home.dir.path(), ".rab/mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b")]);
    let out = rab_p(
        &home,
        &llm,
        &["--tools", "read,bash,mcp__test", "--allowed-tools", "mcp__test", "hi"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = names_sent(&llm.requests()[0].body);
    assert!(sent.contains(&"mcp__test__echo".to_owned()), "{sent:?}");
    assert!(!sent.contains(&"tool_search".to_owned()), "{sent:?}");
    // Fifty tools of realistic size are deferred.
    write_config(
        home.dir.path(),
        ".rab/mcp.json",
        json!({"test": test_server(json!({"RAB_MCP_TEST_TOOLS": "43"}))}),
    );
    let out = rab_p(
        &home,
        &llm,
        &["--tools", "read,bash,mcp__test", "--allowed-tools", "mcp__test", "hi"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = names_sent(&llm.requests()[1].body);
    assert!(sent.contains(&"tool_search".to_owned()), "{sent:?}");
    assert!(!sent.contains(&"mcp__test__echo".to_owned()), "{sent:?}");
    assert!(offered(&llm, 1).contains(&"mcp__test__echo".to_owned()));
}

/// Issue 38, row 1: `--no-tools` and `--tools` hold for an MCP server's tools too.
#[test]
fn issue_38_no_tools_and_a_tools_list_hold_for_a_servers_tools() {
    let home = Home::new();
    write_config(home.dir.path(), ".rab/mcp.json", json!({"test": test_server(json!({}))}));
    let llm = FakeLlm::start();
    llm.script([Turn::text("chat only"), Turn::text("two tools"), Turn::text("all")]);
    let out = rab_p(&home, &llm, &["--no-tools", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(offered(&llm, 0), Vec::<String>::new());
    let out = rab_p(&home, &llm, &["--tools", "read,mcp__test__echo", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut second = offered(&llm, 1);
    second.retain(|n| n != "tool_search");
    assert_eq!(second, ["read", "mcp__test__echo"], "{second:?}");
    // `mcp__SERVER` keeps every tool of that server.
    llm.script([Turn::text("server")]);
    rab_p(&home, &llm, &["--tools", "read,mcp__test", "hi"]);
    let third = offered(&llm, 2);
    assert!(
        third.contains(&"mcp__test__add".to_owned()) && !third.contains(&"bash".to_owned()),
        "{third:?}"
    );
    // Without a choice, the server's tools are offered.
    rab_p(&home, &llm, &["hi"]);
    assert!(offered(&llm, 3).contains(&"mcp__test__add".to_owned()));
}

/// Issue 53: `rab mcp add|list|get|remove` edit the configuration files as Claude
/// Code's `claude mcp` does, and a server added so starts in the next session.
#[test]
fn rab_mcp_add_list_get_and_remove_edit_the_config_files() {
    let home = Home::new();
    let proj = home.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let mcp = |args: &[&str]| home.rab().current_dir(&proj).arg("mcp").args(args).output().unwrap();
    let server = rab_mcp::test_support::test_server_path();
    let server = server.to_str().unwrap();
    let out = mcp(&["add", "-e", "TOKEN=abc", "test", "--", server, "--flag"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let user = home.dir.path().join("rab/mcp.json");
    assert!(stdout(&out).contains(&format!("Added MCP server test to {}", user.display())));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(
        saved["mcpServers"]["test"],
        json!({"command": server, "args": ["--flag"], "env": {"TOKEN": "abc"}})
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&user).unwrap().permissions().mode() & 0o777, 0o600);
    let out = mcp(&[
        "add",
        "--scope",
        "project",
        "-t",
        "http",
        "-H",
        "Authorization: Bearer x",
        "docs",
        "https://example.com/mcp",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shared: Value =
        serde_json::from_str(&std::fs::read_to_string(proj.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        shared["mcpServers"]["docs"],
        json!({"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}})
    );
    let out = mcp(&["add", "test", "--", "other"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("already has a server \"test\""), "{}", stderr(&out));
    let out = mcp(&["add", "bad__name", "--", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let listed = stdout(&mcp(&["list"]));
    assert!(listed.contains("docs: http: https://example.com/mcp [project:"), "{listed}");
    assert!(listed.contains(&format!("test: stdio: {server} --flag [user:")), "{listed}");
    let got = stdout(&mcp(&["get", "test"]));
    assert!(got.contains("\"TOKEN\": \"abc\""), "{got}");
    // The added server starts in a session.
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(home.dir.path())
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    assert!(
        offered(&llm, 0).iter().any(|n| n.starts_with("mcp__test__")),
        "{:?}",
        offered(&llm, 0)
    );
    let out = mcp(&["remove", "test"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(saved["mcpServers"], json!({}));
    let out = mcp(&["get", "test"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Pids of processes whose environment holds `mark`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("RAB_TEST_MARK={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// Class 8 of the third containment audit: after SIGTERM or SIGHUP (or Ctrl+C) to rab
/// in the middle of a call that never answers, the MCP server and rab's sandbox helper
/// kept running. Every child ends with rab, sandboxed or not; under the namespace
/// sandbox even a SIGKILL to rab ends them (the helper watches rab).
#[test]
fn mcp_servers_end_with_rab_on_every_signal() {
    use nix::sys::signal::{Signal, kill};
    use std::time::{Duration, Instant};
    let namespaces = super::containment::has_namespaces();
    for sandbox in ["workspace-write", "off"] {
        let mut signals = vec![Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT];
        if sandbox != "off" && namespaces {
            signals.push(Signal::SIGKILL);
        }
        for signal in signals {
            let home = Home::new();
            let mark = format!("{}-{sandbox}-{signal}", std::process::id());
            write_config(
                home.dir.path(),
                ".rab/mcp.json",
                json!({"test": test_server(json!({"RAB_MCP_TEST_HOSTILE": "1", "RAB_TEST_MARK": mark}))}),
            );
            let llm = FakeLlm::start();
            llm.script([Turn::tool_call("mcp__test__hang", json!({})), Turn::text("never")]);
            let mut child = home
                .rab_for("anthropic-messages", &llm, Some("k"))
                .args(["-p", "--allowed-tools", "mcp__test", "--sandbox", sandbox, "hang"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let started = Instant::now();
            while llm.requests().is_empty() || marked(&mark).is_empty() {
                assert!(started.elapsed() < Duration::from_secs(20), "{sandbox} {signal}: no call");
                std::thread::sleep(Duration::from_millis(20));
            }
            // The call is under way.
            std::thread::sleep(Duration::from_millis(200));
            kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
            let stopped = Instant::now();
            while child.try_wait().unwrap().is_none() {
                assert!(stopped.elapsed() < Duration::from_secs(10), "{sandbox} {signal}: rab");
                std::thread::sleep(Duration::from_millis(20));
            }
            while !marked(&mark).is_empty() {
                assert!(
                    stopped.elapsed() < Duration::from_secs(10),
                    "{sandbox} {signal}: still running: {:?}",
                    marked(&mark)
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
