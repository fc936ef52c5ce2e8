//! rab's events and messages as Agent Client Protocol updates, and the editor's
//! prompts and answers as rab's. Pure functions: the protocol plumbing is in `mod.rs`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, EmbeddedResourceResource, PermissionOption,
    PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    StopReason, ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use rab_agent::{AgentEvent, AgentTool, StopCause, ToolLevel};
use rab_ai::{AssistantBlock, Content, Message, ToolCall};
use rab_core::{Approval, ApprovalKind, ApprovalRequest};
use serde_json::Value;

/// The most text of one tool's output sent to the editor (its tail).
const MAX_OUTPUT: usize = 32 * 1024;

/// Finds a tool by name among the session's (built-in and extensions', MCP included).
pub type ToolLookup = Arc<dyn Fn(&str) -> Option<Arc<dyn AgentTool>> + Send + Sync>;

/// Turns one session's events into updates, remembering what it needs between them
/// (each running call's streamed output).
pub struct Translator {
    cwd: std::path::PathBuf,
    tools: ToolLookup,
    output: HashMap<String, String>,
}

impl Translator {
    /// A translator for a session working in `cwd`.
    pub fn new(cwd: &Path, tools: ToolLookup) -> Self {
        Self { cwd: cwd.to_path_buf(), tools, output: HashMap::new() }
    }

    /// The updates one event makes (none for most bookkeeping events).
    pub fn event(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::TextDelta { delta } => vec![agent_text(delta)],
            AgentEvent::ThinkingDelta { delta } => {
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(delta.as_str().into()))]
            }
            AgentEvent::ToolCall { call } => vec![self.tool_call(call)],
            AgentEvent::WebSearch { search } => vec![agent_text(&format!(
                "\n\n(searched the web: {}, {} results)\n\n",
                search.queries.join("; "),
                search.results.len()
            ))],
            AgentEvent::ToolUpdate { call_id, chunk } => {
                let out = self.output.entry(call_id.clone()).or_default();
                out.push_str(chunk);
                // Only the tail is ever shown: keep no more of it.
                if out.len() > 2 * MAX_OUTPUT {
                    *out = tail(out, MAX_OUTPUT).to_owned();
                }
                let shown = tail(out, MAX_OUTPUT).to_owned();
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    ToolCallUpdateFields::new()
                        .status(ToolCallStatus::InProgress)
                        .content(vec![shown.into()]),
                ))]
            }
            AgentEvent::ToolResult { result, details, .. } => {
                self.output.remove(&result.tool_call_id);
                tool_result(
                    &result.tool_call_id,
                    &result.content,
                    result.is_error,
                    details,
                    &self.cwd,
                )
            }
            AgentEvent::CompactionEnd { tokens_before, tokens_after, is_fallback, .. } => {
                let how = if *is_fallback { "dropped older messages" } else { "summarised" };
                vec![agent_text(&format!(
                    "\n\n(compacted the conversation, {how}: {tokens_before} → {tokens_after} tokens)\n\n"
                ))]
            }
            // What was streamed cannot be taken back from the editor: it is marked.
            AgentEvent::Retry { discarded: true, .. } => vec![agent_text(
                "\n\n(↻ the answer above broke off and is discarded; it starts again)\n\n",
            )],
            AgentEvent::Fallback { from, to, message, .. } => vec![agent_text(&format!(
                "\n\n(⤳ {from} failed ({message}); continuing on {to}, from the start)\n\n"
            ))],
            AgentEvent::Notice { message } => vec![agent_text(&format!("\n\n(⚠ {message})\n\n"))],
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::Retry { discarded: false, .. }
            // Editors show their own progress while a prompt runs.
            | AgentEvent::Waiting { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::CompactionFailed { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::AgentEnd { .. } => Vec::new(),
        }
    }

    /// A call the model made, with what it would change (a diff) when the tool can say.
    pub fn tool_call(&self, call: &ToolCall) -> SessionUpdate {
        let tool = (self.tools)(&call.name);
        let name = tool.as_ref().and_then(|t| t.label()).unwrap_or_else(|| call.name.clone());
        let title = match tool.as_ref().and_then(|t| t.summary(&call.arguments)) {
            Some(summary) => format!("{name} {summary}"),
            None => name,
        };
        let kind = tool.as_ref().map_or(ToolKind::Other, |t| kind(t.level()));
        let preview = tool.as_ref().and_then(|t| t.preview(&call.arguments));
        let content = match preview.as_deref().map(|p| diffs(p, &self.cwd)) {
            Some(d) if !d.is_empty() => d,
            _ => Vec::new(),
        };
        let locations: Vec<ToolCallLocation> = call
            .arguments
            .get("path")
            .and_then(Value::as_str)
            .map(|p| vec![ToolCallLocation::new(self.cwd.join(p))])
            .unwrap_or_default();
        SessionUpdate::ToolCall(
            AcpToolCall::new(call.id.clone(), title)
                .kind(kind)
                .status(ToolCallStatus::Pending)
                .content(content)
                .locations(locations)
                .raw_input(call.arguments.clone()),
        )
    }

    /// The conversation so far as updates (an editor loading a session).
    pub fn history(&self, messages: &[Message]) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        for message in messages {
            match message {
                Message::User(u) => {
                    for c in &u.content {
                        let block = content_block(c);
                        out.push(SessionUpdate::UserMessageChunk(ContentChunk::new(block)));
                    }
                }
                Message::Assistant(a) => {
                    for block in &a.content {
                        match block {
                            AssistantBlock::Text { text, .. } => out.push(agent_text(text)),
                            AssistantBlock::Thinking { thinking, redacted: false, .. } => {
                                out.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                                    thinking.as_str().into(),
                                )));
                            }
                            AssistantBlock::Thinking { .. } => {}
                            AssistantBlock::ToolCall(call) => out.push(self.tool_call(call)),
                            AssistantBlock::WebSearch(w) => {
                                out.push(agent_text(&rab_ai::search_note(w)));
                            }
                        }
                    }
                }
                Message::ToolResult(r) => {
                    out.extend(tool_result(
                        &r.tool_call_id,
                        &r.content,
                        r.is_error,
                        &None,
                        &self.cwd,
                    ));
                }
                Message::System(_) => {}
            }
        }
        out
    }
}

