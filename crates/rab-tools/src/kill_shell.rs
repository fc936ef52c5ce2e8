//! The `kill_shell` tool: ends a background shell (`bash` with `run_in_background`) and
//! everything it started: SIGTERM to its process group, SIGKILL after a second's grace,
//! the shell reaped. Killing a shell that already ended says so and changes nothing.

use rab_agent::{
    ABORTED, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::shells::{ShellStatus, Shells};

/// Kills a background shell.
pub struct KillShell {
    shells: Shells,
}

impl KillShell {
    /// The tool over the shells `bash` starts.
    pub fn new(shells: Shells) -> Self {
        Self { shells }
    }
}

/// Arguments of `kill_shell`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// Shell id from bash, e.g. bash_1.
    pub id: String,
}

impl Tool for KillShell {
    type Args = Args;
    const NAME: &'static str = "kill_shell";
    const LEVEL: ToolLevel = ToolLevel::Execute;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::None,
        claude_names: &["KillShell"],
        covered_by: &[],
        always_full: false,
    };

    fn description(&self) -> String {
        "Kill a background bash shell and everything it started.".to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let id = args.id.trim();
        // The kill goes on in the shell's own task if the call is interrupted.
        let (before, command) = tokio::select! {
            killed = self.shells.kill(id) => killed?,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::Model(format!("{ABORTED}; {id} is still being killed")));
            }
        };
        let text = match &before {
            ShellStatus::Running => format!("killed {id} ({command})"),
            ShellStatus::Killed => format!("{id} was already killed; nothing to do"),
            ShellStatus::Exited(_) | ShellStatus::Signaled(_) | ShellStatus::Lost(_) => {
                format!("{id} had already ended ({}); nothing to kill", before.describe())
            }
        };
        let details = json!({"id": id, "wasRunning": before == ShellStatus::Running});
        Ok(ToolOutput::text(text).with_details(details))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::Workspace;
    use crate::bash::Bash;
    use crate::bash_output::BashOutput;
    use crate::test_support::text;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;

    struct Fixture {
        root: tempfile::TempDir,
        bash: Bash,
        output: BashOutput,
        kill: KillShell,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let shells = Shells::new();
        let bash = Bash::new(Workspace::new(root.path())).with_shells(shells.clone());
        Fixture {
            root,
            bash,
            output: BashOutput::new(shells.clone()),
            kill: KillShell::new(shells),
        }
    }

    async fn start(bash: &Bash, command: &str) -> String {
        let args = json!({"command": command, "run_in_background": true});
        let out = bash.execute(args, ToolContext::detached("c")).await.unwrap();
        out.details.unwrap()["backgroundId"].as_str().unwrap().to_owned()
    }

    async fn kill(f: &Fixture, id: &str) -> String {
        text(&f.kill.execute(json!({"id": id}), ToolContext::detached("c")).await.unwrap())
    }

    async fn status(f: &Fixture, id: &str) -> String {
        let out = f.output.execute(json!({"id": id}), ToolContext::detached("c")).await.unwrap();
        text(&out).lines().next().unwrap().to_owned()
    }

    /// The pid the command wrote to `file`, waiting up to 5 s for it to appear.
    async fn pid_in(root: &std::path::Path, file: &str) -> u32 {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let read = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            if let Some(pid) = read.strip_suffix('\n').and_then(|p| p.parse().ok()) {
                return pid;
            }
            assert!(tokio::time::Instant::now() < deadline, "{file} never written");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Whether `pid` is gone (a zombie counts: it runs nothing), waiting up to 3 s.
    async fn dies_soon(pid: u32) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            let is_dead = match stat {
                Err(_) => true,
                Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')),
            };
            if is_dead {
                return true;
            }
            if tokio::time::Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[test]
    fn spec_stays_small() {
        let spec = serde_json::to_string(&KillShell::new(Shells::new()).spec()).unwrap();
        assert!(spec.len() < 300, "{} bytes: {spec}", spec.len());
    }

    #[tokio::test]
    async fn kills_a_running_shell_and_its_children_quickly() {
        let f = fixture();
        let id = start(&f.bash, "sleep 30 & echo $! > bg.pid; sleep 30").await;
        let pid = pid_in(f.root.path(), "bg.pid").await;
        let started = Instant::now();
        assert_eq!(
            kill(&f, &id).await,
            format!("killed {id} (sleep 30 & echo $! > bg.pid; sleep 30)")
        );
        // The shell sleeps 30 s: well under that is quick, whatever else the machine does.
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(dies_soon(pid).await, "sleep {pid} survived");
        assert_eq!(status(&f, &id).await, "status: killed");
        assert_eq!(kill(&f, &id).await, format!("{id} was already killed; nothing to do"));
    }

    #[tokio::test]
    async fn killing_an_ended_shell_changes_nothing() {
        let f = fixture();
        let id = start(&f.bash, "exit 3").await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while status(&f, &id).await == "status: running" {
            assert!(tokio::time::Instant::now() < deadline, "never exited");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(
            kill(&f, &id).await,
            format!("{id} had already ended (exited with code 3); nothing to kill")
        );
        assert_eq!(status(&f, &id).await, "status: exited with code 3");
    }

    #[tokio::test]
    async fn an_unknown_id_is_a_model_error() {
        let f = fixture();
        let err = f.kill.execute(json!({"id": "bash_3"}), ToolContext::detached("c")).await;
        let Err(ToolError::Model(msg)) = err else { panic!("expected a model error") };
        assert!(msg.starts_with("no background shell bash_3"), "{msg}");
    }

    #[tokio::test]
    async fn dropping_the_registry_kills_every_background_shell() {
        let f = fixture();
        start(&f.bash, "sleep 30 & echo $! > a.pid; wait").await;
        start(&f.bash, "echo $$ > b.pid; sleep 30").await;
        let a = pid_in(f.root.path(), "a.pid").await;
        let b = pid_in(f.root.path(), "b.pid").await;
        let Fixture { root, bash, output, kill } = f;
        drop((bash, output, kill));
        assert!(dies_soon(a).await, "sleep {a} survived");
        assert!(dies_soon(b).await, "shell {b} survived");
        drop(root);
    }
}
