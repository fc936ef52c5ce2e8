//! One loaded plugin: its compiled component, its metadata, and an instance that runs
//! one call at a time under limits — fuel, a wall-time deadline (epochs) and a memory
//! cap. A call that traps (a panic, fuel or time used up, memory over the cap) becomes
//! an error naming the plugin and the cause; the instance is dropped and the next call
//! gets a fresh one. A plugin that traps too often in a row is disabled.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rab_agent::ToolLevel;
use wasmtime::component::{Component, ComponentType, Instance, Lift, Linker};
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder, Trap, UpdateDeadline};
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::PluginError;
use crate::config::{Grants, Settings};
use crate::declared::{check_names, parse_level};

/// What a plugin may use per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Fuel per call (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Wall time per call.
    pub time: Duration,
    /// Linear memory, in bytes.
    pub memory: usize,
    /// Traps in a row after which the plugin is disabled.
    pub max_traps: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 2_000_000_000,
            time: Duration::from_secs(30),
            memory: 256 * 1024 * 1024,
            max_traps: 3,
        }
    }
}

/// A tool as the plugin describes it (`rab:plugin/types.tool-def`).
#[derive(Clone, Debug, PartialEq, Eq, ComponentType, Lift)]
#[component(record)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments, as text.
    pub parameters: String,
    /// A short title.
    pub label: String,
}

/// A command as the plugin describes it (`rab:plugin/types.slash-command`).
#[derive(Clone, Debug, PartialEq, Eq, ComponentType, Lift)]
#[component(record)]
pub struct SlashCommand {
    /// The command's name (without `/`).
    pub name: String,
    /// What it does.
    pub description: String,
}

/// What a plugin's store holds.
pub(crate) struct State {
    limits: StoreLimits,
    /// The plugin's name, for its log lines.
    pub(crate) name: String,
    /// Its settings as JSON (the `config` import).
    pub(crate) config: String,
    /// WASI, with only what it was granted.
    wasi: WasiCtx,
    table: ResourceTable,
    /// `wasi:http`, refused without a network grant.
    http: WasiHttpCtx,
    http_hooks: crate::http::HttpHooks,
    /// When the call going on must end (its wall-time limit).
    deadline: Instant,
    /// Set when the call going on is interrupted (the user pressed Esc).
    stop: Option<Arc<AtomicBool>>,
}

/// A call stopped because its caller went away (an interrupted turn).
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("it was interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Why a call failed, and whether it counts towards disabling the plugin.
struct Failure {
    why: String,
    counts: bool,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.http_hooks }
    }
}

/// A loaded plugin.
pub struct Plugin {
    path: PathBuf,
    name: String,
    engine: Engine,
    component: Component,
    linker: Linker<State>,
    limits: Limits,
    config: String,
    grants: Grants,
    tools: Vec<ToolDef>,
    commands: Vec<SlashCommand>,
    levels: Vec<(String, ToolLevel)>,
    has_execute_command: bool,
    /// The instance calls run in; `None` after a trap (the next call makes a new one).
    live: Mutex<Option<(Store<State>, Instance)>>,
    traps: AtomicU32,
    disabled: AtomicBool,
    last_error: Mutex<Option<String>>,
    /// Where the last error is kept for other processes (`rab plugin list`).
    error_file: Mutex<Option<PathBuf>>,
    /// Told when the plugin is disabled (the registry, so front ends hear of it).
    on_disabled: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin").field("name", &self.name).field("path", &self.path).finish()
    }
}

