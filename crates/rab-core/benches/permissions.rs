//! The permission check of one bash call with 50 rules (20 allow, 10 ask, 20 deny, of
//! the bash, path and domain kinds), for commands of growing shape: a plain command, a
//! chain with a pipe and a substitution, `sh -c` with wrappers, and a 60-line heredoc
//! script. Every check parses the command with the shell parser and matches every
//! simple command's forms against the rules. The median and the 99th percentile of
//! 5,000 checks each.
//!
//! Run: `cargo bench -p rab-core --bench permissions`
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use rab_agent::ToolLevel;
use rab_core::permissions::{PermissionMode, Policy, PolicyContext};
use serde_json::json;

fn empty() -> Policy {
    let known = rab_core::tool_catalog::builtin(Path::new("/p"));
    let cx = PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/h")) };
    Policy::load(&[], &[], &[], &cx).unwrap()
}

mod common;

fn main() {
    let with_rules = common::policy();
    let without = empty();
    let script: String = (0..60)
        .map(|i| {
            format!("echo \"step {i}\" && cargo test -p crate{i} -- --nocapture 2>&1 | tail -5\n")
        })
        .collect();
    let cases = [
        ("plain", "git status --short".to_owned()),
        ("chain", "cargo test 2>&1 | grep -v warning && echo \"done at $(date)\"".to_owned()),
        (
            "wrapped",
            "timeout 60 env RUST_LOG=debug sh -c 'cargo build && ls -la target'".to_owned(),
        ),
        ("heredoc", format!("bash <<'EOF'\n{script}EOF")),
    ];
    println!("permission check per bash call, 5,000 checks each");
    for ((name, cmd), (p, rules)) in
        cases.iter().flat_map(|c| [(c, (&with_rules, "50 rules")), (c, (&without, "no rules"))])
    {
        let args = json!({ "command": cmd });
        for _ in 0..200 {
            std::hint::black_box(p.check(
                PermissionMode::Default,
                "bash",
                ToolLevel::Execute,
                &args,
            ));
        }
        let mut times: Vec<Duration> = (0..5000)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(p.check(
                    PermissionMode::Default,
                    "bash",
                    ToolLevel::Execute,
                    &args,
                ));
                t.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{name:>8} ({:>4} bytes), {rules}: median {:>7.1} µs, p99 {:>7.1} µs",
            cmd.len(),
            times[times.len() / 2].as_secs_f64() * 1e6,
            times[times.len() * 99 / 100].as_secs_f64() * 1e6,
        );
    }
}
