//! The official reference servers, when CI installed them with npm (skipped otherwise).

use serde_json::json;

use super::*;

fn node_server(name: &str, server: &str, args: &[&str]) -> Option<rab_mcp::ServerConfig> {
    let Some(entry) = rab_mcp::test_support::reference_server(server) else {
        eprintln!(
            "skipping: @modelcontextprotocol/server-{server} is not installed in target/mcp-reference"
        );
        return None;
    };
    let mut all = vec![entry.to_str().unwrap()];
    all.extend(args);
    Some(stdio(name, "node".into(), &all, &[]))
}

#[tokio::test]
async fn everything_server_echo() {
    let Some(config) = node_server("everything", "everything", &["stdio"]) else { return };
    let manager = start_ready(vec![config]).await;
    assert_eq!(
        state(&manager, "everything"),
        rab_mcp::ServerState::Ready,
        "{:?}",
        manager.servers()
    );
    let out = call(&manager.tool_source(), "mcp__everything__echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "Echo: hi");
}

#[tokio::test]
async fn filesystem_server_lists_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(config) = node_server("fs", "filesystem", &[root.to_str().unwrap()]) else { return };
    let manager = start_ready(vec![config]).await;
    assert_eq!(state(&manager, "fs"), rab_mcp::ServerState::Ready, "{:?}", manager.servers());
    let out = call(
        &manager.tool_source(),
        "mcp__fs__list_directory",
        json!({"path": root.to_str().unwrap()}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "[FILE] a.txt");
}
