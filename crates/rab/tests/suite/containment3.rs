//! Issue 54, containment round 3: each class of the audit, tried as the attacker did.

use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{Home, Piped};

/// Class 9: a key given with `--api-key` is read, then hidden from
/// `/proc/<pid>/cmdline` (which every local user, and a command confined by Landlock
/// alone, can read); the requests still carry it. Both spellings of the option.
#[test]
fn a_key_on_the_command_line_is_hidden_from_the_process_list() {
    let key = "sk-given-on-the-command-line";
    for spelling in [vec!["--api-key", key], vec!["--api-key=sk-given-on-the-command-line"]] {
        let home = Home::new();
        let llm = FakeLlm::start();
        llm.require_api_key(Some(key));
        llm.script([Turn::text("ok")]);
        let mut cmd = home.rab();
        cmd.args(["--provider", "anthropic", "--mode", "rpc"])
            .args(&spelling)
            .env("ANTHROPIC_BASE_URL", llm.url());
        let mut rpc = Piped::spawn(cmd);
        rpc.send(r#"{"type": "get_state"}"#);
        rpc.wait("get_state response", |v| v["command"] == "get_state");
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", rpc.child.id())).unwrap();
        let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(!shown.contains(key), "{shown}");
        assert!(shown.contains("--api-key"), "{shown}");
        // The key itself was read before it was hidden: the request carries it (the fake
        // server refuses any other key).
        rpc.send(r#"{"type": "prompt", "message": "hi"}"#);
        let end = rpc.wait("agent_end", |v| v["type"] == "agent_end");
        assert!(!end.to_string().contains("401"), "{end}");
        assert_eq!(llm.requests().len(), 1);
        assert_eq!(llm.requests()[0].status, 200);
        rpc.end();
    }
}
