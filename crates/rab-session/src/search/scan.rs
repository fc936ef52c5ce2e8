//! Searching what the index does not cover yet, by reading it. A first index of a
//! large history takes seconds, so a search spends a bounded time indexing and reads
//! the rest directly: each query word is looked for in the raw lines (ASCII case
//! folded, a SIMD substring search), and only lines holding every word are parsed and
//! checked exactly as the index's hits are. Lines are counted per word on the way,
//! so the hits are ranked with the same BM25 formula and comparable statistics.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::index::{HeaderInfo, Unindexed};
use super::text::{for_each_word, parse_line, snippet};
use super::{PHRASE_BONUS, Query, SNIPPET_CHARS, SearchHit, Stats, bm25_term};
use crate::entry::Header;

/// Bytes read at a time.
const CHUNK: usize = 8 << 20;
/// Most lines parsed and checked in one scan: bounds a query of very common words (its
/// matches in older sessions may then be missed; recent sessions are read first).
const MAX_CHECKS: usize = 20_000;

/// A line that matched, before the statistics for scoring are complete.
struct Match {
    /// Per query word: how often it occurs.
    tf: Vec<u32>,
    /// Words in the entry.
    words: u32,
    /// Bytes of its line, and where the line starts in its file.
    bytes: u64,
    offset: u64,
    is_exact: bool,
    mtime_ns: u64,
    hit: SearchHit,
}

/// What one thread found.
#[derive(Default)]
struct Found {
    matches: Vec<Match>,
    /// Entry lines read, and their bytes.
    lines: u64,
    bytes: u64,
    /// Per query word: lines whose raw text holds it (ASCII words only).
    df: Vec<u64>,
}

/// Searches `left` for `q`; the best `limit` hits, scored with the index's `stats`
/// added to what the scan counted.
pub(crate) fn scan(left: &[Unindexed], q: &Query, limit: usize, stats: &Stats) -> Vec<SearchHit> {
    if left.is_empty() {
        return Vec::new();
    }
    let mut order: Vec<&Unindexed> = left.iter().collect();
    order.sort_by_key(|u| std::cmp::Reverse(u.mtime_ns));
    let next = AtomicUsize::new(0);
    let checks = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(order.len());
    let worker = || {
        let mut mine = Found { df: vec![0; q.terms.len()], ..Found::default() };
        let mut bufs = Buffers::default();
        while let Some(u) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            if let Err(e) = scan_range(u, q, &checks, &mut mine, &mut bufs) {
                tracing::warn!(file = %u.path.display(), "cannot search session file: {e}");
            }
        }
        if let Ok(mut all) = found.lock() {
            all.push(mine);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
    let found = found.into_inner().unwrap_or_default();
    rank(found, q, limit, stats)
}

/// Scores the matches with the combined statistics and keeps the best.
fn rank(found: Vec<Found>, q: &Query, limit: usize, stats: &Stats) -> Vec<SearchHit> {
    let lines: u64 = found.iter().map(|f| f.lines).sum();
    let bytes: u64 = found.iter().map(|f| f.bytes).sum();
    let docs = stats.docs + lines;
    let mut matches: Vec<Match> = Vec::new();
    let mut df = stats.df.clone();
    df.resize(q.terms.len(), 0);
    for f in found {
        for (d, n) in df.iter_mut().zip(&f.df) {
            *d += n;
        }
        matches.extend(f.matches);
    }
    // A non-ASCII word is not counted by the raw scan: count the matches holding it.
    for (t, term) in q.terms.iter().enumerate() {
        if !term.is_ascii() {
            df[t] += matches.len() as u64;
        }
    }
    // Words of the lines read are not counted (that is the work an index does);
    // the matches' words per byte, times the bytes read, estimate them.
    let matched_words: u64 = matches.iter().map(|m| u64::from(m.words)).sum();
    let matched_bytes: u64 = matches.iter().map(|m| m.bytes).sum();
    let read_words = matched_words as f64 / matched_bytes.max(1) as f64 * bytes as f64;
    let avgdl = (stats.words as f64 + read_words) / docs.max(1) as f64;
    let mut scored: Vec<(f64, (u64, u64), SearchHit)> = matches
        .into_iter()
        .map(|m| {
            let score: f64 =
                m.tf.iter()
                    .zip(&df)
                    .map(|(&tf, &d)| bm25_term(tf, m.words, d, docs, avgdl))
                    .sum::<f64>()
                    + if m.is_exact { PHRASE_BONUS } else { 0.0 };
            (score, (m.mtime_ns, m.offset), m.hit)
        })
        .collect();
    // Ties as in the index: recent sessions, then later entries, first.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, _, mut hit)| {
            hit.score = score;
            hit
        })
        .collect()
}

/// Scratch space reused across chunks.
#[derive(Default)]
struct Buffers {
    raw: Vec<u8>,
    lower: Vec<u8>,
    newlines: Vec<usize>,
    masks: Vec<u32>,
    words: Vec<u8>,
}

