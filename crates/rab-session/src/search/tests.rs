use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, ToolCall, ToolResultMessage,
};
use serde_json::json;

use super::*;
use crate::{EntryBody, Tape, session_dir};

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    index: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let index = dir.path().join("index");
    Home { _dir: dir, root, index }
}

impl Home {
    fn tape(&self, cwd: &str) -> Tape {
        Tape::create(&session_dir(&self.root, Path::new(cwd)), Path::new(cwd), None)
    }

    /// Indexes everything first: how much a time-bounded search indexes depends on
    /// the machine's load, which these tests must not.
    fn search(&self, query: &str) -> Vec<SearchHit> {
        search_within(&self.root, &self.index, query, 10, None).unwrap()
    }

    fn snippets(&self, query: &str) -> Vec<String> {
        self.search(query).into_iter().map(|h| h.snippet).collect()
    }

    fn manifest(&self) -> Manifest {
        index::load(&self.index, &self.root).unwrap()
    }
}

fn user(tape: &mut Tape, text: &str) -> String {
    let body = EntryBody::Message { message: Message::user(text), details: None };
    tape.append(body).unwrap().id.clone()
}

fn assistant(tape: &mut Tape, blocks: Vec<AssistantBlock>) -> String {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude");
    a.content = blocks;
    let body = EntryBody::Message { message: Message::Assistant(a), details: None };
    tape.append(body).unwrap().id.clone()
}

fn tool_result(tape: &mut Tape, content: Vec<Content>) -> String {
    let r = ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        content,
        is_error: false,
    };
    let body = EntryBody::Message { message: Message::ToolResult(r), details: None };
    tape.append(body).unwrap().id.clone()
}

fn set_mtime(path: &Path, secs: u64) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
}

#[test]
fn finds_a_phrase_from_another_cwds_session() {
    let h = home();
    let mut here = h.tape("/work/here");
    user(&mut here, "fix the parser in this project");
    let mut there = h.tape("/work/elsewhere");
    user(&mut there, "unrelated");
    let id = user(&mut there, "the Flaky\nnetwork TEST keeps failing on CI");
    let hits = h.search("\"flaky network test\"");
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(
        (hit.cwd.as_str(), hit.session_id.as_str(), hit.entry_id.as_str(), hit.role.as_str()),
        ("/work/elsewhere", there.id(), id.as_str(), "user")
    );
    assert_eq!(hit.path, there.path().unwrap());
    assert_eq!(hit.snippet, "the Flaky network TEST keeps failing on CI");
    assert!(hit.timestamp.starts_with("20"), "{}", hit.timestamp);
    assert_eq!(h.search("\"network flaky\""), []);
}

#[test]
fn searches_tool_results_and_tool_arguments_but_not_images_or_thinking() {
    let h = home();
    let mut t = h.tape("/p");
    let thinking = AssistantBlock::Thinking {
        thinking: "secretplan".into(),
        signature: None,
        item_id: None,
        redacted: false,
    };
    let call = AssistantBlock::ToolCall(ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        arguments: json!({"command": "cargo nextest run --workspace"}),
        invalid_arguments: None,
        signature: None,
        item_id: None,
    });
    let call_id = assistant(&mut t, vec![thinking, call]);
    let image = Content::Image { mime_type: "image/png".into(), data: "iVBORimagedata".into() };
    let result_id = tool_result(&mut t, vec![image, Content::text("error[E0599]: no method")]);
    assert_eq!(h.search("nextest").iter().map(|h| &h.entry_id).collect::<Vec<_>>(), [&call_id]);
    let hits = h.search("e0599");
    assert_eq!(
        (hits[0].entry_id.as_str(), hits[0].role.as_str()),
        (result_id.as_str(), "toolResult")
    );
    assert_eq!(h.search("secretplan"), []);
    assert_eq!(h.search("iVBORimagedata"), []);
}

#[test]
fn all_words_must_match_in_any_order_and_case() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "Über die Brücke: the café's menu");
    user(&mut t, "only the menu");
    assert_eq!(h.snippets("MENU café"), ["Über die Brücke: the café's menu"]);
    assert_eq!(h.snippets("brücke über"), ["Über die Brücke: the café's menu"]);
    assert_eq!(h.search("menu missingword"), []);
    assert_eq!(h.search("   "), []);
    assert_eq!(search(&h.root, &h.index, "menu", 0).unwrap(), []);
}

