//! The `enter_worktree` and `exit_worktree` tools: work on a new branch in a git
//! worktree of its own, so experiments leave the main checkout untouched, then keep the
//! worktree or remove it.
//!
//! Entering runs `git worktree add -b <branch> <path>` (by default under
//! `<repo>/.rab/worktrees/`, which gets a `.gitignore` of `*` so the main checkout does
//! not list it as untracked) and moves the shared [`Workspace`] root there, so every tool
//! of the workspace works in the worktree; entering from a subdirectory of the repo lands
//! in the same subdirectory of the worktree. Leaving moves the root back.
//!
//! The sandbox keeps the canonical roots it was built with: the default worktree path is
//! inside the repo root and so stays allowed, while a `path` outside the roots is refused
//! up front when the sandbox is on. git runs through the sandbox like `bash` does.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use rab_agent::{ABORTED, ExecutionMode, Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::Workspace;
use crate::sandbox::Access;

/// Where worktrees go by default, relative to the repository root.
pub const DEFAULT_DIR: &str = ".rab/worktrees";
/// Most lines of `git status` quoted when removal is refused.
const MAX_STATUS_LINES: usize = 20;

/// The worktree session `enter_worktree` started, shared with `exit_worktree`
/// (clones share it). Only one can be active at a time.
#[derive(Clone, Debug, Default)]
pub struct ActiveWorktree {
    inner: Arc<Mutex<Option<Session>>>,
}

impl ActiveWorktree {
    /// No worktree entered yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The active worktree's branch and path, if any.
    pub async fn current(&self) -> Option<(String, PathBuf)> {
        self.inner.lock().await.as_ref().map(|s| (s.branch.clone(), s.path.clone()))
    }
}

/// An entered worktree.
#[derive(Clone, Debug)]
struct Session {
    branch: String,
    path: PathBuf,
    /// The workspace root before entering, restored on exit.
    original_root: PathBuf,
    /// The main checkout, where git is run to remove the worktree.
    repo_root: PathBuf,
}

/// Creates a worktree on a new branch and moves the workspace into it.
pub struct EnterWorktree {
    ws: Workspace,
    active: ActiveWorktree,
}

impl EnterWorktree {
    /// The tool over the workspace, recording the session in `active`.
    pub fn new(ws: Workspace, active: ActiveWorktree) -> Self {
        Self { ws, active }
    }
}

/// Arguments of `enter_worktree`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct EnterArgs {
    /// New branch name.
    pub branch: String,
    /// Worktree directory (default .rab/worktrees/BRANCH).
    pub path: Option<String>,
}

impl Tool for EnterWorktree {
    type Args = EnterArgs;
    const NAME: &'static str = "enter_worktree";
    const LEVEL: ToolLevel = ToolLevel::Execute;

    fn description(&self) -> String {
        "Create a git worktree on a new branch and work there: all tools then use it as \
         the project root until exit_worktree."
            .to_owned()
    }

    // The root moves under every other tool.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    async fn run(&self, args: EnterArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let branch = args.branch.trim();
        if branch.is_empty() || branch.starts_with('-') {
            return Err(ToolError::Model(format!(
                "invalid branch name {branch:?}: give a name like fix-parser"
            )));
        }
        let mut active = self.active.inner.lock().await;
        if let Some(s) = active.as_ref() {
            return Err(ToolError::Model(format!(
                "already in worktree {} (branch {}); call exit_worktree first",
                s.path.display(),
                s.branch
            )));
        }
        let original_root = self.ws.root();
        let git = Git { ws: &self.ws, cancel: &cx.cancel };
        let top =
            git.run(&original_root, &["rev-parse", "--show-toplevel"]).await.map_err(|e| {
                ToolError::Model(format!(
                    "{} is not in a git repository: {e}",
                    original_root.display()
                ))
            })?;
        let repo_root = PathBuf::from(top.trim_end_matches(['\n', '\r']));
        let path = self.target(args.path.as_deref(), &repo_root, branch).await?;
        let shown = utf8(&path)?;
        git.run(&repo_root, &["worktree", "add", "-b", branch, shown])
            .await
            .map_err(|e| ToolError::Model(format!("could not create the worktree: {e}")))?;
        let root = same_subdir(&original_root, &repo_root, &path);
        self.ws.set_root(&root);
        *active = Some(Session {
            branch: branch.to_owned(),
            path: path.clone(),
            original_root: original_root.clone(),
            repo_root,
        });
        let text = format!(
            "created worktree {shown} on new branch {branch}; the tools now work in {} \
             (was {}). Call exit_worktree to keep or remove it.",
            root.display(),
            original_root.display()
        );
        let details = json!({
            "branch": branch,
            "path": shown,
            "root": root,
            "originalRoot": original_root,
        });
        Ok(ToolOutput::text(text).with_details(details))
    }
}

