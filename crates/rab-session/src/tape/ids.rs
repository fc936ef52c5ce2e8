//! The tape's id index: entry id to slot, without a second copy of each id. A session
//! of thousands of entries keeps one small table of slot numbers; the ids themselves
//! live in the slots. Hashed with a per-process random key, since a session file can
//! come from elsewhere and its ids be chosen to collide.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use std::collections::hash_map::RandomState;

/// Finds slots by id; `id_of(slot)` gives a slot's id.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    table: HashTable<usize>,
    hasher: RandomState,
}

impl Ids {
    /// Room for `n` ids.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self { table: HashTable::with_capacity(n), hasher: RandomState::new() }
    }

    /// The slot holding `id`.
    pub(crate) fn get<'a>(&self, id: &str, id_of: impl Fn(usize) -> &'a str) -> Option<usize> {
        self.table.find(self.hasher.hash_one(id), |&i| id_of(i) == id).copied()
    }

    /// Maps `id` to `slot`; a later slot with the same id (a hand-edited file) wins,
    /// as the last line read does.
    pub(crate) fn insert<'a>(&mut self, id: &str, slot: usize, id_of: impl Fn(usize) -> &'a str) {
        let hash = self.hasher.hash_one(id);
        match self.table.find_mut(hash, |&i| id_of(i) == id) {
            Some(found) => *found = slot,
            None => {
                let hasher = &self.hasher;
                self.table.insert_unique(hash, slot, |&i| hasher.hash_one(id_of(i)));
            }
        }
    }
}
