//! The search index on disk and how it is kept consistent with the JSONL files, which
//! remain the source of truth.
//!
//! `<index_dir>/search.json` (the manifest) lists every session file seen — size, mtime,
//! how far it is indexed, a hash of the last indexed bytes — and the segments
//! (`search-*.seg`), each with the file byte ranges it covers. Before every search:
//!
//! - a new file is indexed from its start;
//! - a file that grew, whose last indexed bytes are unchanged, is indexed from where
//!   the index stopped (tapes are append-only);
//! - a file that shrank, changed in place, or lost its indexed tail is reindexed under
//!   a new file id, which makes its old docs dead at once;
//! - a deleted file is dropped, likewise killing its docs.
//!
//! Segments are immutable; small ones are merged (reindexed from the JSONL ranges they
//! cover) in tiers of four, and a segment that is mostly dead is rewritten. New segments
//! are written under temp names and renamed, then the manifest is replaced the same
//! way, then unreferenced segments are deleted, so a crash at any point leaves a
//! consistent index. A manifest that cannot be read is replaced by a full rebuild.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::segment::{SegmentBuilder, create_private, read_at};
use super::text::parse_line;
use crate::entry::Header;

/// Bumped whenever the segment format or the tokenizer changes: an index of another
/// version is rebuilt.
const VERSION: u32 = 1;
const MANIFEST: &str = "search.json";
/// Input bytes per segment while building: bounds the builder's memory (roughly a
/// quarter of the input) and keeps segments few.
const FLUSH_BYTES: u64 = 256 << 20;
/// Segments at least this large are left alone unless mostly dead.
const LARGE: u64 = 64 << 20;
const READ_CHUNK: usize = 4 << 20;
const TAIL: u64 = 64;

/// A session file as the index knows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileRecord {
    pub(crate) id: u32,
    /// Relative to the sessions root, `/`-separated.
    pub(crate) path: String,
    pub(crate) size: u64,
    pub(crate) mtime_ns: u64,
    /// End of the last complete line indexed.
    pub(crate) indexed_len: u64,
    /// FNV-1a of the (up to) 64 bytes before `indexed_len`.
    pub(crate) tail_hash: u64,
    /// The header, once its line is complete.
    pub(crate) header: Option<HeaderInfo>,
    /// The first line is not a session header: nothing in the file is indexed.
    #[serde(default)]
    pub(crate) is_foreign: bool,
}

/// What a hit shows of its session.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HeaderInfo {
    pub(crate) session_id: String,
    pub(crate) cwd: String,
}

/// A segment and the file ranges (file id, start, end) whose entries it holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SegmentRecord {
    pub(crate) name: String,
    pub(crate) docs: u32,
    pub(crate) bytes: u64,
    pub(crate) ranges: Vec<(u32, u64, u64)>,
}

/// The index's table of contents.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub(crate) version: u32,
    pub(crate) root: String,
    pub(crate) next_file_id: u32,
    pub(crate) files: Vec<FileRecord>,
    pub(crate) segments: Vec<SegmentRecord>,
}

/// Loads the manifest; `None` (and a rebuild) when missing, unreadable, of another
/// version or made for another sessions root.
pub(crate) fn load(dir: &Path, root: &Path) -> Option<Manifest> {
    let bytes = std::fs::read(dir.join(MANIFEST)).ok()?;
    match serde_json::from_slice::<Manifest>(&bytes) {
        Ok(m) if m.version == VERSION && m.root == root.display().to_string() => Some(m),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(dir = %dir.display(), "search index manifest unreadable, rebuilding: {e}");
            None
        }
    }
}

/// An empty index for `root`.
pub(crate) fn empty(root: &Path) -> Manifest {
    Manifest { version: VERSION, root: root.display().to_string(), ..Manifest::default() }
}

/// A session file found on disk.
struct Seen {
    rel: String,
    size: u64,
    mtime_ns: u64,
}

