//! Everyday comfort: shell completions and the man page, "did you mean" for a mistyped
//! subcommand, usage errors for impossible or conflicting options, and local servers'
//! model lists.

use rab_fake_llm::{FakeLlm, ServedModel, Turn};

use super::harness::{Home, stderr, stdout};

#[test]
fn completions_are_printed_for_each_shell() {
    let home = Home::new();
    for (shell, mark) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef rab"),
        ("fish", "complete -c rab"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = home.rab().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(mark), "{shell}: {script}");
        for word in ["sessions", "max-turns", "permission-mode"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let out = home.rab().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("possible values"), "{}", stderr(&out));
}

#[test]
fn the_man_page_is_roff_with_every_option() {
    let home = Home::new();
    let out = home.rab().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with(".ie") || page.contains(".TH rab"), "{page}");
    for word in ["\\-\\-max\\-turns", "\\-\\-output\\-format", "completions", "sessions"] {
        assert!(page.contains(word), "man page lacks {word}");
    }
    // Issue 53: the name said once, the sections a man page has, examples verbatim.
    assert!(page.contains("rab \\- a fast, light, safe terminal coding agent\n"), "{page}");
    assert!(!page.contains("rab \\- rab:"), "{page}");
    for section in [".SH \"EXIT STATUS\"", ".SH \"ENVIRONMENT\"", ".SH \"FILES\"", ".SH EXAMPLES"] {
        assert!(page.contains(section), "man page lacks {section}");
    }
    assert!(page.contains(".TP\n\\fB4\\fR\nthe next request would have taken spending"), "{page}");
    assert!(
        page.contains("\\fBRAB_HOME\\fR") && page.contains("\\fB~/.rab/agent/settings.json\\fR")
    );
    let examples = page.split(".SH EXAMPLES\n").nth(1).unwrap();
    assert!(examples.starts_with(".nf\n  rab  "), "{examples}");
    assert!(examples.contains("git diff | rab \\-p \"review this\""), "{examples}");
    assert!(!page.contains(".SH EXTRA"), "the examples are not also a paragraph");
}

/// Issue 53: completions offer the values of --permission-mode, --sandbox and --model,
/// while rab itself still takes Claude Code's spellings.
#[test]
fn completions_offer_modes_sandboxes_and_models() {
    let home = Home::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = home.rab().args(["completions", shell]).output().unwrap();
        let script = stdout(&out);
        for value in ["accept-edits", "workspace-write", "claude-opus-5-5"] {
            assert!(script.contains(value), "{shell}: no {value}");
        }
    }
    let help = stdout(&home.rab().arg("--help").output().unwrap());
    assert!(!help.contains("claude-opus-5-5"), "--help does not list every model");
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "--permission-mode", "acceptEdits", "hi"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
}

#[test]
fn help_has_examples_for_the_common_jobs() {
    let out = Home::new().rab().arg("--help").output().unwrap();
    let help = stdout(&out);
    for example in
        ["rab -p", "git diff | rab -p", "rab -c", "--output-format json", "rab completions"]
    {
        assert!(help.contains(example), "--help lacks {example}: {help}");
    }
}

/// A loopback server answering every request with `status` and `body` (JSON), and the
/// requests it got.
fn answer_with(status: u16, body: &str) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url =
        format!("http://{}/repos/rab-agent/rab/releases/latest", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let body = body.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&request).into_owned());
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, rx)
}

