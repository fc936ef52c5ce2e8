use super::*;
use pretty_assertions::assert_eq;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("SKILL.md"), text).unwrap();
    d.join("SKILL.md")
}

#[test]
fn skills_load_with_their_fields_and_the_first_directory_wins() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(
        a.path(),
        "pdf",
        "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: [read, bash]\n---\nUse $ARGUMENTS, first $1.\n",
    );
    write(b.path(), "pdf", "---\nname: pdf\ndescription: other\n---\nx\n");
    write(
        b.path(),
        "deploy",
        "---\nname: deploy\ndescription: Deploy\ndisable-model-invocation: true\n---\nShip it.\n",
    );
    let mut warnings = Vec::new();
    let skills =
        load_skills(&[a.path().into(), b.path().into()], &Default::default(), &mut warnings);
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["pdf", "deploy"]);
    assert_eq!(skills[0].allowed_tools, ["read", "bash"]);
    assert_eq!(
        skills[0].invoke("a.pdf b.pdf"),
        format!(
            "<skill name=\"pdf\" location=\"{}\">\nUse a.pdf b.pdf, first a.pdf.\n</skill>",
            a.path().join("pdf").display()
        )
    );
    let block = prompt_block(&skills);
    assert!(block.contains("<skill name=\"pdf\">Fill PDF forms</skill>"), "{block}");
    assert!(!block.contains("deploy"), "user-only skills are not listed: {block}");
}

#[test]
fn a_malformed_skill_is_a_warning_naming_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("nofront", "just text", "frontmatter"),
        ("Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\n", "'name'"),
        ("other", "---\nname: elsewhere\ndescription: d\n---\n", "match the directory"),
        ("nodesc", "---\nname: nodesc\n---\n", "'description'"),
        (
            "flag",
            "---\nname: flag\ndescription: d\ndisable-model-invocation: maybe\n---\n",
            "'disable-model-invocation'",
        ),
        (
            "huge",
            &format!("---\nname: huge\ndescription: d\n---\n{}", "x".repeat(300 * 1024)),
            "256 KB",
        ),
    ];
    for (name, text, field) in cases {
        let path = write(dir.path(), name, text);
        let mut warnings = Vec::new();
        let skills = load_skills(&[dir.path().into()], &Default::default(), &mut warnings);
        let w = warnings.iter().find(|w| w.starts_with(&path.display().to_string()));
        assert!(w.is_some_and(|w| w.contains(field)), "{name}: {warnings:?}");
        assert!(!skills.iter().any(|s| s.dir.ends_with(name)));
        std::fs::remove_dir_all(dir.path().join(name)).unwrap();
    }
}

#[test]
fn allowed_tools_keep_the_spaces_inside_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "git",
        "---\nname: git\ndescription: Git help\nallowed-tools: Bash(git status:*) Bash(git add:*), Read\n---\nGo.\n",
    );
    let mut warnings = Vec::new();
    let skills = load_skills(&[dir.path().into()], &Default::default(), &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(skills[0].allowed_tools, ["Bash(git status:*)", "Bash(git add:*)", "Read"]);
}
