//! The `read` tool (skeleton, to be implemented).

use rab_agent::{Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// The `read` tool.
pub struct Read {
    #[allow(dead_code)]
    ws: Workspace,
}

impl Read {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `read`.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path.
    pub path: String,
}

impl Tool for Read {
    type Args = Args;
    const NAME: &'static str = "read";

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    async fn run(&self, _args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model("not implemented".to_owned()))
    }
}
