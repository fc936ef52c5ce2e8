//! The provider-neutral conversation types: messages, content blocks, tool specs,
//! usage and stop reasons. Adapters translate these to and from each wire format;
//! everything above rab-ai sees only these.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Api;

/// One message of a conversation, as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// Input from the user (or injected by rab on the user's behalf).
    User(UserMessage),
    /// A reply produced by a model.
    Assistant(AssistantMessage),
    /// The result of one tool call, answering a [`ToolCall`] of the previous assistant message.
    ToolResult(ToolResultMessage),
    /// A change rab made after the conversation began: new instructions or facts (a new
    /// date, changed project instructions), tools offered or withdrawn, a new thinking
    /// level. The system prompt and tools of a conversation are sent unchanged on every
    /// request; what changes is appended here, where it became true, so nothing the
    /// model saw before is rewritten (Anthropic binds thinking to that prefix, and every
    /// provider's prompt cache keys on it).
    System(SystemMessage),
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(UserMessage { content: vec![Content::text(text)] })
    }

    /// The user message that stands for the earlier part of a conversation after it was
    /// summarised (compaction, handoff). Token counts reported before it are stale.
    pub fn summary(summary: &str) -> Self {
        Message::user(format!(
            "{SUMMARY_PREFIX}\n{}\n</conversation_summary>\nThe earlier part of this conversation \
             was compacted into the summary above; the messages after it are verbatim.",
            summary.trim()
        ))
    }

    /// Whether this is a [`Message::summary`].
    pub fn is_summary(&self) -> bool {
        match self {
            Message::User(u) => matches!(
                u.content.first(),
                Some(Content::Text { text }) if text.starts_with(SUMMARY_PREFIX)
            ),
            Message::Assistant(_) | Message::ToolResult(_) | Message::System(_) => false,
        }
    }
}

/// How a [`Message::summary`] begins.
pub const SUMMARY_PREFIX: &str = "<conversation_summary>";

/// Input from the user.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text and images, in order.
    pub content: Vec<Content>,
}

/// User or tool-result content: text or an image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// MIME type such as `image/png`.
        mime_type: String,
        /// Base64 data without a `data:` prefix.
        data: String,
    },
}

impl Content {
    /// The text blocks of `content` joined with newlines (images left out).
    pub fn join_text(content: &[Content]) -> String {
        let parts: Vec<&str> = content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect();
        parts.join("\n")
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// A change to the model's instructions or tools after the conversation began (see
/// [`Message::System`]). Adapters render it as their API documents: an Anthropic
/// `role: "system"` message with `tool_addition`/`tool_removal` blocks, an OpenAI
/// `developer` message or `configuration_update` item, or text for the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Instructions or facts that hold from here on (empty when only tools or the
    /// thinking level changed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Tools offered from here on, with their full specs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_added: Vec<ToolSpec>,
    /// Names of tools withdrawn from here on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_removed: Vec<String>,
    /// Names of tools that can be loaded on demand (with `tool_search`) from here on;
    /// only their names are sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_deferred: Vec<String>,
    /// The thinking level changed from the first to the second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<(ThinkingLevel, ThinkingLevel)>,
}

impl SystemMessage {
    /// Whether the message changes nothing.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.tools_added.is_empty()
            && self.tools_removed.is_empty()
            && self.tools_deferred.is_empty()
            && self.thinking.is_none()
    }

    /// What the model reads: the deferred tools' names, then the text (empty when the
    /// message only changes tools or the thinking level).
    pub fn note(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.tools_deferred.is_empty() {
            parts.push(format!(
                "More tools are available; load their schemas with tool_search before calling \
                 them: {}",
                self.tools_deferred.join(", ")
            ));
        }
        if !self.text.is_empty() {
            parts.push(self.text.clone());
        }
        parts.join("\n\n")
    }

    /// Whether it changes the tools.
    pub fn has_tool_changes(&self) -> bool {
        !self.tools_added.is_empty() || !self.tools_removed.is_empty()
    }
}

/// A reply produced by a model, complete or partial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in the order the model produced them.
    pub content: Vec<AssistantBlock>,
    /// Wire format that produced the message; thinking signatures are only replayed to it.
    pub api: Api,
    /// Provider name, e.g. `anthropic`.
    pub provider: String,
    /// Model id, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// Token usage reported by the provider.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The error text when `stop_reason` is `Error` or `Aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Provider response id, when one was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Fingerprint of what the request carried before this reply (system prompt, tools
    /// and earlier messages, as the adapter sent them), for wire formats that bind
    /// thinking to it (Anthropic). Its thinking is replayed only while a later request
    /// still starts with the same prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_hash: Option<String>,
}

