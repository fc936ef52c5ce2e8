//! Importing other agents' sessions as rab tapes: Claude Code's project sessions
//! (`~/.claude/projects/<dir>/<session>.jsonl`) and pi's (`~/.pi/agent/sessions/…`).
//!
//! Formats, as their makers document or write them:
//! - pi: `packages/coding-agent/docs/session.md` in pi-mono — a `session` header, then
//!   entries with `id`/`parentId` (`message`, `model_change`, `thinking_level_change`,
//!   `compaction`, `label`, `custom`, …); messages have roles `user`, `assistant`
//!   (blocks `text`, `thinking`, `toolCall`) and `toolResult`.
//! - Claude Code: one JSON object per line with `uuid`/`parentUuid`, `sessionId`, `cwd`,
//!   `type` (`user`, `assistant`, `summary`, `system`, …) and an Anthropic Messages
//!   `message`. An assistant reply is written one content block per line, the lines
//!   sharing `message.id`; tool results are `tool_result` blocks of `user` lines;
//!   `isSidechain` lines are sub-agents' and `isMeta` lines are not the user's words.
//!
//! Branches are kept (each entry keeps its parent); tool calls and results keep their
//! ids, so they stay paired; thinking is kept as thinking without its signature (a
//! signature binds it to the provider that made it); images are kept. Each source
//! session becomes `import-<source>-<id>.jsonl` in the rab session directory of its
//! working directory, so importing again finds it there and adds nothing. Entries keep
//! the times their source gave them (RFC 3339), so search and listings date them right.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall,
    ToolResultMessage, Usage, UserMessage,
};
use serde_json::Value;

use crate::time::parse_rfc3339;
use crate::{EntryBody, Tape, session_dir};

/// Whose sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Claude Code.
    Claude,
    /// pi.
    Pi,
}

impl Source {
    /// Its name in file names and messages.
    pub fn name(self) -> &'static str {
        match self {
            Source::Claude => "claude",
            Source::Pi => "pi",
        }
    }

    /// Where it keeps its sessions, under the home directory `home`.
    pub fn default_dir(self, home: &Path) -> PathBuf {
        match self {
            Source::Claude => home.join(".claude/projects"),
            Source::Pi => home.join(".pi/agent/sessions"),
        }
    }
}

/// What an import did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Sessions written: the tape, and how many entries it got.
    pub imported: Vec<(PathBuf, usize)>,
    /// Sessions imported before (left as they are).
    pub already: Vec<PathBuf>,
    /// What could not be converted, one line each, naming the file.
    pub skipped: Vec<String>,
    /// Files that could not be read at all.
    pub failed: Vec<(PathBuf, String)>,
}

/// One entry to write: its id in the source, its parent's, and what it is.
struct Item {
    id: String,
    parent: Option<String>,
    body: EntryBody,
    /// When the source wrote it (milliseconds since the epoch), where it says so in
    /// RFC 3339.
    at: Option<u64>,
}

/// A source session converted, before it is written.
struct Converted {
    id: String,
    cwd: PathBuf,
    /// When the source session started, where it says so apart from its entries.
    started: Option<u64>,
    items: Vec<Item>,
    skipped: Vec<String>,
}

/// Imports every session file under `from` into `sessions_root`.
pub fn import(source: Source, from: &Path, sessions_root: &Path) -> Summary {
    let mut summary = Summary::default();
    let mut files = Vec::new();
    collect(from, &mut files, 0);
    files.sort();
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                summary.failed.push((file, e.to_string()));
                continue;
            }
        };
        let converted = match source {
            Source::Claude => claude(&text),
            Source::Pi => pi(&text),
        };
        let Some(c) = converted else {
            summary.failed.push((file, "no session in it (no id or working directory)".into()));
            continue;
        };
        let safe_id = file_id(&c.id);
        let dir = session_dir(sessions_root, &c.cwd);
        let target = dir.join(format!("import-{}-{safe_id}.jsonl", source.name()));
        if target.exists() {
            summary.already.push(target);
            continue;
        }
        summary.skipped.extend(c.skipped.iter().map(|s| format!("{}: {s}", file.display())));
        match write(&c, &dir, &target) {
            Ok(n) if n > 0 => summary.imported.push((target, n)),
            Ok(_) => summary.skipped.push(format!("{}: nothing to import", file.display())),
            Err(e) => summary.failed.push((file, e)),
        }
    }
    summary
}