impl Plugin {
    /// Compiles (or takes) `component`, instantiates it, reads its name, tools and
    /// commands, and runs its `self-test` when it has one.
    pub(crate) fn load(
        engine: &Engine,
        linker: &Linker<State>,
        path: &Path,
        component: Component,
        settings: Settings,
    ) -> Result<Self, PluginError> {
        let mut plugin = Self {
            path: path.to_path_buf(),
            name: String::new(),
            engine: engine.clone(),
            component,
            linker: linker.clone(),
            limits: settings.limits,
            config: settings.config,
            grants: settings.grants,
            tools: Vec::new(),
            commands: Vec::new(),
            levels: Vec::new(),
            has_execute_command: false,
            live: Mutex::new(None),
            traps: AtomicU32::new(0),
            disabled: AtomicBool::new(false),
            last_error: Mutex::new(None),
            error_file: Mutex::new(None),
            on_disabled: Mutex::new(None),
        };
        let failed = |why: String| PluginError::Load { path: path.to_path_buf(), why };
        let (name, tools, commands, levels, has_command, self_test) = plugin
            .call(None, |store, instance| {
                let name =
                    typed::<(), (String,)>(store, instance, "name")?.call(&mut *store, ())?.0;
                let tools = typed::<(), (Vec<ToolDef>,)>(store, instance, "tools")?
                    .call(&mut *store, ())?
                    .0;
                let commands = typed::<(), (Vec<SlashCommand>,)>(store, instance, "commands")?
                    .call(&mut *store, ())?
                    .0;
                let levels = match instance.get_export_index(&mut *store, None, "tool-levels") {
                    Some(_) => {
                        typed::<(), (Vec<(String, String)>,)>(store, instance, "tool-levels")?
                            .call(&mut *store, ())?
                            .0
                    }
                    None => Vec::new(),
                };
                let has_command =
                    instance.get_export_index(&mut *store, None, "execute-command").is_some();
                let self_test = match instance.get_export_index(&mut *store, None, "self-test") {
                    Some(_) => {
                        typed::<(), (Result<(), String>,)>(store, instance, "self-test")?
                            .call(&mut *store, ())?
                            .0
                    }
                    None => Ok(()),
                };
                Ok((name, tools, commands, levels, has_command, self_test))
            })
            .map_err(|f| failed(f.why))?;
        if let Err(why) = self_test {
            return Err(failed(format!("its self-test failed: {why}")));
        }
        check_names(&name, &tools, &commands).map_err(failed)?;
        plugin.name = name;
        plugin.tools = tools;
        plugin.commands = commands;
        plugin.has_execute_command = has_command;
        plugin.levels = levels
            .into_iter()
            .map(|(tool, level)| match parse_level(&level) {
                Some(l) => Ok((tool, l)),
                None => Err(failed(format!(
                    "tool {tool} has an unknown level {level:?} (read-only, edit, execute or \
                     network)"
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(plugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its tools.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// Its commands.
    pub fn commands(&self) -> &[SlashCommand] {
        &self.commands
    }

    /// What a tool can do: as the plugin declares it, else `execute`.
    pub fn level(&self, tool: &str) -> ToolLevel {
        self.levels.iter().find(|(t, _)| t == tool).map_or(ToolLevel::Execute, |(_, l)| *l)
    }

    /// What it was granted.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Its limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The last failure of a call (a trap, or the plugin's own error), if any: this
    /// process's, else the one kept in the error file (another session's).
    pub fn last_error(&self) -> Option<String> {
        if let Some(e) = self.last_error.lock().ok().and_then(|e| e.clone()) {
            return Some(e);
        }
        let file = self.error_file.lock().ok().and_then(|f| f.clone())?;
        let text = std::fs::read_to_string(file).ok()?;
        let (at, error) = text.split_once('\n')?;
        let at: u64 = at.parse().ok()?;
        let ago = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|now| now.as_secs().saturating_sub(at))
            .unwrap_or(0);
        Some(format!("{error} ({} ago)", human_age(ago)))
    }

    /// Keeps the last error of every call in `file` too, so another process can show
    /// it.
    pub fn keep_errors_in(&self, file: PathBuf) {
        if let Ok(mut f) = self.error_file.lock() {
            *f = Some(file);
        }
    }

    /// Calls `f` when the plugin is disabled after failing too often.
    pub fn on_disabled(&self, f: Box<dyn Fn() + Send + Sync>) {
        if let Ok(mut slot) = self.on_disabled.lock() {
            *slot = Some(f);
        }
    }

    fn record_error(&self, error: &str) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(error.to_owned());
        }
        let Some(file) = self.error_file.lock().ok().and_then(|f| f.clone()) else { return };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let written = file.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
            let tmp = file.with_extension(format!("{}.tmp", std::process::id()));
            std::fs::write(&tmp, format!("{now}\n{error}"))?;
            std::fs::rename(&tmp, &file)
        });
        if let Err(e) = written {
            tracing::debug!("cannot keep the plugin's last error in {}: {e}", file.display());
        }
    }

    /// Whether it was disabled after trapping too often.
    pub fn is_disabled(&self) -> bool {
        self.disabled.load(Ordering::Relaxed)
    }

    /// Runs a tool (blocking: call it off the async runtime).
    pub fn execute_tool(&self, tool: &str, call_id: &str, args: &str) -> Result<String, String> {
        self.execute_tool_until(tool, call_id, args, None)
    }

    /// [`Plugin::execute_tool`], ended early (within an epoch tick of the plugin's own
    /// code running) once `stop` is set.
    pub fn execute_tool_until(
        &self,
        tool: &str,
        call_id: &str,
        args: &str,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<String, String> {
        self.guarded(stop, |store, instance| {
            let f = typed::<(&str, &str, &str), (Result<String, String>,)>(
                store,
                instance,
                "execute-tool",
            )?;
            Ok(f.call(&mut *store, (tool, call_id, args))?.0)
        })
    }

    /// Runs a command (blocking).
    pub fn execute_command(&self, command: &str, args: &str) -> Result<String, String> {
        if !self.has_execute_command {
            return Err(format!("plugin {} has no command runner (execute-command)", self.name));
        }
        self.guarded(None, |store, instance| {
            let f = typed::<(&str, &str), (Result<String, String>,)>(
                store,
                instance,
                "execute-command",
            )?;
            Ok(f.call(&mut *store, (command, args))?.0)
        })
    }

    /// A call of the plugin's, refused once it is disabled; its own error or a trap as
    /// the error.
    fn guarded(
        &self,
        stop: Option<Arc<AtomicBool>>,
        f: impl FnOnce(&mut Store<State>, &Instance) -> wasmtime::Result<Result<String, String>>,
    ) -> Result<String, String> {
        if self.is_disabled() {
            return Err(format!(
                "plugin {} is disabled after {} failures in a row; fix it and reload plugins",
                self.name, self.limits.max_traps
            ));
        }
        let outcome = self.call(stop, f);
        match &outcome {
            Ok(Err(e)) | Err(Failure { why: e, .. }) => self.record_error(e),
            Ok(Ok(_)) => {}
        }
        match outcome {
            Ok(result) => {
                self.traps.store(0, Ordering::Relaxed);
                result
            }
            Err(Failure { why, counts: false }) => Err(format!("plugin {}: {why}", self.name)),
            Err(Failure { why, counts: true }) => {
                let n = self.traps.fetch_add(1, Ordering::Relaxed) + 1;
                let mut message = format!("plugin {} failed: {why}", self.name);
                if n >= self.limits.max_traps {
                    self.disabled.store(true, Ordering::Relaxed);
                    tracing::warn!(plugin = %self.name, "disabled after {n} failures in a row");
                    if let Ok(f) = self.on_disabled.lock()
                        && let Some(f) = f.as_ref()
                    {
                        f();
                    }
                    message
                        .push_str(&format!("; it failed {n} times in a row and is now disabled"));
                }
                Err(message)
            }
        }
    }

    /// Runs `f` on the instance (made fresh when there is none) with the per-call
    /// limits. A trap drops the instance and comes back as the cause, in words.
    fn call<R>(
        &self,
        stop: Option<Arc<AtomicBool>>,
        f: impl FnOnce(&mut Store<State>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, Failure> {
        let failed = |why: String| Failure { why, counts: true };
        let mut live = self.live.lock().map_err(|_| failed("its lock is poisoned".into()))?;
        let deadline = Instant::now() + self.limits.time;
        if live.is_none() {
            let made = self.instantiate(deadline, stop.clone());
            *live = Some(made.map_err(|e| {
                let Failure { why, counts } = self.cause(&e);
                Failure { why: format!("cannot start it: {why}"), counts }
            })?);
        }
        let Some((store, instance)) = live.as_mut() else {
            return Err(failed("cannot start it".into()));
        };
        store.data_mut().deadline = deadline;
        store.data_mut().stop = stop;
        // The callback runs at every tick: it ends the call past its deadline or once
        // it is interrupted.
        store.set_epoch_deadline(1);
        if let Err(e) = store.set_fuel(self.limits.fuel) {
            return Err(failed(format!("cannot set its fuel: {e}")));
        }
        let result = f(store, instance);
        store.data_mut().stop = None;
        match result {
            Ok(r) => Ok(r),
            Err(e) => {
                // A trapped instance is not used again.
                *live = None;
                Err(self.cause(&e))
            }
        }
    }

    /// A fresh store and instance (its start bounded by `deadline` and `stop` too).
    fn instantiate(
        &self,
        deadline: Instant,
        stop: Option<Arc<AtomicBool>>,
    ) -> wasmtime::Result<(Store<State>, Instance)> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory)
            .trap_on_grow_failure(true)
            .build();
        let state = State {
            limits,
            name: self.name.clone(),
            config: self.config.clone(),
            wasi: self.wasi()?,
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            http_hooks: crate::http::HttpHooks::new(
                self.grants.network,
                self.grants.private_network,
                self.limits.time,
            ),
            deadline,
            stop,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_fuel(self.limits.fuel)?;
        store.epoch_deadline_callback(|cx| {
            let state = cx.data();
            if state.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Err(Interrupted.into());
            }
            if Instant::now() >= state.deadline {
                return Err(Trap::Interrupt.into());
            }
            Ok(UpdateDeadline::Continue(1))
        });
        store.set_epoch_deadline(1);
        let instance = self.linker.instantiate(&mut store, &self.component)?;
        Ok((store, instance))
    }

    /// A WASI context with only what the plugin was granted: its folders (preopened,
    /// so nothing outside them can be named). No sockets, no environment, no
    /// arguments, no stdin; output is dropped.
    fn wasi(&self) -> wasmtime::Result<WasiCtx> {
        let mut wasi = WasiCtxBuilder::new();
        for dir in &self.grants.dirs {
            let perms = if dir.write { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            for guest in &dir.guest {
                wasi.preopened_dir(&dir.host, guest, perms)?;
            }
        }
        // No sockets at all: the network grant is `wasi:http`, through the guarded client
        // (see http.rs). A raw socket would need a guard of its own.
        wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        Ok(wasi.build())
    }

    /// What went wrong, in words, and whether it counts as the plugin's failure (an
    /// interruption does not).
    fn cause(&self, e: &wasmtime::Error) -> Failure {
        let why = match e.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => {
                format!("it ran out of fuel ({} units per call)", self.limits.fuel)
            }
            Some(Trap::Interrupt) => {
                format!(
                    "it ran past its time limit ({} s per call)",
                    self.limits.time.as_secs_f64()
                )
            }
            Some(Trap::UnreachableCodeReached) => "it panicked (unreachable reached)".to_owned(),
            Some(trap) => format!("it trapped: {trap}"),
            None if e.downcast_ref::<Interrupted>().is_some() => {
                return Failure { why: Interrupted.to_string(), counts: false };
            }
            None => {
                let text = format!("{e:#}");
                // The limiter refuses the growth (`trap_on_grow_failure`).
                if text.contains("growing memory") {
                    format!(
                        "it asked for more memory than its limit ({} MiB)",
                        self.limits.memory / (1024 * 1024)
                    )
                } else {
                    e.root_cause().to_string()
                }
            }
        };
        Failure { why, counts: true }
    }
}

fn typed<P, R>(
    store: &mut Store<State>,
    instance: &Instance,
    name: &str,
) -> wasmtime::Result<wasmtime::component::TypedFunc<P, R>>
where
    P: wasmtime::component::ComponentNamedList + wasmtime::component::Lower,
    R: wasmtime::component::ComponentNamedList + Lift,
{
    instance.get_typed_func::<P, R>(&mut *store, name)
}

/// `ago` seconds in words.
fn human_age(ago: u64) -> String {
    match ago {
        0..60 => format!("{ago} s"),
        60..3600 => format!("{} min", ago / 60),
        3600..86400 => format!("{} h", ago / 3600),
        _ => format!("{} days", ago / 86400),
    }
}
