//! The hook through which the loop keeps the conversation inside the context window:
//! before a request that would not fit, and after a provider's context-overflow error
//! (then the request is retried once). The summarising itself lives in rab-core; this
//! crate only knows when to ask and what to do with the answer.

use rab_ai::{Content, Message, Model, StreamOptions, ToolResultMessage, Usage};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::tool::BoxFuture;

/// Why a compaction runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompactReason {
    /// The next request would leave less than the reserve free.
    Threshold,
    /// The provider said the request does not fit.
    Overflow,
    /// The user asked (`/compact [focus]`).
    Manual {
        /// What the summary should keep in particular.
        focus: Option<String>,
    },
}

/// The result of a compaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Compacted {
    /// The conversation to continue with: the summary message, then the kept tail.
    pub messages: Vec<Message>,
    /// The summary (or the truncation notice of the sliding-window fallback).
    pub summary: String,
    /// Index, in the messages before compaction, of the first one kept verbatim.
    pub first_kept: usize,
    /// Estimated tokens before.
    pub tokens_before: u64,
    /// Estimated tokens after.
    pub tokens_after: u64,
    /// The summary could not be made; older messages were dropped instead.
    pub is_fallback: bool,
    /// Tokens the summary request used (zero for the fallback).
    pub usage: Usage,
}

/// Decides when to compact and does it.
pub trait Compactor: Send + Sync {
    /// `Some(estimated tokens)` when the conversation should be compacted before the
    /// next request to `model`.
    fn needs_compaction(&self, messages: &[Message], model: &Model) -> Option<u64>;

    /// Compacts `messages`. Failures are counted: after several in a row the compactor
    /// turns automatic compaction off (and says so in the error).
    fn compact<'a>(
        &'a self,
        messages: &'a [Message],
        model: &'a Model,
        options: &'a StreamOptions,
        reason: CompactReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Compacted, CompactError>>;
}

/// A compaction that did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactError {
    /// What went wrong.
    pub message: String,
    /// Automatic compaction is now off (circuit breaker).
    pub is_disabled: bool,
}

/// Rough token count of a text: four characters per token.
pub fn estimate_text_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// Characters of a message as sent (text, arguments, results; images count 1,000).
pub fn message_chars(m: &Message) -> usize {
    let content = |c: &[Content]| -> usize {
        c.iter()
            .map(|c| match c {
                Content::Text { text } => text.len(),
                Content::Image { .. } => 4000,
            })
            .sum()
    };
    match m {
        Message::User(u) => content(&u.content),
        Message::ToolResult(r) => content(&r.content) + r.tool_call_id.len(),
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|b| match b {
                rab_ai::AssistantBlock::Text { text, .. } => text.len(),
                rab_ai::AssistantBlock::Thinking { thinking, .. } => thinking.len(),
                rab_ai::AssistantBlock::ToolCall(c) => c.name.len() + c.arguments.to_string().len(),
                // The provider's blocks go back whole (page contents included).
                rab_ai::AssistantBlock::WebSearch(w) => {
                    w.raw.iter().map(|v| v.to_string().len()).sum::<usize>()
                        + rab_ai::search_note(w).len()
                }
            })
            .sum(),
        Message::System(s) => {
            s.text.len()
                + s.tools_added
                    .iter()
                    .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
                    .sum::<usize>()
        }
    }
}

/// Tokens the conversation will take when sent: the last response's reported usage
/// (its whole input and output) plus an estimate for what came after it. Usage reported
/// before a summary ([`Message::summary`]) counted the history the summary replaced,
/// so it is not used: the messages are estimated instead.
pub fn estimate_context_tokens(messages: &[Message]) -> u64 {
    // One backward scan that stops at the last reply with usage, so the cost is the
    // tail's, not the history's (this runs every turn).
    let last = messages
        .iter()
        .rposition(|m| m.is_summary() || matches!(m, Message::Assistant(a) if a.usage.total() > 0));
    match last.map(|i| (i, &messages[i])) {
        Some((i, Message::Assistant(a))) if a.usage.total() > 0 => {
            a.usage.total()
                + messages[i + 1..]
                    .iter()
                    .map(|m| estimate_text_tokens(message_chars(m)))
                    .sum::<u64>()
        }
        _ => messages.iter().map(|m| estimate_text_tokens(message_chars(m))).sum(),
    }
}

/// Cuts a tool result's text to at most a quarter of `model`'s input limit, so that one
/// result cannot outgrow a small window (a local model's 8-16k, where a tool's own
/// 50 KB limit is more than the whole window) and compaction always has a tail it can
/// keep. The head and the end are kept (where commands print their errors), with a
/// notice in between saying what was cut and how to ask for less. In larger windows
/// the tools' own limits come first and nothing changes.
pub(crate) fn fit_result(result: &mut ToolResultMessage, model: &Model) {
    let limit = model.input_limit();
    if limit == 0 {
        return;
    }
    let max_chars = usize::try_from(limit / 4).unwrap_or(usize::MAX).saturating_mul(4);
    let total: usize = result
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.len(),
            Content::Image { .. } => 0,
        })
        .sum();
    if total <= max_chars {
        return;
    }
    let mut budget = max_chars;
    for c in &mut result.content {
        let Content::Text { text } = c else { continue };
        if text.len() <= budget {
            budget -= text.len();
            continue;
        }
        let head = text.floor_char_boundary(budget * 7 / 10);
        let tail = text.ceil_char_boundary(text.len() - (budget - head));
        let notice = format!(
            "\n[... {} of {} characters cut here to fit the model's {limit}-token context window; \
             ask for less at once (a range of lines, a narrower pattern, head or tail) ...]\n",
            tail - head,
            text.len()
        );
        *text = format!("{}{notice}{}", &text[..head], &text[tail..]);
        budget = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(text: &str) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![Content::text(text)],
            is_error: false,
        }
    }

    #[test]
    fn a_result_larger_than_a_quarter_of_a_small_window_keeps_its_head_and_end() {
        let mut model = Model::custom("m", "p", rab_ai::Api::AnthropicMessages, "http://x");
        model.context_window = 12_000;
        let text = format!("HEAD{}é{}END", "a".repeat(20_000), "b".repeat(20_000));
        let mut r = result(&text);
        fit_result(&mut r, &model);
        let out = r.text();
        assert!(out.len() < 12_400, "{}", out.len());
        assert!(out.starts_with("HEAD") && out.ends_with("END"));
        assert!(out.contains("characters cut here to fit the model's 12000-token context window"));
        // A large window leaves it alone, and so does a small result.
        model.context_window = 200_000;
        let mut r = result(&text);
        fit_result(&mut r, &model);
        assert_eq!(r.text(), text);
        model.context_window = 12_000;
        let mut r = result("short");
        fit_result(&mut r, &model);
        assert_eq!(r.text(), "short");
    }
}
