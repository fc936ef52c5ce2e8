use super::*;

/// A home with a secret outside the project, and the project folder.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".ssh")).unwrap();
    std::fs::write(root.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let project = root.join("src/cloned");
    std::fs::create_dir_all(project.join(".rab")).unwrap();
    (d, root, project)
}

fn deny_ssh(root: &Path) -> ReadFilter {
    let ssh = root.join(".ssh");
    ReadFilter::new(move |p| p.starts_with(&ssh))
}

#[test]
fn a_link_out_of_an_untrusted_project_is_not_followed_and_named() {
    let (_d, root, project) = setup();
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), project.join("AGENTS.md")).unwrap();
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), None, false);
    assert_eq!(reader.instructions(&project.join("AGENTS.md")), None);
    let warnings = reader.take_warnings();
    assert!(
        warnings.len() == 1
            && warnings[0].contains("AGENTS.md")
            && warnings[0].contains("not trusted")
            && warnings[0].contains("id_ed25519"),
        "{warnings:?}"
    );
    // A definition says the same as its error.
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), project.join(".rab/x.md")).unwrap();
    let err = reader.definition(&project.join(".rab/x.md")).unwrap_err();
    assert!(err.contains("outside the project"), "{err}");
}

#[test]
fn a_link_out_of_the_repository_counts_from_a_subfolder_too() {
    let (_d, root, project) = setup();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), project.join("CLAUDE.md")).unwrap();
    let sub = project.join("sub");
    let reader = PromptFiles::new(&sub, std::slice::from_ref(&sub), None, false);
    assert_eq!(reader.instructions(&project.join("CLAUDE.md")), None);
}

#[test]
fn a_trusted_project_follows_a_link_unless_a_read_rule_denies_its_target() {
    let (_d, root, project) = setup();
    std::fs::write(root.join("notes.md"), "shared notes").unwrap();
    std::os::unix::fs::symlink(root.join("notes.md"), project.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), project.join("CLAUDE.md")).unwrap();
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), None, true)
        .with_read_filter(deny_ssh(&root));
    assert_eq!(reader.instructions(&project.join("AGENTS.md")).as_deref(), Some("shared notes"));
    assert_eq!(reader.instructions(&project.join("CLAUDE.md")), None);
    let warnings = reader.take_warnings();
    assert!(warnings[0].contains("read deny rule"), "{warnings:?}");
}

#[test]
fn the_users_own_files_are_read_under_the_read_rules_too() {
    let (_d, root, project) = setup();
    let rab_home = root.join("rab");
    std::fs::create_dir_all(&rab_home).unwrap();
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), rab_home.join("AGENTS.md")).unwrap();
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), None, false);
    // The user's own link, no rule: followed (it is not the repository's doing).
    assert_eq!(reader.instructions(&rab_home.join("AGENTS.md")).as_deref(), Some("PRIVATE KEY"));
    let reader = reader.with_read_filter(deny_ssh(&root));
    assert_eq!(reader.instructions(&rab_home.join("AGENTS.md")), None);
}

#[test]
fn what_is_read_goes_through_the_secret_firewall() {
    let (_d, _root, project) = setup();
    std::fs::write(project.join("AGENTS.md"), "key: sk-live-1234").unwrap();
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), None, false)
        .with_redact(Redact::new(|t| t.replace("sk-live-1234", "[REDACTED]")));
    assert_eq!(reader.instructions(&project.join("AGENTS.md")).as_deref(), Some("key: [REDACTED]"));
    assert!(reader.take_warnings()[0].contains("redacted"));
}

#[test]
fn only_regular_files_of_a_bounded_size_are_read() {
    let (_d, _root, project) = setup();
    let fifo = project.join("AGENTS.md");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), None, true);
    assert_eq!(reader.instructions(&fifo), None);
    assert!(reader.take_warnings()[0].contains("not a regular file"));
    std::fs::write(project.join("CLAUDE.md"), "x".repeat(2 * 1024 * 1024)).unwrap();
    assert_eq!(reader.instructions(&project.join("CLAUDE.md")), None);
    assert!(reader.take_warnings()[0].contains("KB"));
    // Missing or empty: nothing, and nothing to say.
    std::fs::write(project.join(".rab/SYSTEM.md"), "  \n").unwrap();
    assert_eq!(reader.instructions(&project.join(".rab/SYSTEM.md")), None);
    assert_eq!(reader.instructions(&project.join("missing.md")), None);
    assert!(reader.take_warnings().is_empty());
}

#[test]
fn a_repository_at_home_does_not_make_home_the_project() {
    let (_d, root, project) = setup();
    // A dotfiles repository at home; the checkout has no .git of its own.
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::os::unix::fs::symlink(root.join(".ssh/id_ed25519"), project.join("AGENTS.md")).unwrap();
    let reader = PromptFiles::new(&project, std::slice::from_ref(&project), Some(&root), false);
    assert_eq!(reader.instructions(&project.join("AGENTS.md")), None);
}
