//! The built-in provider and model table.
//!
//! Figures are from the providers' model and pricing pages (context window, maximum
//! output, USD per million tokens for input, output, cache read and cache write); each
//! model carries the day its prices were read ([`ModelCost::as_of`]). Prompt-size tiers
//! (Claude Haiku 5.5 above 100k tokens, OpenAI above 272k) are listed as tiers; where a
//! provider prices by time of day, the peak price is listed. Users add or override
//! entries in `models.json`.

use std::collections::BTreeMap;

use crate::model::{
    Api, Compat, EditTool, MaxTokensField, Model, ModelCost, PriceTier, ProviderDef, Rates,
    Registry, ThinkingFormat,
};

struct Entry {
    id: &'static str,
    name: &'static str,
    context: u64,
    /// The input limit where the provider sets one below the window (0: none).
    input: u64,
    output: u64,
    /// input, output, cache read, cache write.
    price: [f64; 4],
    /// Prompt-size tiers: above this many input tokens, every token at these prices.
    tiers: &'static [(u64, [f64; 4])],
    /// The day the prices were read; empty: the provider's date.
    as_of: &'static str,
    /// An introductory price that holds through the end of this day (UTC, `YYYY-MM-DD`);
    /// `price` holds after it.
    intro: Option<(&'static str, [f64; 4])>,
    images: bool,
    thinking: ThinkingFormat,
    efforts: &'static [&'static str],
    /// [`SYSTEM_MESSAGES`], [`TOOL_CHANGES`], [`PRESERVED`], [`EFFORT_UPDATES`],
    /// [`PHASES`].
    flags: u8,
}

/// Anthropic mid-conversation system messages.
const SYSTEM_MESSAGES: u8 = 1;
/// Anthropic mid-conversation tool changes.
const TOOL_CHANGES: u8 = 2;
/// Effort changes mid-conversation: OpenAI `configuration_update` items, Anthropic
/// per-message effort.
const EFFORT_UPDATES: u8 = 4;
/// Anthropic preserved thinking (bound to its prefix).
const PRESERVED: u8 = 8;
/// OpenAI assistant-message `phase`.
const PHASES: u8 = 16;
/// The model edits with `apply_patch`, offered as a custom (free-form) tool.
const APPLY_PATCH: u8 = 32;

const fn e(
    id: &'static str,
    name: &'static str,
    context: u64,
    output: u64,
    price: [f64; 4],
    thinking: ThinkingFormat,
    efforts: &'static [&'static str],
) -> Entry {
    Entry {
        id,
        name,
        context,
        input: 0,
        output,
        price,
        tiers: &[],
        as_of: "",
        intro: None,
        images: true,
        thinking,
        efforts,
        flags: 0,
    }
}

const fn text_only(mut entry: Entry) -> Entry {
    entry.images = false;
    entry
}

const fn flags(mut entry: Entry, flags: u8) -> Entry {
    entry.flags = flags;
    entry
}

const fn tiered(mut entry: Entry, tiers: &'static [(u64, [f64; 4])]) -> Entry {
    entry.tiers = tiers;
    entry
}

const fn intro(mut entry: Entry, last_day: &'static str, price: [f64; 4]) -> Entry {
    entry.intro = Some((last_day, price));
    entry
}

const fn input_limit(mut entry: Entry, input: u64) -> Entry {
    entry.input = input;
    entry
}

const fn dated(mut entry: Entry, as_of: &'static str) -> Entry {
    entry.as_of = as_of;
    entry
}

mod models;
mod table;
use models::{ANTHROPIC, DEEPSEEK, GOOGLE, GROQ, MISTRAL, OPENAI, OPENCODE_GO, OPENROUTER, XAI};
pub use table::{TableFormat, model_table, model_table_on};

struct ProviderSpec {
    name: &'static str,
    api: Api,
    base_url: &'static str,
    key_env: &'static [&'static str],
    base_url_env: Option<&'static str>,
    requires_key: bool,
    compat: fn() -> Compat,
    /// The day the models' prices were read, unless an entry gives its own.
    as_of: &'static str,
    /// The page the prices and limits were read from.
    source: &'static str,
    /// USD per web search run on the provider's side (0: it runs none for rab).
    per_search: f64,
    models: &'static [Entry],
}

