//! Loading `mcp.json` files: shapes, precedence, variables and errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rab_mcp::{ServerConfig, Transport, config};

fn env(name: &str) -> Option<String> {
    match name {
        "HOME_DIR" => Some("/home/me".into()),
        "TOKEN" => Some("s3cret".into()),
        _ => None,
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(files: &[PathBuf]) -> (Result<Vec<ServerConfig>, rab_mcp::Error>, Vec<String>) {
    let mut warnings = Vec::new();
    (config::load(files, &env, &mut warnings), warnings)
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

#[test]
fn the_first_file_wins_and_later_duplicates_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let project = write(
        dir.path(),
        "project.json",
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "fs", "${HOME_DIR}"], "timeout": 5000, "toolTimeout": 120000}}}"#,
    );
    let global = write(
        dir.path(),
        "global.json",
        r#"{"servers": {
            "files": {"command": "other"},
            "remote": {"type": "http", "url": "https://x.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "off": {"command": "x", "disabled": true, "env": {"LEVEL": "${LEVEL:-3}"}, "cwd": "sub"}
        }}"#,
    );
    let missing = dir.path().join("missing.json");
    let (servers, warnings) = load(&[project.clone(), missing, global.clone()]);
    assert_eq!(
        servers.unwrap(),
        [
            ServerConfig {
                name: "files".into(),
                transport: Transport::Stdio {
                    command: "npx".into(),
                    args: vec!["-y".into(), "fs".into(), "/home/me".into()],
                    env: BTreeMap::new(),
                    cwd: None,
                },
                source: project.clone(),
                startup_timeout: Some(Duration::from_millis(5000)),
                tool_timeout: Some(Duration::from_secs(120)),
                disabled: false,
                problem: None,
            },
            ServerConfig {
                name: "remote".into(),
                transport: Transport::Http {
                    url: "https://x.test/mcp".into(),
                    headers: map(&[("Authorization", "Bearer s3cret")]),
                    is_legacy_sse: false,
                },
                source: global.clone(),
                startup_timeout: None,
                tool_timeout: None,
                disabled: false,
                problem: None,
            },
            ServerConfig {
                name: "off".into(),
                transport: Transport::Stdio {
                    command: "x".into(),
                    args: vec![],
                    env: map(&[("LEVEL", "3")]),
                    cwd: Some("sub".into()),
                },
                source: global.clone(),
                startup_timeout: None,
                tool_timeout: None,
                disabled: true,
                problem: None,
            },
        ]
    );
    assert_eq!(
        warnings,
        [format!(
            "MCP server `files` is defined in both {} and {}; using the one in {}",
            project.display(),
            global.display(),
            project.display()
        )]
    );
}

#[test]
fn an_unset_variable_marks_the_server_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "mcp.json",
        r#"{"mcpServers": {"gh": {"url": "https://x.test/sse", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}, "ok": {"command": "y"}}}"#,
    );
    let servers = load(std::slice::from_ref(&path)).0.unwrap();
    assert_eq!(servers.len(), 2);
    assert_eq!(
        servers[0].problem.as_deref(),
        Some(
            format!(
                "environment variable `GH_TOKEN` (used in `headers.Authorization` in {}) is not \
                 set; set it or write ${{GH_TOKEN:-default}}",
                path.display()
            )
            .as_str()
        )
    );
    assert!(matches!(servers[0].transport, Transport::Http { is_legacy_sse: true, .. }));
    assert_eq!(servers[1].problem, None);
}

#[test]
fn errors_name_the_file_the_server_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            r#"{"mcpServers": {"a": {"command": "x", "type": "websocket"}}}"#,
            "server `a`: field `type` is `websocket`; use `stdio`",
        ),
        (
            r#"{"mcpServers": {"b": {"args": ["x"]}}}"#,
            "server `b`: field `command` is missing: set `command` (a program to run) or `url`",
        ),
        (
            r#"{"mcpServers": {"c": {"command": "x", "url": "http://h/mcp"}}}"#,
            "server `c`: field `command` and `url` are both set",
        ),
        (
            r#"{"mcpServers": {"d": {"command": "x", "args": "-y"}}}"#,
            "server `d`: field `args` must be an array of strings",
        ),
        (
            r#"{"mcpServers": {"e": {"command": "x", "timeout": "5s"}}}"#,
            "server `e`: field `timeout` must be a whole number of milliseconds",
        ),
        (
            r#"{"mcpServers": {"f": {"command": "x", "env": {"A": 1}}}}"#,
            "server `f`: field `env` must be an object of strings",
        ),
        (r#"{"mcpServers": []}"#, "`mcpServers` must be an object mapping server names"),
        (
            r#"{"mcpServers": {"#,
            "invalid JSON at line 1, column 16: EOF while parsing an object; fix the syntax",
        ),
    ];
    for (text, expected) in cases {
        let path = write(dir.path(), "mcp.json", text);
        let err = load(std::slice::from_ref(&path)).0.unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}: ", path.display())), "{err}");
        assert!(err.contains(expected), "{err}\nexpected: {expected}");
    }
}

/// The rab seed's list form: names come from an entry's `name`, the package a runner
/// starts, the command's file name or the URL's host, made unique with `-2`.
#[test]
fn the_seeds_list_form_is_read_with_names_made_from_each_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "mcp.json",
        r#"{"servers": [
            {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@1.2", "/tmp"]},
            {"url": "https://mcp.example.com/sse"},
            {"command": "/opt/bin/git-mcp"},
            {"command": "uvx", "args": ["--from", "x", "tools.py"]},
            {"name": "mine", "command": "x"},
            {"command": "/usr/local/bin/git-mcp"}
        ]}"#,
    );
    let servers = load(std::slice::from_ref(&path)).0.unwrap();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["server-filesystem", "mcp.example.com", "git-mcp", "x", "mine", "git-mcp-2"],
        "`--from x`: the first word that is not an option"
    );
    assert!(matches!(&servers[1].transport, Transport::Http { is_legacy_sse: true, .. }));
    let bad = write(dir.path(), "bad.json", r#"{"mcpServers": [{"command": "x"}]}"#);
    let err = load(&[bad]).0.unwrap_err().to_string();
    assert!(err.contains("`mcpServers` must be an object mapping server names"), "{err}");
    let bad = write(dir.path(), "bad2.json", r#"{"servers": 3}"#);
    let err = load(&[bad]).0.unwrap_err().to_string();
    assert!(err.contains("or a list of such settings"), "{err}");
}
