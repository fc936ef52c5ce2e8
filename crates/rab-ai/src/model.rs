//! Models and providers: the wire format each speaks, limits, prices and quirks, and the
//! registry that resolves `--provider`/`--model` to a concrete [`Model`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::Usage;

/// The four wire formats rab speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// Anthropic Messages, `POST /v1/messages`.
    AnthropicMessages,
    /// OpenAI Responses, `POST /v1/responses`.
    OpenaiResponses,
    /// OpenAI-compatible Chat Completions, `POST /v1/chat/completions`.
    OpenaiCompletions,
    /// Google Gemini, `POST /v1beta/models/{model}:streamGenerateContent`.
    GoogleGenerativeAi,
}

impl Api {
    /// Every wire format.
    pub const ALL: [Api; 4] = [
        Api::AnthropicMessages,
        Api::OpenaiResponses,
        Api::OpenaiCompletions,
        Api::GoogleGenerativeAi,
    ];

    /// The name used by `--api` and in models.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenaiResponses => "openai-responses",
            Api::OpenaiCompletions => "openai-completions",
            Api::GoogleGenerativeAi => "google-generative-ai",
        }
    }

    /// Parses an `--api` name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Prices in US dollars per million tokens, for one prompt-size tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Rates {
    /// Uncached input.
    pub input: f64,
    /// Output, reasoning included.
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
}

impl Rates {
    /// Dollar cost of `usage` at these rates.
    pub fn of(&self, usage: &Usage) -> f64 {
        (usage.input as f64 * self.input
            + usage.output as f64 * self.output
            + usage.cache_read as f64 * self.cache_read
            + usage.cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// Higher rates for requests whose prompt is over a size (Claude Haiku 5.5 above 100k
/// tokens, OpenAI's GPT-6 models above 272k): every token of such a request is billed
/// at the tier's rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PriceTier {
    /// The tier applies to prompts of more than this many input tokens (uncached,
    /// cache reads and cache writes together).
    pub above: u64,
    /// The rates of the tier.
    #[serde(flatten)]
    pub rates: Rates,
}

/// A model's prices: the base rates, the prompt-size tiers above them, and when they
/// were read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelCost {
    /// Uncached input.
    pub input: f64,
    /// Output, reasoning included.
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
    /// Higher rates for larger prompts, smallest threshold first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<PriceTier>,
    /// The day the prices were read from the provider's pricing page (`YYYY-MM-DD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// USD per web search the provider runs on its side.
    #[serde(default, skip_serializing_if = "is_free")]
    pub per_search: f64,
}

fn is_free(v: &f64) -> bool {
    *v == 0.0
}

impl ModelCost {
    /// The rates of a request with a prompt of `prompt_tokens` input tokens.
    pub fn rates(&self, prompt_tokens: u64) -> Rates {
        let base = Rates {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
        };
        self.tiers.iter().rfind(|t| prompt_tokens > t.above).map(|t| t.rates).unwrap_or(base)
    }

    /// Dollar cost of one response's usage, at the tier its prompt size falls in.
    pub fn of(&self, usage: &Usage) -> f64 {
        self.rates(usage.total_input()).of(usage) + usage.web_searches as f64 * self.per_search
    }
}

/// How a model is asked to think, per the provider's API reference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkingFormat {
    /// The model takes no thinking parameter.
    #[default]
    None,
    /// Anthropic `thinking: {type: "enabled", budget_tokens}`.
    AnthropicBudget,
    /// Anthropic `thinking: {type: "adaptive"}` with `output_config.effort`.
    AnthropicAdaptive,
    /// OpenAI `reasoning.effort` (Responses) or `reasoning_effort` (Chat Completions).
    OpenaiEffort,
    /// OpenRouter `reasoning: {effort}`.
    Openrouter,
    /// Gemini 2.5 `thinkingConfig.thinkingBudget`.
    GeminiBudget,
    /// Gemini 3 and later `thinkingConfig.thinkingLevel`.
    GeminiLevel,
    /// DeepSeek `thinking: {type: "enabled"|"disabled"}` with `reasoning_effort`.
    Deepseek,
}

/// Effort names from least to most reasoning; `none` and `between_tools` switch
/// extended thinking off (fully, or all but short notes between tool calls).
pub const EFFORT_LADDER: [&str; 8] =
    ["none", "between_tools", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Which Chat Completions field carries the output-token limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI's current name).
    #[default]
    MaxCompletionTokens,
    /// `max_tokens` (most other servers).
    MaxTokens,
}

