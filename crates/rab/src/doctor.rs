//! `rab doctor`: what protects this folder, and what configures it. The sandbox as it
//! would be set up here (and what this kernel's Landlock enforces), whether the folder
//! is trusted, the settings files in effect, and what was ignored in them.

use std::fmt::Write as _;
use std::path::Path;

use rab_config::{Env, Paths};

use crate::cli::Cli;

/// Prints the report; exit 0, or 2 when a settings file is broken (named in the report).
pub fn run(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> u8 {
    let (text, code) = report(cli, env, paths, cwd);
    print!("{}", crate::term::safe(&text));
    code
}

fn report(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> (String, u8) {
    let mut out = String::new();
    let mut code = crate::EXIT_OK;
    let _ = writeln!(out, "rab {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "folder: {}", cwd.display());
    // Trust.
    let trust = crate::trust::decide(cli, env, paths, cwd);
    match &trust {
        Ok(t) if t.trusted => {
            let how = if t.remembered { "remembered" } else { "for this run" };
            let _ = writeln!(out, "trust: trusted ({how})");
        }
        Ok(_) => {
            let offers = crate::trust::offers(env, paths, cwd);
            if offers.is_empty() {
                let _ = writeln!(out, "trust: not trusted (it brings nothing that needs trust)");
            } else {
                let _ = writeln!(out, "trust: not trusted; ignored until `rab trust`:");
                for o in offers {
                    let _ = writeln!(out, "  {o}");
                }
            }
        }
        Err(e) => {
            let _ = writeln!(out, "trust: unknown ({e})");
        }
    }
    let trusted = trust.as_ref().is_ok_and(|t| t.trusted);
    // Settings.
    let loaded = rab_config::load_settings(&paths.settings_file(), cwd, env, trusted);
    let settings = match loaded {
        Ok(l) => {
            let _ = writeln!(out, "settings files in effect:");
            if l.files.is_empty() {
                let _ = writeln!(out, "  none (defaults)");
            }
            for f in &l.files {
                let _ = writeln!(out, "  {}", f.display());
            }
            for w in &l.warnings {
                let _ = writeln!(out, "  warning: {w}");
            }
            // What they asked for and did not get is listed under trust above.
            Some(l.settings)
        }
        Err(e) => {
            let _ = writeln!(out, "settings: {e}");
            code = crate::EXIT_USAGE;
            None
        }
    };
    // Sandbox.
    let landlock = rab_tools::sandbox::landlock_support();
    let chosen = cli.sandbox.clone().or_else(|| settings.as_ref()?.sandbox.mode.clone());
    let (mode, why) = match chosen {
        Some(m) => (m, "chosen"),
        None if landlock.files => ("workspace-write".to_owned(), "default"),
        None => ("off".to_owned(), "default without Landlock"),
    };
    let network = settings.as_ref().and_then(|s| s.sandbox.network).unwrap_or(true);
    let _ = writeln!(out, "sandbox: {mode} ({why})");
    if landlock.files {
        let mut enforced = vec!["files"];
        enforced.extend(landlock.truncate.then_some("truncate"));
        enforced.extend(landlock.network.then_some("network"));
        enforced.extend(landlock.ioctl.then_some("ioctl"));
        let _ = writeln!(out, "  Landlock enforces: {}", enforced.join(", "));
        let missing = landlock.missing(!network);
        if !missing.is_empty() && mode != "off" {
            let _ = writeln!(out, "  not enforced here: {}", missing.join(", "));
        }
    } else {
        let _ = writeln!(
            out,
            "  Landlock: not available; commands run unconfined (file tools still check paths)"
        );
    }
    if mode != "off" {
        let home = env.get("HOME").map(std::path::PathBuf::from);
        let caches =
            rab_tools::sandbox::tool_caches(home.as_deref(), |v| env.get(v).map(str::to_owned));
        let present: Vec<String> =
            caches.iter().filter(|c| c.is_dir()).map(|c| c.display().to_string()).collect();
        let writes = if mode == "read-only" { "temp dir only" } else { "the folder, temp dir" };
        let _ = writeln!(out, "  commands write: {writes}");
        if mode == "workspace-write" && !present.is_empty() {
            let _ = writeln!(out, "  tool caches writable: {}", present.join(", "));
        }
        let _ = writeln!(out, "  network: {}", if network { "allowed" } else { "blocked" });
    }
    (out, code)
}
