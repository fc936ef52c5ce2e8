//! What a session's recorded responses used, read back without keeping the history in
//! memory: the spent total belongs to the session and survives a resume.

use rab_ai::{Message, Usage};
use serde::Deserialize;

use super::{EntryKind, Tape};
use crate::entry::EntryBody;

/// One recorded response's usage, or what a sub-agent spent.
#[derive(Clone, Debug, PartialEq)]
pub enum Spent {
    /// A model response of the session's own agent.
    Response {
        /// Provider that answered.
        provider: String,
        /// Model that answered.
        model: String,
        /// What it reported using.
        usage: Usage,
    },
    /// Dollars a sub-agent spent (the `spentUsd` of a `task` result's details).
    SubAgent(f64),
}

/// The parts of a message line the tally reads; the rest is skipped unparsed.
#[derive(Deserialize)]
struct Line {
    message: Option<LineMessage>,
    details: Option<LineDetails>,
}

#[derive(Deserialize)]
struct LineMessage {
    role: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    usage: Usage,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LineDetails {
    spent_usd: Option<f64>,
}

impl Tape {
    /// Every response recorded on every branch (money spent on an abandoned branch
    /// was spent), oldest first, with what sub-agents spent. Lines are read for their
    /// usage only and not kept.
    pub fn spending(&self) -> Vec<Spent> {
        let mut out = Vec::new();
        let tape = self.whole();
        for slot in tape.slots.iter().filter(|s| s.kind == EntryKind::Message) {
            let (role, provider, model, usage, sub) = match slot.entry.get() {
                Some(Some(entry)) => match &entry.body {
                    EntryBody::Message { message: Message::Assistant(a), .. } => {
                        ("assistant", a.provider.clone(), a.model.clone(), a.usage, None)
                    }
                    EntryBody::Message { details, .. } => {
                        let spent = details.as_ref().and_then(|d| d.get("spentUsd"));
                        (
                            "other",
                            String::new(),
                            String::new(),
                            Usage::default(),
                            spent.and_then(|v| v.as_f64()),
                        )
                    }
                    _ => continue,
                },
                _ => {
                    let Some(text) = tape.source.line(&slot.raw) else { continue };
                    let Ok(line) = serde_json::from_str::<Line>(&text) else { continue };
                    let Some(m) = line.message else { continue };
                    let sub = line.details.and_then(|d| d.spent_usd);
                    let role = if m.role == "assistant" { "assistant" } else { "other" };
                    (role, m.provider, m.model, m.usage, sub)
                }
            };
            if role == "assistant" {
                if usage.total() > 0 || usage.web_searches > 0 {
                    out.push(Spent::Response { provider, model, usage });
                }
            } else if let Some(dollars) = sub.filter(|d| *d > 0.0) {
                out.push(Spent::SubAgent(dollars));
            }
        }
        out
    }
}