/// Differences between servers that claim the same wire format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Compat {
    /// How thinking is requested.
    pub thinking: ThinkingFormat,
    /// Chat Completions: the output-limit field.
    pub max_tokens_field: MaxTokensField,
    /// Chat Completions: send `stream_options: {include_usage: true}`.
    pub stream_usage: bool,
    /// Chat Completions: send the system prompt with role `developer` instead of `system`.
    pub developer_role: bool,
    /// Effort names the model accepts (from [`EFFORT_LADDER`]); empty means the
    /// format's usual set.
    pub efforts: Vec<String>,
    /// Chat Completions: the assistant-message field that carries reasoning back to the
    /// server (DeepSeek requires `reasoning_content` after tool calls).
    pub reasoning_replay_field: Option<String>,
    /// Chat Completions: reasoning streams, and goes back, as typed content chunks
    /// (Mistral's `{"type": "thinking", "thinking": [...]}`).
    pub thinking_chunks: bool,
    /// Anthropic: the model binds each thinking block to everything before it
    /// (preserved thinking); thinking whose prefix changed is left out.
    pub preserved_thinking: bool,
    /// Anthropic: the model takes `role: "system"` messages inside `messages`
    /// (mid-conversation system messages); without, updates go in as user text.
    pub system_messages: bool,
    /// Anthropic: the model takes `tool_addition`/`tool_removal` blocks (beta
    /// `mid-conversation-tool-changes-2026-07-01`), so `tools` never changes.
    pub tool_changes: bool,
    /// A changed reasoning effort goes in mid-conversation, keeping the request-level
    /// effort (and the cached prefix) unchanged: an OpenAI Responses
    /// `configuration_update` item, or an Anthropic effort-only system message
    /// (per-message effort).
    pub effort_updates: bool,
    /// OpenAI Responses: the model labels assistant messages with a `phase`, and wants
    /// one back on each (a message that lacks one gets `commentary` before tool calls,
    /// else `final_answer`).
    pub phases: bool,
    /// OpenAI Responses: the server takes custom (free-form) tools, `{"type": "custom"}`
    /// with a grammar; without, a free-form tool goes as a function with one string.
    pub custom_tools: bool,
    /// Chat Completions: send the conversation's id as `x-opencode-session` (OpenCode's
    /// gateways route one conversation's turns together by it, keeping its prompt cache).
    pub session_header: bool,
    /// The wire on which the provider runs web searches for the model (Anthropic
    /// Messages, OpenAI Responses, Gemini, OpenRouter's Chat Completions): there a
    /// `web_search` tool is offered with the provider's own search.
    pub web_search: Option<Api>,
    /// Chat Completions: tool-call ids must be exactly 9 letters or digits (Mistral);
    /// any other id (another provider's `toolu_…`, `call_…`) is sent as such an id made
    /// from it, the same for a call and its result on every request.
    pub short_tool_ids: bool,
}

impl Compat {
    /// The effort name to send for `level`: the weakest accepted effort at least as
    /// strong as asked, or the strongest accepted one.
    pub fn effort(&self, level: crate::types::ThinkingLevel) -> &str {
        use crate::types::ThinkingLevel;
        let wanted = match level {
            ThinkingLevel::Off => "none",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
        };
        let rank = |e: &str| EFFORT_LADDER.iter().position(|x| *x == e);
        let defaults: &[&str] = match self.thinking {
            ThinkingFormat::AnthropicAdaptive => &["low", "medium", "high"],
            ThinkingFormat::Deepseek => &["none", "low", "high"],
            ThinkingFormat::GeminiLevel => &["low", "medium", "high"],
            ThinkingFormat::OpenaiEffort | ThinkingFormat::Openrouter => {
                &["minimal", "low", "medium", "high"]
            }
            ThinkingFormat::None
            | ThinkingFormat::AnthropicBudget
            | ThinkingFormat::GeminiBudget => &["none", "low", "medium", "high"],
        };
        let mut accepted: Vec<&str> = if self.efforts.is_empty() {
            defaults.to_vec()
        } else {
            self.efforts.iter().map(String::as_str).collect()
        };
        accepted.retain(|e| rank(e).is_some());
        accepted.sort_by_key(|e| rank(e));
        let target = rank(wanted).unwrap_or(0);
        accepted
            .iter()
            .find(|e| rank(e).is_some_and(|r| r >= target))
            .or(accepted.last())
            .copied()
            .unwrap_or(wanted)
    }
}

