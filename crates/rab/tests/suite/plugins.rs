//! WASM plugins end to end: the real binary loads a component from rab's extensions
//! folder (or a trusted project's), the model calls its tool through the agent loop,
//! and the result reaches the next request; a broken file is skipped with a warning.
//! Built with the `plugins` feature (`.ci/run` runs them so).
#![cfg(feature = "plugins")]

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, offered, stderr, stdout};

#[test]
fn a_plugins_tool_runs_through_the_agent_loop_and_a_broken_one_is_skipped() {
    let home = Home::new();
    let extensions = home.dir.path().join("rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(extensions.join("echo.wasm"), rab_plugin_host::test_support::component(true))
        .unwrap();
    std::fs::write(extensions.join("broken.wasm"), b"not a component").unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("echo", json!({"text": "from the plugin"})), Turn::text("done")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "use the plugin"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert!(offered(&llm, 0).iter().any(|n| n == "echo"), "{:?}", offered(&llm, 0));
    // The tool is read-only (the plugin says so): it ran without a question, headless.
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, r#"{"text":"from the plugin"}"#, "{results:?}");
    let err = stderr(&out);
    assert!(
        err.contains("broken.wasm: not a rab plugin component") && err.contains("skipped"),
        "{err}"
    );
}

#[test]
fn a_projects_plugins_load_only_in_a_trusted_folder() {
    let home = Home::new();
    let project = home.dir.path().join("proj");
    let extensions = project.join(".rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(extensions.join("echo.wasm"), rab_plugin_host::test_support::component(true))
        .unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("untrusted"), Turn::text("trusted")]);
    let rab = |trust: bool| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.current_dir(&project).args(["-p", "hi"]);
        if trust {
            cmd.arg("--trust-project");
        }
        cmd.output().unwrap()
    };
    let out = rab(false);
    assert!(!offered(&llm, 0).iter().any(|n| n == "echo"));
    assert!(stderr(&out).contains("WASM plugins echo.wasm"), "{}", stderr(&out));
    rab(true);
    assert!(offered(&llm, 1).iter().any(|n| n == "echo"));
}
