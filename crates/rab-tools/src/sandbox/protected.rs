//! Protected paths: the files and folders of a workspace that hold code or settings
//! something runs later without asking — git's hooks and config (the user's next
//! `git commit` or `git status`), rab's and Claude Code's settings, MCP server lists,
//! skills and instruction files (the next session), direnv and editor task files (the
//! next `cd` or folder open) — and the user's shell start-up files.
//!
//! They are read-only inside the sandbox, and every file-tool write to one asks, in
//! every mode. This module is the one list both use: [`is_protected`] answers for a
//! path, [`plan`] says what the sandbox pins for a workspace root.

use std::path::{Component, Path, PathBuf};

/// Protected paths under a workspace root, as documented in docs/permissions.md.
/// `.git/modules` stands for the config and hooks of every submodule's git folder.
pub const UNDER_ROOT: [&str; 20] = [
    ".git/hooks",
    ".git/config",
    // Either would make git read another config: `commondir` points the repository at
    // another folder's config, `config.worktree` is read when the config enables it.
    ".git/commondir",
    ".git/config.worktree",
    ".git/modules",
    ".rab",
    ".claude",
    ".mcp.json",
    ".agents",
    ".agent",
    "AGENTS.md",
    "CLAUDE.md",
    "AGENTS.local.md",
    "CLAUDE.local.md",
    ".envrc",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".vscode/launch.json",
    ".idea",
    // A `.git` file (a worktree's or a submodule's) names the git folder to use: a new
    // one would point git at a folder with another config.
    ".git",
];

/// Shell start-up files and other files under the home folder that run code when the
/// user next opens a shell, uses git or ssh.
pub const UNDER_HOME: [&str; 19] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".config/systemd/user",
    ".config/autostart",
];

/// Whether `rel`, a path relative to a workspace root (folded, no `..`), is protected.
/// A worktree rab made (`.rab/worktrees/NAME/…`) is a root of its own.
pub fn is_protected_rel(rel: &Path) -> bool {
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    is_protected_parts(&parts)
}

fn is_protected_parts(parts: &[&str]) -> bool {
    match parts {
        [] => false,
        [".rab", "worktrees", _name, rest @ ..] if !rest.is_empty() => is_protected_parts(rest),
        [".rab", "worktrees"] | [".rab", "worktrees", _] => false,
        [".git", "modules", rest @ ..] => {
            // A submodule's git folder: its config and hooks, at any depth of nesting.
            rest.len() >= 2
                && (rest.contains(&"hooks")
                    || rest
                        .last()
                        .is_some_and(|l| ["config", "commondir", "config.worktree"].contains(l)))
        }
        // Instruction files are read from whichever folder rab starts in.
        [.., "AGENTS.md" | "CLAUDE.md" | "AGENTS.local.md" | "CLAUDE.local.md"] => true,
        // `.git` itself (a file naming the git folder); what is in a `.git` folder is
        // protected entry by entry.
        [".git"] => true,
        _ => UNDER_ROOT.iter().copied().filter(|e| *e != ".git").any(|entry| {
            let e: Vec<&str> = entry.split('/').collect();
            parts.len() >= e.len() && parts[..e.len()] == e[..]
        }),
    }
}

/// Whether `rel`, relative to the home folder, is one of [`UNDER_HOME`] or inside one.
pub fn is_protected_home_rel(rel: &Path) -> bool {
    UNDER_HOME.iter().any(|entry| rel.starts_with(entry))
}

/// Whether the absolute, folded `path` is protected: under one of `roots`, under `home`
/// (its start-up files) or under `rab_home` (rab's own settings and keys).
pub fn is_protected(
    path: &Path,
    roots: &[PathBuf],
    home: Option<&Path>,
    rab_home: Option<&Path>,
) -> bool {
    if rab_home.is_some_and(|h| path.starts_with(h)) {
        return true;
    }
    if roots.iter().any(|r| path.strip_prefix(r).is_ok_and(is_protected_rel)) {
        return true;
    }
    home.is_some_and(|h| path.strip_prefix(h).is_ok_and(is_protected_home_rel))
}

