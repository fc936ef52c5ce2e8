//! Writing the request's `messages`: each message's bytes hashed as they are written
//! (the prefix fingerprint), thinking left out where the prefix it is bound to changed,
//! and cache breakpoint markers. And what a conversation keeps of its last request
//! ([`Memo`]): the bytes of the messages no later request can write differently, so
//! the next request copies them instead of building and serialising the whole history
//! again (the one part of a turn's own work that grew with the conversation).

use serde::Serialize;

use super::{Block, EPHEMERAL, Msg, Tool};
use crate::model::Model;

/// A 64-bit hash of what is written to it, eight bytes at a time (the request is hashed
/// on every turn, so speed matters; it only has to tell one conversation's prefixes
/// apart). Stable across runs, platforms and versions: it is stored on the tape.
struct Fingerprint {
    state: u64,
    tail: [u8; 8],
    tail_len: usize,
    len: u64,
    /// One value's JSON, hashed in one go (serde writes in many small pieces).
    buf: Vec<u8>,
}

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl std::io::Write for Fingerprint {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len += buf.len() as u64;
        let mut rest = buf;
        if self.tail_len > 0 {
            let take = (8 - self.tail_len).min(rest.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&rest[..take]);
            self.tail_len += take;
            rest = &rest[take..];
            if self.tail_len < 8 {
                return Ok(buf.len());
            }
            self.mix(u64::from_le_bytes(self.tail));
            self.tail_len = 0;
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.mix(u64::from_le_bytes(word));
        }
        let left = words.remainder();
        self.tail[..left.len()].copy_from_slice(left);
        self.tail_len = left.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A copy of the hash so far; its scratch buffer is not copied.
impl Clone for Fingerprint {
    fn clone(&self) -> Self {
        Fingerprint {
            state: self.state,
            tail: self.tail,
            tail_len: self.tail_len,
            len: self.len,
            buf: Vec::new(),
        }
    }
}

impl Fingerprint {
    fn new() -> Self {
        Fingerprint {
            state: 0x243f_6a88_85a3_08d3,
            tail: [0; 8],
            tail_len: 0,
            len: 0,
            buf: Vec::new(),
        }
    }

    fn mix(&mut self, word: u64) {
        self.state = (self.state ^ word).wrapping_mul(MIX).rotate_left(31);
    }

    /// Hashes serialised bytes and the newline [`Fingerprint::add`] puts after them.
    fn hash_line(&mut self, bytes: &[u8]) {
        let _ = std::io::Write::write(self, bytes);
        let _ = std::io::Write::write(self, b"\n");
    }

    fn add(&mut self, value: &impl Serialize) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        // Writing to memory cannot fail, and serialising these types cannot either.
        let _ = serde_json::to_writer(&mut buf, value);
        buf.push(b'\n');
        let _ = std::io::Write::write(self, &buf);
        self.buf = buf;
    }

    /// The hash of everything written so far (what follows is not affected).
    fn hex(&self) -> String {
        let mut tail = [0u8; 8];
        tail[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
        let mut h = (self.state ^ u64::from_le_bytes(tail)).wrapping_mul(MIX);
        h ^= self.len;
        h = (h ^ (h >> 32)).wrapping_mul(MIX);
        format!("{:016x}", h ^ (h >> 29))
    }
}

/// What the request needs to know of a message besides its bytes: where the cache
/// breakpoints go, how far the fingerprint must go, which betas it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub role: &'static str,
    /// It has thinking blocks (before any is left out).
    pub thinking: bool,
    /// It is an effort-only system message.
    pub effort: bool,
}

impl Shape {
    pub fn of(m: &Msg<'_>) -> Shape {
        Shape {
            role: m.role,
            thinking: m.content.iter().any(Block::is_thinking),
            effort: m.output_config.is_some(),
        }
    }

    fn is_thinking_reply(&self) -> bool {
        self.role == "assistant" && self.thinking
    }
}