impl Default for Compat {
    fn default() -> Self {
        Self {
            thinking: ThinkingFormat::None,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            stream_usage: true,
            developer_role: false,
            efforts: Vec::new(),
            reasoning_replay_field: None,
            thinking_chunks: false,
            short_tool_ids: false,
            preserved_thinking: false,
            system_messages: false,
            tool_changes: false,
            effort_updates: false,
            phases: false,
            custom_tools: false,
            session_header: false,
            web_search: None,
        }
    }
}

/// Limits used for a model rab has no entry for.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Output limit used for a model rab has no entry for.
pub const DEFAULT_MAX_OUTPUT: u64 = 16_384;

/// A concrete model at a concrete endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The id sent to the API.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Provider name.
    pub provider: String,
    /// Wire format.
    pub api: Api,
    /// Endpoint root, as the provider's SDKs define it (see the adapters).
    pub base_url: String,
    /// Supports extended thinking / reasoning.
    pub reasoning: bool,
    /// Accepts image input.
    pub images: bool,
    /// Context window in tokens.
    pub context_window: u64,
    /// The most input tokens a request may carry, where the provider sets it below the
    /// window (GPT-6.x: 922,000 of 1,050,000); `None`: the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input: Option<u64>,
    /// Maximum output tokens.
    pub max_output: u64,
    /// Prices.
    pub cost: ModelCost,
    /// Extra HTTP headers for every request.
    pub headers: BTreeMap<String, String>,
    /// Server quirks.
    pub compat: Compat,
    /// The tool the model edits files with: the one it was trained on.
    #[serde(default)]
    pub edit_tool: EditTool,
}

/// Which tool a model changes files with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditTool {
    /// `edit` (exact text replacement) and `write`.
    #[default]
    Edit,
    /// `apply_patch` (the Begin/End Patch envelope), instead of `edit` and `write`: the
    /// OpenAI models of the GPT-5 family and later are trained on it.
    ApplyPatch,
}

impl EditTool {
    /// The name used in settings and models.json.
    pub fn as_str(self) -> &'static str {
        match self {
            EditTool::Edit => "edit",
            EditTool::ApplyPatch => "apply_patch",
        }
    }
}

impl Model {
    /// The most input tokens a request may carry: the provider's input limit where it
    /// has one, else the context window.
    pub fn input_limit(&self) -> u64 {
        self.max_input
            .filter(|n| *n > 0)
            .map_or(self.context_window, |n| n.min(self.context_window))
    }

    /// A model rab knows nothing about: conservative limits, no prices.
    pub fn custom(id: &str, provider: &str, api: Api, base_url: &str) -> Self {
        Self {
            id: id.to_owned(),
            name: id.to_owned(),
            provider: provider.to_owned(),
            api,
            base_url: base_url.to_owned(),
            reasoning: false,
            images: false,
            context_window: DEFAULT_CONTEXT_WINDOW,
            max_input: None,
            max_output: DEFAULT_MAX_OUTPUT,
            cost: ModelCost::default(),
            headers: BTreeMap::new(),
            compat: Compat::default(),
            edit_tool: EditTool::Edit,
        }
    }
}

/// A provider: where it lives, how it authenticates, which format it speaks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderDef {
    /// Name used in `--provider` and `provider/model`.
    pub name: String,
    /// Default wire format of its models.
    pub api: Api,
    /// Endpoint root.
    pub base_url: String,
    /// Environment variables that may hold the key, first set wins.
    pub key_env: Vec<String>,
    /// Environment variable that overrides `base_url`.
    pub base_url_env: Option<String>,
    /// Requests fail without a key (false for local servers).
    pub requires_key: bool,
    /// A key configured in models.json: a literal, or the name of an environment variable.
    pub api_key: Option<String>,
    /// Extra headers for every request.
    pub headers: BTreeMap<String, String>,
    /// Model used when only the provider is given.
    pub default_model: Option<String>,
    /// Quirks applied to models of this provider that rab has no entry for.
    pub compat: Compat,
}

/// Why `--provider`/`--model` could not be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    /// The provider name is not built in and not in models.json.
    #[error(
        "unknown provider '{name}' — known providers: {known}; add others to models.json or pass --base-url with --api"
    )]
    UnknownProvider {
        /// What was asked for.
        name: String,
        /// Known provider names, comma-separated.
        known: String,
    },
    /// No provider serves the model and none could be inferred.
    #[error(
        "unknown model '{model}' — pass --provider NAME (or provider/model), or --base-url for a custom endpoint; `rab --list-models` shows known models"
    )]
    UnknownModel {
        /// What was asked for.
        model: String,
    },
    /// Neither a model nor a provider was given and no default applies.
    #[error("no model selected — pass --model or --provider, or set defaultModel in settings")]
    NoModel,
    /// A provider with no model table (a local server) was chosen without a model.
    #[error(
        "{provider} has no default model: pass --model NAME with one it serves (`rab --list-models --provider {provider}` asks the server), or set defaultModel in settings"
    )]
    NoDefaultModel {
        /// The provider.
        provider: String,
    },
}