/// What the sandbox does with a root's protected paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Existing protected files and folders: mounted read-only.
    pub read_only: Vec<PathBuf>,
    /// Folders between the root and a protected path, and `.git`: mounted onto
    /// themselves (still writable) so they cannot be renamed away and replaced.
    pub pinned: Vec<PathBuf>,
    /// Protected paths that are missing or symbolic links: what a command leaves there
    /// is put back as it was when it ends.
    pub guarded: Vec<Guarded>,
    /// rab's worktrees under `.rab/worktrees`: writable again inside the read-only `.rab`.
    pub writable: Vec<PathBuf>,
    /// Roots without a `.git`: one a command makes (`git init`) is checked when it
    /// ends, and hooks or config that run programs are taken out.
    pub fresh_git: Vec<PathBuf>,
}

/// A protected path the sandbox cannot mount over, and how it was at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guarded {
    /// The workspace root it is under (it is put back through the root's handle).
    pub root: PathBuf,
    /// The path.
    pub path: PathBuf,
    /// The symbolic link's target, or `None` when the path did not exist.
    pub link: Option<PathBuf>,
}

/// The sandbox's plan for the protected paths under `root` (canonical), plus those of
/// `home` when it lies inside `root`.
pub fn plan(root: &Path, home: Option<&Path>) -> Plan {
    let mut plan = Plan::default();
    let git = root.join(".git");
    let git_is_dir = std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir());
    for entry in UNDER_ROOT.iter().copied() {
        if entry.starts_with(".git/") && !git_is_dir {
            continue;
        }
        if entry == ".git" && git_is_dir {
            plan.pinned.push(git.clone());
            continue;
        }
        if entry == ".git" && std::fs::symlink_metadata(&git).is_err() {
            plan.fresh_git.push(root.to_path_buf());
            continue;
        }
        if entry == ".git/modules" {
            submodules(&git.join("modules"), 0, &mut plan);
            continue;
        }
        add(root, &root.join(entry), &mut plan);
    }
    if let Some(home) = home.filter(|h| h.starts_with(root)) {
        for entry in UNDER_HOME {
            add(root, &home.join(entry), &mut plan);
        }
    }
    // rab's worktrees stay writable inside the read-only `.rab` (git must be able to
    // remove them); their own protected paths are the file tools' to guard.
    let worktrees = root.join(".rab/worktrees");
    if std::fs::symlink_metadata(&worktrees).is_ok_and(|m| m.is_dir()) {
        plan.writable.push(worktrees);
    }
    plan.pinned.sort();
    plan.pinned.dedup();
    plan
}

/// Plans `path` under `root`: read-only when it is a file or folder, guarded when it is
/// missing or a link; its folders between the root and it pinned. A path reached
/// through a link in one of its folders is left alone (the link leads elsewhere).
fn add(root: &Path, path: &Path, plan: &mut Plan) {
    let mut dirs = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        match std::fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => dirs.push(d.to_path_buf()),
            Ok(_) => return,
            Err(_) => {}
        }
        dir = d.parent();
    }
    let guard = |link| Guarded { root: root.to_path_buf(), path: path.to_path_buf(), link };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            plan.guarded.push(guard(std::fs::read_link(path).ok()));
        }
        Ok(_) => plan.read_only.push(path.to_path_buf()),
        Err(_) => plan.guarded.push(guard(None)),
    }
    plan.pinned.extend(dirs);
}

/// The config and hooks of the submodules' git folders under `dir` (a folder with a
/// `HEAD`; a submodule named `a/b` sits in `a/`), nested ones too.
fn submodules(dir: &Path, depth: usize, plan: &mut Plan) {
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    plan.pinned.push(dir.to_path_buf());
    for entry in entries.flatten() {
        let sub = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if !sub.join("HEAD").is_file() {
            submodules(&sub, depth + 1, plan);
            continue;
        }
        plan.pinned.push(sub.clone());
        for name in ["config", "hooks", "commondir", "config.worktree"] {
            let p = sub.join(name);
            if std::fs::symlink_metadata(&p).is_ok() {
                plan.read_only.push(p);
            }
        }
        submodules(&sub.join("modules"), depth + 1, plan);
    }
}

#[cfg(test)]
#[path = "protected_tests.rs"]
mod tests;
