//! Shared helpers: a model pointed at the fake server for each wire format, and a
//! collector for stream events.

use futures_util::StreamExt;
use rab_ai::{
    Api, AssistantMessage, Client, Context, Error, Message, Model, Provider, RetryPolicy,
    StreamEvent, StreamOptions, ThinkingFormat,
};
use rab_fake_llm::FakeLlm;
use std::time::Duration;

pub const APIS: [Api; 4] =
    [Api::AnthropicMessages, Api::OpenaiResponses, Api::OpenaiCompletions, Api::GoogleGenerativeAi];

/// A reasoning-capable model of the given wire format served by `llm`.
pub fn model(api: Api, llm: &FakeLlm) -> Model {
    let (provider, base, thinking) = match api {
        Api::AnthropicMessages => ("anthropic", llm.url(), ThinkingFormat::AnthropicBudget),
        Api::OpenaiResponses => ("openai", llm.openai_url(), ThinkingFormat::OpenaiEffort),
        Api::OpenaiCompletions => ("deepseek", llm.openai_url(), ThinkingFormat::Deepseek),
        Api::GoogleGenerativeAi => ("google", llm.url(), ThinkingFormat::GeminiLevel),
    };
    let mut m = Model::custom("test-model", provider, api, &base);
    m.reasoning = true;
    m.max_output = 8192;
    m.compat.thinking = thinking;
    m
}

pub fn context(prompt: &str) -> Context {
    Context {
        system_prompt: "You are a test.".into(),
        messages: vec![Message::user(prompt)],
        tools: vec![],
        memo: None,
    }
}

pub fn fast_retries() -> RetryPolicy {
    RetryPolicy { base_delay: Duration::from_millis(10), ..RetryPolicy::default() }
}

pub fn options() -> StreamOptions {
    StreamOptions { api_key: Some("test-key".into()), retry: fast_retries(), ..Default::default() }
}

pub struct Outcome {
    pub events: Vec<StreamEvent>,
}

impl Outcome {
    pub fn message(&self) -> &AssistantMessage {
        match self.events.last() {
            Some(StreamEvent::Done(m)) => m,
            other => panic!("stream did not end with Done: {other:?}"),
        }
    }

    pub fn error(&self) -> &Error {
        match self.events.last() {
            Some(StreamEvent::Error { error, .. }) => error,
            other => panic!("stream did not end with Error: {other:?}"),
        }
    }

    pub fn count(&self, f: impl Fn(&StreamEvent) -> bool) -> usize {
        self.events.iter().filter(|e| f(e)).count()
    }
}

pub async fn run(model: &Model, context: &Context, options: &StreamOptions) -> Outcome {
    let mut stream = Client::new().stream(model, context, options, Default::default());
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    Outcome { events }
}
