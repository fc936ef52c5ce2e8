//! Full-text search across every session (every working directory).
//!
//! Searched: user text, assistant text, the string arguments of tool calls, tool
//! results' text, compaction summaries and labels (not thinking, not images). A query
//! is words, all of which must occur (case-insensitive, Unicode-aware), and `"quoted
//! phrases"`, which must occur as written; a word that tokenizes into several
//! (`off-by-one`, `foo_bar`, CJK text) is a phrase too.
//!
//! Ranking is BM25 (rarer words and more occurrences in a shorter entry rank higher);
//! an entry holding the whole query as an exact phrase ranks above any that does not;
//! ties go to the more recently modified session.
//!
//! An inverted index under `index_dir` (see `search/index.rs`) is brought up to date
//! with the JSONL files before each search, and every hit is re-read from its file and
//! checked against the query before it is returned, so a hit is never stale.
//!
//! ```
//! use rab_session::{EntryBody, Tape, search::search};
//! let home = tempfile::tempdir().unwrap();
//! let (root, index) = (home.path().join("sessions"), home.path().join("index"));
//! let mut tape = Tape::create(&root.join("p"), std::path::Path::new("/work/p"), None);
//! let text = "the flaky parser test";
//! tape.append(EntryBody::Message { message: rab_ai::Message::user(text), details: None }).unwrap();
//! let hits = search(&root, &index, "\"parser test\"", 10).unwrap();
//! assert_eq!(hits[0].snippet, "the flaky parser test");
//! ```

mod index;
mod scan;
mod segment;
mod terms;
mod text;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use index::{FileRecord, Manifest, Unindexed};
use segment::{SegmentReader, TermInfo, read_at};
use text::{for_each_word, parse_line, snippet};

/// One match.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The session file.
    pub path: PathBuf,
    /// Session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The matching entry.
    pub entry_id: String,
    /// `user`, `assistant`, `toolResult`, or the entry type.
    pub role: String,
    /// When the entry was written (RFC 3339).
    pub timestamp: String,
    /// Text around the match, on one line.
    pub snippet: String,
    /// Higher is better.
    pub score: f64,
}

/// Longest a search spends indexing before it reads the rest of the sessions
/// directly: a first index of a large history takes seconds, and each search moves it
/// on (the terminal UI also indexes in the background).
const INDEX_TIME: Duration = Duration::from_millis(400);
/// Longest a search waits for another rab's hold on the index before it reads the
/// sessions directly.
const LOCK_WAIT: Duration = Duration::from_millis(200);
/// Most distinct words a query uses; the rest are ignored.
const MAX_TERMS: usize = 32;
/// Most candidates re-read from their files for one search: bounds the time a phrase
/// of common words can take (its later matches may then be missed).
const MAX_VERIFY: usize = 20_000;
/// Added to the score of an entry holding the whole query as an exact phrase: more than
/// any BM25 score of a query of [`MAX_TERMS`] words, so such entries rank first.
const PHRASE_BONUS: f64 = 1000.0;
const SNIPPET_CHARS: usize = 120;
const K1: f64 = 1.2;
const B: f64 = 0.75;
const NONE: u8 = u8::MAX;

/// Searches every session under `sessions_root` for `query`, best first. `index_dir` is
/// where the search index is kept; it is brought up to date with the JSONL files (the
/// truth) first, and rebuilt from them if it is unreadable.
pub fn search(
    sessions_root: &Path,
    index_dir: &Path,
    query: &str,
    limit: usize,
) -> Result<Vec<SearchHit>, crate::Error> {
    search_within(sessions_root, index_dir, query, limit, Some(INDEX_TIME))
}

