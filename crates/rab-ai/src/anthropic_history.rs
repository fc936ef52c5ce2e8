//! The Anthropic request's `tools`, `system` and `messages`, kept append-only as
//! Anthropic's preserved-thinking pages ask (platform.claude.com/docs/en/build-with-claude/
//! preserved-thinking, …/prefix-checks, …/mid-conversation-system-messages, read
//! 2026-11-24): each assistant turn goes back exactly as it came (empty thinking
//! included); `system` and `tools` are the conversation's first ones; later changes are
//! `role: "system"` messages with `tool_addition`/`tool_removal` blocks (tools that
//! arrive later are appended to `tools` with `defer_loading: true`, which the prefix
//! check ignores until referenced).
//!
//! A thinking block is bound to everything before it. Each reply records a fingerprint
//! of its request's prefix ([`AssistantMessage::prefix_hash`]); a later request replays
//! a reply's thinking only while the same prefix still leads up to it, and once one
//! block is left out every later one is too (a gap invalidates the blocks after it).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::model::{Api, Model};
use crate::types::{AssistantBlock, AssistantMessage, Content, Context, Message, ToolSpec};

/// Beta header of mid-conversation tool changes.
pub(crate) const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";

#[derive(Serialize)]
pub(crate) struct Msg<'a> {
    pub role: &'static str,
    pub content: Vec<Block<'a>>,
    /// The prefix fingerprint the source reply recorded (assistant messages only).
    #[serde(skip)]
    pub prefix_hash: Option<&'a str>,
    /// Specs of the deferred tools a system message's `tool_addition` blocks offer: part
    /// of what the block's prefix covers, though sent in `tools`.
    #[serde(skip)]
    pub offers: Vec<&'a ToolSpec>,
    /// An effort-only system message's new level: `{"effort": …}` (per-message effort,
    /// beta `mid-conversation-output-config-2026-07-01`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<Value>,
    /// The index in the context's messages of the message this one began with.
    #[serde(skip)]
    pub source: usize,
}

/// A tool as `tools` declares it: one of rab's (name, description, schema) or one the
/// API runs itself (`type`, its settings).
#[derive(Serialize)]
pub(crate) struct Tool<'a> {
    /// A server tool's type (`web_search_20250305`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_domains: Option<&'a [String]>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
}

/// The web search server tool's version: the basic one, which every model the web
/// search page lists takes, needs no beta header and is the one Google Cloud serves
/// (platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool, read
/// 2026-11-28).
pub(crate) const WEB_SEARCH_TOOL: &str = "web_search_20250305";