/// A source session id as part of a file name: letters, digits and `-` only (an id is
/// the source file's word, and may be hostile: `../../x`). An id that had to change
/// gets a hash of the original, so two such ids never share a file.
fn file_id(id: &str) -> String {
    let safe: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    if safe == id && !safe.is_empty() {
        return safe;
    }
    let hash = crate::content_hash(id.as_bytes());
    let safe: String = safe.chars().take(64).collect();
    format!("{safe}-{}", &hash[..12]).trim_start_matches('-').to_owned()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if dir.is_file() {
        out.push(dir.to_owned());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() && depth < 4 {
            collect(&path, out, depth + 1);
        } else if path.extension().is_some_and(|x| x == "jsonl") {
            out.push(path);
        }
    }
}

/// Writes the entries as a tape at `target`; returns how many were written. The tape
/// is written beside it and renamed when whole, so an import cut short (a crash, a full
/// disk) leaves no session that a second import would take as done.
fn write(c: &Converted, dir: &Path, target: &Path) -> Result<usize, String> {
    if c.items.is_empty() {
        return Ok(0);
    }
    let partial = target.with_extension("jsonl.partial");
    let _ = std::fs::remove_file(&partial);
    // The file's time is the session's last entry's, so an import sorts by when the
    // session happened and `rab -c` does not continue an old import over newer work.
    let written = write_tape(c, dir, &partial)
        .and_then(|last| {
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(last);
            std::fs::File::options()
                .write(true)
                .open(&partial)
                .and_then(|f| f.set_modified(when))
                .map_err(|e| format!("cannot set the session file's time: {e}"))
        })
        .and_then(|()| std::fs::rename(&partial, target).map_err(|e| e.to_string()));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written.map(|()| c.items.len())
}

/// Writes the tape; the time of its last entry (Unix milliseconds).
fn write_tape(c: &Converted, dir: &Path, path: &Path) -> Result<u64, String> {
    let mut tape = Tape::create(dir, &c.cwd, None);
    tape.set_path(path.to_owned());
    // Entries keep their source's times; one without takes the time before it (at the
    // start, the session's), so the tape still reads in order.
    let mut at = c
        .started
        .or_else(|| c.items.iter().find_map(|i| i.at))
        .unwrap_or_else(crate::time::now_millis);
    tape.set_started_at(at);
    // Source id → rab id of the entry that stands for it.
    let mut ids: HashMap<&str, String> = HashMap::new();
    for item in &c.items {
        let parent = item.parent.as_deref().and_then(|p| ids.get(p)).cloned();
        tape.branch_from(parent.as_deref()).map_err(|e| e.to_string())?;
        let body = remap(&item.body, &ids);
        at = item.at.unwrap_or(at);
        let id = tape.append_at(body, at).map_err(|e| e.to_string())?.id.clone();
        ids.insert(item.id.as_str(), id);
    }
    Ok(at)
}

/// Entry references (a compaction's first kept entry, a label's target) in rab ids.
fn remap(body: &EntryBody, ids: &HashMap<&str, String>) -> EntryBody {
    let map = |id: &str| ids.get(id).cloned().unwrap_or_else(|| id.to_owned());
    match body {
        EntryBody::Compaction { summary, first_kept_entry_id, tokens_before, tokens_after } => {
            EntryBody::Compaction {
                summary: summary.clone(),
                first_kept_entry_id: map(first_kept_entry_id),
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            }
        }
        EntryBody::Label { target_id, label } => {
            EntryBody::Label { target_id: map(target_id), label: label.clone() }
        }
        other => other.clone(),
    }
}

