//! A custom rab with one compile-time extension: a `hello` tool the model can call and
//! a `/hello` command (also `,hello`). Build it with
//! `cargo build -p rab --example hello_extension` and run it like `rab`.

use std::sync::Arc;

use rab::agent::{AgentTool, Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use rab::core::{Command, CommandOutcome, Extension, command};

/// The extension.
struct Hello;

impl Extension for Hello {
    fn name(&self) -> &str {
        "hello"
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        vec![Arc::new(Greet)]
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

    async fn run(&self, args: GreetArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("Hello, {}! (from the hello extension)", args.name)))
    }
}

fn main() -> std::process::ExitCode {
    rab::main_with(vec![Arc::new(Hello)])
}
