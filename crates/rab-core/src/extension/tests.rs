use std::sync::Mutex;

use pretty_assertions::assert_eq;
use rab_agent::{
    AgentConfig, DrainMode, StopCause, Tool, ToolContext, ToolError, ToolLevel, ToolOutput,
};
use rab_ai::{Api, Client, Model, RetryPolicy, StreamOptions};
use rab_fake_llm::{FakeLlm, Turn};
use rab_session::Tape;
use serde_json::json;

use super::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

struct Named(&'static str);
impl Tool for Named {
    type Args = NoArgs;
    const NAME: &'static str = "placeholder";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        self.0.into()
    }
    async fn run(&self, _: NoArgs, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.0))
    }
}

/// An extension with a tool, two commands, a blocking hook and an event log.
struct Sample {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Extension for Sample {
    fn name(&self) -> &str {
        self.name
    }
    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        vec![Arc::new(Named(self.name))]
    }
    fn commands(&self) -> Vec<Command> {
        let name = self.name;
        vec![
            command("hello", "says hello", move |args, _| {
                CommandOutcome::Info(format!("hello {args} from {name}"))
            }),
            command(&format!("only-{name}"), "", |_, cx| {
                CommandOutcome::Info(format!("{} commands", cx.extensions.commands().len()))
            }),
        ]
    }
    fn has_tool_hooks(&self) -> bool {
        true
    }
    fn before_tool_call<'a>(
        &'a self,
        _call: &'a ToolCall,
        _tool: &'a dyn AgentTool,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        Box::pin(async { HookDecision::Block(format!("blocked by {}", self.name)) })
    }
    fn on_event(&self, event: &Lifecycle<'_>) {
        let text = match event {
            Lifecycle::SessionStart { source, .. } => format!("start {source}"),
            Lifecycle::Prompt { text } => format!("prompt {text}"),
            Lifecycle::AgentEnd => "end".into(),
            Lifecycle::SessionEnd { reason } => format!("session end {reason}"),
        };
        self.log.lock().unwrap().push(text);
    }
}

fn two() -> (Extensions, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let exts = Extensions::new(vec![
        Arc::new(Sample { name: "first", log: log.clone() }),
        Arc::new(Sample { name: "second", log: log.clone() }),
    ]);
    (exts, log)
}

#[test]
fn the_first_tool_and_command_of_a_name_win_and_each_conflict_is_reported_once() {
    let (exts, _) = two();
    assert_eq!(exts.tools().len(), 1);
    assert_eq!(exts.tools()[0].spec().description, "first");
    let commands = exts.commands();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["hello", "only-first", "only-second"]);
    assert_eq!(
        exts.warnings(),
        [
            "tool placeholder of extension second is left out: extension first already provides it",
            "command /hello of extension second is left out: extension first already provides it",
        ]
    );
}

#[test]
fn slash_and_comma_name_the_same_commands_and_other_lines_are_not_commands() {
    let (exts, _) = two();
    assert_eq!(
        exts.parse("/hello  you ").map(|(c, a)| (c.name, a)),
        Some(("hello".to_owned(), "you"))
    );
    assert_eq!(
        exts.parse(",hello you").map(|(c, a)| (c.name, a)),
        Some(("hello".to_owned(), "you"))
    );
    assert!(exts.parse(",ls -la").is_none(), "unknown after a comma: for the shell");
    assert!(exts.parse(",,hello").is_none());
    assert!(exts.parse("//hello").is_none());
    assert!(exts.parse("say /hello").is_none());
    assert!(exts.is_command_line("/nope"));
    assert!(!exts.is_command_line(",nope"));
    assert!(!exts.is_command_line("//nope"));
}

fn config(llm: &FakeLlm) -> AgentConfig {
    AgentConfig {
        model: Model::custom("test-model", "anthropic", Api::AnthropicMessages, &llm.url()),
        options: StreamOptions {
            api_key: Some("k".into()),
            retry: RetryPolicy::none(),
            ..Default::default()
        },
        max_turns: None,
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    }
}

#[tokio::test]
async fn commands_run_against_the_session_and_hooks_and_events_reach_the_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("placeholder", json!({})), Turn::text("done")]);
    let (exts, log) = two();
    let exts = Arc::new(exts);
    let tape = Tape::create(dir.path(), std::path::Path::new("/p"), None);
    let (mut session, _) = AgentSession::new(
        Arc::new(Client::new()),
        config(&llm),
        "sys".into(),
        exts.tools().to_vec(),
        tape,
    )
    .unwrap();
    session.set_extensions(exts.clone());
    let out = exts.run("/hello there", &mut session, &());
    assert!(matches!(out, Some(CommandOutcome::Info(ref t)) if t == "hello there from first"));
    let out = exts.run(",only-second", &mut session, &());
    assert!(matches!(out, Some(CommandOutcome::Info(ref t)) if t == "3 commands"));
    let out = exts.run("/nope x", &mut session, &());
    assert!(
        matches!(out, Some(CommandOutcome::Error(ref t)) if t.contains("unknown command /nope"))
    );
    assert!(exts.run("just text", &mut session, &()).is_none());

    session.session_start("startup").await;
    let stop = session.prompt("go".into(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    session.session_end("exit").await;
    let results = llm.requests()[1].tool_results();
    assert_eq!(results[0].1, "blocked by first", "the first extension's hook blocks");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "start startup",
            "start startup",
            "prompt go",
            "prompt go",
            "end",
            "end",
            "session end exit",
            "session end exit"
        ]
    );
}