impl EnterWorktree {
    /// Where the worktree goes: `path` resolved against the root, or the default
    /// directory (made ignored) in the repository; checked against the sandbox.
    async fn target(
        &self,
        path: Option<&str>,
        repo_root: &Path,
        branch: &str,
    ) -> Result<PathBuf, ToolError> {
        let given = path.map(str::trim).filter(|p| !p.is_empty());
        let default_dir = repo_root.join(DEFAULT_DIR);
        let path = match given {
            Some(p) => self.ws.resolve(p),
            None => default_dir.join(branch),
        };
        // Checked before anything is created.
        self.ws.sandbox().check(&path, Access::Write).map_err(ToolError::Model)?;
        if given.is_none() {
            ignore_dir(&default_dir).await?;
        }
        Ok(path)
    }
}

/// Leaves the worktree, keeping or removing it, and moves the workspace back.
pub struct ExitWorktree {
    ws: Workspace,
    active: ActiveWorktree,
}

impl ExitWorktree {
    /// The tool over the workspace and the session `enter_worktree` records.
    pub fn new(ws: Workspace, active: ActiveWorktree) -> Self {
        Self { ws, active }
    }
}

/// What to do with the worktree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave it and its branch on disk.
    Keep,
    /// Delete it and its branch.
    Remove,
}

/// Arguments of `exit_worktree`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct ExitArgs {
    /// keep: leave worktree and branch on disk; remove: delete both.
    #[schemars(schema_with = "action_schema")]
    pub action: Action,
    /// Remove even with uncommitted changes (else refused).
    pub discard_changes: Option<bool>,
}

/// A plain string enum: derived, the variants' docs would make it a described `oneOf`.
fn action_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["keep", "remove"]})
}

impl Tool for ExitWorktree {
    type Args = ExitArgs;
    const NAME: &'static str = "exit_worktree";
    const LEVEL: ToolLevel = ToolLevel::Execute;

    fn description(&self) -> String {
        "Leave the worktree from enter_worktree and return to the original directory.".to_owned()
    }

    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    async fn run(&self, args: ExitArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let mut active = self.active.inner.lock().await;
        let Some(session) = active.clone() else {
            return Err(ToolError::Model(
                "not in a worktree; enter_worktree creates one".to_owned(),
            ));
        };
        let path = utf8(&session.path)?;
        let back = session.original_root.display();
        let branch = &session.branch;
        let details = json!({"branch": branch, "path": path, "action": args.action});
        let git = Git { ws: &self.ws, cancel: &cx.cancel };
        if args.action == Action::Keep {
            // Locked, so `git worktree prune` (and git's own gc) never drops it, even if
            // its directory is moved or on a disk that is not mounted.
            let locked = git
                .run(&session.repo_root, &["worktree", "lock", "--reason", "kept by rab", path])
                .await;
            self.ws.set_root(&session.original_root);
            *active = None;
            let text = match locked {
                Ok(_) => format!(
                    "left worktree {path}, kept and locked with its branch {branch}; back in \
                     {back}. Remove it later with: git worktree unlock {path} && git worktree \
                     remove {path} && git branch -D {branch}"
                ),
                Err(e) => format!(
                    "left worktree {path}, kept with its branch {branch} but not locked ({}); \
                     back in {back}. Remove it later with: git worktree remove {path} && git \
                     branch -D {branch}",
                    e.trim()
                ),
            };
            return Ok(ToolOutput::text(text).with_details(details));
        }
        if args.discard_changes != Some(true) {
            refuse_changes(&git, &session.path).await?;
        }
        git.run(&session.repo_root, &["worktree", "remove", "--force", path])
            .await
            .map_err(|e| ToolError::Model(format!("could not remove the worktree: {e}")))?;
        // The worktree is gone: whatever happens to the branch, the tools go back.
        self.ws.set_root(&session.original_root);
        *active = None;
        // `-d`, never `-D`: commits that are on no other branch are not thrown away.
        let text = match git.run(&session.repo_root, &["branch", "-d", branch]).await {
            Ok(deleted) => {
                let deleted = deleted.trim().trim_end_matches('.');
                format!("removed worktree {path}; {deleted}; back in {back}")
            }
            Err(e) => format!(
                "removed worktree {path} and went back to {back}; kept branch {branch}: it has \
                 commits not merged into the current branch ({}). Merge it, or delete it with \
                 `git branch -D {branch}` if its work is not wanted (ask the user first).",
                e.trim()
            ),
        };
        Ok(ToolOutput::text(text).with_details(details))
    }
}

