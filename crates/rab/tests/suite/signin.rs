//! Signing in with a ChatGPT plan (`rab login openai --chatgpt`) against the fake
//! sign-in server, the test playing the browser: the PKCE exchange, tokens in
//! auth.json (0600) and never in a tool's environment or on the tape, renewal before
//! expiry and once after a 401 in the middle of a run, and a revoked sign-in.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stderr, stdout, walk};

/// A GET as a browser makes it: the status and the `location` header.
fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) =
        rest.split_once('/').map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let location = text.lines().find_map(|l| {
        l.to_ascii_lowercase().starts_with("location:").then(|| l[9..].trim().to_owned())
    });
    (status, location)
}

fn auth_json(home: &Home) -> Value {
    let text = std::fs::read_to_string(home.dir.path().join("rab/agent/auth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn openai(home: &Home, llm: &FakeLlm) -> Command {
    let mut cmd = home.rab();
    cmd.args(["--provider", "openai"]).env("OPENAI_BASE_URL", llm.openai_url());
    cmd.env_remove("OPENAI_API_KEY");
    cmd
}

/// Runs `rab login openai --chatgpt`, plays the browser, and returns the output.
fn sign_in(home: &Home, llm: &FakeLlm) -> std::process::Output {
    browser_sign_in(home, llm, &["login", "openai", "--chatgpt"], "RAB_OPENAI_AUTH_URL")
}

/// Runs `rab ARGS` with the sign-in server at `var`, playing the browser.
fn browser_sign_in(home: &Home, llm: &FakeLlm, args: &[&str], var: &str) -> std::process::Output {
    let mut child = home
        .rab()
        .args(args)
        .env(var, llm.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut shown = String::new();
    let url = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no address shown: {shown}");
        shown.push_str(&line);
        if let Some(u) = line.trim().strip_prefix("http://") {
            break format!("http://{u}");
        }
    };
    // The sign-in server approves and sends the browser to rab's loopback callback.
    let (status, back) = get(&url);
    assert_eq!(status, 302, "{url}");
    let back = back.unwrap();
    assert!(back.starts_with("http://127.0.0.1:"), "{back}");
    let (status, _) = get(&back);
    assert_eq!(status, 200);
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let mut out = child.wait_with_output().unwrap();
    out.stderr = format!("{shown}{rest}").into_bytes();
    out
}

#[test]
fn issue_35_chatgpt_sign_in_stores_its_tokens_and_sessions_use_them() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.sign_in(3600);
    let out = sign_in(&home, &llm);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("signed in with ChatGPT as user@example.com"),
        "{}",
        stdout(&out)
    );
    let auth = auth_json(&home);
    assert_eq!(auth["openai"]["type"], "oauth", "{auth}");
    assert_eq!(auth["openai"]["client_id"], "oaiapp_fake", "the installation's own client id");
    assert_eq!(auth["openai"]["access"], "at_fake_1");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(home.dir.path().join("rab/agent/auth.json")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    // A session uses the plan: its token goes to OpenAI, never to a tool's environment
    // or the tape.
    let cwd = home.dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    llm.script([
        Turn::tool_call("bash", json!({"command": "env; cat \"$RAB_HOME/agent/auth.json\"; true"})),
        Turn::text("hello from the plan"),
    ]);
    let out = openai(&home, &llm).current_dir(&cwd).args(["-p", "--yolo", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hello from the plan");
    let requests = llm.requests();
    let model: Vec<_> = requests.iter().filter(|r| r.path.ends_with("/responses")).collect();
    assert_eq!(model[0].header("authorization"), Some("Bearer at_fake_1"));
    let result = model[1].body.to_string();
    // The command ran (the sandbox keeps rab's own auth.json from it, too).
    assert!(result.contains("RAB_HOME=") && result.contains("auth.json"), "{result}");
    assert!(!result.contains("at_fake_1") && !result.contains("rt_fake_1"), "{result}");
    let tape: String = walk(&home.dir.path().join("rab/sessions"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(!tape.contains("at_fake_1") && !tape.contains("rt_fake_1"), "{tape}");
    // doctor says where the credential comes from, never what it is.
    let out = home.rab().arg("doctor").env_remove("OPENAI_API_KEY").output().unwrap();
    let text = stdout(&out);
    let line = text.lines().find(|l| l.trim_start().starts_with("openai ")).unwrap_or_default();
    assert!(line.contains("ChatGPT sign-in from"), "{text}");
    assert!(!text.contains("at_fake_1"), "{text}");
}

/// auth.json holding a sign-in made earlier: `access` that expires at `expires_at`.
fn signed_in(home: &Home, llm: &FakeLlm, expires_at: u64) {
    let dir = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&dir).unwrap();
    let auth = json!({"openai": {"type": "oauth", "access": "at_old", "refresh": "rt_old",
        "expires_at": expires_at, "client_id": "oaiapp_fake",
        "token_url": format!("{}/api/accounts/oauth/token", llm.url()), "host_id": "urn:uuid:x"}});
    std::fs::write(dir.join("auth.json"), auth.to_string()).unwrap();
    llm.signed_in("at_old", "rt_old");
}

/// The statuses of the model requests (not the sign-in server's) so far.
fn model_statuses(llm: &FakeLlm) -> Vec<u16> {
    llm.requests().iter().filter(|r| r.path.ends_with("/responses")).map(|r| r.status).collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

#[test]
fn issue_35_a_401_in_the_middle_of_a_run_renews_the_sign_in_once_and_goes_on() {
    let home = Home::new();
    let llm = FakeLlm::start();
    signed_in(&home, &llm, now_ms() + 3_600_000);
    // The token stops working after the first request of the run.
    llm.expire_access_after(1);
    let cwd = home.dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("a.txt"), "hello").unwrap();
    llm.script([Turn::tool_call("read", json!({"path": "a.txt"})), Turn::text("It says hello.")]);
    let out =
        openai(&home, &llm).current_dir(&cwd).args(["-p", "what is in a.txt?"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says hello.");
    let statuses = model_statuses(&llm);
    assert_eq!(statuses, [200, 401, 200], "refused once, renewed, sent again");
    assert_eq!(llm.refreshes(), 1);
    // The renewed tokens (the refresh token rotates) are kept for the next run.
    let auth = auth_json(&home);
    assert_eq!(
        (auth["openai"]["access"].as_str(), auth["openai"]["refresh"].as_str()),
        (Some("at_fake_1"), Some("rt_fake_1"))
    );
}

#[test]
fn issue_35_an_expired_sign_in_renews_before_the_request_and_a_revoked_one_says_sign_in_again() {
    let home = Home::new();
    let llm = FakeLlm::start();
    signed_in(&home, &llm, now_ms().saturating_sub(1000));
    llm.expire_access_after(0);
    llm.script([Turn::text("fresh")]);
    let out = openai(&home, &llm).args(["-p", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let statuses = model_statuses(&llm);
    assert_eq!(statuses, [200], "renewed before the request, not after a refusal");
    assert_eq!(llm.refreshes(), 1);
    // Revoked: renewing fails, and rab says what to do.
    let expired = now_ms().saturating_sub(1000);
    let mut auth = auth_json(&home);
    auth["openai"]["expires_at"] = json!(expired);
    std::fs::write(home.dir.path().join("rab/agent/auth.json"), auth.to_string()).unwrap();
    llm.revoke_sign_in();
    let before = llm.requests().len();
    let out = openai(&home, &llm).args(["-p", "hi"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("rab login openai --chatgpt"), "{}", stderr(&out));
    let sent = llm.requests()[before..].iter().filter(|r| r.path.ends_with("/responses")).count();
    assert_eq!(sent, 0, "nothing sent with a dead token");
}

#[test]
fn issue_35_a_declined_sign_in_stores_nothing() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.sign_in(3600);
    llm.decline_sign_in();
    let out = sign_in(&home, &llm);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("declined"), "{}", stderr(&out));
    assert!(!home.dir.path().join("rab/agent/auth.json").exists());
    // Subscriptions whose terms forbid it are not offered.
    let out = home.rab().args(["login", "anthropic", "--chatgpt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn issue_35_openrouter_sign_in_exchanges_the_code_for_a_key() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let out = browser_sign_in(
        &home,
        &llm,
        &["login", "openrouter", "--oauth"],
        "RAB_OPENROUTER_AUTH_URL",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("signed in at OpenRouter"), "{}", stdout(&out));
    let auth = auth_json(&home);
    assert_eq!(auth["openrouter"], json!({"type": "api_key", "key": "sk-or-fake-1"}), "{auth}");
    // The key is an ordinary OpenRouter key: requests carry it.
    llm.script([Turn::text("via openrouter")]);
    let out = home
        .rab()
        .args(["--provider", "openrouter", "-p", "hi"])
        .env("OPENROUTER_BASE_URL", llm.openai_url())
        .env_remove("OPENROUTER_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let chat = llm.requests().into_iter().find(|r| r.path.ends_with("/chat/completions")).unwrap();
    assert_eq!(chat.header("authorization"), Some("Bearer sk-or-fake-1"));
}

#[test]
fn issue_35_slash_login_signs_in_with_chatgpt_and_the_session_uses_it_at_once() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.sign_in(3600);
    llm.script([Turn::text("hello from the plan")]);
    let envs = vec![
        ("HOME".into(), home.dir.path().display().to_string()),
        ("RAB_HOME".into(), home.dir.path().join("rab").display().to_string()),
        ("OPENAI_BASE_URL".into(), llm.openai_url()),
        ("RAB_OPENAI_AUTH_URL".into(), llm.url()),
    ];
    let t = std::time::Duration::from_secs(20);
    // Wide enough for the sign-in address on one line.
    let mut pty =
        super::pty::Pty::spawn(home.dir.path(), &["--provider", "openai"], &envs, 700, 30);
    pty.wait_for("the editor and the hint", t, |s| {
        s.contains("/help for commands") && s.contains("Type /login openai")
    });
    pty.send("/login openai --chatgpt\r");
    pty.wait_for("the sign-in address", t, |s| s.contains("/api/accounts/authorize?"));
    let screen = pty.history();
    let start = screen.find(&format!("{}/api/accounts/authorize?", llm.url())).unwrap();
    let url: String = screen[start..].chars().take_while(|c| !c.is_whitespace()).collect();
    let (status, back) = get(&url);
    assert_eq!(status, 302, "{url}");
    assert_eq!(get(&back.unwrap()).0, 200);
    pty.wait_for("the sign-in", t, |s| s.contains("signed in with ChatGPT as user@example.com"));
    pty.send("hi\r");
    pty.wait_for("the answer", t, |s| s.contains("hello from the plan"));
    let model = llm.requests().into_iter().find(|r| r.path.ends_with("/responses")).unwrap();
    assert_eq!(model.header("authorization"), Some("Bearer at_fake_1"));
}

#[test]
fn rab_login_stores_a_key_read_from_stdin_and_refuses_an_empty_one() {
    let home = Home::new();
    let mut cmd = home.rab();
    cmd.args(["login", "anthropic"]);
    let out = super::harness::with_stdin(cmd, "sk-ant-from-stdin\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        auth_json(&home)["anthropic"],
        json!({"type": "api_key", "key": "sk-ant-from-stdin"})
    );
    assert!(!stdout(&out).contains("sk-ant-from-stdin"), "the key is never echoed");
    let mut cmd = home.rab();
    cmd.args(["login", "openai"]);
    let out = super::harness::with_stdin(cmd, "\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no key on stdin"), "{}", stderr(&out));
    let mut cmd = home.rab();
    cmd.args(["login", "ollama"]);
    let out = super::harness::with_stdin(cmd, "x\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Class 7 of the third containment audit: OpenRouter's sign-in has no state, and rab
/// took the first request to its callback: another local process could deliver a
/// code of its own and have its key stored as the user's. The callback's path now
/// holds a random value of this sign-in's own; anything else gets a 404 and the wait
/// goes on.
#[test]
fn the_openrouter_callback_takes_only_this_sign_ins_own_address() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut child = home
        .rab()
        .args(["login", "openrouter", "--oauth"])
        .env("RAB_OPENROUTER_AUTH_URL", llm.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let url = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no address shown");
        if let Some(u) = line.trim().strip_prefix("http://") {
            break format!("http://{u}");
        }
    };
    let callback: String = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "callback_url")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    let parsed = url::Url::parse(&callback).unwrap();
    let secret = parsed.path().strip_prefix("/auth/callback/").unwrap();
    assert!(secret.len() >= 32, "{callback}");
    let origin = format!("http://127.0.0.1:{}", parsed.port().unwrap());
    // Another process's code, at the addresses it can guess: refused, nothing taken.
    for forged in [
        "/auth/callback?code=or_code_forged",
        "/auth/callback/?code=or_code_forged",
        "/auth/callback/guess?code=or_code_forged",
        &format!("/auth/callback/{secret}x?code=or_code_forged"),
    ] {
        assert_eq!(get(&format!("{origin}{forged}")).0, 404, "{forged}");
    }
    // The real one goes through.
    let (status, back) = get(&url);
    assert_eq!(status, 302);
    assert_eq!(get(&back.unwrap()).0, 200);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let auth = auth_json(&home);
    assert_eq!(auth["openrouter"], json!({"type": "api_key", "key": "sk-or-fake-1"}), "{auth}");
}
