//! WASM plugins in rab: the components in `~/.rab/extensions/` and, in a trusted folder,
//! `.rab/extensions/` (rab-plugin-host). They run in `rab-plugins`, a helper installed
//! next to rab and started only when a plugin file is there (or, in a session that
//! stays, once one appears), so neither the WebAssembly engine nor its compiler is part
//! of `rab` or of a session without plugins. Start-up never waits for them (print mode
//! waits before its one request, as for MCP servers); sessions that stay reload what
//! changes. Also `rab plugin list`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rab_core::setup::{ExtensionFactory, FactoryContext, SetupError};
use rab_plugin_host::{HelperOptions, RemotePlugins};

/// Loads the plugins as one extension.
pub struct Plugins {
    /// Reload plugins when their files change (sessions that stay).
    pub watch: bool,
}

impl ExtensionFactory for Plugins {
    fn build(&self, cx: FactoryContext<'_>) -> Result<Arc<dyn rab_core::Extension>, SetupError> {
        let builtin = rab_core::tool_catalog::builtin(cx.cwd);
        let plugins = RemotePlugins::new(HelperOptions {
            helper: helper(),
            home: cx.paths.home().to_path_buf(),
            cwd: cx.cwd.to_path_buf(),
            trusted: cx.trusted,
            reserved: builtin.names().into_iter().map(str::to_owned).collect(),
            watch: self.watch,
        });
        plugins.begin();
        Ok(Arc::new(plugins))
    }
}

/// The helper binary: `rab-plugins` next to this rab.
fn helper() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("rab"));
    rab_plugin_host::remote::helper_next_to(&exe)
}

/// Waits (bounded) for the first load, then names on stderr every plugin that did not
/// load and every grant left out: print mode sends one request, and it should carry the
/// plugins' tools.
pub async fn wait_for_plugins(plugins: &RemotePlugins) {
    if !plugins.has_files() {
        return;
    }
    if !plugins.wait_ready(Duration::from_secs(120)).await {
        eprintln!("rab: warning: plugins are still loading; going on without them");
    }
    for line in plugins.problems() {
        eprintln!("rab: warning: {}", crate::term::safe(&line));
    }
}

/// `rab plugin list`: loads this folder's plugins as a session would (the project's
/// only when trusted), in the helper, and shows each with its tools, grants, state and
/// last error.
pub fn list(rab_home: &Path, cwd: &Path, trusted: bool) -> u8 {
    let trust = if trusted { "trusted" } else { "untrusted" };
    let helper = helper();
    let out = std::process::Command::new(&helper)
        .arg("list")
        .arg(rab_home)
        .arg(cwd)
        .arg(trust)
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            outln!("{}", crate::term::safe(text.trim_end()));
        }
        Ok(out) => {
            eprintln!(
                "rab: the plugin helper failed: {}",
                crate::term::safe(String::from_utf8_lossy(&out.stderr).trim())
            );
            return 1;
        }
        Err(e) => {
            eprintln!(
                "rab: cannot run the plugin helper {}: {e} (it is installed next to rab; \
                 reinstall rab to get it)",
                helper.display()
            );
            return 1;
        }
    }
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
