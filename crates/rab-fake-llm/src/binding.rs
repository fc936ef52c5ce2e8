//! Anthropic's preserved thinking, as the fake server enforces it
//! (platform.claude.com/docs/en/build-with-claude/preserved-thinking and
//! …/preserved-thinking/prefix-checks, read 2026-11-24). A thinking block's signature
//! binds it to the `system` prompt, the `tools` (deferred tools count once a
//! `tool_addition` references them) and every message before it, compared by value
//! with `cache_control` markers and earlier thinking blocks left out, and to the
//! thinking block before it (a block taken out of the middle breaks the chain).
//!
//! A replayed block whose prefix changed fails the request with Anthropic's 400, or,
//! with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`, is dropped
//! with every later thinking block and reported in `input_transformations`.

use serde_json::{Value, json};

/// The beta header that allows `block_binding` and adds `input_transformations`.
pub const BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";

/// FNV-1a, printed as 16 hex digits.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// JSON with sorted keys and no `cache_control` (markers are not part of the prefix).
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().filter(|k| *k != "cache_control").collect();
            keys.sort();
            out.push('{');
            for (n, k) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(k) {
                    canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hash_of(v: &Value) -> u64 {
    let mut s = String::new();
    canonical(v, &mut s);
    fnv(s.as_bytes())
}

fn is_thinking(block: &Value) -> bool {
    matches!(block["type"].as_str(), Some("thinking" | "redacted_thinking"))
}

/// A block's signature (`data` of a redacted block).
fn signature_of(block: &Value) -> &str {
    let key = if block["type"] == "redacted_thinking" { "data" } else { "signature" };
    block[key].as_str().unwrap_or_default()
}

/// What a block's prefix is made of, hashed part by part so a mismatch can be named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    system: u64,
    tools: u64,
    messages: u64,
    chain: u64,
}

/// A signature bound to `prefix` for a block whose (client-visible) text is `text`.
pub(crate) fn sign(text: &str, prefix: &Prefix) -> String {
    format!(
        "sig_{:016x}.{:016x}.{:016x}.{:016x}.{:016x}",
        fnv(text.as_bytes()),
        prefix.system,
        prefix.tools,
        prefix.messages,
        prefix.chain
    )
}

/// Parses a bound signature; `None` for the text-only form `sig_<hash>`.
fn parse(sig: &str) -> Option<(u64, Prefix)> {
    let rest = sig.strip_prefix("sig_")?;
    let parts: Vec<u64> =
        rest.split('.').map(|p| u64::from_str_radix(p, 16)).collect::<Result<_, _>>().ok()?;
    match parts.as_slice() {
        [text, system, tools, messages, chain] => Some((
            *text,
            Prefix { system: *system, tools: *tools, messages: *messages, chain: *chain },
        )),
        _ => None,
    }
}

/// The request as the check reads it.
pub(crate) struct Request<'a> {
    body: &'a Value,
    messages: Vec<Value>,
    /// Deferred tools by name.
    deferred: Vec<(&'a str, &'a Value)>,
    system: u64,
    tools: u64,
}

impl<'a> Request<'a> {
    pub(crate) fn new(body: &'a Value) -> Self {
        let tools: &'a [Value] = body["tools"].as_array().map_or(&[], Vec::as_slice);
        let declared: Vec<&Value> =
            tools.iter().filter(|t| t["defer_loading"].as_bool() != Some(true)).collect();
        let deferred = tools
            .iter()
            .filter(|t| t["defer_loading"].as_bool() == Some(true))
            .map(|t| (t["name"].as_str().unwrap_or_default(), t))
            .collect();
        let declared = Value::Array(declared.into_iter().cloned().collect());
        Request {
            body,
            messages: body["messages"].as_array().cloned().unwrap_or_default(),
            deferred,
            system: hash_of(&body["system"]),
            tools: hash_of(&declared),
        }
    }

