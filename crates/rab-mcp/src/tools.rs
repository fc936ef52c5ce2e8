//! MCP tools as rab tools: `mcp__<server>__<tool>`, their specs, calls and results.
//!
//! A call looks its server up when it runs, so a restarted server serves calls again
//! without the agent re-reading its tools. Servers' annotations (`readOnlyHint` …) are
//! not trusted: every MCP tool is [`ToolLevel::Execute`] for permissions.

use std::collections::HashSet;
use std::sync::Arc;

use rab_agent::{
    AgentTool, BoxFuture, ToolContext, ToolError, ToolLevel, ToolOutput, ToolSource,
    portable_tool_name, tool_name_with_hash,
};
use rab_ai::{Content, ToolSpec};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value, json};

use crate::manager::{McpManager, ServerState, Shared};
use crate::{connect, resources};

/// Most text of one result sent to the model.
pub(crate) const MAX_TEXT: usize = 50 * 1024;

/// The tools of every ready server, read again by the agent whenever the version changes.
pub(crate) struct McpToolSource {
    manager: McpManager,
}

impl McpToolSource {
    pub(crate) fn new(manager: McpManager) -> Self {
        Self { manager }
    }
}

impl ToolSource for McpToolSource {
    fn version(&self) -> u64 {
        self.manager.version()
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        build(self.manager.shared())
    }
}

/// The tools now: every ready server's, then the resource tools if any ready server
/// offers resources.
fn build(shared: &Arc<Shared>) -> Vec<Arc<dyn AgentTool>> {
    let mut out: Vec<Arc<dyn AgentTool>> = Vec::new();
    let mut names = HashSet::new();
    let mut has_resources = false;
    let slots = shared.slots();
    for slot in slots.iter().filter(|s| s.state == ServerState::Ready) {
        let Some(live) = &slot.live else { continue };
        has_resources |= live.has_resources;
        for tool in &live.tools {
            let mut name = tool_name(&slot.config.name, &tool.name);
            if !names.insert(name.clone()) {
                // Two tools that differ only in characters replaced by `_`.
                name =
                    tool_name_with_hash(&name, &format!("{}/{}#dup", slot.config.name, tool.name));
                names.insert(name.clone());
            }
            let spec = ToolSpec {
                name,
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                parameters: object_schema(Value::Object((*tool.input_schema).clone())),
                grammar: None,
                server: None,
            };
            // The server's name for people (`title`, or the annotations' older one).
            let title = tool
                .title
                .clone()
                .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
                .filter(|t| !t.trim().is_empty());
            out.push(Arc::new(McpTool {
                shared: Arc::clone(shared),
                server: slot.config.name.clone(),
                tool: tool.name.to_string(),
                spec,
                title,
            }));
        }
    }
    drop(slots);
    if has_resources {
        out.push(Arc::new(resources::ListResources::new(Arc::clone(shared))));
        out.push(Arc::new(resources::ReadResource::new(Arc::clone(shared))));
    }
    out
}

/// The longest a tool call waits for lists its server said changed.
const LIST_SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

/// `mcp__<server>__<tool>` with characters outside `[A-Za-z0-9_-]` replaced by `_`,
/// cut to 64 characters with a stable hash of the full name when longer.
pub fn tool_name(server: &str, tool: &str) -> String {
    portable_tool_name(&format!("mcp__{server}__{tool}"), &format!("{server}/{tool}"))
}

/// The server's part of its tools' names (characters outside `[A-Za-z0-9_-]` as `_`),
/// or `None` when it would be ambiguous: with `__` in it, or `_` at either end, a rule
/// `mcp__gh` would cover the tools of a server named `gh__x` or `gh_` too.
pub fn server_key(server: &str) -> Option<String> {
    let key: String = server
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    let ambiguous =
        key.is_empty() || key.contains("__") || key.starts_with('_') || key.ends_with('_');
    (!ambiguous).then_some(key)
}

/// The schema as an object schema: `"type": "object"` and at least empty `properties`.
pub(crate) fn object_schema(schema: Value) -> Value {
    let mut map = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("type".into(), json!("object"));
    if !map.get("properties").is_some_and(Value::is_object) {
        map.insert("properties".into(), json!({}));
    }
    Value::Object(map)
}

/// One server tool.
struct McpTool {
    shared: Arc<Shared>,
    server: String,
    /// The server's own name for it.
    tool: String,
    spec: ToolSpec,
    /// What the server calls it for people.
    title: Option<String>,
}

impl AgentTool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn name(&self) -> String {
        self.spec.name.clone()
    }

    fn label(&self) -> Option<String> {
        self.title.as_ref().map(|t| format!("{t} ({})", self.server))
    }

    fn level(&self) -> ToolLevel {
        ToolLevel::Execute
    }

    fn execute(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments = match arguments {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return Err(ToolError::Model(format!(
                        "arguments for {} must be a JSON object, not {other}",
                        self.spec.name
                    )));
                }
            };
            let (peer, timeout) =
                self.shared.peer_and_timeout(&self.server).map_err(ToolError::Model)?;
            let params = CallToolRequestParams::new(self.tool.clone()).with_arguments(arguments);
            let result = tokio::select! {
                biased;
                () = cx.cancel.cancelled() => return Err(ToolError::Model("cancelled".into())),
                result = tokio::time::timeout(timeout, peer.call_tool(params)) => result,
            };
            let Ok(result) = result else {
                return Err(ToolError::Model(format!(
                    "MCP server `{}`: `{}` did not answer within {} s (its `toolTimeout`, in \
                     ms, in the server's config raises the limit; the default is {} s)",
                    self.server,
                    self.tool,
                    timeout.as_secs(),
                    crate::manager::DEFAULT_TOOL_TIMEOUT.as_secs()
                )));
            };
            let result = result.map_err(|e| {
                ToolError::Model(format!(
                    "MCP server `{}`: calling `{}` failed: {}",
                    self.server,
                    self.tool,
                    connect::describe_service_error(&self.server, &e)
                ))
            })?;
            // A call that made the server change its lists: wait (briefly) for the new
            // lists, so the model's next request offers them.
            self.shared.lists.settle(LIST_SETTLE).await;
            let details = json!({"server": self.server, "tool": self.tool});
            convert(result).map(|out| out.with_details(details))
        })
    }
}