/// Refuses when the worktree has uncommitted changes, quoting them.
async fn refuse_changes(git: &Git<'_>, path: &Path) -> Result<(), ToolError> {
    let status = git
        .run(path, &["status", "--porcelain"])
        .await
        .map_err(|e| ToolError::Model(format!("could not check the worktree for changes: {e}")))?;
    if status.trim().is_empty() {
        return Ok(());
    }
    let lines: Vec<&str> = status.lines().collect();
    let mut quoted = lines.iter().take(MAX_STATUS_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > MAX_STATUS_LINES {
        quoted.push_str(&format!("\n… and {} more", lines.len() - MAX_STATUS_LINES));
    }
    Err(ToolError::Model(format!(
        "worktree {} has uncommitted changes:\n{quoted}\nCommit them, use action keep, or \
         pass discard_changes: true to delete them",
        path.display()
    )))
}

/// Creates `dir` with a `.gitignore` of `*`, so the main checkout ignores its worktrees.
async fn ignore_dir(dir: &Path) -> Result<(), ToolError> {
    let err = |e: std::io::Error| ToolError::Model(format!("cannot create {}: {e}", dir.display()));
    tokio::fs::create_dir_all(dir).await.map_err(err)?;
    let ignore = dir.join(".gitignore");
    if tokio::fs::metadata(&ignore).await.is_err() {
        tokio::fs::write(&ignore, "*\n").await.map_err(err)?;
    }
    Ok(())
}

/// The new root: the worktree, or the same subdirectory of it the old root was in.
fn same_subdir(original_root: &Path, repo_root: &Path, worktree: &Path) -> PathBuf {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let sub = real(original_root);
    match sub.strip_prefix(real(repo_root)) {
        Ok(rel) if !rel.as_os_str().is_empty() && worktree.join(rel).is_dir() => worktree.join(rel),
        Ok(_) | Err(_) => worktree.to_path_buf(),
    }
}

fn utf8(path: &Path) -> Result<&str, ToolError> {
    path.to_str().ok_or_else(|| {
        ToolError::Model(format!("{} is not valid UTF-8; choose another path", path.display()))
    })
}

/// Runs git through the workspace's sandbox, without the keys rab scrubs and without
/// the variables that would point git at another repository.
struct Git<'a> {
    ws: &'a Workspace,
    cancel: &'a CancellationToken,
}

impl Git<'_> {
    /// git's stdout, or its stderr (with the command) when it fails.
    async fn run(&self, dir: &Path, args: &[&str]) -> Result<String, String> {
        let (program, wrapped) = self.ws.sandbox().wrap("git", args);
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(&wrapped)
            .current_dir(dir)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .env("GIT_TERMINAL_PROMPT", "0");
        for name in self.ws.sandbox().scrubbed_env() {
            cmd.env_remove(name);
        }
        for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"] {
            cmd.env_remove(name);
        }
        let shown = format!("git {}", args.join(" "));
        let output = tokio::select! {
            output = cmd.output() => output.map_err(|e| format!("{shown}: {e}"))?,
            () = self.cancel.cancelled() => return Err(format!("{shown}: {ABORTED}")),
        };
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(format!("{shown} failed ({}): {}", output.status, stderr.trim()))
    }
}

#[cfg(test)]
mod tests;
