//! One immutable index segment: an inverted index over the entries (docs) of some byte
//! ranges of session files. A search reads only the dictionary block and the postings
//! of each query word, plus the doc table, so its cost does not grow with the index.
//!
//! File layout (little-endian), written once to a temp name and renamed:
//!
//! ```text
//! postings     per word: (varint doc-delta, varint tf)*
//! dict blocks  per word, sorted, 64 a block: varint len, bytes, varint df, varint off, varint len
//! block index  per block: u64 offset, u16 first-word len, first-word bytes
//! docs         per doc: u32 file id, u64 line offset, u32 line length, u32 word count
//! footer       magic, u32 docs, u32 words, u64 tokens, u64 dict, u64 block index, u64 docs, u64 file length
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::terms::Terms;
use super::text::for_each_word;

const MAGIC: &[u8; 8] = b"RABSIX01";
const FOOTER: usize = 8 + 4 + 4 + 8 * 5;
const DOC: usize = 20;
const BLOCK: usize = 64;

/// Where an entry line is and how many words it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DocMeta {
    pub(crate) file_id: u32,
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) words: u32,
}

/// What a finished segment holds, for the manifest.
#[derive(Debug)]
pub(crate) struct SegmentStats {
    pub(crate) docs: u32,
    pub(crate) bytes: u64,
}

/// Collects docs in memory until written as a segment.
#[derive(Default)]
pub(crate) struct SegmentBuilder {
    terms: Terms,
    /// Per word id: its postings so far, the last doc holding it, how many docs hold
    /// it, and (for the doc being added) the doc it was last counted in and its count.
    postings: Vec<Vec<u8>>,
    last_doc: Vec<u32>,
    df: Vec<u32>,
    seen_in: Vec<u32>,
    tf: Vec<u32>,
    docs: Vec<DocMeta>,
    total_words: u64,
    /// Distinct word ids of the doc being added.
    scratch: Vec<u32>,
    word: Vec<u8>,
}

impl SegmentBuilder {
    /// Adds one entry; entries without words are not docs.
    pub(crate) fn add_doc<'a>(
        &mut self,
        file_id: u32,
        offset: u64,
        len: u32,
        parts: impl Iterator<Item = &'a str>,
    ) {
        let doc = self.docs.len() as u32;
        let Self { terms, postings, last_doc, df, seen_in, tf, scratch, word, .. } = self;
        scratch.clear();
        let mut words = 0u32;
        for part in parts {
            for_each_word(part, word, |w, _| {
                let (id, is_new) = terms.id(w);
                if is_new {
                    postings.push(Vec::new());
                    last_doc.push(0);
                    df.push(0);
                    seen_in.push(u32::MAX);
                    tf.push(0);
                }
                let t = id as usize;
                if seen_in[t] != doc {
                    seen_in[t] = doc;
                    tf[t] = 0;
                    scratch.push(id);
                }
                tf[t] += 1;
                words += 1;
            });
        }
        if words == 0 {
            return;
        }
        // Docs arrive in order, so each word's postings stay sorted by doc.
        for &id in scratch.iter() {
            let t = id as usize;
            let delta = if df[t] == 0 { doc } else { doc - last_doc[t] };
            put_varint(&mut postings[t], u64::from(delta));
            put_varint(&mut postings[t], u64::from(tf[t]));
            df[t] += 1;
            last_doc[t] = doc;
        }
        self.total_words += u64::from(words);
        self.docs.push(DocMeta { file_id, offset, len, words });
    }

    /// Writes the segment to `path` (through a temp file, so a crash never leaves a
    /// half-written segment under the final name).
    pub(crate) fn write(self, path: &Path) -> io::Result<SegmentStats> {
        let tmp = path.with_extension("tmp");
        let file = create_private(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut sorted: Vec<(&[u8], u32)> =
            (0..self.terms.len() as u32).map(|id| (self.terms.word(id), id)).collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut pos = 0u64;
        let mut locs = Vec::with_capacity(sorted.len());
        for &(_, id) in &sorted {
            let p = &self.postings[id as usize];
            w.write_all(p)?;
            locs.push((pos, p.len() as u64));
            pos += p.len() as u64;
        }
        let dict_off = pos;
        let mut index = Vec::new();
        let mut block = Vec::new();
        for (n, (&(term, id), &(off, len))) in sorted.iter().zip(&locs).enumerate() {
            if n % BLOCK == 0 {
                w.write_all(&block)?;
                pos += block.len() as u64;
                block.clear();
                index.extend_from_slice(&pos.to_le_bytes());
                index.extend_from_slice(&(term.len() as u16).to_le_bytes());
                index.extend_from_slice(term);
            }
            put_varint(&mut block, term.len() as u64);
            block.extend_from_slice(term);
            put_varint(&mut block, u64::from(self.df[id as usize]));
            put_varint(&mut block, off);
            put_varint(&mut block, len);
        }
        w.write_all(&block)?;
        pos += block.len() as u64;
        let index_off = pos;
        w.write_all(&index)?;
        pos += index.len() as u64;
        let docs_off = pos;
        for d in &self.docs {
            w.write_all(&d.file_id.to_le_bytes())?;
            w.write_all(&d.offset.to_le_bytes())?;
            w.write_all(&d.len.to_le_bytes())?;
            w.write_all(&d.words.to_le_bytes())?;
        }
        pos += (self.docs.len() * DOC) as u64;
        let total = pos + FOOTER as u64;
        w.write_all(MAGIC)?;
        w.write_all(&(self.docs.len() as u32).to_le_bytes())?;
        w.write_all(&(sorted.len() as u32).to_le_bytes())?;
        for v in [self.total_words, dict_off, index_off, docs_off, total] {
            w.write_all(&v.to_le_bytes())?;
        }
        w.into_inner().map_err(io::IntoInnerError::into_error)?;
        std::fs::rename(&tmp, path)?;
        Ok(SegmentStats { docs: self.docs.len() as u32, bytes: total })
    }
}