/// Every `<root>/<dir>/<name>.jsonl`, with size and mtime.
fn scan(root: &Path) -> Vec<Seen> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root) else { return out };
    for dir in dirs.filter_map(Result::ok) {
        let Ok(name) = dir.file_name().into_string() else { continue };
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        for f in files.filter_map(Result::ok) {
            let Ok(file) = f.file_name().into_string() else { continue };
            if !file.ends_with(".jsonl") {
                continue;
            }
            let Ok(meta) = f.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
            out.push(Seen { rel: format!("{name}/{file}"), size: meta.len(), mtime_ns });
        }
    }
    out
}

/// Work for a builder thread: index the complete lines of `start..end` of a file.
struct Unit {
    file_id: u32,
    path: PathBuf,
    start: u64,
    end: u64,
}

/// What indexing a unit found.
enum Outcome {
    Done {
        end: u64,
        header: Option<HeaderInfo>,
        is_foreign: bool,
    },
    Failed(io::Error),
    /// Not started before the deadline.
    Skipped,
}

/// Part of a session file the index does not cover yet (indexing ran out of time):
/// search reads it directly.
#[derive(Debug)]
pub(crate) struct Unindexed {
    pub(crate) path: PathBuf,
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Known when an earlier sync read the header (else the scan reads it).
    pub(crate) header: Option<HeaderInfo>,
    pub(crate) mtime_ns: u64,
}

/// Every session file under `root`, whole: what a search reads when it cannot use the
/// index (another rab holds it while building).
pub(crate) fn all_files(root: &Path) -> Vec<Unindexed> {
    scan(root)
        .into_iter()
        .map(|s| Unindexed {
            path: root.join(&s.rel),
            start: 0,
            end: s.size,
            header: None,
            mtime_ns: s.mtime_ns,
        })
        .collect()
}

/// Brings the index up to date with the files under `root`. With a `deadline`, no new
/// file range is started after it: what is left is returned, to be searched directly,
/// and indexed by a later sync (merging segments waits for a sync that finishes).
pub(crate) fn sync(
    root: &Path,
    dir: &Path,
    m: &mut Manifest,
    deadline: Option<Instant>,
) -> io::Result<Vec<Unindexed>> {
    let seen = scan(root);
    let mut old: HashMap<String, FileRecord> =
        m.files.drain(..).map(|f| (f.path.clone(), f)).collect();
    let mut units = Vec::new();
    let mut pending: Vec<FileRecord> = Vec::new();
    // Per file id: its size and mtime as last indexed, if it was indexed (grown files).
    let mut before: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut changed = false;
    for s in seen {
        let path = root.join(&s.rel);
        let prev = old.remove(&s.rel);
        let mut rec = match prev {
            Some(r) if r.size == s.size && r.mtime_ns == s.mtime_ns => {
                m.files.push(r);
                continue;
            }
            Some(r) if s.size > r.size && (r.is_foreign || tail_matches(&path, &r)) => {
                before.insert(r.id, (r.size, r.mtime_ns));
                r
            }
            Some(r) => {
                tracing::debug!(file = %s.rel, "session file rewritten; reindexing it");
                fresh(m, r.path)
            }
            None => fresh(m, s.rel.clone()),
        };
        changed = true;
        rec.size = s.size;
        rec.mtime_ns = s.mtime_ns;
        if !rec.is_foreign {
            let start = if rec.header.is_some() { rec.indexed_len } else { 0 };
            units.push(Unit { file_id: rec.id, path, start, end: s.size });
        }
        pending.push(rec);
    }
    changed |= !old.is_empty();
    if !changed {
        return Ok(Vec::new());
    }
    let (segments, outcomes) = build(&units, dir, deadline)?;
    let mut by_id: HashMap<u32, FileRecord> = pending.into_iter().map(|r| (r.id, r)).collect();
    let mut left = Vec::new();
    for (unit, outcome) in units.iter().zip(outcomes) {
        match outcome {
            Outcome::Skipped => {
                let Some(rec) = by_id.get_mut(&unit.file_id) else { continue };
                left.push(Unindexed {
                    path: unit.path.clone(),
                    start: unit.start,
                    end: unit.end,
                    header: rec.header.clone(),
                    mtime_ns: rec.mtime_ns,
                });
                // As if this sync had not seen the change, so the next one indexes it.
                match before.get(&unit.file_id) {
                    Some(&(size, mtime_ns)) => (rec.size, rec.mtime_ns) = (size, mtime_ns),
                    None => {
                        by_id.remove(&unit.file_id);
                    }
                }
            }
            Outcome::Done { end, header, is_foreign } => {
                let Some(rec) = by_id.get_mut(&unit.file_id) else { continue };
                if unit.start == 0 {
                    rec.header = header;
                    rec.is_foreign = is_foreign;
                }
                rec.indexed_len = end;
                rec.tail_hash = tail_hash(&unit.path, end).unwrap_or(0);
            }
            Outcome::Failed(e) => {
                // Vanished or unreadable since the scan: forget it (its docs die with
                // its id); the next search picks it up again if it is back.
                tracing::warn!(file = %unit.path.display(), "cannot index session file: {e}");
                by_id.remove(&unit.file_id);
            }
        }
    }
    m.files.extend(by_id.into_values());
    m.segments.extend(segments);
    if left.is_empty() {
        compact(dir, m)?;
    }
    save(dir, m)?;
    Ok(left)
}