/// [`search`] spending at most `index_time` on indexing (`None`: index everything
/// first); what is left unindexed is read directly.
fn search_within(
    sessions_root: &Path,
    index_dir: &Path,
    query: &str,
    limit: usize,
    index_time: Option<Duration>,
) -> Result<Vec<SearchHit>, crate::Error> {
    let q = Query::parse(query);
    if q.terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let err = |source| crate::Error::Io { path: index_dir.to_owned(), source };
    let deadline = || index_time.map(|t| Instant::now() + t);
    let wait = index_time.map(|_| LOCK_WAIT);
    let Some((_lock, mut m, mut left)) =
        open(sessions_root, index_dir, deadline(), wait).map_err(err)?
    else {
        // Another rab is building the index (a first index takes seconds): read the
        // sessions themselves rather than wait.
        tracing::debug!("search index busy; reading the sessions directly");
        let left = index::all_files(sessions_root);
        return Ok(scan::scan(&left, &q, limit, &Stats::default()));
    };
    let (mut hits, stats) = match run(index_dir, &m, &q, limit) {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(dir = %index_dir.display(), "search index broken, rebuilding: {e}");
            m = index::reset(index_dir, sessions_root).map_err(err)?;
            left = index::sync(sessions_root, index_dir, &mut m, deadline()).map_err(err)?;
            run(index_dir, &m, &q, limit).map_err(err)?
        }
    };
    if !left.is_empty() {
        let unread: u64 = left.iter().map(|u| u.end - u.start).sum();
        tracing::debug!(
            files = left.len(),
            bytes = unread,
            "searching unindexed sessions directly"
        );
        hits.extend(scan::scan(&left, &q, limit, &stats));
        // Stable: among equal scores the index's order (recent sessions first) stays.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
    }
    Ok(hits)
}

/// Brings the index under `index_dir` up to date without searching (to pay for
/// indexing ahead of the first search, e.g. while the terminal UI is idle).
pub fn update_index(sessions_root: &Path, index_dir: &Path) -> Result<(), crate::Error> {
    open(sessions_root, index_dir, None, None)
        .map(drop)
        .map_err(|source| crate::Error::Io { path: index_dir.to_owned(), source })
}

/// Locks the index (one rab at a time updates it; the lock is released on exit, even
/// a crash), loads the manifest and syncs it with the files until `deadline`; returns
/// what is left unindexed. With `wait`, gives up (`None`) when the lock stays taken
/// that long.
fn open(
    root: &Path,
    dir: &Path,
    deadline: Option<Instant>,
    wait: Option<Duration>,
) -> io::Result<Option<(File, Manifest, Vec<Unindexed>)>> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("search.lock"))?;
    match wait {
        None => lock.lock()?,
        Some(wait) => {
            let give_up = Instant::now() + wait;
            loop {
                match lock.try_lock() {
                    Ok(()) => break,
                    Err(std::fs::TryLockError::WouldBlock) if Instant::now() < give_up => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                    Err(std::fs::TryLockError::Error(e)) => return Err(e),
                }
            }
        }
    }
    let mut m = index::load(dir, root).unwrap_or_else(|| index::empty(root));
    let left = index::sync(root, dir, &mut m, deadline)?;
    Ok(Some((lock, m, left)))
}

/// A parsed query: distinct words, and phrases as sequences of word indices.
#[derive(Debug, PartialEq)]
struct Query {
    terms: Vec<Vec<u8>>,
    phrases: Vec<Vec<u8>>,
    /// The whole query in order, for the exact-phrase bonus.
    sequence: Vec<u8>,
}

impl Query {
    fn parse(query: &str) -> Query {
        let mut q = Query { terms: Vec::new(), phrases: Vec::new(), sequence: Vec::new() };
        let mut buf = Vec::new();
        for (n, piece) in query.split('"').enumerate() {
            // Odd pieces were inside quotes (an unclosed quote runs to the end).
            let groups: Vec<&str> =
                if n % 2 == 1 { vec![piece] } else { piece.split_whitespace().collect() };
            for group in groups {
                let mut ids = Vec::new();
                for_each_word(group, &mut buf, |w, _| {
                    let id = match q.terms.iter().position(|t| t == w) {
                        Some(i) => i,
                        None if q.terms.len() < MAX_TERMS => {
                            q.terms.push(w.to_vec());
                            q.terms.len() - 1
                        }
                        None => return,
                    };
                    ids.push(id as u8);
                });
                q.sequence.extend(&ids);
                if ids.len() > 1 {
                    q.phrases.push(ids);
                }
            }
        }
        q
    }

