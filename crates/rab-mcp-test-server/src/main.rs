//! `rab-mcp-test-server`: a small stdio MCP server for rab's tests and benchmarks, built
//! on rmcp's server side. It must stay dependency-light and deterministic: tests start it
//! dozens of times.
//!
//! Tools: `echo {text}`, `add {a,b}`, `fail {}` (an `isError` result), `crash {}` (writes
//! a line to stderr and exits with code 3), `add_tool {name}` (registers a tool `name`
//! that echoes and a prompt `name`, and sends the tools and prompts list_changed
//! notifications), `env {name}` (an
//! environment variable or `(unset)`), `write_file {path,text}`.
//! Resources: `test://greeting` and `test://config`. Prompt: `review {file, focus?}`.
//!
//! Switches: `RAB_MCP_TEST_TOOLS=N` adds N generated tools with long descriptions and
//! schemas (for size benchmarks); `RAB_MCP_TEST_STARTUP_MS=N` sleeps before serving;
//! `RAB_MCP_TEST_HOSTILE=1` adds `hang {}` (never answers) and `big {mb}` (answers
//! with a text of `mb` MiB).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeResult, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// Tools added with `add_tool` while the server runs.
#[derive(Clone, Default)]
struct TestServer {
    added: Arc<Mutex<Vec<String>>>,
    generated: usize,
    /// `RAB_MCP_TEST_HOSTILE`: the `hang` and `big` tools.
    hostile: bool,
}

fn object(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

fn string_args(names: &[&str]) -> Arc<Map<String, Value>> {
    let properties: Map<String, Value> =
        names.iter().map(|n| ((*n).to_owned(), json!({"type": "string"}))).collect();
    object(json!({"type": "object", "properties": properties, "required": names}))
}

fn builtin_tools() -> Vec<Tool> {
    vec![
        Tool::new("echo", "Echo the text back.", string_args(&["text"]))
            .annotate(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "add",
            "Add two numbers.",
            object(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            })),
        ),
        // No `type` in the schema on purpose: clients must still send an object schema.
        Tool::new("fail", "Always fails with an error result.", object(json!({}))),
        Tool::new("crash", "Writes to stderr and exits with code 3.", object(json!({}))),
        Tool::new(
            "add_tool",
            "Registers a new tool that echoes and a prompt of the same name, and notifies the \
             client that both lists changed.",
            string_args(&["name"]),
        ),
        Tool::new("env", "The value of an environment variable.", string_args(&["name"])),
        Tool::new("write_file", "Writes text to a file.", string_args(&["path", "text"])),
    ]
}

/// A generated tool as large as real ones: a paragraph of description and a schema with
/// several documented properties.
fn generated_tool(i: usize) -> Tool {
    let description = format!(
        "Search the project issue tracker (collection {i}) for issues matching a query. \
         Returns up to `limit` issues with their id, title, state, assignee, labels and the \
         first paragraph of the body, newest first. Use `state` to restrict to open or closed \
         issues and `labels` to require every listed label. Prefer specific queries: broad \
         ones are slow and their results are cut to the first page."
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to search for in titles and bodies."},
            "state": {"type": "string", "enum": ["open", "closed", "all"], "description": "Which issues to include (default open)."},
            "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels every result must carry."},
            "assignee": {"type": "string", "description": "Login of the assignee, or `none` for unassigned issues."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Most results to return (default 20)."}
        },
        "required": ["query"]
    });
    Tool::new(format!("search_issues_{i}"), description, object(schema))
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a Value, ErrorData> {
    args.get(name).ok_or_else(|| ErrorData::invalid_params(format!("missing `{name}`"), None))
}

fn str_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, ErrorData> {
    arg(args, name)?
        .as_str()
        .ok_or_else(|| ErrorData::invalid_params(format!("`{name}` must be a string"), None))
}

fn num_arg(args: &Map<String, Value>, name: &str) -> Result<f64, ErrorData> {
    arg(args, name)?
        .as_f64()
        .ok_or_else(|| ErrorData::invalid_params(format!("`{name}` must be a number"), None))
}

impl TestServer {
    fn added(&self) -> Vec<String> {
        self.added.lock().map(|a| a.clone()).unwrap_or_default()
    }

