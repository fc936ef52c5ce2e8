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
        (&["-r", "-p", "hi"], "cannot be used with"),
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
