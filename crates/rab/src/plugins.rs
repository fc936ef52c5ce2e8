//! WASM plugins in rab: the components in `~/.rab/extensions/` and, in a trusted folder,
//! `.rab/extensions/`, loaded at start-up and on `/reload` (rab-plugin-host). Without
//! any plugin file no engine is made, so start-up pays nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rab_core::setup::{ExtensionFactory, FactoryContext, SetupError};
use rab_plugin_host::PluginExtension;

/// Loads the plugins as one extension.
pub struct Plugins;

impl ExtensionFactory for Plugins {
    fn build(&self, cx: FactoryContext<'_>) -> Result<Arc<dyn rab_core::Extension>, SetupError> {
        let dirs = rab_plugin_host::plugin_dirs(cx.paths.home(), cx.cwd, cx.trusted);
        if !dirs.iter().any(|d| !entries(d).is_empty()) {
            return Ok(Arc::new(PluginExtension::new(Vec::new())));
        }
        let plugins = match rab_plugin_host::Host::shared() {
            Ok(host) => {
                let cache = rab_plugin_host::Cache::new(cx.paths.home().join("cache/plugins"));
                rab_plugin_host::load_all(&host, &dirs, Some(&cache), cx.warnings)
            }
            Err(e) => {
                cx.warnings.push(format!("{e}; plugins are off"));
                Vec::new()
            }
        };
        Ok(Arc::new(PluginExtension::new(plugins)))
    }
}

/// The plugin files and folders in `dir`.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    read.flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "wasm"))
        .collect()
}