    /// Checks an entry's text against the query: every word, every phrase. Returns
    /// where the snippet should centre and whether the whole query occurs as a phrase.
    fn check(&self, text: &str, buf: &mut Vec<u8>) -> Option<(usize, bool)> {
        let mut seq = Vec::new();
        let mut starts = Vec::new();
        let mut seen = 0u64;
        for_each_word(text, buf, |w, s| {
            let t = self.terms.iter().position(|t| t == w).map_or(NONE, |i| i as u8);
            if t != NONE {
                seen |= 1 << t;
            }
            seq.push(t);
            starts.push(s);
        });
        if seen != (1u64 << self.terms.len()) - 1 {
            return None;
        }
        let mut at: Option<usize> = None;
        for p in &self.phrases {
            let pos = find(&seq, p)?;
            at = Some(at.map_or(starts[pos], |a| a.min(starts[pos])));
        }
        let whole = if self.sequence.len() > 1 { find(&seq, &self.sequence) } else { None };
        let first = || seq.iter().position(|&t| t != NONE).map_or(0, |i| starts[i]);
        let at = whole.map(|i| starts[i]).or(at).unwrap_or_else(first);
        Some((at, whole.is_some()))
    }
}

fn find(seq: &[u8], pattern: &[u8]) -> Option<usize> {
    seq.windows(pattern.len()).position(|w| w == pattern)
}

/// A doc whose words all match, before it is checked against its file.
struct Candidate {
    score: f64,
    mtime: u64,
    file_id: u32,
    offset: u64,
    len: u32,
}

fn rank(a: &Candidate, b: &Candidate) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then(b.mtime.cmp(&a.mtime))
        .then(b.file_id.cmp(&a.file_id))
        .then(b.offset.cmp(&a.offset))
}

/// Scores every doc holding all the query's words, then checks the best against their
/// files until `limit` hits are confirmed. Errors are the index's (a broken segment).
/// What the index knows of its docs, for scoring hits found outside it alike.
#[derive(Debug, Default)]
struct Stats {
    docs: u64,
    words: u64,
    /// Per query word: docs holding it.
    df: Vec<u64>,
}