fn agent_text(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into()))
}

fn content_block(c: &Content) -> ContentBlock {
    match c {
        Content::Text { text } => text.as_str().into(),
        Content::Image { mime_type, data } => ContentBlock::Image(
            agent_client_protocol::v1::schema::ImageContent::new(data.clone(), mime_type.clone()),
        ),
    }
}

/// How the editor should show a tool: by what it can do.
fn kind(level: ToolLevel) -> ToolKind {
    match level {
        ToolLevel::ReadOnly => ToolKind::Read,
        ToolLevel::Edit => ToolKind::Edit,
        ToolLevel::Execute => ToolKind::Execute,
        ToolLevel::Network => ToolKind::Fetch,
    }
}

/// A finished call: its status, its output or diff, and a plan when its details carry
/// a to-do list.
fn tool_result(
    call_id: &str,
    content: &[Content],
    is_error: bool,
    details: &Option<Value>,
    cwd: &Path,
) -> Vec<SessionUpdate> {
    let mut shown: Vec<ToolCallContent> = details
        .as_ref()
        .and_then(|d| d.get("diff"))
        .and_then(Value::as_str)
        .map(|d| diffs(d, cwd))
        .unwrap_or_default();
    let text = Content::join_text(content);
    // A command that ran in the editor's terminal stays shown there.
    let in_terminal = details.as_ref().is_some_and(|d| d["editorTerminal"] == true);
    if (shown.is_empty() && !in_terminal) || is_error {
        shown.push(tail(&text, MAX_OUTPUT).into());
    }
    let status = if is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let mut fields = ToolCallUpdateFields::new().status(status);
    if !shown.is_empty() {
        fields = fields.content(shown);
    }
    if let Some(d) = details {
        fields = fields.raw_output(d.clone());
    }
    let mut out =
        vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_owned(), fields))];
    if let Some(todos) = details.as_ref().and_then(|d| d.get("todos")).and_then(Value::as_array) {
        out.push(SessionUpdate::Plan(plan(todos)));
    }
    out
}

