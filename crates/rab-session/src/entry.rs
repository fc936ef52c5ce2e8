//! The on-disk format: one JSON object per line. The first line is the [`Header`];
//! every other line is an [`Entry`] with `id`, `parentId`, `timestamp` and `type`.
//!
//! ```text
//! {"type":"session","version":1,"id":"019…","cwd":"/work/p","timestamp":"2026-…Z"}
//! {"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"…","message":{"role":"user",…}}
//! {"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"…","message":{"role":"assistant",…}}
//! ```

use rab_ai::{Message, ThinkingLevel, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Current format version, written in every header.
pub const FORMAT_VERSION: u32 = 1;

/// The first line of a tape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Format version.
    pub version: u32,
    /// Session id (UUIDv7).
    pub id: String,
    /// Working directory the session belongs to.
    pub cwd: String,
    /// Creation time, RFC 3339.
    pub timestamp: String,
    /// Path of the session this one was forked or handed off from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// What an entry records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum EntryBody {
    /// A conversation message (user, assistant or tool result).
    Message {
        /// The message.
        message: Message,
        /// Tool-specific data of a tool result (diffs, exit codes), for display.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// The model was switched.
    ModelChange {
        /// Provider name.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// The thinking level was changed.
    ThinkingLevelChange {
        /// The new level.
        thinking_level: ThinkingLevel,
    },
    /// Older entries were summarised.
    Compaction {
        /// The summary that replaces them.
        summary: String,
        /// First entry kept verbatim after the summary.
        first_kept_entry_id: String,
        /// Estimated context tokens before.
        tokens_before: u64,
        /// Estimated context tokens after.
        #[serde(default)]
        tokens_after: u64,
    },
    /// The system prompt and tools the conversation declared at its first request.
    /// They are sent unchanged on every later request (also after a resume); what
    /// changes later is a system message.
    Context {
        /// The system prompt.
        system_prompt: String,
        /// The tools offered at the start.
        tools: Vec<ToolSpec>,
    },
    /// A name for an entry (anchors, session names).
    Label {
        /// The entry labelled.
        target_id: String,
        /// The label; `None` removes it.
        label: Option<String>,
    },
    /// Data of an extension.
    Custom {
        /// Who wrote it.
        custom_type: String,
        /// Anything.
        data: Value,
    },
}

/// One line after the header.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Unique within the file.
    pub id: String,
    /// The entry this one follows; `None` for a root.
    pub parent_id: Option<String>,
    /// When it was written, RFC 3339.
    pub timestamp: String,
    /// What it records.
    #[serde(flatten)]
    pub body: EntryBody,
}

impl Entry {
    /// The message, for message entries.
    pub fn message(&self) -> Option<&Message> {
        match &self.body {
            EntryBody::Message { message, .. } => Some(message),
            EntryBody::ModelChange { .. }
            | EntryBody::ThinkingLevelChange { .. }
            | EntryBody::Compaction { .. }
            | EntryBody::Context { .. }
            | EntryBody::Label { .. }
            | EntryBody::Custom { .. } => None,
        }
    }
}

/// Every field any entry type has, read in one pass. Deriving `Deserialize` on
/// [`Entry`] with a flattened, tagged body makes serde buffer each line into an
/// intermediate tree first, which costs a quarter of the load time of a large tape.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    timestamp: String,
    message: Option<Message>,
    details: Option<Value>,
    provider: Option<String>,
    model_id: Option<String>,
    thinking_level: Option<ThinkingLevel>,
    summary: Option<String>,
    first_kept_entry_id: Option<String>,
    tokens_before: Option<u64>,
    tokens_after: Option<u64>,
    target_id: Option<String>,
    label: Option<String>,
    system_prompt: Option<String>,
    tools: Option<Vec<ToolSpec>>,
    custom_type: Option<String>,
    data: Option<Value>,
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let r = RawEntry::deserialize(d)?;
        let need = |v: Option<String>, field: &'static str| {
            v.ok_or_else(|| D::Error::missing_field(field))
        };
        let body = match r.kind.as_str() {
            "message" => EntryBody::Message {
                message: r.message.ok_or_else(|| D::Error::missing_field("message"))?,
                details: r.details,
            },
            "model_change" => EntryBody::ModelChange {
                provider: need(r.provider, "provider")?,
                model_id: need(r.model_id, "modelId")?,
            },
            "thinking_level_change" => EntryBody::ThinkingLevelChange {
                thinking_level: r
                    .thinking_level
                    .ok_or_else(|| D::Error::missing_field("thinkingLevel"))?,
            },
            "compaction" => EntryBody::Compaction {
                summary: need(r.summary, "summary")?,
                first_kept_entry_id: need(r.first_kept_entry_id, "firstKeptEntryId")?,
                tokens_before: r.tokens_before.unwrap_or(0),
                tokens_after: r.tokens_after.unwrap_or(0),
            },
            "context" => EntryBody::Context {
                system_prompt: need(r.system_prompt, "systemPrompt")?,
                tools: r.tools.unwrap_or_default(),
            },
            "label" => {
                EntryBody::Label { target_id: need(r.target_id, "targetId")?, label: r.label }
            }
            "custom" => EntryBody::Custom {
                custom_type: need(r.custom_type, "customType")?,
                data: r.data.unwrap_or(Value::Null),
            },
            other => {
                return Err(D::Error::unknown_variant(
                    other,
                    &[
                        "message",
                        "model_change",
                        "thinking_level_change",
                        "compaction",
                        "context",
                        "label",
                        "custom",
                    ],
                ));
            }
        };
        Ok(Entry { id: r.id, parent_id: r.parent_id, timestamp: r.timestamp, body })
    }
}
