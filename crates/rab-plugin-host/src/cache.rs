//! Compiled components on disk, so a start with unchanged plugins does not compile them
//! again. An entry is named by the SHA-256 of the component's bytes and of the engine's
//! configuration (`Engine::precompile_compatibility_hash`), and holds wasmtime's
//! serialised artifact followed by its own SHA-256. The checksum is verified before the
//! artifact is handed to wasmtime: a torn or damaged file is compiled again, never
//! loaded. Entries are written atomically (a temporary file, then a rename).
//!
//! Compiled code is large (a Python plugin's is about 40 MB), so each entry is touched
//! when used and, after each write, the least recently used entries go until the cache
//! is under [`Cache::cap`] (the entry just written always stays).
//!
//! Deserialising is `unsafe` in wasmtime because the bytes become native code. The cache
//! lives in rab's home, like the settings whose hooks run commands: whoever can write
//! there can already run code as the user, so the cache adds no new way in.

use std::hash::Hash;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components are kept.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    cap: u64,
}

/// How much compiled code is kept by default.
pub const DEFAULT_CAP: u64 = 1024 * 1024 * 1024;

/// Feeds the engine's compatibility hash into SHA-256.
struct Sha(Sha256);

impl std::hash::Hasher for Sha {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl Cache {
    /// A cache in `dir` (made when first written), kept under [`DEFAULT_CAP`].
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, cap: DEFAULT_CAP }
    }

    /// The same cache kept under `bytes`.
    pub fn with_cap(self, bytes: u64) -> Self {
        Self { cap: bytes, ..self }
    }

    /// How many bytes of compiled code it keeps at most.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry for `bytes` compiled by `engine`.
    fn entry(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let mut sha = Sha(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut sha);
        sha.0.update(bytes);
        let key: String = sha.0.finalize().iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{key}.cwasm"))
    }

    /// The component from the cache, or compiled now (and kept for next time); whether
    /// it came from the cache.
    pub fn component(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<(Component, bool)> {
        let entry = self.entry(engine, bytes);
        if let Some(component) = load(engine, &entry) {
            // Used now: the last to go when the cache is pruned.
            if let Err(e) = std::fs::File::options()
                .append(true)
                .open(&entry)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            {
                tracing::debug!("cannot touch {}: {e}", entry.display());
            }
            return Ok((component, true));
        }
        let component = Component::new(engine, bytes)?;
        match store(&entry, &component) {
            Ok(()) => self.prune(&entry),
            Err(e) => tracing::warn!("cannot keep the compiled plugin in {}: {e}", entry.display()),
        }
        Ok((component, false))
    }

    /// Removes the least recently used entries until the cache is under its cap,
    /// never `keep`.
    fn prune(&self, keep: &Path) {
        let Ok(read) = std::fs::read_dir(&self.dir) else { return };
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = read
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.cap {
                break;
            }
            if path == keep {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => total = total.saturating_sub(len),
                Err(e) => tracing::debug!("cannot prune {}: {e}", path.display()),
            }
        }
    }
}

/// A cached artifact whose checksum holds, handed to wasmtime.
fn load(engine: &Engine, entry: &Path) -> Option<Component> {
    let data = std::fs::read(entry).ok()?;
    let split = data.len().checked_sub(32)?;
    let (artifact, sum) = data.split_at(split);
    if Sha256::digest(artifact).as_slice() != sum {
        tracing::warn!("compiled plugin {} is damaged; compiling again", entry.display());
        return None;
    }
    // SAFETY: `artifact` is what `Component::serialize` wrote for this engine's
    // configuration (the entry's name covers it), byte for byte: its SHA-256, written
    // with it, matches. wasmtime checks the artifact's header and engine settings again.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, artifact) };
    match component {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!(
                "compiled plugin {} does not load ({e}); compiling again",
                entry.display()
            );
            None
        }
    }
}

/// Writes the artifact and its checksum atomically.
fn store(entry: &Path, component: &Component) -> Result<(), String> {
    let mut data = component.serialize().map_err(|e| e.to_string())?;
    let sum = Sha256::digest(&data);
    data.extend_from_slice(&sum);
    let dir = entry.parent().ok_or("no cache folder")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &data).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, entry).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        e.to_string()
    })
}
