//! Compaction: when the conversation nears the model's context window (or the provider
//! says it overflowed), the older part is summarised by the model with a structured
//! prompt and replaced by the summary; the recent part is kept verbatim. The cut never
//! separates a tool call from its result. After three failed summaries in a row,
//! automatic compaction turns itself off; when summarising is impossible on an
//! overflow, the oldest messages are dropped with a notice instead (sliding window).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use futures_util::StreamExt;
use rab_agent::{
    BoxFuture, CompactError, CompactReason, Compacted, Compactor, estimate_context_tokens,
    estimate_text_tokens, message_chars,
};
use rab_ai::{
    AssistantBlock, Content, Context, Message, Model, Provider, StreamEvent, StreamOptions,
    ThinkingLevel, Usage,
};
use rab_config::{CompactionSettings, CompactionStrategy};
use tokio_util::sync::CancellationToken;

/// Failures in a row after which automatic compaction turns off.
pub const MAX_FAILURES: u32 = 3;

/// Characters of one tool result kept in the transcript sent for summarising.
const RESULT_CHARS: usize = 2000;

const SUMMARY_SYSTEM: &str = "You summarise a coding session between a user and an AI coding \
agent so that the agent can continue the work from the summary alone. Be specific and \
complete: exact file paths, function and type names, commands, error messages, decisions \
and why. Do not invent anything; write only what the transcript shows.";

const SUMMARY_FORMAT: &str = "Write the summary with exactly these sections:\n\
## Goal\nWhat the user wants, including constraints and preferences.\n\
## Decisions\nWhat was decided or learned, and why.\n\
## Files read\nPaths, with what matters in each.\n\
## Files modified\nPaths, with what changed.\n\
## Open tasks\nWhat is left to do, in order, and the next step.";

/// The compactor rab-core gives the agent.
pub struct ModelCompactor {
    provider: Arc<dyn Provider>,
    settings: CompactionSettings,
    failures: AtomicU32,
    disabled: AtomicBool,
    /// Compacts automatically (the setting, until a front end turns it off or on).
    auto: AtomicBool,
    /// The gate whose PreCompact hooks run first.
    gate: std::sync::OnceLock<Arc<crate::gate::Gate>>,
}

impl ModelCompactor {
    /// A compactor calling `provider` with the session's own model.
    pub fn new(provider: Arc<dyn Provider>, settings: CompactionSettings) -> Self {
        Self {
            provider,
            auto: AtomicBool::new(settings.enabled),
            settings,
            failures: AtomicU32::new(0),
            disabled: AtomicBool::new(false),
            gate: std::sync::OnceLock::new(),
        }
    }

    /// Whether it compacts automatically before the context overflows.
    pub fn auto(&self) -> bool {
        self.auto.load(Ordering::Relaxed)
    }

    /// Turns automatic compaction on or off (`/compact` works either way); turning it
    /// on also forgets the failures that had turned it off.
    pub fn set_auto(&self, on: bool) {
        self.auto.store(on, Ordering::Relaxed);
        if on {
            self.failures.store(0, Ordering::Relaxed);
            self.disabled.store(false, Ordering::Relaxed);
        }
    }

    /// Runs `gate`'s PreCompact hooks before each compaction.
    pub fn set_gate(&self, gate: Arc<crate::gate::Gate>) {
        let _ = self.gate.set(gate);
    }

    /// Tokens kept free below the window: the setting, but at most a quarter of a small
    /// model's window (a 16k reserve would otherwise compact an 8k model on every turn).
    fn reserve(&self, model: &Model) -> u64 {
        self.settings.reserve_tokens.min(model.context_window / 4)
    }

    /// Tokens the messages may take before compaction: the input limit less the
    /// reserve and what the request carries besides the messages (system prompt and
    /// tools: the part of the last reported usage the messages do not explain).
    fn room(&self, messages: &[Message], model: &Model) -> u64 {
        let estimated: u64 = messages.iter().map(|m| estimate_text_tokens(message_chars(m))).sum();
        let overhead = estimate_context_tokens(messages).saturating_sub(estimated);
        model.input_limit().saturating_sub(self.reserve(model)).saturating_sub(overhead)
    }