/// Issue 53: `rab update` also checks the latest release, as GitHub's REST API gives
/// it (`GET /repos/{owner}/{repo}/releases/latest`, `tag_name`), and says when it cannot.
#[test]
fn rab_update_checks_the_latest_release() {
    let home = Home::new();
    let (url, requests) = answer_with(200, r#"{"tag_name": "v99.0.0", "name": "rab 99"}"#);
    let out = home.rab().arg("update").env("RAB_UPDATE_URL", &url).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("A newer release is out: 99.0.0"), "{}", stdout(&out));
    let request = requests.recv().unwrap().to_ascii_lowercase();
    assert!(request.starts_with("get /repos/rab-agent/rab/releases/latest "), "{request}");
    assert!(request.contains("accept: application/vnd.github+json"), "{request}");
    assert!(request.contains("user-agent: rab/"), "{request}");
    let version = env!("CARGO_PKG_VERSION");
    let (url, _) = answer_with(200, &format!(r#"{{"tag_name": "v{version}"}}"#));
    let out = home.rab().arg("update").env("RAB_UPDATE_URL", &url).output().unwrap();
    assert!(stdout(&out).contains("This is the latest release"), "{}", stdout(&out));
    // No answer worth reading: the advice stands and the reason is told.
    let (url, _) = answer_with(403, r#"{"message": "API rate limit exceeded"}"#);
    let out = home.rab().arg("update").env("RAB_UPDATE_URL", &url).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("To update:"), "{text}");
    assert!(
        text.contains("Could not check for a newer release") && text.contains("HTTP 403"),
        "{text}"
    );
    // A tag that is no version is not printed to the terminal.
    let (url, _) = answer_with(200, r#"{"tag_name": "\u001b]0;pwned\u0007v1"}"#);
    let out = home.rab().arg("update").env("RAB_UPDATE_URL", &url).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("named no release") && !text.contains("pwned"), "{text}");
}

/// Issue 53: `rab update` says how to update, and a lone word that reads as a command
/// (`upgrade`, `version`, `help`) is never sent to the model as a prompt without a
/// question, even with --yolo; with more words it is a prompt as ever.
#[test]
fn rab_update_says_how_and_a_command_word_is_not_a_prompt() {
    let home = Home::new();
    let out = home.rab().arg("update").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with(&format!("rab {}", env!("CARGO_PKG_VERSION"))), "{text}");
    assert!(text.contains("To update: a build from source"), "{text}");
    let llm = FakeLlm::start();
    llm.script([Turn::text("asked")]);
    for word in ["upgrade", "version", "help", "Update"] {
        let out = home
            .rab_for("anthropic-messages", &llm, Some("k"))
            .args(["--yolo", "-p", word])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{word}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("'{word}' reads as a command")), "{}", stderr(&out));
    }
    assert!(llm.requests().is_empty(), "nothing was sent");
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["--yolo", "-p", "update the changelog"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "asked\n", "{}", stderr(&out));
}

