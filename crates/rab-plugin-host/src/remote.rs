//! rab's side of the plugin helper: the plugins of a session as one extension whose
//! WebAssembly runs in `rab-plugins`, a sibling binary started only when a plugin file
//! is there (at start, or — in a session that watches — when one appears). Nothing of
//! the engine is linked into `rab` itself. The helper's snapshots ([`wire::Snapshot`])
//! become the tool source, the commands and the service states the front ends show;
//! each tool call is a request the helper answers. The helper ends when rab closes its
//! stdin, and rab reaps it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as Process, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rab_agent::{AgentTool, BoxFuture, ToolContext, ToolError, ToolLevel, ToolOutput, ToolSource};
use rab_ai::ToolSpec;
use rab_core::{
    Command, CommandOutcome, Extension, ServiceKind, ServiceState, ServiceStatus, Services,
};
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::wire::{self, Message, Request, Snapshot};

/// Where the helper is and what it should open.
#[derive(Clone, Debug)]
pub struct HelperOptions {
    /// The `rab-plugins` binary.
    pub helper: PathBuf,
    /// rab's home.
    pub home: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// Whether the project's own plugins may load.
    pub trusted: bool,
    /// rab's own tool names (a plugin's tool of such a name is left out).
    pub reserved: Vec<String>,
    /// Reload when files change, and start the helper when a first plugin appears.
    pub watch: bool,
}

/// The plugins of a session, run by the helper.
#[derive(Clone)]
pub struct RemotePlugins {
    inner: Arc<Inner>,
}

type Answer = oneshot::Sender<Result<String, String>>;

struct Inner {
    options: HelperOptions,
    dirs: Vec<PathBuf>,
    state: Mutex<Snapshot>,
    /// A snapshot of a finished load arrived, or the helper could not run.
    ready: AtomicBool,
    started: AtomicBool,
    version: AtomicU64,
    changed: watch::Sender<u64>,
    stdin: Mutex<Option<ChildStdin>>,
    pending: Mutex<HashMap<u64, Answer>>,
    next: AtomicU64,
    /// Watches the plugin folders of a session with none yet.
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
}

