//! `rab -p`: one streamed reply per wire format, and actionable failures.

use std::io::Write;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{Home, WIRES, stderr, stdout};

#[test]
fn prints_the_scripted_reply_for_every_wire_format() {
    for wire in WIRES {
        let home = Home::new();
        let llm = FakeLlm::start();
        llm.require_api_key(Some("test-key"));
        llm.script([Turn::text("Hi from the fake model.")]);
        let out = home
            .rab_for(wire, &llm, Some("test-key"))
            .args(["-p", "--no-tools", "say hi"])
            .output()
            .unwrap();
        assert_eq!(stdout(&out), "Hi from the fake model.\n", "{wire}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{wire}");
        let reqs = llm.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].last_user_text().as_deref(), Some("say hi"), "{wire}");
        assert!(reqs[0].transcript().tools.is_empty(), "{wire}: --no-tools sends no tools");
    }
}

#[test]
fn a_missing_key_fails_with_what_to_set() {
    for wire in WIRES {
        let home = Home::new();
        let llm = FakeLlm::start();
        let out =
            home.rab_for(wire, &llm, None).args(["-p", "--no-tools", "say hi"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{wire}");
        let err = stderr(&out);
        assert!(
            err.contains("no API key") && err.contains("_API_KEY") && err.contains("--api-key"),
            "{wire}: {err}"
        );
        assert!(llm.requests().is_empty(), "{wire}: nothing sent without a key");
    }
}

#[test]
fn an_unauthorized_answer_fails_with_the_provider_message_and_a_hint() {
    for wire in WIRES {
        let home = Home::new();
        let llm = FakeLlm::start();
        llm.script([Turn::text("never").after_fault(401, None)]);
        let out = home
            .rab_for(wire, &llm, Some("bad-key"))
            .args(["-p", "--no-tools", "say hi"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{wire}");
        let err = stderr(&out);
        assert!(err.contains("HTTP 401"), "{wire}: {err}");
        assert!(err.contains("_API_KEY") && err.contains("--api-key"), "{wire}: {err}");
        assert_eq!(llm.requests().len(), 1, "{wire}: 401 is not retried");
    }
}

#[test]
fn piped_stdin_is_prepended_to_the_prompt() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok"), Turn::text("ok")]);
    let mut child = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "summarise"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"line one\nline two\n").unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let mut child = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .arg("-p")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"only stdin").unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let texts: Vec<_> = llm.requests().iter().map(|r| r.last_user_text().unwrap()).collect();
    assert_eq!(texts, ["line one\nline two\n\nsummarise", "only stdin"]);
}

#[test]
fn an_idle_inherited_stdin_does_not_hang_a_prompt_run() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    // stdin is a pipe nobody writes to or closes, as in some CI runners.
    let mut child = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "hi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}

#[test]
fn base_url_with_an_unknown_model_runs_against_a_custom_endpoint() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("local answer")]);
    let out = home
        .rab()
        .args(["-p", "--api", "openai-completions", "--base-url", &llm.openai_url()])
        .args(["--model", "my-local-model:7b", "hello"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "local answer\n", "{}", stderr(&out));
    // Start-up asked the server for the model's context window first.
    let requests = llm.requests();
    assert_eq!(requests[0].path, "/v1/models");
    let chat = requests.iter().find(|r| r.path.ends_with("/chat/completions")).unwrap();
    assert_eq!(chat.body["model"], "my-local-model:7b");
    assert!(requests.iter().all(|r| r.header("authorization").is_none()), "no key, no header");
}

