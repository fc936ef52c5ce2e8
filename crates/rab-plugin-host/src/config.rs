//! A plugin's settings: its limits, what it is granted, and its own `[config]` table.
//!
//! They come from, in order, each overriding the one before key by key:
//! 1. the `config.toml` beside the `.wasm` in a plugin folder;
//! 2. `~/.rab/extensions.toml`, table `[plugins.NAME]`;
//! 3. the project's `.rab/extensions.toml`, table `[plugins.NAME]` (trusted folders only),
//!
//! where NAME is the file's name without `.wasm`, or the folder's name. Nothing is
//! granted unless one of them says so, and file grants must lie inside the workspace.
//!
//! A table is bound to where the plugin comes from, never to its name alone: a table of
//! `~/.rab/extensions.toml` applies by name to your own plugins (`~/.rab/extensions/`)
//! only, and to any other plugin only when it names the plugin's `source` (its path)
//! and `sha256` (of its `.wasm`; a changed file loses the table until you update it); a
//! table of the project's file applies to the project's own plugins
//! (`.rab/extensions/`) only. So a project's plugin named like yours gets none of your
//! grants, and a project cannot widen what your own plugins may do.
//!
//! ```toml
//! [limits]
//! fuel = 5000000000      # per call
//! time-secs = 60         # wall time per call
//! memory-mib = 512
//! max-traps = 5          # failures in a row before the plugin is disabled
//!
//! [grants]
//! files = ["docs"]       # read-only, relative to the workspace
//! write = ["out"]        # read and write
//! network = true         # HTTP (wasi:http) to public addresses only
//! private-network = true # and to local ones (only from ~/.rab, never a project)
//!
//! [config]               # what the plugin reads with `config()`, as JSON
//! greeting = "hello"
//! ```

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::Limits;

/// One layer of settings as written (every key optional).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// The plugin this table is for (its file or folder), for a plugin that is not in
    /// your own extensions folder; needs `sha256`.
    pub source: Option<String>,
    /// The SHA-256 of the plugin's `.wasm` (hex), with `source`.
    pub sha256: Option<String>,
    /// Limit overrides.
    #[serde(default)]
    pub limits: LimitsLayer,
    /// Grant overrides.
    #[serde(default)]
    pub grants: GrantsLayer,
    /// The plugin's own settings.
    #[serde(default)]
    pub config: Option<toml::Table>,
}

/// `[limits]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LimitsLayer {
    /// Fuel per call.
    pub fuel: Option<u64>,
    /// Wall time per call, in seconds.
    pub time_secs: Option<f64>,
    /// Memory, in MiB.
    pub memory_mib: Option<u64>,
    /// Failures in a row before the plugin is disabled.
    pub max_traps: Option<u32>,
}

/// `[grants]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantsLayer {
    /// Folders the plugin may read.
    pub files: Option<Vec<String>>,
    /// Folders the plugin may read and write.
    pub write: Option<Vec<String>>,
    /// Outgoing HTTP to public addresses.
    pub network: Option<bool>,
    /// With `network`: private, loopback and link-local addresses too (local services).
    /// Honoured only from the user's own files, never a project's.
    #[serde(rename = "private-network")]
    pub private_network: Option<bool>,
}

/// An `extensions.toml`: `[plugins.NAME]` tables.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtensionsFile {
    #[serde(default)]
    plugins: BTreeMap<String, Layer>,
}

/// A plugin's settings, all layers applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Its limits.
    pub limits: Limits,
    /// What it may use.
    pub grants: Grants,
    /// Its `[config]` table as JSON text.
    pub config: String,
}

impl Default for Settings {
    /// The default limits, nothing granted, an empty `[config]`.
    fn default() -> Self {
        Self { limits: Limits::default(), grants: Grants::default(), config: "{}".into() }
    }
}

impl Settings {
    /// The defaults with `limits`.
    pub fn with_limits(limits: Limits) -> Self {
        Self { limits, ..Self::default() }
    }
}

/// What a plugin may use beyond its own memory, resolved against the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// Folders, each with whether it may be written.
    pub dirs: Vec<DirGrant>,
    /// Outgoing HTTP to public addresses.
    pub network: bool,
    /// With `network`: private, loopback and link-local addresses too.
    pub private_network: bool,
}

/// A granted folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirGrant {
    /// The folder on disk (canonical).
    pub host: PathBuf,
    /// The names the plugin sees it under: the absolute path, and the path as written
    /// (relative to the workspace) when it was relative.
    pub guest: Vec<String>,
    /// Whether it may be written.
    pub write: bool,
}