impl AssistantMessage {
    /// An empty message attributed to the given model.
    pub fn empty(api: Api, provider: &str, model: &str) -> Self {
        Self {
            content: Vec::new(),
            api,
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            response_id: None,
            prefix_hash: None,
        }
    }

    /// All text blocks joined, without thinking.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let AssistantBlock::Text { text, .. } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall(call) => Some(call),
            AssistantBlock::Text { .. }
            | AssistantBlock::Thinking { .. }
            | AssistantBlock::WebSearch(_) => None,
        })
    }
}

/// One block of an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AssistantBlock {
    /// Visible text.
    Text {
        /// The text.
        text: String,
        /// Opaque provider signature attached to the text (Gemini `thoughtSignature`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// What the text is for, as the provider labelled it (OpenAI Responses
        /// `phase`: `commentary` before tool calls, `final_answer`); sent back unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
        /// Pages of a web search the text cites.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        citations: Vec<Citation>,
    },
    /// Reasoning the model exposed, with what the provider needs to accept it back.
    Thinking {
        /// The reasoning text or summary (empty when redacted).
        thinking: String,
        /// Anthropic signature, OpenAI `encrypted_content`, Gemini `thoughtSignature`,
        /// or the opaque data of a redacted block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Provider item id (OpenAI Responses `rs_…`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item_id: Option<String>,
        /// The provider redacted the reasoning; only `signature` can be replayed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// A call of one tool.
    ToolCall(ToolCall),
    /// A web search the provider ran itself (a server tool), with what it found.
    WebSearch(WebSearch),
}

/// A web search a provider ran on its side (Anthropic's web search tool, OpenAI's
/// `web_search`, Gemini's Google Search grounding, OpenRouter's web search).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearch {
    /// The provider's id of the search (`srvtoolu_…`, `ws_…`), or one rab made.
    pub id: String,
    /// What was searched for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
    /// The pages found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<SearchResult>,
    /// The provider's error code when the search failed (`max_uses_exceeded`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The provider's own blocks or items for it, sent back unchanged to the same
    /// provider (Anthropic `server_tool_use` and `web_search_tool_result`, OpenAI
    /// `web_search_call`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<Value>,
}

/// A web search as text, for a model that cannot take the provider's own blocks: what
/// was searched for and what was found.
pub fn search_note(search: &WebSearch) -> String {
    let mut out = format!("[web search: {}]", search.queries.join("; "));
    if let Some(e) = &search.error {
        out.push_str(&format!(" failed: {e}"));
    }
    for r in &search.results {
        out.push_str(&format!("\n- {} <{}>", r.title, r.url));
    }
    out
}

/// A page a web search found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// Its address.
    pub url: String,
    /// Its title.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
}

/// A page a text block cites.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// The page's address.
    pub url: String,
    /// Its title.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// The passage cited, where the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited_text: Option<String>,
    /// The provider's own form of the citation, sent back unchanged to it (Anthropic's
    /// carries an `encrypted_index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

impl AssistantBlock {
    /// A text block with no provider data.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantBlock::Text {
            text: text.into(),
            signature: None,
            phase: None,
            citations: Vec::new(),
        }
    }
}

/// A tool call requested by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id; the tool result answers it.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments; `{}` when the model sent invalid JSON.
    pub arguments: Value,
    /// The raw argument text when it was not valid JSON, so the caller can report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<String>,
    /// Opaque provider signature for this call (Gemini `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Provider item id (OpenAI Responses `fc_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
}

/// The result of a tool call, sent back to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// Id of the [`ToolCall`] this answers.
    pub tool_call_id: String,
    /// Name of the tool that ran.
    pub tool_name: String,
    /// Output text and images.
    pub content: Vec<Content>,
    /// The tool failed; the model sees the content as an error.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResultMessage {
    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        Content::join_text(&self.content)
    }
}

/// Token counts of one response. `input` excludes cached tokens on every wire format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens that were neither read from nor written to the cache.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Of `output`, the tokens spent on reasoning, when reported.
    #[serde(default)]
    pub reasoning: u64,
    /// Web searches the provider ran for the response (billed per search).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_searches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Every input token sent: uncached, cache reads and cache writes.
    pub fn total_input(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }

    /// Input and output tokens together.
    pub fn total(&self) -> u64 {
        self.total_input() + self.output
    }

    /// Adds another response's usage to this one, field by field (sums of several
    /// responses: a run's, a session's, a model's).
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning += other.reasoning;
        self.web_searches += other.web_searches;
    }
}

/// Why a response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its turn.
    Stop,
    /// The output-token limit was reached.
    Length,
    /// The model wants tool results before it goes on.
    ToolUse,
    /// The request or the stream failed.
    Error,
    /// The caller cancelled the request.
    Aborted,
}