impl<'a> Tool<'a> {
    fn of(t: &'a ToolSpec, defer_loading: bool) -> Self {
        match &t.server {
            None => Tool {
                kind: None,
                name: &t.name,
                description: Some(&t.description),
                input_schema: Some(&t.parameters),
                max_uses: None,
                allowed_domains: None,
                blocked_domains: None,
                defer_loading,
            },
            // The API takes one of the two lists: the allowed domains say more.
            Some(crate::types::ServerTool::WebSearch {
                allowed_domains,
                blocked_domains,
                max_uses,
            }) => Tool {
                kind: Some(WEB_SEARCH_TOOL),
                name: &t.name,
                description: None,
                input_schema: None,
                max_uses: *max_uses,
                allowed_domains: (!allowed_domains.is_empty())
                    .then_some(allowed_domains.as_slice()),
                blocked_domains: (allowed_domains.is_empty() && !blocked_domains.is_empty())
                    .then_some(blocked_domains.as_slice()),
                defer_loading,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// Text rab wrote itself (a system update).
    #[serde(rename = "text")]
    OwnedText {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// Text that cites web search results, sent back with its citations.
    #[serde(rename = "text")]
    CitedText {
        text: &'a str,
        citations: Vec<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolAddition {
        tool: ToolReference<'a>,
    },
    ToolRemoval {
        tool: ToolReference<'a>,
    },
    /// A block of the API's own, sent back as it came (a web search's
    /// `server_tool_use` and `web_search_tool_result`).
    #[serde(untagged)]
    Raw(&'a Value),
}

impl Block<'_> {
    fn is_thinking(&self) -> bool {
        matches!(self, Block::Thinking { .. } | Block::RedactedThinking { .. })
    }

    /// The block's `cache_control` slot, for blocks that take one.
    pub fn cache_slot(&mut self) -> Option<&mut Option<CacheControl>> {
        match self {
            Block::Text { cache_control, .. }
            | Block::OwnedText { cache_control, .. }
            | Block::Image { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::ToolResult { cache_control, .. }
            | Block::CitedText { cache_control, .. } => Some(cache_control),
            Block::Raw(_)
            | Block::Thinking { .. }
            | Block::RedactedThinking { .. }
            | Block::ToolAddition { .. }
            | Block::ToolRemoval { .. } => None,
        }
    }
}

#[derive(Serialize)]
pub(crate) struct ToolReference<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
}

#[derive(Serialize)]
pub(crate) struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize, Clone, Copy)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

pub(crate) const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// Anthropic tool ids must match `^[a-zA-Z0-9_-]{1,64}$`; ids from other providers
/// are mapped into that alphabet the same way for the call and its result. A valid id
/// (every id Anthropic issued) is borrowed, not copied.
pub(crate) fn tool_id(id: &str) -> Cow<'_, str> {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !id.is_empty() && id.len() <= 64 && id.chars().all(valid) {
        return Cow::Borrowed(id);
    }
    let mut out: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if out.is_empty() {
        out.push_str("call");
    }
    Cow::Owned(out)
}

/// Whether this request keeps `tools` fixed and sends tool changes as blocks: the model
/// takes them, and no tool came back with another spec (a declared tool cannot change;
/// then `tools` is rebuilt, and thinking before the change is left out).
pub(crate) fn uses_tool_changes(model: &Model, context: &Context) -> bool {
    if !(model.compat.tool_changes && model.compat.system_messages && context.has_tool_changes()) {
        return false;
    }
    let mut seen: Vec<&ToolSpec> = context.tools.iter().collect();
    for m in &context.messages {
        let Message::System(s) = m else { continue };
        for t in &s.tools_added {
            match seen.iter().find(|o| o.name == t.name) {
                Some(o) if *o != t => return false,
                Some(_) => {}
                None => seen.push(t),
            }
        }
    }
    true
}

/// The `tools` array: the conversation's first tools, then (with tool changes) every
/// tool added later, deferred; without tool changes, the tools callable now.
pub(crate) fn tools<'a>(context: &'a Context, tool_changes: bool) -> Vec<Tool<'a>> {
    let tool = |t: &'a ToolSpec, defer_loading: bool| Tool::of(t, defer_loading);
    if !tool_changes {
        return context.current_tools().into_iter().map(|t| tool(t, false)).collect();
    }
    let mut out: Vec<Tool<'a>> = context.tools.iter().map(|t| tool(t, false)).collect();
    for m in &context.messages {
        let Message::System(s) = m else { continue };
        for t in &s.tools_added {
            if !out.iter().any(|o| o.name == t.name) {
                out.push(tool(t, true));
            }
        }
    }
    out
}

fn user_blocks(content: &[Content]) -> Vec<Block<'_>> {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } if text.is_empty() => None,
            Content::Text { text } => Some(Block::Text { text, cache_control: None }),
            Content::Image { mime_type, data } => Some(Block::Image {
                source: ImageSource { kind: "base64", media_type: mime_type, data },
                cache_control: None,
            }),
        })
        .collect()
}

/// A reply's blocks. Thinking from any model of the same provider goes back: the API
/// drops, without an error, blocks the current model cannot read, and reads them
/// again if the conversation returns to their model.
fn assistant_blocks<'a>(m: &'a AssistantMessage, model: &Model) -> Vec<Block<'a>> {
    let is_ours = m.api == Api::AnthropicMessages && m.provider == model.provider;
    m.content
        .iter()
        .flat_map(|b| match b {
            // A web search of this provider goes back as it came; another's as text.
            AssistantBlock::WebSearch(search) if is_ours && !search.raw.is_empty() => {
                search.raw.iter().map(Block::Raw).collect()
            }
            AssistantBlock::WebSearch(search) => vec![Block::OwnedText {
                text: crate::types::search_note(search),
                cache_control: None,
            }],
            b => assistant_block(b, is_ours).into_iter().collect(),
        })
        .collect()
}

