//! The providers' request rules the fake server enforces beyond the shape of the
//! history, each from the provider's current documentation (read 2026-11-24), so a
//! client change that breaks conformance fails a test instead of a user's session:
//!
//! - Anthropic (platform.claude.com/docs/en/build-with-claude/thinking,
//!   …/mid-conversation-system-messages, …/preserved-thinking): thinking bound to its
//!   prefix ([`crate::binding`]); `display` and `block_binding` only with adaptive
//!   thinking, `block_binding` only with its beta header; `disabled` and `enabled`
//!   refused by the models that refuse them; system messages only where the model
//!   takes them, never first, after a user turn and before an assistant turn;
//!   `tool_addition`/`tool_removal` only with their beta header and for declared tools.
//! - OpenAI Responses (developers.openai.com/api/docs/guides/reasoning): models that
//!   label assistant messages with `phase` get it back on every assistant message
//!   (OpenAI degrades quietly without it; the fake refuses, so tests notice);
//!   `configuration_update` only on GPT-6 models and never two in a row; a reasoning
//!   item followed by the item it produced.
//! - DeepSeek (api-docs.deepseek.com/guides/thinking_mode#tool-calls): in thinking
//!   mode, every assistant message with tool calls carries `reasoning_content`.
//! - Mistral (the validator of github.com/mistralai/mistral-common, `validator.py`, and
//!   the message Mistral's API answers, read 2026-11-28): tool-call ids are exactly 9
//!   letters or digits.
//! - OpenRouter (openrouter.ai/docs/guides/best-practices/reasoning-tokens, "Preserving
//!   reasoning blocks", read 2026-11-28): Gemini's assistant messages with tool calls
//!   carry the `reasoning_details` OpenRouter streamed with them.
//! - Gemini (ai.google.dev/gemini-api/docs/thought-signatures): on Gemini 3 and later,
//!   the first function call of each step of the current turn carries a signature.

use serde_json::Value;

use crate::Wire;
use crate::binding;
use crate::inspect::RecordedRequest;

/// How the reply to an accepted request is shaped by what the request asked for.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The model named in the request.
    pub model: String,
    /// Anthropic: the prefix the reply's thinking is bound to.
    pub(crate) prefix: Option<binding::Prefix>,
    /// Anthropic adaptive thinking without a `display` that shows text: the thinking
    /// block arrives empty, its signature only.
    pub omit_thinking_text: bool,
    /// Anthropic with the binding beta header: `input_transformations` to report.
    pub transformations: Option<Vec<Value>>,
    /// OpenAI Responses: label message items with `phase`.
    pub phase: bool,
    /// Gemini 3 and later: sign the first function call of the reply.
    pub sign_calls: bool,
    /// Gemini through OpenRouter (Chat Completions): stream the reasoning as
    /// `reasoning_details`, an encrypted block with the reply's tool calls.
    pub reasoning_details: bool,
    /// The web search tool the request offers, with its settings.
    pub search: Option<crate::search::Offered>,
}

impl Reply {
    /// A reply with no request-dependent shape.
    pub fn plain(model: &str) -> Self {
        Reply { model: model.to_owned(), ..Reply::default() }
    }
}

/// Checks `req` against its provider's rules: the reply's shape, or the 400 message.
pub(crate) fn check(wire: Wire, req: &RecordedRequest) -> Result<Reply, String> {
    let mut reply = Reply::plain(&req.model());
    reply.search = crate::search::offered(wire, req)?;
    crate::search::check_history(wire, &req.body)?;
    match wire {
        Wire::Anthropic => anthropic(req, &mut reply)?,
        Wire::OpenaiResponses => responses(req, &mut reply)?,
        Wire::OpenaiChat => chat(req, &mut reply)?,
        Wire::Gemini => gemini(req, &mut reply)?,
    }
    Ok(reply)
}

fn betas(req: &RecordedRequest) -> Vec<String> {
    req.header("anthropic-beta")
        .map(|v| v.split(',').map(|b| b.trim().to_owned()).collect())
        .unwrap_or_default()
}

