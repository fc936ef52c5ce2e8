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

fn push_user<'a>(out: &mut Vec<Msg<'a>>, content: Vec<Block<'a>>) {
    out.push(Msg {
        role: "user",
        content,
        prefix_hash: None,
        offers: Vec::new(),
        output_config: None,
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
fn push_as_text<'a>(out: &mut Vec<Msg<'a>>, content: Vec<Block<'a>>) {
    for block in content {
        let Block::OwnedText { text, .. } = block else { continue };
        let block = Block::OwnedText {
            text: format!("<system_update>\n{text}\n</system_update>"),
            cache_control: None,
        };
        match out.last_mut() {
            Some(last) if last.role == "user" => last.content.push(block),
            _ => push_user(out, vec![block]),
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
            push_as_text(out, m.content);
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
        });
    }
}

/// The conversation in Anthropic's shape: results of one turn in one user message,
/// system updates as system messages (or user text). A system message goes right
/// before the reply that followed it, so one whose request failed (no reply) moves
/// past the user turns after it instead of sitting between two of them, which the API
/// refuses. With `efforts` (per-message effort), a changed thinking level is an
/// effort-only system message after the update it came with.
pub(crate) fn messages<'a>(
    context: &'a Context,
    model: &'a Model,
    tool_changes: bool,
    declared: &[&str],
    efforts: bool,
) -> Vec<Msg<'a>> {
    let mut out: Vec<Msg<'a>> = Vec::with_capacity(context.messages.len());
    let mut pending: Option<Msg<'a>> = None;
    let mut effort: Option<&'a str> = None;
    for message in &context.messages {
        match message {
            Message::User(u) => {
                let content = user_blocks(&u.content);
                if !content.is_empty() {
                    push_user(&mut out, content);
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
                    _ => push_user(&mut out, vec![block]),
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
                    push_as_text(&mut out, content);
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
                        })
                    }
                }
            }
        }
    }
    flush_system(&mut out, &mut pending, &mut effort);
    out
}