/// What the user asked for.
#[derive(Clone, Debug, Default)]
pub struct ModelQuery<'a> {
    /// `--provider`.
    pub provider: Option<&'a str>,
    /// `--model`, possibly `provider/model`.
    pub model: Option<&'a str>,
    /// `--api`.
    pub api: Option<Api>,
    /// `--base-url`.
    pub base_url: Option<&'a str>,
}

/// A resolved model with its provider.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The model, with base URL, api and headers final.
    pub model: Model,
    /// Its provider.
    pub provider: ProviderDef,
    /// Whether rab has an entry for the model (else limits are defaults).
    pub is_known: bool,
}

/// Built-in and user-defined providers and models.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    providers: Vec<ProviderDef>,
    models: Vec<Model>,
}

impl Registry {
    /// The built-in table.
    pub fn builtin() -> Self {
        crate::catalog::builtin()
    }

    /// The built-in providers and models priced as on `today` (`YYYY-MM-DD`): an
    /// introductory price holds through its last day.
    pub fn builtin_on(today: &str) -> Self {
        crate::catalog::builtin_on(today)
    }

    /// An empty registry.
    pub fn empty() -> Self {
        Self::default()
    }

    pub(crate) fn from_parts(providers: Vec<ProviderDef>, models: Vec<Model>) -> Self {
        Self { providers, models }
    }

    /// All providers, built-in first.
    pub fn providers(&self) -> &[ProviderDef] {
        &self.providers
    }

    /// All models, in table order (newest first per provider).
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// A provider by name.
    pub fn provider(&self, name: &str) -> Option<&ProviderDef> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Adds a provider or replaces the one with the same name; its models are added in
    /// front of existing ones so that user entries win over built-ins of the same id.
    pub fn upsert_provider(&mut self, def: ProviderDef, models: Vec<Model>) {
        match self.providers.iter_mut().find(|p| p.name == def.name) {
            Some(existing) => *existing = def,
            None => self.providers.push(def),
        }
        let ids: Vec<(String, String)> =
            models.iter().map(|m| (m.provider.clone(), m.id.clone())).collect();
        self.models.retain(|m| !ids.iter().any(|(p, id)| *p == m.provider && *id == m.id));
        let mut merged = models;
        merged.append(&mut self.models);
        self.models = merged;
    }

    /// Points a provider (and its models) at another endpoint.
    pub fn set_base_url(&mut self, provider: &str, base_url: &str) {
        for p in self.providers.iter_mut().filter(|p| p.name == provider) {
            p.base_url = base_url.to_owned();
        }
        for m in self.models.iter_mut().filter(|m| m.provider == provider) {
            m.base_url = base_url.to_owned();
        }
    }

