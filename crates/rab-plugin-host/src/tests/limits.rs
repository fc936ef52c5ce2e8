//! Plugins built at test time from text (no wasm32 Rust target here): a core module in
//! WAT, given the `rab:plugin` world's metadata and made a component with wit-component.
//! It echoes its arguments, traps, spins forever, eats memory or fails on purpose,
//! according to the tool called.

use std::time::{Duration, Instant};

use crate::test_support::component;
use crate::*;

fn load(limits: Limits) -> Plugin {
    let host = Host::shared().unwrap();
    host.load_bytes(Path::new("test.wasm"), &component(true), Settings::with_limits(limits))
        .unwrap()
}

#[test]
fn a_plugin_describes_itself_and_its_tool_runs() {
    let plugin = load(Limits::default());
    assert_eq!(plugin.name(), "test-plugin");
    let tools = plugin.tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
    assert_eq!(tools[0].parameters, r#"{"type":"object"}"#);
    assert_eq!(plugin.level("echo"), rab_agent::ToolLevel::ReadOnly);
    assert_eq!(plugin.level("other"), rab_agent::ToolLevel::Execute, "undeclared is execute");
    assert_eq!(plugin.execute_tool("echo", "c1", r#"{"text":"hi"}"#).unwrap(), r#"{"text":"hi"}"#);
    let err = plugin.execute_tool("fail", "c2", "{}").unwrap_err();
    assert_eq!(err, "failed on purpose");
    let commands: Vec<_> = plugin.commands().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(commands, ["greet"]);
    assert_eq!(plugin.execute_command("greet", "x").unwrap(), "test-plugin");
}

#[test]
fn traps_fuel_time_and_memory_become_errors_naming_the_plugin_and_it_goes_on() {
    let limits = Limits {
        fuel: 50_000_000,
        time: Duration::from_secs(30),
        memory: 4 * 1024 * 1024,
        max_traps: 10,
    };
    let plugin = load(limits);
    let err = plugin.execute_tool("unreachable", "c", "{}").unwrap_err();
    assert!(err.starts_with("plugin test-plugin failed: it panicked"), "{err}");
    let err = plugin.execute_tool("spin", "c", "{}").unwrap_err();
    assert!(err.contains("ran out of fuel"), "{err}");
    let err = plugin.execute_tool("grow", "c", "{}").unwrap_err();
    assert!(err.contains("more memory than its limit (4 MiB)"), "{err}");
    // After each failure the next call gets a fresh instance.
    assert_eq!(plugin.execute_tool("echo", "c", "again").unwrap(), "again");
}

#[test]
fn an_endless_call_is_stopped_by_its_time_limit() {
    let limits = Limits {
        fuel: u64::MAX / 4,
        time: Duration::from_millis(200),
        memory: 16 * 1024 * 1024,
        max_traps: 10,
    };
    let plugin = load(limits);
    let started = Instant::now();
    let err = plugin.execute_tool("spin", "c", "{}").unwrap_err();
    assert!(err.contains("ran past its time limit"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

#[test]
fn a_plugin_that_keeps_failing_is_disabled() {
    let plugin = load(Limits { max_traps: 2, ..Limits::default() });
    plugin.execute_tool("unreachable", "c", "{}").unwrap_err();
    let err = plugin.execute_tool("unreachable", "c", "{}").unwrap_err();
    assert!(err.contains("now disabled"), "{err}");
    assert!(plugin.is_disabled());
    let err = plugin.execute_tool("echo", "c", "x").unwrap_err();
    assert!(err.contains("is disabled"), "{err}");
}

#[test]
fn a_failing_self_test_or_a_broken_file_is_not_loaded() {
    let host = Host::shared().unwrap();
    let err =
        host.load_bytes(Path::new("bad.wasm"), &component(false), Settings::default()).unwrap_err();
    assert!(err.to_string().contains("its self-test failed: self-test says no"), "{err}");
    let err =
        host.load_bytes(Path::new("junk.wasm"), b"not wasm", Settings::default()).unwrap_err();
    assert!(err.to_string().starts_with("plugin junk.wasm: not a rab plugin component"), "{err}");
}

#[test]
fn plugins_are_found_in_the_folders_and_project_ones_only_when_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let (home, cwd) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(home.join("extensions")).unwrap();
    std::fs::create_dir_all(cwd.join(".rab/extensions/mine")).unwrap();
    std::fs::write(cwd.join(".rab/extensions/mine/mine.wasm"), component(true)).unwrap();
    std::fs::write(home.join("extensions/broken.wasm"), b"junk").unwrap();
    let registry = |trusted: bool| {
        let sources = config::Sources::new(&home, &cwd, trusted);
        Registry::new(plugin_dirs(&home, &cwd, trusted), sources, None)
    };
    let untrusted = registry(false);
    let changes = untrusted.reload(false);
    assert!(untrusted.plugins().is_empty());
    assert!(
        changes.iter().any(|w| w.contains("broken.wasm") && w.ends_with("skipped")),
        "{changes:?}"
    );
    let trusted = registry(true);
    trusted.reload(false);
    assert_eq!(trusted.plugins().iter().map(|p| p.name()).collect::<Vec<_>>(), ["test-plugin"]);
}

#[test]
fn compiled_components_are_cached_checked_and_compiled_again_when_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let host = Host::shared().unwrap();
    let bytes = component(true);
    let (_, cached) = cache.component(host.engine(), &bytes).unwrap();
    assert!(!cached, "the first load compiles");
    let entries: Vec<_> = std::fs::read_dir(dir.path().join("cache")).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "one entry, no temporary file left");
    let (_, cached) = cache.component(host.engine(), &bytes).unwrap();
    assert!(cached, "the second load comes from the cache");
    // A plugin loaded from the cache works.
    let plugin = host.load_with(Path::new("c.wasm"), &bytes, Settings::default(), Some(&cache));
    assert_eq!(plugin.unwrap().execute_tool("echo", "c", "cached").unwrap(), "cached");
    // A damaged entry is never handed to wasmtime: it is compiled again and rewritten.
    let entry = entries[0].path();
    let mut data = std::fs::read(&entry).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0xff;
    std::fs::write(&entry, &data).unwrap();
    let (_, cached) = cache.component(host.engine(), &bytes).unwrap();
    assert!(!cached, "the damaged entry was not used");
    let (_, cached) = cache.component(host.engine(), &bytes).unwrap();
    assert!(cached, "and was written again");
    // Another component has another entry.
    let (_, cached) = cache.component(host.engine(), &component(false)).unwrap();
    assert!(!cached);
}

#[tokio::test]
async fn an_interrupted_call_stops_at_once_and_does_not_count_against_the_plugin() {
    use rab_agent::ToolContext;
    let limits = Limits {
        fuel: u64::MAX / 4,
        time: Duration::from_secs(60),
        max_traps: 1,
        ..Limits::default()
    };
    let bytes = crate::test_support::spinner_component();
    let host = Host::shared().unwrap();
    let plugin = host.load_bytes(Path::new("spin.wasm"), &bytes, Settings::with_limits(limits));
    let plugin = std::sync::Arc::new(plugin.unwrap());
    let spin = crate::agent_tools(&plugin).remove(0);
    assert_eq!(spin.spec().name, "spin");
    // The agent's cancellation token (Esc) stops the plugin's code at its next tick,
    // not at its 60 s limit.
    for _ in 0..2 {
        let cx = ToolContext::detached("c");
        let cancel = cx.cancel.clone();
        let started = Instant::now();
        let tool = spin_tool(&plugin);
        let call = tokio::spawn(async move { spin_call(tool, cx).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
        let err = call.await.unwrap();
        assert_eq!(err, "plugin test-plugin: it was interrupted");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        // With max-traps 1, one counted failure would have disabled it.
        assert!(!plugin.is_disabled(), "an interruption is not the plugin's failure");
    }
    drop(spin);
}

fn spin_tool(plugin: &std::sync::Arc<Plugin>) -> std::sync::Arc<dyn rab_agent::AgentTool> {
    crate::agent_tools(plugin).remove(0)
}

async fn spin_call(
    tool: std::sync::Arc<dyn rab_agent::AgentTool>,
    cx: rab_agent::ToolContext,
) -> String {
    match tool.execute(serde_json::json!({}), cx).await {
        Ok(out) => panic!("the spinning call returned {out:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_cache_keeps_the_recently_used_entries_under_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::shared().unwrap();
    let (a, b) = (component(true), component(false));
    let size = |c: &Cache, bytes: &[u8]| {
        c.component(host.engine(), bytes).unwrap();
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum::<u64>()
    };
    let roomy = Cache::new(dir.path().to_path_buf());
    let one = size(&roomy, &a);
    let two = size(&roomy, &b);
    assert!(two > one, "both kept under the default cap");
    // Room for one entry: writing a third drops the least recently used, never itself.
    let tight = Cache::new(dir.path().to_path_buf()).with_cap(two - 1);
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        std::fs::File::options().append(true).open(e.path()).unwrap().set_modified(old).unwrap();
    }
    tight.component(host.engine(), &a).unwrap(); // a hit: a is now the most recent
    let c = crate::test_support::spinner_component();
    tight.component(host.engine(), &c).unwrap();
    assert!(tight.component(host.engine(), &c).unwrap().1, "the new entry stays");
    let left: u64 =
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.metadata().unwrap().len()).sum();
    assert!(left <= tight.cap(), "pruned to the cap: {left} bytes");
    assert!(
        !Cache::new(dir.path().to_path_buf()).component(host.engine(), &b).unwrap().1,
        "b, the oldest, went"
    );
}