    /// Tokens of the newest messages kept verbatim: `keepRecentTokens`, but at most a
    /// quarter of the room, so that in a small window (a local model's 8-16k) the
    /// summary and the kept tail leave space for the work that follows; and at least
    /// about one tool round (1,000 tokens, or the setting if it is lower), which is also
    /// what keeps a window filled by the system prompt alone from being "compacted"
    /// to no gain.
    fn keep_tokens(&self, room: u64) -> u64 {
        let keep = self.settings.keep_recent_tokens;
        keep.min(room / 4).max(keep.min(1000))
    }

    /// The summary's output limit: the model's, at most 8,192 tokens and a fifth of
    /// the room.
    fn summary_tokens(model: &Model, room: u64) -> u64 {
        model.max_output.min(8192).min((room / 5).max(256))
    }

    /// With the window strategy: more messages than the window holds (a leading notice
    /// of an earlier drop not counted).
    fn over_window(&self, messages: &[Message]) -> bool {
        let notice = usize::from(matches!(messages.first(), Some(m) if m.is_summary()));
        self.settings.strategy == CompactionStrategy::Window
            && messages.len() - notice > self.settings.window_messages.max(1) as usize
    }

    /// The window strategy: drop what is older than the window, and more when the
    /// tokens still do not fit (`token_cut`, where summarising would have cut); the
    /// kept part starts at a message that can start a conversation.
    fn window(
        &self,
        messages: &[Message],
        model: &Model,
        token_cut: usize,
        reason: &CompactReason,
    ) -> Result<Compacted, CompactError> {
        let window = self.settings.window_messages.max(1) as usize;
        let mut cut = messages.len().saturating_sub(window);
        let limit = model.input_limit().saturating_sub(self.reserve(model));
        let tokens_over = estimate_context_tokens(messages) > limit;
        if tokens_over || *reason != CompactReason::Threshold {
            cut = cut.max(token_cut);
        }
        while cut < messages.len() && matches!(messages[cut], Message::ToolResult(_)) {
            cut += 1;
        }
        let floor = usize::from(matches!(messages.first(), Some(m) if m.is_summary()));
        if cut <= floor || cut >= messages.len() {
            return Err(CompactError {
                message: "nothing to drop yet".to_owned(),
                is_disabled: false,
            });
        }
        let why = format!("compaction.strategy is window, {window} messages");
        Ok(sliding_window(messages, cut, &why))
    }

    /// Whether automatic compaction is on (settings, and no circuit break).
    pub fn is_auto(&self) -> bool {
        self.auto() && !self.disabled.load(Ordering::Relaxed)
    }

    fn fail(&self, message: String) -> CompactError {
        let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let is_disabled = n >= MAX_FAILURES && !self.disabled.swap(true, Ordering::Relaxed);
        let message = if is_disabled {
            format!(
                "{message}; automatic compaction is off after {MAX_FAILURES} failures in a row (/compact tries again)"
            )
        } else {
            message
        };
        CompactError { message, is_disabled }
    }

    /// A summary of `messages` by the model (for handoff and abandoned branches), with
    /// the tokens the request used.
    pub async fn summary(
        &self,
        messages: &[Message],
        model: &Model,
        options: &StreamOptions,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), String> {
        self.summarise(messages, model, options, focus, cancel).await
    }

    async fn summarise(
        &self,
        old: &[Message],
        model: &Model,
        options: &StreamOptions,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), String> {
        let room = self.room(old, model);
        self.summarise_within(old, model, options, focus, Self::summary_tokens(model, room), cancel)
            .await
    }

