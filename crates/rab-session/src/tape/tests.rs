use super::*;
use pretty_assertions::assert_eq;
use rab_ai::{Api, AssistantBlock, AssistantMessage, StopReason, ToolCall};
use serde_json::json;
use std::io::Write as _;

fn user(text: &str) -> EntryBody {
    EntryBody::Message { message: Message::user(text), details: None }
}

fn assistant_with_calls(ids: &[&str]) -> EntryBody {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "m");
    a.stop_reason = StopReason::ToolUse;
    for id in ids {
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: (*id).into(),
            name: "bash".into(),
            arguments: json!({"command": "sleep 100"}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
    }
    EntryBody::Message { message: Message::Assistant(a), details: None }
}

fn result(id: &str) -> EntryBody {
    EntryBody::Message {
        message: Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            content: vec![Content::text("done")],
            is_error: false,
        }),
        details: Some(json!({"exitCode": 0})),
    }
}

#[test]
fn entries_round_trip_with_parent_links() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), Some("/old.jsonl".into()));
    assert!(tape.path().is_some_and(|p| !p.exists()), "created lazily");
    let a = tape.append(user("one")).unwrap().id.clone();
    let b = tape.append(assistant_with_calls(&["c1"])).unwrap().clone();
    tape.append(result("c1")).unwrap();
    assert_eq!(b.parent_id.as_deref(), Some(a.as_str()));
    let (loaded, warnings) = Tape::open(tape.path().unwrap()).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(loaded.header(), tape.header());
    assert_eq!(loaded.entries(), tape.entries());
    assert_eq!(loaded.messages().len(), 3);
    assert_eq!(loaded.header().parent_session.as_deref(), Some("/old.jsonl"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tape.path().unwrap()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn a_torn_last_line_is_skipped_and_the_next_append_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    tape.append(user("kept")).unwrap();
    let path = tape.path().unwrap().to_owned();
    drop(tape);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(
        br#"{"type":"message","id":"x","parentId":null,"timestamp":"t","message":{"role":"us"#,
    )
    .unwrap();
    let (mut tape, warnings) = Tape::open(&path).unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("torn last line"), "{warnings:?}");
    assert_eq!(tape.messages(), vec![Message::user("kept")]);
    tape.append(user("after the crash")).unwrap();
    let (tape, warnings) = Tape::open(&path).unwrap();
    assert_eq!(tape.messages(), vec![Message::user("kept"), Message::user("after the crash")]);
    assert_eq!(warnings.len(), 1, "the torn fragment is now a skipped line of its own");
}

#[test]
fn branching_keeps_both_branches_and_follows_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    let root = tape.append(user("root")).unwrap().id.clone();
    tape.append(user("first branch")).unwrap();
    tape.branch_from(Some(&root)).unwrap();
    tape.append(user("second branch")).unwrap();
    let texts = |t: &Tape| t.messages().into_iter().map(|m| format!("{m:?}")).collect::<Vec<_>>();
    assert_eq!(tape.messages(), vec![Message::user("root"), Message::user("second branch")]);
    let (loaded, _) = Tape::open(tape.path().unwrap()).unwrap();
    assert_eq!(texts(&loaded), texts(&tape));
    assert_eq!(loaded.entries().len(), 3);
    assert!(matches!(tape.branch_from(Some("nope")), Err(Error::UnknownEntry(_))));
}

