//! `rab mcp serve`: rab's tools offered to other MCP clients over stdio.
//!
//! Every call goes through the same hooks as in the agent (permissions, user hooks):
//! `before` hooks may block or rewrite it, `after` hooks may replace its result.
//! Cancelling the request (`notifications/cancelled`) cancels the tool.

use std::sync::Arc;

use rab_agent::{AgentTool, HookDecision, ToolContext, ToolError, ToolHook, ToolLevel, UpdateSink};
use rab_ai::{Content, ToolCall, ToolResultMessage};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::Error;

/// Serves `tools` over stdin/stdout until stdin closes.
pub async fn serve_stdio(
    tools: Vec<Arc<dyn AgentTool>>,
    hooks: Vec<Arc<dyn ToolHook>>,
    name: &str,
    version: &str,
) -> Result<(), Error> {
    serve(tokio::io::stdin(), tokio::io::stdout(), tools, hooks, name, version).await
}

/// Serves `tools` over any byte stream pair (stdio, or `tokio::io::duplex` in tests)
/// until the reader ends.
pub async fn serve<R, W>(
    read: R,
    write: W,
    tools: Vec<Arc<dyn AgentTool>>,
    hooks: Vec<Arc<dyn ToolHook>>,
    name: &str,
    version: &str,
) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server =
        RabServer { tools, hooks, info: Implementation::new(name.to_owned(), version.to_owned()) };
    let running = server
        .serve((read, write))
        .await
        .map_err(|e| Error::Serve(format!("the MCP handshake failed: {e}")))?;
    running.waiting().await.map_err(|e| Error::Serve(format!("the server task failed: {e}")))?;
    Ok(())
}

struct RabServer {
    tools: Vec<Arc<dyn AgentTool>>,
    hooks: Vec<Arc<dyn ToolHook>>,
    info: Implementation,
}

impl RabServer {
    /// Runs one call through the hooks and the tool, as the agent loop would.
    async fn call(
        &self,
        tool: &dyn AgentTool,
        mut call: ToolCall,
        context: &RequestContext<RoleServer>,
    ) -> ToolResultMessage {
        let cancel = context.ct.clone();
        for hook in &self.hooks {
            match hook.before(&call, tool, &cancel).await {
                HookDecision::Continue => {}
                HookDecision::Rewrite(arguments) => call.arguments = arguments,
                HookDecision::Block(reason) => {
                    return result(&call, vec![Content::text(reason)], true);
                }
            }
        }
        let cx = ToolContext {
            call_id: call.id.clone(),
            cancel: cancel.clone(),
            updates: UpdateSink::none(),
        };
        let mut message = match tool.execute(call.arguments.clone(), cx).await {
            Ok(output) => result(&call, output.content, false),
            Err(ToolError::Model(text) | ToolError::Fatal(text)) => {
                result(&call, vec![Content::text(text)], true)
            }
        };
        for hook in &self.hooks {
            if let Some(replaced) = hook.after(&call, &message, &cancel).await {
                message = replaced;
            }
        }
        message
    }
}

fn result(call: &ToolCall, content: Vec<Content>, is_error: bool) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content,
        is_error,
    }
}

impl ServerHandler for RabServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.info.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                let schema = match crate::tools::object_schema(spec.parameters) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                let is_read_only = match tool.level() {
                    ToolLevel::ReadOnly => true,
                    ToolLevel::Edit | ToolLevel::Execute | ToolLevel::Network => false,
                };
                rmcp::model::Tool::new(spec.name, spec.description, Arc::new(schema))
                    .annotate(ToolAnnotations::new().read_only(is_read_only))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.iter().find(|t| t.name() == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        let call = ToolCall {
            id: format!("mcp-{}", context.id),
            name: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        };
        let message = self.call(tool.as_ref(), call, &context).await;
        let content = message
            .content
            .into_iter()
            .map(|c| match c {
                Content::Text { text } => ContentBlock::text(text),
                Content::Image { mime_type, data } => ContentBlock::image(data, mime_type),
            })
            .collect();
        let result = match message.is_error {
            true => CallToolResult::error(content),
            false => CallToolResult::success(content),
        };
        Ok(result.into())
    }
}
