//! Folding: a long-lived session keeps in memory only the part of its tree that its
//! conversation and its state need. When a compaction is recorded, the messages behind
//! its cut (the ancestors of its first kept entry) are dropped from memory: the file
//! holds them, and the summary stands for them in the conversation. Entries that carry
//! state (model and thinking changes, contexts, compactions, labels) stay, so looking
//! up the session's state never reads the file.
//!
//! What needs the whole history reads it back from the file: listing every entry, the
//! active branch from its root, an entry by an id that was dropped (a copy of the whole
//! tape is loaded once and kept until the next append). Moving the leaf to an entry
//! whose conversation reaches behind the cut first loads the whole tape back into
//! memory, so the conversation there is complete.
//!
//! Compactions behind the cut are dropped as well: the last one stands for them. The
//! dropped ids go into a filter of fixed size (`Gone`), so a new entry's id is still
//! unique in its file and a lookup by a dropped id knows to read the file, while
//! memory stays flat however long the session runs.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use super::{EntryKind, Tape};
use crate::entry::{Entry, EntryBody};
use crate::tape::ids::Ids;

/// What folds dropped: how many entries, and a filter of their ids of fixed size, so a
/// session that runs for days holds no list that grows with its history.
#[derive(Debug)]
pub(crate) struct Gone {
    /// One bit per hash of a dropped id. A clear bit means no dropped entry had an id
    /// with that hash; a set bit may belong to another id, so a hit is only "maybe",
    /// and what needs the answer for certain asks the file.
    bits: Box<[u64]>,
    /// Keyed per process: a session file from elsewhere cannot choose ids that fill it.
    hasher: RandomState,
    /// How many entries were dropped.
    count: usize,
}

/// The filter's size: 2^19 bits (64 KiB). After 40,000 dropped entries (10,000
/// prompts of a tool call each) 7 % of fresh ids hit a set bit and are drawn again;
/// after a million, 85 %.
const FILTER_WORDS: usize = 1 << 13;

impl Default for Gone {
    fn default() -> Self {
        Self {
            bits: vec![0; FILTER_WORDS].into_boxed_slice(),
            hasher: RandomState::new(),
            count: 0,
        }
    }
}

impl Gone {
    fn bit(&self, id: &str) -> (usize, u64) {
        const BITS: u64 = FILTER_WORDS as u64 * 64;
        let bit = self.hasher.hash_one(id) % BITS;
        // Below 2^19: fits any usize.
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    /// Whether `id` may have been dropped (false: it certainly was not).
    fn may_contain(&self, id: &str) -> bool {
        let (word, mask) = self.bit(id);
        self.bits[word] & mask != 0
    }

    fn add(&mut self, id: &str) {
        self.count += 1;
        let (word, mask) = self.bit(id);
        self.bits[word] |= mask;
    }
}

/// Returns the allocator's free pages to the system. A fold frees what a long-lived
/// session accumulated, among the large short-lived buffers of its requests; glibc
/// keeps such freed pages (a growing heap that resident memory never gives back)
/// unless asked.
fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Kinds kept in memory by a fold: they carry the session's state and are few.
/// Compactions are not among them: the one a fold cuts at stays (it is after its own
/// cut), the ones before it are dropped with the messages they summarised.
pub(crate) fn is_state(kind: EntryKind) -> bool {
    !matches!(kind, EntryKind::Message | EntryKind::Custom | EntryKind::Compaction)
}

impl Tape {
    /// Drops from memory the messages behind the active branch's last compaction (see
    /// the module's doc). Does nothing for a tape without a file, or when any entry to
    /// drop could not be read back from it.
    pub(crate) fn fold(&mut self) {
        if self.path.is_none() {
            return;
        }
        let branch = self.branch();
        let Some(pos) = branch.iter().rposition(|&i| self.slots[i].kind == EntryKind::Compaction)
        else {
            return;
        };
        let Some(Entry { body: EntryBody::Compaction { first_kept_entry_id, .. }, .. }) =
            self.get(branch[pos])
        else {
            return;
        };
        let Some(anchor) =
            branch[..pos].iter().position(|&i| self.slots[i].id == *first_kept_entry_id)
        else {
            return;
        };
        let mut drop = vec![false; self.slots.len()];
        for &i in &branch[..anchor] {
            let slot = &self.slots[i];
            if is_state(slot.kind) {
                continue;
            }
            if slot.raw.is_empty() {
                return; // only in memory: nothing to read it back from
            }
            drop[i] = true;
        }
        if !drop.contains(&true) {
            return;
        }
        // Parents come before children in an appended tape; a hand-edited file where
        // they do not is left as it is.
        if self.slots.iter().enumerate().any(|(i, s)| s.parent.is_some_and(|p| p >= i)) {
            return;
        }
        let old = std::mem::take(&mut self.slots);
        let mut gone = self.gone.take().map(|g| *g).unwrap_or_default();
        // For each old slot, the new slot of it or of its nearest kept ancestor.
        let mut kept_at: Vec<Option<usize>> = Vec::with_capacity(old.len());
        let mut slots = Vec::with_capacity(old.len() - drop.iter().filter(|d| **d).count());
        for (i, mut slot) in old.into_iter().enumerate() {
            let parent_kept = slot.parent.and_then(|p| kept_at[p]);
            if drop[i] {
                gone.add(&slot.id);
                kept_at.push(parent_kept);
                continue;
            }
            slot.is_cut |= slot.parent.is_some_and(|p| drop[p]);
            slot.parent = parent_kept;
            kept_at.push(Some(slots.len()));
            slots.push(slot);
        }
        let mut index = Ids::with_capacity(slots.len());
        for (n, slot) in slots.iter().enumerate() {
            index.insert(&slot.id, n, |i| &slots[i].id);
        }
        self.leaf = self.leaf.and_then(|l| kept_at[l]);
        self.slots = slots;
        self.index = index;
        self.gone = Some(Box::new(gone));
        self.whole = OnceLock::new();
        tracing::debug!(kept = self.slots.len(), "folded the session behind its compaction");
        give_back_free_memory();
    }

