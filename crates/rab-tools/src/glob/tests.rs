use std::path::Path;
use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use rab_agent::AgentTool;
use rab_ai::Content;
use tempfile::TempDir;

use super::*;

/// Files with modification times: the later in the list, the newer.
fn tree(files: &[&str]) -> (TempDir, Glob) {
    let dir = tempfile::tempdir().unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (i, path) in files.iter().enumerate() {
        write(dir.path(), path, base + Duration::from_secs(i as u64));
    }
    let glob = Glob::new(Workspace::new(dir.path()));
    (dir, glob)
}

fn write(root: &Path, path: &str, modified: SystemTime) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    file.set_modified(modified).unwrap();
}

async fn glob(tool: &Glob, pattern: &str, path: Option<&str>) -> Result<ToolOutput, ToolError> {
    let args = Args { pattern: pattern.into(), path: path.map(Into::into) };
    tool.run(args, ToolContext::detached("c")).await
}

async fn text(tool: &Glob, pattern: &str, path: Option<&str>) -> String {
    match &glob(tool, pattern, path).await.unwrap().content[..] {
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
async fn double_star_recurses_and_results_are_newest_first() {
    let (_dir, tool) = tree(&["src/a.rs", "b.rs", "src/deep/c.rs", "notes.md"]);
    assert_eq!(text(&tool, "**/*.rs", None).await, "src/deep/c.rs\nb.rs\nsrc/a.rs");
}

#[tokio::test]
async fn single_star_stays_in_one_directory() {
    let (_dir, tool) = tree(&["src/a.rs", "b.rs", "src/x/c.rs"]);
    assert_eq!(text(&tool, "*.rs", None).await, "b.rs");
    assert_eq!(text(&tool, "src/*.rs", None).await, "src/a.rs");
}

#[tokio::test]
async fn braces_and_a_base_path() {
    let (_dir, tool) = tree(&["web/a.ts", "web/b.tsx", "web/c.js", "a.ts"]);
    let out = glob(&tool, "*.{ts,tsx}", Some("web")).await.unwrap();
    assert_eq!(out.content, [Content::text("web/b.tsx\nweb/a.ts")]);
    assert_eq!(out.details, Some(json!({"files": 2, "truncated": false})));
}

#[tokio::test]
async fn gitignored_and_hidden_files_are_skipped_unless_named() {
    let (dir, tool) = tree(&[".gitignore", "target/x.yml", ".github/ci.yml", "app.yml"]);
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    assert_eq!(text(&tool, "**/*.yml", None).await, "app.yml");
    assert_eq!(text(&tool, ".github/*.yml", None).await, ".github/ci.yml");
}

#[tokio::test]
async fn an_absolute_pattern_under_the_base_is_made_relative() {
    let (dir, tool) = tree(&["src/a.rs"]);
    let pattern = format!("{}/src/*.rs", dir.path().display());
    assert_eq!(text(&tool, &pattern, None).await, "src/a.rs");
    assert_eq!(text(&tool, "./src/*.rs", None).await, "src/a.rs");
}

#[tokio::test]
async fn equal_times_sort_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
    for name in ["c.txt", "a.txt", "b.txt"] {
        write(dir.path(), name, when);
    }
    let tool = Glob::new(Workspace::new(dir.path()));
    assert_eq!(text(&tool, "*.txt", None).await, "a.txt\nb.txt\nc.txt");
}

#[tokio::test]
async fn nothing_found_missing_base_and_bad_pattern() {
    let (_dir, tool) = tree(&["a.rs"]);
    assert_eq!(text(&tool, "**/*.go", None).await, "no files found");
    assert_eq!(text(&tool, "nope/**/*.rs", None).await, "no files found");
    assert_eq!(
        glob(&tool, "*.rs", Some("missing")).await.unwrap_err(),
        ToolError::Model("no such directory: missing".into())
    );
    let ToolError::Model(err) = glob(&tool, "/elsewhere/*.rs", None).await.unwrap_err() else {
        panic!()
    };
    assert!(err.starts_with("the pattern is an absolute path"), "{err}");
    let ToolError::Model(err) = glob(&tool, "a[", None).await.unwrap_err() else { panic!() };
    assert!(err.starts_with("invalid glob: "), "{err}");
}

#[tokio::test]
async fn results_are_capped_with_a_note() {
    let names: Vec<String> = (0..1005).map(|i| format!("f{i:04}.txt")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (_dir, tool) = tree(&refs);
    let out = glob(&tool, "*.txt", None).await.unwrap();
    let [Content::Text { text }] = &out.content[..] else { panic!() };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[0], "f1004.txt");
    assert_eq!(lines[1000], "[5 more files not shown; narrow the pattern or path]");
    assert_eq!(out.details, Some(json!({"files": 1005, "truncated": true})));
}

#[test]
fn literal_prefix_is_the_plain_leading_directories() {
    assert_eq!(literal_prefix("src/lib/**/*.rs"), Path::new("src/lib"));
    assert_eq!(literal_prefix("*.rs"), Path::new(""));
    assert_eq!(literal_prefix("src/*/x.rs"), Path::new("src"));
    assert_eq!(literal_prefix("a.rs"), Path::new(""));
}
