//! `brief`: a message to the user — a progress report or the outcome of a long task —
//! shown prominently in the UI, with files attached by path (their size and whether
//! they are images are looked up so the UI can show them).

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::Workspace;
use crate::sandbox::Access;

/// Most attachments per message.
const MAX_ATTACHMENTS: usize = 10;

/// Sends a message to the user.
pub struct Brief {
    ws: Workspace,
}

impl Brief {
    /// The tool rooted at the workspace (attachment paths resolve against it).
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `brief`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// The message (markdown).
    pub message: String,
    /// Short status, e.g. "done", "blocked".
    pub status: Option<String>,
    /// File paths to attach.
    pub attachments: Option<Vec<String>>,
}

impl Tool for Brief {
    type Args = Args;
    const NAME: &'static str = "brief";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn summary(&self, args: &Args) -> Option<String> {
        Some(args.status.clone().unwrap_or_default())
    }

    fn description(&self) -> String {
        "Send the user a short message (progress or outcome), optionally attaching files."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.message.trim().is_empty() {
            return Err(ToolError::Model("message is empty".into()));
        }
        let paths = args.attachments.unwrap_or_default();
        if paths.len() > MAX_ATTACHMENTS {
            return Err(ToolError::Model(format!("at most {MAX_ATTACHMENTS} attachments")));
        }
        let mut attachments = Vec::new();
        for p in &paths {
            let path = self.ws.resolve_checked(p, Access::Read)?;
            let meta = tokio::fs::metadata(&path).await.map_err(|e| {
                ToolError::Model(format!("cannot attach {}: {e}", self.ws.display(&path)))
            })?;
            let ext =
                path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
            let is_image = matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp");
            attachments.push(
                json!({"path": self.ws.display(&path), "size": meta.len(), "isImage": is_image}),
            );
        }
        let sent_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let details = json!({
            "message": args.message,
            "status": args.status,
            "sentAt": sent_at,
            "attachments": attachments,
        });
        Ok(ToolOutput::text("delivered to the user").with_details(details))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rab_agent::AgentTool;

    #[tokio::test]
    async fn attachments_are_described_and_missing_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), [0u8; 12]).unwrap();
        let tool = Brief::new(Workspace::new(dir.path()));
        let out = tool
            .execute(
                serde_json::json!({"message": "Done.", "status": "done", "attachments": ["shot.png"]}),
                ToolContext::detached("c"),
            )
            .await
            .unwrap();
        let d = out.details.unwrap();
        assert_eq!(
            d["attachments"],
            serde_json::json!([{"path": "shot.png", "size": 12, "isImage": true}])
        );
        let err = tool
            .execute(
                serde_json::json!({"message": "x", "attachments": ["nope.txt"]}),
                ToolContext::detached("c"),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("cannot attach nope.txt"), "{err}");
    }
}
