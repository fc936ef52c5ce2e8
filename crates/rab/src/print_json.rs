//! The JSON lines of print mode that are rab's own rather than agent events: the
//! `system`/`init` line that opens `stream-json`, and the result object that ends both
//! `json` and `stream-json` — for every exit once the output format is known, start-up
//! failures included, so a script or the GitHub Action always has an object to read.
//! docs/stream-json.schema.json is generated from these types (a test checks it).

use std::sync::OnceLock;

use rab_agent::StopCause;
use rab_core::AgentSession;
use schemars::JsonSchema;
use serde::Serialize;

use crate::cli::OutputFormat;

/// How a run ended, as `status` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// The model finished (exit 0).
    Success,
    /// The model finished, but tool calls were refused (exit 5).
    SuccessWithDenials,
    /// `--max-turns` was reached (exit 3).
    ErrorMaxTurns,
    /// The budget would have been crossed (exit 4).
    ErrorBudget,
    /// The model repeated itself (exit 6).
    ErrorLoop,
    /// The reply was cut off at the output limit twice (exit 7).
    ErrorMaxTokens,
    /// Anything else: a provider error (exit 1), a bad command line or settings (exit 2).
    Error,
    /// SIGINT (exit 130).
    Interrupted,
}

/// Tokens, as everywhere in rab's JSON.
#[derive(Clone, Copy, Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageLine {
    /// Input tokens neither read from nor written to the cache.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Of `output`, the reasoning tokens, when reported.
    pub reasoning: u64,
}

impl UsageLine {
    fn add(&mut self, u: &rab_ai::Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.reasoning += u.reasoning;
    }
}

/// The sub-agents' part of a run.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubAgentsLine {
    /// Their tokens.
    pub usage: UsageLine,
    /// Their dollars.
    pub cost_usd: f64,
    /// Their model requests.
    pub requests: u64,
}

/// A refused tool call.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub(crate) struct DenialLine {
    /// The tool.
    pub tool: String,
    /// The command, path or URL, else the arguments (cut at 200 characters).
    pub input: String,
    /// Why it was refused.
    pub reason: String,
}

/// The last line of `json` and `stream-json` output, for every exit.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResultLine {
    /// Always `result`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// How the run ended.
    pub status: Status,
    /// Whether the exit code is not 0.
    pub is_error: bool,
    /// The process's exit code (docs/stream-json.md).
    pub exit_code: u8,
    /// The final answer ("" when there is none).
    pub result: String,
    /// What went wrong, whenever `status` is not `success`; else null.
    pub error: Option<String>,
    /// The session's id, once there is a session.
    pub session_id: Option<String>,
    /// The session file, once there is one.
    pub session_path: Option<String>,
    /// The model's id, once one was chosen.
    pub model: Option<String>,
    /// The provider, once one was chosen.
    pub provider: Option<String>,
    /// Model requests of the main agent.
    pub turns: u64,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
    /// Tokens of every request of the run (sub-agents and summaries included).
    pub usage: UsageLine,
    /// Dollars of every request of the run.
    pub cost_usd: f64,
    /// The sub-agents' part of `usage` and `costUsd`.
    pub sub_agents: SubAgentsLine,
    /// The main agent's requests, one object each (`usage`, `cost`, `isSummary`).
    pub per_turn: Vec<serde_json::Value>,
    /// The first 100 refused tool calls.
    pub permission_denials: Vec<DenialLine>,
    /// Every refused tool call.
    pub permission_denial_count: usize,
}

impl ResultLine {
    /// A run that ended before (or without) a model run: `code` and `message`.
    pub(crate) fn failure(code: u8, message: &str) -> Self {
        Self {
            kind: "result",
            status: if code == crate::EXIT_INTERRUPTED {
                Status::Interrupted
            } else {
                Status::Error
            },
            is_error: code != crate::EXIT_OK,
            exit_code: code,
            result: String::new(),
            error: (code != crate::EXIT_OK).then(|| message.to_owned()),
            session_id: None,
            session_path: None,
            model: None,
            provider: None,
            turns: 0,
            duration_ms: 0,
            usage: UsageLine::default(),
            cost_usd: 0.0,
            sub_agents: SubAgentsLine::default(),
            per_turn: Vec::new(),
            permission_denials: Vec::new(),
            permission_denial_count: 0,
        }
    }

