//! The built-in model tables, one per provider: figures from the providers' model and
//! pricing pages (each provider's page and the day it was read are in the provider
//! list in `catalog.rs`, and in docs/providers.md).

use super::{
    APPLY_PATCH, EFFORT_UPDATES, Entry, PHASES, PRESERVED, SYSTEM_MESSAGES, TOOL_CHANGES, dated, e,
    flags, input_limit, intro, text_only, tiered,
};
use crate::model::ThinkingFormat;

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
const GPT_6_2_ASTRA_LONG: [(u64, [f64; 4]); 1] = long_prompt(GPT_6_2_ASTRA);
const GPT_6_2_ASTRA: [f64; 4] = [8.0, 40.0, 0.40, 10.0];
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

pub(super) const ANTHROPIC: &[Entry] = &[
    flags(
        e(
            "claude-sonnet-5-5",
            "Claude Sonnet 5.5",
            M,
            K128,
            // Cache reads at 0.05x input since 2026-10-07 (half Sonnet 5's rate).
            [2.0, 10.0, 0.10, 2.50],
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

pub(super) const OPENAI: &[Entry] = &[
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
    // OpenAI's flagship (the models page, read 2026-11-28).
    flags(
        tiered(
            input_limit(
                e(
                    "gpt-6.2-astra",
                    "GPT-6.2 Astra",
                    1_050_000,
                    K128,
                    GPT_6_2_ASTRA,
                    OE,
                    CLAUDE_EFFORTS,
                ),
                GPT_INPUT,
            ),
            &GPT_6_2_ASTRA_LONG,
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
    // The $4/$20 promotion ran "at least until 2026-11-21"; no page says it goes on,
    // so the list price stands.
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

const FLASH_INTRO: [f64; 4] = [0.75, 3.75, 0.075, 0.0];
const FLASH_2027: [f64; 4] = [1.50, 7.50, 0.15, 0.0];

pub(super) const GOOGLE: &[Entry] = &[
    // Argon and Carbon: an introductory $2/$10 through 2026-11-30, $4/$20 from
    // 2026-12-01.
    intro(
        e(
            "gemini-4-argon",
            "Gemini 4 Argon",
            M1,
            65_536,
            [4.0, 20.0, 0.20, 0.0],
            GL,
            GEMINI_EFFORTS,
        ),
        "2026-11-30",
        [2.0, 10.0, 0.10, 0.0],
    ),
    intro(
        e(
            "gemini-4-carbon",
            "Gemini 4 Carbon",
            M1,
            65_536,
            [4.0, 20.0, 0.20, 0.0],
            GL,
            GEMINI_EFFORTS,
        ),
        "2026-11-30",
        [2.0, 10.0, 0.10, 0.0],
    ),
    e(
        "gemini-4-neon",
        "Gemini 4 Neon",
        M1,
        65_536,
        [3.0, 15.0, 0.15, 0.0],
        GL,
        &["low", "medium", "high", "xhigh"],
    ),
    e(
        "gemini-4-hydrogen",
        "Gemini 4 Hydrogen",
        M1,
        65_536,
        [1.50, 7.50, 0.075, 0.0],
        GL,
        &["low", "medium", "high", "xhigh"],
    ),
    // 3.6–3.8 Flash: Google's introductory price runs through 2026-12-31 and doubles
    // (1.50 / 7.50, cache reads with it) from 2027-01-01.
    intro(
        e("gemini-3.8-flash", "Gemini 3.8 Flash", M1, 65_536, FLASH_2027, GL, GEMINI_EFFORTS),
        "2026-12-31",
        FLASH_INTRO,
    ),
    intro(
        dated(
            e("gemini-3.7-flash", "Gemini 3.7 Flash", M1, 65_536, FLASH_2027, GL, GEMINI_EFFORTS),
            "2026-11",
        ),
        "2026-12-31",
        FLASH_INTRO,
    ),
    intro(
        dated(
            e(
                "gemini-3.6-flash",
                "Gemini 3.6 Flash",
                M1,
                65_536,
                FLASH_2027,
                GL,
                GEMINI_MIN_EFFORTS,
            ),
            "2026-11",
        ),
        "2026-12-31",
        FLASH_INTRO,
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

pub(super) const DEEPSEEK: &[Entry] = &[
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
pub(super) const OPENCODE_GO: &[Entry] = &[
    // DeepSeek retired V4 Flash: the name is served by V4.1 Flash, at its price, with
    // image input (api-docs.deepseek.com/quick_start/pricing, read 2026-11-28).
    e(
        "deepseek-v4-flash",
        "DeepSeek V4.1 Flash (OpenCode Go)",
        M,
        384_000,
        [0.30, 1.20, 0.006, 0.0],
        DS,
        DEEPSEEK_EFFORTS,
    ),
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

pub(super) const GROQ: &[Entry] = &[
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

/// xAI bills every token of a request whose prompt reaches 200k tokens at twice the
/// rate (docs.x.ai model pages, read 2026-11-28).
const GROK_LONG: [(u64, [f64; 4]); 1] = [(199_999, [4.0, 12.0, 1.0, 0.0])];
const GROK_4_3_LONG: [(u64, [f64; 4]); 1] = [(199_999, [2.50, 5.0, 0.40, 0.0])];

pub(super) const XAI: &[Entry] = &[
    // docs.x.ai/developers/grok-4-7 (read 2026-11-28), the newest: no output limit of
    // its own (the 128K asked for here is rab's cap), reasoning up to xhigh.
    tiered(
        e("grok-4.7", "Grok 4.7", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OE, THREE_XHIGH),
        &GROK_LONG,
    ),
    tiered(
        e("grok-4.6", "Grok 4.6", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OE, THREE_XHIGH),
        &GROK_LONG,
    ),
    tiered(e("grok-4.5", "Grok 4.5", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OE, THREE), &GROK_LONG),
    tiered(e("grok-4.3", "Grok 4.3", M, K128, [1.25, 2.50, 0.20, 0.0], OE, THREE), &GROK_4_3_LONG),
    e("grok-build-0.1", "Grok Build 0.1", 256_000, K128, [1.0, 2.0, 0.20, 0.0], OE, THREE),
];

pub(super) const MISTRAL: &[Entry] = &[
    e(
        "mistral-medium-latest",
        "Mistral Medium 3.5",
        262_144,
        32_768,
        [1.50, 7.50, 0.15, 0.0],
        OE,
        &["none", "high"],
    ),
    // Reasons by default (`reasoning_effort`), up to 262,144 output tokens.
    e(
        "mistral-large-4-0",
        "Mistral Large 4",
        M1,
        262_144,
        [1.36, 4.18, 0.14, 0.0],
        OE,
        &["none", "high"],
    ),
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

pub(super) const OPENROUTER: &[Entry] = &[
    e(
        "anthropic/claude-sonnet-5.5",
        "Claude Sonnet 5.5",
        M,
        K128,
        // Anthropic's price (cache read $0.10 since 2026-10-07), as for the others.
        [2.0, 10.0, 0.10, 2.50],
        OR,
        THREE,
    ),
    e("anthropic/claude-opus-5.5", "Claude Opus 5.5", M, K128, [4.0, 20.0, 0.20, 5.0], OR, THREE),
    tiered(
        e(
            "anthropic/claude-haiku-5.5",
            "Claude Haiku 5.5",
            M,
            K128,
            [0.10, 0.50, 0.01, 0.125],
            OR,
            THREE,
        ),
        &[(100_000, [0.50, 2.50, 0.05, 0.625])],
    ),
    tiered(
        input_limit(
            e("openai/gpt-6.1-sol", "GPT-6.1 Sol", 1_050_000, K128, GPT_6_1_SOL, OR, THREE),
            GPT_INPUT,
        ),
        &GPT_6_1_SOL_LONG,
    ),
    tiered(
        input_limit(
            e("openai/gpt-5.6-terra", "GPT-5.6 Terra", 1_050_000, K128, GPT_5_6_TERRA, OR, THREE),
            GPT_INPUT,
        ),
        &GPT_5_6_TERRA_LONG,
    ),
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
    tiered(
        e("x-ai/grok-4.6", "Grok 4.6", 500_000, K128, [2.0, 6.0, 0.50, 0.0], OR, THREE),
        &GROK_LONG,
    ),
];
