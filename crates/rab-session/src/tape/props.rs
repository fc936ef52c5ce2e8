//! Property test of the tape against a model of its file: any sequence of appends,
//! branches, torn writes (the process dies part-way through writing a line) and restarts
//! leaves a file that loads, whose entries and active branch are the model's, and that
//! can be continued (a new entry never glued onto a torn fragment).

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use proptest::sample::Index;
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, ThinkingLevel, ToolResultMessage,
    Usage,
};
use serde_json::json;

use super::{Tape, Warning};
use crate::entry::{Entry, EntryBody, Header};

#[derive(Clone, Debug)]
enum Op {
    /// Append after the leaf.
    Append(EntryBody),
    /// Make an earlier entry the leaf, so the next append forks (`None`: a new root).
    Branch(Option<Index>),
    /// The process dies with the file's last line cut at a point inside it (from its
    /// start, which loses the whole line, to its end, which loses only the newline),
    /// then the session is continued.
    /// The cut is at `at / 2^64` of the line's length, rounded down.
    TearLast(u64),
    /// The process dies while appending: only part of the new line reaches the file.
    TearAppend(EntryBody, u64),
    /// The process exits cleanly and the session is continued.
    Restart,
}

/// A line of the file as the model expects it.
#[derive(Clone, Debug)]
enum Line {
    Header,
    Entry(Box<Entry>),
    /// What a torn write left of a line.
    Fragment(Vec<u8>),
}

/// What the file should hold, and where the writer's leaf is.
#[derive(Debug, Default)]
struct Model {
    lines: Vec<Line>,
    /// Whether the last line ends with a newline.
    is_terminated: bool,
    leaf: Option<String>,
}

impl Model {
    fn entries(&self) -> Vec<&Entry> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Entry(e) => Some(&**e),
                Line::Header | Line::Fragment(_) => None,
            })
            .collect()
    }

    /// The entry a reload makes the leaf: the last one in the file.
    fn last_id(&self) -> Option<String> {
        self.entries().last().map(|e| e.id.clone())
    }

    /// The entries from the root to `leaf`.
    fn branch(&self, leaf: Option<&str>) -> Vec<Entry> {
        let entries = self.entries();
        let mut out = Vec::new();
        let mut cursor = leaf.map(str::to_owned);
        while let Some(id) = cursor {
            let Some(e) = entries.iter().find(|e| e.id == id) else { break };
            out.push((*e).clone());
            cursor = e.parent_id.clone();
        }
        out.reverse();
        out
    }

    /// (line number, is a torn last line) of each line loading must skip.
    fn warnings(&self) -> Vec<(usize, bool)> {
        let last = self.lines.len();
        (1..=last)
            .filter(|&n| matches!(self.lines[n - 1], Line::Fragment(_)))
            .map(|n| (n, n == last && !self.is_terminated))
            .collect()
    }
}

/// `at / 2^64` of `n`: a point in `0..n`.
fn scale(at: u64, n: usize) -> usize {
    ((u128::from(at) * n as u128) >> 64) as usize
}

fn seen(warnings: &[Warning]) -> Vec<(usize, bool)> {
    warnings.iter().map(|w| (w.line, w.message.contains("torn last line"))).collect()
}

fn owned(entries: Vec<&Entry>) -> Vec<Entry> {
    entries.into_iter().cloned().collect()
}

