//! Streamable HTTP against rmcp's own server on 127.0.0.1, served with hyper.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use hyper_util::rt::TokioIo;
use pretty_assertions::assert_eq;
use rab_mcp::{McpManager, ServerConfig, ServerState, Transport};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;

use super::*;

#[derive(Clone)]
struct Hello;

impl ServerHandler for Hello {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {}});
        let schema = Arc::new(schema.as_object().unwrap().clone());
        Ok(ListToolsResult::with_all_items(vec![Tool::new("hello", "Says hello.", schema)]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("hello over http")]).into())
    }
}

/// Serves `Hello` on a loopback port, recording each request's Authorization header.
async fn serve_hello() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let service = StreamableHttpService::new(
        || Ok(Hello),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let recorded = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            let recorded = Arc::clone(&recorded);
            let handler = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let auth = request.headers().get("authorization");
                let auth = auth.map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
                recorded.lock().unwrap().push(auth);
                let service = service.clone();
                async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler),
            );
        }
    });
    (addr, seen)
}

fn http(name: &str, url: String, headers: &[(&str, &str)], is_legacy_sse: bool) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Http {
            url,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect::<BTreeMap<_, _>>(),
            is_legacy_sse,
        },
        source: PathBuf::from("/test/mcp.json"),
        startup_timeout: None,
        tool_timeout: None,
        disabled: false,
        problem: None,
    }
}

#[tokio::test]
async fn streamable_http_sends_the_configured_headers() {
    let (addr, seen) = serve_hello().await;
    let config =
        http("web", format!("http://{addr}/mcp"), &[("Authorization", "Bearer t0ken")], false);
    let manager = start_ready(vec![config]).await;
    assert_eq!(state(&manager, "web"), ServerState::Ready);
    // No resources capability: no resource tools.
    let names: Vec<String> = manager.tool_source().tools().iter().map(|t| t.spec().name).collect();
    assert_eq!(names, ["mcp__web__hello"]);
    let out = call(&manager.tool_source(), "mcp__web__hello", json!({})).await.unwrap();
    assert_eq!(text(&out), "hello over http");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|auth| auth == "Bearer t0ken"), "{seen:?}");
}

#[tokio::test]
async fn an_unreachable_legacy_sse_server_explains_what_to_do() {
    // A port nothing listens on: bind one, then free it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/sse");
    let manager = McpManager::start(vec![http("old", url.clone(), &[], true)], options());
    assert!(manager.wait_ready(PATIENCE).await);
    let ServerState::Failed(why) = state(&manager, "old") else {
        panic!("{:?}", manager.servers())
    };
    assert!(why.contains("legacy SSE"), "{why}");
    assert!(why.contains("streamable HTTP endpoint"), "{why}");
    assert!(why.contains(&format!("\"args\": [\"mcp-remote\", \"{url}\"]")), "{why}");
}
