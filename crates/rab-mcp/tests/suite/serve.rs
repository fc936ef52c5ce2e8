//! `rab mcp serve` driven by an rmcp client over an in-process duplex pipe.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use rab_agent::{
    AgentTool, BoxFuture, HookDecision, Tool, ToolContext, ToolError, ToolHook, ToolLevel,
    ToolOutput,
};
use rab_ai::ToolCall;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Upper;

#[derive(Deserialize, JsonSchema)]
struct UpperArgs {
    /// Text to upper-case.
    text: String,
}

impl Tool for Upper {
    type Args = UpperArgs;
    const NAME: &'static str = "upper";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "Upper-case the text.".into()
    }
    async fn run(&self, args: UpperArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.text == "bad" {
            return Err(ToolError::Model("bad text".into()));
        }
        Ok(ToolOutput::text(args.text.to_uppercase()))
    }
}

/// Blocks texts containing "secret"; rewrites "hi" to "hello".
struct Guard;

impl ToolHook for Guard {
    fn before<'a>(
        &'a self,
        call: &'a ToolCall,
        _tool: &'a dyn AgentTool,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        let text = call.arguments["text"].as_str().unwrap_or_default().to_owned();
        Box::pin(async move {
            match text.as_str() {
                t if t.contains("secret") => HookDecision::Block("secrets stay home".into()),
                "hi" => HookDecision::Rewrite(json!({"text": "hello"})),
                _ => HookDecision::Continue,
            }
        })
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).map(|t| t.text.clone()).collect()
}

#[tokio::test]
async fn serves_tools_through_the_hooks() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_io);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Upper)];
    let hooks: Vec<Arc<dyn ToolHook>> = vec![Arc::new(Guard)];
    let server = tokio::spawn(rab_mcp::serve(read, write, tools, hooks, "rab", "9.9.9"));

    let client = ().serve(client_io).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "rab");
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "upper");
    assert_eq!(listed[0].description.as_deref(), Some("Upper-case the text."));
    assert_eq!(listed[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
    assert_eq!(
        serde_json::Value::Object((*listed[0].input_schema).clone()),
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to upper-case."}},
            "required": ["text"]
        })
    );

    let call = |text: &str| {
        CallToolRequestParams::new("upper")
            .with_arguments(json!({"text": text}).as_object().unwrap().clone())
    };
    let result = client.call_tool(call("abc")).await.unwrap();
    assert_eq!((text(&result), result.is_error), ("ABC".into(), Some(false)));
    let result = client.call_tool(call("hi")).await.unwrap();
    assert_eq!(text(&result), "HELLO");
    let result = client.call_tool(call("my secret")).await.unwrap();
    assert_eq!((text(&result), result.is_error), ("secrets stay home".into(), Some(true)));
    let result = client.call_tool(call("bad")).await.unwrap();
    assert_eq!((text(&result), result.is_error), ("bad text".into(), Some(true)));
    assert!(client.call_tool(CallToolRequestParams::new("nope")).await.is_err());

    client.cancel().await.unwrap();
    server.await.unwrap().unwrap();
}
