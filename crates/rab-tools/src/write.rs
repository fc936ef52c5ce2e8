//! The `write` tool (skeleton, to be implemented).

use rab_agent::{Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// The `write` tool.
pub struct Write {
    #[allow(dead_code)]
    ws: Workspace,
}

impl Write {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `write`.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path.
    pub path: String,
}

impl Tool for Write {
    type Args = Args;
    const NAME: &'static str = "write";

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    async fn run(&self, _args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model("not implemented".to_owned()))
    }
}
