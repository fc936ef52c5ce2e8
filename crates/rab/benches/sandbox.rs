//! What the sandbox adds to a bash call, and what the trust check adds to start-up.
//!
//! Sandbox: `sh -c true` spawned and waited for directly; through rab's helper under
//! Landlock alone (`rab __sandbox --write … -- sh -c true`: one more exec, building the
//! ruleset); through the namespace sandbox (one more exec of rab, new namespaces, the
//! view built: read-only root, private `/tmp`, workspace, tool caches, protected paths
//! of a git repository, rab's home hidden; a keeper process as the PID namespace's
//! first); and the same in two stages, as on kernels before 6.16 (a second exec of rab). The helper's arguments come from
//! `Sandbox::wrap`, as the bash tool makes them, so the protected-path plan is timed too.
//! Also: the namespace probe rab runs once at start-up. Medians of 300 runs each (50 for
//! the probe).
//!
//! Run: `cargo bench -p rab --bench sandbox`
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rab_tools::{Sandbox, SandboxMode};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..10 {
        f();
    }
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// Runs `sh -c true` as the bash tool would under `sandbox`; with `two_stage`, the way
/// the helper builds the view on kernels before 6.16.
fn run(sandbox: &Sandbox, ws: &Path, two_stage: bool) {
    let (program, mut args) = sandbox.wrap("sh", &["-c", "true"]);
    if two_stage {
        args.insert(1, "--two-stage".into());
    }
    assert!(Command::new(program).args(args).current_dir(ws).status().unwrap().success());
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let rab = PathBuf::from(env!("CARGO_BIN_EXE_rab"));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    Command::new("git").args(["init", "-q"]).current_dir(&ws).status().unwrap();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let caches = rab_tools::sandbox::tool_caches(Some(&home), |v| std::env::var(v).ok());
    let private = rab_tools::sandbox::PrivateDir::create(dir.path()).unwrap();
    let rab_home = dir.path().join("rab-home");
    std::fs::create_dir_all(&rab_home).unwrap();
    let base = Sandbox::new(
        SandboxMode::WorkspaceWrite,
        std::slice::from_ref(&ws),
        &[PathBuf::from("/tmp")],
    )
    .with_caches(&caches)
    .with_network(true)
    .with_helper(Some(rab.clone()))
    .with_home(Some(home))
    .with_hidden(&[rab_home])
    .with_private_dir(Some(Arc::new(private)));
    let landlock = base.clone().with_namespaces(false);
    let namespaces = base.with_namespaces(true);
    let direct = time(300, || {
        assert!(Command::new("sh").args(["-c", "true"]).status().unwrap().success());
    });
    let alone = time(300, || run(&landlock, &ws, false));
    let probe = rab_tools::sandbox::probe_namespaces(&rab);
    println!("bash call, sh -c true, median of 300:");
    println!("  direct:                 {:>7.2} ms", ms(direct));
    println!("  Landlock alone:         {:>7.2} ms (+{:.2} ms)", ms(alone), ms(alone) - ms(direct));
    if probe.is_available {
        let boxed = time(300, || run(&namespaces, &ws, false));
        println!(
            "  namespaces + Landlock:  {:>7.2} ms (+{:.2} ms)",
            ms(boxed),
            ms(boxed) - ms(direct)
        );
        let staged = time(300, || run(&namespaces, &ws, true));
        println!(
            "  the same in two stages: {:>7.2} ms (+{:.2} ms; kernels before 6.16)",
            ms(staged),
            ms(staged) - ms(direct)
        );
        let probing = time(50, || {
            std::hint::black_box(rab_tools::sandbox::probe_namespaces(&rab));
        });
        println!("namespace probe at start-up, median of 50: {:.2} ms", ms(probing));
    } else {
        println!("  namespaces: not available here ({:?})", probe.why_not);
    }
    // The trust decision at start-up: canonicalise the folder, read the store.
    let store = dir.path().join("trusted.json");
    let folders: Vec<String> = (0..200).map(|i| format!("/home/u/src/project-{i}")).collect();
    std::fs::write(
        &store,
        serde_json::json!({"trusted": folders, "untrusted": ["/home/u/Downloads"]}).to_string(),
    )
    .unwrap();
    let cwd = dir.path().join("work/repo");
    std::fs::create_dir_all(&cwd).unwrap();
    let trust = time(300, || {
        let real = rab_config::canonical_dir(&cwd);
        let s = rab_config::TrustStore::load(&store).unwrap();
        std::hint::black_box(s.lookup(&real));
    });
    println!(
        "trust check at start-up (200 remembered folders): {:.1} µs",
        trust.as_secs_f64() * 1e6
    );
    // An untrusted folder that brings settings: what it would enable is read once more
    // (the project's settings loaded without trust) to name it.
    std::fs::create_dir_all(cwd.join(".rab")).unwrap();
    let project = serde_json::json!({
        "permissions": {"allow": ["bash"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]},
    });
    std::fs::write(cwd.join(".rab/settings.json"), project.to_string()).unwrap();
    let env = rab_config::Env::from_pairs(Vec::<(String, String)>::new());
    let global = dir.path().join("settings.json");
    let offers = time(300, || {
        let l = rab_config::load_settings(&global, &cwd, &env, false).unwrap();
        std::hint::black_box(l.ignored.len());
    });
    println!(
        "naming what an untrusted folder brings (its settings read again): {:.1} µs",
        offers.as_secs_f64() * 1e6
    );
}