/// A record under a new id: docs of the old id are dead from now on.
fn fresh(m: &mut Manifest, path: String) -> FileRecord {
    let id = m.next_file_id;
    m.next_file_id += 1;
    FileRecord {
        id,
        path,
        size: 0,
        mtime_ns: 0,
        indexed_len: 0,
        tail_hash: 0,
        header: None,
        is_foreign: false,
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

fn tail_hash(path: &Path, end: u64) -> io::Result<u64> {
    let start = end.saturating_sub(TAIL);
    Ok(fnv(&read_at(&File::open(path)?, start, (end - start) as usize)?))
}

/// Whether the bytes the index ended on are still there: true for an appended file.
fn tail_matches(path: &Path, rec: &FileRecord) -> bool {
    tail_hash(path, rec.indexed_len).is_ok_and(|h| h == rec.tail_hash)
}

/// Rewrites mostly dead segments and merges small ones of a similar size, four at a
/// time, so the segment count stays logarithmic in the data.
fn compact(dir: &Path, m: &mut Manifest) -> io::Result<()> {
    let live: HashSet<u32> = m.files.iter().map(|f| f.id).collect();
    let live_bytes = |s: &SegmentRecord| -> (u64, u64) {
        s.ranges.iter().fold((0, 0), |(l, d), &(id, a, b)| {
            if live.contains(&id) { (l + (b - a), d) } else { (l, d + (b - a)) }
        })
    };
    let mut pick = Vec::new();
    let mut keep = Vec::new();
    let mut tiers: HashMap<u32, Vec<usize>> = HashMap::new();
    for (n, s) in m.segments.iter().enumerate() {
        let (l, d) = live_bytes(s);
        if l == 0 {
            continue; // wholly dead: dropped from the manifest, deleted after it is saved
        }
        if d > l {
            pick.push(n);
            continue;
        }
        keep.push(n);
        if l < LARGE {
            // Tiers of 4x from 256 KB: a merge rereads at most four times its tier's
            // size, so appending to a live session costs little each time.
            let tier = (l >> 16).max(1).ilog2() / 2;
            tiers.entry(tier).or_default().push(n);
        }
    }
    for group in tiers.into_values().filter(|g| g.len() >= 4) {
        keep.retain(|n| !group.contains(n));
        pick.extend(group);
    }
    let mut segments: Vec<SegmentRecord> = keep.iter().map(|&n| m.segments[n].clone()).collect();
    if !pick.is_empty() {
        let mut ranges: Vec<(u32, u64, u64)> = pick
            .iter()
            .flat_map(|&n| m.segments[n].ranges.iter().copied())
            .filter(|(id, _, _)| live.contains(id))
            .collect();
        ranges.sort_unstable();
        let paths: HashMap<u32, &str> = m.files.iter().map(|f| (f.id, f.path.as_str())).collect();
        let root = PathBuf::from(&m.root);
        let mut units: Vec<Unit> = Vec::new();
        for (id, a, b) in ranges {
            match units.last_mut() {
                Some(u) if u.file_id == id && u.end == a => u.end = b,
                _ => {
                    let Some(p) = paths.get(&id) else { continue };
                    units.push(Unit { file_id: id, path: root.join(p), start: a, end: b });
                }
            }
        }
        tracing::debug!(segments = pick.len(), units = units.len(), "merging search segments");
        let (merged, outcomes) = build(&units, dir, None)?;
        for o in outcomes {
            if let Outcome::Failed(e) = o {
                // The file changed under us; the next sync reindexes it.
                tracing::warn!("merging search segments: {e}");
            }
        }
        segments.extend(merged);
    }
    m.segments = segments;
    Ok(())
}

/// Writes the manifest through a temp file and a rename, then deletes segment and temp
/// files it does not reference (left by an earlier crash or replaced just now).
fn save(dir: &Path, m: &Manifest) -> io::Result<()> {
    let tmp = dir.join(format!("{MANIFEST}.{:08x}.tmp", fastrand::u32(..)));
    let bytes = serde_json::to_vec(m).map_err(io::Error::other)?;
    {
        use std::io::Write;
        let mut f = create_private(&tmp)?;
        f.write_all(&bytes)?;
    }
    std::fs::rename(&tmp, dir.join(MANIFEST))?;
    let used: HashSet<&str> = m.segments.iter().map(|s| s.name.as_str()).collect();
    for e in std::fs::read_dir(dir)?.filter_map(Result::ok) {
        let Ok(name) = e.file_name().into_string() else { continue };
        let stale =
            (name.starts_with("search-") && name.ends_with(".seg") && !used.contains(&*name))
                || (name.starts_with("search") && name.ends_with(".tmp"));
        if stale && let Err(e) = std::fs::remove_file(e.path()) {
            tracing::warn!(file = name, "cannot remove an old search segment: {e}");
        }
    }
    Ok(())
}

/// A builder and the file ranges it has covered since its last flush.
struct Pending {
    builder: SegmentBuilder,
    ranges: Vec<(u32, u64, u64)>,
    bytes: u64,
}

impl Pending {
    fn new() -> Self {
        Self { builder: SegmentBuilder::default(), ranges: Vec::new(), bytes: 0 }
    }

    fn cover(&mut self, file_id: u32, start: u64, end: u64) {
        self.bytes += end - start;
        match self.ranges.last_mut() {
            Some(r) if r.0 == file_id && r.2 == start => r.2 = end,
            _ => self.ranges.push((file_id, start, end)),
        }
    }

    fn flush(&mut self, dir: &Path, out: &Mutex<Vec<SegmentRecord>>) -> io::Result<()> {
        if self.ranges.is_empty() {
            return Ok(());
        }
        let done = std::mem::replace(self, Pending::new());
        let name = format!("search-{:016x}.seg", fastrand::u64(..));
        let stats = done.builder.write(&dir.join(&name))?;
        let record =
            SegmentRecord { name, docs: stats.docs, bytes: stats.bytes, ranges: done.ranges };
        out.lock().map_err(|_| io::Error::other("a search indexing thread panicked"))?.push(record);
        Ok(())
    }
}

/// Indexes the units on every core (each thread builds its own segments, so threads
/// share nothing but the work queue). Memory stays bounded: one read chunk and one
/// builder of at most [`FLUSH_BYTES`] of input per thread.
fn build(
    units: &[Unit],
    dir: &Path,
    deadline: Option<Instant>,
) -> io::Result<(Vec<SegmentRecord>, Vec<Outcome>)> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    // Largest first, so the last unit handed out is small and the threads end together.
    order.sort_unstable_by_key(|&i| std::cmp::Reverse(units[i].end - units[i].start));
    let total: u64 = units.iter().map(|u| u.end - u.start).sum();
    let threads = if total < 4 << 20 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(units.len())
    };
    let next = AtomicUsize::new(0);
    let segments = Mutex::new(Vec::new());
    let outcomes: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..units.len()).map(|_| None).collect());
    let worker = || -> io::Result<()> {
        let mut pending = Pending::new();
        let mut buf = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                continue; // the rest stay Skipped
            }
            let outcome = index_unit(&units[i], &mut pending, &mut buf, dir, &segments)?;
            if let Ok(mut o) = outcomes.lock() {
                o[i] = Some(outcome);
            }
        }
        pending.flush(dir, &segments)
    };
    let results: Vec<io::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mut results = vec![worker()];
        for h in handles {
            results.push(h.join().unwrap_or_else(|_| Err(io::Error::other("indexing panicked"))));
        }
        results
    });
    results.into_iter().collect::<io::Result<Vec<()>>>()?;
    let segments = segments.into_inner().map_err(|_| io::Error::other("poisoned"))?;
    let outcomes = outcomes.into_inner().map_err(|_| io::Error::other("poisoned"))?;
    let outcomes = outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Skipped)).collect();
    Ok((segments, outcomes))
}

