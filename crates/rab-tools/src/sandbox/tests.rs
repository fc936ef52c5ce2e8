use super::*;
use pretty_assertions::assert_eq;

fn setup() -> (tempfile::TempDir, PathBuf, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "secret").unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let sb = Sandbox::new(SandboxMode::WorkspaceWrite, std::slice::from_ref(&ws), &[tmp]);
    (dir, ws, sb)
}

#[test]
fn paths_inside_the_roots_pass_and_new_files_may_be_created() {
    let (_d, ws, sb) = setup();
    assert_eq!(sb.check(&ws.join("src/a.rs"), Access::Read), Ok(()));
    assert_eq!(sb.check(&ws.join("new/dir/file.rs"), Access::Write), Ok(()));
}

#[test]
fn a_parent_escape_is_refused_with_the_rule_named() {
    let (_d, ws, sb) = setup();
    let outside = normalize(&ws.join("../outside.txt"));
    let err = sb.check(&outside, Access::Read).unwrap_err();
    assert!(err.contains("outside.txt is outside the workspace"), "{err}");
    assert!(err.contains("workspace-write") && err.contains("--add-dir"), "{err}");
}

#[test]
fn a_symlink_pointing_outside_is_refused_even_for_a_file_not_yet_created() {
    let (d, ws, sb) = setup();
    std::os::unix::fs::symlink(d.path(), ws.join("escape")).unwrap();
    let err = sb.check(&ws.join("escape/outside.txt"), Access::Read).unwrap_err();
    assert!(err.contains("which resolves to"), "{err}");
    assert!(sb.check(&ws.join("escape/new.txt"), Access::Write).is_err());
}

#[test]
fn read_only_refuses_every_write_and_off_allows_everything() {
    let (_d, ws, _) = setup();
    let ro = Sandbox::new(SandboxMode::ReadOnly, std::slice::from_ref(&ws), &[]);
    assert_eq!(ro.check(&ws.join("a"), Access::Read), Ok(()));
    let err = ro.check(&ws.join("a"), Access::Write).unwrap_err();
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(Sandbox::default().check(Path::new("/etc/passwd"), Access::Write), Ok(()));
}

#[test]
fn bash_output_files_in_the_temp_dir_are_readable_but_nothing_else_there() {
    let (d, _ws, sb) = setup();
    let tmp = d.path().join("tmp");
    assert_eq!(sb.check(&tmp.join("rab-bash-0123.log"), Access::Read), Ok(()));
    assert!(sb.check(&tmp.join("rab-bash-0123.log"), Access::Write).is_err());
    assert!(sb.check(&tmp.join("other.txt"), Access::Read).is_err());
}

#[test]
fn spawned_programs_go_through_the_helper_only_when_confined() {
    let (_d, ws, sb) = setup();
    let (program, args) = sb.wrap("sh", &["-c", "true"]);
    assert_eq!((program.to_str(), args.len()), (Some("sh"), 2), "no helper: run directly");
    let sb = sb.with_helper(Some(PathBuf::from("/usr/bin/rab"))).with_network(true);
    let (program, args) = sb.wrap("sh", &["-c", "true"]);
    assert_eq!(program, "/usr/bin/rab");
    let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(args[0], HELPER_ARG);
    assert!(args.contains(&real_path(&ws).display().to_string()), "{args:?}");
    assert_eq!(&args[args.len() - 5..], ["--net", "--", "sh", "-c", "true"]);
}

#[test]
fn missing_landlock_features_are_named_only_when_asked_for() {
    let all = LandlockSupport {
        files: true,
        truncate: true,
        network: true,
        ioctl: true,
        scopes: true,
        abi: 6,
    };
    assert!(all.missing(true).is_empty());
    let old = LandlockSupport { network: false, ioctl: false, scopes: true, abi: 3, ..all };
    assert_eq!(old.missing(true), ["network blocking (Linux 6.7+)", "device ioctl (Linux 6.10+)"]);
    assert_eq!(old.missing(false), ["device ioctl (Linux 6.10+)"], "network allowed: not needed");
    assert_eq!(LandlockSupport::default().missing(false).len(), 1);
}

#[test]
fn the_namespace_view_carries_protected_hidden_and_private_paths_and_user_commands_skip_protection()
{
    let (d, ws, sb) = setup();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "").unwrap();
    let secret = d.path().join("rab-home");
    std::fs::create_dir_all(&secret).unwrap();
    let private = Arc::new(PrivateDir::create(d.path()).unwrap());
    let sb = sb
        .with_helper(Some(PathBuf::from("/usr/bin/rab")))
        .with_namespaces(true)
        .with_hidden(&[secret.clone(), d.path().join("missing")])
        .with_private_dir(Some(private.clone()))
        .with_scrubbed_env(vec!["X_API_KEY".into()]);
    let spec = |sb: &Sandbox| {
        let (_, args) = sb.wrap("sh", &["-c", "true"]);
        spec::Spec::parse(args[1..].to_vec()).unwrap()
    };
    let s = spec(&sb);
    let ws = real_path(&ws);
    assert!(s.namespaces);
    assert_eq!(s.tmp, Some(private.tmp()));
    assert_eq!(s.hidden, [real_path(&secret)], "what does not exist is not hidden");
    assert!(
        s.read_only.contains(&ws.join(".git/config"))
            && s.read_only.contains(&ws.join(".git/hooks"))
    );
    assert!(s.pinned.contains(&ws.join(".git")));
    assert!(s.guarded.iter().any(|g| g.path == ws.join(".mcp.json")));
    assert!(s.writable.contains(&ws));
    assert!(
        !s.writable.iter().any(|w| w.starts_with("/tmp") && !w.starts_with(&ws)),
        "/tmp is private: {:?}",
        s.writable
    );
    let user = spec(&sb.for_user_commands());
    assert!(user.read_only.is_empty() && user.guarded.is_empty(), "`!cmd` may change them");
    assert!(user.namespaces && user.tmp.is_some(), "but is confined as well");
    for name in ["X_API_KEY", "TMUX", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST"] {
        assert!(sb.scrubbed_env().iter().any(|n| n == name), "{name}");
    }
}