/// A tool result as rab output: text and images kept, other content described, text
/// cut to [`MAX_TEXT`]; `isError` becomes a model error.
pub(crate) fn convert(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut content: Vec<Content> = result.content.into_iter().map(block).collect();
    if content.is_empty()
        && let Some(structured) = result.structured_content
    {
        content.push(Content::text(structured.to_string()));
    }
    cap(&mut content);
    if result.is_error == Some(true) {
        let text = Content::join_text(&content);
        return Err(ToolError::Model(if text.is_empty() {
            "the tool reported an error without a message".into()
        } else {
            text
        }));
    }
    Ok(ToolOutput { content, details: None })
}

fn block(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(text) => Content::text(text.text),
        ContentBlock::Image(image) => {
            Content::Image { mime_type: image.mime_type, data: image.data }
        }
        ContentBlock::Audio(audio) => Content::text(format!(
            "[audio ({}, {} bytes of base64) not shown: rab does not pass audio to the model]",
            audio.mime_type,
            audio.data.len()
        )),
        ContentBlock::ResourceLink(link) => {
            Content::text(format!("[resource: {} ({})]", link.uri, link.name))
        }
        ContentBlock::Resource(embedded) => resource_content(embedded.resource),
        other => Content::text(format!("[unsupported MCP content: {other:?}]")),
    }
}

/// A resource's contents: its text, an image, or a note for other binary data.
pub(crate) fn resource_content(contents: ResourceContents) -> Content {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => Content::text(text),
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
            match mime_type.filter(|m| m.starts_with("image/")) {
                Some(mime_type) => Content::Image { mime_type, data: blob },
                None => Content::text(format!(
                    "[binary resource {uri} ({} bytes of base64) not shown]",
                    blob.len()
                )),
            }
        }
        other => Content::text(format!("[unsupported resource contents: {other:?}]")),
    }
}

/// Cuts the text blocks to [`MAX_TEXT`] bytes in all, saying so in a note.
pub(crate) fn cap(content: &mut Vec<Content>) {
    let total: usize = content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.len(),
            Content::Image { .. } => 0,
        })
        .sum();
    if total <= MAX_TEXT {
        return;
    }
    let mut left = MAX_TEXT;
    content.retain_mut(|c| match c {
        Content::Text { text } => {
            if left == 0 {
                return false;
            }
            if text.len() > left {
                let mut end = left;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
            }
            left -= text.len();
            true
        }
        Content::Image { .. } => true,
    });
    content.push(Content::text(format!(
        "[output cut: the tool returned {} KB of text; only the first {} KB are shown]",
        total / 1024,
        MAX_TEXT / 1024
    )));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_are_sanitised_and_capped_with_a_stable_hash() {
        assert_eq!(tool_name("test", "echo"), "mcp__test__echo");
        assert_eq!(tool_name("my server", "get.file"), "mcp__my_server__get_file");
        // A server's name that would make its tools look like another server's.
        assert_eq!(server_key("my server").as_deref(), Some("my_server"));
        for bad in ["gh__evil", "gh_", "_gh", "gh .", "", "a. b"] {
            assert_eq!(server_key(bad), None, "{bad}");
        }
        let long = tool_name("github", &"x".repeat(80));
        assert_eq!(long.len(), 64);
        assert_eq!(long, tool_name("github", &"x".repeat(80)));
        assert_ne!(long, tool_name("github", &"x".repeat(81)));
        assert!(long.starts_with("mcp__github__xxx"));
    }

    #[test]
    fn schemas_become_object_schemas() {
        assert_eq!(object_schema(json!({})), json!({"type": "object", "properties": {}}));
        let full = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(object_schema(full.clone()), full);
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let mut content = vec![Content::text("é".repeat(MAX_TEXT)), Content::text("more")];
        cap(&mut content);
        assert_eq!(content.len(), 2);
        let Content::Text { text } = &content[0] else { panic!() };
        assert_eq!(text.len(), MAX_TEXT);
        assert!(Content::join_text(&content).ends_with("only the first 50 KB are shown]"));
    }

    #[test]
    fn structured_content_is_used_when_there_is_no_content() {
        let mut result = CallToolResult::success(Vec::new());
        result.structured_content = Some(json!({"n": 1}));
        assert_eq!(convert(result).unwrap(), ToolOutput::text(r#"{"n":1}"#));
    }

    #[test]
    fn error_results_are_model_errors() {
        let result = CallToolResult::error(vec![ContentBlock::text("boom")]);
        assert_eq!(convert(result), Err(ToolError::Model("boom".into())));
    }
}
