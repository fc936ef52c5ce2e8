//! The `bash` tool (skeleton, to be implemented).

use rab_agent::{Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;

/// The `bash` tool.
pub struct Bash {
    #[allow(dead_code)]
    ws: Workspace,
}

impl Bash {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `bash`.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path.
    pub path: String,
}

impl Tool for Bash {
    type Args = Args;
    const NAME: &'static str = "bash";

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    async fn run(&self, _args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model("not implemented".to_owned()))
    }
}