#[test]
fn keys_come_from_auth_json_under_rab_home() {
    let home = Home::new();
    let agent = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("auth.json"),
        r#"{"anthropic": {"type": "api_key", "key": "file-key"}}"#,
    )
    .unwrap();
    let llm = FakeLlm::start();
    llm.require_api_key(Some("file-key"));
    llm.script([Turn::text("authorized")]);
    let out = home.rab_for("anthropic-messages", &llm, None).args(["-p", "hi"]).output().unwrap();
    assert_eq!(stdout(&out), "authorized\n", "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2_and_say_what_to_do() {
    let home = Home::new();
    let out = home.rab().arg("-p").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no prompt"), "{}", stderr(&out));
    let out = home.rab().args(["-p", "--thinking", "extreme", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("possible values: off, minimal, low, medium, high"),
        "{}",
        stderr(&out)
    );
    let out =
        home.rab().args(["-p", "--provider", "nosuch", "--api-key", "k", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown provider 'nosuch'"), "{}", stderr(&out));
    std::fs::create_dir_all(home.dir.path().join("rab")).unwrap();
    std::fs::write(home.dir.path().join("rab/models.json"), "{ not json").unwrap();
    let out = home.rab().args(["-p", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("models.json:1:3"), "{}", stderr(&out));
}

#[test]
fn version_and_model_list_need_no_key() {
    let home = Home::new();
    let out = home.rab().arg("--version").output().unwrap();
    assert_eq!(stdout(&out), format!("rab {}\n", env!("CARGO_PKG_VERSION")));
    let out = home.rab().args(["--list-models", "opus"]).output().unwrap();
    assert!(stdout(&out).contains("anthropic/claude-opus-5-5"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("gpt-6"), "filtered");
}

#[test]
fn issue_35_the_model_list_is_the_table_in_the_docs() {
    // Prices, cache prices, tiers, window, input and output limits: the same rows as
    // docs/providers.md (which a rab-ai test keeps equal to the catalog).
    let home = Home::new();
    let out = home.rab().arg("--list-models").output().unwrap();
    let table = rab_ai::model_table(&rab_ai::Registry::builtin(), "", rab_ai::TableFormat::Text);
    assert!(stdout(&out).starts_with(&table), "{}", stdout(&out));
    for row in [
        "openai/gpt-6.2-astra",
        "over 272k: 16 / 60 / 0.8 / 20",
        "922k",
        "xai/grok-4.7",
        "google/gemini-4-neon",
        "0.1 / 2.5",
    ] {
        assert!(stdout(&out).contains(row), "{row}: {}", stdout(&out));
    }
}

/// build.rs packs relative relocations where the loader understands them: classic
/// relocation records are 1.3 MB that every start reads (a megabyte of resident memory).
/// The binary must still start (the test suite runs it throughout).
#[test]
fn the_binary_packs_its_relocations_where_glibc_can_load_them() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    let glibc = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output();
    let modern = glibc.ok().is_some_and(|o| {
        let v = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        let mut parts = v.trim_start_matches("glibc ").split('.');
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor) >= (2, 36)
    });
    let Ok(out) =
        std::process::Command::new("readelf").args(["-d", env!("CARGO_BIN_EXE_rab")]).output()
    else {
        eprintln!("skipped: readelf (binutils) is not installed");
        return;
    };
    let dynamic = String::from_utf8_lossy(&out.stdout);
    let packed = dynamic.contains("(RELR)");
    let portable = std::env::var_os("RAB_PORTABLE_LINK").is_some_and(|v| v != "0");
    assert_eq!(packed, modern && !portable, "glibc >= 2.36: {modern}\n{dynamic}");
}

#[test]
fn issue_13_keys_are_trimmed_and_a_rejected_or_bad_key_names_where_it_came_from() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.require_api_key(Some("sk-file-key"));
    llm.script([Turn::text("trimmed")]);
    // `ANTHROPIC_API_KEY=$(cat key.txt)` keeps the file's newline.
    let out = home
        .rab_for("anthropic-messages", &llm, Some("sk-file-key\n"))
        .args(["-p", "--no-tools", "hi"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "trimmed\n", "{}", stderr(&out));

    let out = home
        .rab_for("anthropic-messages", &llm, None)
        .args(["-p", "--no-tools", "--api-key", "sk-wrong", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 401")
            && err.contains("the key given with --api-key was rejected")
            && err.contains("/login"),
        "{err}"
    );
    assert!(!err.contains("set ANTHROPIC_API_KEY"), "{err}");

    let out = home
        .rab_for("anthropic-messages", &llm, Some("sk-\u{201c}pasted\u{201d}"))
        .args(["-p", "--no-tools", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "the API key from $ANTHROPIC_API_KEY has a character an HTTP header cannot carry"
        ) && err.contains("position 4"),
        "{err}"
    );
    assert_eq!(llm.requests().len(), 2, "nothing is sent with the bad key");
}

#[test]
fn typed_lines_are_classified_as_everywhere_and_piped_text_is_never_run() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("summary"), Turn::text("summary 2"), Turn::text("saw it")]);
    // Piped text that looks like a shell line is data: it goes to the model, even in yolo.
    for (i, piped) in [",touch pwned1", "!touch pwned2"].into_iter().enumerate() {
        let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
        cmd.args(["-p", "--yolo", "summarize"]);
        let out = super::harness::with_stdin(cmd, piped);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!home.dir.path().join(format!("pwned{}", i + 1)).exists(), "{piped} ran");
        let sent = llm.requests()[i].last_user_text().unwrap_or_default();
        assert!(sent.starts_with(piped), "{sent}");
    }
    // Typed as arguments: `/help` is the command (no request), `!!cmd` the user's own
    // shell line, `!cmd` shares its output with the model.
    let out =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "/help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("/quit"), "{}", stdout(&out));
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "!!echo typed-line"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "typed-line", "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 2);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "!echo shared-line"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "saw it\n", "{}", stderr(&out));
    let sent = llm.requests()[2].last_user_text().unwrap_or_default();
    assert!(sent.contains("I ran `echo shared-line`") && sent.contains("shared-line"), "{sent}");
    // Leading blanks change nothing: the classifier trims, and the output still goes.
    llm.script([Turn::text("saw that too")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", " !echo spaced-line"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "saw that too\n", "{}", stderr(&out));
    let sent = llm.requests()[3].last_user_text().unwrap_or_default();
    assert!(sent.contains("spaced-line"), "{sent}");
}

#[test]
fn start_up_warnings_are_printed_once_by_the_mode_not_while_building() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .env("RAB_TODAY", "yesterday")
        .args(["-p", "--model", "claude-nonexistent-9", "hi"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("RAB_TODAY=yesterday is not a date").count(), 1, "{err}");
    assert_eq!(err.matches("is not in rab's model table").count(), 1, "{err}");
}
