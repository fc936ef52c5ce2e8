//! What the wall-time benches and the instruction-count gate (`callgrind.rs`) share.
// Each bench uses a part of this file.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use rab_config::{PermissionSettings, SafetyLayer, Scope};
use rab_core::permissions::{Policy, PolicyContext};

/// A policy of 50 rules (20 allow, 10 ask, 20 deny) of the bash, path and domain kinds,
/// as a user's settings would hold.
pub fn policy() -> Policy {
    let mut allow: Vec<String> = [
        "git status:*",
        "git diff:*",
        "git log:*",
        "cargo test:*",
        "cargo build:*",
        "cargo clippy:*",
        "ls:*",
        "cat:*",
        "grep:*",
        "rg:*",
        "echo:*",
        "head:*",
        "tail:*",
        "wc:*",
        "sort:*",
        "uniq:*",
        "find . -name:*",
        "make:*",
    ]
    .iter()
    .map(|c| format!("bash({c})"))
    .collect();
    allow.extend(["edit(src/**)".to_owned(), "read".to_owned()]);
    let mut ask: Vec<String> = [
        "git push:*",
        "git commit:*",
        "npm publish:*",
        "docker run:*",
        "kubectl *",
        "terraform apply*",
        "ssh *",
        "scp *",
    ]
    .iter()
    .map(|c| format!("bash({c})"))
    .collect();
    ask.extend(["web_fetch(domain:example.com)".to_owned(), "write(docs/**)".to_owned()]);
    let mut deny: Vec<String> = [
        "rm -rf *",
        "rm *",
        "sudo *",
        "curl *",
        "wget *",
        "dd *",
        "mkfs*",
        "shutdown*",
        "reboot*",
        "chmod 777 *",
        "chown *",
        "git push --force*",
        "git reset --hard*",
        "nc *",
        "eval *",
        "python -c *",
    ]
    .iter()
    .map(|c| format!("bash({c})"))
    .collect();
    deny.extend(
        ["read(~/.ssh/**)", "read(*.pem)", "read(.env)", "edit(.git/**)"].map(String::from),
    );
    assert_eq!(allow.len() + ask.len() + deny.len(), 50);
    let layer = SafetyLayer {
        scope: Scope::Global,
        source: PathBuf::from("settings.json"),
        permissions: PermissionSettings { allow, ask, deny, ..PermissionSettings::default() },
        hooks: rab_config::HookSettings::new(),
    };
    let known = rab_core::tool_catalog::builtin(Path::new("/p"));
    let cx = PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/h")) };
    Policy::load(&[layer], &[], &[], &cx).unwrap()
}
