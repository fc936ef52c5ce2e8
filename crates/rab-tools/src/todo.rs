//! The `todo_write` tool: the model's task list for a multi-step job. Each call replaces
//! the whole list, so the model never has to patch it. The model gets the list back as a
//! compact checklist (`[x]` done, `[>]` in progress, `[ ] ` pending) with a count, and
//! the UI gets it as structured details to render. At most one item may be in progress,
//! which keeps the model working on one thing at a time.

use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};

use rab_agent::{
    ExecutionMode, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Keeps the model's task list.
#[derive(Debug, Default)]
pub struct TodoWrite {
    todos: Mutex<Vec<Todo>>,
}

impl TodoWrite {
    /// The tool, with an empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current list.
    pub fn todos(&self) -> Vec<Todo> {
        self.todos.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Where a task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being worked on (at most one at a time).
    InProgress,
    /// Done.
    Completed,
}

// By hand: derived, the variants' docs would turn a plain string enum into a `oneOf` of
// described constants, three times the bytes on every request.
impl JsonSchema for Status {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Status".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": ["pending", "in_progress", "completed"]})
    }
}

/// One task. The model sends `active_form` (or `activeForm`); the details carry
/// camelCase JSON, `{"content", "status", "activeForm"}`, `activeForm` left out when
/// not given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline, description = "")]
pub struct Todo {
    /// The task, imperative.
    pub content: String,
    /// Where the task stands.
    // The enum says it all in the schema.
    #[schemars(description = "")]
    pub status: Status,
    /// E.g. "Running tests".
    #[serde(
        rename(serialize = "activeForm", deserialize = "active_form"),
        alias = "activeForm",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
}

/// Arguments of `todo_write`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// The whole new list.
    pub todos: Vec<Todo>,
}

impl Tool for TodoWrite {
    type Args = Args;
    const NAME: &'static str = "todo_write";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::None,
        claude_names: &["TodoWrite"],
        covered_by: &[],
        always_full: false,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(format!("{} tasks", args.todos.len()))
    }

    fn description(&self) -> String {
        "Replace your task list for multi-step work (send the whole list); one task \
         in_progress at a time, completed as soon as done."
            .to_owned()
    }

    // Two lists sent in one message replace each other in order.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        validate(&args.todos)?;
        let text = checklist(&args.todos);
        let details = json!({ "todos": args.todos });
        *self.todos.lock().unwrap_or_else(PoisonError::into_inner) = args.todos;
        Ok(ToolOutput::text(text).with_details(details))
    }
}

fn validate(todos: &[Todo]) -> Result<(), ToolError> {
    if let Some(i) = todos.iter().position(|t| t.content.trim().is_empty()) {
        return Err(ToolError::Model(format!(
            "todo {} has empty content; every task needs a description",
            i + 1
        )));
    }
    let active: Vec<&str> = todos
        .iter()
        .filter(|t| t.status == Status::InProgress)
        .map(|t| t.content.as_str())
        .collect();
    if active.len() > 1 {
        return Err(ToolError::Model(format!(
            "only one task may be in_progress, got {}: {}; mark the others pending or completed",
            active.len(),
            active.join(", ")
        )));
    }
    Ok(())
}

/// `[x] a\n[>] b\n[ ] c\n1 of 3 done`.
fn checklist(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "todo list cleared".to_owned();
    }
    let mut out = String::new();
    for todo in todos {
        let mark = match todo.status {
            Status::Pending => "[ ]",
            Status::InProgress => "[>]",
            Status::Completed => "[x]",
        };
        out.push_str(&format!("{mark} {}\n", todo.content.trim()));
    }
    let done = todos.iter().filter(|t| t.status == Status::Completed).count();
    out.push_str(&format!("{done} of {} done", todos.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;
    use serde_json::Value;

    async fn write(tool: &TodoWrite, args: Value) -> Result<ToolOutput, ToolError> {
        tool.execute(args, ToolContext::detached("c")).await
    }

    #[test]
    fn spec_stays_small() {
        let spec = serde_json::to_string(&TodoWrite::new().spec()).unwrap();
        assert!(spec.len() < 650, "{} bytes: {spec}", spec.len());
        assert!(!spec.contains("$ref"), "{spec}");
    }

    #[tokio::test]
    async fn shows_a_checklist_and_gives_the_ui_the_list() {
        let tool = TodoWrite::new();
        let args = json!({"todos": [
            {"content": "a", "status": "completed"},
            {"content": "b", "status": "in_progress", "activeForm": "doing b"},
            {"content": "c", "status": "pending", "active_form": "doing c"},
        ]});
        let out = write(&tool, args).await.unwrap();
        assert_eq!(
            out,
            ToolOutput::text("[x] a\n[>] b\n[ ] c\n1 of 3 done").with_details(json!({"todos": [
                {"content": "a", "status": "completed"},
                {"content": "b", "status": "in_progress", "activeForm": "doing b"},
                {"content": "c", "status": "pending", "activeForm": "doing c"},
            ]}))
        );
    }

    #[tokio::test]
    async fn each_call_replaces_the_whole_list() {
        let tool = TodoWrite::new();
        write(&tool, json!({"todos": [{"content": "a", "status": "pending"}]})).await.unwrap();
        let out = write(&tool, json!({"todos": [{"content": "b", "status": "completed"}]}))
            .await
            .unwrap();
        assert_eq!(out.content, ToolOutput::text("[x] b\n1 of 1 done").content);
        let expected = Todo { content: "b".into(), status: Status::Completed, active_form: None };
        assert_eq!(tool.todos(), [expected]);
        let out = write(&tool, json!({"todos": []})).await.unwrap();
        assert_eq!(out.content, ToolOutput::text("todo list cleared").content);
        assert_eq!(tool.todos(), []);
    }

    #[tokio::test]
    async fn two_tasks_in_progress_are_refused_and_the_list_kept() {
        let tool = TodoWrite::new();
        write(&tool, json!({"todos": [{"content": "a", "status": "pending"}]})).await.unwrap();
        let args = json!({"todos": [
            {"content": "a", "status": "in_progress"},
            {"content": "b", "status": "in_progress"},
        ]});
        let err = write(&tool, args).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model(
                "only one task may be in_progress, got 2: a, b; mark the others pending or \
                 completed"
                    .into()
            )
        );
        assert_eq!(tool.todos().len(), 1);
    }

    #[tokio::test]
    async fn empty_content_or_an_unknown_status_is_refused() {
        let tool = TodoWrite::new();
        let args = json!({"todos": [{"content": "a", "status": "pending"}, {"content": " ", "status": "pending"}]});
        let err = write(&tool, args).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model("todo 2 has empty content; every task needs a description".into())
        );
        let err =
            write(&tool, json!({"todos": [{"content": "a", "status": "done"}]})).await.unwrap_err();
        let ToolError::Model(msg) = err else { panic!("expected a model error") };
        assert!(msg.contains("unknown variant `done`"), "{msg}");
    }
}
