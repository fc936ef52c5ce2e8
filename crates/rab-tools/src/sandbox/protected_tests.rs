use super::*;
use pretty_assertions::assert_eq;

#[test]
fn the_documented_paths_are_protected_and_ordinary_files_are_not() {
    for p in [
        ".git/hooks/post-commit",
        ".git/hooks",
        ".git/config",
        ".git/commondir",
        ".git/modules/sub/config",
        ".git/modules/a/modules/b/hooks/pre-push",
        ".rab/settings.json",
        ".rab/settings.local.json",
        ".rab/extensions.toml",
        ".claude/settings.json",
        ".mcp.json",
        ".agents/skills/x/SKILL.md",
        ".agent/skills/y/SKILL.md",
        "AGENTS.md",
        "docs/AGENTS.md",
        "CLAUDE.md",
        "AGENTS.local.md",
        "sub/CLAUDE.local.md",
        ".envrc",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".vscode/launch.json",
        ".idea/workspace.xml",
        ".git",
        ".rab/worktrees/fix/.mcp.json",
    ] {
        assert!(is_protected_rel(Path::new(p)), "{p} should be protected");
    }
    for p in [
        "src/main.rs",
        ".git/objects/ab/cdef",
        ".git/refs/heads/main",
        ".git/index",
        ".git/HEAD",
        ".git/modules/sub/objects/ab/cd",
        ".vscode/extensions.json",
        ".rab/worktrees/fix/src/lib.rs",
        ".rab/worktrees",
        "README.md",
        ".gitignore",
    ] {
        assert!(!is_protected_rel(Path::new(p)), "{p} should not be protected");
    }
}

#[test]
fn rab_home_and_shell_start_up_files_are_protected_outside_the_workspace() {
    let roots = [PathBuf::from("/w/p")];
    let home = Path::new("/home/u");
    let rab = Path::new("/home/u/.rab");
    let is = |p: &str| is_protected(Path::new(p), &roots, Some(home), Some(rab));
    assert!(is("/home/u/.rab/agent/settings.json"));
    assert!(is("/home/u/.bashrc"));
    assert!(is("/home/u/.config/fish/config.fish"));
    assert!(is("/home/u/.ssh/config"));
    assert!(is("/w/p/.git/config"));
    assert!(!is("/w/p/src/a.rs"));
    assert!(!is("/home/u/notes.txt"));
    assert!(!is("/etc/hosts"));
}

#[test]
fn the_plan_makes_existing_paths_read_only_guards_missing_ones_and_pins_their_folders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join(".git/modules/sub/hooks")).unwrap();
    std::fs::write(root.join(".git/modules/sub/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/modules/sub/config"), "").unwrap();
    std::fs::create_dir_all(root.join(".vscode")).unwrap();
    std::fs::write(root.join("CLAUDE.md"), "x").unwrap();
    std::os::unix::fs::symlink("CLAUDE.md", root.join("AGENTS.md")).unwrap();
    std::fs::create_dir_all(root.join(".rab/worktrees/fix")).unwrap();
    let plan = plan(root, None);
    for p in [".git/hooks", ".git/config", ".git/modules/sub/config", ".git/modules/sub/hooks"] {
        assert!(plan.read_only.contains(&root.join(p)), "{p}: {plan:?}");
    }
    assert!(plan.read_only.contains(&root.join("CLAUDE.md")));
    assert!(plan.read_only.contains(&root.join(".rab")));
    for p in [".git", ".vscode", ".git/modules", ".git/modules/sub"] {
        assert!(plan.pinned.contains(&root.join(p)), "{p}: {plan:?}");
    }
    let guarded = |p: &str| plan.guarded.iter().find(|g| g.path == root.join(p)).cloned();
    assert_eq!(guarded("AGENTS.md").unwrap().link, Some(PathBuf::from("CLAUDE.md")));
    assert_eq!(guarded(".mcp.json").unwrap().link, None);
    assert_eq!(guarded(".vscode/tasks.json").unwrap().link, None);
    assert_eq!(plan.writable, [root.join(".rab/worktrees")]);
}
