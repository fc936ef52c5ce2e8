//! rab-ai: the LLM layer of rab.
//!
//! It owns the provider-neutral conversation types ([`Message`], [`AssistantMessage`],
//! [`ToolSpec`], [`Usage`], [`StopReason`]), the [`Provider`] trait the agent loop
//! depends on, one adapter per wire format (Anthropic Messages, OpenAI Responses,
//! OpenAI-compatible Chat Completions, Google Gemini), SSE decoding, retries with
//! backoff, and the built-in model table ([`Registry`]).
//!
//! It must not depend on another rab crate, nor know about tools, sessions, settings
//! files or terminals: keys and base URLs arrive as values.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use rab_ai::{Client, Context, Message, ModelQuery, Provider, Registry, StreamEvent, StreamOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builtin();
//! let model = registry.resolve(&ModelQuery { model: Some("claude-sonnet-5-5"), ..Default::default() })?.model;
//! let context = Context { system_prompt: "Be brief.".into(), messages: vec![Message::user("hi")], tools: vec![], memo: None };
//! let options = StreamOptions { api_key: Some("sk-…".into()), ..Default::default() };
//! let mut events = Client::new().stream(&model, &context, &options, Default::default());
//! while let Some(event) = events.next().await {
//!     match event {
//!         StreamEvent::TextDelta { delta, .. } => print!("{delta}"),
//!         StreamEvent::Done(message) => println!("\n[{:?}]", message.stop_reason),
//!         StreamEvent::Error { error, .. } => eprintln!("{error}"),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod anthropic;
mod anthropic_history;
mod assemble;
mod catalog;
mod error;
mod event;
mod gemini;
mod http;
pub mod local;
mod model;
pub mod oauth;
mod openai_chat;
mod openai_responses;
mod provider;
mod retry;
pub mod sse;
mod tls;
mod types;
mod web_search;

#[doc(hidden)]
pub mod bench;

pub use anthropic::{ANTHROPIC_VERSION, messages_url};
pub use catalog::{TableFormat, model_table, model_table_on};
pub use error::{Error, is_retryable_status};
pub use event::StreamEvent;
pub use gemini::stream_url as gemini_stream_url;
pub use http::Client;
pub use model::{
    Api, Compat, DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT, EFFORT_LADDER, EditTool,
    MaxTokensField, Model, ModelCost, ModelQuery, PriceTier, ProviderDef, Rates, Registry,
    ResolveError, Resolved, ThinkingFormat, custom_provider, infer_provider,
};
pub use openai_chat::chat_url;
pub use openai_responses::responses_url;
pub use provider::{EventStream, KeySource, Provider, StreamOptions, max_tokens};
pub use retry::{RetryPolicy, Timeouts};
pub use tls::http_client_builder;
pub use types::{
    AssistantBlock, AssistantMessage, Citation, Content, Context, Message, RequestMemo,
    SUMMARY_PREFIX, SearchResult, ServerTool, StopReason, SystemMessage, ThinkingLevel, ToolCall,
    ToolResultMessage, ToolSpec, Usage, UserMessage, WebSearch, search_note, tools_in_effect,
};
pub use web_search::{search_unavailable, supports_domains};
