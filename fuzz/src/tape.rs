//! A session file (tape) of arbitrary bytes, loaded and resumed as `rab --continue`
//! does (open, claim, repair interrupted tool calls, take the conversation), read back
//! from the file once its text is released, listed, and exported: each step succeeds or
//! fails with an error, never a panic.

use rab_session::export::{ExportFormat, export};
use rab_session::{EntryKind, Tape, list_sessions};

const KINDS: [EntryKind; 7] = [
    EntryKind::Message,
    EntryKind::ModelChange,
    EntryKind::ThinkingLevelChange,
    EntryKind::Compaction,
    EntryKind::Context,
    EntryKind::Label,
    EntryKind::Custom,
];

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, data).expect("the session file is written");
    let _ = list_sessions(dir.path());
    let Ok((mut tape, _warnings)) = Tape::open(&path) else { return };
    let _ = tape.entries();
    let _ = tape.leaf();
    for kind in KINDS {
        let _ = tape.last_on_branch(kind);
    }
    let _ = tape.messages_with_ids();
    for format in [ExportFormat::Markdown, ExportFormat::Html, ExportFormat::Json] {
        let _ = export(&tape, format);
    }
    if tape.claim().is_ok() {
        let _ = tape.repair();
    }
    let _ = tape.take_conversation();
    // Entries not parsed yet are now read back from the file.
    let _ = tape.active_branch();
    let _ = tape.entries();
}
