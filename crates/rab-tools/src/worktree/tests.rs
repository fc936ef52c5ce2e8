use std::process::Command;

use pretty_assertions::assert_eq;
use rab_agent::AgentTool;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;
use crate::test_support::{model_error, text};
use crate::write::Write;

struct Fixture {
    _dir: TempDir,
    repo: PathBuf,
    ws: Workspace,
    enter: EnterWorktree,
    exit: ExitWorktree,
    write: Write,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A repository (`<temp>/repo`) with one commit holding `a.txt` and `sub/b.txt`, the
/// workspace rooted at `root` inside it.
fn fixture_at(root: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    // One level down, so a worktree next to the repository stays in the temp dir.
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["config", "user.name", "Test"]);
    git(&repo, &["config", "user.email", "test@example.com"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir(repo.join("sub")).unwrap();
    std::fs::write(repo.join("sub/b.txt"), "b\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let ws = Workspace::new(&repo.join(root));
    let active = ActiveWorktree::new();
    Fixture {
        enter: EnterWorktree::new(ws.clone(), active.clone()),
        exit: ExitWorktree::new(ws.clone(), active),
        write: Write::new(ws.clone()),
        ws,
        repo,
        _dir: dir,
    }
}

fn fixture() -> Fixture {
    fixture_at(".")
}

async fn call(tool: &dyn AgentTool, args: Value) -> Result<ToolOutput, ToolError> {
    tool.execute(args, ToolContext::detached("c")).await
}

fn branches(repo: &Path) -> String {
    git(repo, &["branch", "--format=%(refname:short)"])
}

#[test]
fn specs_stay_small() {
    let f = fixture();
    for spec in [f.enter.spec(), f.exit.spec()] {
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.len() < 450, "{} bytes: {json}", json.len());
    }
}

#[tokio::test]
async fn a_file_written_after_entering_lands_in_the_worktree() {
    let f = fixture();
    let out = call(&f.enter, json!({"branch": "feat"})).await.unwrap();
    let wt = f.repo.join(".rab/worktrees/feat");
    assert_eq!(f.ws.root(), wt);
    assert_eq!(
        text(&out),
        format!(
            "created worktree {0} on new branch feat; the tools now work in {0} (was {1}). \
             Call exit_worktree to keep or remove it.",
            wt.display(),
            f.repo.display()
        )
    );
    call(&f.write, json!({"path": "new.txt", "content": "x"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(wt.join("new.txt")).unwrap(), "x");
    assert!(!f.repo.join("new.txt").exists());
    assert_eq!(std::fs::read_to_string(f.repo.join(".rab/worktrees/.gitignore")).unwrap(), "*\n");
    // The main checkout sees neither the worktree nor its files.
    assert_eq!(git(&f.repo, &["status", "--porcelain"]), "");
    assert_eq!(git(&wt, &["branch", "--show-current"]), "feat\n");
}

#[tokio::test]
async fn remove_refuses_uncommitted_changes_unless_told_to_discard_them() {
    let f = fixture();
    call(&f.enter, json!({"branch": "feat"})).await.unwrap();
    let wt = f.ws.root();
    call(&f.write, json!({"path": "new.txt", "content": "x"})).await.unwrap();
    let err = model_error(call(&f.exit, json!({"action": "remove"})).await);
    assert_eq!(
        err,
        format!(
            "worktree {} has uncommitted changes:\n?? new.txt\nCommit them, use action keep, or \
             pass discard_changes: true to delete them",
            wt.display()
        )
    );
    assert_eq!(f.ws.root(), wt, "a refused exit stays in the worktree");
    let out = call(&f.exit, json!({"action": "remove", "discard_changes": true})).await.unwrap();
    let text = text(&out);
    assert!(
        text.starts_with(&format!("removed worktree {}; Deleted branch feat (was ", wt.display())),
        "{text}"
    );
    assert!(text.ends_with(&format!("; back in {}", f.repo.display())), "{text}");
    assert!(!wt.exists());
    // Only the main checkout's branch is left.
    assert_eq!(branches(&f.repo), git(&f.repo, &["branch", "--show-current"]));
    assert_eq!(f.ws.root(), f.repo);
}

#[tokio::test]
async fn remove_keeps_a_branch_with_commits_merged_nowhere() {
    let f = fixture();
    call(&f.enter, json!({"branch": "feat"})).await.unwrap();
    let wt = f.ws.root();
    call(&f.write, json!({"path": "new.txt", "content": "x"})).await.unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-q", "-m", "work"]);
    let out = call(&f.exit, json!({"action": "remove"})).await.unwrap();
    let text = text(&out);
    assert!(text.contains("kept branch feat: it has commits not merged"), "{text}");
    assert!(!wt.exists());
    assert!(branches(&f.repo).contains("feat"), "the commit is still reachable");
    assert_eq!(f.ws.root(), f.repo);
}

#[tokio::test]
async fn keep_leaves_the_worktree_and_branch_and_goes_back() {
    let f = fixture_at("sub");
    call(&f.enter, json!({"branch": "keepme"})).await.unwrap();
    let wt = f.repo.join(".rab/worktrees/keepme");
    // Entered from a subdirectory, the tools work in the same subdirectory.
    assert_eq!(f.ws.root(), wt.join("sub"));
    call(&f.write, json!({"path": "c.txt", "content": "c"})).await.unwrap();
    let out = call(&f.exit, json!({"action": "keep"})).await.unwrap();
    assert_eq!(
        text(&out),
        format!(
            "left worktree {0}, kept and locked with its branch keepme; back in {1}. Remove \
             it later with: git worktree unlock {0} && git worktree remove {0} && git branch \
             -D keepme",
            wt.display(),
            f.repo.join("sub").display()
        )
    );
    assert_eq!(f.ws.root(), f.repo.join("sub"));
    assert_eq!(std::fs::read_to_string(wt.join("sub/c.txt")).unwrap(), "c");
    assert!(branches(&f.repo).lines().any(|b| b == "keepme"));
    // Locked: a prune does not drop it even when its directory is gone for a while.
    let list = git(&f.repo, &["worktree", "list", "--porcelain"]);
    let entry = list.split("\n\n").find(|e| e.contains("keepme")).unwrap();
    assert!(entry.contains("locked kept by rab"), "{list}");
    std::fs::rename(&wt, f.repo.join("moved")).unwrap();
    git(&f.repo, &["worktree", "prune"]);
    assert!(git(&f.repo, &["worktree", "list"]).contains("keepme"), "pruned");
}

#[tokio::test]
async fn entering_twice_names_the_active_worktree() {
    let f = fixture();
    call(&f.enter, json!({"branch": "one"})).await.unwrap();
    let err = model_error(call(&f.enter, json!({"branch": "two"})).await);
    let wt = f.repo.join(".rab/worktrees/one");
    assert_eq!(
        err,
        format!("already in worktree {} (branch one); call exit_worktree first", wt.display())
    );
}

#[tokio::test]
async fn a_custom_path_is_resolved_against_the_root() {
    let f = fixture();
    let out = call(&f.enter, json!({"branch": "x", "path": "../wt-x"})).await.unwrap();
    let wt = f.repo.parent().unwrap().join("wt-x");
    assert_eq!(f.ws.root(), wt);
    assert_eq!(out.details.unwrap()["path"], json!(wt.display().to_string()));
    assert!(!f.repo.join(".rab").exists());
    call(&f.exit, json!({"action": "remove"})).await.unwrap();
    assert!(!wt.exists());
}

#[tokio::test]
async fn git_failures_are_model_errors_with_gits_message() {
    let f = fixture();
    git(&f.repo, &["branch", "taken"]);
    let err = model_error(call(&f.enter, json!({"branch": "taken"})).await);
    assert!(err.starts_with("could not create the worktree: git worktree add -b taken "), "{err}");
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(f.ws.root(), f.repo);

    let plain = tempfile::tempdir().unwrap();
    let ws = Workspace::new(plain.path());
    let enter = EnterWorktree::new(ws, ActiveWorktree::new());
    let err = model_error(call(&enter, json!({"branch": "b"})).await);
    assert!(
        err.contains("is not in a git repository: git rev-parse --show-toplevel failed"),
        "{err}"
    );
    assert!(err.contains("not a git repository"), "{err}");
}

#[tokio::test]
async fn exit_without_entering_or_a_bad_branch_is_refused() {
    let f = fixture();
    let err = model_error(call(&f.exit, json!({"action": "keep"})).await);
    assert_eq!(err, "not in a worktree; enter_worktree creates one");
    let err = model_error(call(&f.enter, json!({"branch": "-f"})).await);
    assert_eq!(err, "invalid branch name \"-f\": give a name like fix-parser");
}

#[tokio::test]
async fn the_sandbox_allows_the_default_path_and_refuses_one_outside_its_roots() {
    let f = fixture();
    let sandbox =
        crate::Sandbox::new(crate::SandboxMode::WorkspaceWrite, std::slice::from_ref(&f.repo), &[]);
    let ws = Workspace::new(&f.repo).with_sandbox(sandbox);
    let active = ActiveWorktree::new();
    let enter = EnterWorktree::new(ws.clone(), active.clone());
    let err = model_error(call(&enter, json!({"branch": "out", "path": "../out"})).await);
    assert!(err.contains("is outside the workspace"), "{err}");
    assert!(!f.repo.join("../out").exists());
    call(&enter, json!({"branch": "in"})).await.unwrap();
    let write = Write::new(ws.clone());
    call(&write, json!({"path": "x.txt", "content": "x"})).await.unwrap();
    assert!(f.repo.join(".rab/worktrees/in/x.txt").exists());
    assert_eq!(active.current().await, Some(("in".to_owned(), f.repo.join(".rab/worktrees/in"))));
}