/// Claude models whose thinking is preserved (and bound): they also take system
/// messages mid-conversation.
const PRESERVED: [&str; 7] = [
    "claude-fable-5-2",
    "claude-mythos-5-2",
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
];

/// Claude models that refuse `thinking: {type: "disabled"}` (Haiku 5.5, Sonnet 5 and
/// Opus 5 take it at effort high or below).
const NO_DISABLE: [&str; 7] = [
    "claude-fable-5",
    "claude-fable-5-1",
    "claude-fable-5-2",
    "claude-mythos-5",
    "claude-mythos-5-1",
    "claude-mythos-5-2",
    "claude-opus-5-5",
];

/// Claude models that take effort-only system messages (per-message effort, beta
/// `mid-conversation-output-config-2026-07-01`).
const EFFORT_MESSAGES: [&str; 8] = [
    "claude-fable-5-2",
    "claude-mythos-5-2",
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-opus-5-5",
    "claude-opus-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
];

const EFFORT_BETA: &str = "mid-conversation-output-config-2026-07-01";

/// Claude models without mid-conversation system messages.
const NO_SYSTEM_MESSAGES: [&str; 2] = ["claude-sonnet-5", "claude-haiku-4-5"];

fn anthropic_thinking(req: &RecordedRequest, model: &str) -> Result<(), String> {
    let thinking = &req.body["thinking"];
    let kind = thinking["type"].as_str().unwrap_or("adaptive");
    let betas = betas(req);
    // Claude 5.x: `claude-<family>-5` or `claude-<family>-5-<minor>`.
    let is_5 = model.starts_with("claude-") && model.split('-').nth(2) == Some("5");
    if kind == "enabled" && is_5 {
        return Err("\"thinking.type.enabled\" is not supported for this model. Use \
                    \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking \
                    behavior."
            .to_owned());
    }
    if kind == "disabled" && model == "claude-sonnet-5-5" {
        return Err("To turn thinking off on this model, send \"thinking\": {\"type\": \
                    \"between_tools\"} instead of {\"type\": \"disabled\"}."
            .to_owned());
    }
    if kind == "disabled" && NO_DISABLE.contains(&model) {
        return Err("\"thinking.type.disabled\" is not supported for this model. Use \
                    \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking \
                    behavior."
            .to_owned());
    }
    if kind == "disabled" && is_5 {
        let effort = req.body["output_config"]["effort"].as_str().unwrap_or("medium");
        if matches!(effort, "xhigh" | "max") {
            return Err(format!(
                "thinking.type \"disabled\" is only allowed with effort low, medium or high, not {effort}"
            ));
        }
    }
    if kind == "between_tools" {
        if model != "claude-sonnet-5-5" && model != "test-model" {
            return Err(format!("thinking.type: \"between_tools\" is not supported by {model}"));
        }
        let effort = req.body["output_config"]["effort"].as_str().unwrap_or("high");
        if matches!(effort, "xhigh" | "max") {
            return Err(format!(
                "thinking.type \"between_tools\" is only allowed with effort low, medium or high, not {effort}"
            ));
        }
    }
    for field in ["display", "block_binding", "budget_tokens"] {
        let allowed = match field {
            "budget_tokens" => kind == "enabled",
            _ => kind == "adaptive" || (kind == "enabled" && field == "display"),
        };
        if thinking.get(field).is_some() && !allowed {
            return Err(format!("thinking.{kind}.{field}: Extra inputs are not permitted"));
        }
    }
    // Binding controls belong to the models that run prefix checks (the prefix-check
    // page lists them); rab treats them as refused elsewhere.
    if thinking.get("block_binding").is_some()
        && !PRESERVED.contains(&model)
        && model != "test-model"
    {
        return Err(format!(
            "thinking.{kind}.block_binding: {model} does not run prefix checks; remove it"
        ));
    }
    if thinking.get("block_binding").is_some() && !betas.iter().any(|b| b == binding::BINDING_BETA)
    {
        return Err(format!("thinking.{kind}.block_binding: Extra inputs are not permitted"));
    }
    if thinking["display"] == "updates"
        && !betas.iter().any(|b| b == "thinking-display-updates-2026-08-18")
    {
        return Err("thinking.display: Input should be 'summarized' or 'omitted'".to_owned());
    }
    if req.body.get("temperature").is_some() && PRESERVED.contains(&model) {
        return Err(format!("temperature: {model} does not accept sampling parameters"));
    }
    Ok(())
}

