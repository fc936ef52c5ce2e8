#![deny(missing_docs)]

//! rab-tools: the built-in tools, one file each.
//!
//! It owns `read`, `write`, `edit`, `bash` (with background shells, [`Shells`]), `grep`,
//! `glob`, `ls`, `sleep`, `todo_write`, `bash_output`, `kill_shell`, `enter_worktree`,
//! `exit_worktree`, `web_fetch` and `web_search` (which the model's provider runs), output truncation ([`truncate`]) and path resolution against the
//! workspace root ([`Workspace`], which a worktree can move). It must not know which mode
//! or UI runs it: tools get arguments and a [`rab_agent::ToolContext`] and return a
//! [`rab_agent::ToolOutput`].
//!
//! ```
//! let tools = rab_tools::builtin(std::path::Path::new("."));
//! let names: Vec<String> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names, [
//!     "read", "write", "edit", "bash", "grep", "glob", "ls", "sleep", "todo_write",
//!     "bash_output", "kill_shell", "enter_worktree", "exit_worktree", "web_fetch",
//!     "web_search", "brief",
//! ]);
//! ```

pub mod apply_patch;
pub mod atomic_write;
pub mod bash;
pub mod bash_output;
#[cfg(unix)]
pub mod beneath;
pub mod brief;
pub mod edit;

/// The command tool for this platform: `bash` (sh) on Unix, `powershell` on Windows.
fn command_tool(bash: bash::Bash) -> Arc<dyn AgentTool> {
    if cfg!(windows) { Arc::new(bash::PowerShell::new(bash)) } else { Arc::new(bash) }
}

/// The `powershell` tool beside `bash` where PowerShell 7 is on `PATH` (not on
/// Windows, whose command tool is PowerShell already).
fn pwsh_tool(ws: &Workspace, shells: &Shells) -> Option<Arc<dyn AgentTool>> {
    (!cfg!(windows) && shell::on_path("pwsh").is_some()).then(|| {
        let bash = bash::Bash::new(ws.clone()).with_shells(shells.clone());
        Arc::new(bash::PowerShell::pwsh(bash)) as Arc<dyn AgentTool>
    })
}

#[cfg(test)]
mod edit_corpus_tests;
mod edit_faithful;
mod edit_forms;
mod edit_indent;
mod edit_lines;
mod edit_match;
mod edit_table;
mod edit_tokens;
mod edit_typography;
mod edit_views;
pub mod editor_files;
pub mod glob;
pub mod grep;
pub mod handle;
pub mod image_fit;
pub mod kill_shell;
pub mod ls;
mod patch_parse;
pub mod read;
#[cfg(test)]
mod read_filter_tests;
pub mod sandbox;
pub mod shell;
pub mod shells;
pub mod sleep;
#[cfg(test)]
mod test_support;
mod text_diff;
pub mod todo;
pub mod truncate;
pub mod web_fetch;
pub mod web_search;
mod workspace;
pub mod worktree;
pub mod write;

pub use sandbox::{Sandbox, SandboxMode};
pub use shells::Shells;
pub use text_diff::unified as unified_diff;
pub use workspace::{ReadFilter, Redact, Workspace, hidden_note, normalize};

use std::path::Path;
use std::sync::Arc;

use rab_agent::AgentTool;

/// The core tools, rooted at `root` (the project directory), in prompt order.
pub fn builtin(root: &Path) -> Vec<Arc<dyn AgentTool>> {
    builtin_in(&Workspace::new(root))
}

/// The core tools in a configured workspace (home for `~`, temporary directory).
pub fn builtin_in(ws: &Workspace) -> Vec<Arc<dyn AgentTool>> {
    // One registry of background shells for the three tools that use it; dropping the
    // tools kills what is left running.
    let shells = Shells::new();
    let worktree = worktree::ActiveWorktree::new();
    let pwsh = pwsh_tool(ws, &shells);
    [
        Arc::new(read::Read::new(ws.clone())) as Arc<dyn AgentTool>,
        Arc::new(write::Write::new(ws.clone())),
        Arc::new(edit::Edit::new(ws.clone())),
        command_tool(bash::Bash::new(ws.clone()).with_shells(shells.clone())),
        Arc::new(grep::Grep::new(ws.clone())),
        Arc::new(glob::Glob::new(ws.clone())),
        Arc::new(ls::Ls::new(ws.clone())),
        Arc::new(sleep::Sleep::new()),
        Arc::new(todo::TodoWrite::new()),
        Arc::new(bash_output::BashOutput::new(shells.clone())),
        Arc::new(kill_shell::KillShell::new(shells)),
        Arc::new(worktree::EnterWorktree::new(ws.clone(), worktree.clone())),
        Arc::new(worktree::ExitWorktree::new(ws.clone(), worktree)),
        Arc::new(web_fetch::WebFetch::new()),
        Arc::new(web_search::WebSearch::default()),
        Arc::new(brief::Brief::new(ws.clone())),
    ]
    .into_iter()
    .chain(pwsh)
    .collect()
}