impl RemotePlugins {
    /// The plugins `options` names; nothing runs until [`RemotePlugins::begin`].
    pub fn new(options: HelperOptions) -> Self {
        let dirs = crate::plugin_dirs(&options.home, &options.cwd, options.trusted);
        let (changed, _) = watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                options,
                dirs,
                state: Mutex::new(Snapshot::default()),
                ready: AtomicBool::new(false),
                started: AtomicBool::new(false),
                version: AtomicU64::new(0),
                changed,
                stdin: Mutex::new(None),
                pending: Mutex::new(HashMap::new()),
                next: AtomicU64::new(1),
                watcher: Mutex::new(None),
            }),
        }
    }

    /// Whether any plugin file or folder is there to load.
    pub fn has_files(&self) -> bool {
        self.inner.has_files()
    }

    /// Starts the helper when there is a plugin to load; otherwise, in a session that
    /// watches, starts it once one appears.
    pub fn begin(&self) {
        if self.has_files() {
            self.inner.start();
        } else if self.inner.options.watch {
            self.inner.watch_for_first();
        }
    }

    /// Waits (at most `limit`) until the plugins are loaded; whether they are.
    pub async fn wait_ready(&self, limit: Duration) -> bool {
        let mut rx = self.inner.changed.subscribe();
        let wait = async {
            while !self.inner.ready.load(Ordering::Acquire) {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
        self.inner.ready.load(Ordering::Acquire)
    }

    /// What the last load could not do: plugins skipped, grants left out.
    pub fn problems(&self) -> Vec<String> {
        self.inner.snapshot().problems
    }

    /// The plugins in words.
    pub fn describe(&self) -> String {
        self.inner.describe()
    }
}

impl Inner {
    fn has_files(&self) -> bool {
        self.dirs.iter().any(|d| !crate::plugin_files(d).is_empty())
    }

    fn snapshot(&self) -> Snapshot {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn describe(&self) -> String {
        let described = self.snapshot().describe;
        if !described.is_empty() {
            return described;
        }
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        format!("no plugins (looked in {})", dirs.join(" and "))
    }

    fn bump(&self) {
        let v = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        self.changed.send_replace(v);
    }

    /// Records that the helper cannot run (or stopped), so waits end and `/plugins`
    /// and the status line say why.
    fn fail(&self, why: String) {
        if let Ok(mut s) = self.state.lock() {
            s.loading = false;
            s.tools.clear();
            s.commands.clear();
            for status in s.statuses.iter_mut().filter(|st| st.state == "ready") {
                status.state = "crashed".into();
                status.why = Some(why.clone());
            }
            if s.statuses.is_empty() {
                s.statuses.push(wire::Status {
                    name: "plugins".into(),
                    state: "failed".into(),
                    why: Some(why.clone()),
                    tools: 0,
                    generation: 0,
                });
            }
            s.describe = format!("plugins are off: {why}");
            s.problems.push(why);
        }
        self.ready.store(true, Ordering::Release);
        self.bump();
    }

    fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let o = &self.options;
        let spawned = Process::new(&o.helper)
            .arg("serve")
            .current_dir(&o.cwd)
            // The helper needs no secret of rab's: plugins see only what their grants give.
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                return self.fail(format!(
                    "cannot start the plugin helper {}: {e} (it is installed next to rab; \
                     reinstall rab to get it)",
                    o.helper.display()
                ));
            }
        };
        let open = Request::Open {
            home: o.home.display().to_string(),
            cwd: o.cwd.display().to_string(),
            trusted: o.trusted,
            reserved: o.reserved.clone(),
            watch: o.watch,
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return self.fail("the plugin helper has no pipes".into());
        };
        if let Ok(mut s) = self.stdin.lock() {
            *s = Some(stdin);
        }
        if let Err(e) = self.write(&open) {
            let _ = child.kill();
            let _ = child.wait();
            return self.fail(e);
        }
        if let Ok(mut s) = self.state.lock() {
            s.loading = true;
        }
        let weak = Arc::downgrade(self);
        let reader = std::thread::Builder::new()
            .name("rab-plugins-read".into())
            .spawn(move || read_messages(weak, stdout, child));
        if let Err(e) = reader {
            self.fail(format!("cannot read the plugin helper: {e}"));
        }
    }

    fn write(&self, request: &Request) -> Result<(), String> {
        let mut line = serde_json::to_string(request).map_err(|e| e.to_string())?;
        line.push('\n');
        let mut stdin = self.stdin.lock().map_err(|_| "the plugin helper's pipe is poisoned")?;
        let Some(pipe) = stdin.as_mut() else {
            return Err("the plugin helper is not running".into());
        };
        pipe.write_all(line.as_bytes())
            .and_then(|()| pipe.flush())
            .map_err(|e| format!("the plugin helper stopped: {e}"))
    }

    /// Sends the request `make` builds with a fresh id; the answer arrives on the
    /// receiver (an error at once when the helper cannot take it).
    fn ask(
        &self,
        make: impl FnOnce(u64) -> Request,
    ) -> (u64, oneshot::Receiver<Result<String, String>>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        if let Err(e) = self.write(&make(id))
            && let Some(tx) = self.pending.lock().ok().and_then(|mut p| p.remove(&id))
        {
            let _ = tx.send(Err(e));
        }
        (id, rx)
    }

    /// Starts the helper once a plugin appears in a watched folder.
    fn watch_for_first(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let made = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            let Some(me) = weak.upgrade() else { return };
            if ev.is_ok_and(|e| !e.kind.is_access()) && me.has_files() {
                // Let the file be written whole before the helper loads it.
                std::thread::sleep(crate::registry::SETTLE);
                me.start();
            }
        });
        let Ok(mut watcher) = made else { return };
        crate::registry::add_watches(&mut watcher, &self.dirs, &[]);
        if let Ok(mut w) = self.watcher.lock() {
            *w = Some(watcher);
        }
    }
}

