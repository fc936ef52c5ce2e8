use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use rab_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::*;

async fn edit(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
    Edit::new(Workspace::new(dir)).execute(args, ToolContext::detached("c1")).await
}

async fn edit_err(dir: &Path, args: Value) -> String {
    match edit(dir, args).await {
        Err(ToolError::Model(msg)) => msg,
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn file(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, content).unwrap();
    path
}

fn one(path: &str, old: &str, new: &str) -> Value {
    json!({"path": path, "edits": [{"old_text": old, "new_text": new}]})
}

#[test]
fn spec_stays_small() {
    let spec = Edit::new(Workspace::new(Path::new("/"))).spec();
    let len = serde_json::to_string(&spec).unwrap().len();
    assert!(len < 500, "edit spec is {len} bytes");
}

#[tokio::test]
async fn exact_edit_returns_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.rs", "fn a() {\n    1\n}\n");
    let out = edit(dir.path(), one("a.rs", "    1", "    2")).await.unwrap();
    let diff = "--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n fn a() {\n-    1\n+    2\n }\n";
    assert_eq!(
        out,
        ToolOutput::text(format!("edited a.rs (1 edit)\n{}", diff.trim_end()))
            .with_details(json!({"path": "a.rs", "diff": diff}))
    );
    assert_eq!(fs::read_to_string(path).unwrap(), "fn a() {\n    2\n}\n");
}

#[tokio::test]
async fn multiple_edits_apply_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "one\ntwo\nthree\n");
    let args = json!({"path": "a.txt", "edits": [
        {"old_text": "one", "new_text": "uno"},
        {"old_text": "three", "new_text": "tres"},
        // Sees the result of the first edit.
        {"old_text": "uno\ntwo", "new_text": "uno\ndos"},
    ]});
    let out = edit(dir.path(), args).await.unwrap();
    assert_eq!(fs::read_to_string(path).unwrap(), "uno\ndos\ntres\n");
    let rab_ai::Content::Text { text } = &out.content[0] else { panic!() };
    assert!(text.starts_with("edited a.txt (3 edits)\n--- a/a.txt"), "{text}");
}

#[tokio::test]
async fn ambiguous_match_is_rejected_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "x = 1\ny\nx = 1\n");
    let msg = edit_err(dir.path(), one("a.txt", "x = 1", "x = 2")).await;
    assert_eq!(
        msg,
        "old_text matches 2 places in a.txt (lines 1, 3); add surrounding lines to make it \
         unique, or set replace_all to change every one."
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = 1\ny\nx = 1\n");
    let args = json!({"path": "a.txt", "edits": [
        {"old_text": "x = 1", "new_text": "x = 2", "replace_all": true}
    ]});
    edit(dir.path(), args).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = 2\ny\nx = 2\n");
}

#[tokio::test]
async fn tab_file_edited_with_space_indented_old_text_keeps_tabs() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "main.go", "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n");
    let old = "    if ok {\n        run()\n    }";
    let new = "    if ok {\n        run()\n        stop()\n    }";
    let out = edit(dir.path(), one("main.go", old, new)).await.unwrap();
    assert_eq!(
        fs::read_to_string(path).unwrap(),
        "func main() {\n\tif ok {\n\t\trun()\n\t\tstop()\n\t}\n}\n"
    );
    let rab_ai::Content::Text { text } = &out.content[0] else { panic!() };
    assert!(
        text.starts_with(
            "edited main.go (1 edit)\nmatched ignoring indentation; kept the file's tabs\n"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn crlf_file_stays_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "one\r\ntwo\r\nthree\r\n");
    edit(dir.path(), one("a.txt", "two\nthree", "2\n3\nfour")).await.unwrap();
    assert_eq!(fs::read_to_string(path).unwrap(), "one\r\n2\r\n3\r\nfour\r\n");
}