/// Creates a file readable by the user only: the index holds words of prompts and output.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("corrupt search segment: {what}"))
}

/// Reads varints from a byte slice, failing (never panicking) on truncated data.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn varint(&mut self) -> io::Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.pos).ok_or_else(|| corrupt("truncated varint"))?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(corrupt("overlong varint"))
    }

    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let s = self.bytes.get(self.pos..self.pos + n).ok_or_else(|| corrupt("truncated"))?;
        self.pos += n;
        Ok(s)
    }

    fn is_done(&self) -> bool {
        self.pos >= self.bytes.len()
    }
}

fn u32_at(b: &[u8], at: usize) -> io::Result<u32> {
    let s = b.get(at..at + 4).ok_or_else(|| corrupt("short field"))?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> io::Result<u64> {
    let s = b.get(at..at + 8).ok_or_else(|| corrupt("short field"))?;
    let mut w = [0u8; 8];
    w.copy_from_slice(s);
    Ok(u64::from_le_bytes(w))
}

/// Where a word's postings are in a segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TermInfo {
    pub(crate) df: u32,
    off: u64,
    len: u64,
}

/// An open segment.
pub(crate) struct SegmentReader {
    file: File,
    docs: u32,
    total_words: u64,
    dict_off: u64,
    index_off: u64,
    docs_off: u64,
    index: Vec<u8>,
    /// (offset in `index` of the first word, its length, block offset).
    blocks: Vec<(usize, usize, u64)>,
}

