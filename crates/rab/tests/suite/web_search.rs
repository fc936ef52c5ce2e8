//! Web search run by the model's provider, on each wire, through the real binary and
//! the fake server (which plays each API's search blocks and checks how they come
//! back): the search, its results, a citation in the answer, the cost, the tape, and a
//! second prompt that sends the search back as the provider wants it.

use std::path::Path;
use std::process::{Command, Output};

use rab_fake_llm::{FakeLlm, ScriptedUsage, Turn};
use serde_json::Value;

use super::harness::{Home, stderr, stdout, walk};

const QUERY: &str = "rust 1.91 release date";
const PAGE: &str = "https://blog.rust-lang.org/2025/10/30/Rust-1.91.0/";
const TITLE: &str = "Announcing Rust 1.91.0";
const ANSWER: &str = "Rust 1.91 was released on 30 October 2025.";

fn usage() -> ScriptedUsage {
    ScriptedUsage { input: 2_000, output: 100, ..ScriptedUsage::default() }
}

/// Loads the deferred `web_search` (rarely used tools are named only, and loaded with
/// `tool_search`).
fn load_search() -> Turn {
    Turn::tool_call("tool_search", serde_json::json!({"query": "select:web_search"}))
        .with_usage(usage())
}

fn searching_turn() -> Turn {
    Turn::text(ANSWER)
        .with_search(QUERY, &[(PAGE, TITLE), ("https://example.org/rust", "Rust news")])
        .with_usage(usage())
}

/// `rab` for a wire, as `provider`: the fake server at the provider's base URL.
fn rab(home: &Home, llm: &FakeLlm, provider: &str, cwd: &Path) -> Command {
    let (key, base, url) = match provider {
        "anthropic" => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", llm.url()),
        "openai" => ("OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
        "google" => ("GEMINI_API_KEY", "GEMINI_BASE_URL", llm.url()),
        "openrouter" => ("OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", llm.openai_url()),
        other => panic!("no provider {other}"),
    };
    let mut cmd = home.rab();
    cmd.current_dir(cwd).args(["--provider", provider]).env(key, "k").env(base, url);
    cmd
}

fn result(out: &Output) -> Value {
    let text = stdout(out);
    serde_json::from_str(text.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(out)))
}

/// The provider's default model and what two requests of [`usage`] (loading the tool,
/// then searching) and one search cost on it.
fn expected_cost(provider: &str) -> f64 {
    let r = rab_ai::Registry::builtin();
    let id = r.provider(provider).unwrap().default_model.clone().unwrap();
    let m = r.models().iter().find(|m| m.provider == provider && m.id == id).unwrap();
    let tokens = rab_ai::Usage { input: 2_000, output: 100, ..rab_ai::Usage::default() };
    assert!(m.cost.per_search > 0.0, "{provider}: searches are priced");
    2.0 * m.cost.of(&tokens) + m.cost.per_search
}