/// Indexes the complete lines of one unit. Errors reading the session file become a
/// failed outcome; errors writing the index abort the build.
fn index_unit(
    unit: &Unit,
    p: &mut Pending,
    buf: &mut Vec<u8>,
    dir: &Path,
    segments: &Mutex<Vec<SegmentRecord>>,
) -> io::Result<Outcome> {
    let mut file = match File::open(&unit.path).and_then(|mut f| {
        f.seek(SeekFrom::Start(unit.start))?;
        Ok(f.take(unit.end - unit.start))
    }) {
        Ok(f) => f,
        Err(e) => return Ok(Outcome::Failed(e)),
    };
    buf.clear();
    let mut buf_off = unit.start; // file offset of buf[0]
    let mut header = None;
    loop {
        let filled = buf.len();
        buf.resize(filled + READ_CHUNK, 0);
        let n = match file.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) => return Ok(Outcome::Failed(e)),
        };
        buf.truncate(filled + n);
        let mut consumed = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[filled..]) {
            let end = filled + nl;
            let line = &buf[consumed..end];
            let off = buf_off + consumed as u64;
            if off == 0 {
                match serde_json::from_slice::<Header>(line) {
                    Ok(h) if h.kind == "session" => {
                        header = Some(HeaderInfo { session_id: h.id, cwd: h.cwd });
                    }
                    _ => {
                        return Ok(Outcome::Done { end: unit.end, header: None, is_foreign: true });
                    }
                }
            } else if let Some(t) = parse_line(line) {
                p.builder.add_doc(
                    unit.file_id,
                    off,
                    line.len() as u32,
                    t.parts.iter().map(|s| &**s),
                );
            }
            p.cover(unit.file_id, off, off + line.len() as u64 + 1);
            consumed = end + 1;
            if p.bytes >= FLUSH_BYTES {
                p.flush(dir, segments)?;
            }
        }
        buf.drain(..consumed);
        buf_off += consumed as u64;
        if n == 0 {
            return Ok(Outcome::Done { end: buf_off, header, is_foreign: false });
        }
    }
}

/// Writes the manifest after a query found it referring to a broken segment.
pub(crate) fn reset(dir: &Path, root: &Path) -> io::Result<Manifest> {
    let m = empty(root);
    save(dir, &m)?;
    Ok(m)
}