    async fn summarise_within(
        &self,
        old: &[Message],
        model: &Model,
        options: &StreamOptions,
        focus: Option<&str>,
        max_tokens: u64,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), String> {
        let budget = model.input_limit().saturating_sub(self.reserve(model)).max(4096) as usize * 3;
        let mut prompt = String::from("Summarise this part of the session.\n\n<transcript>\n");
        prompt.push_str(&transcript(old, budget));
        prompt.push_str("</transcript>\n\n");
        prompt.push_str(SUMMARY_FORMAT);
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            prompt.push_str(&format!("\n\nPay particular attention to: {focus}"));
        }
        let context = Context {
            system_prompt: SUMMARY_SYSTEM.to_owned(),
            messages: vec![Message::user(prompt)],
            ..Context::default()
        };
        let mut opts = options.clone();
        opts.thinking = ThinkingLevel::Off;
        opts.max_tokens = Some(max_tokens);
        let mut stream = self.provider.stream(model, &context, &opts, cancel.child_token());
        loop {
            // Interrupting ends the wait at once, whatever the provider's stream does.
            let event = tokio::select! {
                event = stream.next() => event,
                () = cancel.cancelled() => return Err("interrupted".to_owned()),
            };
            let Some(event) = event else { break };
            match event {
                StreamEvent::Done(message) => {
                    let text = message.text();
                    return if text.trim().is_empty() {
                        Err("the model returned an empty summary".to_owned())
                    } else {
                        Ok((text, message.usage))
                    };
                }
                StreamEvent::Error { error, .. } => {
                    return Err(format!("summary request failed: {error}"));
                }
                StreamEvent::TextDelta { .. }
                | StreamEvent::ThinkingDelta { .. }
                | StreamEvent::ToolCallStart { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::WebSearch { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Retry { .. }
                | StreamEvent::Waiting { .. } => {}
            }
        }
        Err("the summary stream ended early".to_owned())
    }
}

/// Where to cut: the first message kept verbatim. Keeps at least `keep` estimated
/// tokens of the newest messages, never starts the kept part with a tool result (which
/// would separate it from its call), and never cuts at 0 (nothing to summarise) or
/// through a previous summary alone. The cut may fall inside a turn (between a tool
/// result and the next reply), so one long prompt's work can be compacted. When the
/// whole conversation is smaller than `keep` (what fills the window is then the system
/// prompt, tools or an estimate that ran low), the latest turn — from the last user
/// message on — is kept.
pub fn cut_point(messages: &[Message], keep: u64) -> Option<usize> {
    let last_turn =
        || messages.iter().rposition(|m| matches!(m, Message::User(_)) && !m.is_summary());
    reached(messages, keep)
        .and_then(|i| startable(messages, i))
        .or_else(|| last_turn().and_then(|i| startable(messages, i)))
}

/// Where to cut one turn in two, for when [`cut_point`] finds nothing older than the
/// latest turn (one prompt's work is all there is) and the provider refused the
/// request or the user asked: about half of the tokens after a leading summary are
/// kept, the cut placed as [`cut_point`] places it.
pub fn newer_half(messages: &[Message]) -> Option<usize> {
    let floor = usize::from(matches!(messages.first(), Some(m) if m.is_summary()));
    let total: u64 = messages[floor..].iter().map(|m| estimate_text_tokens(message_chars(m))).sum();
    reached(messages, total / 2).and_then(|i| startable(messages, i))
}

/// The first message, from the end, by which `keep` tokens are reached.
fn reached(messages: &[Message], keep: u64) -> Option<usize> {
    let mut kept = 0u64;
    messages.iter().enumerate().rev().find_map(|(i, m)| {
        kept += estimate_text_tokens(message_chars(m));
        (kept >= keep).then_some(i)
    })
}

/// `i` moved earlier to a message that can start the kept part, if that leaves
/// something before it to summarise (more than a leading summary).
fn startable(messages: &[Message], mut i: usize) -> Option<usize> {
    while i > 0 && matches!(messages.get(i), Some(Message::ToolResult(_))) {
        i -= 1;
    }
    let floor = usize::from(matches!(messages.first(), Some(m) if m.is_summary()));
    (i > floor).then_some(i)
}

/// The messages as plain text for the summary request, newest kept when over `budget`
/// characters (the oldest are cut with a note).
pub fn transcript(messages: &[Message], budget: usize) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(messages.len());
    for m in messages {
        match m {
            Message::User(u) => parts.push(format!("USER:\n{}\n", content_text(&u.content))),
            Message::Assistant(a) => {
                let mut s = String::from("ASSISTANT:\n");
                for b in &a.content {
                    match b {
                        AssistantBlock::Text { text, .. } => {
                            s.push_str(text);
                            s.push('\n');
                        }
                        AssistantBlock::ToolCall(c) => {
                            s.push_str(&format!("[tool call {} {}]\n", c.name, c.arguments))
                        }
                        AssistantBlock::WebSearch(w) => {
                            s.push_str(&rab_ai::search_note(w));
                            s.push('\n');
                        }
                        AssistantBlock::Thinking { .. } => {}
                    }
                }
                parts.push(s);
            }
            Message::ToolResult(r) => {
                let text = content_text(&r.content);
                let shown: String = text.chars().take(RESULT_CHARS).collect();
                let cut = if shown.len() < text.len() { " [cut]" } else { "" };
                let status = if r.is_error { " (error)" } else { "" };
                parts.push(format!("TOOL RESULT {}{status}:\n{shown}{cut}\n", r.tool_name));
            }
            Message::System(s) => {
                let note = s.note();
                if !note.is_empty() {
                    parts.push(format!("SYSTEM UPDATE:\n{note}\n"));
                }
            }
        }
    }
    // A leading summary (of an earlier compaction) is the whole history before it:
    // it is always sent, and older parts are what gives way.
    let lead =
        usize::from(matches!(messages.first(), Some(m) if m.is_summary()) && !parts.is_empty());
    let mut total: usize = parts[..lead].iter().map(String::len).sum();
    let mut start = parts.len();
    for (i, p) in parts.iter().enumerate().skip(lead).rev() {
        if total + p.len() > budget && start < parts.len() {
            break;
        }
        total += p.len();
        start = i;
    }
    let mut out = String::new();
    for p in &parts[..lead] {
        out.push_str(p);
        out.push('\n');
    }
    if start > lead {
        out.push_str(&format!(
            "[{} earlier messages omitted: too long to summarise at once]\n",
            start - lead
        ));
    }
    for p in &parts[start..] {
        out.push_str(p);
        out.push('\n');
    }
    out
}