fn assistant_block(b: &AssistantBlock, is_ours: bool) -> Option<Block<'_>> {
    match b {
        AssistantBlock::Text { text, .. } if text.is_empty() => None,
        AssistantBlock::Text { text, citations, .. }
            if is_ours && citations.iter().any(|c| c.raw.is_some()) =>
        {
            let citations = citations.iter().filter_map(|c| c.raw.as_ref()).collect();
            Some(Block::CitedText { text, citations, cache_control: None })
        }
        AssistantBlock::Text { text, .. } => Some(Block::Text { text, cache_control: None }),
        AssistantBlock::Thinking { redacted: true, signature: Some(data), .. }
            if is_ours && !data.is_empty() =>
        {
            Some(Block::RedactedThinking { data })
        }
        AssistantBlock::Thinking { thinking, signature: Some(sig), redacted: false, .. }
            if is_ours && !sig.is_empty() =>
        {
            Some(Block::Thinking { thinking, signature: sig })
        }
        AssistantBlock::Thinking { .. } => None,
        AssistantBlock::ToolCall(call) => Some(Block::ToolUse {
            id: tool_id(&call.id),
            name: &call.name,
            input: &call.arguments,
            cache_control: None,
        }),
        AssistantBlock::WebSearch(_) => None,
    }
}

fn push_user<'a>(out: &mut Vec<Msg<'a>>, content: Vec<Block<'a>>, source: usize) {
    out.push(Msg {
        role: "user",
        content,
        prefix_hash: None,
        offers: Vec::new(),
        output_config: None,
        source,
    });
}

/// A system update's blocks: its note, then (with tool changes) `tool_removal` for
/// declared tools and `tool_addition` for added ones, with the specs they offer.
fn system_blocks<'a>(
    s: &'a crate::types::SystemMessage,
    tool_changes: bool,
    declared: &[&str],
) -> (Vec<Block<'a>>, Vec<&'a ToolSpec>) {
    let mut content = Vec::new();
    let mut offers = Vec::new();
    let note = s.note();
    if !note.is_empty() {
        content.push(Block::OwnedText { text: note, cache_control: None });
    }
    if tool_changes {
        // A tool whose addition a summary replaced is no longer declared: nothing to
        // withdraw.
        for name in s.tools_removed.iter().filter(|n| declared.contains(&n.as_str())) {
            content
                .push(Block::ToolRemoval { tool: ToolReference { kind: "tool_reference", name } });
        }
        for t in &s.tools_added {
            content.push(Block::ToolAddition {
                tool: ToolReference { kind: "tool_reference", name: &t.name },
            });
            offers.push(t);
        }
    }
    (content, offers)
}

/// Models without system messages read an update as text at the end of the user turn
/// it follows (Anthropic's documented fallback).
fn push_as_text<'a>(out: &mut Vec<Msg<'a>>, content: Vec<Block<'a>>, source: usize) {
    for block in content {
        let Block::OwnedText { text, .. } = block else { continue };
        let block = Block::OwnedText {
            text: format!("<system_update>\n{text}\n</system_update>"),
            cache_control: None,
        };
        match out.last_mut() {
            Some(last) if last.role == "user" => last.content.push(block),
            _ => push_user(out, vec![block], source),
        }
    }
}

/// Puts the pending system message in place: after a user turn and before what comes
/// next. Consecutive updates were merged into it (the API reads them as one section).
fn flush_system<'a>(
    out: &mut Vec<Msg<'a>>,
    pending: &mut Option<Msg<'a>>,
    effort: &mut Option<&str>,
) {
    let after_user = out.last().is_some_and(|last| last.role == "user");
    if let Some(m) = pending.take() {
        if after_user {
            out.push(m);
        } else {
            push_as_text(out, m.content, m.source);
        }
    }
    // The effort-only message follows the update it came with (both placed as system
    // messages are); with no user turn to follow it has no valid place and is left out.
    if let (Some(effort), true) = (effort.take(), after_user) {
        out.push(Msg {
            role: "system",
            content: Vec::new(),
            prefix_hash: None,
            offers: Vec::new(),
            output_config: Some(serde_json::json!({ "effort": effort })),
            source: out.last().map_or(0, |m| m.source),
        });
    }
}

