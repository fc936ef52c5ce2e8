//! A custom rab with one compile-time extension: a `hello` tool the model can call and
//! a `/hello` command (also `,hello`). The tool shows what a tool can give besides its
//! spec: a label and its own drawing of calls and results in the terminal UI, and
//! guidelines for the system prompt. The extension's hook shows the cancellation
//! token: a call for `patience` waits until the run is interrupted. Its context
//! transform prunes what the model is sent: the output of tool calls older than the
//! newest two is replaced by a one-line note (the session keeps it whole). Build it with
//! `cargo build -p rab --example hello_extension` and run it like `rab`.

use std::sync::Arc;

use rab::agent::{
    AgentTool, BoxFuture, HookDecision, Tool, ToolContext, ToolError, ToolLevel, ToolOutput,
};
use rab::ai::{Content, Message, ToolCall, ToolResultMessage};
use rab::core::{Command, CommandOutcome, Extension, command};
use tokio_util::sync::CancellationToken;

/// The extension.
struct Hello;

impl Extension for Hello {
    fn name(&self) -> &str {
        "hello"
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        vec![Arc::new(Greet)]
    }

    fn has_tool_hooks(&self) -> bool {
        true
    }

    fn before_tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        _tool: &'a dyn AgentTool,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        Box::pin(async move {
            if call.arguments["name"] != "patience" {
                return HookDecision::Continue;
            }
            // Waits for the interrupt (saying so), and leaves a mark that it saw it.
            let _ = std::fs::write("hook-is-waiting", "");
            tokio::select! {
                () = cancel.cancelled() => {
                    let _ = std::fs::write("hook-saw-the-interrupt", "");
                    HookDecision::Block("interrupted while waiting".into())
                }
                () = tokio::time::sleep(std::time::Duration::from_secs(60)) => {
                    HookDecision::Continue
                }
            }
        })
    }

    fn has_context_transform(&self) -> bool {
        true
    }

    fn transform_context<'a>(
        &'a self,
        messages: &'a [Message],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Message>>> {
        Box::pin(async move {
            let results: Vec<usize> = (0..messages.len())
                .filter(|&i| matches!(messages[i], Message::ToolResult(_)))
                .collect();
            let old = results.len().checked_sub(2).filter(|n| *n > 0)?;
            let mut pruned = messages.to_vec();
            for &i in &results[..old] {
                if let Message::ToolResult(r) = &mut pruned[i] {
                    let chars = r.text().len();
                    r.content = vec![Content::text(format!(
                        "[output of {} pruned by the hello extension: {chars} characters]",
                        r.tool_name
                    ))];
                }
            }
            Some(pruned)
        })
    }

    fn commands(&self) -> Vec<Command> {
        vec![command("hello", "Greet someone: /hello NAME", |args, cx| {
            let name = if args.is_empty() { "world" } else { args };
            let messages = cx.session.agent().messages().len();
            CommandOutcome::Info(format!("hello, {name} ({messages} messages so far)"))
        })]
    }
}

/// Arguments of the `hello` tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// The `hello` tool.
struct Greet;

impl Tool for Greet {
    type Args = GreetArgs;
    const NAME: &'static str = "hello";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Greet someone by name.".into()
    }

    fn label(&self) -> Option<String> {
        Some("Greeter".into())
    }

    fn render_call(&self, args: &GreetArgs, _width: usize) -> Option<Vec<String>> {
        Some(vec![format!("Greeter → {}", args.name), "(a friendly hello)".into()])
    }

    fn render_result(
        &self,
        result: &ToolResultMessage,
        _details: Option<&serde_json::Value>,
        _width: usize,
    ) -> Option<Vec<String>> {
        Some(vec![format!("✉ {}", result.text())])
    }

    fn prompt_guidelines(&self) -> Option<String> {
        Some("Greet people with hello before you answer their first question.".into())
    }

    async fn run(&self, args: GreetArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("Hello, {}! (from the hello extension)", args.name)))
    }
}

fn main() -> std::process::ExitCode {
    rab::main_with(vec![Arc::new(Hello)])
}