#[tokio::test]
async fn missing_final_newline_and_bom_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "\u{feff}a\nb");
    edit(dir.path(), one("a.txt", "b", "c")).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "\u{feff}a\nc");
    edit(dir.path(), one("a.txt", "a  \n c \n", "A\nC\n")).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "\u{feff}A\nC");
}

#[tokio::test]
async fn a_miss_shows_the_closest_candidate_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    file(
        dir.path(),
        "lib.rs",
        "use std::io;\n\npub fn parse(input: &str) -> Result<u32, Error> {\n    input.parse()\n}\n",
    );
    let msg =
        edit_err(dir.path(), one("lib.rs", "pub fn parse(input: &str) -> Option<u32> {", "x"))
            .await;
    assert_eq!(
        msg,
        "old_text not found in lib.rs. Closest match, line 3 (81% similar):\n3\tpub fn \
         parse(input: &str) -> Result<u32, Error> {\nCopy old_text exactly from the file \
         (read it again if unsure)."
    );
}

#[tokio::test]
async fn edits_are_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "alpha\nbeta\n");
    let args = json!({"path": "a.txt", "edits": [
        {"old_text": "alpha", "new_text": "ALPHA"},
        {"old_text": "gamma", "new_text": "GAMMA"},
    ]});
    let msg = edit_err(dir.path(), args).await;
    assert!(msg.starts_with("edit 2 of 2: old_text not found in a.txt"), "{msg}");
    assert!(msg.ends_with("No edits were applied."), "{msg}");
    assert_eq!(fs::read_to_string(path).unwrap(), "alpha\nbeta\n");
}

#[tokio::test]
async fn empty_old_text_no_op_and_empty_edits_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    file(dir.path(), "a.txt", "a\n");
    assert_eq!(
        edit_err(dir.path(), one("a.txt", "", "x")).await,
        "old_text is empty; to create or overwrite a whole file use write"
    );
    assert_eq!(
        edit_err(dir.path(), one("a.txt", "a", "a")).await,
        "old_text and new_text are identical; nothing to change"
    );
    assert_eq!(
        edit_err(dir.path(), json!({"path": "a.txt", "edits": []})).await,
        "edits is empty: give at least one {old_text, new_text}"
    );
    // Tolerant match whose re-indented replacement equals the file.
    file(dir.path(), "b.txt", "\tx\n");
    assert_eq!(
        edit_err(dir.path(), one("b.txt", "    x", "\tx")).await,
        "the edits leave b.txt unchanged"
    );
}

#[tokio::test]
async fn missing_directory_and_non_utf8_files_are_model_errors() {
    let dir = tempfile::tempdir().unwrap();
    file(dir.path(), "main.rs", "");
    assert_eq!(
        edit_err(dir.path(), one("mian.rs", "a", "b")).await,
        "file not found: mian.rs; similar: main.rs (use write to create a new file)"
    );
    fs::create_dir(dir.path().join("src")).unwrap();
    assert_eq!(edit_err(dir.path(), one("src", "a", "b")).await, "src is a directory, not a file");
    fs::write(dir.path().join("l1.txt"), b"caf\xe9\n").unwrap();
    assert!(edit_err(dir.path(), one("l1.txt", "caf", "cafe")).await.contains("not valid UTF-8"));
}

#[tokio::test]
async fn claude_code_style_field_names_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "hello\n");
    let args = json!({"path": "a.txt", "edits": [{"old_string": "hello", "new_string": "bye"}]});
    edit(dir.path(), args).await.unwrap();
    assert_eq!(fs::read_to_string(path).unwrap(), "bye\n");
}

#[tokio::test]
async fn edits_sent_as_a_json_string_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.txt", "hello\n");
    let edits = r#"[{"old_text": "hello", "new_text": "bye"}]"#;
    edit(dir.path(), json!({"path": "a.txt", "edits": edits})).await.unwrap();
    assert_eq!(fs::read_to_string(path).unwrap(), "bye\n");
    let msg = edit_err(dir.path(), json!({"path": "a.txt", "edits": [{"old_text": "bye"}]})).await;
    assert_eq!(msg, "invalid arguments for edit: missing field `new_text`");
}

