//! The checkpoint store: file contents from before the agent changed them, kept beside
//! the sessions so a session can be rewound with its files.
//!
//! Content-addressed: an object's name is the BLAKE3 hash of the content (a 1 MB file
//! hashes in a fraction of a millisecond), so the same content is stored once however
//! many sessions or edits hold it. Objects are LZ4-compressed and written atomically (a
//! temporary file renamed into place). Tapes refer to objects by hash; [`CheckpointStore::prune`] drops the oldest objects past an age or
//! a total size, and a rewind that needs a pruned object says so instead of guessing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Custom entry type of the contents before a tool call.
pub const CHECKPOINT: &str = "checkpoint";
/// Custom entry type of the contents a tool call left.
pub const CHECKPOINT_AFTER: &str = "checkpoint_after";
/// Custom entry type of a rewind.
pub const REWIND: &str = "rewind";
/// The entry types a rewind acts on: only rab writes them (an import never carries them
/// over), and each carries a [`SEAL`] a rewind checks, so a session file from elsewhere
/// cannot name files for a rewind to write or delete.
pub const REWIND_ENTRY_TYPES: [&str; 3] = [CHECKPOINT, CHECKPOINT_AFTER, REWIND];

/// The key in those entries' data holding its seal: a BLAKE3 keyed hash of the rest of
/// the data under a key kept in the store (`key`, readable by the user only).
pub const SEAL: &str = "seal";

/// Files larger than this are not checkpointed (a rewind reports them as not restorable).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Reading or writing the store failed.
    #[error("checkpoint store {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The object a tape refers to is not in the store (pruned, or the store was moved).
    #[error("checkpoint {hash} is not in {} (pruned, or the store was removed)", dir.display())]
    Missing {
        /// The object's hash.
        hash: String,
        /// The store.
        dir: PathBuf,
    },
    /// An object's content does not match its name.
    #[error("checkpoint {hash} is damaged: {why}")]
    Damaged {
        /// The object's hash.
        hash: String,
        /// What is wrong.
        why: String,
    },
}

/// A directory of content-addressed, compressed file contents.
#[derive(Clone, Debug)]
pub struct CheckpointStore {
    dir: PathBuf,
    /// The seal key once read (shared by clones): sealing and checking a rewind's
    /// entries read it once, not once per entry.
    key: std::sync::Arc<std::sync::OnceLock<[u8; 32]>>,
}

/// What [`CheckpointStore::prune`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Objects removed.
    pub objects: usize,
    /// Bytes they took on disk.
    pub bytes: u64,
}

/// The BLAKE3 hash of `bytes`, in lower-case hex: the name the store gives them.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