/// The writer (one process at a time) and the model of its file.
struct Run {
    _dir: tempfile::TempDir,
    path: PathBuf,
    header: Header,
    tape: Option<Tape>,
    model: Model,
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        let tape = Tape::create(dir.path(), Path::new("/work/p"), None);
        let path = tape.path().unwrap().to_owned();
        let header = tape.header().clone();
        Run { _dir: dir, path, header, tape: Some(tape), model: Model::default() }
    }

    fn tape(&mut self) -> &mut Tape {
        self.tape.as_mut().unwrap()
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Append(body) => self.append(body),
            Op::Branch(to) => {
                let id = to.and_then(|ix| {
                    let entries = self.model.entries();
                    (!entries.is_empty()).then(|| entries[ix.index(entries.len())].id.clone())
                });
                self.tape().branch_from(id.as_deref()).unwrap();
                self.model.leaf = id;
            }
            Op::TearLast(at) => self.tear(at),
            Op::TearAppend(body, at) => {
                self.append(body);
                self.tear(at);
            }
            Op::Restart => self.restart(),
        }
        let branch = owned(self.tape().active_branch());
        assert_eq!(branch, self.model.branch(self.model.leaf.as_deref()), "in-process branch");
        self.check_file();
    }

    fn append(&mut self, body: EntryBody) {
        let entry = self.tape().append(body).unwrap().clone();
        if self.model.lines.is_empty() {
            self.model.lines.push(Line::Header);
        }
        self.model.leaf = Some(entry.id.clone());
        self.model.lines.push(Line::Entry(Box::new(entry)));
        self.model.is_terminated = true;
    }

    /// Cuts the file's last line as a crash mid-write would, then restarts.
    fn tear(&mut self, at: u64) {
        if self.model.lines.is_empty() {
            return; // nothing written yet: nothing to tear
        }
        self.tape = None; // the process dies
        let bytes = std::fs::read(&self.path).unwrap();
        let end = bytes.len() - usize::from(self.model.is_terminated);
        let start = bytes[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let cut = match self.model.lines.last() {
            // The header is written with the first entry: a crash can take at most its
            // newline when it is the last line (see the report on a torn header).
            Some(Line::Header) => end,
            _ => start + scale(at, end - start + 1),
        };
        let file = OpenOptions::new().write(true).open(&self.path).unwrap();
        file.set_len(cut as u64).unwrap();
        drop(file);
        if cut == start {
            self.model.lines.pop();
            self.model.is_terminated = true;
        } else {
            if cut < end {
                let n = self.model.lines.len();
                self.model.lines[n - 1] = Line::Fragment(bytes[start..cut].to_vec());
            }
            self.model.is_terminated = false;
        }
        self.restart();
    }

    /// Continues the session in a new process: the leaf is the last entry in the file.
    fn restart(&mut self) {
        if self.model.lines.is_empty() {
            return; // the file was never created
        }
        self.tape = None;
        let (tape, warnings) = Tape::open(&self.path).unwrap();
        assert_eq!(seen(&warnings), self.model.warnings(), "warnings on restart");
        assert_eq!(tape.header(), &self.header);
        self.tape = Some(tape);
        self.model.leaf = self.model.last_id();
    }

    /// The file line by line: entries where the model has them, fragments byte for
    /// byte on lines of their own (nothing was glued onto them).
    fn check_file(&self) {
        if self.model.lines.is_empty() {
            assert!(!self.path.exists());
            return;
        }
        let bytes = std::fs::read(&self.path).unwrap();
        assert_eq!(bytes.last() == Some(&b'\n'), self.model.is_terminated, "trailing newline");
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), self.model.lines.len(), "line count");
        for (n, (line, want)) in lines.iter().zip(&self.model.lines).enumerate() {
            match want {
                Line::Header => {
                    let h: Header = serde_json::from_slice(line).unwrap();
                    assert_eq!(h, self.header);
                }
                Line::Entry(e) => {
                    let got: Entry = serde_json::from_slice(line)
                        .unwrap_or_else(|err| panic!("line {}: {err}", n + 1));
                    assert_eq!(&got, &**e, "line {}", n + 1);
                }
                Line::Fragment(f) => assert_eq!(line, f, "line {}", n + 1),
            }
        }
    }

    /// Loads the file with the real loader and checks it against the model, then
    /// appends after the reload and checks a second reload agrees.
    fn finish(mut self, next: EntryBody) {
        self.tape = None;
        if self.model.lines.is_empty() {
            assert!(!self.path.exists());
            return;
        }
        let (mut loaded, warnings) = Tape::open(&self.path).unwrap();
        assert_eq!(seen(&warnings), self.model.warnings(), "warnings");
        let last = self.model.last_id();
        let branch = self.model.branch(last.as_deref());
        assert_eq!(owned(loaded.entries()), owned(self.model.entries()), "entries");
        assert_eq!(owned(loaded.active_branch()), branch, "active branch");
        assert_eq!(loaded.leaf().map(|e| e.id.clone()), last);
        assert_eq!(loaded.len(), self.model.entries().len());
        // With the loaded text released, lines are read back from the file.
        let (_, messages) = loaded.take_conversation();
        assert_eq!(owned(loaded.active_branch()), branch, "active branch from the file");
        assert!(messages.len() <= branch.len() + 1, "{messages:?}");

        let appended = loaded.append(next).unwrap().clone();
        assert_eq!(appended.parent_id, last);
        self.model.lines.push(Line::Entry(Box::new(appended.clone())));
        self.model.is_terminated = true;
        drop(loaded);
        self.check_file();
        let (again, warnings) = Tape::open(&self.path).unwrap();
        assert_eq!(seen(&warnings), self.model.warnings(), "warnings after the append");
        let mut branch = branch;
        branch.push(appended);
        assert_eq!(owned(again.active_branch()), branch, "active branch after the append");
        assert_eq!(owned(again.entries()), owned(self.model.entries()));
    }
}

