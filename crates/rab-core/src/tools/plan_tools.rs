//! `enter_plan_mode` and `exit_plan_mode`. Plan mode lets only read-only tools run
//! (the permission gate enforces it); leaving it shows the plan to the user, who
//! approves it (ask before edits, or accept edits from now on) or sends it back with
//! what to change.

use std::sync::{Arc, Mutex};

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::gate::{Approval, ApprovalKind, ApprovalRequest, Approver, ModeSwitch};
use crate::permissions::PermissionMode;

/// Switches to plan mode.
pub struct EnterPlanMode {
    mode: Arc<ModeSwitch>,
    before: Arc<Mutex<Option<PermissionMode>>>,
}

/// Leaves plan mode once the user approves the plan.
pub struct ExitPlanMode {
    mode: Arc<ModeSwitch>,
    before: Arc<Mutex<Option<PermissionMode>>>,
    approver: Arc<dyn Approver>,
}

/// Both tools over one mode switch; the user answers through `approver`.
pub fn plan_tools(
    mode: Arc<ModeSwitch>,
    approver: Arc<dyn Approver>,
) -> (EnterPlanMode, ExitPlanMode) {
    let before = Arc::new(Mutex::new(None));
    (
        EnterPlanMode { mode: mode.clone(), before: before.clone() },
        ExitPlanMode { mode, before, approver },
    )
}

/// Arguments of `enter_plan_mode`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct EnterArgs {}

/// Arguments of `exit_plan_mode`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct ExitArgs {
    /// The plan, in markdown.
    pub plan: String,
}

impl Tool for EnterPlanMode {
    type Args = EnterArgs;
    const NAME: &'static str = "enter_plan_mode";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Switch to plan mode for a task that needs exploring and a plan first: only \
         read-only tools run until the user approves the plan given to exit_plan_mode."
            .to_owned()
    }

    async fn run(&self, _args: EnterArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let current = self.mode.get();
        if current == PermissionMode::Plan {
            return Ok(ToolOutput::text("Already in plan mode."));
        }
        if let Ok(mut b) = self.before.lock() {
            *b = Some(current);
        }
        self.mode.set(PermissionMode::Plan);
        Ok(ToolOutput::text(
            "Plan mode: only read-only tools run. Explore, then call exit_plan_mode with the plan.",
        )
        .with_details(json!({"mode": "plan"})))
    }
}

impl Tool for ExitPlanMode {
    type Args = ExitArgs;
    const NAME: &'static str = "exit_plan_mode";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    // Plan mode's way out is never a deferred name the model must look up.
    const FACTS: rab_agent::ToolFacts =
        rab_agent::ToolFacts { always_full: true, ..rab_agent::ToolFacts::NONE };

    fn description(&self) -> String {
        "Present the plan for the user's approval and leave plan mode when approved.".to_owned()
    }

    // Outside plan mode there is nothing to leave: the schema is not sent.
    fn offered(&self) -> bool {
        self.mode.get() == PermissionMode::Plan
    }

    async fn run(&self, args: ExitArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.plan.trim().is_empty() {
            return Err(ToolError::Model("plan is empty: give the plan in markdown".into()));
        }
        let request = ApprovalRequest {
            kind: ApprovalKind::Plan { plan: args.plan.clone() },
            tool: Self::NAME.to_owned(),
            call_id: cx.call_id.clone(),
            level: Self::LEVEL,
            arguments: json!({"plan": args.plan}),
            preview: Some(args.plan.clone()),
            reason: "approve the plan to start".into(),
            rule: String::new(),
            advice: None,
        };
        let next = match self.approver.approve(request, &cx.cancel).await {
            Approval::Once => {
                let before = self.before.lock().ok().and_then(|mut b| b.take());
                before.filter(|m| *m != PermissionMode::Plan).unwrap_or(PermissionMode::Default)
            }
            Approval::Always => PermissionMode::AcceptEdits,
            Approval::Deny(why) => {
                let why = why.map_or(String::new(), |w| format!(": {w}"));
                return Err(ToolError::Model(format!(
                    "the user did not approve the plan{why}; stay in plan mode and revise it"
                )));
            }
            Approval::Answer(why) => {
                let why = format!(": {why}");
                return Err(ToolError::Model(format!(
                    "the user did not approve the plan{why}; stay in plan mode and revise it"
                )));
            }
            Approval::Unavailable => {
                return Err(ToolError::Model(
                    "nobody can approve the plan in a headless run; give the plan as your \
                     answer instead"
                        .into(),
                ));
            }
        };
        self.mode.set(next);
        Ok(ToolOutput::text(format!(
            "The user approved the plan; mode is now {}. Carry it out.",
            next.as_str()
        ))
        .with_details(json!({"mode": next.as_str()})))
    }
}