impl CheckpointStore {
    /// The store in `dir` (created when the first object is put).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), key: std::sync::Arc::default() }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn object_path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(hash.len().min(2));
        self.dir.join("objects").join(head).join(tail)
    }

    /// Whether `hash` is one the store could have made (64 lower-case hex digits): a
    /// tape is read from disk, and its hashes must not name other paths.
    fn is_hash(hash: &str) -> bool {
        hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }

    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
        move |source| CheckpointError::Io { path: path.to_owned(), source }
    }

    /// Stores `bytes` (once: content already there is not written again) and returns
    /// its hash.
    pub fn put(&self, bytes: &[u8]) -> Result<String, CheckpointError> {
        let hash = content_hash(bytes);
        let path = self.object_path(&hash);
        if Self::looks_whole(&path, bytes.len()) {
            // Touched, so pruning by age keeps what is still being used.
            let _ = std::fs::File::options()
                .append(true)
                .open(&path)
                .and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(hash);
        }
        let parent = path.parent().unwrap_or(&self.dir);
        // The store holds copies of the user's files: private, like the tapes.
        private_dirs(&self.dir, parent).map_err(Self::io(parent))?;
        let compressed = lz4_flex::compress_prepend_size(bytes);
        let temp =
            parent.join(format!(".{}.{}.tmp", &hash[..hash.len().min(16)], std::process::id()));
        let written = private_file(&temp)
            // Not synced: a checkpoint lost to a crash is reported missing by a rewind
            // (reads check the content against its name), never restored wrong.
            .and_then(|mut f| f.write_all(&compressed))
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(CheckpointError::Io { path, source: e });
        }
        Ok(hash)
    }

    /// `data` (a JSON object) with a [`SEAL`] added, made with this store's key (created
    /// on first use); `data` as it is when the key cannot be had (the entry is then one
    /// a rewind will not act on).
    pub fn seal(&self, mut data: Value) -> Value {
        let Some(key) = self.key() else { return data };
        let seal = blake3::keyed_hash(&key, &unsealed_bytes(&data)).to_hex().to_string();
        if let Value::Object(map) = &mut data {
            map.insert(SEAL.to_owned(), Value::String(seal));
        }
        data
    }

    /// Whether `data` carries a seal this store's key made for it.
    pub fn is_sealed(&self, data: &Value) -> bool {
        let Some(seal) = data.get(SEAL).and_then(Value::as_str) else { return false };
        let Ok(seal) = blake3::Hash::from_hex(seal) else { return false };
        let Some(key) = self.read_key() else { return false };
        // `Hash` compares in constant time.
        blake3::keyed_hash(&key, &unsealed_bytes(data)) == seal
    }

    fn read_key(&self) -> Option<[u8; 32]> {
        if let Some(key) = self.key.get() {
            return Some(*key);
        }
        let key: [u8; 32] = std::fs::read(self.dir.join("key")).ok()?.try_into().ok()?;
        Some(*self.key.get_or_init(|| key))
    }

    /// The key, made (32 random bytes, mode 0600) when there is none.
    fn key(&self) -> Option<[u8; 32]> {
        if let Some(key) = self.read_key() {
            return Some(key);
        }
        let mut key = [0u8; 32];
        if let Err(e) = getrandom::getrandom(&mut key) {
            tracing::warn!("no random key for checkpoint seals: {e}");
            return None;
        }
        let path = self.dir.join("key");
        let made = private_dirs(&self.dir, &self.dir).and_then(|()| {
            let mut options = std::fs::File::options();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let temp = self.dir.join(format!(".key.{}.tmp", std::process::id()));
            let _ = std::fs::remove_file(&temp);
            options.open(&temp)?.write_all(&key)?;
            // Another rab making one at the same time: the first one there is the key.
            let linked = std::fs::hard_link(&temp, &path);
            let _ = std::fs::remove_file(&temp);
            match linked {
                // A file system without hard links: written in place.
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    options.open(&path)?.write_all(&key)
                }
                _ => Ok(()),
            }
        });
        if let Err(e) = made {
            tracing::warn!(path = %path.display(), "cannot write the checkpoint seal key: {e}");
        }
        self.read_key()
    }

    /// Whether the object at `path` is there, has more than its size prefix, and the
    /// prefix says `len` bytes. Objects are not synced: one a crash left empty is
    /// written again rather than kept (and kept young) as it is.
    fn looks_whole(path: &Path, len: usize) -> bool {
        use std::io::Read;
        let mut prefix = [0u8; 4];
        let Ok(mut file) = std::fs::File::open(path) else { return false };
        let Ok(meta) = file.metadata() else { return false };
        meta.len() > 4
            && file.read_exact(&mut prefix).is_ok()
            && u32::from_le_bytes(prefix) as usize == len
    }

    /// The content stored under `hash`, checked against it.
    pub fn get(&self, hash: &str) -> Result<Vec<u8>, CheckpointError> {
        if !Self::is_hash(hash) {
            return Err(CheckpointError::Damaged {
                hash: hash.escape_debug().to_string(),
                why: "the tape names it with something that is not a checkpoint hash".to_owned(),
            });
        }
        let path = self.object_path(hash);
        let compressed = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::Missing {
                    hash: hash.to_owned(),
                    dir: self.dir.clone(),
                });
            }
            Err(source) => return Err(CheckpointError::Io { path, source }),
        };
        let bytes = lz4_flex::decompress_size_prepended(&compressed)
            .map_err(|e| CheckpointError::Damaged { hash: hash.to_owned(), why: e.to_string() })?;
        if content_hash(&bytes) != hash {
            return Err(CheckpointError::Damaged {
                hash: hash.to_owned(),
                why: "its content does not match its name".to_owned(),
            });
        }
        Ok(bytes)
    }

    /// Removes objects not used for `max_age`, then the least recently used until the
    /// store takes at most `max_bytes`.
    pub fn prune(&self, max_age: Duration, max_bytes: u64) -> Result<Pruned, CheckpointError> {
        let objects = self.dir.join("objects");
        let mut all: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let Ok(heads) = std::fs::read_dir(&objects) else { return Ok(Pruned::default()) };
        for head in heads.flatten() {
            let Ok(files) = std::fs::read_dir(head.path()) else { continue };
            for file in files.flatten() {
                let Ok(meta) = file.metadata() else { continue };
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                all.push((used, meta.len(), file.path()));
            }
        }
        all.sort_by_key(|(used, _, _)| *used);
        let now = SystemTime::now();
        let mut total: u64 = all.iter().map(|(_, len, _)| len).sum();
        let mut pruned = Pruned::default();
        for (used, len, path) in all {
            let old = now.duration_since(used).is_ok_and(|age| age > max_age);
            if !old && total <= max_bytes {
                break;
            }
            match std::fs::remove_file(&path) {
                // Another rab pruning at the same time took it first.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other.map_err(Self::io(&path))?,
            }
            total -= len;
            pruned.objects += 1;
            pruned.bytes += len;
        }
        Ok(pruned)
    }

    /// [`CheckpointStore::prune`] when the last one was a day ago or more (or never): at
    /// most once a day, however many sessions start.
    pub fn prune_if_due(
        &self,
        max_age: Duration,
        max_bytes: u64,
    ) -> Result<Option<Pruned>, CheckpointError> {
        if !self.prune_is_due() {
            return Ok(None);
        }
        let stamp = self.dir.join("last-prune");
        let pruned = self.prune(max_age, max_bytes)?;
        std::fs::write(&stamp, b"").map_err(Self::io(&stamp))?;
        Ok(Some(pruned))
    }

    /// Whether [`CheckpointStore::prune_if_due`] would prune: the store exists and was
    /// not pruned in the last day (one `stat`).
    pub fn prune_is_due(&self) -> bool {
        let day = Duration::from_secs(24 * 3600);
        let recent = std::fs::metadata(self.dir.join("last-prune"))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age < day));
        !recent && self.dir.exists()
    }

    /// Bytes the objects take on disk.
    pub fn size(&self) -> u64 {
        let objects = self.dir.join("objects");
        let Ok(heads) = std::fs::read_dir(objects) else { return 0 };
        heads
            .flatten()
            .filter_map(|h| std::fs::read_dir(h.path()).ok())
            .flat_map(|files| files.flatten())
            .filter_map(|f| f.metadata().ok())
            .map(|m| m.len())
            .sum()
    }
}

