//! The conformance suite: request and response fixtures per provider and model family,
//! each written from the provider's current documentation (the page and the day it
//! was read are in the fixture), and conversations that replay thinking, tool calls
//! and system updates through the fake server, which enforces the providers' rules.
//! `cargo test -p rab-ai conformance` runs it; docs/providers.md says how to refresh it.
//!
//! A request fixture (`tests/fixtures/conformance/*.json` with a `context`) is sent to
//! the fake server by the real adapter; the body must contain `request` (objects by
//! subset, arrays element by element), the headers `headers`, and none of the dotted
//! paths in `absent`. A response fixture (with `sse`) is decoded by the adapter; the
//! message must contain `message`.

mod anthropic;
mod others;

use pretty_assertions::assert_eq;
use rab_ai::{
    Api, Content, Context, Message, Model, ModelQuery, Registry, ThinkingLevel, ToolResultMessage,
    ToolSpec,
};
use rab_fake_llm::{FakeLlm, Turn};
use serde::Deserialize;
use serde_json::Value;

use super::harness::{options, run};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    doc: String,
    seen: String,
    what: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    api: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    context: Option<FixtureContext>,
    #[serde(default)]
    request: Option<Value>,
    #[serde(default)]
    headers: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    sse: Option<String>,
    #[serde(default)]
    message: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureContext {
    #[serde(default)]
    system: String,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    messages: Vec<Message>,
}

/// `expected` is contained in `actual`: objects by subset, arrays element by element,
/// everything else equal. Returns where they differ.
fn contained(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let inner = a.get(k).ok_or_else(|| format!("{path}.{k}: missing"))?;
                contained(v, inner, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!("{path}: {} items, expected {}: {actual}", a.len(), e.len()));
            }
            for (n, (ev, av)) in e.iter().zip(a).enumerate() {
                contained(ev, av, &format!("{path}[{n}]"))?;
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

fn lookup<'a>(v: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(v, |v, key| match key.parse::<usize>() {
        Ok(i) => v.get(i),
        Err(_) => v.get(key),
    })
}

/// A built-in model served by `llm`.
fn model(id: &str, llm: &FakeLlm) -> Model {
    let mut m = Registry::builtin()
        .resolve(&ModelQuery { model: Some(id), ..Default::default() })
        .unwrap_or_else(|e| panic!("{id}: {e}"))
        .model;
    m.base_url = match m.api {
        Api::AnthropicMessages | Api::GoogleGenerativeAi => llm.url(),
        Api::OpenaiResponses | Api::OpenaiCompletions => llm.openai_url(),
    };
    m
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        grammar: None,
        server: None,
    }
}

fn result(id: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![Content::text("hello")],
        is_error: false,
    })
}

async fn check_request(name: &str, f: &Fixture) {
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let query =
        f.model.as_deref().unwrap_or_else(|| panic!("{name}: a request fixture needs `model`"));
    let mut model = Registry::builtin()
        .resolve(&ModelQuery { model: Some(query), ..Default::default() })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .model;
    model.base_url = match model.api {
        Api::AnthropicMessages | Api::GoogleGenerativeAi => llm.url(),
        Api::OpenaiResponses | Api::OpenaiCompletions => llm.openai_url(),
    };
    let ctx = f.context.as_ref().unwrap_or_else(|| panic!("{name}: no context"));
    let context = Context {
        system_prompt: ctx.system.clone(),
        messages: ctx.messages.clone(),
        tools: ctx.tools.clone(),
        memo: None,
    };
    let mut opts = options();
    opts.thinking = f.thinking.as_deref().map_or(ThinkingLevel::Off, |t| {
        ThinkingLevel::parse(t).unwrap_or_else(|| panic!("{name}: thinking {t}"))
    });
    opts.max_tokens = Some(4096);
    let out = run(&model, &context, &opts).await;
    let req = llm.requests().remove(0);
    assert_eq!(req.status, 200, "{name}: the fake server refused it: {:?}", out.events.last());
    if let Some(expected) = &f.request {
        contained(expected, &req.body, "body").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for (header, value) in f.headers.iter().flatten() {
        assert_eq!(req.header(header), value.as_str(), "{name}: header {header}");
    }
    for path in &f.absent {
        assert!(lookup(&req.body, path).is_none(), "{name}: {path} must not be sent");
    }
    assert!(req.transformations.is_empty(), "{name}: the server dropped thinking");
}

fn check_response(name: &str, f: &Fixture) {
    let api = f.api.as_deref().unwrap_or_else(|| panic!("{name}: a response fixture needs `api`"));
    let api = Api::parse(api).unwrap_or_else(|| panic!("{name}: api {api}"));
    let sse = f.sse.as_deref().unwrap_or_default();
    // Any split of the bytes decodes the same.
    for chunk in [7, 64, sse.len().max(1)] {
        let (message, _) = rab_ai::bench::decode(api, sse.as_bytes(), chunk)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let actual = serde_json::to_value(&message).unwrap();
        if let Some(expected) = &f.message {
            contained(expected, &actual, "message").unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}

#[tokio::test]
async fn conformance_fixtures_hold() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/conformance");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "fixtures: {names:?}");
    for name in &names {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        let f: Fixture = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(f.doc.starts_with("https://"), "{name}: `doc` is the page it was written from");
        assert!(f.seen.len() == 10 && f.seen.starts_with("20"), "{name}: `seen` is YYYY-MM-DD");
        assert!(!f.what.is_empty(), "{name}: `what` says what it checks");
        if f.sse.is_some() {
            check_response(name, &f);
        } else {
            check_request(name, &f).await;
        }
    }
}
