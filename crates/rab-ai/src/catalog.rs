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

const fn input_limit(mut entry: Entry, input: u64) -> Entry {
    entry.input = input;
    entry
}

const fn dated(mut entry: Entry, as_of: &'static str) -> Entry {
    entry.as_of = as_of;
    entry
}

const M: u64 = 1_000_000;
const M1: u64 = 1_048_576;
const K128: u64 = 128_000;
const AD: ThinkingFormat = ThinkingFormat::AnthropicAdaptive;
const OE: ThinkingFormat = ThinkingFormat::OpenaiEffort;
const GL: ThinkingFormat = ThinkingFormat::GeminiLevel;
const OR: ThinkingFormat = ThinkingFormat::Openrouter;
const DS: ThinkingFormat = ThinkingFormat::Deepseek;
const NO: ThinkingFormat = ThinkingFormat::None;
const CLAUDE_EFFORTS: &[&str] = &["low", "medium", "high", "xhigh", "max"];
/// Claude models that switch thinking off with `thinking: {"type": "disabled"}`.
const CLAUDE_OFF_EFFORTS: &[&str] = &["none", "low", "medium", "high", "xhigh", "max"];
const GPT_EFFORTS: &[&str] = &["none", "low", "medium", "high", "xhigh", "max"];
const GEMINI_EFFORTS: &[&str] = &["low", "medium", "high"];
const GEMINI_MIN_EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];
const DEEPSEEK_EFFORTS: &[&str] = &["none", "low", "high", "max"];
const THREE: &[&str] = &["low", "medium", "high"];
const THREE_XHIGH: &[&str] = &["low", "medium", "high", "xhigh"];
/// Claude models that take system messages, tool changes and effort changes
/// mid-conversation (the per-message effort page lists the same models as the
/// system-message page: Fable 5.2 and 5.1, Opus 5.5, Opus 5, Sonnet 5.5, Haiku 5.5).
const APPEND_ONLY: u8 = SYSTEM_MESSAGES | TOOL_CHANGES | EFFORT_UPDATES;
/// Claude models whose thinking is preserved and bound (the prefix-check pages list
/// Fable 5.2 and 5.1, Opus 5.5, Sonnet 5.5, Haiku 5.5).
const BOUND: u8 = APPEND_ONLY | PRESERVED;
/// OpenAI (GPT-6 and GPT-5.6 pages): a prompt of more than 272k input tokens bills the
/// whole request at 2x input and cache rates and 1.5x output.
const fn long_prompt(p: [f64; 4]) -> [(u64, [f64; 4]); 1] {
    [(272_000, [p[0] * 2.0, p[1] * 1.5, p[2] * 2.0, p[3] * 2.0])]
}
const GPT_6_1_SOL_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_1_SOL);
const GPT_6_1_SOL: [f64; 4] = [2.0, 10.0, 0.10, 2.50];
const GPT_6_2_SOL_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_2_SOL);
const GPT_6_2_SOL: [f64; 4] = [2.0, 10.0, 0.10, 2.50];
const GPT_6_ASTRA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_ASTRA);
const GPT_6_ASTRA: [f64; 4] = [10.0, 50.0, 1.0, 12.5];
const GPT_6_1_TERRA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_1_TERRA);
const GPT_6_1_TERRA: [f64; 4] = [1.0, 5.0, 0.05, 1.25];
const GPT_6_LUNA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_LUNA);
const GPT_6_LUNA: [f64; 4] = [0.10, 0.50, 0.01, 0.125];
const GPT_6_SOL_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_SOL);
const GPT_6_SOL: [f64; 4] = [2.0, 10.0, 0.20, 2.50];
const GPT_5_6_SOL_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_5_6_SOL);
const GPT_5_6_SOL: [f64; 4] = [5.0, 30.0, 0.50, 6.25];
const GPT_5_6_TERRA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_5_6_TERRA);
const GPT_5_6_TERRA: [f64; 4] = [2.0, 12.0, 0.20, 2.50];
const GPT_5_6_LUNA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_5_6_LUNA);
const GPT_5_6_LUNA: [f64; 4] = [0.20, 1.20, 0.02, 0.25];

