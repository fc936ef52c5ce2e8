//! The cron tools the model calls.

use std::sync::Arc;

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Scheduler, when};

/// `cron_create`.
pub struct CronCreate(Arc<Scheduler>);
/// `cron_list`.
pub struct CronList(Arc<Scheduler>);
/// `cron_delete`.
pub struct CronDelete(Arc<Scheduler>);

/// The three tools over one scheduler.
pub fn cron_tools(s: &Arc<Scheduler>) -> (CronCreate, CronList, CronDelete) {
    (CronCreate(s.clone()), CronList(s.clone()), CronDelete(s.clone()))
}

/// Arguments of `cron_create`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct CreateArgs {
    /// 5-field cron, UTC, e.g. "*/10 * * * *".
    pub cron: String,
    /// The prompt to run.
    pub prompt: String,
    /// Repeat (default true); false runs once.
    pub recurring: Option<bool>,
}

impl Tool for CronCreate {
    type Args = CreateArgs;
    const NAME: &'static str = "cron_create";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Schedule a prompt to run on a cron schedule while rab is running (interactive \
         sessions only); returns the job id."
            .to_owned()
    }

    async fn run(&self, args: CreateArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let job = self
            .0
            .add(&args.cron, &args.prompt, args.recurring.unwrap_or(true))
            .map_err(ToolError::Model)?;
        let text = format!(
            "scheduled {} ({}); next run {}",
            job.id,
            job.schedule_text(),
            when(job.next_ms)
        );
        Ok(ToolOutput::text(text).with_details(json!({"id": job.id, "nextRun": when(job.next_ms)})))
    }
}

/// Arguments of `cron_list`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct ListArgs {}

impl Tool for CronList {
    type Args = ListArgs;
    const NAME: &'static str = "cron_list";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "List scheduled prompts.".to_owned()
    }

    async fn run(&self, _args: ListArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let jobs = self.0.list();
        if jobs.is_empty() {
            return Ok(ToolOutput::text("no scheduled prompts"));
        }
        let lines: Vec<String> = jobs.iter().map(super::Job::line).collect();
        Ok(ToolOutput::text(lines.join("\n")))
    }
}

/// Arguments of `cron_delete`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct DeleteArgs {
    /// Job id.
    pub id: String,
}

impl Tool for CronDelete {
    type Args = DeleteArgs;
    const NAME: &'static str = "cron_delete";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Delete a scheduled prompt by id.".to_owned()
    }

    async fn run(&self, args: DeleteArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if self.0.remove(&args.id) {
            Ok(ToolOutput::text(format!("deleted {}", args.id)))
        } else {
            let ids: Vec<String> = self.0.list().into_iter().map(|j| j.id).collect();
            Err(ToolError::Model(format!("no job {}; jobs: {}", args.id, ids.join(", "))))
        }
    }
}
