//! `send_message`: messages between the main agent and its running sub-agents. Each
//! agent that can receive is registered under a name (`main`, and each sub-agent's id
//! while it runs) with its steering queue; a message is injected into the recipient's
//! conversation at its next step as a user message naming the sender.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rab_agent::{Queues, Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use rab_ai::Message;
use schemars::JsonSchema;
use serde::Deserialize;

/// The main agent's name in the inbox.
pub const MAIN: &str = "main";

/// Who can be written to.
#[derive(Clone, Debug, Default)]
pub struct Inbox {
    agents: Arc<Mutex<BTreeMap<String, Queues>>>,
}

impl Inbox {
    /// Registers an agent under `name`.
    pub fn register(&self, name: &str, queues: Queues) {
        if let Ok(mut a) = self.agents.lock() {
            a.insert(name.to_owned(), queues);
        }
    }

    /// Removes an agent (a sub-agent that finished).
    pub fn unregister(&self, name: &str) {
        if let Ok(mut a) = self.agents.lock() {
            a.remove(name);
        }
    }

    /// Names that can be written to.
    pub fn names(&self) -> Vec<String> {
        self.agents.lock().map(|a| a.keys().cloned().collect()).unwrap_or_default()
    }

    /// Delivers `text` from `from` to `to` (`*`: everyone else); the recipients.
    pub fn send(&self, from: &str, to: &str, text: &str) -> Result<Vec<String>, String> {
        let agents = self.agents.lock().map_err(|_| "the inbox is unavailable")?;
        let targets: Vec<(&String, &Queues)> = if to == "*" {
            agents.iter().filter(|(n, _)| n.as_str() != from).collect()
        } else {
            agents.get_key_value(to).into_iter().collect()
        };
        if targets.is_empty() {
            let names: Vec<&str> =
                agents.keys().map(String::as_str).filter(|n| *n != from).collect();
            return Err(format!(
                "no agent named '{to}' is running; running: {}",
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ));
        }
        for (_, q) in &targets {
            q.steer(Message::user(format!("[message from {from}] {text}")));
        }
        Ok(targets.into_iter().map(|(n, _)| n.clone()).collect())
    }
}

/// `send_message`, sending as one agent.
pub struct SendMessage {
    inbox: Inbox,
    from: String,
}

impl SendMessage {
    /// The tool for the agent called `from`.
    pub fn new(inbox: Inbox, from: &str) -> Self {
        Self { inbox, from: from.to_owned() }
    }
}

/// Arguments of `send_message`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// Recipient: "main", a sub-agent id, or "*".
    pub to: String,
    /// The message.
    pub message: String,
}

impl Tool for SendMessage {
    type Args = Args;
    const NAME: &'static str = "send_message";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Send a message to the main agent or a running sub-agent (by the id task gave it); \
         it arrives at the recipient's next step."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.message.trim().is_empty() {
            return Err(ToolError::Model("message is empty".into()));
        }
        let sent =
            self.inbox.send(&self.from, &args.to, &args.message).map_err(ToolError::Model)?;
        Ok(ToolOutput::text(format!("delivered to {}", sent.join(", "))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_agent::{AgentTool, DrainMode};
    use serde_json::json;

    #[tokio::test]
    async fn messages_reach_the_recipients_queue_and_unknown_names_are_errors() {
        let inbox = Inbox::default();
        let (main, sub) = (Queues::default(), Queues::default());
        inbox.register(MAIN, main.clone());
        inbox.register("task-1", sub.clone());
        let tool = SendMessage::new(inbox.clone(), "task-1");
        tool.execute(
            json!({"to": "main", "message": "found it in src/a.rs"}),
            ToolContext::detached("c"),
        )
        .await
        .unwrap();
        assert_eq!(
            main.take_steering(DrainMode::All),
            [Message::user("[message from task-1] found it in src/a.rs")]
        );
        assert!(sub.take_steering(DrainMode::All).is_empty(), "not to the sender");
        inbox.unregister("task-1");
        let err = SendMessage::new(inbox, MAIN)
            .execute(json!({"to": "task-1", "message": "x"}), ToolContext::detached("c"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no agent named 'task-1' is running"), "{err}");
    }
}
