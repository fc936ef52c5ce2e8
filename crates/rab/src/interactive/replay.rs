//! A resumed conversation drawn as it looked live (`rab -c`, `--session`, `--resume`,
//! `/resume`, a `/tree` jump): user messages, answers, thinking folded, each tool call
//! collapsed under its one-line summary with its result. The messages go through the
//! same drawing as live events, so nothing looks different for having been resumed.
//!
//! Only the end of a long session is drawn — what fits [`LINE_BUDGET`] lines of
//! scrollback, from a user message on — and a line says how many earlier messages are
//! not shown, so resuming a session of thousands of entries stays instant.

use rab_agent::AgentEvent;
use rab_ai::{AssistantBlock, Message};

use super::app::App;

/// About how many lines of scrollback a resumed conversation may fill.
pub(super) const LINE_BUDGET: usize = 2000;

/// Roughly how many lines `m` takes on screen `width` columns wide (without drawing
/// it): enough to choose where to start.
fn estimate(m: &Message, width: usize) -> usize {
    let text_lines =
        |t: &str| t.lines().map(|l| l.chars().count() / width.max(20) + 1).sum::<usize>();
    match m {
        Message::User(u) => {
            2 + u
                .content
                .iter()
                .map(|c| match c {
                    rab_ai::Content::Text { text } => text_lines(text),
                    _ => 1,
                })
                .sum::<usize>()
        }
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|b| match b {
                AssistantBlock::Text { text, .. } => 1 + text_lines(text),
                AssistantBlock::Thinking { .. } => 1,
                AssistantBlock::ToolCall(_) | AssistantBlock::WebSearch(_) => 2,
            })
            .sum(),
        // A collapsed result: a few lines at most.
        Message::ToolResult(_) => 7,
        Message::System(_) => 0,
    }
}

/// Where to start drawing `messages` so the drawing fits the budget: at a user message
/// (a tool result is never drawn without its call).
fn start_of(messages: &[Message], width: usize) -> usize {
    let mut lines = 0;
    let mut start = messages.len();
    for (i, m) in messages.iter().enumerate().rev() {
        lines += estimate(m, width);
        if lines > LINE_BUDGET {
            break;
        }
        if matches!(m, Message::User(_)) {
            start = i;
        }
    }
    // Not even the last exchange fits: draw it anyway, from its user message.
    if start == messages.len() {
        start = messages.iter().rposition(|m| matches!(m, Message::User(_))).unwrap_or(0);
    }
    start
}

/// Draws `messages` into `app`'s scrollback as they looked live.
pub(super) fn replay(app: &mut App, messages: &[Message]) {
    let start = start_of(messages, app.width);
    let hidden = messages[..start].iter().filter(|m| !matches!(m, Message::System(_))).count();
    if hidden > 0 {
        app.info(&format!(
            "… {hidden} earlier message{} not shown (/tree lists them all, /export writes the \
             whole session)",
            if hidden == 1 { " is" } else { "s are" }
        ));
    }
    // Every language of the drawn part compiles once (then memory returns to normal).
    app.highlighter.begin_burst(16);
    for m in &messages[start..] {
        match m {
            Message::User(_) => app.agent_event(AgentEvent::MessageEnd { message: m.clone() }),
            Message::Assistant(a) => {
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text { text, .. } => {
                            app.agent_event(AgentEvent::TextDelta { delta: text.clone() })
                        }
                        AssistantBlock::Thinking { thinking, redacted: false, .. } => {
                            app.agent_event(AgentEvent::ThinkingDelta { delta: thinking.clone() })
                        }
                        AssistantBlock::Thinking { .. } => {}
                        AssistantBlock::WebSearch(search) => {
                            app.agent_event(AgentEvent::WebSearch { search: search.clone() })
                        }
                        AssistantBlock::ToolCall(call) => calls.push(call.clone()),
                    }
                }
                app.agent_event(AgentEvent::MessageEnd { message: m.clone() });
                for call in calls {
                    app.agent_event(AgentEvent::ToolCall { call });
                }
            }
            Message::ToolResult(r) => app.agent_event(AgentEvent::ToolResult {
                result: r.clone(),
                details: None,
                duration_ms: 0,
            }),
            Message::System(_) => {}
        }
    }
    // A call whose result the session lacks (the run was cut off) is not left running.
    app.drop_unfinished_tools();
    app.highlighter.end_burst();
}