#[tokio::test]
async fn edits_are_located_in_the_file_as_read() {
    let dir = tempfile::tempdir().unwrap();
    // The same edit twice lands once, and says so.
    let path = file(dir.path(), "Cargo.toml", "[dependencies]\nserde = \"1\"\n");
    let add =
        json!({"old_text": "[dependencies]\n", "new_text": "[dependencies]\ntokio = \"1\"\n"});
    let out = edit(dir.path(), json!({"path": "Cargo.toml", "edits": [add, add]})).await.unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "[dependencies]\ntokio = \"1\"\nserde = \"1\"\n"
    );
    let rab_ai::Content::Text { text } = &out.content[0] else { panic!() };
    assert!(text.contains("edit 2: the same change as edit 1: applied once"), "{text}");
    // Two edits that swap values: each finds the text the model read.
    let path = file(dir.path(), "v.py", "a = \"x\"\nb = \"y\"\n");
    let swap = json!({"path": "v.py", "edits": [
        {"old_text": "\"x\"", "new_text": "\"y\""},
        {"old_text": "\"y\"", "new_text": "\"x\""},
    ]});
    edit(dir.path(), swap).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "a = \"y\"\nb = \"x\"\n");
    // Two edits of the same line are refused, naming both and the lines.
    let path = file(dir.path(), "x.py", "a = 1\nb = 2\nc = 3\n");
    let overlap = json!({"path": "x.py", "edits": [
        {"old_text": "a = 1\nb = 2", "new_text": "a = 10\nb = 2"},
        {"old_text": "b = 2\nc = 3", "new_text": "b = 20\nc = 3"},
    ]});
    let err = edit_err(dir.path(), overlap).await;
    assert!(err.starts_with("edits 1 and 2 overlap in x.py (lines 1-2 and lines 2-3"), "{err}");
    assert!(err.contains("No edits were applied"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "a = 1\nb = 2\nc = 3\n");
}

#[tokio::test]
async fn a_match_inside_a_longer_number_is_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "c.py", "RETRIES = 5\nTIMEOUT = 30\n");
    let err = edit_err(dir.path(), one("c.py", "TIMEOUT = 3", "TIMEOUT = 5")).await;
    assert!(err.contains("only inside longer words or numbers (line 2)"), "{err}");
    assert!(err.contains("2\tTIMEOUT = 30"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "RETRIES = 5\nTIMEOUT = 30\n");
}

#[tokio::test]
async fn html_entities_and_json_escapes_are_seen_through_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "a.html", "<p>Tom &amp; Jerry</p>\n");
    let out = edit(dir.path(), one("a.html", "Tom & Jerry", "Tom & Jerry & Spike")).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "<p>Tom &amp; Jerry &amp; Spike</p>\n");
    let rab_ai::Content::Text { text } = &out.content[0] else { panic!() };
    assert!(text.contains("HTML entities"), "{text}");
    let path = file(dir.path(), "r.json", "{\"re\": \"\\\\d+\"}\n");
    edit(dir.path(), one("r.json", "\"re\": \"\\d+\"", "\"re\": \"\\d+\\s\"")).await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"re\": \"\\\\d+\\\\s\"}\n");
}

#[tokio::test]
async fn a_later_edit_that_misses_after_a_replace_all_deletion_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "x.txt", "x\nx");
    let args = json!({"path": "x.txt", "edits": [
        {"old_text": "  x", "new_text": "", "replace_all": true},
        {"old_text": "nope", "new_text": "y"},
    ]});
    let err = edit_err(dir.path(), args).await;
    assert!(err.starts_with("edit 2 of 2: old_text not found"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "x\nx");
}