#[test]
fn an_exact_phrase_ranks_above_scattered_words() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "test flaky");
    user(&mut t, "a much longer message that mentions the flaky test somewhere in its middle part");
    let s = h.snippets("flaky test");
    assert_eq!(
        s[0],
        "a much longer message that mentions the flaky test somewhere in its middle part"
    );
    assert_eq!(s[1], "test flaky");
    assert!(h.search("flaky test")[0].score > PHRASE_BONUS);
}

#[test]
fn rarer_words_and_more_occurrences_rank_higher() {
    let h = home();
    let mut t = h.tape("/p");
    for n in 0..20 {
        user(&mut t, &format!("common filler {n}"));
    }
    user(&mut t, "common common common rare");
    user(&mut t, "common rare rare rare");
    user(&mut t, "alpha alpha beta gamma");
    user(&mut t, "alpha beta gamma delta");
    assert_eq!(h.snippets("rare common"), ["common rare rare rare", "common common common rare"]);
    assert_eq!(h.snippets("alpha"), ["alpha alpha beta gamma", "alpha beta gamma delta"]);
}

#[test]
fn recent_sessions_break_ties() {
    let h = home();
    let mut old = h.tape("/a");
    user(&mut old, "identical words here");
    let mut new = h.tape("/b");
    user(&mut new, "identical words here");
    set_mtime(old.path().unwrap(), 2_000_000_000);
    set_mtime(new.path().unwrap(), 1_000_000_000);
    let cwds: Vec<String> = h.search("identical").into_iter().map(|h| h.cwd).collect();
    assert_eq!(cwds, ["/a", "/b"]);
    set_mtime(new.path().unwrap(), 2_100_000_000);
    let cwds: Vec<String> = h.search("identical").into_iter().map(|h| h.cwd).collect();
    assert_eq!(cwds, ["/b", "/a"]);
}

#[test]
fn a_grown_session_is_indexed_incrementally() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "first message about kittens");
    assert_eq!(h.search("kittens").len(), 1);
    let before = h.manifest();
    user(&mut t, "second message about puppies and kittens");
    assert_eq!(h.snippets("puppies"), ["second message about puppies and kittens"]);
    assert_eq!(h.search("kittens").len(), 2);
    let after = h.manifest();
    assert_eq!(after.files[0].id, before.files[0].id, "same file id: not reindexed");
    assert_eq!(after.segments.len(), 2);
    let start = before.files[0].indexed_len;
    assert_eq!(after.segments[1].ranges, [(after.files[0].id, start, after.files[0].size)]);
}

#[test]
fn a_deleted_session_disappears() {
    let h = home();
    let mut a = h.tape("/a");
    user(&mut a, "keep this zeppelin");
    let mut b = h.tape("/b");
    user(&mut b, "drop this zeppelin");
    assert_eq!(h.search("zeppelin").len(), 2);
    std::fs::remove_file(b.path().unwrap()).unwrap();
    assert_eq!(h.snippets("zeppelin"), ["keep this zeppelin"]);
    assert_eq!(h.manifest().files.len(), 1);
}

#[test]
fn a_truncated_or_rewritten_session_is_reindexed() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "original walrus");
    user(&mut t, "second walrus entry");
    let path = t.path().unwrap().to_owned();
    assert_eq!(h.search("walrus").len(), 2);
    let text = std::fs::read_to_string(&path).unwrap();
    let first_two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, &first_two).unwrap();
    assert_eq!(h.snippets("walrus"), ["original walrus"]);

    // Rewritten and longer: the tail the index ended on is gone, so all of it is reread.
    let changed = first_two.replace("original walrus", "replaced narwhal");
    std::fs::write(&path, format!("{changed}{}\n", text.lines().nth(2).unwrap())).unwrap();
    assert_eq!(h.snippets("narwhal"), ["replaced narwhal"]);
    assert_eq!(h.snippets("walrus"), ["second walrus entry"]);
}

#[test]
fn a_file_changed_in_place_gives_no_stale_hits() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "the answer is pelican");
    let path = t.path().unwrap().to_owned();
    assert_eq!(h.search("pelican").len(), 1);
    let meta = std::fs::metadata(&path).unwrap();
    // Same size, same mtime: the sync cannot see the change, the hit check must.
    let text = std::fs::read_to_string(&path).unwrap().replace("pelican", "penguin");
    std::fs::write(&path, text).unwrap();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(meta.modified().unwrap())
        .unwrap();
    assert_eq!(h.search("pelican"), []);
    // Any mtime change: reindexed.
    set_mtime(&path, 1_900_000_000);
    assert_eq!(h.snippets("penguin"), ["the answer is penguin"]);
}

