//! The `glob` tool (skeleton, to be implemented).

use rab_agent::{Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// The `glob` tool.
pub struct Glob {
    #[allow(dead_code)]
    ws: Workspace,
}

impl Glob {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `glob`.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path.
    pub path: String,
}

impl Tool for Glob {
    type Args = Args;
    const NAME: &'static str = "glob";

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    async fn run(&self, _args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model("not implemented".to_owned()))
    }
}