impl Grants {
    /// The grants in words, for `rab plugin list` (`none` without any).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("{} ({})", d.host.display(), if d.write { "rw" } else { "ro" }))
            .collect();
        match (self.network, self.private_network) {
            (true, false) => parts.push("network (public addresses)".into()),
            (true, true) => parts.push("network (private addresses too)".into()),
            (false, _) => {}
        }
        if parts.is_empty() { "none".into() } else { parts.join(", ") }
    }
}

/// Where the settings files are.
#[derive(Clone, Debug)]
pub struct Sources {
    /// `~/.rab/extensions.toml`.
    pub global: PathBuf,
    /// `.rab/extensions.toml`, when the folder is trusted.
    pub project: Option<PathBuf>,
    /// The workspace file grants are relative to and must lie in.
    pub workspace: PathBuf,
    /// rab's home: files under it are the user's own (they may grant
    /// `private-network`).
    pub home: PathBuf,
}

impl Sources {
    /// The files for `rab_home` and `cwd`.
    pub fn new(rab_home: &Path, cwd: &Path, trusted: bool) -> Self {
        Self {
            home: rab_home.to_path_buf(),
            global: rab_home.join("extensions.toml"),
            project: trusted.then(|| cwd.join(".rab/extensions.toml")),
            workspace: cwd.to_path_buf(),
        }
    }

    /// The files that exist, for the watcher and for fingerprints.
    pub fn files(&self) -> Vec<PathBuf> {
        std::iter::once(self.global.clone()).chain(self.project.clone()).collect()
    }

    /// The settings of the plugin at `path` (a `.wasm` file or a folder), its `.wasm`
    /// hashed from disk. An unreadable or malformed file is an error naming it; a grant
    /// that cannot be given (missing, outside the workspace) is left out with a warning.
    pub fn settings(&self, path: &Path, warnings: &mut Vec<String>) -> Result<Settings, String> {
        let hash = crate::component_file(path)
            .and_then(|wasm| std::fs::read(&wasm).map_err(|e| e.to_string()))
            .map(|bytes| sha256_hex(&bytes))
            .ok();
        self.settings_for(path, hash.as_deref(), warnings)
    }

    /// [`Sources::settings`] for a plugin whose `.wasm` has the SHA-256 `hash` (hex; the
    /// bytes about to be loaded, so the tables pinned to it are for what runs).
    pub fn settings_for(
        &self,
        path: &Path,
        hash: Option<&str>,
        warnings: &mut Vec<String>,
    ) -> Result<Settings, String> {
        let key = plugin_key(path);
        let mut layers = Vec::new();
        if path.is_dir() {
            let own = path.join("config.toml");
            if own.is_file() {
                layers.push((own.clone(), read_layer(&own)?));
            }
        }
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let under = |dir: PathBuf| dir.canonicalize().is_ok_and(|d| real.starts_with(d));
        let is_own = under(self.home.join("extensions"));
        let is_projects = under(self.workspace.join(".rab/extensions"));
        for file in self.files() {
            if !file.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let parsed: ExtensionsFile =
                toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            let is_global = file == self.global;
            if is_global {
                for (name, layer) in &parsed.plugins {
                    let Some(source) = &layer.source else { continue };
                    let pinned = Path::new(source).canonicalize().is_ok_and(|s| s == real);
                    if !pinned {
                        continue;
                    }
                    match (&layer.sha256, hash) {
                        (Some(want), Some(have)) if want.eq_ignore_ascii_case(have) => {
                            layers.push((file.clone(), layer.clone()));
                        }
                        (want, have) => warnings.push(format!(
                            "plugin {key}: [plugins.{name}] in {} is not applied: {}",
                            file.display(),
                            match (want, have) {
                                (None, _) => "a table with source needs the sha256 of the \
                                              plugin's .wasm too"
                                    .to_owned(),
                                (Some(_), Some(have)) => format!(
                                    "the plugin changed since (its sha256 is now {have}); \
                                     check it and update sha256 to grant it again"
                                ),
                                (Some(_), None) => "its .wasm cannot be read".to_owned(),
                            }
                        )),
                    }
                }
            }
            let Some(layer) = parsed.plugins.get(&key).filter(|l| l.source.is_none()) else {
                continue;
            };
            if (is_global && is_own) || (!is_global && is_projects) {
                layers.push((file.clone(), layer.clone()));
            } else {
                let whose =
                    if is_global { "your own plugins" } else { "the project's own plugins" };
                let fix = if is_global {
                    format!(
                        "; to give this one settings, add a table with source = {:?} and \
                         sha256 = {:?}",
                        real.display().to_string(),
                        hash.unwrap_or("…")
                    )
                } else {
                    String::new()
                };
                warnings.push(format!(
                    "plugin {key} from {}: [plugins.{key}] in {} is for {whose} of that \
                     name, not this one, and is not applied{fix}",
                    path.display(),
                    file.display()
                ));
            }
        }
        let mut settings = Settings::default();
        let mut config = toml::Table::new();
        for (file, layer) in layers {
            apply_limits(&mut settings.limits, &layer.limits, &file)?;
            if let Some(network) = layer.grants.network {
                settings.grants.network = network;
            }
            match layer.grants.private_network {
                Some(true) if !file.starts_with(&self.home) => warnings.push(format!(
                    "plugin {key}: private-network in {} is ignored: only your own settings \
                     ({}) can let a plugin reach local services",
                    file.display(),
                    self.global.display()
                )),
                Some(private) => settings.grants.private_network = private,
                None => {}
            }
            if layer.grants.files.is_some() || layer.grants.write.is_some() {
                let read = layer.grants.files.unwrap_or_default();
                let write = layer.grants.write.unwrap_or_default();
                settings.grants.dirs = read
                    .iter()
                    .map(|p| (p, false))
                    .chain(write.iter().map(|p| (p, true)))
                    .filter_map(|(p, w)| match resolve_dir(&self.workspace, p, w) {
                        Ok(grant) => Some(grant),
                        Err(why) => {
                            warnings.push(format!(
                                "plugin {key}: the grant {p:?} in {} is left out: {why}",
                                file.display()
                            ));
                            None
                        }
                    })
                    .collect();
            }
            if let Some(table) = layer.config {
                config.extend(table);
            }
        }
        settings.config = serde_json::to_string(&config).unwrap_or_else(|_| "{}".into());
        Ok(settings)
    }
}

/// SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The name settings files know a plugin by: the file's name without `.wasm`, or the
/// folder's name.
pub fn plugin_key(path: &Path) -> String {
    let name = if path.is_dir() { path.file_name() } else { path.file_stem() };
    name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn read_layer(file: &Path) -> Result<Layer, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))
}

fn apply_limits(limits: &mut Limits, layer: &LimitsLayer, file: &Path) -> Result<(), String> {
    let bad = |what: &str| format!("{}: {what}", file.display());
    if let Some(fuel) = layer.fuel {
        if fuel == 0 {
            return Err(bad("limits.fuel must be more than 0"));
        }
        limits.fuel = fuel;
    }
    if let Some(secs) = layer.time_secs {
        if !(secs > 0.0 && secs <= 3600.0) {
            return Err(bad("limits.time-secs must be more than 0 and at most 3600"));
        }
        limits.time = Duration::from_secs_f64(secs);
    }
    if let Some(mib) = layer.memory_mib {
        if mib == 0 || mib > 16 * 1024 {
            return Err(bad("limits.memory-mib must be between 1 and 16384"));
        }
        limits.memory = usize::try_from(mib * 1024 * 1024).unwrap_or(usize::MAX);
    }
    if let Some(n) = layer.max_traps {
        if n == 0 {
            return Err(bad("limits.max-traps must be at least 1"));
        }
        limits.max_traps = n;
    }
    Ok(())
}

/// A granted folder: it must exist and, with links resolved, lie inside the workspace.
fn resolve_dir(workspace: &Path, written: &str, write: bool) -> Result<DirGrant, String> {
    let given = Path::new(written);
    let joined = if given.is_absolute() { given.to_path_buf() } else { workspace.join(given) };
    let host = joined.canonicalize().map_err(|e| format!("{}: {e}", joined.display()))?;
    if !host.is_dir() {
        return Err("it is not a folder".into());
    }
    let root = workspace.canonicalize().map_err(|e| format!("the workspace: {e}"))?;
    if !host.starts_with(&root) {
        return Err(format!(
            "{} is outside the workspace {} (grants must lie inside it)",
            host.display(),
            root.display()
        ));
    }
    let mut guest = vec![host.to_string_lossy().into_owned()];
    if !given.is_absolute() {
        let relative: PathBuf =
            given.components().filter(|c| !matches!(c, Component::CurDir)).collect();
        let relative = relative.to_string_lossy().into_owned();
        guest.push(if relative.is_empty() { ".".into() } else { relative });
    }
    Ok(DirGrant { host, guest, write })
}

#[cfg(test)]
mod tests;