    /// Whether `id` may have belonged to an entry dropped by a fold (false: it
    /// certainly did not).
    pub(crate) fn may_be_gone(&self, id: &str) -> bool {
        self.gone.as_ref().is_some_and(|g| g.may_contain(id))
    }

    /// Whether an entry with `id` was dropped by a fold, for certain (reads the file
    /// when the filter cannot tell).
    pub(crate) fn is_gone(&self, id: &str) -> bool {
        self.may_be_gone(id) && {
            let whole = self.whole();
            !std::ptr::eq(whole, self) && whole.find(id).is_some()
        }
    }

    /// A new entry id, unique in the file: drawn again while it is in memory or may
    /// have been dropped. Should the filter be nearly full (millions of entries
    /// dropped), the file decides.
    pub(crate) fn fresh_id(&self) -> String {
        for _ in 0..64 {
            let id = crate::id::entry_id();
            if self.find(&id).is_none() && !self.may_be_gone(&id) {
                return id;
            }
        }
        loop {
            let id = crate::id::entry_id();
            if self.find(&id).is_none() && !self.is_gone(&id) {
                return id;
            }
        }
    }

    /// Entries dropped by folds.
    pub(crate) fn gone_count(&self) -> usize {
        self.gone.as_ref().map_or(0, |g| g.count)
    }

    /// The whole tape as its file holds it: this one unless folded, else a copy read
    /// from the file (once, until the next change), with the same leaf.
    pub(crate) fn whole(&self) -> &Tape {
        if self.gone.is_none() {
            return self;
        }
        let copy = self.whole.get_or_init(|| {
            let path = self.path.as_deref()?;
            match Tape::open(path) {
                Ok((mut copy, _)) => {
                    copy.leaf = self.leaf.and_then(|l| copy.find(&self.slots[l].id));
                    Some(Box::new(copy))
                }
                Err(e) => {
                    tracing::warn!("cannot read the session's earlier entries back: {e}");
                    None
                }
            }
        });
        copy.as_deref().unwrap_or(self)
    }

    /// Loads every entry back into memory (a fold undone), keeping the leaf.
    pub(crate) fn unfold(&mut self) -> Result<(), super::Error> {
        let Some(path) = self.path.clone() else { return Ok(()) };
        if self.gone.is_none() {
            return Ok(());
        }
        let leaf = self.leaf.map(|l| self.slots[l].id.clone());
        let (mut copy, _) = Tape::open(&path)?;
        copy.source.release();
        self.leaf = leaf.and_then(|id| copy.find(&id));
        self.slots = copy.slots;
        self.index = copy.index;
        self.source = copy.source;
        self.gone = None;
        self.whole = OnceLock::new();
        Ok(())
    }

    /// Whether the conversation that ends at `slot` can be built from what is in
    /// memory: its last compaction's first kept entry is on its path, and nothing
    /// from there on was dropped.
    pub(crate) fn is_whole_at(&self, slot: usize) -> bool {
        if self.gone.is_none() {
            return true;
        }
        let path = self.path_to(Some(slot));
        if path.len() > self.slots.len() {
            return false; // a cycle
        }
        let start = self.last_compaction(&path).and_then(|(pos, _, first_kept)| {
            path[..pos].iter().position(|&i| self.slots[i].id == first_kept)
        });
        match start {
            // The first kept entry's own parent may be gone: the summary stands for it.
            Some(start) => path[start + 1..].iter().all(|&i| !self.slots[i].is_cut),
            None => path.iter().all(|&i| !self.slots[i].is_cut),
        }
    }
}

#[cfg(test)]
mod tests {
    //! A folded tape must answer exactly as the same file loaded afresh does.

