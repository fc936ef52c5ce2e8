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

    /// The settings of the plugin at `path` (a `.wasm` file or a folder). An unreadable
    /// or malformed file is an error naming it; a grant that cannot be given (missing,
    /// outside the workspace) is left out with a warning.
    pub fn settings(&self, path: &Path, warnings: &mut Vec<String>) -> Result<Settings, String> {
        let key = plugin_key(path);
        let mut layers = Vec::new();
        if path.is_dir() {
            let own = path.join("config.toml");
            if own.is_file() {
                layers.push((own.clone(), read_layer(&own)?));
            }
        }
        for file in self.files() {
            if !file.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let parsed: ExtensionsFile =
                toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            if let Some(layer) = parsed.plugins.get(&key) {
                layers.push((file.clone(), layer.clone()));
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
mod tests {
    use super::*;

    #[test]
    fn layers_override_and_grants_stay_inside_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        let outside = tmp.path().join("outside");
        for d in [&home, &work.join("docs"), &work.join("out"), &work.join(".rab"), &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let plugin = home.join("extensions/hello");
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(
            plugin.join("config.toml"),
            "[limits]\nfuel = 10\ntime-secs = 2\n[config]\na = 1\nb = \"x\"\n",
        )
        .unwrap();
        std::fs::write(
            home.join("extensions.toml"),
            "[plugins.hello]\nlimits.fuel = 20\nconfig.b = \"y\"\n",
        )
        .unwrap();
        std::fs::write(
            work.join(".rab/extensions.toml"),
            format!(
                "[plugins.hello.grants]\nfiles = [\"docs\", \"../outside\", \"{}\"]\nwrite = \
                 [\"out\"]\n",
                outside.display()
            ),
        )
        .unwrap();
        let mut warnings = Vec::new();
        let trusted = Sources::new(&home, &work, true).settings(&plugin, &mut warnings).unwrap();
        assert_eq!(trusted.limits.fuel, 20);
        assert_eq!(trusted.limits.time, Duration::from_secs(2));
        assert_eq!(trusted.config, r#"{"a":1,"b":"y"}"#);
        let dirs: Vec<_> =
            trusted.grants.dirs.iter().map(|d| (d.guest[1].clone(), d.write)).collect();
        assert_eq!(dirs, [("docs".to_owned(), false), ("out".to_owned(), true)]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().all(|w| w.contains("outside the workspace")), "{warnings:?}");
        assert!(!trusted.grants.network);

        // A project cannot let a plugin reach local services; the user's own file can.
        std::fs::write(
            work.join(".rab/extensions.toml"),
            "[plugins.hello.grants]\nnetwork = true\nprivate-network = true\n",
        )
        .unwrap();
        let mut warnings = Vec::new();
        let s = Sources::new(&home, &work, true).settings(&plugin, &mut warnings).unwrap();
        assert!(s.grants.network && !s.grants.private_network, "{:?}", s.grants);
        assert!(warnings[0].contains("private-network"), "{warnings:?}");
        std::fs::write(plugin.join("config.toml"), "[grants]\nprivate-network = true\n").unwrap();
        let s = Sources::new(&home, &work, true).settings(&plugin, &mut Vec::new()).unwrap();
        assert!(s.grants.network && s.grants.private_network, "{:?}", s.grants);

        // An untrusted folder's file grants nothing.
        let mut warnings = Vec::new();
        let untrusted = Sources::new(&home, &work, false).settings(&plugin, &mut warnings).unwrap();
        assert!(untrusted.grants.dirs.is_empty());

        // A typo is an error naming the file.
        std::fs::write(home.join("extensions.toml"), "[plugins.hello]\nlimit.fuel = 1\n").unwrap();
        let e = Sources::new(&home, &work, false).settings(&plugin, &mut Vec::new()).unwrap_err();
        assert!(e.contains("extensions.toml") && e.contains("limit"), "{e}");
    }
}
