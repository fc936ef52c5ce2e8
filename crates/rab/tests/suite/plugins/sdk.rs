//! `rab plugin new` makes a plugin crate on the SDK that type-checks on the host target
//! (this machine has no wasm32-wasip2 target to build it for), with the WIT rab's host
//! reads; bad names and occupied folders are refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::harness::{Home, stderr, stdout};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

#[test]
fn a_new_plugin_type_checks_against_the_sdk() {
    let home = Home::new();
    let sdk = repo().join("crates/rab-plugin-sdk");
    let out =
        home.rab().args(["plugin", "new", "word-tools", "--sdk-path"]).arg(&sdk).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("rab plugin build --install"), "{}", stdout(&out));
    let dir = home.dir.path().join("word-tools");
    let wit = std::fs::read_to_string(dir.join("wit/plugin.wit")).unwrap();
    let host_wit = std::fs::read_to_string(repo().join("crates/rab-plugin-host/wit/plugin.wit"));
    assert_eq!(wit, host_wit.unwrap(), "the scaffold carries the host's WIT");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("crate-type = [\"cdylib\"]"), "{manifest}");
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("impl Plugin for WordTools") && lib.contains("export_plugin!(WordTools);")
    );

    // Type-checked on the host target, offline, with a target folder kept between runs.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let check = Command::new(cargo)
        .args(["check", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", repo().join("target/plugin-sdk-check"))
        .output()
        .unwrap();
    assert!(check.status.success(), "cargo check failed:\n{}", stderr(&check));

    // The same name again: the folder is taken.
    let again = home.rab().args(["plugin", "new", "word-tools"]).output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("is not empty"), "{}", stderr(&again));
}

#[test]
fn a_plugin_name_that_cannot_name_a_crate_is_refused() {
    let home = Home::new();
    for bad in ["9lives", "../escape", "has space"] {
        let out = home.rab().args(["plugin", "new", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("cannot be used"), "{}", stderr(&out));
    }
    assert!(!home.dir.path().join("9lives").exists());
    let out =
        home.rab().args(["plugin", "new", "x", "--sdk-path", "/nonexistent"]).output().unwrap();
    assert!(stderr(&out).contains("no rab-plugin-sdk crate there"), "{}", stderr(&out));
}