/// A to-do list (`[{"content", "status"}]`) as the editor's plan.
fn plan(todos: &[Value]) -> Plan {
    let entries = todos
        .iter()
        .map(|t| {
            let status = match t.get("status").and_then(Value::as_str) {
                Some("completed") => PlanEntryStatus::Completed,
                Some("in_progress") => PlanEntryStatus::InProgress,
                _ => PlanEntryStatus::Pending,
            };
            let content = t.get("content").and_then(Value::as_str).unwrap_or_default();
            PlanEntry::new(content.to_owned(), PlanEntryPriority::Medium, status)
        })
        .collect();
    Plan::new(entries)
}

/// The end of `text`, at most `max` bytes, cut at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut at = text.len() - max;
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}

/// A unified diff as the editor's diffs: one per hunk, the old and new text of the
/// lines it covers. Anything that is not a unified diff gives none.
pub fn diffs(unified: &str, cwd: &Path) -> Vec<ToolCallContent> {
    let mut out = Vec::new();
    let mut path: Option<std::path::PathBuf> = None;
    let mut hunk: Option<(String, String)> = None;
    let flush = |hunk: &mut Option<(String, String)>,
                 path: &Option<std::path::PathBuf>,
                 out: &mut Vec<ToolCallContent>| {
        if let (Some((old, new)), Some(p)) = (hunk.take(), path) {
            let old = (!old.is_empty()).then_some(old);
            out.push(ToolCallContent::Diff(Diff::new(p.clone(), new).old_text(old)));
        }
    };
    for line in unified.lines() {
        if let Some(name) = line.strip_prefix("+++ ") {
            flush(&mut hunk, &path, &mut out);
            let name = name.split('\t').next().unwrap_or(name).trim();
            let name = name.strip_prefix("b/").unwrap_or(name);
            path = (name != "/dev/null").then(|| cwd.join(name));
        } else if line.starts_with("--- ") && hunk.is_none() {
        } else if line.starts_with("@@") {
            flush(&mut hunk, &path, &mut out);
            hunk = Some((String::new(), String::new()));
        } else if let Some((old, new)) = hunk.as_mut() {
            let mark = line.chars().next();
            let rest = mark.map_or("", |c| &line[c.len_utf8()..]);
            match mark.map(String::from).as_deref().unwrap_or("") {
                " " | "" => {
                    old.push_str(rest);
                    old.push('\n');
                    new.push_str(rest);
                    new.push('\n');
                }
                "-" => {
                    old.push_str(rest);
                    old.push('\n');
                }
                "+" => {
                    new.push_str(rest);
                    new.push('\n');
                }
                _ => {}
            }
        }
    }
    flush(&mut hunk, &path, &mut out);
    out
}

/// Why a run ended, for the editor; `Err` for a failure (sent as an error response),
/// with text to show first for a stop the editor has no reason for.
pub fn stop_reason(stop: &StopCause) -> (Result<StopReason, String>, Option<String>) {
    match stop {
        StopCause::Done => (Ok(StopReason::EndTurn), None),
        StopCause::Aborted => (Ok(StopReason::Cancelled), None),
        StopCause::MaxTurns { .. } => (Ok(StopReason::MaxTurnRequests), None),
        StopCause::Budget { limit, spent } => (
            Ok(StopReason::EndTurn),
            Some(format!(
                "\n\n(stopped: the next request would cross the budget of ${limit:.2}; spent \
                 ${spent:.4})"
            )),
        ),
        StopCause::Error { message } => (Err(message.clone()), None),
        StopCause::Loop { message } => {
            (Ok(StopReason::EndTurn), Some(format!("\n\n(stopped: {message})")))
        }
        StopCause::Length { .. } => (Ok(StopReason::MaxTokens), None),
    }
}

