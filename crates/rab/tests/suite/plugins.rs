//! WASM plugins end to end: the real binary loads components from rab's extensions
//! folder (or a trusted project's), the model calls their tools through the agent loop
//! and the results reach the next request; a broken file is skipped with a warning;
//! grants decide what a plugin may read; a session reloads a plugin whose file changes
//! and drops one that is removed; `rab plugin new|build|list`.
//! Built with the `plugins` feature (on by default).
#![cfg(feature = "plugins")]

use rab_fake_llm::{FakeLlm, Turn};
use rab_plugin_host::test_support::{component, files_component};
use serde_json::{Value, json};

use super::harness::{Home, Rpc, offered, stderr, stdout};

mod python;
mod sdk;

fn install(home: &Home, file: &str, bytes: &[u8]) -> std::path::PathBuf {
    let extensions = home.dir.path().join("rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    let path = extensions.join(file);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_plugins_tool_runs_through_the_agent_loop_and_a_broken_one_is_skipped() {
    let home = Home::new();
    install(&home, "echo.wasm", &component(true));
    install(&home, "broken.wasm", b"not a component");
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("echo", json!({"text": "from the plugin"})), Turn::text("done")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "use the plugin"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert!(offered(&llm, 0).iter().any(|n| n == "echo"), "{:?}", offered(&llm, 0));
    // The tool is read-only (the plugin says so): it ran without a question, headless.
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, r#"{"text":"from the plugin"}"#, "{results:?}");
    let err = stderr(&out);
    assert!(
        err.contains("broken.wasm: not a rab plugin component") && err.contains("skipped"),
        "{err}"
    );
    // Its command runs as /greet (and ,greet), no model involved.
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "/greet"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "test-plugin\n", "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 2, "a command is not a prompt");
}

#[test]
fn a_projects_plugins_load_only_in_a_trusted_folder() {
    let home = Home::new();
    let project = home.dir.path().join("proj");
    let extensions = project.join(".rab/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(extensions.join("echo.wasm"), component(true)).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("untrusted"), Turn::text("trusted")]);
    let rab = |trust: bool| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.current_dir(&project).args(["-p", "hi"]);
        if trust {
            cmd.arg("--trust-project");
        }
        cmd.output().unwrap()
    };
    let out = rab(false);
    assert!(!offered(&llm, 0).iter().any(|n| n == "echo"));
    assert!(stderr(&out).contains("WASM plugins echo.wasm"), "{}", stderr(&out));
    rab(true);
    assert!(offered(&llm, 1).iter().any(|n| n == "echo"));
}

/// A project grants its own plugin its `docs` folder: only once trusted, and never
/// anything outside the folder; the refusal reaches the model as the tool's error, and
/// `rab plugin list` shows the grant and that last error.
#[test]
fn grants_come_from_settings_files_and_a_read_outside_them_is_refused() {
    let home = Home::new();
    let project = home.dir.path().join("proj");
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::create_dir_all(project.join(".rab/extensions")).unwrap();
    std::fs::write(project.join(".rab/extensions/reader.wasm"), files_component()).unwrap();
    std::fs::write(project.join("docs/a.txt"), "granted text").unwrap();
    std::fs::write(project.join("secret.txt"), "not for plugins").unwrap();
    std::fs::write(
        project.join(".rab/extensions.toml"),
        "[plugins.reader.grants]\nfiles = [\"docs\"]\n",
    )
    .unwrap();
    let llm = FakeLlm::start();
    let read = |path: &str| Turn::tool_call("read_file", json!({ "path": path }));
    llm.script([read("a.txt"), Turn::text("untrusted"), read("a.txt"), read("../secret.txt")]);
    llm.script([Turn::text("trusted")]);
    let run = |trust: bool| {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.current_dir(&project).args(["-p", "read"]);
        if trust {
            cmd.arg("--trust-project");
        }
        cmd.output().unwrap()
    };
    let out = run(false);
    assert!(stderr(&out).contains("WASM plugin settings and grants"), "{}", stderr(&out));
    assert!(!offered(&llm, 0).iter().any(|n| n == "read_file"), "untrusted: not loaded");
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(!result.contains("granted text"), "untrusted: {result}");
    let out = run(true);
    assert_eq!(stdout(&out), "trusted\n", "{}", stderr(&out));
    let requests = llm.requests();
    assert_eq!(requests[3].tool_results()[0].1, "granted text");
    let refused = &requests[4].tool_results()[1].1;
    assert!(refused.contains("error-code") && !refused.contains("not for plugins"), "{refused}");

    let list = home
        .rab()
        .current_dir(&project)
        .args(["plugin", "list", "--trust-project"])
        .output()
        .unwrap();
    let text = stdout(&list);
    assert!(text.contains("file-reader (loaded)"), "{text}");
    assert!(text.contains("tools: read_file [read-only]"), "{text}");
    let docs = project.join("docs").canonicalize().unwrap();
    assert!(text.contains(&format!("grants: {} (ro)", docs.display())), "{text}");
    assert!(text.contains("last error: error-code"), "{text}");
}

/// A plugin's tool passes what a built-in one does: the gate at the level the plugin
/// declares (none: it runs programs, so headless it is refused until a rule allows it
/// by the plugin's name), PreToolUse hooks, and the secret firewall before the model
/// and the tape see its output.
#[test]
fn a_plugins_tool_passes_the_gate_hooks_and_secret_firewall() {
    use rab_plugin_host::test_support::undeclared_component;
    let home = Home::new();
    install(&home, "echo.wasm", &undeclared_component());
    install(&home, "reader.wasm", &files_component());
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    std::fs::create_dir_all(home.dir.path().join("docs")).unwrap();
    std::fs::write(home.dir.path().join("docs/creds.txt"), format!("token {key}")).unwrap();
    let grants = "[plugins.reader.grants]\nfiles = [\"docs\"]\n";
    std::fs::write(home.dir.path().join("rab/extensions.toml"), grants).unwrap();
    let llm = FakeLlm::start();
    let echo = |text: &str| Turn::tool_call("echo", json!({ "text": text }));
    let read = Turn::tool_call("read_file", json!({"path": "creds.txt"}));
    llm.script([echo("hi"), Turn::text("one"), echo("again"), read, Turn::text("two")]);
    let run = |args: &[&str]| {
        home.rab_for("anthropic-messages", &llm, Some("k")).args(args).output().unwrap()
    };
    let out = run(&["-p", "go"]);
    let err = stderr(&out);
    assert!(err.contains("denied echo") && err.contains("'plugin__test-plugin__echo'"), "{err}");
    assert!(last_result(&llm).contains("denied"), "{}", last_result(&llm));

    let out = run(&["-p", "go", "--allowed-tools", "plugin__test-plugin"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = llm.requests();
    assert_eq!(requests[3].tool_results()[0].1, r#"{"text":"again"}"#, "allowed by the rule");
    let result = last_result(&llm);
    assert!(result.contains("[REDACTED: API key (sk-…)]") && !result.contains(key), "{result}");
    for r in llm.requests() {
        assert!(!String::from_utf8_lossy(&r.raw).contains(key), "the key reached the model");
    }
    let sessions = home.dir.path().join("rab/sessions");
    let tapes: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .collect();
    assert!(tapes.iter().all(|t| !t.contains(key)) && tapes.iter().any(|t| t.contains("REDACTED")));

    // A PreToolUse hook matching the plugin's tools blocks the call.
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "plugin__test-plugin__.*",
        "hooks": [{"type": "command", "command": "echo 'no plugins today' >&2; exit 2"}]}]}});
    std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
    std::fs::write(home.dir.path().join("rab/agent/settings.json"), hooks.to_string()).unwrap();
    llm.script([echo("blocked?"), Turn::text("three")]);
    run(&["-p", "go", "--allowed-tools", "plugin__test-plugin"]);
    assert_eq!(last_result(&llm), "blocked by a PreToolUse hook: no plugins today");
}

