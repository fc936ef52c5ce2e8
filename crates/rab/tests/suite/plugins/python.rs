//! A plugin written in Python: examples/plugins/python built with componentize-py from
//! the repository's WIT, loaded by the real binary and driven through the agent loop.
//! componentize-py comes from PyPI into a virtual environment under target/ (made here
//! when missing); without the registry the test says so and skips — the host's own
//! tests cover loading, limits and grants with components built from text.

use std::path::{Path, PathBuf};
use std::process::Command;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::super::harness::{Home, stderr, stdout};

const VERSION: &str = "0.25.1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// componentize-py in target/componentize-py, installed when missing; why not, if it
/// cannot be.
fn componentize_py() -> Result<PathBuf, String> {
    let venv = repo().join("target/componentize-py");
    let bin = venv.join("bin/componentize-py");
    let is_current = || {
        Command::new(&bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(VERSION))
    };
    if is_current() {
        return Ok(bin);
    }
    let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        return Err(format!("python3 -m venv failed: {made:?}"));
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "--timeout", "30"])
        .arg(format!("componentize-py=={VERSION}"))
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if !pip.status.success() || !is_current() {
        return Err(format!(
            "pip install componentize-py=={VERSION} failed (is PyPI reachable?): {}",
            String::from_utf8_lossy(&pip.stderr).trim()
        ));
    }
    Ok(bin)
}

/// The example built, kept in target/ by the hash of what it is built from, so runs
/// after the first reuse it (componentize-py's output differs from run to run, which
/// would defeat rab's compile cache).
fn build_example(tool: &Path) -> PathBuf {
    let example = repo().join("examples/plugins/python/app.py");
    let wit = repo().join("crates/rab-plugin-host/wit/plugin.wit");
    let mut key = std::fs::read(&example).unwrap();
    key.extend(std::fs::read(&wit).unwrap());
    key.extend(VERSION.as_bytes());
    let hash = key
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    let out = repo().join(format!("target/python-plugin/py-hello-{hash:016x}.wasm"));
    if out.is_file() {
        return out;
    }
    // Built from a copy, so nothing is written into the source tree.
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(&example, work.path().join("app.py")).unwrap();
    let tmp = work.path().join("out.wasm");
    let built = Command::new(tool)
        .arg("-d")
        .arg(wit.parent().unwrap())
        .args(["-w", "rab-plugin", "componentize", "app", "-o"])
        .arg(&tmp)
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(built.status.success(), "componentize-py failed: {}", stderr(&built));
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::copy(&tmp, &out).unwrap();
    out
}

#[test]
fn a_python_plugin_built_with_componentize_py_runs_through_the_agent_loop() {
    let tool = match componentize_py() {
        Ok(t) => t,
        Err(why) => {
            eprintln!("skipped: the Python plugin example needs componentize-py: {why}");
            return;
        }
    };
    let wasm = build_example(&tool);
    let home = Home::new();
    let extensions = home.dir.path().join("rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::copy(&wasm, extensions.join("py-hello.wasm")).unwrap();
    // Compiling an 18 MB component in a debug build takes minutes: the compiled form is
    // kept in target/ across runs (rab's cache, keyed by the component's hash).
    let cache = repo().join("target/python-plugin/cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(home.dir.path().join("rab/cache")).unwrap();
    std::os::unix::fs::symlink(&cache, home.dir.path().join("rab/cache/plugins")).unwrap();

    let llm = FakeLlm::start();
    let count = Turn::tool_call("py_word_count", json!({"text": "one two three four"}));
    llm.script([count, Turn::text("counted")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "count the words"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "counted\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[1].tool_results()[0].1, "4 words");

    // Its command, and its error for bad arguments (raised as Err in Python).
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "/py-hello from the test"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("hello from python: from the test"), "{}", stderr(&out));
    let bad = Turn::tool_call("py_word_count", json!({"words": 3}));
    llm.script([bad, Turn::text("ok")]);
    home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "x"]).output().unwrap();
    let result = &llm.requests()[3].tool_results()[0].1;
    assert!(result.contains("missing string argument `text`"), "{result}");
}
