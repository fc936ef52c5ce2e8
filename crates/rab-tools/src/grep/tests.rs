use std::path::Path;

use pretty_assertions::assert_eq;
use rab_agent::AgentTool;
use rab_ai::Content;
use tempfile::TempDir;

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tree(files: &[(&str, &str)]) -> (TempDir, Grep) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    let grep = Grep::new(Workspace::new(dir.path()));
    (dir, grep)
}

fn args(pattern: &str) -> Args {
    Args {
        pattern: pattern.into(),
        path: None,
        glob: None,
        ignore_case: None,
        context: None,
        files_only: None,
    }
}

async fn grep(tool: &Grep, args: Args) -> Result<ToolOutput, ToolError> {
    tool.run(args, ToolContext::detached("c")).await
}

async fn text(tool: &Grep, args: Args) -> String {
    match &grep(tool, args).await.unwrap().content[..] {
        [Content::Text { text }] => text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[test]
fn spec_fits_the_budget() {
    let (_dir, tool) = tree(&[]);
    let spec = serde_json::to_string(&tool.spec()).unwrap();
    assert!(spec.len() < 500, "{} bytes: {spec}", spec.len());
}

#[tokio::test]
async fn matches_are_sorted_by_path_then_line() {
    let (_dir, tool) = tree(&[
        ("src/b.rs", "fn b() {}\nlet x = 1;\nfn c() {}\n"),
        ("src/a.rs", "fn a() {}\n"),
        ("README.md", "no functions here\n"),
    ]);
    let out = grep(&tool, args(r"fn \w+")).await.unwrap();
    assert_eq!(
        out.content,
        [Content::text("src/a.rs:1:fn a() {}\nsrc/b.rs:1:fn b() {}\nsrc/b.rs:3:fn c() {}")]
    );
    assert_eq!(out.details, Some(json!({"matches": 3, "files": 2, "truncated": false})));
}

#[tokio::test]
async fn gitignored_hidden_and_binary_files_are_skipped() {
    let (dir, tool) = tree(&[
        (".gitignore", "target/\n*.log\n"),
        ("target/out.rs", "needle\n"),
        ("app.log", "needle\n"),
        (".hidden/x.rs", "needle\n"),
        (".env", "needle\n"),
        ("kept.rs", "needle\n"),
    ]);
    // .gitignore counts only inside a git repository, as with rg.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("blob.bin"), b"needle\0\x01\x02").unwrap();
    assert_eq!(text(&tool, args("needle")).await, "kept.rs:1:needle");
}

#[tokio::test]
async fn glob_filters_files_relative_to_the_root() {
    let (_dir, tool) = tree(&[
        ("src/app/x.ts", "hit\n"),
        ("src/y.tsx", "hit\n"),
        ("lib/z.ts", "hit\n"),
        ("a.rs", "hit\n"),
    ]);
    let ts = Args { glob: Some("src/**/*.ts".into()), ..args("hit") };
    assert_eq!(text(&tool, ts).await, "src/app/x.ts:1:hit");
    let any = Args { glob: Some("*.{ts,tsx}".into()), ..args("hit") };
    assert_eq!(text(&tool, any).await, "lib/z.ts:1:hit\nsrc/app/x.ts:1:hit\nsrc/y.tsx:1:hit");
}

#[tokio::test]
async fn path_narrows_to_a_directory_or_a_file() {
    let (_dir, tool) = tree(&[("a/one.txt", "hit\n"), ("b/two.txt", "hit\n")]);
    let dir = Args { path: Some("b".into()), ..args("hit") };
    assert_eq!(text(&tool, dir).await, "b/two.txt:1:hit");
    let file = Args { path: Some("a/one.txt".into()), ..args("hit") };
    assert_eq!(text(&tool, file).await, "a/one.txt:1:hit");
    let missing = Args { path: Some("nope".into()), ..args("hit") };
    assert_eq!(
        grep(&tool, missing).await.unwrap_err(),
        ToolError::Model("no such file or directory: nope".into())
    );
}

#[tokio::test]
async fn a_binary_file_searched_directly_says_so() {
    let (dir, tool) = tree(&[]);
    std::fs::write(dir.path().join("x.bin"), b"hit\0hit").unwrap();
    let file = Args { path: Some("x.bin".into()), ..args("hit") };
    assert_eq!(text(&tool, file).await, "no matches (binary file)");
}

#[tokio::test]
async fn ignore_case_and_no_matches() {
    let (_dir, tool) = tree(&[("a.txt", "Hello\n")]);
    assert_eq!(text(&tool, args("hello")).await, "no matches");
    let loose = Args { ignore_case: Some(true), ..args("hello") };
    assert_eq!(text(&tool, loose).await, "a.txt:1:Hello");
}

#[tokio::test]
async fn invalid_regex_quotes_the_error() {
    let (_dir, tool) = tree(&[("a.txt", "x\n")]);
    let ToolError::Model(err) = grep(&tool, args("fn (")).await.unwrap_err() else {
        panic!("expected a model error");
    };
    assert!(err.starts_with("invalid regex: "), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
}

#[tokio::test]
async fn context_lines_use_dashes_and_separate_groups() {
    let body = "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n";
    let (_dir, tool) = tree(&[("f.txt", body), ("g.txt", "hit\n")]);
    let out = text(&tool, Args { context: Some(1), ..args("hit") }).await;
    assert_eq!(
        out,
        "f.txt-2-2\nf.txt:3:hit\nf.txt-4-4\n--\nf.txt-7-7\nf.txt:8:hit\nf.txt-9-9\n--\ng.txt:1:hit"
    );
}

#[tokio::test]
async fn files_only_lists_each_matching_file_once() {
    let (_dir, tool) = tree(&[("b.txt", "hit\nhit\n"), ("a.txt", "hit\n"), ("c.txt", "miss\n")]);
    let out = grep(&tool, Args { files_only: Some(true), ..args("hit") }).await.unwrap();
    assert_eq!(out.content, [Content::text("a.txt\nb.txt")]);
}

#[tokio::test]
async fn results_are_capped_with_a_note_but_all_are_counted() {
    // 40 files of 10 matches: the first 200 in path order are exactly files 00..19,
    // whatever order the walker threads finish in.
    let files: Vec<(String, String)> =
        (0..40).map(|i| (format!("f{i:02}.txt"), "hit\n".repeat(10))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (_dir, tool) = tree(&refs);
    let out = grep(&tool, args("hit")).await.unwrap();
    let [Content::Text { text }] = &out.content[..] else { panic!() };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[0], "f00.txt:1:hit");
    assert_eq!(lines[199], "f19.txt:10:hit");
    assert_eq!(lines[200], "[200 more matches not shown; narrow the pattern or path]");
    assert_eq!(out.details, Some(json!({"matches": 400, "files": 40, "truncated": true})));
}

#[tokio::test]
async fn long_lines_are_cut() {
    let long = format!("hit {}\n", "é".repeat(1000));
    let (_dir, tool) = tree(&[("a.txt", &long)]);
    let out = text(&tool, args("hit")).await;
    assert_eq!(out, format!("a.txt:1:hit {}…", "é".repeat(296)));
}

#[tokio::test]
async fn a_cancelled_search_is_aborted() {
    let (_dir, tool) = tree(&[("a.txt", "hit\n")]);
    let cx = ToolContext::detached("c");
    cx.cancel.cancel();
    let err = tool.run(args("hit"), cx).await.unwrap_err();
    assert_eq!(err, ToolError::Model(ABORTED.into()));
}

#[tokio::test]
async fn a_file_with_a_line_longer_than_the_cap_is_skipped_and_named() {
    let long = format!("needle {}\n", "x".repeat(MAX_SEARCH_LINE + 1));
    let (_dir, tool) = tree(&[("dump.json", &long), ("src/a.rs", "// needle\n")]);
    let text = text(&tool, args("needle")).await;
    assert!(text.starts_with("src/a.rs:1:// needle\n"), "{text}");
    assert!(
        text.ends_with("[not searched: dump.json: a line longer than 8 MB; use read with offset, or bash with head/cut]"),
        "{text}"
    );
    let out = grep(&tool, args("needle")).await.unwrap();
    assert_eq!(out.details.unwrap()["skippedLongLines"], 1);
}