/// The options the editor offers for a question, each with rab's answer.
pub fn options(request: &ApprovalRequest) -> Vec<(PermissionOption, Approval)> {
    let option = |id: String, name: String, kind| PermissionOption::new(id, name, kind);
    match &request.kind {
        ApprovalKind::Permission => {
            let mut out = vec![(
                option("allow".into(), "Allow".into(), PermissionOptionKind::AllowOnce),
                Approval::Once,
            )];
            if !request.rule.is_empty() {
                out.push((
                    option(
                        "always".into(),
                        format!("Always allow {}", request.rule),
                        PermissionOptionKind::AllowAlways,
                    ),
                    Approval::Always,
                ));
            }
            out.push((
                option("reject".into(), "Deny".into(), PermissionOptionKind::RejectOnce),
                Approval::Deny(None),
            ));
            out
        }
        ApprovalKind::Question { options, .. } => {
            let mut out: Vec<_> = options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    (
                        option(format!("answer-{i}"), o.clone(), PermissionOptionKind::AllowOnce),
                        Approval::Answer(o.clone()),
                    )
                })
                .collect();
            out.push((
                option(
                    "reject".into(),
                    "Decline to answer".into(),
                    PermissionOptionKind::RejectOnce,
                ),
                Approval::Deny(None),
            ));
            out
        }
        ApprovalKind::Plan { .. } => vec![
            (
                option("allow".into(), "Approve the plan".into(), PermissionOptionKind::AllowOnce),
                Approval::Once,
            ),
            (
                option("reject".into(), "Keep planning".into(), PermissionOptionKind::RejectOnce),
                Approval::Deny(None),
            ),
        ],
    }
}

/// What the question shows inside the editor's permission prompt.
pub fn question_call(request: &ApprovalRequest) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new().raw_input(request.arguments.clone());
    match &request.kind {
        ApprovalKind::Permission => {}
        ApprovalKind::Question { question, .. } => {
            fields = fields.title(question.clone()).content(vec![question.as_str().into()]);
        }
        ApprovalKind::Plan { plan } => {
            fields =
                fields.title("Approve the plan?".to_owned()).content(vec![plan.as_str().into()]);
        }
    }
    ToolCallUpdate::new(request.call_id.clone(), fields)
}

/// A prompt's blocks as text and images: text as is, embedded files as tagged text,
/// links as `@uri` mentions.
pub fn prompt(blocks: &[ContentBlock]) -> (String, Vec<Content>) {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(i) => {
                images.push(Content::Image { mime_type: i.mime_type.clone(), data: i.data.clone() })
            }
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!(" @{} ", link.uri));
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    text.push_str(&format!("\n<file uri=\"{}\">\n{}\n</file>\n", t.uri, t.text));
                }
                _ => text.push_str("\n(an attached binary resource was left out)\n"),
            },
            _ => text.push_str("\n(an attachment of a kind rab does not take was left out)\n"),
        }
    }
    (text, images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unified_diff_becomes_one_diff_per_hunk_with_old_and_new_text() {
        let d = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n@@ -9 +9 @@\n-x\n+y\n";
        let out = diffs(d, Path::new("/w"));
        let json = serde_json::to_value(&out).unwrap();
        assert_eq!(json[0]["path"], "/w/src/a.rs");
        assert_eq!(json[0]["oldText"], "one\ntwo\nthree\n");
        assert_eq!(json[0]["newText"], "one\n2\nthree\n");
        assert_eq!(json[1]["oldText"], "x\n");
        assert_eq!(json[1]["newText"], "y\n");
        assert!(diffs("$ ls -la", Path::new("/w")).is_empty());
    }

    #[test]
    fn a_new_file_has_no_old_text() {
        let d = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n";
        let json = serde_json::to_value(diffs(d, Path::new("/w"))).unwrap();
        assert_eq!(json[0]["newText"], "hello\n");
        assert!(json[0].get("oldText").is_none_or(Value::is_null));
    }

    #[test]
    fn the_tail_of_long_output_is_cut_at_a_character() {
        let s = "é".repeat(10);
        let t = tail(&s, 5);
        assert!(t.len() <= 5 && s.ends_with(t));
    }
}
