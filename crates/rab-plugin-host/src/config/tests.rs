use super::*;

struct Setup {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    /// The user's own plugin `hello` (a folder in ~/.rab/extensions).
    own: PathBuf,
    /// The project's plugin `hello` (a folder in .rab/extensions).
    projects: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, work, outside) = (root.join("home"), root.join("work"), root.join("outside"));
    let own = home.join("extensions/hello");
    let projects = work.join(".rab/extensions/hello");
    for d in [&work.join("docs"), &work.join("out"), &outside, &own, &projects] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(own.join("hello.wasm"), "own bytes").unwrap();
    std::fs::write(projects.join("hello.wasm"), "project bytes").unwrap();
    Setup { _tmp: tmp, home, work, outside, own, projects }
}

fn settings(s: &Setup, trusted: bool, plugin: &Path) -> (Settings, Vec<String>) {
    let mut warnings = Vec::new();
    let settings = Sources::new(&s.home, &s.work, trusted).settings(plugin, &mut warnings).unwrap();
    (settings, warnings)
}

#[test]
fn layers_override_and_grants_stay_inside_the_workspace() {
    let s = setup();
    std::fs::write(
        s.own.join("config.toml"),
        "[limits]\nfuel = 10\ntime-secs = 2\n[config]\na = 1\nb = \"x\"\n",
    )
    .unwrap();
    std::fs::write(
        s.home.join("extensions.toml"),
        "[plugins.hello]\nlimits.fuel = 20\nconfig.b = \"y\"\n",
    )
    .unwrap();
    let (own, _) = settings(&s, true, &s.own);
    assert_eq!(own.limits.fuel, 20);
    assert_eq!(own.limits.time, Duration::from_secs(2));
    assert_eq!(own.config, r#"{"a":1,"b":"y"}"#);

    std::fs::write(
        s.work.join(".rab/extensions.toml"),
        format!(
            "[plugins.hello.grants]\nfiles = [\"docs\", \"../outside\", \"{}\"]\nwrite = \
             [\"out\"]\n",
            s.outside.display()
        ),
    )
    .unwrap();
    let (project, warnings) = settings(&s, true, &s.projects);
    let dirs: Vec<_> = project.grants.dirs.iter().map(|d| (d.guest[1].clone(), d.write)).collect();
    assert_eq!(dirs, [("docs".to_owned(), false), ("out".to_owned(), true)]);
    let outside: Vec<_> = warnings.iter().filter(|w| w.contains("outside the workspace")).collect();
    assert_eq!(outside.len(), 2, "{warnings:?}");
    assert!(!project.grants.network);

    // A project cannot let a plugin reach local services; the user's own file can.
    std::fs::write(
        s.work.join(".rab/extensions.toml"),
        "[plugins.hello.grants]\nnetwork = true\nprivate-network = true\n",
    )
    .unwrap();
    let (p, warnings) = settings(&s, true, &s.projects);
    assert!(p.grants.network && !p.grants.private_network, "{:?}", p.grants);
    assert!(warnings.iter().any(|w| w.contains("private-network")), "{warnings:?}");
    std::fs::write(s.own.join("config.toml"), "[grants]\nnetwork = true\nprivate-network = true\n")
        .unwrap();
    let (o, _) = settings(&s, true, &s.own);
    assert!(o.grants.network && o.grants.private_network, "{:?}", o.grants);

    // An untrusted folder's file grants nothing.
    let (untrusted, _) = settings(&s, false, &s.projects);
    assert!(untrusted.grants.dirs.is_empty() && !untrusted.grants.network);

    // A typo is an error naming the file.
    std::fs::write(s.home.join("extensions.toml"), "[plugins.hello]\nlimit.fuel = 1\n").unwrap();
    let e = Sources::new(&s.home, &s.work, false).settings(&s.own, &mut Vec::new()).unwrap_err();
    assert!(e.contains("extensions.toml") && e.contains("limit"), "{e}");
}

#[test]
fn issue_34_grants_are_bound_to_the_plugins_source_not_its_name() {
    let s = setup();
    // The user grants their own `hello` local services.
    std::fs::write(
        s.home.join("extensions.toml"),
        "[plugins.hello.grants]\nnetwork = true\nprivate-network = true\n",
    )
    .unwrap();
    let (own, _) = settings(&s, true, &s.own);
    assert!(own.grants.private_network);
    // The project's plugin of the same name gets none of it, and the warning says how
    // to grant it.
    let (project, warnings) = settings(&s, true, &s.projects);
    assert!(!project.grants.network && !project.grants.private_network, "{:?}", project.grants);
    let hash = sha256_hex(b"project bytes");
    assert!(
        warnings.iter().any(|w| w.contains("your own plugins") && w.contains(&hash)),
        "{warnings:?}"
    );
    // A project's table does not reach the user's own plugin.
    std::fs::write(
        s.work.join(".rab/extensions.toml"),
        "[plugins.hello.grants]\nfiles = [\"docs\"]\nwrite = [\"out\"]\n",
    )
    .unwrap();
    let (own, warnings) = settings(&s, true, &s.own);
    assert!(own.grants.dirs.is_empty(), "{:?}", own.grants);
    assert!(warnings.iter().any(|w| w.contains("the project's own plugins")), "{warnings:?}");

    // Pinned by source and hash, the user's table applies to the project's plugin…
    let pinned = |sha: &str| {
        format!(
            "[plugins.theirs]\nsource = {:?}\nsha256 = \"{sha}\"\ngrants.network = true\n",
            s.projects.display().to_string()
        )
    };
    std::fs::write(s.home.join("extensions.toml"), pinned(&hash)).unwrap();
    let (project, _) = settings(&s, true, &s.projects);
    assert!(project.grants.network);
    // …until the plugin changes.
    std::fs::write(s.projects.join("hello.wasm"), "new project bytes").unwrap();
    let (project, warnings) = settings(&s, true, &s.projects);
    assert!(!project.grants.network);
    assert!(warnings.iter().any(|w| w.contains("changed since")), "{warnings:?}");
    // A source without a hash pins nothing.
    std::fs::write(
        s.home.join("extensions.toml"),
        format!(
            "[plugins.theirs]\nsource = {:?}\ngrants.network = true\n",
            s.projects.display().to_string()
        ),
    )
    .unwrap();
    let (project, warnings) = settings(&s, true, &s.projects);
    assert!(!project.grants.network);
    assert!(warnings.iter().any(|w| w.contains("needs the sha256")), "{warnings:?}");
}
