#![deny(missing_docs)]

//! rab-plugin-host: WASM plugins as extensions. A plugin is a WebAssembly component of
//! the `rab:plugin` world (`wit/plugin.wit`, the one contract for the host, the guest SDK
//! and any component toolchain), loaded from `~/.rab/extensions/` and — in trusted
//! folders only — `.rab/extensions/`: a `.wasm` file, or a folder holding one.
//!
//! Each plugin becomes one more [`rab_core::Extension`]: its tools go through the same
//! permission gate, hooks, secret firewall and tape as the built-in ones, at the level
//! the plugin declares (`tool-levels`; undeclared is `execute`). Calls run one at a
//! time per plugin under [`Limits`] (fuel, wall time through epochs, memory); a trap
//! becomes a tool error naming the plugin and the cause, and the host, the session and
//! other plugins go on.

mod cache;
pub mod config;
mod declared;
mod http;
mod plugin;
mod registry;
pub mod remote;
pub mod serve;
mod tool;
pub mod wire;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

pub use cache::{Cache, DEFAULT_CAP};
pub use config::Settings;
pub use plugin::{Limits, Plugin, SlashCommand, ToolDef};
pub use registry::{Entry, Registry, plugin_files};
pub use remote::{HelperOptions, RemotePlugins};
pub use tool::{PluginExtension, agent_tools};

/// How often the epoch ticks: the granularity of the wall-time limit.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Why a plugin could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The engine could not be made.
    #[error("cannot start the WebAssembly engine: {0}")]
    Engine(String),
    /// A plugin file could not be loaded.
    #[error("plugin {}: {why}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// The engine and linker every plugin shares, with the epoch ticker running.
#[derive(Clone)]
pub struct Host {
    engine: Engine,
    linker: Linker<plugin::State>,
}

impl Host {
    /// The process's plugin host (made once: one engine, one epoch ticker).
    pub fn shared() -> Result<Self, PluginError> {
        static HOST: OnceLock<Result<Host, String>> = OnceLock::new();
        HOST.get_or_init(|| Self::new().map_err(|e| e.to_string()))
            .clone()
            .map_err(PluginError::Engine)
    }

    fn new() -> Result<Self, PluginError> {
        let mut config = Config::new();
        config.wasm_component_model(true).consume_fuel(true).epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| PluginError::Engine(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        host_imports(&mut linker).map_err(|e| PluginError::Engine(e.to_string()))?;
        // WASI, for components that import it (every componentize-py one does): each
        // store's context holds only what its plugin was granted.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Engine(e.to_string()))?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Engine(e.to_string()))?;
        let ticker = engine.weak();
        let spawned =
            std::thread::Builder::new().name("rab-plugin-epoch".into()).spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            });
        if let Err(e) = spawned {
            return Err(PluginError::Engine(format!("cannot start the epoch ticker: {e}")));
        }
        Ok(Self { engine, linker })
    }

    /// Loads the component in `bytes` (a `.wasm` file's content) as the plugin at `path`.
    pub fn load_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        settings: Settings,
    ) -> Result<Plugin, PluginError> {
        self.load_with(path, bytes, settings, None)
    }

    /// [`Host::load_bytes`], taking the compiled component from `cache` when it has it
    /// (and keeping it there when not).
    pub fn load_with(
        &self,
        path: &Path,
        bytes: &[u8],
        settings: Settings,
        cache: Option<&Cache>,
    ) -> Result<Plugin, PluginError> {
        let compiled = match cache {
            Some(cache) => cache.component(&self.engine, bytes).map(|(c, _)| c),
            None => Component::new(&self.engine, bytes),
        };
        let component = compiled.map_err(|e| PluginError::Load {
            path: path.to_path_buf(),
            why: format!("not a rab plugin component: {e:#}"),
        })?;
        Plugin::load(&self.engine, &self.linker, path, component, settings)
    }

    /// The engine plugins are compiled for.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Loads the plugin in `path`: a `.wasm` file, or a folder with one.
    pub fn load(
        &self,
        path: &Path,
        settings: Settings,
        cache: Option<&Cache>,
    ) -> Result<Plugin, PluginError> {
        let failed = |why: String| PluginError::Load { path: path.to_path_buf(), why };
        let wasm = component_file(path).map_err(failed)?;
        let bytes = std::fs::read(&wasm).map_err(|e| failed(format!("cannot read it: {e}")))?;
        self.load_with(&wasm, &bytes, settings, cache)
    }
}

/// The `.wasm` of the plugin at `path`: the file itself, or the one `.wasm` file in a
/// plugin folder.
pub fn component_file(path: &Path) -> Result<PathBuf, String> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("the folder has no .wasm file".into()),
        _ => Err("the folder has more than one .wasm file".into()),
    }
}

/// What rab offers a plugin: `rab:plugin/host`.
fn host_imports(linker: &mut Linker<plugin::State>) -> wasmtime::Result<()> {
    let mut host = linker.instance("rab:plugin/host")?;
    host.func_wrap(
        "log",
        |cx: wasmtime::StoreContextMut<'_, plugin::State>, (level, message): (String, String)| {
            let name = &cx.data().name;
            match level.as_str() {
                "error" => tracing::error!(plugin = %name, "{message}"),
                "warn" => tracing::warn!(plugin = %name, "{message}"),
                "debug" => tracing::debug!(plugin = %name, "{message}"),
                "trace" => tracing::trace!(plugin = %name, "{message}"),
                _ => tracing::info!(plugin = %name, "{message}"),
            }
            Ok(())
        },
    )?;
    host.func_wrap("config", |cx: wasmtime::StoreContextMut<'_, plugin::State>, (): ()| {
        Ok((cx.data().config.clone(),))
    })?;
    Ok(())
}

/// Where plugins are found: `~/.rab/extensions/`, and the project's `.rab/extensions/`
/// when the folder is trusted (first).
pub fn plugin_dirs(rab_home: &Path, cwd: &Path, trusted: bool) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if trusted {
        dirs.push(cwd.join(".rab/extensions"));
    }
    dirs.push(rab_home.join("extensions"));
    dirs
}

#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
#[cfg(test)]
mod tests;
