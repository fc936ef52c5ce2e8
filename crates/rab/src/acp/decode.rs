//! One line from the editor, read as the connection and rab's handlers read it, without
//! a connection or a session: for the fuzz targets. The protocol crate frames the line
//! (JSON-RPC) and types the params of each method rab registers a handler for; rab then
//! reads a prompt's blocks and an editor's MCP servers.

use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, LoadSessionRequest, McpServer, NewSessionRequest,
    PromptRequest,
};
use agent_client_protocol::{JsonRpcMessage, RawJsonRpcMessage, TransportFrame};
use serde_json::Value;

use super::convert;

/// The method of a line rab understands, or the error the editor would get.
pub(crate) fn decode_line(line: &str) -> Result<String, String> {
    let (method, params) = match TransportFrame::parse_json(line) {
        TransportFrame::Single(RawJsonRpcMessage::Request(r)) => (r.method, r.params),
        TransportFrame::Single(RawJsonRpcMessage::Notification(n)) => (n.method, n.params),
        TransportFrame::Single(RawJsonRpcMessage::Response(_)) => {
            return Ok("(a response)".into());
        }
        TransportFrame::Malformed { error, .. } => return Err(error.to_string()),
        // The protocol crate may add frame kinds; the connection would not dispatch them.
        _ => return Err("an unknown kind of frame".into()),
    };
    let params = params.map_or(Value::Null, |p| p.into_value());
    let bad = |e: agent_client_protocol::Error| e.to_string();
    match &*method {
        "initialize" => {
            InitializeRequest::parse_message(&method, &params).map_err(bad)?;
        }
        "session/new" => {
            let req = NewSessionRequest::parse_message(&method, &params).map_err(bad)?;
            session(&req.cwd, &req.mcp_servers)?;
        }
        "session/load" => {
            let req = LoadSessionRequest::parse_message(&method, &params).map_err(bad)?;
            session(&req.cwd, &req.mcp_servers)?;
        }
        "session/prompt" => {
            let req = PromptRequest::parse_message(&method, &params).map_err(bad)?;
            let (text, images) = convert::prompt(&req.prompt);
            let is_command = text.starts_with('/') && !text.contains('\n') && images.is_empty();
            if is_command {
                return Ok(format!("{method} (a command)"));
            }
        }
        "session/cancel" => {
            CancelNotification::parse_message(&method, &params).map_err(bad)?;
        }
        _ => return Err(agent_client_protocol::Error::method_not_found().to_string()),
    }
    Ok(method.to_string())
}

/// What `session/new` and `session/load` read before the session starts.
fn session(cwd: &std::path::Path, servers: &[McpServer]) -> Result<(), String> {
    if !cwd.is_absolute() {
        return Err(format!("cwd must be an absolute path, not {}", cwd.display()));
    }
    #[cfg(feature = "mcp")]
    super::mcp_servers(servers, cwd)?;
    #[cfg(not(feature = "mcp"))]
    if !servers.is_empty() {
        return Err("this rab was built without MCP (the `mcp` feature)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_decodes_to_its_method_or_the_error_the_editor_gets() {
        let init = r#"{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}"#;
        assert_eq!(decode_line(init), Ok("initialize".into()));
        let command = r#"{"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "/compact"}]}}"#;
        assert_eq!(decode_line(command), Ok("session/prompt (a command)".into()));
        let relative = r#"{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "rel", "mcpServers": []}}"#;
        assert_eq!(decode_line(relative), Err("cwd must be an absolute path, not rel".into()));
        assert!(decode_line("not json").is_err());
        assert!(decode_line(r#"{"jsonrpc": "2.0", "id": 3, "method": "nope"}"#).is_err());
    }
}
