//! WASM plugins in rab: the components in `~/.rab/extensions/` and, in a trusted folder,
//! `.rab/extensions/` (rab-plugin-host). They load on a thread of their own, so start-up
//! never waits for them (print mode waits before its one request, as for MCP servers);
//! sessions that stay watch the folders and reload what changes. Without any plugin
//! file no engine is made, so start-up pays nothing. Also `rab plugin list`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rab_core::setup::{ExtensionFactory, FactoryContext, SetupError};
use rab_plugin_host::{PluginExtension, Registry, config::Sources};

/// Loads the plugins as one extension.
pub struct Plugins {
    /// Reload plugins when their files change (sessions that stay).
    pub watch: bool,
}

impl ExtensionFactory for Plugins {
    fn build(&self, cx: FactoryContext<'_>) -> Result<Arc<dyn rab_core::Extension>, SetupError> {
        let registry = registry(cx.paths.home(), cx.cwd, cx.trusted);
        let builtin = rab_core::tool_catalog::builtin(cx.cwd);
        registry.reserve(builtin.names().into_iter().map(str::to_owned).collect());
        if registry.has_files() {
            registry.start();
        }
        if self.watch
            && let Err(e) = registry.watch()
        {
            cx.warnings.push(format!("{e}; plugins will not reload by themselves"));
        }
        Ok(Arc::new(PluginExtension::new(registry)))
    }
}

/// The plugins of `cwd`, nothing loaded yet.
fn registry(rab_home: &Path, cwd: &Path, trusted: bool) -> Registry {
    let dirs = rab_plugin_host::plugin_dirs(rab_home, cwd, trusted);
    let cache = rab_plugin_host::Cache::new(rab_home.join("cache/plugins"));
    Registry::new(dirs, Sources::new(rab_home, cwd, trusted), Some(cache))
}

/// Waits (bounded) for the first load, then names on stderr every plugin that did not
/// load and every grant left out: print mode sends one request, and it should carry the
/// plugins' tools.
pub async fn wait_for_plugins(ext: &PluginExtension) {
    let registry = ext.registry();
    if !registry.has_files() {
        return;
    }
    registry.wait_ready(Duration::from_secs(120)).await;
    if registry.is_loading() {
        eprintln!("rab: warning: plugins are still loading; going on without them");
    }
    for line in problems(registry) {
        eprintln!("rab: warning: {}", crate::term::safe(&line));
    }
}

/// The plugins that did not load, and the grants left out.
fn problems(registry: &Registry) -> Vec<String> {
    let mut out: Vec<String> = registry
        .entries()
        .iter()
        .filter_map(|e| {
            e.outcome
                .as_ref()
                .err()
                .map(|why| format!("plugin {}: {why}; skipped", e.path.display()))
        })
        .collect();
    out.extend(registry.warnings());
    out
}

/// `rab plugin list`: loads this folder's plugins as a session would (the project's
/// only when trusted) and shows each with its tools, grants, state and last error.
pub fn list(rab_home: &Path, cwd: &Path, trusted: bool) -> u8 {
    let registry = registry(rab_home, cwd, trusted);
    registry.reload(false);
    outln!("{}", crate::term::safe(&registry.describe()));
    if !trusted && !plugin_files(&cwd.join(".rab/extensions")).is_empty() {
        outln!(
            "note: {} has plugins of its own; they load only in a trusted folder (rab trust)",
            cwd.join(".rab/extensions").display()
        );
    }
    0
}

/// The plugin files and folders in `dir`.
pub fn plugin_files(dir: &Path) -> Vec<PathBuf> {
    rab_plugin_host::plugin_files(dir)
}