/// `data` without its seal, as bytes (the order of the keys kept).
fn unsealed_bytes(data: &Value) -> Vec<u8> {
    let rest: serde_json::Map<String, Value> = match data {
        Value::Object(map) => {
            map.iter().filter(|(k, _)| *k != SEAL).map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        _ => serde_json::Map::new(),
    };
    serde_json::to_vec(&rest).unwrap_or_default()
}

/// Creates `dir` (the store, mode 0700 on Unix) and `sub` below it.
fn private_dirs(store: &Path, sub: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(store)?;
    builder.create(sub)
}

/// A new file only its owner can read (mode 0600 on Unix).
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::File::options();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_is_private_and_refuses_names_that_are_not_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path().join("checkpoints"));
        let hash = store.put(b"secret = 1").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(store.dir()), 0o700);
            assert_eq!(mode(store.object_path(&hash).parent().unwrap()), 0o700);
            assert_eq!(mode(&store.object_path(&hash)), 0o600);
        }
        std::fs::write(dir.path().join("outside"), b"x").unwrap();
        for bad in ["../../outside", "aé", "", &hash.to_uppercase(), &format!("{hash}0")] {
            let err = store.get(bad).unwrap_err();
            assert!(matches!(err, CheckpointError::Damaged { .. }), "{bad}: {err}");
        }
        assert_eq!(store.get(&hash).unwrap(), b"secret = 1");
    }

    #[test]
    fn content_is_stored_once_compressed_and_read_back_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        let text = "fn main() {}\n".repeat(1000);
        let a = store.put(text.as_bytes()).unwrap();
        let b = store.put(text.as_bytes()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, content_hash(text.as_bytes()));
        assert_eq!(store.get(&a).unwrap(), text.as_bytes());
        assert!(store.size() < text.len() as u64 / 10, "compressed: {}", store.size());
        let empty = store.put(b"").unwrap();
        assert_eq!(store.get(&empty).unwrap(), b"");

        // A damaged object is refused, a missing one named.
        let path = store.object_path(&a);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        assert!(matches!(store.get(&a), Err(CheckpointError::Damaged { .. })));
        let gone = content_hash(b"never stored");
        assert!(store.get(&gone).unwrap_err().to_string().contains("is not in"));

        // An object left empty or cut inside its size prefix (what a crash before the
        // data reached the disk leaves) is written again by the next put of the same
        // content, not kept as it is. A cut further in is found by `get` only.
        let text = "let x = 1;\n".repeat(500);
        let h = store.put(text.as_bytes()).unwrap();
        for cut in [0, 3] {
            let path = store.object_path(&h);
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert!(store.get(&h).is_err());
            assert_eq!(store.put(text.as_bytes()).unwrap(), h);
            assert_eq!(store.get(&h).unwrap(), text.as_bytes(), "cut at {cut}");
        }
    }

    #[test]
    fn pruning_drops_the_oldest_first_down_to_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        let hashes: Vec<String> = (0..5u8)
            .map(|i| {
                let h = store.put(&vec![i; 10_000]).unwrap();
                let when = SystemTime::now() - Duration::from_secs(3600 * (10 - u64::from(i)));
                std::fs::File::options()
                    .append(true)
                    .open(store.object_path(&h))
                    .unwrap()
                    .set_modified(when)
                    .unwrap();
                h
            })
            .collect();
        let each = store.size() / 5;
        // Older than 7.5 hours: the first three (10, 9 and 8 hours old).
        let pruned = store.prune(Duration::from_secs(27_000), u64::MAX).unwrap();
        assert_eq!(pruned.objects, 3);
        assert!(store.get(&hashes[3]).is_ok() && store.get(&hashes[2]).is_err());
        // Then down to one object's size: the older of the two goes.
        let pruned = store.prune(Duration::from_secs(u64::MAX / 4), each).unwrap();
        assert_eq!(pruned.objects, 1);
        assert!(store.get(&hashes[4]).is_ok() && store.get(&hashes[3]).is_err());
        // Once a day: the first call prunes (everything here is too big), the next not.
        let first = store.prune_if_due(Duration::from_secs(u64::MAX / 4), 0).unwrap();
        assert_eq!(first.map(|p| p.objects), Some(1));
        store.put(b"kept until tomorrow").unwrap();
        assert_eq!(store.prune_if_due(Duration::from_secs(u64::MAX / 4), 0).unwrap(), None);
        assert!(store.size() > 0);
    }
}
