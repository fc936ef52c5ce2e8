//! The `bash_output` tool: what a background shell (`bash` with `run_in_background`)
//! printed since the previous `bash_output` call for it, and whether it is still running.
//! A regex filter keeps only matching lines; the others are consumed, not kept for later.
//! The answer is cut to its last 2000 lines / 50 KB like `bash`'s.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use rab_agent::{RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::shells::{ShellStatus, Shells};
use crate::truncate::{self, MAX_BYTES, MAX_LINES, format_size};

/// Reads a background shell's new output.
pub struct BashOutput {
    shells: Shells,
}

impl BashOutput {
    /// The tool over the shells `bash` starts.
    pub fn new(shells: Shells) -> Self {
        Self { shells }
    }
}

/// Arguments of `bash_output`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// Shell id from bash, e.g. bash_1.
    pub id: String,
    /// Regex; only matching lines are returned, the rest discarded.
    pub filter: Option<String>,
}

impl Tool for BashOutput {
    type Args = Args;
    const NAME: &'static str = "bash_output";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::None,
        claude_names: &["BashOutput"],
        covered_by: &[],
        always_full: false,
    };

    fn description(&self) -> String {
        "Get new output of a background bash shell (since the last call) and its status: \
         running, exited with code N, or killed."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let filter =
            match args.filter.as_deref().filter(|f| !f.is_empty()) {
                Some(pattern) => Some(RegexMatcher::new(pattern).map_err(|e| {
                    ToolError::Model(format!("invalid filter regex {pattern:?}: {e}"))
                })?),
                None => None,
            };
        let snapshot = self.shells.read(&args.id)?;
        let mut text = snapshot.unread.text;
        if let Some(filter) = &filter {
            text = text
                .split_inclusive('\n')
                .filter(|line| filter.is_match(line.as_bytes()).unwrap_or(false))
                .collect();
        }
        let body = render(&text, snapshot.unread.dropped_bytes);
        let status = &snapshot.status;
        let code = match status {
            ShellStatus::Exited(code) => Some(*code),
            ShellStatus::Running
            | ShellStatus::Signaled(_)
            | ShellStatus::Killed
            | ShellStatus::Lost(_) => None,
        };
        let details = json!({
            "id": args.id.trim(),
            "command": snapshot.command,
            "status": status.kind(),
            "exitCode": code,
            "droppedBytes": snapshot.unread.dropped_bytes,
        });
        Ok(ToolOutput::text(format!("status: {}\n{body}", status.describe())).with_details(details))
    }
}

