//! The `ls` tool (skeleton, to be implemented).

use rab_agent::{Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// The `ls` tool.
pub struct Ls {
    #[allow(dead_code)]
    ws: Workspace,
}

impl Ls {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `ls`.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path.
    pub path: String,
}

impl Tool for Ls {
    type Args = Args;
    const NAME: &'static str = "ls";

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    async fn run(&self, _args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model("not implemented".to_owned()))
    }
}
