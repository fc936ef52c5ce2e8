//! The plugins of a session, kept current: loaded off the start-up path, reloaded when
//! their files change (a watcher) or by hand, and offered to the agent as a tool source
//! whose version changes with every reload, so the next request carries the new tools.
//!
//! A reload swaps whole plugins: a call in flight holds its plugin and finishes on the
//! old instance; the next call gets the new one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use rab_agent::{AgentTool, ToolSource};

use crate::config::{Sources, plugin_key};
use crate::{Cache, Host, Plugin};

/// How long the watcher waits for a burst of file events to end before reloading.
pub(crate) const SETTLE: Duration = Duration::from_millis(200);

/// One plugin file or folder and what became of it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The file or folder.
    pub path: PathBuf,
    /// The loaded plugin, or why it is not loaded.
    pub outcome: Result<Arc<Plugin>, String>,
    fingerprint: Vec<(PathBuf, u64, Option<SystemTime>)>,
    generation: u64,
}

impl Entry {
    /// The plugin's name, or the file's when it did not load.
    pub fn name(&self) -> String {
        match &self.outcome {
            Ok(p) => p.name().to_owned(),
            Err(_) => plugin_key(&self.path),
        }
    }

    /// How many times this file was loaded (1 at first, one more with each reload).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// The plugins of one workspace.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    dirs: Vec<PathBuf>,
    sources: Sources,
    cache: Option<Cache>,
    entries: Mutex<Vec<Entry>>,
    /// Warnings of the last reload (grants left out, …).
    warnings: Mutex<Vec<String>>,
    loading: Mutex<bool>,
    version: AtomicU64,
    changed: tokio::sync::watch::Sender<u64>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// Serialises reloads.
    reloading: Mutex<()>,
    /// Tool names rab's own tools have: a plugin's tool of such a name is left out.
    reserved: Mutex<Vec<String>>,
    /// Plugins whose files were removed while the session ran (name, generation), so
    /// the front ends can say so; dropped when one of that name loads again.
    removed: Mutex<Vec<(String, u64)>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("dirs", &self.inner.dirs).finish()
    }
}