/// The conversation in Anthropic's shape: results of one turn in one user message,
/// system updates as system messages (or user text). A system message goes right
/// before the reply that followed it, so one whose request failed (no reply) moves
/// past the user turns after it instead of sitting between two of them, which the API
/// refuses. With `efforts` (per-message effort), a changed thinking level is an
/// effort-only system message after the update it came with.
///
/// From `context.messages[from..]`, as they follow an assistant message (where nothing
/// is pending: every earlier update was placed before it), when `from` is not 0.
pub(crate) fn messages_from<'a>(
    context: &'a Context,
    model: &'a Model,
    tool_changes: bool,
    declared: &[&str],
    efforts: bool,
    from: usize,
) -> Vec<Msg<'a>> {
    let rest = context.messages.get(from..).unwrap_or_default();
    let mut out: Vec<Msg<'a>> = Vec::with_capacity(rest.len());
    let mut pending: Option<Msg<'a>> = None;
    let mut effort: Option<&'a str> = None;
    for (source, message) in rest.iter().enumerate() {
        let source = from + source;
        match message {
            Message::User(u) => {
                let content = user_blocks(&u.content);
                if !content.is_empty() {
                    push_user(&mut out, content, source);
                }
            }
            Message::Assistant(a) => {
                let content = assistant_blocks(a, model);
                if !content.is_empty() {
                    flush_system(&mut out, &mut pending, &mut effort);
                    out.push(Msg {
                        role: "assistant",
                        content,
                        prefix_hash: a.prefix_hash.as_deref(),
                        offers: Vec::new(),
                        output_config: None,
                        source,
                    });
                }
            }
            Message::ToolResult(r) => {
                let mut content = user_blocks(&r.content);
                if content.is_empty() {
                    content.push(Block::Text { text: "(no output)", cache_control: None });
                }
                let block = Block::ToolResult {
                    tool_use_id: tool_id(&r.tool_call_id),
                    content,
                    is_error: r.is_error,
                    cache_control: None,
                };
                // All results of one assistant turn go into one user message.
                match out.last_mut() {
                    Some(last)
                        if last.role == "user"
                            && matches!(last.content.first(), Some(Block::ToolResult { .. })) =>
                    {
                        last.content.push(block);
                    }
                    _ => push_user(&mut out, vec![block], source),
                }
            }
            Message::System(s) => {
                if let (true, Some((_, to))) = (efforts, s.thinking) {
                    // A later change replaces one not sent yet.
                    effort = Some(crate::anthropic::message_effort(model, to));
                }
                let (content, offers) = system_blocks(s, tool_changes, declared);
                if content.is_empty() {
                    continue;
                }
                if !model.compat.system_messages {
                    push_as_text(&mut out, content, source);
                    continue;
                }
                match &mut pending {
                    Some(m) => {
                        m.content.extend(content);
                        m.offers.extend(offers);
                    }
                    None => {
                        pending = Some(Msg {
                            role: "system",
                            content,
                            prefix_hash: None,
                            offers,
                            output_config: None,
                            source,
                        })
                    }
                }
            }
        }
    }
    flush_system(&mut out, &mut pending, &mut effort);
    out
}

/// [`messages_from`] from the first message.
#[cfg(test)]
pub(crate) fn messages<'a>(
    context: &'a Context,
    model: &'a Model,
    tool_changes: bool,
    declared: &[&str],
    efforts: bool,
) -> Vec<Msg<'a>> {
    messages_from(context, model, tool_changes, declared, efforts, 0)
}

mod write;

#[cfg(test)]
pub(crate) use write::bind_thinking;
pub(crate) use write::{
    Memo, MemoKey, Shape, Unwritten, Writer, breakpoint_targets, start_fingerprint, write_messages,
};

#[cfg(test)]
mod tests;