const ANTHROPIC: &[Entry] = &[
    flags(
        e(
            "claude-sonnet-5-5",
            "Claude Sonnet 5.5",
            M,
            K128,
            [2.0, 10.0, 0.20, 2.50],
            AD,
            &["between_tools", "low", "medium", "high", "xhigh", "max"],
        ),
        BOUND,
    ),
    flags(
        e(
            "claude-opus-5-5",
            "Claude Opus 5.5",
            M,
            K128,
            [4.0, 20.0, 0.20, 5.0],
            AD,
            CLAUDE_EFFORTS,
        ),
        BOUND,
    ),
    flags(
        e(
            "claude-fable-5-2",
            "Claude Fable 5.2",
            M,
            K128,
            [8.0, 40.0, 0.20, 10.0],
            AD,
            CLAUDE_EFFORTS,
        ),
        BOUND,
    ),
    // Haiku 5.5 switches thinking off with `disabled` (at effort high or below) and is
    // priced by prompt length: above 100k input tokens (cache reads and writes included)
    // every token costs five times as much.
    flags(
        tiered(
            e(
                "claude-haiku-5-5",
                "Claude Haiku 5.5",
                M,
                K128,
                [0.10, 0.50, 0.01, 0.125],
                AD,
                CLAUDE_OFF_EFFORTS,
            ),
            &[(100_000, [0.50, 2.50, 0.05, 0.625])],
        ),
        BOUND,
    ),
    flags(
        e(
            "claude-fable-5-1",
            "Claude Fable 5.1",
            M,
            K128,
            [10.0, 50.0, 0.25, 12.5],
            AD,
            CLAUDE_EFFORTS,
        ),
        BOUND,
    ),
    flags(
        e(
            "claude-opus-5",
            "Claude Opus 5",
            M,
            K128,
            [5.0, 25.0, 0.50, 6.25],
            AD,
            CLAUDE_OFF_EFFORTS,
        ),
        APPEND_ONLY,
    ),
    e(
        "claude-sonnet-5",
        "Claude Sonnet 5",
        M,
        K128,
        [2.0, 10.0, 0.20, 2.50],
        AD,
        CLAUDE_OFF_EFFORTS,
    ),
    e(
        "claude-haiku-4-5",
        "Claude Haiku 4.5",
        200_000,
        64_000,
        [1.0, 5.0, 0.10, 1.25],
        ThinkingFormat::AnthropicBudget,
        &[],
    ),
];

/// GPT-6.x and GPT-5.6: a 1,050,000-token window, of which at most 922,000 input
/// (developers.openai.com/api/docs/models, read 2026-11-28).
const GPT_INPUT: u64 = 922_000;
const GPT_FLAGS: u8 = EFFORT_UPDATES | PHASES | APPLY_PATCH;
const GPT_5_FLAGS: u8 = PHASES | APPLY_PATCH;

