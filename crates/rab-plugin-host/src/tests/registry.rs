//! The registry: plugins loaded off the caller's thread, reloaded when their files
//! change (the watcher) or by hand, and unloaded when removed; a call in flight keeps
//! the instance it started on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rab_agent::ToolSource;

use crate::config::Sources;
use crate::test_support::{component, files_component};
use crate::{Registry, plugin_dirs};

fn registry(home: &Path, cwd: &Path) -> Registry {
    Registry::new(plugin_dirs(home, cwd, false), Sources::new(home, cwd, false), None)
}

fn tool_names(r: &Registry) -> Vec<String> {
    r.tools().iter().map(|t| t.spec().name).collect()
}

/// Waits (at most 20 s) for the registry to report a change that satisfies `done`.
async fn until(r: &Registry, done: impl Fn(&Registry) -> bool) {
    let mut rx = r.subscribe();
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while !done(r) {
            rx.changed().await.unwrap();
        }
    })
    .await;
    assert!(waited.is_ok(), "no change came; tools now {:?}", tool_names(r));
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let cwd = tmp.path().join("proj");
    std::fs::create_dir_all(home.join("extensions")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    (tmp, home, cwd)
}

#[tokio::test]
async fn a_changed_plugin_is_reloaded_and_a_removed_one_unloaded_by_the_watcher() {
    let (_tmp, home, cwd) = setup();
    let file = home.join("extensions/tool.wasm");
    std::fs::write(&file, component(true)).unwrap();
    let r = registry(&home, &cwd);
    r.start();
    r.wait_ready(Duration::from_secs(20)).await;
    assert!(!r.is_loading());
    assert_eq!(tool_names(&r), ["echo"]);
    let before = r.version();
    let old = r.plugins().remove(0);
    r.watch().unwrap();

    // Replaced by another plugin: the next read of the tools has the new ones.
    std::fs::write(&file, files_component()).unwrap();
    until(&r, |r| tool_names(r) == ["read_file"]).await;
    assert!(r.version() > before, "the agent sees a new version");
    assert_eq!(r.entries()[0].generation(), 2);
    // The old instance still answers a call that holds it.
    assert_eq!(old.execute_tool("echo", "c", "still here").unwrap(), "still here");

    // Removed: its tools are gone.
    std::fs::remove_file(&file).unwrap();
    until(&r, |r| r.entries().is_empty()).await;
    assert!(tool_names(&r).is_empty());

    // Added again: back.
    std::fs::write(home.join("extensions/again.wasm"), component(true)).unwrap();
    until(&r, |r| tool_names(r) == ["echo"]).await;
}

#[test]
fn a_reload_by_hand_reports_what_changed_and_keeps_what_did_not() {
    let (_tmp, home, cwd) = setup();
    std::fs::write(home.join("extensions/a.wasm"), component(true)).unwrap();
    let r = registry(&home, &cwd);
    let changes = r.reload(false);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].starts_with("plugin test-plugin loaded from"), "{changes:?}");
    let first = r.plugins().remove(0);
    assert!(r.reload(false).is_empty(), "nothing changed");
    assert!(std::sync::Arc::ptr_eq(&first, &r.plugins()[0]), "the same instance is kept");
    // Forced: loaded again.
    let changes = r.reload(true);
    assert!(changes[0].starts_with("plugin test-plugin reloaded from"), "{changes:?}");
    // A second file with the same plugin name is left out, naming the first.
    std::fs::write(home.join("extensions/b.wasm"), component(true)).unwrap();
    let changes = r.reload(false);
    assert!(changes.iter().any(|c| c.contains("already loaded from")), "{changes:?}");
    assert_eq!(r.plugins().len(), 1);
    // A failing self-test: skipped with the reason, in the listing too.
    std::fs::write(home.join("extensions/c.wasm"), component(false)).unwrap();
    let changes = r.reload(false);
    assert!(changes.iter().any(|c| c.contains("self-test failed")), "{changes:?}");
    let listing = r.describe();
    assert!(
        listing.contains("c (not loaded)") && listing.contains("self-test says no"),
        "{listing}"
    );
    assert!(
        listing.contains("test-plugin (loaded)") && listing.contains("echo [read-only]"),
        "{listing}"
    );
}

#[test]
fn a_plugin_disabled_after_its_failures_is_reported_as_crashed() {
    use rab_core::{ServiceState, Services};
    let (_tmp, home, cwd) = setup();
    std::fs::write(home.join("extensions/spin.wasm"), crate::test_support::spinner_component())
        .unwrap();
    std::fs::write(
        home.join("extensions.toml"),
        "[plugins.spin.limits]\nfuel = 1000000\nmax-traps = 1\n",
    )
    .unwrap();
    let r = registry(&home, &cwd);
    r.reload(false);
    let rx = r.subscribe();
    let plugin = r.plugins().remove(0);
    let err = plugin.execute_tool("spin", "c", "{}").unwrap_err();
    assert!(err.contains("ran out of fuel") && err.contains("now disabled"), "{err}");
    assert!(rx.has_changed().unwrap(), "the registry's watchers hear of it");
    let status = r.statuses().remove(0);
    match status.state {
        ServiceState::Crashed(why) => assert!(why.contains("ran out of fuel"), "{why}"),
        other => panic!("{other:?}"),
    }
}
