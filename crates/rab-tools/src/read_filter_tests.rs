//! grep, glob and ls leave out what a read filter hides, symbolic links to it too, and
//! say how many paths they left out.

use std::path::Path;

use rab_agent::{Tool, ToolContext};

use crate::test_support::text;
use crate::{ReadFilter, Workspace, glob, grep, ls};

fn tree() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("secrets/key.txt"), "API_KEY=hunter2\n").unwrap();
    std::fs::write(root.join("src/main.rs"), "// API_KEY is read from the env\n").unwrap();
    std::os::unix::fs::symlink(root.join("secrets/key.txt"), root.join("link.txt")).unwrap();
    let secrets = root.join("secrets");
    let filter = ReadFilter::new(move |p: &Path| p.starts_with(&secrets));
    let ws = Workspace::new(root).with_read_filter(filter);
    (dir, ws)
}

#[tokio::test]
async fn grep_leaves_out_hidden_files_and_links_to_them() {
    let (_dir, ws) = tree();
    let args = grep::Args {
        pattern: "API_KEY".into(),
        path: None,
        glob: None,
        ignore_case: None,
        context: None,
        files_only: None,
    };
    let out = grep::Grep::new(ws).run(args, ToolContext::detached("c")).await.unwrap();
    let t = text(&out);
    assert!(t.contains("src/main.rs:1:"), "{t}");
    assert!(!t.contains("hunter2"), "{t}");
    assert!(t.ends_with("[2 paths under read deny rules left out]"), "{t}");
}

#[tokio::test]
async fn glob_and_ls_leave_out_hidden_paths_with_a_count() {
    let (_dir, ws) = tree();
    let args = glob::Args { pattern: "**/*.txt".into(), path: None };
    let out = glob::Glob::new(ws.clone()).run(args, ToolContext::detached("c")).await.unwrap();
    let t = text(&out);
    assert!(!t.contains("key.txt") && !t.contains("link.txt"), "{t}");
    assert!(t.contains("left out"), "{t}");
    let out =
        ls::Ls::new(ws).run(ls::Args { path: None }, ToolContext::detached("c")).await.unwrap();
    let t = text(&out);
    assert!(t.contains("src/") && !t.contains("secrets") && !t.contains("link.txt"), "{t}");
    assert!(t.ends_with("[2 paths under read deny rules left out]"), "{t}");
}

#[tokio::test]
async fn without_a_filter_nothing_is_left_out() {
    let (dir, _) = tree();
    let out = ls::Ls::new(Workspace::new(dir.path()))
        .run(ls::Args { path: None }, ToolContext::detached("c"))
        .await
        .unwrap();
    let t = text(&out);
    assert!(t.contains("secrets/") && !t.contains("left out"), "{t}");
}