    fn known_providers(&self) -> String {
        self.providers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// Resolves a query. Order: explicit provider (or a `provider/` prefix), exact id,
    /// id prefix, id substring, then the provider implied by the model's name
    /// (`claude*` → anthropic, `gpt*`/`o*` → openai, `gemini*` → google); with
    /// `--base-url`, an unknown model runs against that endpoint with default limits.
    pub fn resolve(&self, q: &ModelQuery<'_>) -> Result<Resolved, ResolveError> {
        let (provider_name, model_id) = self.split_query(q);
        let (provider_name, model_id) = (provider_name.as_deref(), model_id.as_deref());
        let provider = match provider_name {
            Some(name) => {
                Some(self.provider(name).cloned().ok_or_else(|| ResolveError::UnknownProvider {
                    name: name.to_owned(),
                    known: self.known_providers(),
                })?)
            }
            None => None,
        };
        let found = match (&provider, model_id) {
            (Some(p), Some(id)) => self.find(id, Some(&p.name)),
            (Some(p), None) => {
                let id = p.default_model.clone().or_else(|| {
                    self.models.iter().find(|m| m.provider == p.name).map(|m| m.id.clone())
                });
                match id {
                    Some(id) => self.find(&id, Some(&p.name)),
                    None => return Err(ResolveError::NoDefaultModel { provider: p.name.clone() }),
                }
            }
            (None, Some(id)) => self.find(id, None),
            (None, None) => return Err(ResolveError::NoModel),
        };
        let (mut model, is_known) = match found {
            Some(m) => (m.clone(), true),
            None => {
                let id = model_id.unwrap_or_default();
                let def = match &provider {
                    Some(p) => p.clone(),
                    None => match (infer_provider(id).and_then(|n| self.provider(n)), q.base_url) {
                        (Some(p), _) => p.clone(),
                        (None, Some(url)) => custom_provider(url, q.api),
                        (None, None) => {
                            return Err(ResolveError::UnknownModel { model: id.to_owned() });
                        }
                    },
                };
                let mut m = Model::custom(id, &def.name, def.api, &def.base_url);
                m.compat = def.compat.clone();
                (m, false)
            }
        };
        let provider = match provider {
            Some(p) => p,
            None => self
                .provider(&model.provider)
                .cloned()
                .unwrap_or_else(|| custom_provider(&model.base_url, Some(model.api))),
        };
        if let Some(api) = q.api {
            model.api = api;
        }
        if let Some(url) = q.base_url {
            model.base_url = url.trim_end_matches('/').to_owned();
        }
        for (k, v) in &provider.headers {
            model.headers.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Ok(Resolved { model, provider, is_known })
    }

    fn split_query(&self, q: &ModelQuery<'_>) -> (Option<String>, Option<String>) {
        let owned = |s: Option<&str>| s.map(str::to_owned);
        let Some(model) = q.model else { return (owned(q.provider), None) };
        // A known provider's prefix wins (`openai/gpt-6.1-sol` is OpenAI's model, as
        // `--list-models` prints it); OpenRouter's `vendor/model` ids are spelled
        // `openrouter/vendor/model`.
        if let Some((prefix, rest)) = model.split_once('/')
            && !rest.is_empty()
            && self.provider(prefix).is_some()
            && q.provider.is_none_or(|p| p == prefix)
        {
            return (Some(prefix.to_owned()), Some(rest.to_owned()));
        }
        // Any other id with a slash that only one provider serves (a models.json entry
        // such as `my-proxy`'s `team/model`) finds its provider.
        if q.provider.is_none()
            && let Some(m) = self.models.iter().find(|m| m.id == model)
        {
            return (Some(m.provider.clone()), Some(model.to_owned()));
        }
        (owned(q.provider), Some(model.to_owned()))
    }

    fn find(&self, id: &str, provider: Option<&str>) -> Option<&Model> {
        let candidates = || self.models.iter().filter(|m| provider.is_none_or(|p| m.provider == p));
        let lower = id.to_ascii_lowercase();
        // `claude-opus-5.5` (OpenRouter's dotted spelling) for `claude-opus-5-5`.
        let dashed = lower.replace('.', "-");
        candidates()
            .find(|m| m.id == id)
            .or_else(|| candidates().find(|m| m.id.to_ascii_lowercase() == lower))
            .or_else(|| candidates().find(|m| m.id.to_ascii_lowercase() == dashed))
            .or_else(|| candidates().find(|m| m.id.starts_with(&lower)))
            .or_else(|| {
                (lower.len() >= 3)
                    .then(|| candidates().find(|m| m.id.to_ascii_lowercase().contains(&lower)))
                    .flatten()
            })
    }
}

/// The provider a model name implies, by its family prefix.
pub fn infer_provider(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    let is_openai_o = m.len() > 1
        && m.starts_with('o')
        && m[1..].chars().next().is_some_and(|c| c.is_ascii_digit());
    if m.starts_with("claude") {
        Some("anthropic")
    } else if m.starts_with("gpt") || m.starts_with("codex") || is_openai_o {
        Some("openai")
    } else if m.starts_with("gemini") || m.starts_with("gemma") {
        Some("google")
    } else if m.starts_with("deepseek") {
        Some("deepseek")
    } else if m.starts_with("grok") {
        Some("xai")
    } else if m.starts_with("mistral") || m.starts_with("codestral") || m.starts_with("devstral") {
        Some("mistral")
    } else {
        None
    }
}

/// A provider for an endpoint given only by `--base-url`.
pub fn custom_provider(base_url: &str, api: Option<Api>) -> ProviderDef {
    ProviderDef {
        name: "custom".to_owned(),
        api: api.unwrap_or(Api::OpenaiCompletions),
        base_url: base_url.trim_end_matches('/').to_owned(),
        key_env: Vec::new(),
        base_url_env: None,
        requires_key: false,
        api_key: None,
        headers: BTreeMap::new(),
        default_model: None,
        compat: Compat { max_tokens_field: MaxTokensField::MaxTokens, ..Compat::default() },
    }
}

#[cfg(test)]
mod tests;
