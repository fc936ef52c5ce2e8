//! What a plugin tool costs per call against built-in ones: the test plugin's `echo`
//! through the agent-tool path (arguments to JSON text, a blocking thread, fresh fuel
//! and deadline, the call into the component and back) against `todo_write` (no thread
//! hop) and `read` of a small file (the same hop to a blocking thread), all from a
//! current-thread tokio runtime as the agent loop runs them; three rounds of 2,000
//! calls per tool taking turns, after a warm-up round, the median of each. Also the
//! component call alone, and the time to compile and load the test component and one
//! of about 2 MB of code (compiled, then from the cache).
//!
//! Run: `cargo bench -p rab-plugin-host --bench call` (`RAB_BENCH_WRITE_PLUGIN=FILE` also
//! writes the 2 MB component to FILE, for `bench/task.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rab_agent::{AgentTool, ToolContext};
use rab_plugin_host::{Host, Settings};
use serde_json::json;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let bytes = rab_plugin_host::test_support::component(true);
    let host = Host::shared().unwrap();
    let started = Instant::now();
    let plugin = host.load_bytes(Path::new("echo.wasm"), &bytes, Settings::default());
    let load = started.elapsed();
    let plugin = Arc::new(plugin.unwrap());
    let echo = rab_plugin_host::agent_tools(&plugin).remove(0);
    let todo: Arc<dyn AgentTool> = Arc::new(rab_tools::todo::TodoWrite::new());
    // A built-in tool that does its work on a blocking thread too (`read` of a small
    // file): the same hop the plugin call makes.
    let dir = std::env::temp_dir().join(format!("rab-plugin-bench-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "hello\n").unwrap();
    let read = rab_tools::builtin(&dir).into_iter().find(|t| t.name() == "read").unwrap();
    let todo_args = json!({"todos": [{"content": "a", "status": "pending"}]});
    let tools: [(&Arc<dyn AgentTool>, serde_json::Value); 3] =
        [(&echo, json!({"text": "hello"})), (&todo, todo_args), (&read, json!({"path": "a.txt"}))];
    // Three rounds of 2,000 calls per tool, taking turns, after 2,000 warm-up calls
    // each (the first calls after compiling run while the machine settles).
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for round in 0..4 {
        for (k, (tool, args)) in tools.iter().enumerate() {
            for _ in 0..2_000 {
                let started = Instant::now();
                let out = rt.block_on(tool.execute(args.clone(), ToolContext::detached("c")));
                let took = started.elapsed();
                out.unwrap();
                if round > 0 {
                    samples[k].push(took);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let [plugin_call, builtin_call, read_call] = samples.map(median);
    // The same call without the hop to a blocking thread: what the component itself
    // costs (arguments in, result out, fuel and deadline set).
    let mut direct = Vec::new();
    for i in 0..5_200 {
        let started = Instant::now();
        plugin.execute_tool("echo", "c", r#"{"text":"hello"}"#).unwrap();
        if i >= 200 {
            direct.push(started.elapsed());
        }
    }
    let direct = median(direct);
    println!(
        "component of {} bytes: compiled and loaded in {:.1} ms",
        bytes.len(),
        load.as_secs_f64() * 1e3
    );
    println!(
        "per call, median of 6,000: plugin echo {:.1} µs, built-in todo_write {:.1} µs; overhead {:.1} µs",
        plugin_call.as_secs_f64() * 1e6,
        builtin_call.as_secs_f64() * 1e6,
        (plugin_call.as_secs_f64() - builtin_call.as_secs_f64()) * 1e6
    );
    println!(
        "  of which the component call itself (no thread hop): {:.1} µs; built-in read (also \
         on a blocking thread) {:.1} µs",
        direct.as_secs_f64() * 1e6,
        read_call.as_secs_f64() * 1e6
    );
    // A component of about 2 MB of code: compiled, then from the cache.
    let large = rab_plugin_host::test_support::large_component(7_000);
    // For bench/task.py's RAB_BENCH_PLUGIN: a session that loads a 2 MB plugin.
    if let Ok(path) = std::env::var("RAB_BENCH_WRITE_PLUGIN") {
        std::fs::write(&path, &large).unwrap();
        println!("wrote the 2 MB component to {path}");
    }
    let dir = std::env::temp_dir().join(format!("rab-plugin-bench-{}", std::process::id()));
    let cache = rab_plugin_host::Cache::new(dir.clone());
    for what in ["compiled (and cached)", "from the cache"] {
        let started = Instant::now();
        let plugin =
            host.load_with(Path::new("large.wasm"), &large, Settings::default(), Some(&cache));
        let load = started.elapsed();
        plugin.unwrap();
        println!(
            "component of {:.2} MB: {what} and loaded in {:.1} ms",
            large.len() as f64 / 1e6,
            load.as_secs_f64() * 1e3
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