    /// The run of `session`: how it stopped (`None`: it ended with `code` and `message`
    /// before the model ran), the final text and what was refused.
    pub(crate) fn of_run(
        session: &AgentSession,
        stop: Option<&StopCause>,
        (code, message): (u8, Option<String>),
        final_text: &str,
        duration_ms: u64,
    ) -> Self {
        let (denials, denied) = session.gate().map(|g| g.denials()).unwrap_or_default();
        let status = match stop {
            Some(StopCause::Done) if denied > 0 => Status::SuccessWithDenials,
            Some(StopCause::Done) => Status::Success,
            Some(StopCause::MaxTurns { .. }) => Status::ErrorMaxTurns,
            Some(StopCause::Budget { .. }) => Status::ErrorBudget,
            Some(StopCause::Aborted) => Status::Interrupted,
            Some(StopCause::Loop { .. }) => Status::ErrorLoop,
            Some(StopCause::Length { .. }) => Status::ErrorMaxTokens,
            Some(StopCause::Error { .. }) => Status::Error,
            None if code == crate::EXIT_OK => Status::Success,
            None => Status::Error,
        };
        let totals = session.totals();
        let sub = session.sub_agents();
        let model = &session.agent().config().model;
        let mut usage = UsageLine::default();
        usage.add(&totals.usage);
        usage.add(&sub.usage);
        let mut sub_usage = UsageLine::default();
        sub_usage.add(&sub.usage);
        let per_turn =
            session.turn_costs().iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
        Self {
            kind: "result",
            status,
            is_error: code != crate::EXIT_OK,
            exit_code: code,
            result: final_text.to_owned(),
            error: if status == Status::Success { None } else { message },
            session_id: Some(session.tape().id().to_owned()),
            session_path: session.tape().path().map(|p| p.display().to_string()),
            model: Some(model.id.clone()),
            provider: Some(model.provider.clone()),
            turns: u64::from(totals.turns),
            duration_ms,
            usage,
            cost_usd: totals.cost + sub.cost,
            sub_agents: SubAgentsLine {
                usage: sub_usage,
                cost_usd: sub.cost,
                requests: sub.requests as u64,
            },
            per_turn,
            permission_denials: denials
                .into_iter()
                .map(|d| DenialLine { tool: d.tool, input: d.input, reason: d.reason })
                .collect(),
            permission_denial_count: denied,
        }
    }