/// The fingerprint in progress, and how far it must go.
#[derive(Clone)]
pub(crate) struct Hashing {
    fp: Fingerprint,
    /// Messages to hash: up to the last reply with thinking (to check it), or all.
    upto: usize,
    /// Whether the whole request's fingerprint is wanted (the reply may think).
    finish: bool,
}

/// Starts the prefix fingerprint over the declared tools and the system prompt (without
/// its breakpoint marker), or returns `None` when nothing needs it. The fingerprint
/// costs hashing the whole history, so it only goes as far as needed: up to the last
/// reply with thinking (to check it, for models whose thinking is bound to its prefix,
/// `binds`), and to the end only when this request's reply may think.
pub(crate) fn start_fingerprint(
    tools: &[Tool<'_>],
    system: &[Block<'_>],
    shapes: &[Shape],
    binds: bool,
    reply_may_think: bool,
) -> Option<Hashing> {
    let upto = if reply_may_think {
        shapes.len()
    } else if binds {
        shapes.iter().rposition(Shape::is_thinking_reply)? + 1
    } else {
        return None;
    };
    let mut fp = Fingerprint::new();
    let declared: Vec<&Tool<'_>> = tools.iter().filter(|t| !t.defer_loading).collect();
    fp.add(&declared);
    fp.add(&system);
    Some(Hashing { fp, upto, finish: reply_may_think })
}

/// Where the cache breakpoints go: the last message and the user-role message before
/// it. The latter was the last message of the previous request, so the previous
/// request's bytes up to and including it (breakpoint marker too) recur unchanged, and
/// its cache entry is read back. With the system prompt's breakpoint that makes three
/// of the four Anthropic allows. System messages take no marker; the turn before them
/// does. A backward scan: it stops at the second target.
pub(crate) fn breakpoint_targets(shapes: &[Shape]) -> Vec<usize> {
    let mut turns = shapes.iter().enumerate().rev().filter(|(_, m)| m.role != "system");
    let Some((last, _)) = turns.next() else { return Vec::new() };
    let mut targets = vec![last];
    targets.extend(turns.find(|(_, m)| m.role == "user").map(|(i, _)| i));
    targets
}

/// Why writing stopped.
#[derive(Debug)]
pub(crate) enum Unwritten {
    /// A remembered message would not be written the same now (its thinking): the
    /// history is to be written whole.
    Stale,
    /// A message could not be serialised.
    Json(serde_json::Error),
}

/// A message just written: where its bytes are in the body and what a [`Memo`] keeps
/// of it.
pub(crate) struct Written {
    range: std::ops::Range<usize>,
    /// Its thinking went out with it (if it had any).
    kept_thinking: bool,
    /// What the fingerprint hashed after its bytes: the specs it offers, a line each.
    offers: Vec<u8>,
}

/// Writes messages as a JSON array's elements, hashing each message's bytes as written,
/// and gives the fingerprint of the whole request for its reply (when
/// [`start_fingerprint`] asked for it). On the way, leaves out the thinking of replies
/// whose prefix changed (and, once one is left out, of every later reply); only for
/// models whose thinking is bound to its prefix (`binds`), others need their thinking
/// back as it was (a tool round must start with its thinking). A reply that recorded
/// no fingerprint (from before rab kept them) keeps its thinking only when
/// `keep_unknown` (the request asks the API to drop blocks that do not match rather
/// than fail). The messages at `marks` get a cache breakpoint marker, which is not part
/// of the prefix.
pub(crate) struct Writer<'m> {
    hashing: Option<Hashing>,
    binds: bool,
    keep_unknown: bool,
    is_broken: bool,
    marks: &'m [usize],
    /// Messages written so far.
    n: usize,
}

impl<'m> Writer<'m> {
    pub fn new(
        hashing: Option<Hashing>,
        marks: &'m [usize],
        binds: bool,
        keep_unknown: bool,
    ) -> Self {
        Writer { hashing, binds, keep_unknown, is_broken: false, marks, n: 0 }
    }

    /// Whether the thinking of the reply about to be written, with the fingerprint it
    /// recorded, holds; `None` when nothing is checked (it goes back as it is).
    fn holds(&mut self, prefix_hash: Option<&str>) -> Option<bool> {
        let n = self.n;
        let h = self.hashing.as_ref().filter(|h| self.binds && n < h.upto)?;
        // A reply whose fingerprint matches was written after anything left out before
        // it, so its thinking holds; one without a fingerprint cannot tell.
        let holds = match prefix_hash {
            Some(hash) => hash == h.fp.hex(),
            None => self.keep_unknown && !self.is_broken,
        };
        if !holds {
            self.is_broken = true;
            tracing::debug!("thinking left out: the conversation before it changed");
        }
        Some(holds)
    }

    /// The fingerprint, while message `self.n` is still to be hashed.
    fn fp(&mut self) -> Option<&mut Fingerprint> {
        let n = self.n;
        self.hashing.as_mut().filter(|h| n < h.upto).map(|h| &mut h.fp)
    }

    /// Writes what `memo` kept, first: fails when one of its messages would be written
    /// differently now, or would take a breakpoint marker.
    pub fn remembered(&mut self, out: &mut Vec<u8>, memo: &Memo) -> Result<(), Unwritten> {
        if self.marks.iter().any(|&i| i < memo.kept.len()) {
            return Err(Unwritten::Stale);
        }
        for k in &memo.kept {
            if k.shape.is_thinking_reply() {
                let now = self.holds(k.prefix_hash.as_deref()).unwrap_or(true);
                if now != k.kept_thinking {
                    return Err(Unwritten::Stale);
                }
            }
            if let Some(fp) = self.fp() {
                fp.hash_line(&memo.bytes[k.range.clone()]);
                let _ = std::io::Write::write(fp, &k.offers);
            }
            self.n += 1;
        }
        out.extend_from_slice(&memo.bytes);
        Ok(())
    }

    /// Writes one message (built now).
    pub fn fresh(&mut self, out: &mut Vec<u8>, m: &mut Msg<'_>) -> Result<Written, Unwritten> {
        let mut kept_thinking = true;
        if m.role == "assistant"
            && m.content.iter().any(Block::is_thinking)
            && self.holds(m.prefix_hash) == Some(false)
        {
            kept_thinking = false;
            m.content.retain(|b| !b.is_thinking());
        }
        if self.n > 0 {
            out.push(b',');
        }
        let start = out.len();
        let marked = self.marks.contains(&self.n);
        if marked {
            if let Some(fp) = self.fp() {
                fp.add(m);
            }
            if let Some(slot) = m.content.iter_mut().rev().find_map(Block::cache_slot) {
                *slot = Some(EPHEMERAL);
            }
        }
        serde_json::to_writer(&mut *out, m).map_err(Unwritten::Json)?;
        let mut offers = Vec::new();
        for t in &m.offers {
            serde_json::to_writer(&mut offers, t).map_err(Unwritten::Json)?;
            offers.push(b'\n');
        }
        if let Some(fp) = self.fp() {
            if !marked {
                fp.hash_line(&out[start..]);
            }
            let _ = std::io::Write::write(fp, &offers);
        }
        self.n += 1;
        Ok(Written { range: start..out.len(), kept_thinking, offers })
    }

    /// The fingerprint of the whole request, when it was asked for.
    pub fn finish(self) -> Option<String> {
        self.hashing.filter(|h| h.finish).map(|h| h.fp.hex())
    }
}

/// Writes `messages` after what `memo` kept (if anything); with `keep`, returns how
/// each was written (for a memo to keep them).
pub(crate) fn write_messages(
    out: &mut Vec<u8>,
    writer: &mut Writer<'_>,
    memo: Option<&Memo>,
    messages: &mut [Msg<'_>],
    keep: bool,
) -> Result<Vec<Written>, Unwritten> {
    if let Some(memo) = memo {
        writer.remembered(out, memo)?;
    }
    let mut written = Vec::with_capacity(if keep { messages.len() } else { 0 });
    for m in messages {
        let w = writer.fresh(out, m)?;
        if keep {
            written.push(w);
        }
    }
    Ok(written)
}

/// What the messages were built with: a memo's bytes are only good for the same.
#[derive(Debug)]
pub(crate) struct MemoKey {
    pub model: Model,
    pub tool_changes: bool,
    pub declared: Vec<String>,
    pub efforts: bool,
}

/// A message a memo kept.
struct Kept {
    /// Where its bytes are in [`Memo::bytes`].
    range: std::ops::Range<usize>,
    shape: Shape,
    kept_thinking: bool,
    prefix_hash: Option<String>,
    offers: Vec<u8>,
}

/// The bytes of the first messages of a conversation's last request: those before the
/// last reply ahead of its first cache breakpoint. Later requests of the conversation
/// write them unchanged: its history only grows (whoever owns it passes a new memo when
/// it does not), messages after a reply are never merged into what is before it, and
/// later breakpoints are later. What could still differ (thinking left out after a
/// change of the prefix, a model, tools or settings of another kind) is checked.
pub(crate) struct Memo {
    key: MemoKey,
    /// The context's messages these were built from (`messages[..source]`).
    source: usize,
    /// The messages, `,`-separated.
    bytes: Vec<u8>,
    kept: Vec<Kept>,
}

impl Memo {
    pub fn new(key: MemoKey) -> Memo {
        Memo { key, source: 0, bytes: Vec::new(), kept: Vec::new() }
    }

    /// Whether its messages were built as a request with these would build them.
    pub fn fits_model(
        &self,
        model: &Model,
        tool_changes: bool,
        declared: &[&str],
        efforts: bool,
    ) -> bool {
        let k = &self.key;
        k.tool_changes == tool_changes
            && k.efforts == efforts
            && k.declared.len() == declared.len()
            && k.declared.iter().zip(declared).all(|(a, b)| a == b)
            && k.model == *model
    }

    /// Bytes it holds.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The context's messages its bytes cover: a request writes the rest.
    pub fn source(&self) -> usize {
        self.source
    }

    /// Its messages' shapes.
    pub fn shapes(&self) -> impl Iterator<Item = Shape> + '_ {
        self.kept.iter().map(|k| k.shape)
    }

    /// Keeps more of the request just written into `out`: its messages `fresh` (after
    /// the ones kept already), `written` as they were, and the whole request's `shapes`
    /// and breakpoint `marks`.
    pub fn extend(
        &mut self,
        out: &[u8],
        fresh: &[Msg<'_>],
        written: &[Written],
        shapes: &[Shape],
        marks: &[usize],
    ) {
        let first_mark = marks.iter().copied().min().unwrap_or(0);
        let Some(end) = shapes[..first_mark.min(shapes.len())]
            .iter()
            .rposition(|s| s.role == "assistant")
            .map(|i| i + 1)
        else {
            return;
        };
        let base = self.kept.len();
        if end <= base {
            return;
        }
        for i in base..end {
            let (m, w) = (&fresh[i - base], &written[i - base]);
            if !self.bytes.is_empty() {
                self.bytes.push(b',');
            }
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&out[w.range.clone()]);
            self.kept.push(Kept {
                range: start..self.bytes.len(),
                shape: shapes[i],
                kept_thinking: w.kept_thinking,
                prefix_hash: m.prefix_hash.map(str::to_owned),
                offers: w.offers.clone(),
            });
        }
        self.source = fresh[end - 1 - base].source + 1;
    }
}

/// [`start_fingerprint`] and [`write_messages`] without the body: leaves out thinking
/// as a request would and returns its fingerprint.
#[cfg(test)]
pub(crate) fn bind_thinking(
    tools: &[Tool<'_>],
    system: &[Block<'_>],
    messages: &mut [Msg<'_>],
    binds: bool,
    keep_unknown: bool,
    reply_may_think: bool,
) -> Option<String> {
    let shapes: Vec<Shape> = messages.iter().map(Shape::of).collect();
    let hashing = start_fingerprint(tools, system, &shapes, binds, reply_may_think);
    let mut writer = Writer::new(hashing, &[], binds, keep_unknown);
    write_messages(&mut Vec::new(), &mut writer, None, messages, false).ok()?;
    writer.finish()
}

#[cfg(test)]
mod tests;