    async fn call(
        &self,
        name: &str,
        args: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        match name {
            "echo" => Ok(text(str_arg(args, "text")?)),
            "add" => Ok(text((num_arg(args, "a")? + num_arg(args, "b")?).to_string())),
            "hang" if self.hostile => std::future::pending().await,
            "big" if self.hostile => {
                let mb = num_arg(args, "mb")?;
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let bytes = (mb * 1024.0 * 1024.0) as usize;
                Ok(text("x".repeat(bytes)))
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("this tool always fails")])),
            "crash" => {
                eprintln!("test server: crashing on purpose");
                std::process::exit(3);
            }
            "add_tool" => {
                let new = str_arg(args, "name")?.to_owned();
                if let Ok(mut added) = self.added.lock() {
                    added.push(new.clone());
                }
                let _ = context.peer.notify_tool_list_changed().await;
                let _ = context.peer.notify_prompt_list_changed().await;
                Ok(text(format!("added {new}")))
            }
            "env" => {
                let value = std::env::var(str_arg(args, "name")?);
                Ok(text(value.unwrap_or_else(|_| "(unset)".into())))
            }
            "write_file" => match std::fs::write(str_arg(args, "path")?, str_arg(args, "text")?) {
                Ok(()) => Ok(text("written")),
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())])),
            },
            other if self.added().iter().any(|a| a == other) => {
                Ok(text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
            }
            other if other.starts_with("search_issues_") => {
                Ok(text(format!("no issues ({other})")))
            }
            other => Err(ErrorData::invalid_params(format!("unknown tool `{other}`"), None)),
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("rab-mcp-test-server", env!("CARGO_PKG_VERSION")))
            .with_instructions("A test server: echo, add, fail, crash and friends.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = builtin_tools();
        tools.extend((0..self.generated).map(generated_tool));
        if self.hostile {
            tools.push(Tool::new("hang", "Never answers.", object(json!({}))));
            tools.push(Tool::new(
                "big",
                "Answers with MB mebibytes of text.",
                object(json!({"type": "object", "properties": {"mb": {"type": "number"}}})),
            ));
        }
        tools.extend(self.added().into_iter().map(|name| {
            Tool::new(name, "Echoes its text (added at run time).", string_args(&["text"]))
        }));
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, &args, &context).await?.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://greeting", "greeting")
                .with_mime_type("text/plain")
                .with_description("A friendly greeting"),
            Resource::new("test://config", "config").with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = match request.uri.as_str() {
            "test://greeting" => ResourceContents::text("hello from resources", "test://greeting"),
            "test://config" => {
                ResourceContents::text(r#"{"level":3,"name":"test"}"#, "test://config")
                    .with_mime_type("application/json")
            }
            other => {
                return Err(ErrorData::resource_not_found(format!("no resource {other}"), None));
            }
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arguments = vec![
            PromptArgument::new("file").with_description("File to review").with_required(true),
            PromptArgument::new("focus").with_description("What to look at").with_required(false),
        ];
        let mut prompts = vec![Prompt::new("review", Some("Review a file"), Some(arguments))];
        prompts.extend(
            self.added().into_iter().map(|name| Prompt::new(name, Some("Added at run time"), None)),
        );
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if self.added().contains(&request.name) {
            let message = format!("The {} prompt.", request.name);
            return Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, message)]).into()
            );
        }
        if request.name != "review" {
            return Err(ErrorData::invalid_params(format!("no prompt {}", request.name), None));
        }
        let args = request.arguments.unwrap_or_default();
        let file = str_arg(&args, "file")?;
        let focus = args.get("focus").and_then(Value::as_str).unwrap_or("anything");
        let message = format!("Please review {file}, focusing on {focus}.");
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, message)]).into())
    }
}

fn env_number(name: &str) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn main() -> std::io::Result<()> {
    let startup = env_number("RAB_MCP_TEST_STARTUP_MS");
    if startup > 0 {
        std::thread::sleep(Duration::from_millis(startup));
    }
    let server = TestServer {
        added: Arc::default(),
        generated: usize::try_from(env_number("RAB_MCP_TEST_TOOLS")).unwrap_or(0),
        hostile: env_number("RAB_MCP_TEST_HOSTILE") == 1,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let running =
            server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