fn message(message: Message) -> EntryBody {
    EntryBody::Message { message, details: None }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// User or tool-result content: a string, or text and image blocks (pi's `{type:
/// image, data, mimeType}`, Anthropic's `{type: image, source: {data, media_type}}`).
fn content(v: &Value) -> Vec<Content> {
    match v {
        Value::String(s) => vec![Content::text(s.clone())],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match str_of(b, "type") {
                Some("text") => str_of(b, "text").map(|t| Content::text(t.to_owned())),
                Some("image") => {
                    let src = b.get("source").unwrap_or(b);
                    let data = str_of(src, "data")?;
                    let mime = str_of(src, "media_type").or_else(|| str_of(b, "mimeType"))?;
                    Some(Content::Image { mime_type: mime.to_owned(), data: data.to_owned() })
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn assistant(api: Api, provider: &str, model: &str, blocks: Vec<AssistantBlock>) -> Message {
    let mut a = AssistantMessage::empty(api, provider, model);
    let calls = blocks.iter().any(|b| matches!(b, AssistantBlock::ToolCall(_)));
    a.content = blocks;
    a.stop_reason = if calls { StopReason::ToolUse } else { StopReason::Stop };
    Message::Assistant(a)
}

fn tool_call(id: &str, name: &str, arguments: Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments,
        invalid_arguments: None,
        item_id: None,
        signature: None,
    })
}

fn thinking(text: &str) -> AssistantBlock {
    AssistantBlock::Thinking {
        thinking: text.to_owned(),
        signature: None,
        item_id: None,
        redacted: false,
    }
}

/// A reply being gathered from its lines.
struct OpenReply {
    /// `message.id`.
    message_id: String,
    /// The first line's uuid: the entry's id.
    id: String,
    /// The last line's uuid: the next line of the reply points at it.
    last: String,
    parent: Option<String>,
    /// The first line's time.
    at: Option<u64>,
    model: String,
    blocks: Vec<AssistantBlock>,
}

/// The JSON lines of a session file, and how many non-empty lines were not JSON (or
/// nested too deeply to read).
fn parse_lines(text: &str) -> (Vec<Value>, usize) {
    let mut unreadable = 0;
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let v = serde_json::from_str(l).ok();
            unreadable += usize::from(v.is_none());
            v
        })
        .collect();
    (lines, unreadable)
}

fn unreadable_note(n: usize) -> Option<String> {
    (n > 0).then(|| format!("{n} unreadable line(s) not imported (not JSON, or cut off)"))
}

/// Claude Code's project session.
fn claude(text: &str) -> Option<Converted> {
    let (lines, unreadable) = parse_lines(text);
    let first = lines.iter().find(|l| l.get("sessionId").is_some())?;
    let id = str_of(first, "sessionId")?.to_owned();
    let cwd = PathBuf::from(lines.iter().find_map(|l| str_of(l, "cwd"))?);
    let mut c = Converted { id, cwd, started: None, items: Vec::new(), skipped: Vec::new() };
    let mut skipped_kinds: HashMap<String, usize> = HashMap::new();
    let mut tool_names: HashMap<String, String> = HashMap::new();
    // Lines not written as entries: what points at them points at this instead.
    let mut redirect: HashMap<String, Option<String>> = HashMap::new();
    let mut open: Option<OpenReply> = None;
    let flush = |open: &mut Option<OpenReply>, items: &mut Vec<Item>| {
        if let Some(r) = open.take() {
            let body = message(assistant(Api::AnthropicMessages, "anthropic", &r.model, r.blocks));
            items.push(Item { id: r.id, parent: r.parent, body, at: r.at });
        }
    };
    for line in &lines {
        let kind = str_of(line, "type").unwrap_or("?");
        let uuid = str_of(line, "uuid").unwrap_or_default().to_owned();
        let parent = str_of(line, "parentUuid").map(str::to_owned);
        let at = str_of(line, "timestamp").and_then(parse_rfc3339);
        let sidechain = line.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let meta = line.get("isMeta").and_then(Value::as_bool) == Some(true);
        if !matches!(kind, "user" | "assistant") || sidechain || meta || uuid.is_empty() {
            let what = if sidechain {
                "sub-agent (sidechain)"
            } else if meta {
                "meta"
            } else {
                kind
            };
            *skipped_kinds.entry(what.to_owned()).or_default() += 1;
            if !uuid.is_empty() {
                redirect.insert(uuid, parent);
            }
            continue;
        }
        let msg = line.get("message").cloned().unwrap_or_default();
        if kind == "assistant" {
            let message_id = str_of(&msg, "id").unwrap_or(&uuid).to_owned();
            let mut blocks = Vec::new();
            for b in msg.get("content").and_then(Value::as_array).into_iter().flatten() {
                let text = |k: &str| str_of(b, k).unwrap_or_default();
                match str_of(b, "type") {
                    Some("text") => blocks.push(AssistantBlock::text(text("text"))),
                    Some("thinking") => blocks.push(thinking(text("thinking"))),
                    Some("tool_use") => {
                        tool_names.insert(text("id").to_owned(), text("name").to_owned());
                        let input = b.get("input").cloned().unwrap_or_default();
                        blocks.push(tool_call(text("id"), text("name"), input));
                    }
                    Some(other) => *skipped_kinds.entry(format!("{other} block")).or_default() += 1,
                    None => {}
                }
            }
            match &mut open {
                Some(r) if r.message_id == message_id && parent.as_deref() == Some(&r.last) => {
                    r.blocks.extend(blocks);
                    redirect.insert(uuid.clone(), Some(r.id.clone()));
                    r.last = uuid;
                }
                _ => {
                    flush(&mut open, &mut c.items);
                    let model = str_of(&msg, "model").unwrap_or("claude").to_owned();
                    open = Some(OpenReply {
                        message_id,
                        id: uuid.clone(),
                        last: uuid,
                        parent,
                        at,
                        model,
                        blocks,
                    });
                }
            }
            continue;
        }
        flush(&mut open, &mut c.items);
        let mut user_blocks = Vec::new();
        let mut results = Vec::new();
        match msg.get("content").cloned().unwrap_or_default() {
            Value::Array(blocks) => {
                for b in blocks {
                    if str_of(&b, "type") == Some("tool_result") {
                        let call = str_of(&b, "tool_use_id").unwrap_or_default();
                        results.push(ToolResultMessage {
                            tool_call_id: call.to_owned(),
                            tool_name: tool_names.get(call).cloned().unwrap_or_default(),
                            content: content(b.get("content").unwrap_or(&Value::Null)),
                            is_error: b.get("is_error").and_then(Value::as_bool) == Some(true),
                        });
                    } else {
                        user_blocks.push(b);
                    }
                }
            }
            other => user_blocks.push(other),
        }
        let user: Vec<Content> = user_blocks.iter().flat_map(content_of_block).collect();
        let mut bodies: Vec<EntryBody> =
            results.into_iter().map(|r| message(Message::ToolResult(r))).collect();
        if !user.is_empty() {
            bodies.push(message(Message::User(UserMessage { content: user })));
        }
        // One line may hold several results: a chain, the line's own id on the last.
        let count = bodies.len();
        let mut parent = parent;
        for (i, body) in bodies.into_iter().enumerate() {
            let id = if i + 1 == count { uuid.clone() } else { format!("{uuid}#{i}") };
            c.items.push(Item { id: id.clone(), parent: parent.replace(id), body, at });
        }
        if count == 0 {
            redirect.insert(uuid, parent);
        }
    }
    flush(&mut open, &mut c.items);
    follow(&mut c.items, &redirect);
    let mut kinds: Vec<_> = skipped_kinds.into_iter().collect();
    kinds.sort();
    c.skipped.extend(kinds.into_iter().map(|(k, n)| format!("{n} {k} line(s) not imported")));
    c.skipped.extend(unreadable_note(unreadable));
    Some(c)
}

/// A Claude Code user block (a string, or a text or image block).
fn content_of_block(b: &Value) -> Vec<Content> {
    match b {
        Value::String(_) => content(b),
        other => content(&Value::Array(vec![other.clone()])),
    }
}

/// Points each entry's parent past the lines that were not written.
fn follow(items: &mut [Item], redirect: &HashMap<String, Option<String>>) {
    // Each skipped line resolved once (a hostile file can chain or loop them: a loop
    // ends at the root).
    let mut resolved: HashMap<&str, Option<String>> = HashMap::new();
    for item in items {
        let Some(start) = item.parent.as_deref() else { continue };
        if !redirect.contains_key(start) {
            continue;
        }
        let mut chain: Vec<&str> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut at = redirect.get_key_value(start).map(|(k, _)| k.as_str());
        let end = loop {
            let Some(id) = at else { break None };
            if let Some(r) = resolved.get(id) {
                break r.clone();
            }
            match redirect.get_key_value(id) {
                None => break Some(id.to_owned()),
                Some(_) if !seen.insert(id) => break None,
                Some((key, to)) => {
                    chain.push(key.as_str());
                    at = to.as_deref().map(|t| redirect.get_key_value(t).map_or(t, |(k, _)| k));
                }
            }
        };
        for id in chain {
            resolved.insert(id, end.clone());
        }
        item.parent = end;
    }
}

/// pi's session.
fn pi(text: &str) -> Option<Converted> {
    let (lines, unreadable) = parse_lines(text);
    let mut lines = lines.into_iter();
    let header = lines.next().filter(|h| str_of(h, "type") == Some("session"))?;
    let id = str_of(&header, "id")?.to_owned();
    let cwd = PathBuf::from(str_of(&header, "cwd")?);
    let started = str_of(&header, "timestamp").and_then(parse_rfc3339);
    let mut c = Converted { id, cwd, started, items: Vec::new(), skipped: Vec::new() };
    let mut skipped_kinds: HashMap<String, usize> = HashMap::new();
    let mut redirect: HashMap<String, Option<String>> = HashMap::new();
    let mut previous: Option<String> = None;
    for line in lines {
        let kind = str_of(&line, "type").unwrap_or("?");
        let Some(id) = str_of(&line, "id").map(str::to_owned) else { continue };
        // Version 1 files are linear: no parentId, each entry follows the one before.
        let parent = match line.get("parentId") {
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => None,
            None => previous.clone(),
        };
        previous = Some(id.clone());
        let body = match kind {
            "message" => pi_message(line.get("message").unwrap_or(&Value::Null)),
            "model_change" => Some(EntryBody::ModelChange {
                provider: str_of(&line, "provider").unwrap_or_default().to_owned(),
                model_id: str_of(&line, "modelId").unwrap_or_default().to_owned(),
            }),
            "thinking_level_change" => line
                .get("thinkingLevel")
                .and_then(|l| serde_json::from_value(l.clone()).ok())
                .map(|thinking_level| EntryBody::ThinkingLevelChange { thinking_level }),
            "compaction" => Some(EntryBody::Compaction {
                summary: str_of(&line, "summary").unwrap_or_default().to_owned(),
                first_kept_entry_id: str_of(&line, "firstKeptEntryId")
                    .unwrap_or_default()
                    .to_owned(),
                tokens_before: line.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0),
                tokens_after: 0,
            }),
            "label" => Some(EntryBody::Label {
                target_id: str_of(&line, "targetId").unwrap_or_default().to_owned(),
                label: str_of(&line, "label").map(str::to_owned),
            }),
            // Not rab's own checkpoint and rewind entries: those name files to write.
            "custom" => match str_of(&line, "customType").unwrap_or("pi") {
                t if crate::checkpoints::REWIND_ENTRY_TYPES.contains(&t) => None,
                t => Some(EntryBody::Custom {
                    custom_type: t.to_owned(),
                    data: line.get("data").cloned().unwrap_or_default(),
                }),
            },
            _ => None,
        };
        match body {
            Some(body) => {
                let at = str_of(&line, "timestamp").and_then(parse_rfc3339);
                c.items.push(Item { id, parent, body, at });
            }
            None => {
                let what = match kind {
                    "message" => {
                        format!("{} message", line["message"]["role"].as_str().unwrap_or("?"))
                    }
                    other => other.to_owned(),
                };
                *skipped_kinds.entry(what).or_default() += 1;
                redirect.insert(id, parent);
            }
        }
    }
    follow(&mut c.items, &redirect);
    let mut kinds: Vec<_> = skipped_kinds.into_iter().collect();
    kinds.sort();
    c.skipped.extend(kinds.into_iter().map(|(k, n)| format!("{n} {k} entr(ies) not imported")));
    c.skipped.extend(unreadable_note(unreadable));
    Some(c)
}