/// Runs one search on `provider`'s wire and a second prompt after it; returns the
/// requests' bodies.
fn search_on(provider: &str) -> Vec<Value> {
    let home = Home::new();
    let cwd = home.dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let llm = FakeLlm::start();
    llm.script([load_search(), searching_turn(), Turn::text("You are welcome.")]);
    let out = rab(&home, &llm, provider, &cwd)
        .args(["-p", "--output-format", "json", "when did rust 1.91 come out?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
    let r = result(&out);
    assert_eq!(r["result"], ANSWER, "{provider}: {r}");
    let cost = r["costUsd"].as_f64().unwrap();
    let want = expected_cost(provider);
    assert!(
        (cost - want).abs() < 1e-9,
        "{provider}: cost {cost}, expected {want} (tokens and one search)"
    );
    // The tape keeps the search, its pages and the citation.
    let tape: String = walk(&home.dir.path().join("rab/sessions"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for part in [PAGE, TITLE, "\"type\":\"web_search\"", "\"citations\""] {
        assert!(tape.contains(part), "{provider}: the tape lacks {part}: {tape}");
    }
    // OpenRouter's stream names the pages it cites, not what it searched for.
    if provider != "openrouter" {
        assert!(tape.contains(QUERY), "{provider}: the tape lacks the query: {tape}");
    }
    // A second prompt in the same session sends the search back as the API takes it.
    let out = rab(&home, &llm, provider, &cwd).args(["-c", "-p", "thanks"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
    let requests = llm.requests();
    assert!(requests.iter().all(|r| r.status == 200), "{provider}: the fake server took both");
    requests.into_iter().map(|r| r.body).collect()
}

#[test]
fn issue_35_anthropic_runs_its_web_search_and_gets_it_back_whole() {
    let bodies = search_on("anthropic");
    let tool = bodies[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "web_search")
        .cloned()
        .unwrap();
    assert_eq!(tool["type"], "web_search_20250305", "{tool}");
    // The reply goes back as it came: the search, its encrypted results, the citation.
    let messages = bodies[2]["messages"].as_array().unwrap();
    let reply = &messages.iter().rfind(|m| m["role"] == "assistant").unwrap()["content"];
    let kinds: Vec<&str> =
        reply.as_array().unwrap().iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(kinds, ["server_tool_use", "web_search_tool_result", "text"], "{reply}");
    assert_eq!(reply[0]["input"]["query"], QUERY);
    assert_eq!(reply[1]["content"][0]["encrypted_content"], "enc_2_0");
    assert_eq!(reply[2]["citations"][0]["encrypted_index"], "idx_2_0");
}

#[test]
fn issue_35_openai_runs_web_search_with_its_sources() {
    let bodies = search_on("openai");
    let tools = bodies[1]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["type"] == "web_search"), "{tools:?}");
    let include = bodies[1]["include"].as_array().unwrap();
    assert!(include.iter().any(|i| i == "web_search_call.action.sources"), "{include:?}");
}

#[test]
fn issue_35_gemini_grounds_its_answer_in_google_search() {
    let bodies = search_on("google");
    let tools = bodies[1]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t.get("google_search").is_some()), "{tools:?}");
}

#[test]
fn issue_35_openrouter_runs_its_web_search_server_tool() {
    let bodies = search_on("openrouter");
    let tools = bodies[1]["tools"].as_array().unwrap();
    let search = tools.iter().find(|t| t["type"] == "openrouter:web_search").unwrap();
    assert_eq!(search["parameters"]["max_results"], 5, "{search}");
}

fn user_settings(home: &Home, text: &str) {
    let dir = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), text).unwrap();
}

fn offers_search(body: &Value) -> bool {
    body["tools"].as_array().into_iter().flatten().any(|t| {
        t["name"] == "web_search" || t.get("google_search").is_some() || t["type"] == "web_search"
    })
}

#[test]
fn issue_35_domain_rules_go_to_the_api_or_keep_the_search_away() {
    let home = Home::new();
    let cwd = home.dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    user_settings(&home, r#"{"permissions": {"deny": ["web_search(domain:example.org)"]}}"#);
    let llm = FakeLlm::start();
    llm.script([load_search(), searching_turn(), Turn::text("two"), Turn::text("three")]);
    let out = rab(&home, &llm, "anthropic", &cwd).args(["-p", "q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &llm.requests()[1].body;
    let tool =
        body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "web_search").unwrap();
    assert_eq!(tool["blocked_domains"], serde_json::json!(["example.org"]), "{tool}");
    // The fake server kept the search to the rule: the blocked page is not on the tape.
    let tape: String = walk(&home.dir.path().join("rab/sessions"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(tape.contains(PAGE) && !tape.contains("https://example.org/rust"), "{tape}");
    // Gemini's API takes no domain lists: with the rule, no search is offered there.
    let out = rab(&home, &llm, "google", &cwd).args(["-p", "q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!offers_search(&llm.requests()[2].body), "{}", llm.requests()[2].body);
    // A deny rule for every search (Claude Code's name for the tool) takes it away.
    user_settings(&home, r#"{"permissions": {"deny": ["WebSearch"]}}"#);
    let out = rab(&home, &llm, "anthropic", &cwd).args(["-p", "q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!offers_search(&llm.requests()[3].body), "{}", llm.requests()[3].body);
    let described = llm.requests()[3].body.to_string();
    assert!(!described.contains("web_search"), "not even named: {described}");
}

#[test]
fn issue_35_a_model_without_server_search_is_not_offered_it_and_tools_says_why() {
    let home = Home::new();
    let cwd = home.dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("plain")]);
    // OpenAI's models searched through Chat Completions: OpenAI searches on Responses.
    let out = home
        .rab_for("openai-completions", &llm, Some("k"))
        .current_dir(&cwd)
        .args(["-p", "q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!offers_search(&llm.requests()[0].body), "{}", llm.requests()[0].body);
    let out = home
        .rab_for("openai-completions", &llm, Some("k"))
        .current_dir(&cwd)
        .args(["-p", "/tools"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("web_search") && text.contains("not offered") && text.contains("Responses")
            || text.contains("openai-responses API only"),
        "{text}{}",
        stderr(&out)
    );
}
