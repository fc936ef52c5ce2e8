//! `list_mcp_resources` and `read_mcp_resource`: the model's way to MCP resources.
//! Offered only while some ready server advertises the resources capability. Listing
//! asks the servers each time, so it is never stale.

use std::sync::Arc;

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use rmcp::model::ReadResourceRequestParams;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::manager::{ServerState, Shared};
use crate::{connect, tools};

/// Lists the resources of one or every MCP server.
pub(crate) struct ListResources {
    shared: Arc<Shared>,
}

impl ListResources {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ListArgs {
    /// Only this server's resources; all servers when left out.
    server: Option<String>,
}

impl Tool for ListResources {
    type Args = ListArgs;
    const NAME: &'static str = "list_mcp_resources";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "List the resources (files, documents, records) that connected MCP servers offer: \
         uri, name, MIME type and description, by server. Read one with read_mcp_resource."
            .into()
    }

    async fn run(&self, args: ListArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let servers = resource_servers(&self.shared);
        let servers: Vec<_> = match &args.server {
            Some(name) => {
                let chosen: Vec<_> = servers.iter().filter(|(n, _)| n == name).cloned().collect();
                if chosen.is_empty() {
                    let names: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
                    return Err(ToolError::Model(format!(
                        "no ready MCP server named `{name}` offers resources; servers with \
                         resources: {}",
                        names.join(", ")
                    )));
                }
                chosen
            }
            None => servers,
        };
        let mut out = String::new();
        for (name, peer) in servers {
            let listed = tokio::select! {
                listed = peer.list_all_resources() => listed,
                () = cx.cancel.cancelled() => return Err(ToolError::Model("cancelled".into())),
            };
            out.push_str(&format!("server `{name}`:\n"));
            match listed {
                Ok(resources) if resources.is_empty() => out.push_str("  (no resources)\n"),
                Ok(resources) => {
                    for r in resources {
                        out.push_str(&format!("- {} ({}", r.uri, r.name));
                        if let Some(mime) = &r.mime_type {
                            out.push_str(&format!(", {mime}"));
                        }
                        out.push(')');
                        if let Some(description) = &r.description {
                            out.push_str(&format!(": {description}"));
                        }
                        out.push('\n');
                    }
                }
                Err(e) => out.push_str(&format!(
                    "  listing failed: {}\n",
                    connect::describe_service_error(&name, &e)
                )),
            }
        }
        let mut content = vec![rab_ai::Content::text(out.trim_end())];
        tools::cap(&mut content);
        Ok(ToolOutput { content, details: None })
    }
}

/// Reads one resource of an MCP server.
pub(crate) struct ReadResource {
    shared: Arc<Shared>,
}

impl ReadResource {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ReadArgs {
    /// The MCP server offering the resource.
    server: String,
    /// The resource's URI, as list_mcp_resources shows it.
    uri: String,
}

impl Tool for ReadResource {
    type Args = ReadArgs;
    const NAME: &'static str = "read_mcp_resource";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Read a resource of an MCP server by its URI (see list_mcp_resources). Text comes \
         back as text and images as images; other binary data is only described."
            .into()
    }

    async fn run(&self, args: ReadArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let peer = self.shared.peer(&args.server).map_err(ToolError::Model)?;
        let read = tokio::select! {
            read = peer.read_resource(ReadResourceRequestParams::new(args.uri.clone())) => read,
            () = cx.cancel.cancelled() => return Err(ToolError::Model("cancelled".into())),
        };
        let result = read.map_err(|e| {
            ToolError::Model(format!(
                "MCP server `{}`: reading {} failed: {}",
                args.server,
                args.uri,
                connect::describe_service_error(&args.server, &e)
            ))
        })?;
        let mut content: Vec<_> =
            result.contents.into_iter().map(tools::resource_content).collect();
        if content.is_empty() {
            content.push(rab_ai::Content::text(format!("{} is empty", args.uri)));
        }
        tools::cap(&mut content);
        Ok(ToolOutput { content, details: None })
    }
}

/// The ready servers that advertise resources, with their connections.
fn resource_servers(shared: &Shared) -> Vec<(String, rmcp::service::Peer<rmcp::RoleClient>)> {
    shared
        .slots()
        .iter()
        .filter(|s| s.state == ServerState::Ready)
        .filter_map(|s| {
            let live = s.live.as_ref().filter(|l| l.has_resources)?;
            Some((s.config.name.clone(), live.peer.clone()))
        })
        .collect()
}
