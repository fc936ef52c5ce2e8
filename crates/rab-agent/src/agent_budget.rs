//! The spending limit: before each request, an estimate of what it will cost, at the
//! rates of the prompt-size tier the conversation falls in.

use rab_ai::Message;

use super::Agent;
use crate::compaction::estimate_context_tokens;
use crate::event::StopCause;

impl Agent {
    /// Stops before a request whose estimated cost would take spending past the
    /// limit. The estimate: the input the last response reported plus an estimate of
    /// what came after it, priced as the provider charged the last request (the part
    /// it read from cache at the cache-read price only if it did read from cache), and
    /// the mean output of the requests so far.
    pub(super) fn over_budget(&self) -> Option<StopCause> {
        let limit = self.config.max_budget_usd?;
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
        let tokens = estimate_context_tokens(&self.messages);
        let (cached, fresh) = match assistants().next_back() {
            Some(u) if u.cache_read + u.cache_write > 0 => {
                let prefix = u.total_input() + u.output;
                (prefix.min(tokens), tokens.saturating_sub(prefix))
            }
            Some(_) | None => (0, tokens),
        };
        let (n, output) = assistants().fold((0u64, 0u64), |(n, o), u| (n + 1, o + u.output));
        let output = output.checked_div(n).unwrap_or(0);
        // Priced at the tier the prompt's size falls in (Haiku 5.5 above 100k tokens).
        let rates = cost.rates(tokens);
        let cached_price = if rates.cache_read > 0.0 { rates.cache_read } else { rates.input };
        let next = (cached as f64 * cached_price
            + fresh as f64 * rates.input
            + output as f64 * rates.output)
            / 1_000_000.0;
        (self.spent + next > limit).then_some(StopCause::Budget { limit, spent: self.spent })
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
