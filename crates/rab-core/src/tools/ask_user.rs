//! `ask_user`: the model asks the person a question (with suggested answers) and waits
//! for the answer. Only an interactive session can answer; headless, the tool returns
//! an error telling the model to decide itself and say what it assumed.

use std::sync::Arc;

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::gate::{Approval, ApprovalKind, ApprovalRequest, Approver};

/// Most suggested answers shown.
const MAX_OPTIONS: usize = 6;

/// Asks the user through the session's approver.
pub struct AskUser(Arc<dyn Approver>);

impl AskUser {
    /// Questions go to `approver` (the UI or REPL; headless: nobody).
    pub fn new(approver: Arc<dyn Approver>) -> Self {
        Self(approver)
    }
}

/// Arguments of `ask_user`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// The question.
    pub question: String,
    /// Suggested answers (max 6); the user may also type one.
    pub options: Option<Vec<String>>,
}

impl Tool for AskUser {
    type Args = Args;
    const NAME: &'static str = "ask_user";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Ask the user a question when a decision is theirs (interactive sessions only).".to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.question.trim().is_empty() {
            return Err(ToolError::Model("question is empty".into()));
        }
        let options: Vec<String> =
            args.options.unwrap_or_default().into_iter().take(MAX_OPTIONS).collect();
        let request = ApprovalRequest {
            kind: ApprovalKind::Question {
                question: args.question.clone(),
                options: options.clone(),
            },
            tool: Self::NAME.to_owned(),
            call_id: cx.call_id.clone(),
            level: Self::LEVEL,
            arguments: json!({"question": args.question, "options": options}),
            preview: Some(args.question.clone()),
            reason: "the agent has a question".into(),
            rule: String::new(),
            advice: None,
        };
        match self.0.approve(request, &cx.cancel).await {
            Approval::Answer(text) => Ok(ToolOutput::text(format!("The user answered: {text}"))),
            Approval::Once | Approval::Always => Ok(ToolOutput::text(format!(
                "The user answered: {}",
                options.first().map_or("yes", String::as_str)
            ))),
            Approval::Deny(_) => Err(ToolError::Model("the user declined to answer".into())),
            Approval::Unavailable => Err(ToolError::Model(
                "nobody can answer in a headless run: decide yourself and say what you assumed"
                    .into(),
            )),
        }
    }
}
