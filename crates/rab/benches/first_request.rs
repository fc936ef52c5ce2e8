//! Bytes of the first request (system prompt + tool schemas + a one-line prompt) that
//! the real binary sends, per wire format: with the 7 core tools (the toolset before
//! the Claude-Code-class tools), with every built-in tool (the REPL, which also has the
//! cron tools) sent through the progressive tool view and sent in full
//! (`"toolSearch": false`), and without tools. rab leaves the view off when it would
//! not save more than tool_search's own schema costs. Measured in a directory without
//! AGENTS.md/CLAUDE.md.
//!
//! Run: `cargo build --release -p rab-mcp-test-server && cargo bench -p rab --bench
//! first_request` (the MCP columns use the test server found in target/release, built
//! only when missing, so rebuild it after changing it).
#![allow(clippy::unwrap_used)]

use std::process::Command;

use rab_fake_llm::{FakeLlm, Turn};

const CORE: &str = "read,write,edit,bash,grep,glob,ls";

/// How rab is run for one column.
#[derive(Clone, Copy)]
enum Run {
    Print(&'static [&'static str]),
    /// Print mode (which waits for MCP servers) with the in-repo MCP test server offering
    /// 50 tools, `toolSearch` as given.
    Mcp {
        tool_search: bool,
    },
    /// The REPL with every tool, `toolSearch` as given.
    Repl {
        tool_search: bool,
    },
    /// Print mode with `--model` and settings `editTool` as given.
    EditTool {
        model: &'static str,
        edit_tool: &'static str,
    },
}

fn first_request(wire: &str, run: Run) -> (usize, usize, usize) {
    let home = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let (provider, key_var, base_var, base) = match wire {
        "anthropic-messages" => ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", llm.url()),
        "openai-responses" => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
        "openai-completions" => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
        _ => ("google", "GEMINI_API_KEY", "GEMINI_BASE_URL", llm.url()),
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rab"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("RAB_HOME", home.path().join("rab"))
        .env(key_var, "k")
        .env(base_var, base)
        .current_dir(home.path())
        .args(["--no-session", "--provider", provider, "--api", wire]);
    let settings = |tool_search: bool| {
        let settings = home.path().join(".rab/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, format!("{{\"toolSearch\": {tool_search}}}")).unwrap();
    };
    let out = match run {
        Run::Print(extra) => cmd.arg("-p").args(extra).arg("hi").output().unwrap(),
        Run::Mcp { tool_search } => {
            settings(tool_search);
            // The test server has 7 tools of its own; 43 generated ones make 50.
            let server = serde_json::json!({"mcpServers": {"tracker": {
                "command": rab_mcp::test_support::test_server_path(),
                "env": {"RAB_MCP_TEST_TOOLS": "43"},
            }}});
            std::fs::write(home.path().join(".rab/mcp.json"), server.to_string()).unwrap();
            cmd.arg("-p").arg("hi").output().unwrap()
        }
        Run::EditTool { model, edit_tool } => {
            let settings = home.path().join(".rab/settings.json");
            std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
            std::fs::write(&settings, format!("{{\"editTool\": \"{edit_tool}\"}}")).unwrap();
            cmd.args(["--model", model, "-p", "hi"]).output().unwrap()
        }
        Run::Repl { tool_search } => {
            settings(tool_search);
            let mut child = cmd
                .arg("--repl")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"hi\n").unwrap();
            child.wait_with_output().unwrap()
        }
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let req = &llm.requests()[0];
    let tools = req.body.get("tools").map_or(0, |t| t.to_string().len());
    let tools_json = req.body.get("tools").and_then(|t| t.as_array());
    // Gemini nests the declarations in one tools entry.
    let count = match tools_json.and_then(|t| t.first()).and_then(|t| t.get("functionDeclarations"))
    {
        Some(decls) => decls.as_array().map_or(0, Vec::len),
        None => tools_json.map_or(0, Vec::len),
    };
    (req.raw.len(), tools, count)
}

fn main() {
    println!(
        "{:<22} {:>12} {:>22} {:>22} {:>10}",
        "wire", "7 core tools", "all tools, progressive", "all tools, full", "no tools"
    );
    for wire in
        ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"]
    {
        let (core, _, _) = first_request(wire, Run::Print(&["--tools", CORE]));
        let (view, _, n) = first_request(wire, Run::Repl { tool_search: true });
        let (full, _, n_full) = first_request(wire, Run::Repl { tool_search: false });
        let (none, _, _) = first_request(wire, Run::Print(&["--no-tools"]));
        println!(
            "{wire:<22} {core:>10} B {:>22} {:>22} {none:>8} B",
            format!("{view} B ({n} tools)"),
            format!("{full} B ({n_full} tools)")
        );
    }
    println!("\nThe file-editing tools of a GPT model (print mode, gpt-6.1-sol):");
    println!("{:<22} {:>28} {:>28}", "wire", "apply_patch", "edit + write");
    for wire in ["openai-responses", "openai-completions"] {
        let model = "gpt-6.1-sol";
        let (patch, patch_tools, _) =
            first_request(wire, Run::EditTool { model, edit_tool: "apply_patch" });
        let (edit, edit_tools, _) = first_request(wire, Run::EditTool { model, edit_tool: "edit" });
        println!(
            "{wire:<22} {:>28} {:>28}",
            format!("{patch} B (tools {patch_tools} B)"),
            format!("{edit} B (tools {edit_tools} B)")
        );
    }
    println!("\nWith an MCP server offering 50 tools (print mode, whose built-in tools are 22):");
    println!(
        "{:<22} {:>16} {:>26} {:>26} {:>12} {:>12}",
        "wire", "no MCP", "MCP, progressive", "MCP, full", "added, prog.", "added, full"
    );
    for wire in
        ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"]
    {
        let (base, _, n_base) = first_request(wire, Run::Print(&[]));
        let (view, _, n) = first_request(wire, Run::Mcp { tool_search: true });
        let (full, _, n_full) = first_request(wire, Run::Mcp { tool_search: false });
        println!(
            "{wire:<22} {:>16} {:>26} {:>26} {:>10} B {:>10} B",
            format!("{base} B ({n_base})"),
            format!("{view} B ({n} tools)"),
            format!("{full} B ({n_full} tools)"),
            view as i64 - base as i64,
            full as i64 - base as i64,
        );
    }
}
