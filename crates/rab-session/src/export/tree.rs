//! The tape's entries as a tree for export: children of each entry, which entries are
//! on the active branch, the newest leaf below each entry (where a click on a branch
//! leads), the chains between branch points, and the labels in force.

use std::collections::HashMap;

use rab_ai::Message;

use crate::{Entry, EntryBody, Tape};

/// Entries in file order with their tree links, by index into `entries`.
pub(super) struct Tree<'a> {
    /// Every readable entry, in file order.
    pub entries: Vec<&'a Entry>,
    /// Children of each entry, in file order.
    pub children: Vec<Vec<usize>>,
    /// Entries without a (readable) parent.
    pub roots: Vec<usize>,
    /// On the path from the root to the tape's leaf.
    pub is_active: Vec<bool>,
    /// The most recently written leaf below each entry (itself when it is a leaf).
    pub newest_leaf: Vec<usize>,
    /// Label of each entry id, the last label entry for it winning.
    pub labels: HashMap<&'a str, &'a str>,
}

/// A chain of entries between branch points: starts at a root or at one of several
/// children, and runs while each entry has exactly one child.
pub(super) struct Segment {
    /// Entry indices, in order.
    pub members: Vec<usize>,
}

impl<'a> Tree<'a> {
    pub fn new(tape: &'a Tape) -> Self {
        let entries = tape.entries();
        let index: HashMap<&str, usize> =
            entries.iter().enumerate().map(|(i, e)| (e.id.as_str(), i)).collect();
        let mut children = vec![Vec::new(); entries.len()];
        let mut roots = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            match e.parent_id.as_deref().and_then(|p| index.get(p)) {
                // A self-parented entry in a hand-edited file would never be reached.
                Some(&p) if p != i => children[p].push(i),
                Some(_) | None => roots.push(i),
            }
        }
        let mut is_active = vec![false; entries.len()];
        for e in tape.active_branch() {
            if let Some(&i) = index.get(e.id.as_str()) {
                is_active[i] = true;
            }
        }
        let newest_leaf = newest_leaves(&children, &roots);
        let mut labels = HashMap::new();
        for e in &entries {
            if let EntryBody::Label { target_id, label } = &e.body {
                match label {
                    Some(l) => labels.insert(target_id.as_str(), l.as_str()),
                    None => labels.remove(target_id.as_str()),
                };
            }
        }
        Self { entries, children, roots, is_active, newest_leaf, labels }
    }

    /// Number of leaves, i.e. of branches.
    pub fn branch_count(&self) -> usize {
        self.children.iter().filter(|c| c.is_empty()).count()
    }

    /// The segment starting at `start`.
    pub fn segment(&self, start: usize) -> Segment {
        let mut members = vec![start];
        let mut cursor = start;
        while let [only] = self.children[cursor].as_slice() {
            cursor = *only;
            members.push(cursor);
            if members.len() > self.entries.len() {
                break;
            }
        }
        Segment { members }
    }

    /// A short title for a segment: its first user text, else its first assistant
    /// text, else what kind of entries it holds.
    pub fn title(&self, segment: &Segment) -> String {
        let messages = || segment.members.iter().filter_map(|&i| self.entries[i].message());
        let user = messages().find_map(|m| match m {
            Message::User(u) => Some(super::markdown::user_text(&u.content)),
            Message::Assistant(_) | Message::ToolResult(_) | Message::System(_) => None,
        });
        let assistant = || {
            messages().find_map(|m| match m {
                Message::Assistant(a) if !a.text().trim().is_empty() => Some(a.text()),
                Message::Assistant(_)
                | Message::User(_)
                | Message::ToolResult(_)
                | Message::System(_) => None,
            })
        };
        let text = user.filter(|t| !t.trim().is_empty()).or_else(assistant);
        match text {
            Some(t) => super::snippet(&t, 60),
            None => format!("{} entries", segment.members.len()),
        }
    }
}

/// For each entry, the highest-index (newest) leaf below it. Computed over a preorder
/// walk so that descendants come before ancestors when reversed, whatever the file
/// order; entries unreachable from a root (a parent cycle) keep themselves.
fn newest_leaves(children: &[Vec<usize>], roots: &[usize]) -> Vec<usize> {
    let mut preorder = Vec::with_capacity(children.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        preorder.push(i);
        stack.extend(children[i].iter().rev());
    }
    let mut newest: Vec<usize> = (0..children.len()).collect();
    for &i in preorder.iter().rev() {
        if let Some(max) = children[i].iter().map(|&c| newest[c]).max() {
            newest[i] = max;
        }
    }
    newest
}