    /// The line, compact.
    pub(crate) fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The first line of `stream-json`: what the run works with.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitLine {
    /// Always `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `init`.
    pub subtype: &'static str,
    /// rab's version.
    pub version: &'static str,
    /// The session's id.
    pub session_id: String,
    /// The session file (none with `--no-session`).
    pub session_path: Option<String>,
    /// The model's id.
    pub model: String,
    /// Its provider.
    pub provider: String,
    /// The working directory.
    pub cwd: String,
    /// The tools offered to the model, by name (MCP and plugin tools included).
    pub tools: Vec<String>,
    /// The permission mode: `default`, `accept-edits`, `plan` or `yolo`.
    pub permission_mode: String,
}

impl InitLine {
    /// The line for `session` in `cwd`.
    pub(crate) fn of(session: &AgentSession, cwd: &std::path::Path) -> Self {
        let model = &session.agent().config().model;
        Self {
            kind: "system",
            subtype: "init",
            version: env!("CARGO_PKG_VERSION"),
            session_id: session.tape().id().to_owned(),
            session_path: session.tape().path().map(|p| p.display().to_string()),
            model: model.id.clone(),
            provider: model.provider.clone(),
            cwd: cwd.display().to_string(),
            tools: session.agent().tool_specs().iter().map(|s| s.name.clone()).collect(),
            permission_mode: session
                .gate()
                .map(|g| g.mode().get().as_str().to_owned())
                .unwrap_or_else(|| "yolo".to_owned()),
        }
    }
}

/// Set when this run is print mode with JSON output: a failure before the run then
/// prints a result object too (see [`crate::fail`]).
static JSON_OUTPUT: OnceLock<()> = OnceLock::new();

/// Print mode with `format`: failures from now on print a result object.
pub(crate) fn results_on_failure(format: OutputFormat) {
    if format != OutputFormat::Text {
        let _ = JSON_OUTPUT.set(());
    }
}

/// Whether failures print a result object.
pub(crate) fn wants_results() -> bool {
    JSON_OUTPUT.get().is_some()
}

/// Set when JSON output follows Claude Code's schema (`--output-compat claude`).
static CLAUDE: OnceLock<()> = OnceLock::new();

/// JSON output from now on follows Claude Code's schema when `on`.
pub(crate) fn claude_schema(on: bool) {
    if on {
        let _ = CLAUDE.set(());
    }
}

/// Whether JSON output follows Claude Code's schema.
pub(crate) fn is_claude() -> bool {
    CLAUDE.get().is_some()
}

/// The result line of a run that failed before the model ran, in the schema asked for.
pub(crate) fn failure_line(code: u8, message: &str) -> String {
    if is_claude() {
        let end = crate::print_claude::Ending {
            stop: None,
            code,
            message: Some(message.to_owned()),
            final_text: "",
            duration_ms: 0,
            api_ms: 0,
            stop_reason: None,
        };
        crate::print_claude::result(None, &end).to_string()
    } else {
        ResultLine::failure(code, message).to_line()
    }
}

/// Whether a command line that did not parse asks for Claude Code's schema.
pub(crate) fn claude_in_raw_args(args: &[String]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        a == "--output-compat=claude"
            || (a == "--output-compat" && args.get(i + 1).is_some_and(|v| v == "claude"))
    })
}

/// The output format asked for on a command line that did not parse, if it can be read:
/// `--output-format json`, `--output-format=stream-json`.
pub(crate) fn format_in_raw_args(args: &[String]) -> Option<OutputFormat> {
    let value = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--output-format=")
            .map(str::to_owned)
            .or_else(|| (a == "--output-format").then(|| args.get(i + 1).cloned()).flatten())
    })?;
    match value.as_str() {
        "json" => Some(OutputFormat::Json),
        "stream-json" => Some(OutputFormat::StreamJson),
        _ => None,
    }
}

/// The JSON Schema of the lines rab writes in `stream-json` besides the agent events
/// (docs/stream-json.schema.json, checked by a test).
#[cfg(test)]
fn schema() -> serde_json::Value {
    serde_json::json!({
        "init": schemars::schema_for!(InitLine),
        "result": schemars::schema_for!(ResultLine),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `RAB_UPDATE_SCHEMA=1 cargo test -p rab stream_json_schema` writes
    /// docs/stream-json.schema.json again after a change.
    #[test]
    fn stream_json_schema_is_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/stream-json.schema.json");
        let now = serde_json::to_string_pretty(&schema()).unwrap_or_default() + "\n";
        if std::env::var_os("RAB_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == now,
            "docs/stream-json.schema.json is stale: run RAB_UPDATE_SCHEMA=1 cargo test -p rab \
             stream_json_schema"
        );
    }

    #[test]
    fn the_format_is_read_from_a_command_line_that_did_not_parse() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let read = |a: &[&str]| format_in_raw_args(&args(a));
        assert_eq!(read(&["-p", "--output-format", "json", "--bogus"]), Some(OutputFormat::Json));
        assert_eq!(read(&["--output-format=stream-json"]), Some(OutputFormat::StreamJson));
        assert_eq!(read(&["--output-format", "text"]), None);
        assert_eq!(read(&["--output-format"]), None);
    }
}
