//! The dictionary of a segment being built: word → dense id. Looking words up is the
//! hot loop of indexing, so the words live in one byte arena (no allocation per new
//! word), each id keeps its hash (growing the table never rehashes a word), and keys
//! are compared inline, 8 bytes at a time.

use hashbrown::HashTable;

/// Words seen so far, each with a dense id in order of first sight.
#[derive(Default)]
pub(crate) struct Terms {
    table: HashTable<u32>,
    arena: Vec<u8>,
    /// Per id: where its bytes start in `arena`, and its length.
    spans: Vec<(u32, u8)>,
    hashes: Vec<u64>,
}

impl Terms {
    /// The id of `word`, adding it if new (`true` when it was). Words are at most 255
    /// bytes (the tokenizer cuts them far shorter).
    pub(crate) fn id(&mut self, word: &[u8]) -> (u32, bool) {
        let hash = hash(word);
        let Self { table, arena, spans, hashes } = self;
        let found = table.find(hash, |&id| {
            let (start, len) = spans[id as usize];
            eq(&arena[start as usize..start as usize + usize::from(len)], word)
        });
        if let Some(&id) = found {
            return (id, false);
        }
        let id = spans.len() as u32;
        spans.push((arena.len() as u32, word.len().min(255) as u8));
        arena.extend_from_slice(&word[..word.len().min(255)]);
        hashes.push(hash);
        table.insert_unique(hash, id, |&id| hashes[id as usize]);
        (id, true)
    }

    /// The word of `id`.
    pub(crate) fn word(&self, id: u32) -> &[u8] {
        let (start, len) = self.spans[id as usize];
        &self.arena[start as usize..start as usize + usize::from(len)]
    }

    /// How many words.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }
}

/// FxHash over 8-byte words: good enough for a local index of the user's own sessions,
/// where SipHash's resistance to crafted collisions buys nothing.
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ word(c)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = (h.rotate_left(5) ^ word(rest)).wrapping_mul(K);
    }
    h
}

/// Slice equality without a call into libc for the short keys words are.
fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        if word(x) != word(y) {
            return false;
        }
    }
    word(ca.remainder()) == word(cb.remainder())
}

/// Up to 8 bytes as one integer (zero-padded).
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_stable_across_growth() {
        let mut t = Terms::default();
        let words: Vec<String> =
            (0..10_000).map(|i| format!("w{i}_{}", "x".repeat(i % 20))).collect();
        for (n, w) in words.iter().enumerate() {
            assert_eq!(t.id(w.as_bytes()), (n as u32, true));
        }
        for (n, w) in words.iter().enumerate().rev() {
            assert_eq!(t.id(w.as_bytes()), (n as u32, false));
            assert_eq!(t.word(n as u32), w.as_bytes());
        }
        assert_eq!(t.len(), 10_000);
        assert_eq!(t.id(b"w1_"), (10_000, true), "a prefix of a word is another word");
        assert_eq!(t.id(b"w1_x"), (1, false));
        assert_eq!(t.word(10_000), b"w1_");
    }
}