#[test]
fn tool_calls_without_results_get_an_interrupted_result_and_repair_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    tape.append(user("go")).unwrap();
    tape.append(assistant_with_calls(&["c1", "c2"])).unwrap();
    tape.append(result("c1")).unwrap();
    let path = tape.path().unwrap().to_owned();
    drop(tape);
    let (mut tape, _) = Tape::open(&path).unwrap();
    let msgs = tape.messages();
    assert_eq!(msgs.len(), 4);
    match &msgs[3] {
        Message::ToolResult(r) => {
            assert_eq!((r.tool_call_id.as_str(), r.is_error), ("c2", true));
            assert_eq!(r.text(), INTERRUPTED_RESULT);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(tape.repair().unwrap(), 1);
    assert_eq!(tape.repair().unwrap(), 0);
    let (reloaded, _) = Tape::open(&path).unwrap();
    assert_eq!(reloaded.entries().len(), 4, "the result is now in the file");
    assert_eq!(reloaded.messages(), msgs);
}

#[test]
fn bad_files_are_named_and_odd_lines_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "").unwrap();
    assert!(Tape::open(&path).unwrap_err().to_string().contains("the file is empty"));
    std::fs::write(&path, "{\"type\":\"message\"}\n").unwrap();
    assert!(Tape::open(&path).unwrap_err().to_string().contains("not a session header"));
    let header = r#"{"type":"session","version":1,"id":"s","cwd":"/p","timestamp":"t"}"#;
    std::fs::write(&path, format!("{header}\nnot json\n{{\"type\":\"mystery\",\"id\":\"a\"}}\n"))
        .unwrap();
    let (tape, warnings) = Tape::open(&path).unwrap();
    assert!(tape.entries().is_empty());
    assert_eq!(warnings.iter().map(|w| w.line).collect::<Vec<_>>(), [2, 3]);
}

#[test]
fn an_ephemeral_tape_writes_nothing() {
    let mut tape = Tape::ephemeral(Path::new("/p"));
    tape.append(user("x")).unwrap();
    assert!(tape.path().is_none());
    assert_eq!(tape.messages().len(), 1);
}

#[test]
fn entries_are_read_back_from_the_file_after_the_text_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    tape.append(user("one")).unwrap();
    tape.append(assistant_with_calls(&["c1"])).unwrap();
    tape.append(result("c1")).unwrap();
    tape.append(EntryBody::Label { target_id: "x".into(), label: Some("mark".into()) }).unwrap();
    let written = tape.entries().into_iter().cloned().collect::<Vec<_>>();
    let path = tape.path().unwrap().to_owned();
    let expected = tape.messages();
    // One writer at a time: the first lets go before the reload appends.
    drop(tape);

    let (mut loaded, _) = Tape::open(&path).unwrap();
    let (ids, messages) = loaded.take_conversation();
    assert_eq!(messages, expected);
    assert_eq!(ids.len(), messages.len());
    assert!(loaded.source.text().is_empty(), "the loaded text is freed");
    // Looking up labels reads the labels only.
    let labels = loaded.entries_of(EntryKind::Label);
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].id, written[3].id);
    let parsed = loaded.slots.iter().filter(|s| s.entry.get().is_some()).count();
    assert_eq!(parsed, 1, "only the label was read back");
    // Nothing was parsed but the messages: every entry now comes from the file.
    assert_eq!(loaded.entries().into_iter().cloned().collect::<Vec<_>>(), written);
    loaded.append(user("two")).unwrap();
    let (reloaded, warnings) = Tape::open(&path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(reloaded.messages().len(), 4);
}

#[test]
fn a_file_with_invalid_utf8_keeps_its_text_and_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Tape::create(dir.path(), Path::new("/p"), None);
    tape.append(user("before")).unwrap();
    let path = tape.path().unwrap().to_owned();
    // A stray invalid byte in a line of its own, then a valid entry after it: the
    // repaired text's offsets are not the file's, so lines must come from the text.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"\xff\xfe garbage\n");
    std::fs::write(&path, &bytes).unwrap();
    drop(tape);
    let mut tape = Tape::open(&path).unwrap().0;
    tape.append(user("after")).unwrap();
    let (mut loaded, warnings) = Tape::open(&path).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let (_, messages) = loaded.take_conversation();
    assert_eq!(messages, vec![Message::user("before"), Message::user("after")]);
    assert!(!loaded.source.text().is_empty(), "kept: its offsets are not the file's");
    assert_eq!(loaded.entries().len(), 2);
}