const OPENAI: &[Entry] = &[
    // The default (the first): the one OpenAI's model page names "to balance
    // intelligence and cost" (developers.openai.com/api/docs/models, read 2026-11-27).
    flags(
        tiered(
            input_limit(
                e("gpt-6.2-sol", "GPT-6.2 Sol", 1_050_000, K128, GPT_6_2_SOL, OE, CLAUDE_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_6_2_SOL_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-6.1-sol", "GPT-6.1 Sol", 1_050_000, K128, GPT_6_1_SOL, OE, CLAUDE_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_6_1_SOL_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-6-astra", "GPT-6 Astra", 1_050_000, K128, GPT_6_ASTRA, OE, CLAUDE_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_6_ASTRA_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e(
                    "gpt-6.1-terra",
                    "GPT-6.1 Terra",
                    1_050_000,
                    K128,
                    GPT_6_1_TERRA,
                    OE,
                    GPT_EFFORTS,
                ),
                GPT_INPUT,
            ),
            &GPT_6_1_TERRA_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-6-luna", "GPT-6 Luna", 1_050_000, K128, GPT_6_LUNA, OE, GPT_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_6_LUNA_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-6-sol", "GPT-6 Sol", 1_050_000, K128, GPT_6_SOL, OE, GPT_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_6_SOL_LONG,
        ),
        GPT_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-5.6-sol", "GPT-5.6 Sol", 1_050_000, K128, GPT_5_6_SOL, OE, GPT_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_5_6_SOL_LONG,
        ),
        GPT_5_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e(
                    "gpt-5.6-terra",
                    "GPT-5.6 Terra",
                    1_050_000,
                    K128,
                    GPT_5_6_TERRA,
                    OE,
                    GPT_EFFORTS,
                ),
                GPT_INPUT,
            ),
            &GPT_5_6_TERRA_LONG,
        ),
        GPT_5_FLAGS,
    ),
    flags(
        tiered(
            input_limit(
                e("gpt-5.6-luna", "GPT-5.6 Luna", 1_050_000, K128, GPT_5_6_LUNA, OE, GPT_EFFORTS),
                GPT_INPUT,
            ),
            &GPT_5_6_LUNA_LONG,
        ),
        GPT_5_FLAGS,
    ),
];

const GOOGLE: &[Entry] = &[
    // Argon and Carbon list at $4/$20 from 2026-12-01 (an introductory $2/$10 runs
    // until 2026-11-30); the standing price is listed so budgets are not undercounted.
    e("gemini-4-argon", "Gemini 4 Argon", M1, 65_536, [4.0, 20.0, 0.20, 0.0], GL, GEMINI_EFFORTS),
    e("gemini-4-carbon", "Gemini 4 Carbon", M1, 65_536, [4.0, 20.0, 0.20, 0.0], GL, GEMINI_EFFORTS),
    e(
        "gemini-4-hydrogen",
        "Gemini 4 Hydrogen",
        M1,
        65_536,
        [1.50, 7.50, 0.075, 0.0],
        GL,
        &["low", "medium", "high", "xhigh"],
    ),
    // 3.6–3.8 Flash: Google's introductory price, which its pricing page says runs to
    // 2026-12-31 and doubles (1.50 / 7.50) from 2027-01-01: change these then.
    e(
        "gemini-3.8-flash",
        "Gemini 3.8 Flash",
        M1,
        65_536,
        [0.75, 3.75, 0.075, 0.0],
        GL,
        GEMINI_EFFORTS,
    ),
    dated(
        e(
            "gemini-3.7-flash",
            "Gemini 3.7 Flash",
            M1,
            65_536,
            [0.75, 3.75, 0.075, 0.0],
            GL,
            GEMINI_EFFORTS,
        ),
        "2026-11",
    ),
    dated(
        e(
            "gemini-3.6-flash",
            "Gemini 3.6 Flash",
            M1,
            65_536,
            [0.75, 3.75, 0.075, 0.0],
            GL,
            GEMINI_MIN_EFFORTS,
        ),
        "2026-11",
    ),
    dated(
        e(
            "gemini-3.5-flash",
            "Gemini 3.5 Flash",
            M1,
            65_536,
            [1.50, 9.0, 0.15, 0.0],
            GL,
            GEMINI_MIN_EFFORTS,
        ),
        "2026-11",
    ),
    dated(
        e(
            "gemini-3.5-flash-lite",
            "Gemini 3.5 Flash-Lite",
            M1,
            65_536,
            [0.30, 2.50, 0.03, 0.0],
            GL,
            GEMINI_MIN_EFFORTS,
        ),
        "2026-11",
    ),
    // Prompts over 200k tokens cost more, as for every Gemini Pro model.
    dated(
        tiered(
            e(
                "gemini-3.1-pro-preview",
                "Gemini 3.1 Pro (preview)",
                M1,
                65_536,
                [2.0, 12.0, 0.20, 0.0],
                GL,
                GEMINI_EFFORTS,
            ),
            &[(200_000, [4.0, 18.0, 0.40, 0.0])],
        ),
        "2026-11",
    ),
];

