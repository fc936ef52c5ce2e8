//! The JSON each adapter sends, compared with fixtures written from the providers' API
//! references (tools, system prompt, thinking with signature replay, cache_control),
//! plus the headers each API requires.

use pretty_assertions::assert_eq;
use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Context, Message, ModelQuery, Registry,
    StopReason, ThinkingLevel, ToolCall, ToolResultMessage, ToolSpec, Usage,
};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};

use super::harness::{options, run};

fn history(api: Api, model: &str) -> Vec<Message> {
    let (thinking_sig, item_id, call_sig, call_item) = match api {
        Api::AnthropicMessages => (Some("sig_2313bf39441a8b1a"), None, None, None),
        Api::OpenaiResponses => (Some("sig_2313bf39441a8b1a"), Some("rs_1"), None, Some("fc_1")),
        Api::OpenaiCompletions => (None, None, None, None),
        Api::GoogleGenerativeAi => (None, None, Some("gsig_1"), None),
    };
    // OpenAI labels assistant messages with their phase; the others have none.
    let phase = |p: &str| (api == Api::OpenaiResponses).then(|| p.to_owned());
    let provider = match api {
        Api::AnthropicMessages => "anthropic",
        Api::OpenaiResponses => "openai",
        Api::OpenaiCompletions => "deepseek",
        Api::GoogleGenerativeAi => "google",
    };
    let assistant = |content: Vec<AssistantBlock>, stop: StopReason| {
        Message::Assistant(AssistantMessage {
            content,
            api,
            provider: provider.into(),
            model: model.into(),
            usage: Usage::default(),
            stop_reason: stop,
            error_message: None,
            response_id: None,
            prefix_hash: None,
        })
    };
    vec![
        Message::user("Read a.txt"),
        assistant(
            vec![
                AssistantBlock::Thinking {
                    thinking: "Need the file.".into(),
                    signature: thinking_sig.map(str::to_owned),
                    item_id: item_id.map(str::to_owned),
                    redacted: false,
                },
                AssistantBlock::Text {
                    text: "Reading it.".into(),
                    signature: None,
                    phase: phase("commentary"),
                    citations: Vec::new(),
                },
                AssistantBlock::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "a.txt"}),
                    invalid_arguments: None,
                    signature: call_sig.map(str::to_owned),
                    item_id: call_item.map(str::to_owned),
                }),
            ],
            StopReason::ToolUse,
        ),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: "read".into(),
            content: vec![Content::text("hello")],
            is_error: false,
        }),
        assistant(
            vec![AssistantBlock::Text {
                text: "It says hello.".into(),
                signature: None,
                phase: phase("final_answer"),
                citations: Vec::new(),
            }],
            StopReason::Stop,
        ),
        Message::user("Thanks"),
    ]
}

async fn sent_body(api: Api, model_id: &str) -> (Value, rab_fake_llm::RecordedRequest) {
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok")]);
    let mut model = Registry::builtin()
        .resolve(&ModelQuery { model: Some(model_id), ..Default::default() })
        .unwrap()
        .model;
    assert_eq!(model.api, api);
    model.base_url = match api {
        Api::AnthropicMessages | Api::GoogleGenerativeAi => llm.url(),
        Api::OpenaiResponses | Api::OpenaiCompletions => llm.openai_url(),
    };
    let context = Context {
        system_prompt: "You are rab.".into(),
        messages: history(api, model_id),
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }),
            grammar: None,
            server: None,
        }],
        memo: None,
    };
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    opts.max_tokens = Some(4096);
    opts.session_id = Some("sess-1".into());
    let out = run(&model, &context, &opts).await;
    assert_eq!(out.message().text(), "ok", "{api}");
    let req = llm.requests().remove(0);
    (req.body.clone(), req)
}

fn fixture(api: Api) -> Value {
    let name = api.as_str().replace('-', "_");
    let path = format!("{}/tests/fixtures/request_{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[tokio::test]
async fn anthropic_request_matches_the_api_reference() {
    let (body, req) = sent_body(Api::AnthropicMessages, "claude-sonnet-5-5").await;
    assert_eq!(body, fixture(Api::AnthropicMessages));
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("x-api-key"), Some("test-key"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("anthropic-beta"), Some("thinking-binding-controls-2026-08-01"));
}

#[tokio::test]
async fn openai_responses_request_matches_the_api_reference() {
    let (body, req) = sent_body(Api::OpenaiResponses, "gpt-6.1-sol").await;
    assert_eq!(body, fixture(Api::OpenaiResponses));
    assert_eq!(req.path, "/v1/responses");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
}

#[tokio::test]
async fn chat_completions_request_matches_the_api_reference() {
    let (body, req) = sent_body(Api::OpenaiCompletions, "deepseek-flash").await;
    assert_eq!(body, fixture(Api::OpenaiCompletions));
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
}

#[tokio::test]
async fn gemini_request_matches_the_api_reference() {
    let (body, req) = sent_body(Api::GoogleGenerativeAi, "gemini-3.8-flash").await;
    assert_eq!(body, fixture(Api::GoogleGenerativeAi));
    assert_eq!(req.path, "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse");
    assert_eq!(req.header("x-goog-api-key"), Some("test-key"));
}

#[tokio::test]
async fn thinking_goes_back_to_other_models_of_its_provider_only() {
    // Anthropic's model check drops, without an error, blocks the current model cannot
    // read, and reads them again when the conversation returns to their model: so they
    // are sent (preserved-thinking page, read 2026-11-24). Another provider's are not.
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok"), Turn::text("ok")]);
    let mut model = Registry::builtin()
        .resolve(&ModelQuery { model: Some("claude-opus-5-5"), ..Default::default() })
        .unwrap()
        .model;
    model.base_url = llm.url();
    let mut context = Context {
        system_prompt: String::new(),
        messages: history(Api::AnthropicMessages, "claude-sonnet-5-5"),
        tools: vec![],
        memo: None,
    };
    run(&model, &context, &options()).await.message();
    let body = &llm.requests()[0].body;
    assert_eq!(body["messages"][1]["content"][0]["type"], "thinking");
    assert!(body.get("system").is_none(), "empty system prompt is omitted");
    for m in &mut context.messages {
        if let Message::Assistant(a) = m {
            a.provider = "my-proxy".into();
        }
    }
    run(&model, &context, &options()).await.message();
    let body = &llm.requests()[1].body;
    assert_eq!(body["messages"][1]["content"][0], json!({"type": "text", "text": "Reading it."}));
}