/// Text with what JSON must escape (quotes, backslashes, control characters, newlines)
/// and multi-byte characters, so a cut can fall inside one.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z ]{0,12}", "(?s).{0,16}", "[\"\\\\\n\t\u{0}\u{1f}é日本語😀\u{301}a]{0,12}",]
}

fn body() -> impl Strategy<Value = EntryBody> {
    let message = |message| EntryBody::Message { message, details: None };
    prop_oneof![
        4 => text().prop_map(move |t| message(Message::user(t))),
        3 => text().prop_map(move |t| {
            let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "m");
            a.content.push(AssistantBlock::text(t));
            a.usage = Usage { input: 12, output: 3, ..Usage::default() };
            message(Message::Assistant(a))
        }),
        2 => (text(), any::<i32>()).prop_map(|(t, code)| EntryBody::Message {
            message: Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "bash".into(),
                content: vec![Content::text(t)],
                is_error: code != 0,
            }),
            details: Some(json!({ "exitCode": code })),
        }),
        1 => text().prop_map(|m| EntryBody::ModelChange { provider: "openai".into(), model_id: m }),
        1 => proptest::sample::select(ThinkingLevel::ALL.to_vec())
            .prop_map(|thinking_level| EntryBody::ThinkingLevelChange { thinking_level }),
        1 => (text(), any::<u32>()).prop_map(|(summary, n)| EntryBody::Compaction {
            summary,
            first_kept_entry_id: format!("{n:08x}"),
            tokens_before: u64::from(n),
            tokens_after: 7,
        }),
        1 => (text(), any::<bool>()).prop_map(|(l, set)| EntryBody::Label {
            target_id: "0badc0de".into(),
            label: set.then_some(l),
        }),
        1 => (text(), any::<i64>()).prop_map(|(s, n)| EntryBody::Custom {
            custom_type: "note".into(),
            data: json!({ "s": s, "n": n, "list": [n, null, true] }),
        }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => body().prop_map(Op::Append),
        3 => any::<Option<Index>>().prop_map(Op::Branch),
        2 => any::<u64>().prop_map(Op::TearLast),
        3 => (body(), any::<u64>()).prop_map(|(b, at)| Op::TearAppend(b, at)),
        1 => Just(Op::Restart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // Failures are kept as named regression tests, not as files in the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_appends_branches_and_torn_writes_load_as_the_model_says(
        ops in proptest::collection::vec(op(), 0..40),
        next in body(),
    ) {
        let mut run = Run::new();
        for op in ops {
            run.apply(op);
        }
        run.finish(next);
    }
}

/// A crash that leaves the first entry's line without its newline, with nothing after
/// it: the entry is whole, so it loads, and the next append starts a line of its own.
#[test]
fn an_entry_missing_only_its_newline_is_kept_and_the_next_one_is_not_glued_to_it() {
    let mut run = Run::new();
    run.apply(Op::Append(EntryBody::Message { message: Message::user("one"), details: None }));
    run.apply(Op::TearLast(u64::MAX));
    assert!(!run.model.is_terminated);
    assert_eq!(run.model.entries().len(), 1);
    run.finish(EntryBody::Message { message: Message::user("two"), details: None });
}