const DEEPSEEK: &[Entry] = &[
    e(
        "deepseek-flash",
        "DeepSeek V4.1 Flash",
        M,
        384_000,
        [0.30, 1.20, 0.006, 0.0],
        DS,
        DEEPSEEK_EFFORTS,
    ),
    text_only(e(
        "deepseek-v4-pro",
        "DeepSeek V4 Pro",
        M,
        384_000,
        [1.32, 3.96, 0.044, 0.0],
        DS,
        DEEPSEEK_EFFORTS,
    )),
];

/// OpenCode Go is a subscription whose usage limits are counted in dollars; the prices
/// are DeepSeek's list prices for the same models, so budgets and the footer stay honest.
const OPENCODE_GO: &[Entry] = &[
    text_only(e(
        "deepseek-v4-flash",
        "DeepSeek V4 Flash (OpenCode Go)",
        M,
        384_000,
        [0.14, 0.28, 0.028, 0.0],
        DS,
        DEEPSEEK_EFFORTS,
    )),
    text_only(e(
        "deepseek-v4-pro",
        "DeepSeek V4 Pro (OpenCode Go)",
        M,
        384_000,
        [1.32, 3.96, 0.044, 0.0],
        DS,
        DEEPSEEK_EFFORTS,
    )),
];

const GROQ: &[Entry] = &[
    text_only(e(
        "openai/gpt-oss-120b",
        "GPT-OSS 120B",
        131_072,
        65_536,
        [0.15, 0.60, 0.075, 0.0],
        OE,
        THREE,
    )),
    text_only(e(
        "openai/gpt-oss-20b",
        "GPT-OSS 20B",
        131_072,
        65_536,
        [0.075, 0.30, 0.0375, 0.0],
        OE,
        THREE,
    )),
    e("qwen/qwen3.8-27b", "Qwen 3.8 27B", 131_042, 16_384, [0.80, 4.0, 0.40, 0.0], NO, &[]),
    e("qwen/qwen3.6-27b", "Qwen 3.6 27B", 131_072, 16_384, [0.60, 3.0, 0.30, 0.0], NO, &[]),
    text_only(e(
        "llama-3.1-8b-instant",
        "Llama 3.1 8B Instant",
        131_072,
        131_072,
        [0.05, 0.08, 0.0, 0.0],
        NO,
        &[],
    )),
];

const XAI: &[Entry] = &[
    // docs.x.ai/developers/grok-4-6 (read 2026-11-27): no output limit of its own
    // (the 128K asked for here is rab's cap), reasoning up to xhigh.
    e("grok-4.6", "Grok 4.6", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OE, THREE_XHIGH),
    e("grok-4.5", "Grok 4.5", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OE, THREE),
    e("grok-4.3", "Grok 4.3", M, K128, [1.25, 2.50, 0.20, 0.0], OE, THREE),
    e("grok-build-0.1", "Grok Build 0.1", 256_000, K128, [1.0, 2.0, 0.20, 0.0], OE, THREE),
];

const MISTRAL: &[Entry] = &[
    e(
        "mistral-medium-latest",
        "Mistral Medium 3.5",
        262_144,
        32_768,
        [1.50, 7.50, 0.15, 0.0],
        OE,
        &["none", "high"],
    ),
    e("mistral-large-4-0", "Mistral Large 4", M1, 32_768, [1.36, 4.18, 0.14, 0.0], NO, &[]),
    e("mistral-large-2512", "Mistral Large 3", 262_144, 32_768, [0.50, 1.50, 0.05, 0.0], NO, &[]),
    e(
        "mistral-small-2603",
        "Mistral Small 4",
        262_144,
        32_768,
        [0.15, 0.60, 0.015, 0.0],
        OE,
        &["none", "high"],
    ),
];