fn compat_default() -> Compat {
    Compat::default()
}

/// Anthropic: the web search server tool on the Messages API.
fn compat_anthropic() -> Compat {
    Compat { web_search: Some(Api::AnthropicMessages), ..Compat::default() }
}

/// OpenAI: the `web_search` tool on the Responses API.
fn compat_openai() -> Compat {
    Compat { web_search: Some(Api::OpenaiResponses), ..Compat::default() }
}

/// Google: grounding with Google Search.
fn compat_google() -> Compat {
    Compat { web_search: Some(Api::GoogleGenerativeAi), ..Compat::default() }
}

/// OpenRouter: its web search server tool, on any model, over Chat Completions.
fn compat_openrouter() -> Compat {
    Compat { web_search: Some(Api::OpenaiCompletions), ..compat_local() }
}

fn compat_local() -> Compat {
    Compat { max_tokens_field: MaxTokensField::MaxTokens, ..Compat::default() }
}

/// llama.cpp's server takes `reasoning_content` back on assistant messages and puts it
/// where the model's chat template wants it (GPT-OSS and other models trained on their
/// own reasoning in tool loops; templates without a place ignore it): github.com/
/// ggml-org/llama.cpp pull 18994, merged 2026-01.
fn compat_llamacpp() -> Compat {
    Compat { reasoning_replay_field: Some("reasoning_content".to_owned()), ..compat_local() }
}

fn compat_deepseek() -> Compat {
    Compat {
        max_tokens_field: MaxTokensField::MaxTokens,
        reasoning_replay_field: Some("reasoning_content".to_owned()),
        ..Compat::default()
    }
}

fn compat_opencode_go() -> Compat {
    Compat { session_header: true, ..compat_deepseek() }
}

fn compat_mistral() -> Compat {
    Compat {
        max_tokens_field: MaxTokensField::MaxTokens,
        stream_usage: false,
        thinking_chunks: true,
        short_tool_ids: true,
        ..Compat::default()
    }
}