impl SegmentReader {
    /// Opens a segment and reads its block index; fails on anything inconsistent.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        if len < FOOTER as u64 {
            return Err(corrupt("too short"));
        }
        let footer = read_at(&file, len - FOOTER as u64, FOOTER)?;
        if footer.get(..8) != Some(MAGIC.as_slice()) {
            return Err(corrupt("bad magic"));
        }
        let docs = u32_at(&footer, 8)?;
        let total_words = u64_at(&footer, 16)?;
        let (dict_off, index_off, docs_off) =
            (u64_at(&footer, 24)?, u64_at(&footer, 32)?, u64_at(&footer, 40)?);
        if u64_at(&footer, 48)? != len
            || dict_off > index_off
            || index_off > docs_off
            || docs_off + u64::from(docs) * DOC as u64 + FOOTER as u64 != len
        {
            return Err(corrupt("bad footer"));
        }
        let index = read_at(&file, index_off, (docs_off - index_off) as usize)?;
        let mut blocks = Vec::new();
        let mut c = Cursor { bytes: &index, pos: 0 };
        while !c.is_done() {
            let off = u64_at(c.take(8)?, 0)?;
            let n = c.take(2)?;
            let n = usize::from(u16::from_le_bytes([n[0], n[1]]));
            let at = c.pos;
            c.take(n)?;
            if off < dict_off || off >= index_off {
                return Err(corrupt("block offset"));
            }
            blocks.push((at, n, off));
        }
        Ok(Self { file, docs, total_words, dict_off, index_off, docs_off, index, blocks })
    }

    /// Number of docs (live or not).
    pub(crate) fn docs(&self) -> u32 {
        self.docs
    }

    /// Sum of the docs' word counts.
    pub(crate) fn total_words(&self) -> u64 {
        self.total_words
    }

    /// Finds a word in the dictionary: one binary search in memory, one block read.
    pub(crate) fn lookup(&self, term: &[u8]) -> io::Result<Option<TermInfo>> {
        let first = |&(at, n, _): &(usize, usize, u64)| &self.index[at..at + n];
        let pos = self.blocks.partition_point(|b| first(b) <= term);
        let Some(b) = pos.checked_sub(1) else { return Ok(None) };
        let start = self.blocks[b].2;
        let end = self.blocks.get(b + 1).map_or(self.index_off, |n| n.2);
        if end < start || end - start > 1 << 20 {
            return Err(corrupt("block size"));
        }
        let block = read_at(&self.file, start, (end - start) as usize)?;
        let mut c = Cursor { bytes: &block, pos: 0 };
        while !c.is_done() {
            let n = c.varint()? as usize;
            let word = c.take(n)?;
            let df = c.varint()? as u32;
            let off = c.varint()?;
            let len = c.varint()?;
            if word == term {
                if off.checked_add(len).is_none_or(|e| e > self.dict_off) {
                    return Err(corrupt("postings range"));
                }
                return Ok(Some(TermInfo { df, off, len }));
            }
            if word > term {
                break;
            }
        }
        Ok(None)
    }

    /// The (doc, term frequency) pairs of a word, in doc order.
    pub(crate) fn postings(&self, info: &TermInfo) -> io::Result<Vec<(u32, u32)>> {
        let bytes = read_at(&self.file, info.off, info.len as usize)?;
        let mut out = Vec::with_capacity(info.df as usize);
        let mut c = Cursor { bytes: &bytes, pos: 0 };
        let mut doc = 0u64;
        while !c.is_done() {
            let delta = c.varint()?;
            doc = if out.is_empty() { delta } else { doc + delta };
            let tf = c.varint()?;
            if doc >= u64::from(self.docs) {
                return Err(corrupt("doc number"));
            }
            out.push((doc as u32, tf as u32));
        }
        Ok(out)
    }

    /// The whole doc table (20 bytes a doc), read once per search of this segment.
    pub(crate) fn doc_table(&self) -> io::Result<DocTable> {
        Ok(DocTable(read_at(&self.file, self.docs_off, self.docs as usize * DOC)?))
    }
}

/// The raw doc table of a segment.
pub(crate) struct DocTable(Vec<u8>);

impl DocTable {
    /// Doc `n`'s metadata.
    pub(crate) fn get(&self, n: u32) -> io::Result<DocMeta> {
        let at = n as usize * DOC;
        Ok(DocMeta {
            file_id: u32_at(&self.0, at)?,
            offset: u64_at(&self.0, at + 4)?,
            len: u32_at(&self.0, at + 12)?,
            words: u32_at(&self.0, at + 16)?,
        })
    }
}

/// Reads `len` bytes at `off` (portable: seek + read on a shared `&File`).
pub(crate) fn read_at(file: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut f = file;
    f.seek(SeekFrom::Start(off))?;
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}