    /// The prefix of the block at `content[j]` of `messages[i]`, with `chain` the
    /// signature of the thinking block before it.
    fn prefix(&self, i: usize, j: usize, chain: &str) -> Prefix {
        let mut s = String::new();
        for (n, m) in self.messages.iter().enumerate().take(i + 1) {
            if n == i && j == 0 {
                break;
            }
            let blocks: Vec<Value> = match &m["content"] {
                Value::Array(b) => b
                    .iter()
                    .take(if n == i { j } else { usize::MAX })
                    .filter(|b| !is_thinking(b))
                    .cloned()
                    .collect(),
                other => vec![json!({"type": "text", "text": other})],
            };
            canonical(&json!({"role": m["role"], "content": blocks}), &mut s);
            // A deferred tool a message offers is part of what follows it.
            for b in &blocks {
                if b["type"] == "tool_addition"
                    && let Some(name) = b["tool"]["name"].as_str()
                    && let Some((_, spec)) = self.deferred.iter().find(|(n, _)| *n == name)
                {
                    canonical(spec, &mut s);
                }
            }
        }
        Prefix {
            system: self.system,
            tools: self.tools,
            messages: fnv(s.as_bytes()),
            chain: fnv(chain.as_bytes()),
        }
    }

    /// The prefix a reply's first block is bound to: the whole request.
    pub(crate) fn reply_prefix(&self, dropped: &[(usize, usize)]) -> Prefix {
        let n = self.messages.len();
        self.prefix(n, 0, &self.last_signature(n, dropped))
    }

    /// The signature of the last thinking block before message `i` that was kept.
    fn last_signature(&self, i: usize, dropped: &[(usize, usize)]) -> String {
        let mut last = String::new();
        for (n, m) in self.messages.iter().enumerate().take(i) {
            for (k, b) in m["content"].as_array().into_iter().flatten().enumerate() {
                if is_thinking(b) && !dropped.contains(&(n, k)) {
                    last = signature_of(b).to_owned();
                }
            }
        }
        last
    }

    /// Whether the request asked for the beta header.
    fn has_beta(headers: &[(String, String)]) -> bool {
        headers
            .iter()
            .any(|(k, v)| k == "anthropic-beta" && v.split(',').any(|b| b.trim() == BINDING_BETA))
    }

    /// Checks every replayed block. Returns the blocks dropped (`drop_block`), or the
    /// 400 message.
    pub(crate) fn check(
        &self,
        headers: &[(String, String)],
    ) -> Result<Vec<(usize, usize)>, String> {
        let drops =
            self.body["thinking"]["block_binding"]["prefix_mismatch_behavior"] == "drop_block";
        let mut dropped: Vec<(usize, usize)> = Vec::new();
        let mut chain = String::new();
        for (i, m) in self.messages.iter().enumerate() {
            let Some(blocks) = m["content"].as_array() else { continue };
            for (j, b) in blocks.iter().enumerate().filter(|(_, b)| is_thinking(b)) {
                let sig = signature_of(b);
                let path = format!("messages.{i}.content.{j}");
                if !dropped.is_empty() {
                    dropped.push((i, j));
                    continue;
                }
                let Some((text, bound)) = parse(sig) else {
                    chain = sig.to_owned();
                    continue;
                };
                let shown = b["thinking"].as_str().unwrap_or_default();
                if b["type"] == "thinking" && text != fnv(shown.as_bytes()) {
                    return Err(format!("{path}: Invalid `signature` in `thinking` block"));
                }
                let now = self.prefix(i, j, &chain);
                if now == bound {
                    chain = sig.to_owned();
                    continue;
                }
                if drops {
                    dropped.push((i, j));
                    continue;
                }
                return Err(mismatch(&path, &bound, &now, Self::has_beta(headers)));
            }
        }
        Ok(dropped)
    }
}

fn mismatch(path: &str, bound: &Prefix, now: &Prefix, has_beta: bool) -> String {
    let mut message = format!(
        "{path}: Invalid `signature` in `thinking` block. The block is bound to a different \
         conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` \
         to \"drop_block\"."
    );
    if !has_beta {
        message.push_str(&format!(
            " That setting requires the `{BINDING_BETA}` value in the `anthropic-beta` header."
        ));
    }
    message.push_str(if bound.system != now.system {
        " The `system` prompt differs from when the block was created."
    } else if bound.tools != now.tools {
        " The `tools` list differs from when the block was created."
    } else if bound.messages != now.messages {
        " An earlier message differs from when the block was created."
    } else {
        " A thinking block before it was removed or moved."
    });
    message
}

/// The `input_transformations` entries for dropped blocks.
pub(crate) fn transformations(dropped: &[(usize, usize)]) -> Vec<Value> {
    dropped
        .iter()
        .map(|(i, j)| {
            json!({"type": "thinking_dropped", "path": format!("messages.{i}.content.{j}"),
                   "reason": "prefix_binding_mismatch"})
        })
        .collect()
}

/// Whether the request sent the binding beta header.
pub(crate) fn has_binding_beta(headers: &[(String, String)]) -> bool {
    Request::has_beta(headers)
}