#[test]
fn a_mistyped_subcommand_is_not_sent_to_the_model() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("should not be asked")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["sesions", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("did you mean `rab sessions list`"), "{err}");
    assert!(err.contains("rab -p \"sesions list\""), "{err}");
    assert!(llm.requests().is_empty());
    // Quoted, it is a prompt like any other.
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "sesions list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(llm.requests().len(), 1);
    // And so is an ordinary first word.
    llm.script([Turn::text("ok")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-p", "explain", "main.rs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn impossible_and_conflicting_options_are_usage_errors() {
    let home = Home::new();
    let cases: &[(&[&str], &str)] = &[
        (&["-p", "--max-turns", "0", "hi"], "give 1 or more"),
        (&["-p", "--max-turns", "five", "hi"], "whole number"),
        (&["-p", "--max-turns", "-3", "hi"], "whole number"),
        (&["-p", "--max-budget-usd", "-1", "hi"], "above 0"),
        (&["-p", "--max-budget-usd", "0", "hi"], "above 0"),
        (&["-p", "--max-budget-usd", "lots", "hi"], "US dollars"),
        (&["-p", "--yolo", "--permission-mode", "plan", "hi"], "cannot be used with"),
        (&["-p", "--no-tools", "--tools", "read", "hi"], "cannot be used with"),
        (&["-r", "-p", "hi"], "--resume without an id picks a session in the terminal UI"),
        (&["-r", "-c"], "cannot be used with"),
    ];
    for (args, says) in cases {
        let out = home.rab().args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_local_provider_without_a_model_says_to_pass_one() {
    let home = Home::new();
    let out = home.rab().args(["-p", "--provider", "ollama", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("ollama has no default model: pass --model NAME"), "{err}");
    assert!(err.contains("rab --list-models --provider ollama"), "{err}");
}

fn served() -> Vec<ServedModel> {
    vec![
        ServedModel { id: "qwen3:8b".into(), context_window: Some(40_960) },
        ServedModel { id: "llama3.2:3b".into(), context_window: None },
    ]
}

#[test]
fn list_models_asks_an_ollama_server() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.serve_models(served());
    let out = home
        .rab()
        .env("OLLAMA_BASE_URL", llm.openai_url())
        .args(["--list-models", "--provider", "ollama"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = stdout(&out);
    assert!(list.contains("ollama/qwen3:8b") && list.contains("40k"), "{list}");
    assert!(list.contains("ollama/llama3.2:3b") && list.contains('?'), "{list}");
    assert!(list.contains("2 model(s) listed by the server"), "{list}");
    let paths: Vec<String> = llm.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths[0], "/api/tags", "{paths:?}");
    assert!(paths.iter().filter(|p| *p == "/api/show").count() == 2, "{paths:?}");
    // A search narrows it.
    let out = home
        .rab()
        .env("OLLAMA_BASE_URL", llm.openai_url())
        .args(["--list-models", "qwen", "--provider", "ollama"])
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("llama3.2"), "{}", stdout(&out));
}

#[test]
fn list_models_asks_an_openai_style_server_and_names_an_unreachable_one() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.serve_models(served());
    let out = home
        .rab()
        .env("VLLM_BASE_URL", llm.openai_url())
        .args(["--list-models", "--provider", "vllm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("vllm/qwen3:8b") && stdout(&out).contains("40k"));
    assert_eq!(llm.requests()[0].path, "/v1/models");
    // Nothing listening: the error names the address and what to check.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = home
        .rab()
        .env("LMSTUDIO_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .args(["--list-models", "--provider", "lmstudio"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("127.0.0.1:{port}/v1/models")), "{err}");
    assert!(err.contains("is the server running?"), "{err}");
}

#[test]
fn a_local_model_takes_its_context_window_from_the_server() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.serve_models([ServedModel { id: "tiny:1b".into(), context_window: Some(8192) }]);
    llm.script([Turn::text("hello")]);
    let out = home
        .rab()
        .env("OLLAMA_BASE_URL", llm.openai_url())
        .args(["-p", "--provider", "ollama", "--model", "tiny:1b", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let chat = llm.requests().into_iter().find(|r| r.path.ends_with("/chat/completions")).unwrap();
    let max = chat
        .body
        .get("max_tokens")
        .or_else(|| chat.body.get("max_completion_tokens"))
        .and_then(|v| v.as_u64())
        .unwrap();
    assert!(max <= 4096, "max output not bounded by the server's 8192 context: {max}");
}

/// Every entry of the one session under `home`.
fn tape_entries(home: &Home) -> Vec<serde_json::Value> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&home.dir.path().join("rab/sessions"), &mut files);
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_overloaded_model_fails_over_to_another_provider_for_that_prompt() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let settings = serde_json::json!({
        "retry": {"maxRetries": 1, "baseDelayMs": 10},
        "fallbackModels": ["openai/gpt-6.1-sol"],
    });
    let agent = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(home.dir.path().join("notes.txt"), "the notes\n").unwrap();
    let rab = |args: &[&str]| {
        home.rab()
            .env("ANTHROPIC_API_KEY", "ka")
            .env("ANTHROPIC_BASE_URL", llm.url())
            .env("OPENAI_API_KEY", "ko")
            .env("OPENAI_BASE_URL", llm.openai_url())
            .args(["--provider", "anthropic", "--model", "claude-sonnet-5-5", "--yolo"])
            .args(args)
            .output()
            .unwrap()
    };
    // A first prompt on the healthy primary, with thinking (signed by the Anthropic wire).
    llm.script([Turn::text("first answer").with_thinking("let me think")]);
    let out = rab(&["--thinking", "high", "-p", "one"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Now it is overloaded: the turn goes on on OpenAI's Responses wire, tools and all.
    llm.overload("claude-sonnet-5-5");
    llm.script([
        Turn::tool_call("read", serde_json::json!({"path": "notes.txt"})),
        Turn::text("done on the fallback"),
    ]);
    let out = rab(&["--thinking", "high", "-c", "-p", "--output-format", "stream-json", "two"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<serde_json::Value> =
        stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let fallback = events.iter().find(|e| e["type"] == "fallback").expect("a fallback event");
    assert_eq!(fallback["from"], "anthropic/claude-sonnet-5-5");
    assert_eq!(fallback["to"], "openai/gpt-6.1-sol");
    assert!(fallback["message"].as_str().unwrap().contains("529"), "{fallback}");
    let paths: Vec<String> = llm.requests()[1..].iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/v1/messages", "/v1/messages", "/v1/responses", "/v1/responses"]);
    let statuses: Vec<u16> = llm.requests()[1..].iter().map(|r| r.status).collect();
    assert_eq!(statuses, [529, 529, 200, 200]);
    // The fallback got the whole conversation, converted for its wire (the fake server
    // rejects what OpenAI would), and the tool result.
    let first_b = &llm.requests()[3];
    assert!(String::from_utf8_lossy(&first_b.raw).contains("first answer"));
    assert!(String::from_utf8_lossy(&llm.requests()[4].raw).contains("the notes"));
    // The tape has the switch, why, and the replies under the fallback's name.
    let entries = tape_entries(&home);
    let changes: Vec<String> = entries
        .iter()
        .filter(|e| e["type"] == "model_change")
        .map(|e| format!("{}/{}", e["provider"].as_str().unwrap(), e["modelId"].as_str().unwrap()))
        .collect();
    assert_eq!(changes, ["anthropic/claude-sonnet-5-5", "openai/gpt-6.1-sol"]);
    let note = entries.iter().find(|e| e["type"] == "custom").expect("a fallback entry");
    assert_eq!(note["customType"], "fallback");
    assert_eq!(note["data"]["to"], "openai/gpt-6.1-sol");
    let by: Vec<&str> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .map(|e| e["message"]["provider"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["anthropic", "openai", "openai"]);
    // The next prompt starts on the primary again (and fails over again).
    llm.script([Turn::text("three")]);
    let out = rab(&["-c", "-p", "three"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("continuing on openai/gpt-6.1-sol"), "{}", stderr(&out));
    assert_eq!(llm.requests()[5].path, "/v1/messages");
    let changes = tape_entries(&home).iter().filter(|e| e["type"] == "model_change").count();
    assert_eq!(changes, 4, "back to the primary, then over again");
}

#[test]
fn without_fallbacks_an_overloaded_model_ends_the_run_with_its_error() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.overload("claude-sonnet-5-5");
    let agent = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let settings = serde_json::json!({"retry": {"maxRetries": 0},
                                      "fallbackModels": ["nosuch/model-x"]});
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["--model", "claude-sonnet-5-5", "-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("fallbackModels: \"nosuch/model-x\" left out"), "{err}");
    assert!(err.contains("529"), "{err}");
}

/// A project with a file, a folder and a secret, and `rab` for it against `llm`.
fn mention_project(home: &Home) -> std::path::PathBuf {
    let p = home.dir.path().join("proj");
    std::fs::create_dir_all(p.join("docs")).unwrap();
    std::fs::write(p.join("a.rs"), "line one\nline two\nline three\nline four\n").unwrap();
    std::fs::write(p.join("docs/guide.md"), "# Guide\n").unwrap();
    std::fs::write(p.join("docs/faq.md"), "# FAQ\n").unwrap();
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    std::fs::write(p.join("config.txt"), format!("key = {key}\n")).unwrap();
    std::fs::write(p.join("private.txt"), "do not send\n").unwrap();
    std::fs::create_dir_all(p.join(".rab")).unwrap();
    let settings = serde_json::json!({"permissions": {"deny": ["read(private.txt)"]}});
    std::fs::write(p.join(".rab/settings.json"), settings.to_string()).unwrap();
    p
}

#[test]
fn at_mentions_attach_files_ranges_and_folders_under_the_read_rules() {
    let home = Home::new();
    let dir = mention_project(&home);
    let llm = FakeLlm::start();
    llm.script([Turn::text("seen")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "--verbose"])
        .arg("compare @a.rs:2-3 with @docs/, see @config.txt and @private.txt, not @gone.rs or @alice")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "seen\n", "no attachment note on stdout");
    let body = String::from_utf8_lossy(&llm.requests()[0].raw).into_owned();
    assert!(body.contains(r#"<file path=\"a.rs\" lines=\"2-3\">"#), "{body}");
    assert!(body.contains("2\\tline two\\n3\\tline three"), "{body}");
    assert!(!body.contains("line one") && !body.contains("line four"), "{body}");
    assert!(body.contains(r#"<directory path=\"docs/\">"#), "{body}");
    assert!(body.contains("guide.md") && body.contains("faq.md"), "{body}");
    // The secret firewall and the deny rule hold as for the model's own reads.
    assert!(!body.contains("abcdefghijklmnopqrstuvwxyz0123456789"), "{body}");
    assert!(body.contains("config.txt"), "{body}");
    assert!(!body.contains("do not send"), "{body}");
    let err = stderr(&out);
    assert!(err.contains("@private.txt: not attached: a read deny rule covers it"), "{err}");
    assert!(err.contains("@gone.rs: no such file or directory"), "{err}");
    assert!(!err.contains("@alice"), "{err}");
    assert!(
        err.contains("rab: attached a.rs:2-3 (2 lines), docs/ (2 entries), config.txt (1 line)"),
        "{err}"
    );
    // The typed text goes as typed.
    assert!(body.contains("compare @a.rs:2-3 with @docs/"), "{body}");
}

#[test]
fn piped_text_is_data_and_its_mentions_are_not_read() {
    let home = Home::new();
    let dir = mention_project(&home);
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let out = super::harness::with_stdin(
        {
            let mut c = home.rab_for("anthropic-messages", &llm, Some("k"));
            c.current_dir(&dir).arg("-p");
            c
        },
        "summarise @a.rs",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = String::from_utf8_lossy(&llm.requests()[0].raw).into_owned();
    assert!(!body.contains("line one"), "{body}");
}

#[test]
fn export_without_a_path_writes_beside_the_session_file() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first")]);
    let out =
        home.rab_for("anthropic-messages", &llm, Some("k")).args(["-p", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .args(["-c", "-p", "/export md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    let sessions = home.dir.path().join("rab/sessions");
    let exported: Vec<std::path::PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert_eq!(exported.len(), 1, "{said}");
    assert!(said.contains(&exported[0].display().to_string()), "{said}");
    assert!(std::fs::read_to_string(&exported[0]).unwrap().contains("first"));
    let in_project: Vec<_> = std::fs::read_dir(home.dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("rab-session-"))
        .collect();
    assert!(in_project.is_empty(), "nothing written into the project");
}

#[test]
fn doctor_names_key_sources_without_values_and_tries_each_provider() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let secret = "sk-ant-doctor-must-not-print-this-0123456789";
    let out = home
        .rab()
        .env("ANTHROPIC_API_KEY", secret)
        .env("ANTHROPIC_BASE_URL", llm.url())
        .env("LMSTUDIO_BASE_URL", format!("http://127.0.0.1:{closed}/v1"))
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(secret) && !text.contains("0123456789"), "{text}");
    let line = |name: &str| {
        text.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_default().to_owned()
    };
    let anthropic = line("anthropic");
    assert!(anthropic.contains("key from $ANTHROPIC_API_KEY"), "{text}");
    assert!(anthropic.contains(&llm.url()) && anthropic.contains("reachable (HTTP"), "{text}");
    assert!(line("openai").contains("no key (set OPENAI_API_KEY or /login openai)"), "{text}");
    let lmstudio = line("lmstudio");
    assert!(lmstudio.contains("no key needed") && lmstudio.contains("not reachable"), "{text}");
}