/// Reads the helper's messages until it ends, then reaps it.
fn read_messages(inner: Weak<Inner>, stdout: impl std::io::Read, mut child: Child) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Some(me) = inner.upgrade() else { break };
        match serde_json::from_str::<Message>(&line) {
            Ok(Message::State(snapshot)) => {
                let done = !snapshot.loading;
                if let Ok(mut s) = me.state.lock() {
                    *s = snapshot;
                }
                if done {
                    me.ready.store(true, Ordering::Release);
                }
                me.bump();
            }
            Ok(Message::Done { id, result }) => {
                if let Some(tx) = me.pending.lock().ok().and_then(|mut p| p.remove(&id)) {
                    let _ = tx.send(result);
                }
            }
            Err(e) => tracing::warn!("plugin helper: a message rab cannot read: {e}"),
        }
    }
    let _ = child.kill();
    let status = child.wait();
    if let Some(me) = inner.upgrade() {
        if let Ok(mut p) = me.pending.lock() {
            p.clear();
        }
        let how = status.map_or_else(|e| e.to_string(), |s| s.to_string());
        me.fail(format!("the plugin helper stopped ({how})"));
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing stdin ends the helper; the reader thread reaps it.
        if let Ok(mut s) = self.stdin.lock() {
            s.take();
        }
    }
}

impl ToolSource for RemotePlugins {
    fn version(&self) -> u64 {
        self.inner.version.load(Ordering::Acquire)
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.inner
            .snapshot()
            .tools
            .into_iter()
            .map(|t| {
                let level = crate::declared::parse_level(&t.level).unwrap_or(ToolLevel::Execute);
                let spec = ToolSpec {
                    name: t.name,
                    description: t.description,
                    parameters: t.parameters,
                    grammar: None,
                    server: None,
                };
                Arc::new(RemoteTool {
                    inner: self.inner.clone(),
                    plugin: t.plugin,
                    spec,
                    level,
                    label: t.label,
                }) as Arc<dyn AgentTool>
            })
            .collect()
    }
}

impl Services for RemotePlugins {
    fn statuses(&self) -> Vec<ServiceStatus> {
        self.inner
            .snapshot()
            .statuses
            .into_iter()
            .map(|s| {
                let why = s.why.unwrap_or_default();
                let state = match s.state.as_str() {
                    "ready" => ServiceState::Ready,
                    "crashed" => ServiceState::Crashed(why),
                    "removed" => ServiceState::Removed,
                    _ => ServiceState::Failed(why),
                };
                ServiceStatus {
                    kind: ServiceKind::Plugin,
                    name: s.name,
                    state,
                    tools: s.tools,
                    generation: s.generation,
                }
            })
            .collect()
    }

    fn watch(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }
}

impl Extension for RemotePlugins {
    fn name(&self) -> &str {
        "plugins"
    }

    fn tool_source(&self) -> Option<Arc<dyn ToolSource>> {
        Some(Arc::new(self.clone()))
    }

    fn expects_tools(&self) -> bool {
        self.has_files()
    }

    fn commands(&self) -> Vec<Command> {
        let list = self.clone();
        let reload = self.clone();
        vec![
            rab_core::command("plugins", "WASM plugins: tools, grants, state, last error", {
                move |_args, _cx| CommandOutcome::Info(list.describe())
            }),
            rab_core::command(
                "reload-plugins",
                "Load changed or new WASM plugins again, drop removed ones",
                move |_args, _cx| {
                    let me = reload.clone();
                    CommandOutcome::Later(Box::pin(async move {
                        if !me.inner.started.load(Ordering::Acquire) {
                            if !me.has_files() {
                                return CommandOutcome::Info(me.describe());
                            }
                            me.inner.start();
                            me.wait_ready(Duration::from_secs(120)).await;
                            return CommandOutcome::Info(me.describe());
                        }
                        let (_, rx) = me.inner.ask(|id| Request::Reload { id });
                        match rx.await {
                            Ok(Ok(text)) => CommandOutcome::Info(text),
                            Ok(Err(e)) => CommandOutcome::Error(format!("reloading failed: {e}")),
                            Err(_) => CommandOutcome::Error(
                                "reloading failed: the plugin helper stopped".into(),
                            ),
                        }
                    }))
                },
            ),
        ]
    }