fn scan_range(
    u: &Unindexed,
    q: &Query,
    checks: &AtomicUsize,
    out: &mut Found,
    b: &mut Buffers,
) -> io::Result<()> {
    let mut file = File::open(&u.path)?;
    let header = match &u.header {
        Some(h) => h.clone(),
        None => match read_header(&u.path)? {
            Some(h) => h,
            None => return Ok(()), // not a session file
        },
    };
    file.seek(SeekFrom::Start(u.start))?;
    let mut file = file.take(u.end - u.start);
    let mut offset = u.start; // file offset of b.raw[0]
    b.raw.clear();
    loop {
        let filled = b.raw.len();
        b.raw.resize(filled + CHUNK, 0);
        let n = file.read(&mut b.raw[filled..])?;
        b.raw.truncate(filled + n);
        // Complete lines only: a torn last line waits for its end, as in the index.
        let Some(last_nl) = memchr::memrchr(b'\n', &b.raw) else {
            if n == 0 {
                return Ok(());
            }
            continue;
        };
        let complete = last_nl + 1;
        let place = Place { path: &u.path, header: &header, mtime_ns: u.mtime_ns };
        scan_lines(&place, offset, complete, q, checks, out, b);
        b.raw.drain(..complete);
        offset += complete as u64;
        if n == 0 {
            return Ok(());
        }
    }
}

/// The session file being read.
struct Place<'a> {
    path: &'a Path,
    header: &'a HeaderInfo,
    mtime_ns: u64,
}

/// Finds the lines of `b.raw[..len]` (starting at file offset `offset`) that hold
/// every ASCII query word, then checks them exactly.
fn scan_lines(
    place: &Place<'_>,
    offset: u64,
    len: usize,
    q: &Query,
    checks: &AtomicUsize,
    out: &mut Found,
    b: &mut Buffers,
) {
    let raw = &b.raw[..len];
    b.lower.clear();
    b.lower.extend(raw.iter().map(u8::to_ascii_lowercase));
    b.newlines.clear();
    b.newlines.extend(memchr::memchr_iter(b'\n', raw));
    let header_line = usize::from(offset == 0);
    out.lines += b.newlines.len().saturating_sub(header_line) as u64;
    out.bytes += match (header_line, b.newlines.first()) {
        (1, Some(&end)) => (len - end - 1) as u64,
        _ => len as u64,
    };
    // Per line, a bit for each ASCII word found in it.
    b.masks.clear();
    b.masks.resize(b.newlines.len(), 0);
    let mut want = 0u32;
    for (t, term) in q.terms.iter().enumerate() {
        if !term.is_ascii() || term.is_empty() {
            continue;
        }
        want |= 1 << t;
        let mut last = usize::MAX;
        for at in memchr::memmem::find_iter(&b.lower, term) {
            let line = b.newlines.partition_point(|&nl| nl < at);
            if line != last && line < b.masks.len() {
                b.masks[line] |= 1 << t;
                if line >= header_line {
                    out.df[t] += 1;
                }
                last = line;
            }
        }
    }
    for line in header_line..b.newlines.len() {
        if b.masks[line] & want != want {
            continue;
        }
        if checks.fetch_add(1, Ordering::Relaxed) >= MAX_CHECKS {
            return;
        }
        let start = if line == 0 { 0 } else { b.newlines[line - 1] + 1 };
        let text_line = &raw[start..b.newlines[line]];
        let Some(entry) = parse_line(text_line) else { continue };
        let text = entry.joined();
        let Some((at, is_exact)) = q.check(&text, &mut b.words) else { continue };
        let mut tf = vec![0u32; q.terms.len()];
        let mut words = 0u32;
        for_each_word(&text, &mut b.words, |w, _| {
            words += 1;
            if let Some(t) = q.terms.iter().position(|t| t == w) {
                tf[t] += 1;
            }
        });
        out.matches.push(Match {
            tf,
            words,
            bytes: text_line.len() as u64 + 1,
            offset: offset + start as u64,
            is_exact,
            mtime_ns: place.mtime_ns,
            hit: SearchHit {
                path: place.path.to_owned(),
                session_id: place.header.session_id.clone(),
                cwd: place.header.cwd.clone(),
                entry_id: entry.id.into_owned(),
                role: entry.role.into_owned(),
                timestamp: entry.timestamp.into_owned(),
                snippet: snippet(&text, at, SNIPPET_CHARS),
                score: 0.0,
            },
        });
    }
}

/// The session header of `path`, or `None` when its first line is not one.
fn read_header(path: &Path) -> io::Result<Option<HeaderInfo>> {
    let mut first = Vec::new();
    let mut file = File::open(path)?.take(64 << 10);
    file.read_to_end(&mut first)?;
    let line = first.split(|&c| c == b'\n').next().unwrap_or_default();
    Ok(serde_json::from_slice::<Header>(line)
        .ok()
        .filter(|h| h.kind == "session")
        .map(|h| HeaderInfo { session_id: h.id, cwd: h.cwd }))
}
