use super::*;
use crate::types::ThinkingLevel;
use pretty_assertions::assert_eq;

fn resolve(provider: Option<&str>, model: Option<&str>) -> Result<Resolved, ResolveError> {
    Registry::builtin().resolve(&ModelQuery { provider, model, ..Default::default() })
}

#[test]
fn bare_names_resolve_by_exact_id_then_prefix_then_substring() {
    let r = resolve(None, Some("claude-opus-5-5")).unwrap();
    assert_eq!((r.model.provider.as_str(), r.model.id.as_str()), ("anthropic", "claude-opus-5-5"));
    assert!(r.is_known);
    let r = resolve(None, Some("gpt-6.1")).unwrap();
    assert_eq!(r.model.id, "gpt-6.1-sol");
    let r = resolve(None, Some("sonnet")).unwrap();
    assert_eq!(r.model.id, "claude-sonnet-5-5", "newest first wins");
}

#[test]
fn provider_prefix_and_slash_ids() {
    let r = resolve(None, Some("openrouter/anthropic/claude-opus-5.5")).unwrap();
    assert_eq!(
        (r.model.provider.as_str(), r.model.id.as_str()),
        ("openrouter", "anthropic/claude-opus-5.5")
    );
    let r = resolve(None, Some("anthropic/claude-haiku-4-5")).unwrap();
    assert_eq!((r.model.provider.as_str(), r.model.id.as_str()), ("anthropic", "claude-haiku-4-5"));
}

#[test]
fn issue_13_a_known_provider_prefix_wins_over_an_openrouter_id() {
    // `--list-models` prints `openai/gpt-6.1-sol`; that spelling must reach OpenAI (and
    // bill there), not OpenRouter, whose copy of the model has the same id.
    for (query, provider, id) in [
        ("openai/gpt-6.1-sol", "openai", "gpt-6.1-sol"),
        ("google/gemini-3.8-flash", "google", "gemini-3.8-flash"),
        ("anthropic/claude-opus-5.5", "anthropic", "claude-opus-5-5"),
        ("openrouter/openai/gpt-6.1-sol", "openrouter", "openai/gpt-6.1-sol"),
        ("groq/openai/gpt-oss-120b", "groq", "openai/gpt-oss-120b"),
    ] {
        let r = resolve(None, Some(query)).unwrap();
        assert_eq!((r.model.provider.as_str(), r.model.id.as_str()), (provider, id), "{query}");
        assert!(r.is_known, "{query}");
    }
    let r = resolve(Some("groq"), Some("openai/gpt-oss-120b")).unwrap();
    assert_eq!((r.model.provider.as_str(), r.model.id.as_str()), ("groq", "openai/gpt-oss-120b"));
}

#[test]
fn unknown_models_of_a_known_family_run_with_default_limits() {
    let r = resolve(None, Some("claude-opus-9")).unwrap();
    assert_eq!(r.model.provider, "anthropic");
    assert!(!r.is_known);
    assert_eq!(r.model.context_window, DEFAULT_CONTEXT_WINDOW);
    assert!(matches!(resolve(None, Some("mystery-model")), Err(ResolveError::UnknownModel { .. })));
}