    fn dynamic_commands(&self) -> Vec<Command> {
        self.inner
            .snapshot()
            .commands
            .into_iter()
            .map(|c| {
                let inner = self.inner.clone();
                let (plugin, name) = (c.plugin, c.name.clone());
                rab_core::command(&c.name, &c.description, move |args, _cx| {
                    let (inner, plugin, name) = (inner.clone(), plugin.clone(), name.clone());
                    let args = args.to_owned();
                    CommandOutcome::Later(Box::pin(async move {
                        let (_, rx) = inner.ask(|id| Request::Command { id, plugin, name, args });
                        match rx.await {
                            Ok(Ok(text)) => CommandOutcome::Info(text),
                            Ok(Err(e)) => CommandOutcome::Error(e),
                            Err(_) => CommandOutcome::Error(
                                "the command failed: the plugin helper stopped".into(),
                            ),
                        }
                    }))
                })
            })
            .collect()
    }

    fn services(&self) -> Option<Arc<dyn Services>> {
        Some(Arc::new(self.clone()))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Sends a stop for its call when dropped before the answer came (the turn was
/// dropped): the plugin's code stops at its next epoch tick.
struct StopOnDrop {
    inner: Arc<Inner>,
    id: u64,
    armed: bool,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.inner.write(&Request::Stop { id: self.id });
        }
    }
}

/// One tool of a plugin, run by the helper.
struct RemoteTool {
    inner: Arc<Inner>,
    plugin: String,
    spec: ToolSpec,
    level: ToolLevel,
    label: Option<String>,
}

impl AgentTool for RemoteTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn name(&self) -> String {
        self.spec.name.clone()
    }

    fn level(&self) -> ToolLevel {
        self.level
    }

    fn rule_alias(&self) -> Option<String> {
        Some(format!("plugin__{}__{}", self.plugin, self.spec.name))
    }

    fn label(&self) -> Option<String> {
        self.label.clone()
    }

    /// A plugin names the files it writes in arguments of any name: each string is
    /// checked as a path it writes (protected paths ask, whatever the argument is
    /// called).
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        if self.level == ToolLevel::Edit {
            rab_agent::string_arguments(arguments)
        } else {
            Vec::new()
        }
    }

    fn execute(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let (plugin, tool) = (self.plugin.clone(), self.spec.name.clone());
            let (call_id, args) = (cx.call_id.clone(), arguments.to_string());
            let (id, rx) = self.inner.ask(|id| Request::Call { id, plugin, tool, call_id, args });
            let mut guard = StopOnDrop { inner: self.inner.clone(), id, armed: true };
            tokio::pin!(rx);
            let answer = tokio::select! {
                answer = &mut rx => answer,
                () = cx.cancel.cancelled() => {
                    // Interrupted (Esc): the plugin's code stops instead of running on
                    // to its time limit; its answer still comes.
                    let _ = self.inner.write(&Request::Stop { id });
                    rx.await
                }
            };
            guard.armed = false;
            match answer {
                Ok(result) => result.map(ToolOutput::text).map_err(ToolError::Model),
                Err(_) => Err(ToolError::Model(
                    "the plugin's call failed: the plugin helper stopped".into(),
                )),
            }
        })
    }
}

/// The `rab-plugins` binary next to `exe` (rab's own path).
pub fn helper_next_to(exe: &Path) -> PathBuf {
    exe.with_file_name(format!("rab-plugins{}", std::env::consts::EXE_SUFFIX))
}
