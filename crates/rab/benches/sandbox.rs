//! What the sandbox adds to a bash call, and what the trust check adds to start-up.
//!
//! Sandbox: `sh -c true` spawned and waited for directly, and through rab's Landlock
//! helper (`rab __sandbox --write … -- sh -c true`: a second exec, building the
//! ruleset, restricting itself) as the bash tool does under workspace-write with the
//! default tool caches. Trust: `rab doctor`-free start-up work of deciding trust
//! (canonicalising the folder, reading `~/.rab/trusted.json` with 200 remembered
//! folders) is timed in-process. Medians of 300 runs each.
//!
//! Run: `cargo bench -p rab --bench sandbox`
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::{Duration, Instant};

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

fn main() {
    let rab = env!("CARGO_BIN_EXE_rab");
    let dir = tempfile::tempdir().unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mut helper_args: Vec<String> = vec!["__sandbox".into()];
    for w in [dir.path().to_str().unwrap(), "/tmp"]
        .into_iter()
        .map(String::from)
        .chain([".cache", ".cargo", ".rustup", ".npm"].iter().map(|c| format!("{home}/{c}")))
        .filter(|d| std::path::Path::new(d).is_dir())
    {
        helper_args.push("--write".into());
        helper_args.push(w);
    }
    helper_args.push("--net".into());
    helper_args.extend(["--", "sh", "-c", "true"].map(String::from));
    let direct = time(300, || {
        assert!(Command::new("sh").args(["-c", "true"]).status().unwrap().success());
    });
    let confined = time(300, || {
        assert!(Command::new(rab).args(&helper_args).status().unwrap().success());
    });
    println!("bash call, sh -c true, median of 300:");
    println!("  direct:            {:>7.2} ms", direct.as_secs_f64() * 1e3);
    println!("  through Landlock:  {:>7.2} ms", confined.as_secs_f64() * 1e3);
    println!(
        "  sandbox cost:      {:>7.2} ms per call",
        (confined.as_secs_f64() - direct.as_secs_f64()) * 1e3
    );
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
