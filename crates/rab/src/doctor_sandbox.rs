//! `rab doctor`'s sandbox section: each layer of the sandbox as it would be set up in
//! this folder — namespaces, Landlock and its scopes, protected paths, hidden paths,
//! the private `/tmp`, network, process hardening — enforced or not, and why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rab_config::{Env, Paths, Settings};
use rab_tools::sandbox::{self, protected};

use crate::cli::Cli;

/// The section's text.
pub fn report(
    cli: &Cli,
    env: &Env,
    paths: &Paths,
    cwd: &Path,
    settings: Option<&Settings>,
) -> String {
    let mut out = String::new();
    let landlock = sandbox::landlock_support();
    let chosen = cli.sandbox.clone().or_else(|| settings?.sandbox.mode.clone());
    let (mode, why) = match chosen {
        Some(m) => (m, "chosen"),
        None if landlock.files => ("workspace-write".to_owned(), "default"),
        None => ("off".to_owned(), "default without Landlock"),
    };
    let network = settings.and_then(|s| s.sandbox.network).unwrap_or(true);
    let _ = writeln!(out, "sandbox: {mode} ({why})");
    let is_on = mode != "off";
    let ns = match (is_on, std::env::current_exe()) {
        (true, Ok(exe)) => sandbox::probe_namespaces(&exe),
        (true, Err(e)) => sandbox::NamespaceSupport::not_tried(&format!("no rab executable: {e}")),
        (false, _) => sandbox::NamespaceSupport::not_tried("the sandbox is off"),
    };
    let layer = |on: bool| if on { "enforced" } else { "NOT enforced" };
    if ns.is_available {
        let net = if network { "" } else { ", network" };
        let _ = writeln!(out, "  namespaces: enforced (user, mount, PID, IPC{net} per command)");
    } else {
        let why = ns.why_not.clone().unwrap_or_default();
        let _ = writeln!(out, "  namespaces: NOT enforced: {why}");
        if let Some(fix) = &ns.fix {
            let _ = writeln!(out, "    to enable: {fix}");
        }
    }
    if landlock.files {
        let mut enforced = vec!["files"];
        enforced.extend(landlock.truncate.then_some("truncate"));
        enforced.extend(landlock.network.then_some("network"));
        enforced.extend(landlock.ioctl.then_some("ioctl"));
        enforced.extend(landlock.scopes.then_some("abstract-socket and signal scopes"));
        let _ = writeln!(out, "  Landlock: ABI {}: {}", landlock.abi, enforced.join(", "));
        let missing = landlock.missing(!network);
        if !missing.is_empty() && is_on {
            let _ = writeln!(out, "    not enforced here: {}", missing.join(", "));
        }
    } else {
        let _ = writeln!(out, "  Landlock: NOT available; commands can write anywhere you can");
    }
    let in_view = is_on && ns.is_available;
    let existing: Vec<&str> =
        protected::UNDER_ROOT.iter().copied().filter(|p| cwd.join(p).exists()).collect();
    let _ = writeln!(
        out,
        "  protected paths: {} to commands (read-only); every file-tool write asks, in every \
         mode",
        layer(in_view && mode == "workspace-write")
    );
    let _ = writeln!(out, "    {}", protected::UNDER_ROOT.join(", "));
    let _ = writeln!(
        out,
        "    here: {}",
        if existing.is_empty() { "none yet".to_owned() } else { existing.join(", ") }
    );
    let _ = writeln!(out, "    and in your home: {}", protected::UNDER_HOME.join(", "));
    let mut hidden = vec![format!("{} (rab's home)", paths.home().display())];
    let deny_reads: Vec<String> = settings
        .map(|s| s.permissions.deny.iter().filter(|r| r.starts_with("read(")).cloned().collect())
        .unwrap_or_default();
    hidden.extend(deny_reads.iter().map(|r| format!("what {r} covers")));
    let _ = writeln!(out, "  hidden from commands: {}: {}", layer(in_view), hidden.join(", "));
    let _ = writeln!(
        out,
        "  private /tmp and /run/user (no tmux, ssh-agent, D-Bus or other servers' sockets): {}",
        layer(in_view)
    );
    let _ = writeln!(
        out,
        "  removed from commands' environment: the keys rab uses, {}",
        sandbox::SERVER_ENV.join(", ")
    );
    let net = match (network, in_view) {
        (true, _) => "allowed".to_owned(),
        (false, true) => "blocked (own network namespace with loopback only, and Landlock)".into(),
        (false, false) => format!("blocked by Landlock: {}", layer(landlock.network)),
    };
    let _ = writeln!(out, "  network: {net}");
    let _ = writeln!(
        out,
        "  rab's process: {} (its memory and environment are closed to other processes)",
        if sandbox::hardening::is_dumpable() { "dumpable: NOT hardened" } else { "not dumpable" }
    );
    if is_on {
        let home = env.get("HOME").map(PathBuf::from);
        let caches = sandbox::tool_caches(home.as_deref(), |v| env.get(v).map(str::to_owned));
        let present: Vec<String> =
            caches.iter().filter(|c| c.exists()).map(|c| c.display().to_string()).collect();
        let writes = if mode == "read-only" {
            "the private /tmp only"
        } else {
            "the folder, the private /tmp"
        };
        let _ = writeln!(out, "  commands write: {writes}");
        if mode == "workspace-write" {
            let list = if present.is_empty() { "none here".to_owned() } else { present.join(", ") };
            let _ = writeln!(out, "  tool caches writable: {list}");
        }
    }
    out
}