const PROVIDERS: &[ProviderSpec] = &[
    ProviderSpec {
        name: "anthropic",
        api: Api::AnthropicMessages,
        base_url: "https://api.anthropic.com",
        key_env: &["ANTHROPIC_API_KEY"],
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        requires_key: true,
        compat: compat_anthropic,
        as_of: "2026-11-28",
        source: "platform.claude.com/docs/en/about-claude/pricing",
        per_search: 0.01,
        models: ANTHROPIC,
    },
    ProviderSpec {
        name: "openai",
        api: Api::OpenaiResponses,
        base_url: "https://api.openai.com/v1",
        key_env: &["OPENAI_API_KEY"],
        base_url_env: Some("OPENAI_BASE_URL"),
        requires_key: true,
        compat: compat_openai,
        as_of: "2026-11-28",
        source: "developers.openai.com/api/docs/models",
        per_search: 0.01,
        models: OPENAI,
    },
    ProviderSpec {
        name: "google",
        api: Api::GoogleGenerativeAi,
        base_url: "https://generativelanguage.googleapis.com",
        key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        base_url_env: Some("GEMINI_BASE_URL"),
        requires_key: true,
        compat: compat_google,
        as_of: "2026-11-28",
        source: "ai.google.dev/gemini-api/docs/pricing",
        per_search: 0.014,
        models: GOOGLE,
    },
    ProviderSpec {
        name: "openrouter",
        api: Api::OpenaiCompletions,
        base_url: "https://openrouter.ai/api/v1",
        key_env: &["OPENROUTER_API_KEY"],
        base_url_env: Some("OPENROUTER_BASE_URL"),
        requires_key: true,
        compat: compat_openrouter,
        as_of: "2026-11",
        source: "the underlying providers pages, as OpenRouter passes their prices on",
        per_search: 0.02,
        models: OPENROUTER,
    },
    ProviderSpec {
        name: "deepseek",
        api: Api::OpenaiCompletions,
        base_url: "https://api.deepseek.com",
        key_env: &["DEEPSEEK_API_KEY"],
        base_url_env: Some("DEEPSEEK_BASE_URL"),
        requires_key: true,
        compat: compat_deepseek,
        as_of: "2026-11-28",
        source: "api-docs.deepseek.com/quick_start/pricing",
        per_search: 0.0,
        models: DEEPSEEK,
    },
    ProviderSpec {
        name: "groq",
        api: Api::OpenaiCompletions,
        base_url: "https://api.groq.com/openai/v1",
        key_env: &["GROQ_API_KEY"],
        base_url_env: Some("GROQ_BASE_URL"),
        requires_key: true,
        compat: compat_local,
        as_of: "2026-11",
        source: "groq.com/pricing",
        per_search: 0.0,
        models: GROQ,
    },
    ProviderSpec {
        name: "xai",
        api: Api::OpenaiResponses,
        base_url: "https://api.x.ai/v1",
        key_env: &["XAI_API_KEY"],
        base_url_env: Some("XAI_BASE_URL"),
        requires_key: true,
        compat: compat_default,
        as_of: "2026-11-28",
        source: "docs.x.ai/developers/models",
        per_search: 0.0,
        models: XAI,
    },
    ProviderSpec {
        name: "mistral",
        api: Api::OpenaiCompletions,
        base_url: "https://api.mistral.ai/v1",
        key_env: &["MISTRAL_API_KEY"],
        base_url_env: Some("MISTRAL_BASE_URL"),
        requires_key: true,
        compat: compat_mistral,
        as_of: "2026-11-24",
        source: "docs.mistral.ai/getting-started/models",
        per_search: 0.0,
        models: MISTRAL,
    },
    ProviderSpec {
        name: "opencode",
        api: Api::OpenaiCompletions,
        base_url: "https://opencode.ai/zen/v1",
        key_env: &["OPENCODE_API_KEY"],
        base_url_env: Some("OPENCODE_BASE_URL"),
        requires_key: true,
        compat: compat_local,
        as_of: "",
        source: "opencode.ai/docs/zen",
        per_search: 0.0,
        models: &[],
    },
    // The seed's provider: OpenCode's $10/month plan for open models, on Chat
    // Completions. The name matches the seed's `auth.json` entry.
    ProviderSpec {
        name: "opencode_go",
        api: Api::OpenaiCompletions,
        base_url: "https://opencode.ai/zen/go/v1",
        key_env: &["OPENCODE_API_KEY"],
        base_url_env: Some("OPENCODE_GO_BASE_URL"),
        requires_key: true,
        compat: compat_opencode_go,
        as_of: "2026-11-28",
        source: "api-docs.deepseek.com/quick_start/pricing (DeepSeek list prices)",
        per_search: 0.0,
        models: OPENCODE_GO,
    },
    ProviderSpec {
        name: "ollama",
        api: Api::OpenaiCompletions,
        base_url: "http://localhost:11434/v1",
        key_env: &["OLLAMA_API_KEY"],
        base_url_env: Some("OLLAMA_BASE_URL"),
        requires_key: false,
        compat: compat_local,
        as_of: "",
        source: "",
        per_search: 0.0,
        models: &[],
    },
    ProviderSpec {
        name: "llamacpp",
        api: Api::OpenaiCompletions,
        base_url: "http://localhost:8080/v1",
        key_env: &["LLAMACPP_API_KEY"],
        base_url_env: Some("LLAMACPP_BASE_URL"),
        requires_key: false,
        compat: compat_llamacpp,
        as_of: "",
        source: "",
        per_search: 0.0,
        models: &[],
    },
    ProviderSpec {
        name: "lmstudio",
        api: Api::OpenaiCompletions,
        base_url: "http://localhost:1234/v1",
        key_env: &["LMSTUDIO_API_KEY"],
        base_url_env: Some("LMSTUDIO_BASE_URL"),
        requires_key: false,
        compat: compat_local,
        as_of: "",
        source: "",
        per_search: 0.0,
        models: &[],
    },
    ProviderSpec {
        name: "vllm",
        api: Api::OpenaiCompletions,
        base_url: "http://localhost:8000/v1",
        key_env: &["VLLM_API_KEY"],
        base_url_env: Some("VLLM_BASE_URL"),
        requires_key: false,
        compat: compat_local,
        as_of: "",
        source: "",
        per_search: 0.0,
        models: &[],
    },
];