const OPENROUTER: &[Entry] = &[
    e(
        "anthropic/claude-sonnet-5.5",
        "Claude Sonnet 5.5",
        M,
        K128,
        // Anthropic's price (its Sonnet 5.5 page: cache read $0.20), as for the others.
        [2.0, 10.0, 0.20, 2.50],
        OR,
        THREE,
    ),
    e("anthropic/claude-opus-5.5", "Claude Opus 5.5", M, K128, [4.0, 20.0, 0.20, 5.0], OR, THREE),
    e(
        "anthropic/claude-haiku-5.5",
        "Claude Haiku 5.5",
        M,
        K128,
        [0.10, 0.50, 0.01, 0.125],
        OR,
        THREE,
    ),
    e("openai/gpt-6.1-sol", "GPT-6.1 Sol", 1_050_000, K128, [2.0, 10.0, 0.10, 0.0], OR, THREE),
    e("openai/gpt-5.6-terra", "GPT-5.6 Terra", M, K128, [2.0, 12.0, 0.20, 0.0], OR, THREE),
    e(
        "google/gemini-3.8-flash",
        "Gemini 3.8 Flash",
        M,
        65_536,
        [0.75, 3.75, 0.075, 0.0],
        OR,
        THREE,
    ),
    text_only(e(
        "deepseek/deepseek-v4-flash",
        "DeepSeek V4 Flash",
        M1,
        65_536,
        [0.14, 0.28, 0.0, 0.0],
        OR,
        THREE,
    )),
    e(
        "mistralai/mistral-medium-3-5",
        "Mistral Medium 3.5",
        262_144,
        32_768,
        [1.50, 7.50, 0.0, 0.0],
        OR,
        THREE,
    ),
    e("x-ai/grok-4.6", "Grok 4.6", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OR, THREE),
];

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
    models: &'static [Entry],
}

fn compat_default() -> Compat {
    Compat::default()
}

fn compat_local() -> Compat {
    Compat { max_tokens_field: MaxTokensField::MaxTokens, ..Compat::default() }
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
        compat: compat_default,
        as_of: "2026-11-24",
        models: ANTHROPIC,
    },
    ProviderSpec {
        name: "openai",
        api: Api::OpenaiResponses,
        base_url: "https://api.openai.com/v1",
        key_env: &["OPENAI_API_KEY"],
        base_url_env: Some("OPENAI_BASE_URL"),
        requires_key: true,
        compat: compat_default,
        as_of: "2026-11-24",
        models: OPENAI,
    },
    ProviderSpec {
        name: "google",
        api: Api::GoogleGenerativeAi,
        base_url: "https://generativelanguage.googleapis.com",
        key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        base_url_env: Some("GEMINI_BASE_URL"),
        requires_key: true,
        compat: compat_default,
        as_of: "2026-11-24",
        models: GOOGLE,
    },
    ProviderSpec {
        name: "openrouter",
        api: Api::OpenaiCompletions,
        base_url: "https://openrouter.ai/api/v1",
        key_env: &["OPENROUTER_API_KEY"],
        base_url_env: Some("OPENROUTER_BASE_URL"),
        requires_key: true,
        compat: compat_local,
        as_of: "2026-11",
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
        as_of: "2026-11-24",
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
        as_of: "2026-11",
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
        as_of: "2026-11-27",
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
        models: &[],
    },
    ProviderSpec {
        name: "llamacpp",
        api: Api::OpenaiCompletions,
        base_url: "http://localhost:8080/v1",
        key_env: &["LLAMACPP_API_KEY"],
        base_url_env: Some("LLAMACPP_BASE_URL"),
        requires_key: false,
        compat: compat_local,
        as_of: "",
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
        models: &[],
    },
];

fn rates(p: [f64; 4]) -> Rates {
    Rates { input: p[0], output: p[1], cache_read: p[2], cache_write: p[3] }
}

/// The registry of built-in providers and models.
pub(crate) fn builtin() -> Registry {
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
                    input: m.price[0],
                    output: m.price[1],
                    cache_read: m.price[2],
                    cache_write: m.price[3],
                    tiers: m
                        .tiers
                        .iter()
                        .map(|(above, p)| PriceTier { above: *above, rates: rates(*p) })
                        .collect(),
                    as_of: Some(if m.as_of.is_empty() { spec.as_of } else { m.as_of })
                        .filter(|d| !d.is_empty())
                        .map(str::to_owned),
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
