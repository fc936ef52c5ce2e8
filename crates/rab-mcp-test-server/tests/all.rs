//! The test server answers `initialize` over stdio. Being an integration test, this also
//! makes `cargo test --workspace` build the binary before other crates' tests use it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn answers_initialize_over_stdio() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rab-mcp-test-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    drop(stdin);
    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["serverInfo"]["name"], "rab-mcp-test-server");
    assert_eq!(reply["result"]["capabilities"]["tools"]["listChanged"], true);
    assert!(child.wait().unwrap().success());
}