fn anthropic_system_messages(req: &RecordedRequest, model: &str) -> Result<(), String> {
    let empty = Vec::new();
    let messages = req.body["messages"].as_array().unwrap_or(&empty);
    let tools: Vec<&str> = req.body["tools"]
        .as_array()
        .map(|ts| ts.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let has_tool_beta = betas(req).iter().any(|b| b == "mid-conversation-tool-changes-2026-07-01");
    let role = |i: usize| messages.get(i).and_then(|m| m["role"].as_str()).unwrap_or_default();
    let has_effort_beta = betas(req).iter().any(|b| b == EFFORT_BETA);
    for (i, m) in messages.iter().enumerate().filter(|(_, m)| m["role"] == "system") {
        if let Some(config) = m.get("output_config") {
            effort_message(i, m, config, model, has_effort_beta)?;
        }
        if NO_SYSTEM_MESSAGES.contains(&model) {
            return Err(format!(
                "messages.{i}: {model} does not support system messages in `messages`; use the top-level `system` field"
            ));
        }
        let before = (0..i).rev().map(role).find(|r| *r != "system");
        if before != Some("user") {
            return Err(format!(
                "messages.{i}: a system message must immediately follow a user turn"
            ));
        }
        let after = (i + 1..messages.len()).map(role).find(|r| *r != "system");
        if after.is_some_and(|r| r != "assistant") {
            return Err(format!(
                "messages.{i}: a system message must be followed by an assistant turn or end `messages`"
            ));
        }
        for (j, b) in m["content"].as_array().into_iter().flatten().enumerate() {
            let kind = b["type"].as_str().unwrap_or_default();
            if kind != "tool_addition" && kind != "tool_removal" {
                continue;
            }
            if !has_tool_beta {
                return Err(format!(
                    "messages.{i}.content.{j}: `{kind}` requires the `mid-conversation-tool-changes-2026-07-01` value in the `anthropic-beta` header"
                ));
            }
            let name = b["tool"]["name"].as_str().unwrap_or_default();
            if !tools.contains(&name) {
                return Err(format!(
                    "messages.{i}.content.{j}: tool `{name}` is not declared in `tools`"
                ));
            }
        }
    }
    Ok(())
}

/// Per-message effort (…/build-with-claude/effort-per-message): a system message that
/// carries `output_config` has empty `content`, only `output_config.effort`, a valid
/// level, the beta header, and a model that takes it.
fn effort_message(
    i: usize,
    m: &Value,
    config: &Value,
    model: &str,
    has_beta: bool,
) -> Result<(), String> {
    if !has_beta {
        return Err(format!(
            "messages.{i}.output_config: requires the `{EFFORT_BETA}` value in the `anthropic-beta` header"
        ));
    }
    if !EFFORT_MESSAGES.contains(&model) {
        return Err(format!("messages.{i}.output_config: not supported by {model}"));
    }
    if m["content"].as_array().is_none_or(|c| !c.is_empty()) {
        return Err(format!(
            "messages.{i}.content: a system message with `output_config` must have empty content"
        ));
    }
    let keys: Vec<&String> = config.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    if keys.iter().any(|k| *k != "effort") {
        return Err(format!("messages.{i}.output_config: only `effort` may change per message"));
    }
    match config["effort"].as_str() {
        Some("low" | "medium" | "high" | "xhigh" | "max") => Ok(()),
        other => Err(format!(
            "messages.{i}.output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max', not {other:?}"
        )),
    }
}

fn anthropic(req: &RecordedRequest, reply: &mut Reply) -> Result<(), String> {
    let model = reply.model.clone();
    anthropic_thinking(req, &model)?;
    anthropic_system_messages(req, &model)?;
    let request = binding::Request::new(&req.body);
    let dropped = request.check(&req.headers)?;
    reply.prefix = Some(request.reply_prefix(&dropped));
    let thinking = &req.body["thinking"];
    let kind = thinking["type"].as_str();
    // Adaptive thinking (the default of models with preserved thinking) shows no text
    // unless `display` asks for it.
    let is_adaptive =
        kind == Some("adaptive") || (kind.is_none() && PRESERVED.contains(&model.as_str()));
    reply.omit_thinking_text =
        is_adaptive && !matches!(thinking["display"].as_str(), Some("summarized" | "updates"));
    if binding::has_binding_beta(&req.headers) {
        reply.transformations = Some(binding::transformations(&dropped));
    }
    Ok(())
}

/// Models that label assistant messages with `phase` (gpt-5.3 and later).
fn labels_phase(model: &str) -> bool {
    let Some(version) = model.strip_prefix("gpt-") else { return false };
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    major > 5 || (major == 5 && minor >= 3)
}

/// Custom (free-form) tools: each call in the input must be of a custom tool the
/// request offers, and answered by a `custom_tool_call_output`; a function call's
/// output must not be one (OpenAI refuses a mismatched pair).
fn responses_custom_tools(req: &RecordedRequest) -> Result<(), String> {
    let empty = Vec::new();
    let tools = req.body["tools"].as_array().unwrap_or(&empty);
    for t in tools.iter().filter(|t| t["type"] == "custom") {
        let format = &t["format"];
        if format["type"] == "grammar"
            && !(matches!(format["syntax"].as_str(), Some("lark" | "regex"))
                && format["definition"].is_string())
        {
            return Err(format!(
                "tools: custom tool '{}' has a grammar format without syntax lark|regex and a                  definition",
                t["name"].as_str().unwrap_or_default()
            ));
        }
    }
    let items = req.body["input"].as_array().unwrap_or(&empty);
    let mut custom_calls: Vec<&str> = Vec::new();
    let mut function_calls: Vec<&str> = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let call_id = it["call_id"].as_str().unwrap_or_default();
        match it["type"].as_str() {
            Some("custom_tool_call") => {
                let name = it["name"].as_str().unwrap_or_default();
                if !it["input"].is_string() {
                    return Err(format!("input[{i}]: a custom_tool_call needs a string `input`"));
                }
                if !tools.iter().any(|t| t["type"] == "custom" && t["name"] == name) {
                    return Err(format!(
                        "input[{i}]: custom_tool_call of '{name}', which is not a custom tool of                          this request"
                    ));
                }
                custom_calls.push(call_id);
            }
            Some("function_call") => function_calls.push(call_id),
            Some("custom_tool_call_output") if !custom_calls.contains(&call_id) => {
                return Err(format!(
                    "No tool call found for custom tool call output with call_id {call_id}."
                ));
            }
            Some("function_call_output") if !function_calls.contains(&call_id) => {
                return Err(format!(
                    "No tool call found for function call output with call_id {call_id}."
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn responses(req: &RecordedRequest, reply: &mut Reply) -> Result<(), String> {
    let model = reply.model.clone();
    reply.phase = labels_phase(&model);
    responses_custom_tools(req)?;
    let empty = Vec::new();
    let items = req.body["input"].as_array().unwrap_or(&empty);
    for (i, it) in items.iter().enumerate() {
        let kind = it["type"].as_str().unwrap_or("message");
        if kind == "message"
            && it["role"] == "assistant"
            && reply.phase
            && it.get("phase").is_none()
        {
            return Err(format!(
                "input[{i}]: an assistant message without `phase`; {model} labels every assistant \
                 message (commentary or final_answer) and OpenAI asks for it back on each one \
                 (fake-llm conformance rule)"
            ));
        }
        if kind == "configuration_update" {
            if !model.starts_with("gpt-6") {
                return Err(format!(
                    "input[{i}]: The 'configuration_update' item type is not supported with {model}."
                ));
            }
            if i > 0 && items[i - 1]["type"] == "configuration_update" {
                return Err(format!(
                    "input[{i}]: a configuration_update item cannot directly follow another"
                ));
            }
        }
        if kind == "reasoning" {
            let next = items.get(i + 1);
            let follows = next.is_some_and(|n| {
                matches!(
                    n["type"].as_str(),
                    Some("function_call" | "custom_tool_call" | "reasoning")
                ) || (n["role"] == "assistant")
            });
            if !follows {
                let id = it["id"].as_str().unwrap_or_default();
                return Err(format!(
                    "Item '{id}' of type 'reasoning' was provided without its required following item."
                ));
            }
        }
    }
    Ok(())
}

/// Mistral's models: every tool-call id is exactly 9 letters or digits.
fn is_mistral(model: &str) -> bool {
    ["mistral", "magistral", "devstral", "codestral", "ministral"]
        .iter()
        .any(|p| model.starts_with(p))
}

fn mistral_ids(req: &RecordedRequest) -> Result<(), String> {
    let empty = Vec::new();
    let ok = |id: &str| id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric());
    for m in req.body["messages"].as_array().unwrap_or(&empty) {
        let calls = m["tool_calls"].as_array().into_iter().flatten().map(|c| &c["id"]);
        for id in calls.chain(m.get("tool_call_id")) {
            let id = id.as_str().unwrap_or_default();
            if !ok(id) {
                return Err(format!(
                    "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."
                ));
            }
        }
    }
    Ok(())
}

/// Gemini through OpenRouter: every assistant message with tool calls carries the
/// `reasoning_details` OpenRouter sent with it.
fn openrouter_gemini(req: &RecordedRequest) -> Result<(), String> {
    let empty = Vec::new();
    for m in req.body["messages"].as_array().unwrap_or(&empty) {
        let has_calls = m["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        let has_details = m["reasoning_details"].as_array().is_some_and(|d| !d.is_empty());
        if m["role"] == "assistant" && has_calls && !has_details {
            return Err("Gemini models require OpenRouter reasoning details to be preserved in \
                        each request. Please refer to our docs: \
                        https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks."
                .to_owned());
        }
    }
    Ok(())
}

fn chat(req: &RecordedRequest, reply: &mut Reply) -> Result<(), String> {
    let model = req.model();
    if is_mistral(&model) {
        mistral_ids(req)?;
    }
    if model.starts_with("google/gemini") {
        reply.reasoning_details = true;
        openrouter_gemini(req)?;
    }
    let thinks = req.body["thinking"]["type"] != "disabled";
    if !(model.starts_with("deepseek") && thinks) {
        return Ok(());
    }
    let empty = Vec::new();
    for m in req.body["messages"].as_array().unwrap_or(&empty) {
        let has_calls = m["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        if m["role"] == "assistant" && has_calls && !m["reasoning_content"].is_string() {
            return Err(
                "The reasoning_content in the thinking mode must be passed back to the API."
                    .to_owned(),
            );
        }
    }
    Ok(())
}

fn gemini(req: &RecordedRequest, reply: &mut Reply) -> Result<(), String> {
    let model = reply.model.clone();
    if !(model.starts_with("gemini-3") || model.starts_with("gemini-4")) {
        return Ok(());
    }
    reply.sign_calls = true;
    let empty = Vec::new();
    let contents = req.body["contents"].as_array().unwrap_or(&empty);
    let starts_turn = |c: &Value| {
        c["role"] != "model"
            && c["parts"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_none()))
    };
    let start = contents.iter().rposition(starts_turn).map_or(0, |i| i + 1);
    for (n, c) in contents.iter().enumerate().skip(start).filter(|(_, c)| c["role"] == "model") {
        let Some(call) = c["parts"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p.get("functionCall").is_some()))
        else {
            continue;
        };
        if call["thoughtSignature"].as_str().is_none_or(str::is_empty) {
            let name = call["functionCall"]["name"].as_str().unwrap_or_default();
            return Err(format!(
                "Function call is missing a thought_signature in functionCall parts. This is \
                 required for tools to work correctly, and missing thought_signature may lead to \
                 degraded model performance. Additional data, function call `default_api:{name}` \
                 , position {}. Please refer to \
                 https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                n + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(wire: Wire, body: Value, headers: &[(&str, &str)]) -> RecordedRequest {
        RecordedRequest {
            wire: Some(wire),
            method: "POST".into(),
            path: String::new(),
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            body,
            raw: Vec::new(),
            status: 200,
            transformations: Vec::new(),
        }
    }

    fn refused(wire: Wire, body: Value, headers: &[(&str, &str)]) -> String {
        check(wire, &req(wire, body, headers)).expect_err("the request should be refused")
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": [{"type": "text", "text": text}]})
    }

    #[test]
    fn anthropic_thinking_settings_that_do_not_go_together_are_refused() {
        let beta = [("anthropic-beta", binding::BINDING_BETA)];
        let body = |thinking: Value, model: &str| json!({"model": model, "thinking": thinking, "messages": [user("hi")]});
        let e = refused(
            Wire::Anthropic,
            body(json!({"type": "between_tools", "display": "summarized"}), "claude-sonnet-5-5"),
            &beta,
        );
        assert_eq!(e, "thinking.between_tools.display: Extra inputs are not permitted");
        let e = refused(
            Wire::Anthropic,
            body(json!({"type": "disabled", "display": "summarized"}), "claude-opus-5"),
            &beta,
        );
        assert!(e.contains("thinking.disabled.display"), "{e}");
        let binding = json!({"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}});
        let e = refused(Wire::Anthropic, body(binding.clone(), "claude-sonnet-5-5"), &[]);
        assert_eq!(e, "thinking.adaptive.block_binding: Extra inputs are not permitted");
        assert!(
            check(
                Wire::Anthropic,
                &req(Wire::Anthropic, body(binding, "claude-sonnet-5-5"), &beta)
            )
            .is_ok()
        );
        let e = refused(Wire::Anthropic, body(json!({"type": "disabled"}), "claude-opus-5-5"), &[]);
        assert!(e.starts_with("\"thinking.type.disabled\" is not supported"), "{e}");
        let e =
            refused(Wire::Anthropic, body(json!({"type": "disabled"}), "claude-sonnet-5-5"), &[]);
        assert!(e.contains("between_tools"), "{e}");
        let e = refused(
            Wire::Anthropic,
            body(json!({"type": "enabled", "budget_tokens": 2048}), "claude-haiku-5-5"),
            &[],
        );
        assert!(e.starts_with("\"thinking.type.enabled\" is not supported"), "{e}");
        assert!(
            check(
                Wire::Anthropic,
                &req(
                    Wire::Anthropic,
                    body(json!({"type": "enabled", "budget_tokens": 2048}), "claude-haiku-4-5"),
                    &[]
                )
            )
            .is_ok(),
            "Haiku 4.5 takes budget thinking"
        );
    }

    #[test]
    fn anthropic_thinking_off_and_per_message_effort_keep_their_rules() {
        let off = |effort: &str, model: &str| {
            json!({"model": model, "thinking": {"type": "disabled"},
                   "output_config": {"effort": effort}, "messages": [user("hi")]})
        };
        for model in ["claude-haiku-5-5", "claude-sonnet-5", "claude-opus-5"] {
            assert!(check(Wire::Anthropic, &req(Wire::Anthropic, off("high", model), &[])).is_ok());
            let e = refused(Wire::Anthropic, off("max", model), &[]);
            assert!(e.contains("only allowed with effort low, medium or high"), "{e}");
        }
        let e = refused(Wire::Anthropic, off("low", "claude-opus-5-5"), &[]);
        assert!(e.contains("not supported for this model"), "{e}");

        let assistant = json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]});
        let with = |m: Value, model: &str| json!({"model": model, "messages": [user("a"), assistant.clone(), user("b"), m]});
        let effort = json!({"role": "system", "content": [], "output_config": {"effort": "low"}});
        let beta = [("anthropic-beta", EFFORT_BETA)];
        let good = with(effort.clone(), "claude-opus-5-5");
        assert!(check(Wire::Anthropic, &req(Wire::Anthropic, good.clone(), &beta)).is_ok());
        let e = refused(Wire::Anthropic, good, &[]);
        assert!(e.contains(EFFORT_BETA), "{e}");
        let e = refused(Wire::Anthropic, with(effort, "claude-sonnet-5"), &beta);
        assert!(e.contains("not supported by claude-sonnet-5"), "{e}");
        let texty = json!({"role": "system", "content": [{"type": "text", "text": "x"}],
                           "output_config": {"effort": "low"}});
        let e = refused(Wire::Anthropic, with(texty, "claude-opus-5-5"), &beta);
        assert!(e.contains("must have empty content"), "{e}");
        let bad = json!({"role": "system", "content": [], "output_config": {"effort": "none"}});
        let e = refused(Wire::Anthropic, with(bad, "claude-opus-5-5"), &beta);
        assert!(e.contains("output_config.effort"), "{e}");
        let more = json!({"role": "system", "content": [],
                          "output_config": {"effort": "low", "format": {}}});
        let e = refused(Wire::Anthropic, with(more, "claude-opus-5-5"), &beta);
        assert!(e.contains("only `effort`"), "{e}");
    }

    #[test]
    fn anthropic_system_messages_are_placed_as_documented() {
        let system = json!({"role": "system", "content": "Now read-only."});
        let assistant = json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]});
        let body = |messages: Value, model: &str| json!({"model": model, "messages": messages});
        let e =
            refused(Wire::Anthropic, body(json!([system, user("hi")]), "claude-sonnet-5-5"), &[]);
        assert!(e.contains("must immediately follow a user turn"), "{e}");
        let e = refused(
            Wire::Anthropic,
            body(json!([user("hi"), assistant, system]), "claude-sonnet-5-5"),
            &[],
        );
        assert!(e.contains("must immediately follow a user turn"), "{e}");
        let e = refused(Wire::Anthropic, body(json!([user("hi"), system]), "claude-sonnet-5"), &[]);
        assert!(e.contains("does not support system messages"), "{e}");
        let ok = body(json!([user("hi"), system, assistant, user("go")]), "claude-sonnet-5-5");
        assert!(check(Wire::Anthropic, &req(Wire::Anthropic, ok, &[])).is_ok());
        let addition = json!({"role": "system", "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "late"}}]});
        let with_tool = |tools: Value| json!({"model": "claude-sonnet-5-5", "tools": tools, "messages": [user("hi"), addition]});
        let late = json!([{"name": "late", "input_schema": {}, "defer_loading": true}]);
        let e = refused(Wire::Anthropic, with_tool(late.clone()), &[]);
        assert!(e.contains("mid-conversation-tool-changes-2026-07-01"), "{e}");
        let tool_beta = [("anthropic-beta", "mid-conversation-tool-changes-2026-07-01")];
        let e = refused(Wire::Anthropic, with_tool(json!([])), &tool_beta);
        assert!(e.contains("tool `late` is not declared"), "{e}");
        assert!(check(Wire::Anthropic, &req(Wire::Anthropic, with_tool(late), &tool_beta)).is_ok());
    }

    #[test]
    fn responses_rules_phase_updates_and_reasoning_pairs() {
        let assistant = json!({"role": "assistant", "content": "Reading."});
        let body = |model: &str, input: Value| json!({"model": model, "input": input});
        let e = refused(
            Wire::OpenaiResponses,
            body("gpt-6.1-sol", json!([{"role": "user", "content": "hi"}, assistant])),
            &[],
        );
        assert!(e.starts_with("input[1]: an assistant message without `phase`"), "{e}");
        assert!(
            check(
                Wire::OpenaiResponses,
                &req(
                    Wire::OpenaiResponses,
                    body("gpt-4.1", json!([{"role": "user", "content": "hi"}, assistant])),
                    &[]
                )
            )
            .is_ok(),
            "older models do not label messages"
        );
        let update = json!({"type": "configuration_update", "reasoning": {"effort": "high"}});
        let e = refused(
            Wire::OpenaiResponses,
            body("gpt-6-sol", json!([{"role": "user", "content": "a"}, update, update])),
            &[],
        );
        assert!(e.contains("cannot directly follow another"), "{e}");
        let e = refused(
            Wire::OpenaiResponses,
            body("gpt-5.6-sol", json!([update, {"role": "user", "content": "a"}])),
            &[],
        );
        assert!(e.contains("not supported with gpt-5.6-sol"), "{e}");
        let e = refused(
            Wire::OpenaiResponses,
            body(
                "gpt-6-sol",
                json!([{"type": "reasoning", "id": "rs_1", "summary": []},
                       {"role": "user", "content": "a"}]),
            ),
            &[],
        );
        assert_eq!(
            e,
            "Item 'rs_1' of type 'reasoning' was provided without its required following item."
        );
    }

    #[test]
    fn mistral_takes_only_nine_character_tool_call_ids() {
        let body = |id: &str| {
            json!({"model": "mistral-large-2512", "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": id, "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": id, "content": "x"}]})
        };
        let e = refused(Wire::OpenaiChat, body("toolu_01XyZ"), &[]);
        assert_eq!(
            e,
            "Tool call id was toolu_01XyZ but must be a-z, A-Z, 0-9, with a length of 9."
        );
        assert!(check(Wire::OpenaiChat, &req(Wire::OpenaiChat, body("Ab3dE6gH9"), &[])).is_ok());
        // Other servers take any id.
        let mut other = body("call_1");
        other["model"] = json!("gpt-oss");
        assert!(check(Wire::OpenaiChat, &req(Wire::OpenaiChat, other, &[])).is_ok());
    }

    #[test]
    fn deepseek_and_gemini_replay_rules() {
        let call = json!({"role": "assistant", "content": null,
                          "tool_calls": [{"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]});
        let body = json!({"model": "deepseek-flash", "messages": [
            {"role": "user", "content": "hi"}, call, {"role": "tool", "tool_call_id": "c", "content": "x"}]});
        let e = refused(Wire::OpenaiChat, body.clone(), &[]);
        assert_eq!(e, "The reasoning_content in the thinking mode must be passed back to the API.");
        let mut off = body;
        off["thinking"] = json!({"type": "disabled"});
        assert!(check(Wire::OpenaiChat, &req(Wire::OpenaiChat, off, &[])).is_ok());

        let contents = |sig: Option<&str>| {
            let mut part = json!({"functionCall": {"name": "ls", "args": {}}});
            if let Some(s) = sig {
                part["thoughtSignature"] = json!(s);
            }
            json!({"contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [part]},
                {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}]})
        };
        let gemini = |body: Value| {
            let mut r = req(Wire::Gemini, body, &[]);
            r.path = "/v1beta/models/gemini-4-argon:streamGenerateContent".into();
            r
        };
        let e = check(Wire::Gemini, &gemini(contents(None))).unwrap_err();
        assert!(e.starts_with("Function call is missing a thought_signature"), "{e}");
        assert!(
            check(Wire::Gemini, &gemini(contents(Some("skip_thought_signature_validator"))))
                .is_ok()
        );
    }
}