/// A tool offered to the model: name, description and JSON Schema of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// Lower snake case tool name.
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// A free-form tool: the model writes its input as text in this Lark grammar (the
    /// OpenAI Responses API's custom tools). Where custom tools are not supported the
    /// tool is a function whose one string argument, `input`, holds the text
    /// (`parameters` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// A tool the provider runs on its side: the request declares the provider's own
    /// tool in its place, and what it did comes back in the reply (no call to run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerTool>,
}

/// A provider-side tool rab can offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum ServerTool {
    /// Web search (Anthropic's web search tool, OpenAI's `web_search`, Gemini's Google
    /// Search grounding, OpenRouter's web search).
    WebSearch {
        /// Only these domains (and their subdomains) may be searched; empty: any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allowed_domains: Vec<String>,
        /// These domains are never searched.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        blocked_domains: Vec<String>,
        /// The most searches one request may run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_uses: Option<u32>,
    },
}

/// Everything a request carries besides the options: system prompt, history, tools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The system prompt the conversation began with.
    pub system_prompt: String,
    /// The conversation so far, with [`Message::System`] entries for what changed.
    pub messages: Vec<Message>,
    /// Tools the conversation began with; [`Message::System`] entries add and withdraw
    /// tools later ([`Context::current_tools`] applies them).
    pub tools: Vec<ToolSpec>,
    /// What the wire kept of this conversation's last request, to write the history it
    /// shared with this one from bytes ([`RequestMemo`]); `None` builds it whole.
    pub memo: Option<RequestMemo>,
}

/// What a wire keeps between requests of one conversation: the bytes of the messages no
/// later request writes differently, so each request builds and serialises only what
/// came since (a long conversation's history is otherwise rebuilt on every turn). The
/// owner of the conversation makes one, passes it with each request, and makes a new
/// one whenever it changes or removes a message it sent before (the wire relies on
/// that: with the same memo, the messages it covers are taken as unchanged). Anything
/// else a message's bytes depend on (model, tools, settings) is checked.
#[derive(Clone, Default)]
pub struct RequestMemo(std::sync::Arc<std::sync::Mutex<Option<crate::anthropic_history::Memo>>>);

impl RequestMemo {
    /// An empty memo, for a new conversation or one whose messages changed.
    pub fn new() -> RequestMemo {
        RequestMemo::default()
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Option<crate::anthropic_history::Memo>> {
        // A poisoned memo is emptied: it is only a shortcut.
        self.0.lock().unwrap_or_else(|p| {
            let mut guard = p.into_inner();
            *guard = None;
            guard
        })
    }
}

impl std::fmt::Debug for RequestMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestMemo")
    }
}

/// Two contexts are equal whatever they remember.
impl PartialEq for RequestMemo {
    fn eq(&self, _: &RequestMemo) -> bool {
        true
    }
}

impl Context {
    /// The tools the model may call now: the first ones with every later addition and
    /// withdrawal applied in order (a tool added again replaces its earlier spec).
    pub fn current_tools(&self) -> Vec<&ToolSpec> {
        tools_in_effect(&self.tools, &self.messages)
    }

    /// Whether any [`Message::System`] changes the tools.
    pub fn has_tool_changes(&self) -> bool {
        self.messages.iter().any(|m| matches!(m, Message::System(s) if s.has_tool_changes()))
    }
}

/// `tools` with the additions and withdrawals of the [`Message::System`] entries of
/// `messages` applied in order (a tool added again replaces its earlier spec).
pub fn tools_in_effect<'a>(tools: &'a [ToolSpec], messages: &'a [Message]) -> Vec<&'a ToolSpec> {
    let mut out: Vec<&ToolSpec> = tools.iter().collect();
    for m in messages {
        let Message::System(s) = m else { continue };
        out.retain(|t| !s.tools_removed.contains(&t.name));
        for added in &s.tools_added {
            match out.iter_mut().find(|t| t.name == added.name) {
                Some(slot) => *slot = added,
                None => out.push(added),
            }
        }
    }
    out
}

/// How hard the model should think.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingLevel {
    /// No extended thinking.
    #[default]
    Off,
    /// The least reasoning the model supports.
    Minimal,
    /// Light reasoning.
    Low,
    /// Moderate reasoning.
    Medium,
    /// Deep reasoning.
    High,
}

impl ThinkingLevel {
    /// Every level, from off to high.
    pub const ALL: [ThinkingLevel; 5] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
    ];

    /// The lower-case name used on the command line and in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
        }
    }

    /// Parses a level name; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl std::fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