impl Registry {
    /// A registry over `dirs` (nothing loaded yet), with settings from `sources` and
    /// compiled components kept in `cache`.
    pub fn new(dirs: Vec<PathBuf>, sources: Sources, cache: Option<Cache>) -> Self {
        let (changed, _) = tokio::sync::watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                dirs,
                sources,
                cache,
                entries: Mutex::new(Vec::new()),
                warnings: Mutex::new(Vec::new()),
                loading: Mutex::new(false),
                version: AtomicU64::new(0),
                changed,
                watcher: Mutex::new(None),
                reloading: Mutex::new(()),
                reserved: Mutex::new(Vec::new()),
                removed: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Names rab's own tools have: a plugin's tool of such a name is left out, with a
    /// warning (a plugin cannot stand in for `bash` or `edit`).
    pub fn reserve(&self, names: Vec<String>) {
        if let Ok(mut r) = self.inner.reserved.lock() {
            *r = names;
        }
    }

    /// Whether any plugin file or folder is there to load.
    pub fn has_files(&self) -> bool {
        self.inner.dirs.iter().any(|d| !plugin_files(d).is_empty())
    }

    /// Loads the plugins on a thread of its own; [`Registry::wait_ready`] waits for it.
    pub fn start(&self) {
        self.set_loading(true);
        let me = self.clone();
        let spawned = std::thread::Builder::new().name("rab-plugin-load".into()).spawn(move || {
            me.reload(false);
            me.set_loading(false);
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the plugin loader: {e}");
            self.reload(false);
            self.set_loading(false);
        }
    }

    /// Whether the first load is still running.
    pub fn is_loading(&self) -> bool {
        self.inner.loading.lock().map(|l| *l).unwrap_or(false)
    }

    fn set_loading(&self, loading: bool) {
        if let Ok(mut l) = self.inner.loading.lock() {
            *l = loading;
        }
        self.bump();
    }

    /// Waits (at most `limit`) until the first load is done.
    pub async fn wait_ready(&self, limit: Duration) {
        let mut rx = self.inner.changed.subscribe();
        let _ = tokio::time::timeout(limit, async {
            while self.is_loading() {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// Rescans the folders: loads what is new or changed (every plugin when `force`),
    /// drops what is gone. Blocking; returns one line per change.
    pub fn reload(&self, force: bool) -> Vec<String> {
        let Ok(_one) = self.inner.reloading.lock() else { return Vec::new() };
        let old: Vec<Entry> = self.entries();
        let mut warnings = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        let mut changes = Vec::new();
        let settings_files = self.inner.sources.files();
        let mut host: Option<Result<Host, String>> = None;
        for dir in &self.inner.dirs {
            for path in plugin_files(dir) {
                let fingerprint = fingerprint(&path, &settings_files);
                let before = old.iter().find(|e| e.path == path);
                if !force && let Some(e) = before.filter(|e| e.fingerprint == fingerprint) {
                    entries.push(e.clone());
                    continue;
                }
                let host = host.get_or_insert_with(|| Host::shared().map_err(|e| e.to_string()));
                let outcome = match host {
                    Ok(host) => self.load_one(host, &path, &mut warnings),
                    Err(e) => Err(format!("plugins are off: {e}")),
                };
                let outcome = match outcome {
                    Ok(p) => match entries.iter().find_map(|e| {
                        e.outcome.as_ref().ok().filter(|q| q.name() == p.name()).map(|_| &e.path)
                    }) {
                        Some(first) => Err(format!(
                            "a plugin named {} is already loaded from {}",
                            p.name(),
                            first.display()
                        )),
                        None => Ok(p),
                    },
                    Err(e) => Err(e),
                };
                let verb = if before.is_some() { "reloaded" } else { "loaded" };
                match &outcome {
                    Ok(p) => changes.push(format!(
                        "plugin {} {verb} from {} ({} tools)",
                        p.name(),
                        path.display(),
                        p.tools().len()
                    )),
                    Err(why) => {
                        tracing::warn!(path = %path.display(), "plugin skipped: {why}");
                        changes.push(format!("plugin {}: {why}; skipped", path.display()));
                    }
                }
                let generation = before.map_or(1, |b| b.generation + 1);
                entries.push(Entry { path, outcome, fingerprint, generation });
            }
        }
        warnings.extend(self.clashes(&entries));
        let gone: Vec<&Entry> =
            old.iter().filter(|o| !entries.iter().any(|e| e.path == o.path)).collect();
        if let Ok(mut removed) = self.inner.removed.lock() {
            removed.retain(|(name, _)| !entries.iter().any(|e| e.name() == *name));
            for g in &gone {
                removed.retain(|(name, _)| *name != g.name());
                removed.push((g.name(), g.generation + 1));
            }
        }
        for gone in gone {
            changes.push(format!(
                "plugin {} unloaded ({} was removed)",
                gone.name(),
                gone.path.display()
            ));
        }
        if let Ok(mut e) = self.inner.entries.lock() {
            *e = entries;
        }
        if let Ok(mut w) = self.inner.warnings.lock() {
            *w = warnings;
        }
        if !changes.is_empty() || force {
            self.bump();
        }
        changes
    }

    /// Tools left out because rab or an earlier plugin has one of that name.
    fn clashes(&self, entries: &[Entry]) -> Vec<String> {
        let reserved = self.inner.reserved.lock().map(|r| r.clone()).unwrap_or_default();
        let mut seen: Vec<(String, String)> = Vec::new();
        let mut out = Vec::new();
        for p in entries.iter().filter_map(|e| e.outcome.as_ref().ok()) {
            for tool in p.tools() {
                if reserved.contains(&tool.name) {
                    out.push(format!(
                        "plugin {}: its tool {} is left out: rab has a tool of that name",
                        p.name(),
                        tool.name
                    ));
                } else if let Some((_, first)) = seen.iter().find(|(t, _)| *t == tool.name) {
                    out.push(format!(
                        "plugin {}: its tool {} is left out: plugin {first} has one of that name",
                        p.name(),
                        tool.name
                    ));
                } else {
                    seen.push((tool.name.clone(), p.name().to_owned()));
                }
            }
        }
        out
    }

    fn load_one(
        &self,
        host: &Host,
        path: &Path,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<Plugin>, String> {
        // Read once: the settings pinned to the plugin's hash are for the bytes loaded.
        let wasm = crate::component_file(path)?;
        let bytes = std::fs::read(&wasm).map_err(|e| format!("cannot read it: {e}"))?;
        let hash = crate::config::sha256_hex(&bytes);
        let settings = self.inner.sources.settings_for(path, Some(&hash), warnings)?;
        let plugin = host.load_with(&wasm, &bytes, settings, self.inner.cache.as_ref()).map_err(
            |e| match e {
                crate::PluginError::Load { why, .. } => why,
                other => other.to_string(),
            },
        )?;
        if let Some(cache) = &self.inner.cache {
            plugin
                .keep_errors_in(cache.dir().join("errors").join(format!("{}.txt", plugin.name())));
        }
        // Disabled: the front ends hear of it through the changed status.
        let weak = Arc::downgrade(&self.inner);
        plugin.on_disabled(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                Registry { inner }.bump();
            }
        }));
        Ok(Arc::new(plugin))
    }

    fn bump(&self) {
        let v = self.inner.version.fetch_add(1, Ordering::Relaxed) + 1;
        self.inner.changed.send_replace(v);
    }

    /// Every plugin file and what became of it.
    pub fn entries(&self) -> Vec<Entry> {
        self.inner.entries.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The plugins that loaded.
    pub fn plugins(&self) -> Vec<Arc<Plugin>> {
        self.entries().into_iter().filter_map(|e| e.outcome.ok()).collect()
    }

    /// Plugins whose files were removed while this registry ran: name and the
    /// generation their removal counts as.
    pub fn removed(&self) -> Vec<(String, u64)> {
        self.inner.removed.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Warnings of the last reload.
    pub fn warnings(&self) -> Vec<String> {
        self.inner.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// A counter that changes with every reload.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Reloads on its own when a plugin file, a plugin's `config.toml` or an
    /// `extensions.toml` changes (after the burst of events settles).
    pub fn watch(&self) -> Result<(), String> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            if ev.is_ok_and(|e| !e.kind.is_access()) {
                let _ = tx.send(());
            }
        })
        .map_err(|e| format!("cannot watch the plugin folders: {e}"))?;
        self.add_watches(&mut watcher);
        if let Ok(mut w) = self.inner.watcher.lock() {
            *w = Some(watcher);
        }
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        std::thread::Builder::new()
            .name("rab-plugin-watch".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    while rx.recv_timeout(SETTLE).is_ok() {}
                    let Some(inner) = weak.upgrade() else { break };
                    let me = Registry { inner };
                    for change in me.reload(false) {
                        tracing::info!("{change}");
                    }
                    if let Ok(mut w) = me.inner.watcher.lock()
                        && let Some(w) = w.as_mut()
                    {
                        me.add_watches(w);
                    }
                }
            })
            .map_err(|e| format!("cannot start the plugin watcher: {e}"))?;
        Ok(())
    }

    fn add_watches(&self, watcher: &mut notify::RecommendedWatcher) {
        add_watches(watcher, &self.inner.dirs, &self.inner.sources.files());
    }

    /// The plugins in words: each with its tools, grants, state and last error.
    pub fn describe(&self) -> String {
        let entries = self.entries();
        if entries.is_empty() {
            let dirs: Vec<String> =
                self.inner.dirs.iter().map(|d| d.display().to_string()).collect();
            return format!("no plugins (looked in {})", dirs.join(" and "));
        }
        let mut out = String::new();
        for e in entries {
            match &e.outcome {
                Ok(p) => {
                    let state = if p.is_disabled() { "disabled" } else { "loaded" };
                    out.push_str(&format!("{} ({state}) {}\n", p.name(), e.path.display()));
                    let tools: Vec<String> = p
                        .tools()
                        .iter()
                        .map(|t| format!("{} [{}]", t.name, p.level(&t.name).as_str()))
                        .collect();
                    let tools = if tools.is_empty() { "none".into() } else { tools.join(", ") };
                    out.push_str(&format!("  tools: {tools}\n"));
                    if !p.commands().is_empty() {
                        let commands: Vec<String> =
                            p.commands().iter().map(|c| format!("/{}", c.name)).collect();
                        out.push_str(&format!("  commands: {}\n", commands.join(", ")));
                    }
                    out.push_str(&format!("  grants: {}\n", p.grants().describe()));
                    if let Some(error) = p.last_error() {
                        out.push_str(&format!("  last error: {error}\n"));
                    }
                }
                Err(why) => {
                    out.push_str(&format!("{} (not loaded) {}\n", e.name(), e.path.display()));
                    out.push_str(&format!("  error: {why}\n"));
                }
            }
        }
        for w in self.warnings() {
            out.push_str(&format!("warning: {w}\n"));
        }
        out.trim_end().to_owned()
    }
}

impl ToolSource for Registry {
    fn version(&self) -> u64 {
        self.inner.version.load(Ordering::Relaxed)
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.offered().iter().map(|(plugin, def)| crate::tool::agent_tool(plugin, def)).collect()
    }
}

impl Registry {
    /// The tools offered, each with its plugin: rab's names and later plugins' clashes
    /// left out.
    pub(crate) fn offered(&self) -> Vec<(Arc<Plugin>, crate::ToolDef)> {
        let reserved = self.inner.reserved.lock().map(|r| r.clone()).unwrap_or_default();
        let mut out: Vec<(Arc<Plugin>, crate::ToolDef)> = Vec::new();
        for plugin in self.plugins() {
            for def in plugin.tools() {
                if !reserved.contains(&def.name) && !out.iter().any(|(_, d)| d.name == def.name) {
                    out.push((plugin.clone(), def.clone()));
                }
            }
        }
        out
    }

    /// What the last load could not do, as print mode reports it: plugins skipped and
    /// grants left out.
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries()
            .iter()
            .filter_map(|e| {
                e.outcome
                    .as_ref()
                    .err()
                    .map(|why| format!("plugin {}: {why}; skipped", e.path.display()))
            })
            .collect();
        out.extend(self.warnings());
        out
    }
}

/// Watches each plugin folder that exists (recursively, for plugin folders), else the
/// folder it would be made in, and the folders of the settings `files`.
pub(crate) fn add_watches(
    watcher: &mut notify::RecommendedWatcher,
    dirs: &[PathBuf],
    files: &[PathBuf],
) {
    use notify::{RecursiveMode, Watcher};
    for dir in dirs {
        let ok = dir.is_dir() && watcher.watch(dir, RecursiveMode::Recursive).is_ok();
        if !ok && let Some(parent) = dir.parent().filter(|p| p.is_dir()) {
            let _ = watcher.watch(parent, RecursiveMode::NonRecursive);
        }
    }
    for file in files {
        if let Some(parent) = file.parent().filter(|p| p.is_dir()) {
            let _ = watcher.watch(parent, RecursiveMode::NonRecursive);
        }
    }
}

/// The plugin files and folders in `dir`, sorted.
pub fn plugin_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    paths.sort();
    paths
}

/// What a plugin's load depends on: its files and the settings files, by size and
/// modification time.
fn fingerprint(path: &Path, settings: &[PathBuf]) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default()
    } else {
        vec![path.to_path_buf()]
    };
    files.sort();
    files.extend(settings.iter().cloned());
    files
        .into_iter()
        .map(|f| {
            let meta = std::fs::metadata(&f).ok();
            let len = meta.as_ref().map_or(0, |m| m.len());
            let modified = meta.and_then(|m| m.modified().ok());
            (f, len, modified)
        })
        .collect()
}
