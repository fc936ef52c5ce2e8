//! The spending limit: before each request, an estimate of what it will cost, at the
//! rates of the prompt-size tier the conversation falls in.

use rab_ai::Message;

use super::Agent;
use crate::compaction::{estimate_context_tokens, estimate_text_tokens};

/// Output tokens assumed for a request before any response reported its own (or the
/// model's maximum, if smaller), in the estimate of the next request's cost.
pub(super) const FIRST_OUTPUT: u64 = 1_000;

/// The least output limit a request is sent with under a spending limit (or the
/// model's own limit, if smaller): a reply cut shorter than this is rarely of use, so
/// below it the request waits for room or is refused.
pub(super) const MIN_OUTPUT: u64 = 4_096;

use crate::event::StopCause;
use crate::ledger::{Need, Refused, Reservation};

impl Agent {
    /// Reserves the worst case of the next request in the session's ledger: its input
    /// (estimated as below) and its output limit at the output price, the limit cut to
    /// what fits ([`MIN_OUTPUT`] at least). Waits while requests under way hold the room
    /// it needs; stops when it cannot fit.
    pub(super) async fn reserve_request(
        &self,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Reservation, StopCause> {
        let Some(spend) = &self.config.spend else { return Ok(Reservation::none()) };
        if spend.ledger().limit().is_none() {
            return Ok(Reservation::none());
        }
        let (input, _) = self.next_request_parts();
        let tokens = estimate_context_tokens(&self.messages);
        let rates = self.config.model.cost.rates(tokens);
        let max_tokens = rab_ai::max_tokens(&self.config.model, &self.config.options);
        let need = Need {
            input,
            per_output_token: rates.output / 1_000_000.0,
            max_tokens,
            min_tokens: MIN_OUTPUT,
        };
        spend.reserve(need, cancel).await.map_err(|r| match r {
            Refused::Over(o) => StopCause::Budget { limit: o.limit, spent: o.spent },
            Refused::Cancelled => StopCause::Aborted,
        })
    }

    /// Adds a response's cost to this agent's and the session's spending, releasing
    /// what its request reserved.
    pub(super) fn record_spend(&mut self, usage: &rab_ai::Usage, reserved: Reservation) {
        let cost = self.config.model.cost.of(usage);
        self.spent += cost;
        if let Some(spend) = &self.config.spend {
            spend.record(&self.config.model.id, usage, cost, reserved);
        }
    }

    /// The estimated dollars of the next request's input — the input the last response
    /// reported plus an estimate of what came after it (before any response: the system
    /// prompt and the tool schemas too, as they are sent), priced as the provider
    /// charged the last request (the part it read from cache at the cache-read price
    /// only if it did read from cache) — and of its output (the mean of the requests so
    /// far, [`FIRST_OUTPUT`] before any).
    pub(super) fn next_request_parts(&self) -> (f64, f64) {
        let cost = &self.config.model.cost;
        let assistants = || {
            self.messages.iter().filter_map(|m| match m {
                Message::Assistant(a) if a.usage.total() > 0 => Some(&a.usage),
                Message::Assistant(_)
                | Message::User(_)
                | Message::ToolResult(_)
                | Message::System(_) => None,
            })
        };
        let mut tokens = estimate_context_tokens(&self.messages);
        if assistants().next().is_none() {
            // Nothing reported yet: what is sent besides the messages counts too.
            let schemas = serde_json::to_string(&self.request_specs()).map_or(0, |s| s.len());
            tokens += estimate_text_tokens(self.system_prompt.len() + schemas);
        }
        let (cached, fresh) = match assistants().next_back() {
            Some(u) if u.cache_read + u.cache_write > 0 => {
                let prefix = u.total_input() + u.output;
                (prefix.min(tokens), tokens.saturating_sub(prefix))
            }
            Some(_) | None => (0, tokens),
        };
        let (n, output) = assistants().fold((0u64, 0u64), |(n, o), u| (n + 1, o + u.output));
        let first = FIRST_OUTPUT.min(self.config.model.max_output.max(1));
        let output = output.checked_div(n).unwrap_or(first);
        // Priced at the tier the prompt's size falls in (Haiku 5.5 above 100k tokens).
        let rates = cost.rates(tokens);
        let cached_price = if rates.cache_read > 0.0 { rates.cache_read } else { rates.input };
        (
            (cached as f64 * cached_price + fresh as f64 * rates.input) / 1_000_000.0,
            output as f64 * rates.output / 1_000_000.0,
        )
    }

    pub(super) fn last_usage(&self) -> rab_ai::Usage {
        match self.messages.last() {
            Some(Message::Assistant(a)) => a.usage,
            Some(Message::User(_) | Message::ToolResult(_) | Message::System(_)) | None => {
                rab_ai::Usage::default()
            }
        }
    }
}