/// The new output cut to its tail, with notes on what is missing.
fn render(text: &str, dropped_bytes: u64) -> String {
    let mut notes = Vec::new();
    if dropped_bytes > 0 {
        let dropped = usize::try_from(dropped_bytes).unwrap_or(usize::MAX);
        notes.push(format!(
            "[{} of earlier output dropped unread: only the last 1 MB / 2000 lines are kept; \
             call bash_output more often or redirect to a file]",
            format_size(dropped)
        ));
    }
    let tail = truncate::tail(text, MAX_LINES, MAX_BYTES);
    if tail.is_truncated {
        notes.push(format!(
            "[output truncated: showing the last {} of {} new lines]",
            tail.kept_lines, tail.total_lines
        ));
    }
    let shown = tail.text.trim_end_matches(['\n', '\r']);
    let mut out = if shown.trim().is_empty() { "(no new output)".to_owned() } else { shown.into() };
    for note in notes {
        out.push('\n');
        out.push_str(&note);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::Workspace;
    use crate::bash::Bash;
    use crate::test_support::text;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;
    use serde_json::Value;

    struct Fixture {
        root: tempfile::TempDir,
        bash: Bash,
        output: BashOutput,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let shells = Shells::new();
        let bash = Bash::new(Workspace::new(root.path())).with_shells(shells.clone());
        Fixture { root, bash, output: BashOutput::new(shells) }
    }

    async fn start(f: &Fixture, command: &str) -> String {
        let args = json!({"command": command, "run_in_background": true});
        let out = f.bash.execute(args, ToolContext::detached("c")).await.unwrap();
        out.details.unwrap()["backgroundId"].as_str().unwrap().to_owned()
    }

    async fn output(f: &Fixture, args: Value) -> Result<ToolOutput, ToolError> {
        f.output.execute(args, ToolContext::detached("c")).await
    }

    /// Polls until `done` holds for the text, at most 5 s (a real process runs).
    async fn poll_until(f: &Fixture, id: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let got = text(&output(f, json!({"id": id})).await.unwrap());
            if done(&got) {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "gave up waiting; last: {got}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Polls until the shell is no longer running, at most 5 s; returns the final status
    /// line and every line of output read on the way.
    async fn read_to_end(f: &Fixture, args: Value) -> (String, String) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let mut seen = String::new();
        loop {
            let got = text(&output(f, args.clone()).await.unwrap());
            let (status, body) = got.split_once('\n').unwrap();
            if body != "(no new output)" {
                seen.push_str(body);
                seen.push('\n');
            }
            if status != "status: running" {
                return (status.to_owned(), seen);
            }
            assert!(tokio::time::Instant::now() < deadline, "gave up waiting; saw: {seen}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[test]
    fn spec_stays_small() {
        let spec = serde_json::to_string(&BashOutput::new(Shells::new()).spec()).unwrap();
        assert!(spec.len() < 400, "{} bytes: {spec}", spec.len());
    }

    #[tokio::test]
    async fn returns_only_the_output_since_the_last_call_then_the_exit() {
        let f = fixture();
        // The second line waits for a file the test creates, so the first read cannot
        // already hold it however slow the machine.
        let command = "echo a; while [ ! -e go ]; do sleep 0.01; done; echo b";
        let id = start(&f, command).await;
        assert_eq!(id, "bash_1");
        let first = poll_until(&f, &id, |t| t != "status: running\n(no new output)").await;
        assert_eq!(first, "status: running\na");
        std::fs::write(f.root.path().join("go"), "").unwrap();
        let (status, rest) = read_to_end(&f, json!({"id": id})).await;
        assert_eq!((status.as_str(), rest.as_str()), ("status: exited with code 0", "b\n"));
        let again = output(&f, json!({"id": id})).await.unwrap();
        assert_eq!(text(&again), "status: exited with code 0\n(no new output)");
        assert_eq!(
            again.details.unwrap(),
            json!({"id": "bash_1", "command": command, "status": "exited", "exitCode": 0,
                   "droppedBytes": 0})
        );
    }

    #[tokio::test]
    async fn a_filter_keeps_only_matching_lines_and_a_failing_exit_is_reported() {
        let f = fixture();
        let id = start(&f, "printf 'ok 1\\nfail 2\\nok 3\\n'; exit 4").await;
        let (status, seen) = read_to_end(&f, json!({"id": id, "filter": "^ok"})).await;
        assert_eq!(
            (status.as_str(), seen.as_str()),
            ("status: exited with code 4", "ok 1\nok 3\n")
        );
    }

    #[tokio::test]
    async fn an_unknown_id_or_a_bad_regex_is_a_model_error() {
        let f = fixture();
        let err = output(&f, json!({"id": "bash_9"})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model(
                "no background shell bash_9: none has been started; start one with bash and \
                 run_in_background: true"
                    .into()
            )
        );
        start(&f, "true").await;
        start(&f, "true").await;
        let err = output(&f, json!({"id": "bash_9"})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model("no background shell bash_9; known ids: bash_1, bash_2".into())
        );
        let err = output(&f, json!({"id": "bash_1", "filter": "("})).await.unwrap_err();
        let ToolError::Model(msg) = err else { panic!("expected a model error") };
        assert!(msg.starts_with("invalid filter regex \"(\": "), "{msg}");
    }

    #[test]
    fn dropped_output_and_a_long_tail_are_noted() {
        let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        let got = render(&text, 2048);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[0], "501");
        assert_eq!(
            &lines[2000..],
            [
                "[2.0 KB of earlier output dropped unread: only the last 1 MB / 2000 lines are \
                 kept; call bash_output more often or redirect to a file]",
                "[output truncated: showing the last 2000 of 2500 new lines]",
            ]
        );
    }
}