#[test]
fn a_corrupt_index_is_rebuilt() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "resilient octopus");
    assert_eq!(h.search("octopus").len(), 1);
    std::fs::write(h.index.join("search.json"), "{not json").unwrap();
    assert_eq!(h.snippets("octopus"), ["resilient octopus"]);
    let seg = h.index.join(&h.manifest().segments[0].name);
    let bytes = std::fs::read(&seg).unwrap();
    std::fs::write(&seg, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(h.snippets("octopus"), ["resilient octopus"]);
    std::fs::remove_file(h.index.join(&h.manifest().segments[0].name)).unwrap();
    assert_eq!(h.snippets("octopus"), ["resilient octopus"]);
    let names: Vec<String> = std::fs::read_dir(&h.index)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".seg") || n.ends_with(".tmp"))
        .collect();
    assert_eq!(names, [h.manifest().segments[0].name.clone()], "no leftovers");
}

#[test]
fn a_torn_last_line_is_indexed_once_complete() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "whole line");
    let path = t.path().unwrap().to_owned();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"type":"message","id":"torn1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"half written albatross"#).unwrap();
    assert_eq!(h.search("albatross"), []);
    f.write_all(b"\"}]}}\n").unwrap();
    let hits = h.search("albatross");
    assert_eq!((hits.len(), hits[0].entry_id.as_str()), (1, "torn1"));
}

#[test]
fn small_segments_are_merged() {
    let h = home();
    let mut t = h.tape("/p");
    for n in 0..12 {
        user(&mut t, &format!("step {n} of the heron migration"));
        assert_eq!(h.search("heron").len(), (n + 1).min(10));
    }
    let m = h.manifest();
    assert!(m.segments.len() < 4, "{} segments", m.segments.len());
    let all = search(&h.root, &h.index, "heron migration", 100).unwrap();
    assert_eq!(all.len(), 12);
}

#[test]
fn many_sessions_are_indexed_on_every_core() {
    let h = home();
    let filler = "lorem ipsum dolor sit amet consectetur ".repeat(400);
    for s in 0..40 {
        let mut t = h.tape(&format!("/proj/{}", s % 5));
        for e in 0..8 {
            tool_result(&mut t, vec![Content::text(format!("{filler} marker{s}x{e}"))]);
        }
    }
    user(&mut h.tape("/proj/extra"), "the needle in the haystack");
    assert_eq!(h.snippets("needle haystack"), ["the needle in the haystack"]);
    assert_eq!(h.search("marker17x3").len(), 1);
    assert_eq!(h.search("lorem").len(), 10);
    assert_eq!(h.manifest().files.len(), 41);
}

#[test]
fn concurrent_searches_share_the_index() {
    let h = home();
    let mut t = h.tape("/p");
    user(&mut t, "parallel badger");
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4).map(|_| s.spawn(|| h.search("badger").len())).collect();
        for r in runs {
            assert_eq!(r.join().unwrap(), 1);
        }
    });
}