/// One pi message (`user`, `assistant`, `toolResult`); other roles are not converted.
fn pi_message(m: &Value) -> Option<EntryBody> {
    match str_of(m, "role")? {
        "user" => Some(message(Message::User(UserMessage {
            content: content(m.get("content").unwrap_or(&Value::Null)),
        }))),
        "toolResult" => Some(message(Message::ToolResult(ToolResultMessage {
            tool_call_id: str_of(m, "toolCallId")?.to_owned(),
            tool_name: str_of(m, "toolName").unwrap_or_default().to_owned(),
            content: content(m.get("content").unwrap_or(&Value::Null)),
            is_error: m.get("isError").and_then(Value::as_bool) == Some(true),
        }))),
        "assistant" => {
            let blocks = m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|b| match str_of(b, "type")? {
                    "text" => Some(AssistantBlock::text(str_of(b, "text").unwrap_or_default())),
                    "thinking" => Some(thinking(str_of(b, "thinking").unwrap_or_default())),
                    "toolCall" => Some(tool_call(
                        str_of(b, "id")?,
                        str_of(b, "name")?,
                        b.get("arguments").cloned().unwrap_or_default(),
                    )),
                    _ => None,
                })
                .collect();
            let api = m
                .get("api")
                .and_then(|a| serde_json::from_value(a.clone()).ok())
                .unwrap_or(Api::AnthropicMessages);
            let provider = str_of(m, "provider").unwrap_or("anthropic");
            let mut a = assistant(api, provider, str_of(m, "model").unwrap_or("unknown"), blocks);
            if let (Message::Assistant(a), Some(u)) = (&mut a, m.get("usage")) {
                let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                a.usage = Usage {
                    input: n("input"),
                    output: n("output"),
                    cache_read: n("cacheRead"),
                    cache_write: n("cacheWrite"),
                    ..Usage::default()
                };
            }
            Some(message(a))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, parent: Option<&str>) -> Item {
        Item {
            id: id.to_owned(),
            parent: parent.map(str::to_owned),
            body: EntryBody::Label { target_id: String::new(), label: None },
            at: None,
        }
    }

    #[test]
    fn parents_skip_past_unconverted_lines_and_loops_end_at_the_root() {
        let skipped = |pairs: &[(&str, Option<&str>)]| -> HashMap<String, Option<String>> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned))).collect()
        };
        // kept k1 <- s1 <- s2 <- item; a loop s3 <-> s4; s5 at the root.
        let redirect = skipped(&[
            ("s1", Some("k1")),
            ("s2", Some("s1")),
            ("s3", Some("s4")),
            ("s4", Some("s3")),
            ("s5", None),
        ]);
        let mut items = vec![
            item("a", Some("s2")),
            item("b", Some("s1")),
            item("c", Some("s3")),
            item("d", Some("s5")),
            item("e", Some("k1")),
            item("f", None),
        ];
        follow(&mut items, &redirect);
        let parents: Vec<Option<&str>> = items.iter().map(|i| i.parent.as_deref()).collect();
        assert_eq!(parents, [Some("k1"), Some("k1"), None, None, Some("k1"), None]);

        // A long chain resolves in one pass, not a walk per entry.
        let n = 50_000;
        let redirect: HashMap<String, Option<String>> =
            (1..n).map(|i| (format!("s{i}"), Some(format!("s{}", i - 1)))).collect();
        let mut items: Vec<Item> =
            (1..n).map(|i| item(&format!("x{i}"), Some(&format!("s{i}")))).collect();
        follow(&mut items, &redirect);
        assert!(items.iter().all(|i| i.parent.as_deref() == Some("s0")));
    }
}
