//! What the permission gate adds to a tool call when no hook is configured: the
//! PreToolUse check (no hooks), the policy (12 rules of every kind), and after the call
//! the secret firewall over a 4 KB result (with 8 known secrets). Timed per call, for a
//! bash call, a read call and an edit call; the median of 20,000 calls each. Then the
//! check of a bash call (a compound command line) against 50 rules: 20 allow, 10 ask
//! and 20 deny rules, most of them for bash.
//!
//! Run: `cargo bench -p rab-core --bench gate`
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rab_agent::{AgentTool, BoxFuture, ToolContext, ToolError, ToolHook, ToolLevel, ToolOutput};
use rab_ai::{Content, ToolCall, ToolResultMessage};
use rab_config::{PermissionSettings, SafetyLayer, Scope};
use rab_core::hooks::HookRunner;
use rab_core::permissions::{PermissionMode, Policy, PolicyContext};
use rab_core::secrets::Redactor;
use rab_core::{Approval, ApprovalRequest, Approver, Gate, ModeSwitch};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

struct Never;
impl Approver for Never {
    fn approve<'a>(
        &'a self,
        _: ApprovalRequest,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Unavailable })
    }
}

/// A tool of a given level that is never run.
struct Fake(ToolLevel);
impl AgentTool for Fake {
    fn spec(&self) -> rab_ai::ToolSpec {
        rab_ai::ToolSpec {
            name: "fake".into(),
            description: String::new(),
            parameters: json!({}),
            grammar: None,
            server: None,
        }
    }
    fn level(&self) -> ToolLevel {
        self.0
    }
    fn execute(&self, _: Value, _: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("")) })
    }
}

fn v(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

/// The gate of the per-call figures: 12 rules of every kind.
fn gate() -> Gate {
    gate_with(PermissionSettings {
        allow: v(&[
            "bash(git status*)",
            "bash(cargo test*)",
            "bash(ls*)",
            "edit(src/**)",
            "read",
            "grep",
        ]),
        ask: v(&["bash(git push*)", "web_fetch(domain:example.com)"]),
        deny: v(&["read(~/.ssh/**)", "read(*.pem)", "bash(rm -rf*)", "mcp__gh__delete_repo"]),
        ..PermissionSettings::default()
    })
}

/// 50 rules, as a project that lists its commands might have.
fn fifty_rules() -> PermissionSettings {
    let allow = [
        "git status*",
        "git diff*",
        "git log*",
        "git show*",
        "cargo test*",
        "cargo build*",
        "cargo check*",
        "cargo clippy*",
        "cargo fmt*",
        "npm run build*",
        "npm test*",
        "ls*",
        "cat *",
        "head *",
        "tail *",
        "wc *",
        "make test*",
        "python3 -m pytest*",
    ];
    let ask = [
        "git push*",
        "git commit*",
        "npm publish*",
        "cargo publish*",
        "docker *",
        "kubectl *",
        "terraform *",
        "ssh *",
    ];
    let deny = [
        "rm *",
        "rmdir *",
        "shred *",
        "dd *",
        "mkfs*",
        "curl *",
        "wget *",
        "nc *",
        "chmod -R*",
        "chown *",
        "sudo *",
        "git reset --hard*",
        "git clean*",
        "git push -f*",
        "git push --force*",
        "npm install -g*",
    ];
    let bash = |l: &[&str]| l.iter().map(|p| format!("bash({p})")).collect::<Vec<_>>();
    let mut allow = bash(&allow);
    allow.extend(v(&["read", "grep"]));
    let mut ask = bash(&ask);
    ask.extend(v(&["web_fetch(domain:example.com)", "edit(.github/**)"]));
    let mut deny = bash(&deny);
    deny.extend(v(&["read(~/.ssh/**)", "read(*.pem)", "read(**/.env)", "mcp__gh__delete_repo"]));
    assert_eq!(allow.len() + ask.len() + deny.len(), 50);
    PermissionSettings { allow, ask, deny, ..PermissionSettings::default() }
}

fn gate_with(permissions: PermissionSettings) -> Gate {
    let layer = SafetyLayer {
        scope: Scope::Global,
        source: PathBuf::from("settings.json"),
        permissions,
        hooks: rab_config::HookSettings::new(),
    };
    let known = rab_core::tool_catalog::builtin(Path::new("/p"));
    let cx =
        PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/home/u")) };
    let policy = Policy::load(&[layer], &[], &[], &cx).unwrap();
    let secrets = (0..8).map(|i| (format!("KEY_{i}"), format!("secret-value-number-{i}-abcdef")));
    Gate::new(
        policy,
        Arc::new(ModeSwitch::new(PermissionMode::Default)),
        Arc::new(HookRunner::default()),
        Arc::new(Never),
        Some(Arc::new(Redactor::new(secrets))),
        (PathBuf::from("/nonexistent/answers.json"), PathBuf::from("/p")),
    )
}

fn result(call: &ToolCall) -> ToolResultMessage {
    let line = "src/main.rs:42:    let value = compute(input, &config); // nothing secret here\n";
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(line.repeat(4096 / line.len()))],
        is_error: false,
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let gate = gate();
    let cancel = CancellationToken::new();
    let calls: [(&str, Value, ToolLevel); 3] = [
        ("bash", json!({"command": "git status --short && cargo test -p x"}), ToolLevel::Execute),
        ("read", json!({"path": "src/main.rs"}), ToolLevel::ReadOnly),
        ("edit", json!({"path": "src/lib.rs", "edits": []}), ToolLevel::Edit),
    ];
    println!("{:<6} {:>12} {:>12} {:>12}", "call", "before (µs)", "after (µs)", "total (µs)");
    for (name, args, level) in calls {
        let call = ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args,
            invalid_arguments: None,
            signature: None,
            item_id: None,
        };
        let tool = Fake(level);
        let tool: &dyn AgentTool = &tool;
        let res = result(&call);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        rt.block_on(async {
            for _ in 0..20_000 {
                let t = Instant::now();
                let _ = gate.before(&call, tool, &cancel).await;
                before.push(t.elapsed().as_nanos() as f64 / 1000.0);
                let t = Instant::now();
                let _ = gate.after(&call, &res, &cancel).await;
                after.push(t.elapsed().as_nanos() as f64 / 1000.0);
            }
        });
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (b, a) = (median(&mut before), median(&mut after));
        println!("{name:<6} {b:>12.1} {a:>12.1} {:>12.1}", a + b);
    }
    let gate = gate_with(fifty_rules());
    let command = "git status --short && cargo test -p x 2>&1 | tail -n 20; ls src";
    let call = ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        arguments: json!({"command": command}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    };
    let tool = Fake(ToolLevel::Execute);
    let mut times = Vec::new();
    rt.block_on(async {
        for _ in 0..20_000 {
            let t = Instant::now();
            let _ = gate.before(&call, &tool, &cancel).await;
            times.push(t.elapsed().as_nanos() as f64 / 1000.0);
        }
    });
    times.sort_by(f64::total_cmp);
    println!("bash call checked against 50 rules: {:.1} µs (median)", times[times.len() / 2]);
}