fn rates(p: [f64; 4]) -> Rates {
    Rates { input: p[0], output: p[1], cache_read: p[2], cache_write: p[3] }
}

/// The page a built-in provider's prices and limits come from.
pub(crate) fn price_source(provider: &str) -> Option<&'static str> {
    PROVIDERS.iter().find(|p| p.name == provider).map(|p| p.source).filter(|s| !s.is_empty())
}

/// A built-in model with an introductory price: its last day, and the standing price
/// that follows it.
pub(crate) fn price_change_of(provider: &str, id: &str) -> Option<(&'static str, [f64; 4])> {
    let spec = PROVIDERS.iter().find(|p| p.name == provider)?;
    let m = spec.models.iter().find(|m| m.id == id)?;
    m.intro.map(|(last_day, _)| (last_day, m.price))
}

/// An entry's price on `today` (`YYYY-MM-DD`): its introductory price through the last
/// day it holds, the standing one after.
fn price(m: &Entry, today: &str) -> [f64; 4] {
    match m.intro {
        Some((last_day, intro)) if today <= last_day => intro,
        _ => m.price,
    }
}

/// Today's date in UTC, `YYYY-MM-DD` (days to a civil date, as in the proleptic
/// Gregorian calendar).
pub(crate) fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The registry of built-in providers and models, priced for today.
pub(crate) fn builtin() -> Registry {
    builtin_on(&today_utc())
}

/// The registry of built-in providers and models, priced for `today` (`YYYY-MM-DD`).
pub(crate) fn builtin_on(today: &str) -> Registry {
    let mut providers = Vec::with_capacity(PROVIDERS.len());
    let mut all_models = Vec::new();
    for spec in PROVIDERS {
        let compat = (spec.compat)();
        let def = ProviderDef {
            name: spec.name.to_owned(),
            api: spec.api,
            base_url: spec.base_url.to_owned(),
            key_env: spec.key_env.iter().map(|s| (*s).to_owned()).collect(),
            base_url_env: spec.base_url_env.map(str::to_owned),
            requires_key: spec.requires_key,
            api_key: None,
            headers: BTreeMap::new(),
            default_model: spec.models.first().map(|m| m.id.to_owned()),
            compat: compat.clone(),
        };
        let models = spec
            .models
            .iter()
            .map(|m| Model {
                id: m.id.to_owned(),
                name: m.name.to_owned(),
                provider: spec.name.to_owned(),
                api: spec.api,
                base_url: spec.base_url.to_owned(),
                reasoning: m.thinking != ThinkingFormat::None,
                images: m.images,
                context_window: m.context,
                max_input: (m.input > 0).then_some(m.input),
                max_output: m.output,
                cost: ModelCost {
                    input: price(m, today)[0],
                    output: price(m, today)[1],
                    cache_read: price(m, today)[2],
                    cache_write: price(m, today)[3],
                    tiers: m
                        .tiers
                        .iter()
                        .map(|(above, p)| PriceTier { above: *above, rates: rates(*p) })
                        .collect(),
                    as_of: Some(if m.as_of.is_empty() { spec.as_of } else { m.as_of })
                        .filter(|d| !d.is_empty())
                        .map(str::to_owned),
                    per_search: spec.per_search,
                },
                headers: BTreeMap::new(),
                compat: Compat {
                    thinking: m.thinking,
                    efforts: m.efforts.iter().map(|s| (*s).to_owned()).collect(),
                    system_messages: m.flags & SYSTEM_MESSAGES != 0,
                    tool_changes: m.flags & TOOL_CHANGES != 0,
                    effort_updates: m.flags & EFFORT_UPDATES != 0,
                    preserved_thinking: m.flags & PRESERVED != 0,
                    phases: m.flags & PHASES != 0,
                    custom_tools: m.flags & APPLY_PATCH != 0 || compat.custom_tools,
                    ..compat.clone()
                },
                edit_tool: if m.flags & APPLY_PATCH != 0 {
                    EditTool::ApplyPatch
                } else {
                    EditTool::Edit
                },
            })
            .collect::<Vec<_>>();
        providers.push(def);
        all_models.extend(models);
    }
    Registry::from_parts(providers, all_models)
}