    use std::path::Path;

    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use proptest::sample::Index;
    use rab_ai::{Api, AssistantBlock, AssistantMessage, Message, ThinkingLevel, Usage};

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        User,
        Assistant,
        Model,
        Thinking,
        Custom,
        /// A compaction keeping the active branch from this point on.
        Compact(Index),
        /// Move the leaf to any entry of the file.
        Branch(Index),
        /// Close and load the file again.
        Reopen,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => Just(Op::User),
            5 => Just(Op::Assistant),
            1 => Just(Op::Model),
            1 => Just(Op::Thinking),
            1 => Just(Op::Custom),
            3 => any::<Index>().prop_map(Op::Compact),
            2 => any::<Index>().prop_map(Op::Branch),
            1 => Just(Op::Reopen),
        ]
    }

    fn message(message: Message) -> EntryBody {
        EntryBody::Message { message, details: None }
    }

    fn assistant(n: usize) -> EntryBody {
        let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "m");
        a.content.push(AssistantBlock::text(format!("answer {n}")));
        a.usage = Usage { input: 10 + n as u64, output: 3, ..Usage::default() };
        message(Message::Assistant(a))
    }

    /// The same file loaded afresh, with the leaf of `tape`.
    fn fresh(path: &Path, tape: &Tape) -> Tape {
        let (mut copy, _) = Tape::open(path).unwrap();
        copy.branch_from(tape.leaf().map(|e| e.id.as_str())).unwrap();
        copy
    }

    fn ids(entries: Vec<&Entry>) -> Vec<String> {
        entries.into_iter().map(|e| e.id.clone()).collect()
    }

    fn check(path: &Path, tape: &Tape) {
        let copy = fresh(path, tape);
        assert_eq!(tape.messages_with_ids(), copy.messages_with_ids(), "conversation");
        assert_eq!(ids(tape.active_branch()), ids(copy.active_branch()), "active branch");
        assert_eq!(ids(tape.entries()), ids(copy.entries()), "entries");
        assert_eq!(tape.len(), copy.len());
        for kind in [
            EntryKind::Message,
            EntryKind::ModelChange,
            EntryKind::ThinkingLevelChange,
            EntryKind::Compaction,
            EntryKind::Custom,
        ] {
            let last = |t: &Tape| t.last_on_branch(kind).map(|e| e.id.clone());
            assert_eq!(last(tape), last(&copy), "last {kind:?}");
            assert_eq!(ids(tape.entries_of(kind)), ids(copy.entries_of(kind)), "{kind:?}");
        }
        assert_eq!(tape.spending(), copy.spending(), "spending");
        for e in copy.entries() {
            assert_eq!(tape.entry(&e.id).map(|x| &x.id), Some(&e.id));
        }
    }

    fn run(ops: Vec<Op>) {
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Tape::create(dir.path(), Path::new("/work/p"), None);
        let path = tape.path().unwrap().to_owned();
        for (n, op) in ops.into_iter().enumerate() {
            match op {
                Op::User => drop(tape.append(message(Message::user(format!("ask {n}"))))),
                Op::Assistant => drop(tape.append(assistant(n))),
                Op::Model => drop(tape.append(EntryBody::ModelChange {
                    provider: "openai".into(),
                    model_id: format!("m{n}"),
                })),
                Op::Thinking => drop(tape.append(EntryBody::ThinkingLevelChange {
                    thinking_level: ThinkingLevel::ALL[n % ThinkingLevel::ALL.len()],
                })),
                Op::Custom => drop(tape.append(EntryBody::Custom {
                    custom_type: "note".into(),
                    data: serde_json::json!(n),
                })),
                Op::Compact(at) => {
                    let branch = ids(tape.active_branch());
                    if branch.is_empty() {
                        continue;
                    }
                    let first = branch[at.index(branch.len())].clone();
                    tape.append(EntryBody::Compaction {
                        summary: format!("summary {n}"),
                        first_kept_entry_id: first,
                        tokens_before: 100,
                        tokens_after: 10,
                    })
                    .unwrap();
                }
                Op::Branch(at) => {
                    let all = ids(tape.entries());
                    if all.is_empty() {
                        continue;
                    }
                    tape.branch_from(Some(&all[at.index(all.len())])).unwrap();
                }
                Op::Reopen => {
                    if !path.exists() {
                        continue;
                    }
                    let leaf = tape.leaf().map(|e| e.id.clone());
                    drop(tape);
                    tape = Tape::open(&path).unwrap().0;
                    tape.branch_from(leaf.as_deref()).unwrap();
                }
            }
            if path.exists() {
                check(&path, &tape);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn a_folded_tape_answers_as_its_file_loaded_afresh(
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            run(ops);
        }
    }

    /// A long-lived session keeps a bounded number of entries in memory: what is
    /// behind each compaction's cut is dropped, its state entries stay.
    #[test]
    fn memory_holds_what_follows_the_last_cut_not_the_whole_history() {
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Tape::create(dir.path(), Path::new("/work/p"), None);
        tape.append(EntryBody::ModelChange { provider: "openai".into(), model_id: "m".into() })
            .unwrap();
        let mut kept_peak = 0;
        for round in 0..200 {
            let mut first = None;
            for n in 0..10 {
                let id =
                    tape.append(message(Message::user(format!("{round}.{n}")))).unwrap().id.clone();
                first.get_or_insert(id);
                tape.append(assistant(n)).unwrap();
            }
            tape.append(EntryBody::Compaction {
                summary: format!("round {round}"),
                first_kept_entry_id: first.unwrap(),
                tokens_before: 100,
                tokens_after: 10,
            })
            .unwrap();
            kept_peak = kept_peak.max(tape.slots.len());
        }
        // 20 messages kept, the model change and the last compaction: the ones before
        // it were dropped with the messages they summarised.
        assert!(tape.slots.len() <= 20 + 1 + 1, "{}", tape.slots.len());
        assert!(tape.gone_count() >= 199 * 21, "{}", tape.gone_count());
        assert_eq!(tape.len(), 1 + 200 * 21);
        assert_eq!(
            tape.last_on_branch(EntryKind::ModelChange).map(|e| &e.body),
            Some(&EntryBody::ModelChange { provider: "openai".into(), model_id: "m".into() })
        );
        // Nothing was read back from the file for that.
        assert!(tape.whole.get().is_none());
        check(tape.path().unwrap().to_owned().as_path(), &tape);
        let _ = kept_peak;
    }

    #[test]
    fn the_filter_of_dropped_ids_never_forgets_one_and_stays_its_size() {
        let mut gone = Gone::default();
        let size = gone.bits.len();
        let ids: Vec<String> = (0..100_000u32).map(|n| format!("{n:08x}")).collect();
        for id in &ids[..50_000] {
            gone.add(id);
        }
        gone.add("Not-Ours");
        assert_eq!(gone.bits.len(), size, "fixed size");
        assert_eq!(gone.count, 50_001);
        assert!(ids[..50_000].iter().all(|id| gone.may_contain(id)), "no false negative");
        assert!(gone.may_contain("Not-Ours"));
        // False positives at about the rate the constant's doc says (9 % at 50,000).
        let hits = ids[50_000..].iter().filter(|id| gone.may_contain(id)).count();
        assert!((2_000..7_000).contains(&hits), "{hits} of 50,000 ids never added hit");
    }

    /// A fresh id never repeats a dropped one, even with the filter full: the file
    /// decides then.
    #[test]
    fn fresh_ids_stay_unique_with_the_filter_full() {
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Tape::create(dir.path(), Path::new("/work/p"), None);
        let first = tape.append(message(Message::user("a"))).unwrap().id.clone();
        tape.append(assistant(1)).unwrap();
        let kept = tape.append(message(Message::user("b"))).unwrap().id.clone();
        tape.append(EntryBody::Compaction {
            summary: "s".into(),
            first_kept_entry_id: kept,
            tokens_before: 100,
            tokens_after: 10,
        })
        .unwrap();
        assert!(tape.may_be_gone(&first) && tape.is_gone(&first));
        let gone = tape.gone.as_mut().unwrap();
        gone.bits.fill(u64::MAX);
        assert!(tape.may_be_gone("0badc0de") && !tape.is_gone("0badc0de"));
        for _ in 0..20 {
            tape.append(assistant(2)).unwrap();
        }
        let copy = fresh(tape.path().unwrap(), &tape);
        let mut all = ids(copy.entries());
        all.sort();
        all.dedup();
        assert_eq!(all.len(), copy.len(), "ids unique in the file");
        // A lookup by an id no entry has reads the file and finds nothing.
        assert!(tape.entry("0badc0de").is_none());
        assert!(tape.branch_from(Some("0badc0de")).is_err());
        assert!(tape.gone.is_some(), "an unknown id does not bring the history back");
    }
}