/// A 64-bit hash of what is written to it, eight bytes at a time (the request is hashed
/// on every turn, so speed matters; it only has to tell one conversation's prefixes
/// apart). Stable across runs, platforms and versions: it is stored on the tape.
struct Fingerprint {
    state: u64,
    tail: [u8; 8],
    tail_len: usize,
    len: u64,
    /// One value's JSON, hashed in one go (serde writes in many small pieces).
    buf: Vec<u8>,
}

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl std::io::Write for Fingerprint {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len += buf.len() as u64;
        let mut rest = buf;
        if self.tail_len > 0 {
            let take = (8 - self.tail_len).min(rest.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&rest[..take]);
            self.tail_len += take;
            rest = &rest[take..];
            if self.tail_len < 8 {
                return Ok(buf.len());
            }
            self.mix(u64::from_le_bytes(self.tail));
            self.tail_len = 0;
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.mix(u64::from_le_bytes(word));
        }
        let left = words.remainder();
        self.tail[..left.len()].copy_from_slice(left);
        self.tail_len = left.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Fingerprint {
    fn new() -> Self {
        Fingerprint {
            state: 0x243f_6a88_85a3_08d3,
            tail: [0; 8],
            tail_len: 0,
            len: 0,
            buf: Vec::new(),
        }
    }

    fn mix(&mut self, word: u64) {
        self.state = (self.state ^ word).wrapping_mul(MIX).rotate_left(31);
    }

    /// Hashes serialised bytes and the newline [`Fingerprint::add`] puts after them.
    fn hash_line(&mut self, bytes: &[u8]) {
        let _ = std::io::Write::write(self, bytes);
        let _ = std::io::Write::write(self, b"\n");
    }

    fn add(&mut self, value: &impl Serialize) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        // Writing to memory cannot fail, and serialising these types cannot either.
        let _ = serde_json::to_writer(&mut buf, value);
        buf.push(b'\n');
        let _ = std::io::Write::write(self, &buf);
        self.buf = buf;
    }

    /// The hash of everything written so far (what follows is not affected).
    fn hex(&self) -> String {
        let mut tail = [0u8; 8];
        tail[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
        let mut h = (self.state ^ u64::from_le_bytes(tail)).wrapping_mul(MIX);
        h ^= self.len;
        h = (h ^ (h >> 32)).wrapping_mul(MIX);
        format!("{:016x}", h ^ (h >> 29))
    }
}

/// The fingerprint in progress, and how far it must go.
pub(crate) struct Hashing {
    fp: Fingerprint,
    /// Messages to hash: up to the last reply with thinking (to check it), or all.
    upto: usize,
    /// Whether the whole request's fingerprint is wanted (the reply may think).
    finish: bool,
}

/// Starts the prefix fingerprint over the declared tools and the system prompt (without
/// its breakpoint marker), or returns `None` when nothing needs it. The fingerprint
/// costs hashing the whole history, so it only goes as far as needed: up to the last
/// reply with thinking (to check it, for models whose thinking is bound to its prefix,
/// `binds`), and to the end only when this request's reply may think.
pub(crate) fn start_fingerprint(
    tools: &[Tool<'_>],
    system: &[Block<'_>],
    messages: &[Msg<'_>],
    binds: bool,
    reply_may_think: bool,
) -> Option<Hashing> {
    let is_thinking_reply =
        |m: &Msg<'_>| m.role == "assistant" && m.content.iter().any(Block::is_thinking);
    let upto = if reply_may_think {
        messages.len()
    } else if binds {
        messages.iter().rposition(is_thinking_reply)? + 1
    } else {
        return None;
    };
    let mut fp = Fingerprint::new();
    let declared: Vec<&Tool<'_>> = tools.iter().filter(|t| !t.defer_loading).collect();
    fp.add(&declared);
    fp.add(&system);
    Some(Hashing { fp, upto, finish: reply_may_think })
}

/// Writes `messages` as a JSON array's elements into `out`, hashing each message's
/// bytes as written, and returns the fingerprint of the whole request for its reply
/// (when [`start_fingerprint`] asked for it). On the way, leaves out the thinking of
/// replies whose prefix changed (and, once one is left out, of every later reply); only
/// for models whose thinking is bound to its prefix (`binds`), others need their
/// thinking back as it was (a tool round must start with its thinking). A reply that
/// recorded no fingerprint (from before rab kept them) keeps its thinking only when
/// `keep_unknown` (the request asks the API to drop blocks that do not match rather
/// than fail). The messages at `marks` get a cache breakpoint marker, which is not part
/// of the prefix.
pub(crate) fn write_messages(
    out: &mut Vec<u8>,
    mut hashing: Option<Hashing>,
    messages: &mut [Msg<'_>],
    marks: &[usize],
    binds: bool,
    keep_unknown: bool,
) -> Result<Option<String>, serde_json::Error> {
    let mut is_broken = false;
    for (i, m) in messages.iter_mut().enumerate() {
        let mut fp = hashing.as_mut().filter(|h| i < h.upto).map(|h| &mut h.fp);
        if let Some(fp) = fp.as_deref()
            && binds
            && m.role == "assistant"
            && m.content.iter().any(Block::is_thinking)
        {
            // A reply whose fingerprint matches was written after anything left out
            // before it, so its thinking holds; one without a fingerprint cannot tell.
            let holds = match m.prefix_hash {
                Some(h) => h == fp.hex(),
                None => keep_unknown && !is_broken,
            };
            if !holds {
                is_broken = true;
                m.content.retain(|b| !b.is_thinking());
                tracing::debug!("thinking left out: the conversation before it changed");
            }
        }
        if i > 0 {
            out.push(b',');
        }
        let start = out.len();
        let marked = marks.contains(&i);
        if marked {
            if let Some(fp) = fp.as_deref_mut() {
                fp.add(m);
            }
            if let Some(slot) = m.content.iter_mut().rev().find_map(Block::cache_slot) {
                *slot = Some(EPHEMERAL);
            }
        }
        serde_json::to_writer(&mut *out, m)?;
        if let Some(fp) = fp {
            if !marked {
                fp.hash_line(&out[start..]);
            }
            for t in &m.offers {
                fp.add(t);
            }
        }
    }
    Ok(hashing.filter(|h| h.finish).map(|h| h.fp.hex()))
}

/// [`start_fingerprint`] and [`write_messages`] without the body: leaves out thinking
/// as a request would and returns its fingerprint.
#[cfg(test)]
pub(crate) fn bind_thinking(
    tools: &[Tool<'_>],
    system: &[Block<'_>],
    messages: &mut [Msg<'_>],
    binds: bool,
    keep_unknown: bool,
    reply_may_think: bool,
) -> Option<String> {
    let hashing = start_fingerprint(tools, system, messages, binds, reply_may_think);
    write_messages(&mut Vec::new(), hashing, messages, &[], binds, keep_unknown).ok().flatten()
}

#[cfg(test)]
mod tests;