/// BM25's inverse document frequency.
fn idf(df: u64, docs: u64) -> f64 {
    (1.0 + (docs as f64 - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
}

/// BM25's term-frequency part for a doc of `words` words.
fn tf_part(tf: u32, words: u32, avgdl: f64) -> f64 {
    let norm = K1 * (1.0 - B + B * f64::from(words) / avgdl.max(1.0));
    f64::from(tf) * (K1 + 1.0) / (f64::from(tf) + norm)
}

/// One word's BM25 score in a doc.
fn bm25_term(tf: u32, words: u32, df: u64, docs: u64, avgdl: f64) -> f64 {
    idf(df, docs) * tf_part(tf, words, avgdl)
}

fn run(dir: &Path, m: &Manifest, q: &Query, limit: usize) -> io::Result<(Vec<SearchHit>, Stats)> {
    let files: HashMap<u32, &FileRecord> = m.files.iter().map(|f| (f.id, f)).collect();
    let readers = m
        .segments
        .iter()
        .map(|s| SegmentReader::open(&dir.join(&s.name)))
        .collect::<io::Result<Vec<_>>>()?;
    let mut infos: Vec<Vec<Option<TermInfo>>> = Vec::with_capacity(readers.len());
    let mut df = vec![0u64; q.terms.len()];
    for r in &readers {
        let found = q.terms.iter().map(|t| r.lookup(t)).collect::<io::Result<Vec<_>>>()?;
        for (d, i) in df.iter_mut().zip(&found) {
            *d += i.map_or(0, |i| u64::from(i.df));
        }
        infos.push(found);
    }
    let docs: u64 = readers.iter().map(|r| u64::from(r.docs())).sum();
    let words: u64 = readers.iter().map(SegmentReader::total_words).sum();
    let avgdl = words as f64 / docs.max(1) as f64;
    let idf: Vec<f64> = df.iter().map(|&d| idf(d, docs)).collect();
    let mut cands = Vec::new();
    for (r, found) in readers.iter().zip(&infos) {
        let Some(found) = found.iter().copied().collect::<Option<Vec<TermInfo>>>() else {
            continue;
        };
        score_segment(r, &found, &idf, avgdl, &files, &mut cands)?;
    }
    Ok((verify(&files, m, q, cands, limit), Stats { docs, words, df }))
}

/// Intersects the words' postings in one segment (rarest first) and scores the docs
/// whose file is live.
fn score_segment(
    r: &SegmentReader,
    found: &[TermInfo],
    idf: &[f64],
    avgdl: f64,
    files: &HashMap<u32, &FileRecord>,
    out: &mut Vec<Candidate>,
) -> io::Result<()> {
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by_key(|&t| found[t].df);
    let mut docs: Vec<u32> = Vec::new();
    let mut tfs: Vec<u32> = Vec::new(); // row-major: one row of term frequencies per doc
    for (stride, &t) in order.iter().enumerate() {
        let list = r.postings(&found[t])?;
        if stride == 0 {
            docs = list.iter().map(|p| p.0).collect();
            tfs = list.iter().map(|p| p.1).collect();
            continue;
        }
        let (mut nd, mut nt) = (Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < docs.len() && j < list.len() {
            match docs[i].cmp(&list[j].0) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    nd.push(docs[i]);
                    nt.extend_from_slice(&tfs[i * stride..(i + 1) * stride]);
                    nt.push(list[j].1);
                    i += 1;
                    j += 1;
                }
            }
        }
        (docs, tfs) = (nd, nt);
        if docs.is_empty() {
            return Ok(());
        }
    }
    let table = r.doc_table()?;
    let n = order.len();
    for (row, &doc) in docs.iter().enumerate() {
        let meta = table.get(doc)?;
        let Some(file) = files.get(&meta.file_id) else { continue }; // reindexed or deleted
        let score = order
            .iter()
            .zip(&tfs[row * n..(row + 1) * n])
            .map(|(&t, &tf)| idf[t] * tf_part(tf, meta.words, avgdl))
            .sum();
        out.push(Candidate {
            score,
            mtime: file.mtime_ns,
            file_id: meta.file_id,
            offset: meta.offset,
            len: meta.len,
        });
    }
    Ok(())
}

/// Re-reads candidates, best first, and keeps those whose line in the file still
/// matches. Without quotes, the best `4 × limit` are all read so that exact-phrase
/// matches among them can move up.
fn verify(
    files: &HashMap<u32, &FileRecord>,
    m: &Manifest,
    q: &Query,
    mut rest: Vec<Candidate>,
    limit: usize,
) -> Vec<SearchHit> {
    let window = if q.sequence.len() > 1 { limit.saturating_mul(4).max(50) } else { limit };
    let root = Path::new(&m.root);
    let mut open: HashMap<u32, File> = HashMap::new();
    let mut buf = Vec::new();
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut examined = 0;
    let mut chunk = window.max(256);
    let is_done = |hits: &Vec<SearchHit>, examined: usize| {
        examined >= MAX_VERIFY || (hits.len() >= limit && examined >= window)
    };
    // Sorting all candidates of a common word costs more than the search; take the
    // best few with a selection, and more only when checks reject many.
    while !rest.is_empty() && !is_done(&hits, examined) {
        let k = chunk.min(rest.len());
        if k < rest.len() {
            rest.select_nth_unstable_by(k - 1, rank);
        }
        let mut best: Vec<Candidate> = rest.drain(..k).collect();
        best.sort_by(rank);
        for c in best {
            if is_done(&hits, examined) {
                break;
            }
            examined += 1;
            let Some(file) = files.get(&c.file_id) else { continue };
            if let Some(hit) = confirm(root, file, &c, q, &mut open, &mut buf) {
                hits.push(hit);
            }
        }
        chunk = chunk.saturating_mul(4);
    }
    // Stable: equal scores keep the candidates' order (recent sessions first).
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits.truncate(limit);
    hits
}

/// Reads a candidate's line from its session file and checks it against the query.
fn confirm(
    root: &Path,
    file: &FileRecord,
    c: &Candidate,
    q: &Query,
    open: &mut HashMap<u32, File>,
    buf: &mut Vec<u8>,
) -> Option<SearchHit> {
    let path = root.join(&file.path);
    let f = match open.entry(c.file_id) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(File::open(&path).ok()?),
    };
    let line = read_at(f, c.offset, c.len as usize).ok()?;
    let Some(entry) = parse_line(&line) else {
        tracing::debug!(file = %path.display(), offset = c.offset, "search hit no longer in its file");
        return None;
    };
    let text = entry.joined();
    let (at, is_exact) = q.check(&text, buf)?;
    let header = file.header.as_ref()?;
    Some(SearchHit {
        path,
        session_id: header.session_id.clone(),
        cwd: header.cwd.clone(),
        entry_id: entry.id.into_owned(),
        role: entry.role.into_owned(),
        timestamp: entry.timestamp.into_owned(),
        snippet: snippet(&text, at, SNIPPET_CHARS),
        score: c.score + if is_exact { PHRASE_BONUS } else { 0.0 },
    })
}

#[cfg(test)]
mod tests;