#[test]
fn queries_parse_into_words_and_phrases() {
    let q = Query::parse(r#"Fix "off by one" off-by-one "unclosed phrase"#);
    let words: Vec<String> = q.terms.iter().map(|t| String::from_utf8_lossy(t).into()).collect();
    assert_eq!(words, ["fix", "off", "by", "one", "unclosed", "phrase"]);
    assert_eq!(q.phrases, [vec![1, 2, 3], vec![1, 2, 3], vec![4, 5]]);
    assert_eq!(q.sequence, [0, 1, 2, 3, 1, 2, 3, 4, 5]);
    assert_eq!(Query::parse("\"\" !!").terms.len(), 0);
}

/// A few sessions with words in user text, replies, tool arguments and results.
fn corpus(h: &Home) -> Vec<Tape> {
    let mut tapes = Vec::new();
    for (n, cwd) in ["/work/a", "/work/b", "/work/c"].into_iter().enumerate() {
        let mut t = h.tape(cwd);
        user(&mut t, &format!("session {n}: the Parser test fails on Tuesdays"));
        let call = AssistantBlock::ToolCall(ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: json!({"command": format!("cargo test parser_{n}")}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        });
        assistant(&mut t, vec![AssistantBlock::text("Running the tests."), call]);
        tool_result(
            &mut t,
            vec![Content::text(format!("test parser_{n} ... FAILED\npanicked at überlauf"))],
        );
        for i in 0..=n {
            user(&mut t, &format!("more about the parser, take {i}"));
        }
        tapes.push(t);
    }
    tapes
}

fn found(hits: &[SearchHit]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> =
        hits.iter().map(|h| (h.session_id.clone(), h.entry_id.clone())).collect();
    v.sort();
    v
}

#[test]
fn unindexed_sessions_are_read_directly_with_the_same_hits() {
    let (indexed, direct) = (home(), home());
    corpus(&indexed);
    std::fs::create_dir_all(&direct.root).unwrap();
    // The same files under both roots.
    for dir in std::fs::read_dir(&indexed.root).unwrap() {
        let dir = dir.unwrap().path();
        let to = direct.root.join(dir.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let copy = to.join(f.file_name().unwrap());
            std::fs::copy(&f, &copy).unwrap();
            // Same times too: recency breaks ties between equal scores.
            let modified = std::fs::metadata(&f).unwrap().modified().unwrap();
            OpenOptions::new().write(true).open(&copy).unwrap().set_modified(modified).unwrap();
        }
    }
    let mut clear = 0;
    for query in [
        "parser",
        "\"parser test\"",
        "PANICKED überlauf",
        "parser_2",
        "tuesdays take",
        "nothing-here",
        "\"session 2\" tuesdays",
        "running FAILED",
    ] {
        let full = search_within(&indexed.root, &indexed.index, query, 100, None).unwrap();
        let read =
            search_within(&direct.root, &direct.index, query, 100, Some(Duration::ZERO)).unwrap();
        assert_eq!(found(&read), found(&full), "{query}");
        // Where one hit is clearly best, both find it first (equal scores may tie
        // differently: files written in the same clock tick have the same mtime).
        if full.len() < 2 || full[0].score > full[1].score + 0.1 {
            clear += usize::from(!full.is_empty());
            assert_eq!(
                read.first().map(|h| &h.snippet),
                full.first().map(|h| &h.snippet),
                "the same best hit for {query}"
            );
        }
    }
    assert!(clear >= 1, "some query has one best hit");
    // Nothing was indexed by the searches without time, and nothing was lost either:
    // a search with time indexes everything and agrees.
    assert!(direct.manifest().files.is_empty(), "{:?}", direct.manifest().files);
    let later = search_within(&direct.root, &direct.index, "parser", 100, None).unwrap();
    assert_eq!(
        found(&later),
        found(&search(&indexed.root, &indexed.index, "parser", 100).unwrap())
    );
    assert_eq!(direct.manifest().files.len(), 3);
}

#[test]
fn a_grown_session_is_found_in_both_its_indexed_and_its_unread_part() {
    let h = home();
    let mut tapes = corpus(&h);
    assert_eq!(h.search("parser_1").len(), 2, "indexed");
    let grown = &mut tapes[1];
    let new = user(grown, "and now the zeppelin parser_1 question");
    let hits = search_within(&h.root, &h.index, "parser_1", 10, Some(Duration::ZERO)).unwrap();
    assert_eq!(hits.len(), 3, "{hits:?}");
    assert!(hits.iter().any(|hit| hit.entry_id == new));
    // The unread part is indexed by the next search with time, once.
    let path = grown.path().unwrap().to_owned();
    let before =
        h.manifest().files.iter().find(|f| h.root.join(&f.path) == path).unwrap().indexed_len;
    assert!(before < std::fs::metadata(&path).unwrap().len());
    assert_eq!(h.search("zeppelin").len(), 1);
    assert_eq!(h.search("parser_1").len(), 3);
}

#[test]
fn a_search_while_another_rab_holds_the_index_reads_the_sessions_instead_of_waiting() {
    let h = home();
    corpus(&h);
    let before = found(&search(&h.root, &h.index, "parser", 100).unwrap());
    let mut t = h.tape("/work/new");
    let new = user(&mut t, "a fresh parser question");
    // Another rab is (say) building the index: it holds the lock.
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(h.index.join("search.lock"))
        .unwrap();
    lock.lock().unwrap();
    let manifest = std::fs::read(h.index.join("search.json")).unwrap();
    let hits = search(&h.root, &h.index, "parser", 100).unwrap();
    assert!(hits.iter().any(|hit| hit.entry_id == new), "the unindexed session too");
    let mut expected = before;
    expected.push((t.id().to_owned(), new));
    expected.sort();
    assert_eq!(found(&hits), expected);
    assert_eq!(std::fs::read(h.index.join("search.json")).unwrap(), manifest, "index untouched");
    drop(lock);
    assert_eq!(found(&search(&h.root, &h.index, "parser", 100).unwrap()), expected);
}
