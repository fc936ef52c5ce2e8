//! Bytes of the first request (system prompt + tool schemas + a one-line prompt) that
//! the real binary sends, per wire format, with the 7 core tools and without tools.
//! Measured in a directory without AGENTS.md/CLAUDE.md.
//!
//! Run: `cargo bench -p rab --bench first_request`
#![allow(clippy::unwrap_used)]

use std::process::Command;

use rab_fake_llm::{FakeLlm, Turn};

fn first_request(wire: &str, extra: &[&str]) -> (usize, usize) {
    let home = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let (provider, key_var, base_var, base) = match wire {
        "anthropic-messages" => ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", llm.url()),
        "openai-responses" => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
        "openai-completions" => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
        _ => ("google", "GEMINI_API_KEY", "GEMINI_BASE_URL", llm.url()),
    };
    let out = Command::new(env!("CARGO_BIN_EXE_rab"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("RAB_HOME", home.path().join("rab"))
        .env(key_var, "k")
        .env(base_var, base)
        .current_dir(home.path())
        .args(["-p", "--no-session", "--provider", provider, "--api", wire])
        .args(extra)
        .arg("hi")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let req = &llm.requests()[0];
    let system = req.system().len();
    (req.raw.len(), system)
}

fn main() {
    println!("{:<22} {:>14} {:>12} {:>14}", "wire", "7 core tools", "no tools", "system prompt");
    for wire in
        ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"]
    {
        let (with_tools, system) = first_request(wire, &[]);
        let (no_tools, _) = first_request(wire, &["--no-tools"]);
        println!("{wire:<22} {with_tools:>12} B {no_tools:>10} B {system:>12} B");
    }
}