fn content_text(c: &[Content]) -> String {
    c.iter()
        .map(|c| match c {
            Content::Text { text } => text.as_str(),
            Content::Image { .. } => "[image]",
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The messages kept after a summary. Their responses' reported usage counted the
/// history the summary replaced, so it is cleared: the context size is estimated
/// until the next response reports it anew. Their thinking stays: where a provider
/// binds it to the history before it (Anthropic), the adapter sees that prefix changed
/// and leaves it out, as Anthropic's docs ask of clients that keep turns after their
/// own summary (platform.claude.com/docs/en/build-with-claude/preserved-thinking,
/// "Custom compaction on the client", read 2026-11-24); elsewhere a tool round must go
/// on with its thinking.
fn kept_tail(messages: &[Message]) -> impl Iterator<Item = Message> + '_ {
    messages.iter().map(|m| match m {
        Message::Assistant(a) => {
            let mut a = a.clone();
            a.usage = rab_ai::Usage::default();
            Message::Assistant(a)
        }
        Message::User(_) | Message::ToolResult(_) | Message::System(_) => m.clone(),
    })
}

/// The sliding-window fallback: drop the messages before `cut`, with a notice.
pub fn sliding_window(messages: &[Message], cut: usize, why: &str) -> Compacted {
    let notice = format!(
        "[{cut} earlier messages were dropped to fit the context window without a summary ({why}). \
         They remain in the session file.]"
    );
    let mut kept = vec![Message::summary(&notice)];
    kept.extend(kept_tail(&messages[cut..]));
    Compacted {
        tokens_before: estimate_context_tokens(messages),
        tokens_after: estimate_context_tokens(&kept),
        messages: kept,
        summary: notice,
        first_kept: cut,
        is_fallback: true,
        usage: Usage::default(),
    }
}

impl Compactor for ModelCompactor {
    fn needs_compaction(&self, messages: &[Message], model: &Model) -> Option<u64> {
        if !self.is_auto() {
            return None;
        }
        let tokens = estimate_context_tokens(messages);
        let limit = model.input_limit().saturating_sub(self.reserve(model));
        (tokens > limit || self.over_window(messages)).then_some(tokens)
    }

    fn compact<'a>(
        &'a self,
        messages: &'a [Message],
        model: &'a Model,
        options: &'a StreamOptions,
        reason: CompactReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Compacted, CompactError>> {
        Box::pin(async move {
            let window = self.settings.strategy == CompactionStrategy::Window;
            // The window strategy may drop by count where there is nothing to summarise.
            let room = self.room(messages, model);
            let token_cut = cut_point(messages, self.keep_tokens(room))
                .or_else(|| (reason != CompactReason::Threshold).then(|| newer_half(messages))?);
            let Some(cut) = token_cut.or(window.then_some(0)) else {
                return Err(CompactError {
                    message: "nothing to compact yet".to_owned(),
                    is_disabled: false,
                });
            };
            let focus = match &reason {
                CompactReason::Manual { focus } => focus.as_deref(),
                CompactReason::Threshold | CompactReason::Overflow => None,
            };
            let manual = matches!(reason, CompactReason::Manual { .. });
            if let Some(gate) = self.gate.get()
                && gate.hooks().has(crate::hooks::HookEvent::PreCompact)
                && (manual || self.is_auto())
            {
                let trigger = if manual { "manual" } else { "auto" };
                let input = gate.event_input(serde_json::json!({
                    "trigger": trigger,
                    "custom_instructions": focus.unwrap_or_default(),
                }));
                let out = gate
                    .hooks()
                    .run(crate::hooks::HookEvent::PreCompact, None, input, cancel)
                    .await;
                if let Some(reason) = out.block {
                    return Err(CompactError {
                        message: format!("a PreCompact hook blocked compaction: {reason}"),
                        is_disabled: false,
                    });
                }
            }
            if window {
                return self.window(messages, model, cut, &reason);
            }
            if !manual && !self.is_auto() {
                if reason == CompactReason::Overflow {
                    return Ok(sliding_window(messages, cut, "automatic compaction is off"));
                }
                return Err(CompactError {
                    message: "automatic compaction is off".to_owned(),
                    is_disabled: true,
                });
            }
            let max_tokens = Self::summary_tokens(model, room);
            match self
                .summarise_within(&messages[..cut], model, options, focus, max_tokens, cancel)
                .await
            {
                Ok((summary, usage)) => {
                    self.failures.store(0, Ordering::Relaxed);
                    if manual {
                        self.disabled.store(false, Ordering::Relaxed);
                    }
                    let mut kept = vec![Message::summary(&summary)];
                    kept.extend(kept_tail(&messages[cut..]));
                    Ok(Compacted {
                        tokens_before: estimate_context_tokens(messages),
                        tokens_after: estimate_context_tokens(&kept),
                        messages: kept,
                        summary,
                        first_kept: cut,
                        is_fallback: false,
                        usage,
                    })
                }
                Err(e) if reason == CompactReason::Overflow => {
                    let _ = self.fail(e.clone());
                    Ok(sliding_window(messages, cut, &e))
                }
                Err(e) => Err(self.fail(e)),
            }
        })
    }
}

#[cfg(test)]
mod tests;
