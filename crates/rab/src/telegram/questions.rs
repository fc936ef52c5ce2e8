//! Questions in a chat: a permission question as buttons (allow once, always, deny), an
//! `ask_user` question as a button per option (or a reply), a plan to approve. No
//! answer within the time set counts as deny. The message shows the answer afterwards,
//! without its buttons.

use std::time::Duration;

use rab_core::runtime::Op;
use rab_core::{Approval, ApprovalKind, ApprovalRequest};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::Bot;
use super::render::{escape, split_block};

/// A question waiting for its answer.
struct Open {
    id: u64,
    message_id: i64,
    html: String,
    deadline: Instant,
    /// The options of an `ask_user` question (its answer may also be a reply).
    options: Option<Vec<String>>,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Permission,
    Question,
    Plan,
}

/// The chat's open questions.
pub struct Questions {
    timeout: Duration,
    open: Vec<Open>,
}

impl Questions {
    /// No answer within `timeout` counts as deny.
    pub fn new(timeout: Duration) -> Self {
        Self { timeout, open: Vec::new() }
    }

    /// When the next question runs out of time.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.open.iter().map(|q| q.deadline).min()
    }

    /// An `ask_user` question a text reply answers.
    pub fn awaiting_text(&self) -> Option<u64> {
        self.open.iter().find(|q| q.kind == Kind::Question).map(|q| q.id)
    }

    /// Asks question `id` in `chat`.
    pub async fn ask(&mut self, bot: &Bot, chat: i64, id: u64, request: &ApprovalRequest) {
        let (kind, html, buttons, options) = match &request.kind {
            ApprovalKind::Permission => {
                let what = request.preview.clone().unwrap_or_else(|| {
                    serde_json::to_string_pretty(&request.arguments).unwrap_or_default()
                });
                let what: String = what.chars().take(2500).collect();
                let html = format!(
                    "🔐 <b>{}</b> asks to run\n<pre>{}</pre>\n{}",
                    escape(&request.tool),
                    escape(what.trim_end()),
                    escape(&request.reason)
                );
                // No rule to remember (a protected path): asked every time.
                let mut row = vec![button("Allow once", id, "once")];
                if !request.rule.is_empty() {
                    row.push(button("Always", id, "always"));
                }
                row.push(button("Deny", id, "deny"));
                (Kind::Permission, html, vec![row], None)
            }
            ApprovalKind::Question { question, options } => {
                let mut html = format!("❓ {}", escape(question));
                if !options.is_empty() {
                    html.push_str("\n(press an answer, or reply with your own)");
                }
                let rows = options
                    .iter()
                    .enumerate()
                    .map(|(i, o)| {
                        let label: String = o.chars().take(60).collect();
                        vec![json!({"text": label, "callback_data": format!("q:{id}:o{i}")})]
                    })
                    .collect();
                (Kind::Question, html, rows, Some(options.clone()))
            }
            ApprovalKind::Plan { plan } => {
                let plan: String = plan.chars().take(3000).collect();
                let html = format!("📋 <b>The plan</b>\n\n{}", escape(plan.trim_end()));
                let row = vec![
                    button("Start", id, "once"),
                    button("Start, accept edits", id, "always"),
                    button("Keep planning", id, "deny"),
                ];
                (Kind::Plan, html, vec![row], None)
            }
        };
        let html = split_block(&html, 3500).into_iter().next().unwrap_or_default();
        let params = json!({"chat_id": chat, "text": html, "parse_mode": "HTML",
                            "reply_markup": {"inline_keyboard": buttons}});
        let message_id = match bot.send("sendMessage", params).await {
            Ok(m) => m["message_id"].as_i64().unwrap_or(0),
            Err(e) => {
                tracing::warn!(chat, "a question was not sent: {e}");
                0
            }
        };
        let deadline = Instant::now() + self.timeout;
        self.open.push(Open { id, message_id, html, deadline, options, kind });
    }

    /// A button pressed under `message_id`: the question it answers and the answer.
    pub async fn press(
        &mut self,
        bot: &Bot,
        chat: i64,
        message_id: i64,
        data: &str,
    ) -> Option<(u64, Approval)> {
        let mut parts = data.splitn(3, ':');
        let (Some("q"), Some(id), Some(choice)) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        let id: u64 = id.parse().ok()?;
        let at = self.open.iter().position(|q| q.id == id && q.message_id == message_id);
        let Some(at) = at else {
            // Answered already, timed out, or from before a restart.
            let params = json!({"chat_id": chat, "message_id": message_id,
                                "reply_markup": {"inline_keyboard": []}});
            let _ = bot.call("editMessageReplyMarkup", params).await;
            return None;
        };
        let q = self.open.remove(at);
        let (approval, said) = match (q.kind, choice) {
            (Kind::Plan, "once") => (Approval::Once, "▶ Started.".to_owned()),
            (Kind::Plan, "always") => (Approval::Always, "▶ Started, accepting edits.".to_owned()),
            (Kind::Plan, _) => {
                (Approval::Deny(Some("keep planning".into())), "✏ Keep planning.".to_owned())
            }
            (_, "once") => (Approval::Once, "✅ Allowed once.".to_owned()),
            (_, "always") => (Approval::Always, "✅ Allowed from now on.".to_owned()),
            (_, "deny") => (Approval::Deny(None), "🚫 Denied.".to_owned()),
            (_, o) => {
                let index: usize = o.strip_prefix('o')?.parse().ok()?;
                let answer = q.options.as_ref()?.get(index)?.clone();
                let said = format!("→ {}", escape(&answer));
                (Approval::Answer(answer), said)
            }
        };
        settle(bot, chat, &q, &said).await;
        Some((id, approval))
    }

    /// The `ask_user` question `id` was answered by a reply.
    pub async fn answered_by_text(&mut self, bot: &Bot, chat: i64, id: u64, text: &str) {
        if let Some(at) = self.open.iter().position(|q| q.id == id) {
            let q = self.open.remove(at);
            let said: String = text.chars().take(200).collect();
            settle(bot, chat, &q, &format!("→ {}", escape(&said))).await;
        }
    }

    /// The questions whose time ran out, each with the op that denies it.
    pub async fn expire(&mut self, bot: &Bot, chat: i64) -> Vec<(u64, Op)> {
        let now = Instant::now();
        let (late, open): (Vec<Open>, Vec<Open>) =
            std::mem::take(&mut self.open).into_iter().partition(|q| q.deadline <= now);
        self.open = open;
        let secs = self.timeout.as_secs();
        let mut ops = Vec::new();
        for q in late {
            settle(bot, chat, &q, &format!("⌛ No answer within {secs} s: denied.")).await;
            let why = format!("nobody answered in the chat within {secs} s");
            ops.push((q.id, Op::Answer { id: q.id, approval: Approval::Deny(Some(why)) }));
        }
        ops
    }

    /// Question `id` is no longer asked (its call was interrupted).
    pub async fn close(&mut self, bot: &Bot, chat: i64, id: u64) {
        if let Some(at) = self.open.iter().position(|q| q.id == id) {
            let q = self.open.remove(at);
            settle(bot, chat, &q, "(no longer asked: the call was interrupted)").await;
        }
    }
}

fn button(label: &str, id: u64, choice: &str) -> Value {
    json!({"text": label, "callback_data": format!("q:{id}:{choice}")})
}

/// The question's message with its answer and without its buttons.
async fn settle(bot: &Bot, chat: i64, q: &Open, said: &str) {
    if q.message_id == 0 {
        return;
    }
    let params = json!({"chat_id": chat, "message_id": q.message_id,
                        "text": format!("{}\n\n{said}", q.html), "parse_mode": "HTML",
                        "reply_markup": {"inline_keyboard": []}});
    if let Err(e) = bot.call("editMessageText", params).await {
        tracing::warn!(chat, "a question's message was not updated: {e}");
    }
}
