//! The plugin helper's side of [`crate::wire`]: `rab-plugins serve` reads requests on
//! stdin and writes messages on stdout. It loads the plugins of the [`Request::Open`]
//! line, sends a snapshot whenever they change, runs each call on a thread of its own
//! (several at once; a plugin runs one call at a time) and ends when stdin closes, that
//! is when rab ends.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rab_core::{ServiceState, Services};

use crate::config::Sources;
use crate::wire::{Message, Request, SlashCommand, Snapshot, Status, Tool};
use crate::{Cache, Registry};

/// Where messages go: one writer for every thread, a line at a time.
type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn send(out: &Out, message: &Message) {
    let Ok(mut line) = serde_json::to_string(message) else { return };
    line.push('\n');
    if let Ok(mut w) = out.lock() {
        // rab gone: nothing to do; stdin's end stops the helper.
        let _ = w.write_all(line.as_bytes()).and_then(|()| w.flush());
    }
}

/// The registry `Open` asks for, nothing loaded yet.
pub fn registry_for(home: &Path, cwd: &Path, trusted: bool) -> Registry {
    let dirs = crate::plugin_dirs(home, cwd, trusted);
    let cache = Cache::new(home.join("cache/plugins"));
    Registry::new(dirs, Sources::new(home, cwd, trusted), Some(cache))
}

/// The plugins of `registry` as a snapshot.
pub fn snapshot(registry: &Registry, extra: &[String]) -> Snapshot {
    let tools = registry
        .offered()
        .iter()
        .map(|(plugin, def)| {
            let (spec, level, label) = crate::tool::described(plugin, def);
            Tool {
                plugin: plugin.name().to_owned(),
                name: spec.name,
                description: spec.description,
                parameters: spec.parameters,
                label,
                level: level.as_str().to_owned(),
            }
        })
        .collect();
    let commands = registry
        .plugins()
        .iter()
        .flat_map(|p| {
            p.commands().iter().map(|c| SlashCommand {
                plugin: p.name().to_owned(),
                name: c.name.clone(),
                description: c.description.clone(),
            })
        })
        .collect();
    let statuses = registry
        .statuses()
        .into_iter()
        .map(|s| {
            let (state, why) = match s.state {
                ServiceState::Ready | ServiceState::Starting => ("ready", None),
                ServiceState::Crashed(why) => ("crashed", Some(why)),
                ServiceState::Failed(why) => ("failed", Some(why)),
                ServiceState::Removed | ServiceState::Disabled => ("removed", None),
            };
            Status {
                name: s.name,
                state: state.to_owned(),
                why,
                tools: s.tools,
                generation: s.generation,
            }
        })
        .collect();
    let mut problems = registry.problems();
    problems.extend(extra.iter().cloned());
    Snapshot {
        loading: registry.is_loading(),
        tools,
        commands,
        statuses,
        describe: registry.describe(),
        problems,
    }
}

/// Serves one rab process: `input` holds its requests, `output` takes the messages.
/// Returns when `input` ends.
pub fn serve(mut input: impl BufRead, output: Box<dyn Write + Send>) -> Result<(), String> {
    let out: Out = Arc::new(Mutex::new(output));
    let mut first = String::new();
    input.read_line(&mut first).map_err(|e| format!("cannot read the open request: {e}"))?;
    let Ok(Request::Open { home, cwd, trusted, reserved, watch }) = serde_json::from_str(&first)
    else {
        return Err(format!("the first line must open the plugins, not {:?}", first.trim()));
    };
    let registry = registry_for(Path::new(&home), Path::new(&cwd), trusted);
    registry.reserve(reserved);
    let mut extra = Vec::new();
    if watch && let Err(e) = registry.watch() {
        extra.push(format!("{e}; plugins will not reload by themselves"));
    }
    registry.reload(false);
    send(&out, &Message::State(snapshot(&registry, &extra)));
    notify_changes(&registry, &out, extra);
    let stops: Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>> = Arc::default();
    for line in input.lines() {
        let line = line.map_err(|e| format!("cannot read a request: {e}"))?;
        match serde_json::from_str::<Request>(&line) {
            Ok(Request::Stop { id }) => {
                if let Some(flag) = stops.lock().ok().and_then(|s| s.get(&id).cloned()) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            Ok(request) => run(request, &registry, &out, &stops),
            Err(e) => tracing::warn!("plugin helper: a request it cannot read: {e}"),
        }
    }
    Ok(())
}

/// Sends a snapshot after every change of the registry, from a thread of its own.
fn notify_changes(registry: &Registry, out: &Out, extra: Vec<String>) {
    let (registry, out) = (registry.clone(), out.clone());
    let mut changes = registry.subscribe();
    let spawned = std::thread::Builder::new().name("rab-plugins-notify".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().build() else { return };
        while rt.block_on(changes.changed()).is_ok() {
            send(&out, &Message::State(snapshot(&registry, &extra)));
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("plugin helper: cannot watch for changes: {e}");
    }
}

/// Runs a call, command or reload on a thread of its own and answers when it ends.
fn run(
    request: Request,
    registry: &Registry,
    out: &Out,
    stops: &Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>>,
) {
    let id = match &request {
        Request::Call { id, .. } | Request::Command { id, .. } | Request::Reload { id } => *id,
        Request::Open { .. } | Request::Stop { .. } => return,
    };
    // Registered before the call starts, so a stop sent at once is not lost.
    let stop = Arc::new(AtomicBool::new(false));
    if matches!(request, Request::Call { .. })
        && let Ok(mut s) = stops.lock()
    {
        s.insert(id, stop.clone());
    }
    let (registry, answer, stops) = (registry.clone(), out.clone(), stops.clone());
    let plugin_named =
        |registry: &Registry, name: &str| registry.plugins().into_iter().find(|p| p.name() == name);
    let out = answer.clone();
    let work = move || match request {
        Request::Call { id, plugin, tool, call_id, args } => {
            let result = match plugin_named(&registry, &plugin) {
                Some(p) => p.execute_tool_until(&tool, &call_id, &args, Some(stop)),
                None => Err(format!("plugin {plugin} is not loaded (removed or reloading)")),
            };
            if let Ok(mut s) = stops.lock() {
                s.remove(&id);
            }
            send(&out, &Message::Done { id, result });
        }
        Request::Command { id, plugin, name, args } => {
            let result = match plugin_named(&registry, &plugin) {
                Some(p) => p.execute_command(&name, &args),
                None => Err(format!("plugin {plugin} is not loaded (removed or reloading)")),
            };
            send(&out, &Message::Done { id, result });
        }
        Request::Reload { id } => {
            let changes = registry.reload(true);
            let text = if changes.is_empty() { registry.describe() } else { changes.join("\n") };
            send(&out, &Message::Done { id, result: Ok(text) });
        }
        Request::Open { .. } | Request::Stop { .. } => {}
    };
    if let Err(e) = std::thread::Builder::new().name("rab-plugins-call".into()).spawn(work) {
        let result = Err(format!("the plugin helper cannot start a thread: {e}"));
        send(&answer, &Message::Done { id, result });
    }
}

/// `rab-plugins list HOME CWD trusted|untrusted`: loads the plugins as a session would
/// and prints them in words.
pub fn list(home: &Path, cwd: &Path, trusted: bool) -> String {
    let registry = registry_for(home, cwd, trusted);
    registry.reload(false);
    registry.describe()
}
