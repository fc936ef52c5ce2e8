//! Everyday work inside the namespace sandbox (issue 33): `cargo build` and `cargo
//! test`, `npm install`, `pip install --user` and `git commit` run as the model's bash
//! calls with the default sandbox, and nothing they write lands where it could run
//! later outside it.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, put, stderr, walk};

fn has_namespaces() -> bool {
    let probe = rab_tools::sandbox::probe_namespaces(Path::new(env!("CARGO_BIN_EXE_rab")));
    if !probe.is_available {
        eprintln!("skipped: the namespace sandbox is not available here: {:?}", probe.why_not);
    }
    probe.is_available
}

/// Runs `commands` as bash calls in `dir` (trusted, yolo), with `env` added; returns
/// each call's result.
fn run_commands(home: &Home, dir: &Path, env: &[(&str, String)], commands: &[&str]) -> Vec<String> {
    let mut script: Vec<Turn> = commands
        .iter()
        .map(|c| Turn::tool_call("bash", json!({"command": c, "timeout": 300})))
        .collect();
    script.push(Turn::text("ok"));
    let llm = FakeLlm::start();
    llm.script(script);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.current_dir(dir).env("RAB_TRUST_PROJECT", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(["-p", "--yolo", "go"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = llm.requests();
    requests
        .last()
        .map(|r| r.tool_results().into_iter().map(|(_, t)| t).collect())
        .unwrap_or_default()
}

fn real_home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
}

#[test]
fn cargo_build_and_test_work_inside_the_sandbox() {
    if !has_namespaces() {
        return;
    }
    let home = Home::new();
    let dir = home.dir.path().join("crate");
    put(
        &dir.join("Cargo.toml"),
        "[package]\nname = \"boxed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    put(
        &dir.join("src/lib.rs"),
        "pub fn two() -> u8 { 2 }\n#[test]\nfn it_is_two() { assert_eq!(two(), 2); }\n",
    );
    let real = real_home();
    let var = |k: &str, default: PathBuf| std::env::var(k).map(PathBuf::from).unwrap_or(default);
    let env = [
        ("CARGO_HOME", var("CARGO_HOME", real.join(".cargo")).display().to_string()),
        ("RUSTUP_HOME", var("RUSTUP_HOME", real.join(".rustup")).display().to_string()),
        ("RUSTUP_TOOLCHAIN", std::env::var("RUSTUP_TOOLCHAIN").unwrap_or_else(|_| "stable".into())),
    ];
    let r = run_commands(
        &home,
        &dir,
        &env,
        &[
            "cargo build --offline -q 2>&1; echo built $?",
            "cargo test --offline 2>&1 | grep 'test result: ok. 1 passed'; echo tested",
        ],
    );
    assert!(r[0].ends_with("built 0"), "{}", r[0]);
    assert!(r[1].contains("1 passed") && r[1].contains("tested"), "{}", r[1]);
    assert!(dir.join("target").is_dir());
}

#[test]
fn npm_install_works_inside_the_sandbox() {
    if !has_namespaces() {
        return;
    }
    if std::process::Command::new("npm").arg("--version").output().is_err() {
        eprintln!("skipped: npm is not installed");
        return;
    }
    let home = Home::new();
    std::fs::create_dir_all(home.dir.path().join(".npm/_cacache")).unwrap();
    let dir = home.dir.path().join("app");
    put(
        &dir.join("dep/package.json"),
        r#"{"name": "dep", "version": "1.0.0", "main": "index.js"}"#,
    );
    put(&dir.join("dep/index.js"), "module.exports = 42;\n");
    put(
        &dir.join("package.json"),
        r#"{"name": "app", "version": "1.0.0", "dependencies": {"dep": "file:./dep"}}"#,
    );
    let r = run_commands(
        &home,
        &dir,
        &[],
        &[
            "npm install --offline --no-audit --no-fund >/dev/null 2>&1; echo $?; node -e 'console.log(require(\"dep\"))'",
        ],
    );
    assert_eq!(r[0], "0\n42", "{}", r[0]);
    assert!(dir.join("node_modules/dep").exists() && dir.join("package-lock.json").exists());
}

#[test]
fn pip_install_user_works_inside_the_sandbox_and_keeps_out_of_the_real_local() {
    if !has_namespaces() {
        return;
    }
    let python = Path::new("/usr/bin/python3");
    let has_pip = std::process::Command::new(python)
        .args(["-c", "import pip, setuptools"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pip {
        eprintln!("skipped: /usr/bin/python3 with pip and setuptools is not installed");
        return;
    }
    let home = Home::new();
    let local = home.dir.path().join(".local");
    std::fs::create_dir_all(&local).unwrap();
    let dir = home.dir.path().join("proj");
    put(
        &dir.join("pkg/setup.py"),
        "from setuptools import setup\nsetup(name='boxedpkg', version='1.0', py_modules=['boxedpkg'])\n",
    );
    put(&dir.join("pkg/boxedpkg.py"), "X = 'installed'\n");
    let install = format!(
        "{} -m pip install --user --no-index --no-build-isolation -q ./pkg 2>&1 | tail -2; echo $?",
        python.display()
    );
    let import = format!("cd /; {} -c 'import boxedpkg; print(boxedpkg.X)'", python.display());
    let r = run_commands(&home, &dir, &[], &[&install, &import]);
    assert!(r[0].ends_with('0'), "{}", r[0]);
    assert_eq!(r[1], "installed", "a later command sees the package");
    let mut left = Vec::new();
    for e in walk(&local) {
        left.push(e.display().to_string());
    }
    assert_eq!(left, Vec::<String>::new(), "nothing lands in the real ~/.local");
}

#[test]
fn git_init_add_and_commit_work_inside_the_sandbox() {
    if !has_namespaces() {
        return;
    }
    let home = Home::new();
    let dir = home.dir.path().join("repo");
    put(&dir.join("a.txt"), "a\n");
    let commit = "git -c user.name=t -c user.email=t@example.com commit -qm";
    let r = run_commands(
        &home,
        &dir,
        &[],
        &[
            "git init -q && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -qm first && echo one",
            &format!(
                "echo b >> a.txt && git add -A && {commit} second && git log --oneline | wc -l"
            ),
        ],
    );
    assert_eq!(r, ["one", "2"]);
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout), "second\nfirst\n");
}

/// The helper run directly, both ways it builds the view: in one stage (kernels with
/// proc's `pidns` option) and in two (older kernels, forced here), with the same result.
#[test]
fn the_helper_confines_alike_in_one_stage_and_in_two() {
    use rab_tools::sandbox::protected::Guarded;
    use rab_tools::sandbox::spec::Spec;
    if !has_namespaces() {
        return;
    }
    for two_stage in [false, true] {
        let home = Home::new();
        std::fs::create_dir_all(home.dir.path().join("ws")).unwrap();
        let ws = home.dir.path().join("ws").canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        let secret = home.dir.path().join("secret");
        std::fs::write(&secret, "s3cret\n").unwrap();
        let run = |script: &str| {
            let spec = Spec {
                namespaces: true,
                two_stage,
                writable: vec![ws.clone()],
                read_only: vec![ws.join(".git/config"), ws.join(".git/hooks")],
                pinned: vec![ws.join(".git")],
                guarded: vec![Guarded { root: ws.clone(), path: ws.join(".mcp.json"), link: None }],
                hidden: vec![secret.canonicalize().unwrap()],
                network: true,
                program: "/bin/sh".into(),
                args: vec!["-c".into(), script.into()],
                ..Spec::default()
            };
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_rab"))
                .arg(rab_tools::sandbox::HELPER_ARG)
                .args(spec.to_args())
                .current_dir(&ws)
                .output()
                .unwrap();
            (out.status.code(), super::harness::stdout(&out), stderr(&out))
        };
        let mode = if two_stage { "two stages" } else { "one stage" };
        let (code, out, err) = run("echo in > a.txt && cat a.txt; exit 3");
        assert_eq!((code, out.as_str()), (Some(3), "in\n"), "{mode}: {err}");
        let (_, out, _) = run("ls /proc | grep -c '^[0-9]'");
        assert!(out.trim().parse::<u32>().unwrap() <= 4, "{mode}: only its own processes: {out}");
        let (code, _, err) = run("echo x >> .git/config || mv .git .g || exit 9");
        assert_eq!(code, Some(9), "{mode}: {err}");
        assert!(err.contains("Read-only file system") && err.contains("busy"), "{mode}: {err}");
        let (_, _, err) = run("echo '{}' > .mcp.json");
        assert!(err.contains("was removed when the command ended"), "{mode}: {err}");
        assert!(!ws.join(".mcp.json").exists(), "{mode}");
        let (code, _, _) = run("kill -TERM $$; sleep 5");
        assert_eq!(code, Some(143), "{mode}: a SIGTERM stops the program");
        let (_, out, _) = run(&format!("cat {} 2>&1; echo end", secret.display()));
        assert!(!out.contains("s3cret") && out.contains("end"), "{mode}: {out}");
    }
}