#[test]
fn base_url_makes_any_model_runnable() {
    let r = Registry::builtin()
        .resolve(&ModelQuery {
            model: Some("qwen3-coder:30b"),
            base_url: Some("http://localhost:11434/v1/"),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.model.api, Api::OpenaiCompletions);
    assert_eq!(r.model.base_url, "http://localhost:11434/v1");
    assert_eq!(r.provider.name, "custom");
    assert!(!r.provider.requires_key);
}

#[test]
fn provider_alone_picks_its_default_model_and_api_overrides() {
    let r = Registry::builtin()
        .resolve(&ModelQuery {
            provider: Some("openai"),
            api: Some(Api::OpenaiCompletions),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.model.id, "gpt-6.2-sol");
    assert_eq!(r.model.api, Api::OpenaiCompletions);
    assert!(matches!(resolve(Some("nope"), None), Err(ResolveError::UnknownProvider { .. })));
    let err = resolve(Some("nope"), None).unwrap_err().to_string();
    assert!(err.contains("known providers: anthropic, openai"), "{err}");
    assert!(matches!(resolve(None, None), Err(ResolveError::NoModel)));
}

#[test]
fn custom_models_override_builtins_of_the_same_id() {
    let mut reg = Registry::builtin();
    let def = reg.provider("anthropic").unwrap().clone();
    let mut m =
        Model::custom("claude-sonnet-5-5", "anthropic", Api::AnthropicMessages, "http://proxy");
    m.context_window = 42;
    reg.upsert_provider(def, vec![m]);
    let r = reg
        .resolve(&ModelQuery { model: Some("claude-sonnet-5-5"), ..Default::default() })
        .unwrap();
    assert_eq!(r.model.context_window, 42);
    assert_eq!(reg.models().iter().filter(|m| m.id == "claude-sonnet-5-5").count(), 1);
}

#[test]
fn inferred_providers_follow_model_families() {
    for (m, p) in [
        ("claude-x", "anthropic"),
        ("gpt-9", "openai"),
        ("o7-mini", "openai"),
        ("gemini-9", "google"),
        ("grok-9", "xai"),
        ("deepseek-x", "deepseek"),
    ] {
        assert_eq!(infer_provider(m), Some(p), "{m}");
    }
    assert_eq!(infer_provider("olmo"), None);
}

#[test]
fn effort_clamps_to_what_the_model_accepts() {
    let compat = |efforts: &[&str]| Compat {
        thinking: ThinkingFormat::AnthropicAdaptive,
        efforts: efforts.iter().map(|s| s.to_string()).collect(),
        ..Compat::default()
    };
    let sonnet = compat(&["between_tools", "low", "medium", "high", "xhigh", "max"]);
    assert_eq!(sonnet.effort(ThinkingLevel::Off), "between_tools");
    assert_eq!(sonnet.effort(ThinkingLevel::Minimal), "low");
    assert_eq!(sonnet.effort(ThinkingLevel::High), "high");
    let opus = compat(&["low", "medium", "high"]);
    assert_eq!(opus.effort(ThinkingLevel::Off), "low", "cannot disable: weakest effort");
    let haiku = compat(&["none", "low", "high"]);
    assert_eq!(haiku.effort(ThinkingLevel::Off), "none");
    assert_eq!(haiku.effort(ThinkingLevel::Medium), "high", "next stronger");
    let weak = compat(&["low"]);
    assert_eq!(weak.effort(ThinkingLevel::High), "low", "strongest available");
}

#[test]
fn cost_prices_cached_and_uncached_input_apart() {
    let cost = ModelCost {
        input: 2.0,
        output: 10.0,
        cache_read: 0.2,
        cache_write: 2.5,
        ..ModelCost::default()
    };
    let usage = crate::types::Usage {
        input: 1_000_000,
        output: 100_000,
        cache_read: 1_000_000,
        cache_write: 0,
        reasoning: 0,
        web_searches: 0,
    };
    assert!((cost.of(&usage) - (2.0 + 1.0 + 0.2)).abs() < 1e-9);
}

#[test]
fn every_builtin_model_has_a_known_provider_and_sane_limits() {
    let reg = Registry::builtin();
    for m in reg.models() {
        let p = reg.provider(&m.provider).unwrap();
        assert_eq!(m.api, p.api, "{}", m.id);
        assert!(m.context_window >= m.max_output || m.max_output == 131_072, "{}", m.id);
        assert!(m.cost.input > 0.0, "{}", m.id);
        for e in &m.compat.efforts {
            assert!(EFFORT_LADDER.contains(&e.as_str()), "{}: {e}", m.id);
        }
    }
}

#[test]
fn issue_13_prompt_size_tiers_price_the_whole_request() {
    let haiku = resolve(None, Some("claude-haiku-5-5")).unwrap().model;
    let usage = |input: u64, cache_read: u64, output: u64| crate::types::Usage {
        input,
        output,
        cache_read,
        cache_write: 0,
        reasoning: 0,
        web_searches: 0,
    };
    // 100,000 input tokens is the base tier: $0.10 in, $0.50 out per million.
    let small = haiku.cost.of(&usage(100_000, 0, 10_000));
    assert!((small - (0.01 + 0.005)).abs() < 1e-9, "{small}");
    // Cache reads count toward the size: 60k + 50k is over 100k, so every token of the
    // request is billed at $0.50 / $2.50 / $0.05.
    let large = haiku.cost.of(&usage(60_000, 50_000, 10_000));
    assert!((large - (0.03 + 0.0025 + 0.025)).abs() < 1e-9, "{large}");
    let sol = resolve(None, Some("gpt-6.1-sol")).unwrap().model;
    assert_eq!(sol.cost.rates(272_000).input, 2.0);
    let over = sol.cost.rates(272_001);
    assert_eq!((over.input, over.output, over.cache_read), (4.0, 15.0, 0.2));
}

#[test]
fn issue_13_every_built_in_price_is_dated_and_gemini_4_is_complete() {
    for m in Registry::builtin().models() {
        let date = m.cost.as_of.as_deref().unwrap_or_else(|| panic!("{} has no price date", m.id));
        assert!(
            date.starts_with("2026-") && (date.len() == 7 || date.len() == 10),
            "{}: {date}",
            m.id
        );
    }
    for id in ["gemini-4-hydrogen", "gemini-4-carbon", "gemini-4-argon"] {
        let r = resolve(None, Some(id)).unwrap();
        assert!(r.is_known && r.model.provider == "google", "{id}");
        assert!(r.model.reasoning && r.model.cost.input > 0.0, "{id}");
    }
    let hydrogen = resolve(None, Some("gemini-4-hydrogen")).unwrap().model;
    assert_eq!(hydrogen.compat.effort(ThinkingLevel::High), "high");
    assert!(hydrogen.compat.efforts.contains(&"xhigh".to_owned()));
    // Haiku 5.5 switches thinking off with `disabled`; Opus 5.5 cannot: its lowest
    // effort stands for off.
    let haiku = resolve(None, Some("claude-haiku-5-5")).unwrap().model;
    assert_eq!(haiku.compat.effort(ThinkingLevel::Off), "none");
    let opus = resolve(None, Some("claude-opus-5-5")).unwrap().model;
    assert_eq!(opus.compat.effort(ThinkingLevel::Off), "low");
}

#[test]
fn every_default_model_is_in_the_table_for_its_provider_and_dated() {
    let reg = Registry::builtin();
    for p in reg.providers() {
        let models: Vec<&Model> = reg.models().iter().filter(|m| m.provider == p.name).collect();
        match &p.default_model {
            Some(id) => {
                let m = models.iter().find(|m| &m.id == id);
                assert!(m.is_some(), "{}: default {id} is not in its table", p.name);
                // Resolving the provider alone gives exactly that model, as known.
                let r = resolve(Some(&p.name), None).unwrap();
                assert_eq!((&r.model.id, r.is_known), (id, true), "{}", p.name);
            }
            None => assert!(models.is_empty(), "{}: a table but no default", p.name),
        }
        for m in models {
            assert!(m.context_window > 0 && m.max_output > 0, "{}/{}", p.name, m.id);
            assert!(m.max_output <= m.context_window, "{}/{}", p.name, m.id);
            let date = m.cost.as_of.as_deref().unwrap_or_default();
            assert!(
                date.len() >= 7 && date.starts_with("20"),
                "{}/{}: the prices need the date they were read",
                p.name,
                m.id
            );
        }
    }
}

#[test]
fn the_readme_names_each_providers_real_default() {
    let readme = include_str!("../../../../README.md");
    let reg = Registry::builtin();
    let mut checked = 0;
    for line in readme.lines().filter(|l| l.contains("(default)")) {
        // `--model ID` (default)
        let Some(at) = line.find("(default)") else { continue };
        let before = &line[..at];
        let Some(id) = before.rsplit('`').nth(1) else { continue };
        let id = id.trim_start_matches("--model ").trim();
        let provider = if line.contains("Anthropic") { "anthropic" } else { continue };
        let p = reg.provider(provider).unwrap();
        assert_eq!(p.default_model.as_deref(), Some(id), "README: {line}");
        checked += 1;
    }
    assert!(checked >= 1, "the README's provider table names no default any more");
}

#[test]
fn issue_35_prices_and_limits_are_the_pages_of_2026_11_28() {
    let r = Registry::builtin_on("2026-11-28");
    let get = |provider: &str, id: &str| {
        r.models()
            .iter()
            .find(|m| m.provider == provider && m.id == id)
            .unwrap_or_else(|| panic!("{provider}/{id} is missing"))
            .clone()
    };
    // Sonnet 5.5's cache reads: $0.10 since 2026-10-07, also through OpenRouter.
    assert_eq!(get("anthropic", "claude-sonnet-5-5").cost.cache_read, 0.10);
    assert_eq!(get("openrouter", "anthropic/claude-sonnet-5.5").cost.cache_read, 0.10);
    // xAI doubles every token of a prompt that reaches 200k tokens; Grok 4.7 is new.
    let grok = get("xai", "grok-4.7");
    assert_eq!(r.provider("xai").unwrap().default_model.as_deref(), Some("grok-4.7"));
    assert_eq!(grok.cost.rates(199_999).input, 2.0);
    assert_eq!(grok.cost.rates(200_000).input, 4.0);
    assert_eq!(get("openrouter", "x-ai/grok-4.6").cost.rates(250_000).output, 12.0);
    // OpenAI's flagship, and the 922,000-token input limit of GPT-6.x and 5.6.
    let astra = get("openai", "gpt-6.2-astra");
    assert_eq!((astra.cost.input, astra.cost.output, astra.input_limit()), (8.0, 40.0, 922_000));
    assert_eq!(get("openrouter", "openai/gpt-6.1-sol").input_limit(), 922_000);
    assert_eq!(get("openrouter", "openai/gpt-6.1-sol").cost.rates(300_000).input, 4.0);
    assert_eq!(get("google", "gemini-4-neon").cost.input, 3.0);
    // Mistral Large 4 reasons and writes up to 262,144 tokens.
    let large = get("mistral", "mistral-large-4-0");
    assert!(large.reasoning && large.max_output == 262_144);
    // OpenCode Go's DeepSeek V4 Flash is served (and billed) as V4.1 Flash.
    let flash = get("opencode_go", "deepseek-v4-flash");
    assert_eq!((flash.cost.input, flash.cost.output, flash.images), (0.30, 1.20, true));
}