fn plugin_status(v: &Value, name: &str, state: &str) -> bool {
    v["type"] == "service_status"
        && v["kind"] == "plugin"
        && v["name"] == name
        && v["state"] == state
}

fn prompt_and_wait(rpc: &mut Rpc, text: &str) {
    rpc.send(&json!({"type": "prompt", "message": text}).to_string());
    rpc.event("agent_end");
}

/// The result of the last call in the last request.
fn last_result(llm: &FakeLlm) -> String {
    let requests = llm.requests();
    let results = requests.last().unwrap().tool_results();
    results.last().map(|r| r.1.clone()).unwrap_or_default()
}

/// A session that stays (RPC here) reloads a plugin whose file is replaced and drops
/// one that is removed: the model's next call reaches the new tool, and a removed
/// tool is unknown.
#[test]
fn a_running_session_reloads_a_changed_plugin_and_drops_a_removed_one() {
    let home = Home::new();
    let file = install(&home, "tool.wasm", &component(true));
    let llm = FakeLlm::start();
    let call = |name: &str, args: Value| [Turn::tool_call(name, args), Turn::text("ok")];
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.wait("the plugin ready", |v| plugin_status(v, "test-plugin", "ready"));
    llm.script(call("echo", json!({"n": 1})));
    prompt_and_wait(&mut rpc, "one");
    assert_eq!(last_result(&llm), r#"{"n":1}"#);

    // Replaced (as `rab plugin build --install` does: a new file renamed over it).
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, files_component()).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    rpc.wait("the new plugin ready", |v| plugin_status(v, "file-reader", "ready"));
    llm.script(call("read_file", json!({"path": "a.txt"})));
    prompt_and_wait(&mut rpc, "two");
    assert_eq!(last_result(&llm), "no folder granted", "the new plugin's tool ran");
    llm.script(call("echo", json!({"n": 2})));
    prompt_and_wait(&mut rpc, "three");
    assert!(last_result(&llm).contains("unknown tool 'echo'"), "{}", last_result(&llm));

    std::fs::remove_file(&file).unwrap();
    rpc.wait("the plugin removed", |v| plugin_status(v, "file-reader", "removed"));
    llm.script(call("read_file", json!({"path": "a.txt"})));
    prompt_and_wait(&mut rpc, "four");
    assert!(last_result(&llm).contains("unknown tool 'read_file'"), "{}", last_result(&llm));

    // By hand: /reload-plugins loads a new file (the watcher may be quicker; either
    // way the plugin is back).
    install(&home, "again.wasm", &component(true));
    let before = rpc.seen.len();
    rpc.send(&json!({"type": "prompt", "message": "/reload-plugins"}).to_string());
    let r = rpc.response("prompt");
    assert_eq!(r["success"], true, "{r}");
    // The command reloads before it answers; the watcher may report it later.
    let back = |v: &Value| plugin_status(v, "test-plugin", "ready");
    if !rpc.seen[before..].iter().any(back) {
        rpc.wait("the plugin back", back);
    }
    llm.script(call("echo", json!({"n": 3})));
    prompt_and_wait(&mut rpc, "five");
    assert_eq!(last_result(&llm), r#"{"n":3}"#);
    rpc.end();
}

/// `rab plugin build` says how to get the target when the toolchain lacks it, and with
/// a toolchain that has it (stand-ins for rustc and cargo that record how they were
/// run) builds in release mode for wasm32-wasip2 and installs the component, which a
/// session then loads.
#[test]
fn plugin_build_needs_the_target_and_installs_what_it_built() {
    let home = Home::new();
    let dir = home.dir.path().join("hello");
    let out = home.rab().args(["plugin", "new", "hello"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // The SDK is this rab's release, not a moving branch.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let tag = format!("tag = \"v{}\"", env!("CARGO_PKG_VERSION"));
    assert!(manifest.contains(&tag), "{manifest}");
    let sysroot = home.dir.path().join("sysroot");
    std::fs::create_dir_all(sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu")).unwrap();
    let bin = home.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = |name: &str, body: String| {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path
    };
    // A rustc that fails (rustup without a default toolchain): its own words, not an
    // empty toolchain path.
    let broken = script("broken-rustc", "echo 'error: no default toolchain' >&2; exit 1\n".into());
    let out = home
        .rab()
        .current_dir(&dir)
        .env("RUSTC", &broken)
        .args(["plugin", "build"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no default toolchain") && !err.contains("toolchain at  "), "{err}");
    let rustc = script("rustc", format!("echo {}\n", sysroot.display()));
    let out = home
        .rab()
        .current_dir(&dir)
        .env("RUSTC", &rustc)
        .args(["plugin", "build", "--install"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("rustup target add wasm32-wasip2"), "{err}");

    // Now the toolchain has the target; "cargo" records its arguments and "builds" the
    // test plugin.
    std::fs::create_dir_all(sysroot.join("lib/rustlib/wasm32-wasip2")).unwrap();
    let target = home.dir.path().join("target");
    let built = target.join("wasm32-wasip2/release/hello.wasm");
    std::fs::write(home.dir.path().join("plugin.wasm"), component(true)).unwrap();
    let metadata = json!({"target_directory": target, "packages": [{
        "name": "hello",
        "manifest_path": dir.join("Cargo.toml"),
        "targets": [{"name": "hello", "kind": ["cdylib"]}],
    }]});
    std::fs::write(home.dir.path().join("metadata.json"), metadata.to_string()).unwrap();
    let log = home.dir.path().join("cargo.log");
    let cargo = script(
        "cargo",
        format!(
            "echo \"$@\" >> {log}\ncase \"$1\" in\n  metadata) cat {meta} ;;\n  build) mkdir -p \
             {out} && cp {plugin} {built} ;;\nesac\n",
            log = log.display(),
            meta = home.dir.path().join("metadata.json").display(),
            out = built.parent().unwrap().display(),
            plugin = home.dir.path().join("plugin.wasm").display(),
            built = built.display(),
        ),
    );
    let out = home
        .rab()
        .current_dir(&dir)
        .env("RUSTC", &rustc)
        .env("CARGO", &cargo)
        .args(["plugin", "build", "--install"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("build --release --target wasm32-wasip2 --manifest-path"), "{calls}");
    let installed = home.dir.path().join("rab/extensions/hello.wasm");
    assert_eq!(std::fs::read(&installed).unwrap(), component(true));
    assert!(stdout(&out).contains("installed as"), "{}", stdout(&out));
    let list = home.rab().args(["plugin", "list"]).output().unwrap();
    assert!(stdout(&list).contains("test-plugin (loaded)"), "{}", stdout(&list));
}

/// The network grant through the real binary: a plugin's HTTP request leaves through
/// rab's guarded client, and reaches a local server only with `private-network` from
/// the user's own settings.
#[test]
fn a_plugin_granted_the_network_reaches_a_local_server_only_with_private_network() {
    use rab_plugin_host::test_support::{host_args, http_component};
    let home = Home::new();
    install(&home, "getter.wasm", &http_component());
    let server = local_http_server();
    let settings = home.dir.path().join("rab/extensions.toml");
    let llm = FakeLlm::start();
    let get = || Turn::tool_call("get", serde_json::from_str(&host_args(&server)).unwrap());
    llm.script([get(), Turn::text("one"), get(), Turn::text("two"), get(), Turn::text("three")]);
    let run = || {
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .args(["-p", "get it", "--allowed-tools", "plugin__http-getter"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        last_result(&llm)
    };
    assert_eq!(run(), "error-code 15", "no grant: denied");
    std::fs::write(&settings, "[plugins.getter.grants]\nnetwork = true\n").unwrap();
    assert_eq!(run(), "error-code 04", "public addresses only");
    std::fs::write(&settings, "[plugins.getter.grants]\nnetwork = true\nprivate-network = true\n")
        .unwrap();
    assert_eq!(run(), "status 200");
}

/// What was found: a trusted project's plugin named like one of the user's got the
/// user's `private-network` grant and reached a local service; a plugin's tool named
/// `mcp__gh__x` was allowed by the user's `mcp__gh` rule, meant for an MCP server.
#[test]
fn issue_34_plugin_grants_follow_the_source_and_names_keep_to_their_kind() {
    use rab_plugin_host::test_support::{host_args, http_component, named_tool_component};
    let home = Home::new();
    let server = local_http_server();
    // The user grants their own plugin `getter` local services.
    std::fs::create_dir_all(home.dir.path().join("rab")).unwrap();
    std::fs::write(
        home.dir.path().join("rab/extensions.toml"),
        "[plugins.getter.grants]\nnetwork = true\nprivate-network = true\n",
    )
    .unwrap();
    // A project brings a plugin of the same name.
    let project = home.dir.path().join("proj");
    std::fs::create_dir_all(project.join(".rab/extensions")).unwrap();
    std::fs::write(project.join(".rab/extensions/getter.wasm"), http_component()).unwrap();
    let llm = FakeLlm::start();
    let get = Turn::tool_call("get", serde_json::from_str(&host_args(&server)).unwrap());
    llm.script([get, Turn::text("done")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&project)
        .args(["-p", "get it", "--trust-project", "--allowed-tools", "plugin__http-getter"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(last_result(&llm), "error-code 15", "the user's grant is not the project's");
    assert!(stderr(&out).contains("your own plugins"), "{}", stderr(&out));

    // A plugin cannot take a name in the MCP servers' namespace.
    install(&home, "sneaky.wasm", &named_tool_component("mcp__gh__x"));
    let llm = FakeLlm::start();
    llm.script([Turn::text("done")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "hi", "--allowed-tools", "mcp__gh"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!offered(&llm, 0).iter().any(|n| n.starts_with("mcp__")), "{:?}", offered(&llm, 0));
    let err = stderr(&out);
    assert!(err.contains("mcp__gh__x") && err.contains("cannot be used"), "{err}");
}

/// A loopback server answering every request with 200 (on a thread of its own).
fn local_http_server() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
            let _ = stream.write_all(reply);
        }
    });
    addr
}

/// Issue 38, row 1: `--no-tools` and `--tools` hold for a plugin's tools too.
#[test]
fn issue_38_no_tools_and_a_tools_list_hold_for_a_plugins_tools() {
    let home = Home::new();
    install(&home, "echo.wasm", &component(true));
    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b"), Turn::text("c")]);
    let run = |args: &[&str]| {
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .arg("-p")
            .args(args)
            .arg("hi")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    run(&["--no-tools"]);
    run(&["--tools", "read,grep"]);
    run(&[]);
    assert_eq!(offered(&llm, 0), Vec::<String>::new());
    let mut listed = offered(&llm, 1);
    listed.retain(|n| n != "tool_search");
    assert_eq!(listed, ["read", "grep"]);
    assert!(offered(&llm, 2).iter().any(|n| n == "echo"), "{:?}", offered(&llm, 2));
}

/// What was found: a plugin's tools could not be named in `--tools` or `excludeTools`
/// ("unknown tool", exit 2). They are named as in permission rules: `plugin__NAME`
/// for all of a plugin's tools, `plugin__NAME__TOOL` for one.
#[test]
fn issue_53_a_plugins_tools_are_named_in_tools_and_exclude_tools() {
    let home = Home::new();
    install(&home, "echo.wasm", &component(true));
    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b"), Turn::text("c")]);
    let run = |args: &[&str]| {
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .arg("-p")
            .args(args)
            .arg("hi")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    run(&["--tools", "read,plugin__test-plugin"]);
    run(&["--tools", "plugin__test-plugin__echo"]);
    let settings = home.dir.path().join("rab/agent/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"excludeTools": ["plugin__test-plugin__echo"]}"#).unwrap();
    run(&[]);
    let listed = |i| {
        let mut names = offered(&llm, i);
        names.retain(|n| n != "tool_search");
        names
    };
    assert_eq!(listed(0), ["read", "echo"]);
    assert_eq!(listed(1), ["echo"]);
    assert!(!listed(2).iter().any(|n| n == "echo"), "{:?}", listed(2));
    assert!(listed(2).iter().any(|n| n == "read"), "{:?}", listed(2));
}

/// `rab` copied into a folder of its own, beside a `rab-plugins` that records each
/// start (and the environment it got) in `marks` before running the real helper; `None`
/// leaves the helper out.
fn rab_beside_helper(dir: &std::path::Path, marks: Option<&std::path::Path>) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let rab = dir.join("rab");
    std::fs::copy(env!("CARGO_BIN_EXE_rab"), &rab).unwrap();
    if let Some(marks) = marks {
        let helper = dir.join("rab-plugins");
        let script = format!(
            "#!/bin/sh\nenv > {}/start-$$\nexec {} \"$@\"\n",
            marks.display(),
            env!("CARGO_BIN_EXE_rab-plugins")
        );
        std::fs::write(&helper, script).unwrap();
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    rab
}

/// `template` (a configured `rab` command) run from the binary at `bin`.
fn run_from(bin: &std::path::Path, template: std::process::Command) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin);
    cmd.env_clear();
    for (k, v) in template.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.args(template.get_args()).stdin(std::process::Stdio::null());
    if let Some(dir) = template.get_current_dir() {
        cmd.current_dir(dir);
    }
    cmd.output().unwrap()
}

#[test]
fn issue_39_plugins_run_in_a_helper_started_only_for_a_plugin_and_given_no_secrets() {
    let home = Home::new();
    let marks = home.dir.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let bin = rab_beside_helper(&home.dir.path().join("bin"), Some(&marks));
    let started = || std::fs::read_dir(&marks).unwrap().count();
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("no plugins here"),
        Turn::tool_call("echo", json!({"text": "hi"})),
        Turn::text("done"),
    ]);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k-secret-39"));
    cmd.args(["-p", "hi"]);
    let out = run_from(&bin, cmd);
    assert_eq!(stdout(&out), "no plugins here\n", "{}", stderr(&out));
    assert_eq!(started(), 0, "no plugin file: the helper is not started");
    install(&home, "echo.wasm", &component(true));
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k-secret-39"));
    cmd.args(["-p", "use the plugin"]);
    let out = run_from(&bin, cmd);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[2].tool_results()[0].1, r#"{"text":"hi"}"#);
    assert_eq!(started(), 1, "one helper for the session");
    let entry = std::fs::read_dir(&marks).unwrap().next().unwrap().unwrap();
    let env = std::fs::read_to_string(entry.path()).unwrap();
    assert!(!env.contains("k-secret-39") && !env.contains("API_KEY"), "{env}");
}

#[test]
fn issue_39_without_the_helper_a_session_says_so_and_goes_on() {
    let home = Home::new();
    let bin = rab_beside_helper(&home.dir.path().join("bin"), None);
    install(&home, "echo.wasm", &component(true));
    let llm = FakeLlm::start();
    llm.script([Turn::text("fine without it")]);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.args(["-p", "hi"]);
    let out = run_from(&bin, cmd);
    assert_eq!(stdout(&out), "fine without it\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot start the plugin helper") && err.contains("reinstall rab"),
        "{err}"
    );
    assert!(!offered(&llm, 0).iter().any(|n| n == "echo"));
}

/// Interrupting a run stops a plugin's call in the helper at once (not at its limit),
/// and the helper serves the next call.
#[test]
fn issue_39_an_interrupted_plugin_call_stops_in_the_helper() {
    let home = Home::new();
    install(&home, "spin.wasm", &rab_plugin_host::test_support::spinner_component());
    // Limits far above the test's patience: only the stop can end the call quickly.
    std::fs::write(
        home.dir.path().join("rab/extensions.toml"),
        "[plugins.spin.limits]\nfuel = 100000000000000\ntime-secs = 600\n",
    )
    .unwrap();
    let llm = FakeLlm::start();
    // Each round is aborted during its call: no answer follows it.
    llm.script([Turn::tool_call("spin", json!({})), Turn::tool_call("spin", json!({}))]);
    let mut rpc = Rpc::start(&home, &llm, &[]);
    rpc.wait("the plugin ready", |v| plugin_status(v, "test-plugin", "ready"));
    for round in 0..2 {
        rpc.send(&json!({"type": "prompt", "message": format!("spin {round}")}).to_string());
        rpc.event("tool_execution_start");
        let asked = std::time::Instant::now();
        rpc.send(r#"{"type": "abort"}"#);
        let end = rpc.event("tool_execution_end");
        let took = asked.elapsed();
        assert!(end.to_string().contains("it was interrupted"), "{end}");
        rpc.event("agent_end");
        assert!(took < std::time::Duration::from_secs(10), "round {round}: {took:?}");
    }
    rpc.end();
}

/// Class 10 of the third containment audit: with the public network only, a plugin
/// reached loopback by writing the host as a number (`2130706433`, `0x7f000001`,
/// `127.1`): the check parsed hosts more strictly than the client, which connects to
/// 127.0.0.1 without a lookup. Every spelling is refused now.
#[test]
fn a_plugin_cannot_reach_loopback_by_spelling_the_address_another_way() {
    use rab_plugin_host::test_support::{host_args, http_component};
    let home = Home::new();
    install(&home, "getter.wasm", &http_component());
    let server = local_http_server();
    let port = server.rsplit(':').next().unwrap().to_owned();
    std::fs::write(
        home.dir.path().join("rab/extensions.toml"),
        "[plugins.getter.grants]\nnetwork = true\n",
    )
    .unwrap();
    for host in ["2130706433", "0x7f000001", "127.1", "0177.0.0.1", "[::ffff:127.0.0.1]"] {
        let llm = FakeLlm::start();
        let args = host_args(&format!("{host}:{port}"));
        llm.script([
            Turn::tool_call("get", serde_json::from_str(&args).unwrap()),
            Turn::text("done"),
        ]);
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .args(["-p", "get it", "--allowed-tools", "plugin__http-getter"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(last_result(&llm), "error-code 04", "{host}");
    }
}
