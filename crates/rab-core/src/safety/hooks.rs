//! User hooks with Claude Code's protocol: shell commands configured per event in
//! settings `hooks`, matched on the tool name, given the event as JSON on stdin.
//! Exit 0 passes (stdout may be JSON with `decision`, `continue`, and
//! `hookSpecificOutput.{permissionDecision, updatedInput, additionalContext}`); exit 2
//! blocks with stderr as the reason; any other exit is a warning and the call goes on.
//! Hooks run in the project root. The user's own hooks (their global settings) run as
//! they wrote them, as Claude Code runs them; a project's hooks run through the sandbox,
//! without the keys rab uses. Every failure is kept for the user to see
//! ([`HookRunner::take_notices`]), with the reason when the sandbox caused it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessSession};
use rab_config::HookSettings;
use rab_tools::Sandbox;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Seconds a hook may run when its `timeout` is not set (Claude Code's default).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// Bytes of a hook's stdout or stderr kept.
const MAX_OUTPUT: u64 = 256 * 1024;

/// The events hooks can be attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool call (may block, rewrite or decide permission).
    PreToolUse,
    /// After a tool call (may add context or feedback).
    PostToolUse,
    /// When a prompt is submitted (may block it or add context).
    UserPromptSubmit,
    /// When the agent is about to stop (exit 2 makes it go on).
    Stop,
    /// When a sub-agent finishes.
    SubagentStop,
    /// When a session starts or resumes (stdout becomes context).
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// Before compaction.
    PreCompact,
    /// When rab shows a notification (a permission prompt).
    Notification,
}

const EVENTS: [(HookEvent, &str); 9] = [
    (HookEvent::PreToolUse, "PreToolUse"),
    (HookEvent::PostToolUse, "PostToolUse"),
    (HookEvent::UserPromptSubmit, "UserPromptSubmit"),
    (HookEvent::Stop, "Stop"),
    (HookEvent::SubagentStop, "SubagentStop"),
    (HookEvent::SessionStart, "SessionStart"),
    (HookEvent::SessionEnd, "SessionEnd"),
    (HookEvent::PreCompact, "PreCompact"),
    (HookEvent::Notification, "Notification"),
];

impl HookEvent {
    /// The name used in settings and sent as `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        EVENTS.iter().find(|(e, _)| *e == self).map_or("", |(_, n)| n)
    }

    fn parse(s: &str) -> Option<Self> {
        EVENTS.iter().find(|(_, n)| *n == s).map(|(e, _)| *e)
    }
}

/// A hook configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("settings \"hooks\": {0}; see docs/hooks.md")]
pub struct HookConfigError(pub String);

#[derive(Clone, Debug)]
struct Hook {
    event: HookEvent,
    /// Alternatives of the matcher, each a literal with `.*` wildcards; empty = all.
    matcher: Vec<String>,
    command: String,
    timeout: Duration,
    /// A project's hook: it runs in the sandbox.
    is_sandboxed: bool,
}

/// What the hooks of one event decided together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOutcome {
    /// Exit 2 or `decision: block`/`permissionDecision: deny`: the reason.
    pub block: Option<String>,
    /// `permissionDecision: allow` (skips the permission question).
    pub allow: bool,
    /// `permissionDecision: ask`.
    pub ask: bool,
    /// `updatedInput` (PreToolUse).
    pub updated_input: Option<Value>,
    /// `additionalContext`, or plain stdout of SessionStart/UserPromptSubmit.
    pub context: Vec<String>,
    /// Non-blocking failures and `systemMessage`s, for the user.
    pub warnings: Vec<String>,
    /// `continue: false`: stop the agent, with this reason.
    pub stop: Option<String>,
}

/// Runs the configured hooks.
#[derive(Clone, Debug, Default)]
pub struct HookRunner {
    hooks: Vec<Hook>,
    cwd: PathBuf,
    sandbox: Sandbox,
    /// Failures not yet shown to the user.
    notices: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl HookRunner {
    /// Parses the settings; an unknown event, a bad matcher or an empty command is an
    /// error, a hook type other than `command` a warning (pushed to `warnings`).
    pub fn new(
        settings: &HookSettings,
        cwd: PathBuf,
        sandbox: Sandbox,
        warnings: &mut Vec<String>,
    ) -> Result<Self, HookConfigError> {
        let mut hooks = Vec::new();
        for (name, groups) in settings {
            let Some(event) = HookEvent::parse(name) else {
                let known: Vec<&str> = EVENTS.iter().map(|(_, n)| *n).collect();
                return Err(HookConfigError(format!(
                    "unknown event \"{name}\" (known: {})",
                    known.join(", ")
                )));
            };
            for group in groups {
                let matcher = parse_matcher(&group.matcher)?;
                for h in &group.hooks {
                    if h.kind != "command" {
                        warnings.push(format!(
                            "hooks.{name}: hook type \"{}\" is not supported by rab (skipped)",
                            h.kind
                        ));
                        continue;
                    }
                    if h.command.trim().is_empty() {
                        return Err(HookConfigError(format!("hooks.{name}: empty command")));
                    }
                    hooks.push(Hook {
                        event,
                        matcher: matcher.clone(),
                        command: h.command.clone(),
                        timeout: Duration::from_secs(h.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS)),
                        is_sandboxed: !h.is_own,
                    });
                }
            }
        }
        Ok(Self { hooks, cwd, sandbox, notices: Default::default() })
    }

    /// The failures since the last call, for the user: a front end shows them
    /// (`AgentEvent::Notice`), so a hook that fails is never silent.
    pub fn take_notices(&self) -> Vec<String> {
        self.notices.lock().map(|mut n| std::mem::take(&mut *n)).unwrap_or_default()
    }

    /// Whether any hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// Runs the hooks of `event` (those matching `tool`, for tool events) one after the
    /// other with `input` (the common fields are added) and combines what they said.
    pub async fn run(
        &self,
        event: HookEvent,
        tool: Option<&[&str]>,
        mut input: Value,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        let mut out = HookOutcome::default();
        if let Value::Object(map) = &mut input {
            map.insert("hook_event_name".into(), event.as_str().into());
            map.insert("cwd".into(), self.cwd.display().to_string().into());
        }
        for hook in self.hooks.iter().filter(|h| h.event == event) {
            if let Some(names) = tool
                && !matches_tool(&hook.matcher, names)
            {
                continue;
            }
            if let Some(updated) = &out.updated_input
                && let Value::Object(map) = &mut input
            {
                map.insert("tool_input".into(), updated.clone());
            }
            let result = self.run_one(hook, &input, cancel).await;
            let before = out.warnings.len();
            apply(event, hook, result, &mut out);
            if out.warnings.len() > before
                && let Ok(mut notices) = self.notices.lock()
            {
                notices.extend(out.warnings[before..].iter().cloned());
            }
            if out.block.is_some() || out.stop.is_some() {
                break;
            }
        }
        out
    }

    async fn run_one(&self, hook: &Hook, input: &Value, cancel: &CancellationToken) -> Ran {
        let script = ["-c", hook.command.as_str()];
        let (program, args) = if hook.is_sandboxed {
            self.sandbox.wrap("sh", &script)
        } else {
            ("sh".into(), script.iter().map(|s| (*s).into()).collect())
        };
        let mut cmd = CommandWrap::with_new(program, |c| {
            c.args(&args)
                .current_dir(&self.cwd)
                .env("RAB_PROJECT_DIR", &self.cwd)
                .env("CLAUDE_PROJECT_DIR", &self.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if hook.is_sandboxed {
                for name in self.sandbox.scrubbed_env() {
                    c.env_remove(name);
                }
            }
        });
        cmd.wrap(ProcessSession).wrap(KillOnDrop);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Ran::Failed(format!("could not start: {e}")),
        };
        let stdin = child.stdin().take();
        let stdout = child.stdout().take();
        let stderr = child.stderr().take();
        let body = serde_json::to_vec(input).unwrap_or_default();
        let feed = async move {
            if let Some(mut w) = stdin {
                // A hook that does not read its stdin is fine.
                let _ = w.write_all(&body).await;
            }
        };
        let all = async {
            let ((), out, err, status) =
                tokio::join!(feed, read_pipe(stdout), read_pipe(stderr), child.wait());
            (out, err, status)
        };
        tokio::select! {
            (out, err, status) = all => match status {
                Ok(s) => Ran::Exited(s.code(), out, err),
                Err(e) => Ran::Failed(format!("could not wait: {e}")),
            },
            () = tokio::time::sleep(hook.timeout) => {
                Ran::Failed(format!("timed out after {}s", hook.timeout.as_secs()))
            }
            () = cancel.cancelled() => Ran::Failed("interrupted".into()),
        }
        // Dropping the child kills its whole session if it is still running.
    }
}

/// Whether a failed hook's stderr says the system refused it what the sandbox takes away.
fn is_refused_by_sandbox(stderr: &str) -> bool {
    ["Read-only file system", "Permission denied", "Operation not permitted"]
        .iter()
        .any(|m| stderr.contains(m))
}

/// Reads a pipe to its end, keeping the first [`MAX_OUTPUT`] bytes.
async fn read_pipe<R: tokio::io::AsyncRead + Unpin>(r: Option<R>) -> String {
    let mut buf = Vec::new();
    if let Some(r) = r {
        let _ = r.take(MAX_OUTPUT).read_to_end(&mut buf).await;
    }
    String::from_utf8_lossy(&buf).into_owned()
}

enum Ran {
    Exited(Option<i32>, String, String),
    Failed(String),
}

fn apply(event: HookEvent, hook: &Hook, ran: Ran, out: &mut HookOutcome) {
    let name = event.as_str();
    let (code, stdout, stderr) = match ran {
        Ran::Exited(code, o, e) => (code, o, e),
        Ran::Failed(why) => {
            out.warnings.push(format!("{name} hook `{}` {why}", hook.command));
            return;
        }
    };
    match code {
        Some(0) => {}
        Some(2) => {
            let reason = stderr.trim();
            let reason =
                if reason.is_empty() { "blocked by a hook (no reason given)" } else { reason };
            out.block = Some(reason.to_owned());
            return;
        }
        other => {
            let code = other.map_or("a signal".to_owned(), |c| format!("exit code {c}"));
            let detail = stderr.trim();
            let why = if hook.is_sandboxed && is_refused_by_sandbox(detail) {
                " (hooks from this project run in the sandbox: they cannot write outside the \
                 workspace or reach what it hides; move the hook to your own settings, \
                 ~/.rab/agent/settings.json, to run it as written)"
            } else {
                ""
            };
            out.warnings
                .push(format!("{name} hook `{}` failed with {code}: {detail}{why}", hook.command));
            return;
        }
    }
    let text = stdout.trim();
    let Some(json) =
        text.starts_with('{').then(|| serde_json::from_str::<Value>(text).ok()).flatten()
    else {
        // Plain output is context for the events whose output the model sees.
        if !text.is_empty()
            && matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
        {
            out.context.push(text.to_owned());
        }
        return;
    };
    read_json(&json, out);
}

/// What a hook of `event` that exited with `code` (`None`: ended by a signal) and wrote
/// `stdout` and `stderr` said, read as [`HookRunner::run`] reads it. For the fuzz
/// targets; not part of the stable API.
#[doc(hidden)]
pub fn read_output(event: HookEvent, code: Option<i32>, stdout: &str, stderr: &str) -> HookOutcome {
    let hook = Hook {
        event,
        matcher: Vec::new(),
        command: String::new(),
        timeout: Duration::ZERO,
        is_sandboxed: false,
    };
    let mut out = HookOutcome::default();
    apply(event, &hook, Ran::Exited(code, stdout.to_owned(), stderr.to_owned()), &mut out);
    out
}

/// Reads a hook's JSON answer (both Claude Code's current and older fields).
fn read_json(json: &Value, out: &mut HookOutcome) {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    if json.get("continue") == Some(&Value::Bool(false)) {
        out.stop = Some(s(json, "stopReason").unwrap_or_else(|| "stopped by a hook".into()));
    }
    if let Some(msg) = s(json, "systemMessage") {
        out.warnings.push(msg);
    }
    let reason = s(json, "reason");
    match json.get("decision").and_then(Value::as_str) {
        Some("block") => {
            out.block = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()))
        }
        Some("approve") => out.allow = true,
        _ => {}
    }
    let Some(specific) = json.get("hookSpecificOutput") else { return };
    let why = s(specific, "permissionDecisionReason").or(reason);
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("deny") => out.block = Some(why.unwrap_or_else(|| "denied by a hook".into())),
        Some("allow") => out.allow = true,
        Some("ask") => out.ask = true,
        _ => {}
    }
    if let Some(input) = specific.get("updatedInput").filter(|v| v.is_object()) {
        out.updated_input = Some(input.clone());
    }
    if let Some(ctx) = s(specific, "additionalContext") {
        out.context.push(ctx);
    }
}

/// A Claude Code matcher: `Bash`, `Edit|Write`, `mcp__memory__.*`, `*` or empty.
fn parse_matcher(m: &str) -> Result<Vec<String>, HookConfigError> {
    let m = m.trim();
    if m.is_empty() || m == "*" || m == ".*" {
        return Ok(Vec::new());
    }
    let alts: Vec<String> = m
        .split('|')
        .map(|a| a.trim().trim_start_matches('^').trim_end_matches('$').to_owned())
        .collect();
    for alt in &alts {
        let plain = alt.replace(".*", "");
        if alt.is_empty()
            || !plain.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(HookConfigError(format!(
                "matcher \"{m}\": use tool names separated by | with .* as wildcard"
            )));
        }
    }
    Ok(alts)
}

/// Whether a tool matches, by any of its names (rab's, Claude Code's, those of the
/// tools whose rules cover it: `ToolCatalog::hook_names`).
fn matches_tool(alts: &[String], names: &[&str]) -> bool {
    if alts.is_empty() {
        return true;
    }
    alts.iter().any(|alt| {
        let pattern = alt.replace(".*", "*");
        names.iter().any(|n| crate::permissions::wildcard(&pattern, n))
    })
}

/// The `tool_input` a hook sees: the arguments, plus Claude Code's `file_path` for a
/// `path`, so scripts written for Claude Code find it.
pub fn hook_tool_input(args: &Value) -> Value {
    let mut input = args.clone();
    if let Value::Object(map) = &mut input
        && let Some(path) = map.get("path").cloned()
    {
        map.entry("file_path").or_insert(path);
    }
    input
}

/// Arguments from a hook's `updatedInput`: a `file_path` it set wins over `path`.
pub fn args_from_hook(mut updated: Value) -> Value {
    if let Value::Object(map) = &mut updated
        && let Some(fp) = map.remove("file_path")
    {
        map.insert("path".into(), fp);
    }
    updated
}

/// The JSON a tool event's hooks receive.
pub fn tool_event(
    session_id: &str,
    transcript: &str,
    mode: &str,
    tool: &str,
    claude_name: Option<&str>,
    call_id: &str,
    args: &Value,
) -> Value {
    // Claude Code's name where the tool has one (`Bash`), so its hooks, which test
    // `tool_name == "Bash"`, work as written; rab's own name alongside.
    let name = claude_name.unwrap_or(tool);
    json!({
        "session_id": session_id,
        "transcript_path": transcript,
        "permission_mode": mode,
        "tool_name": name,
        "rab_tool_name": tool,
        "tool_use_id": call_id,
        "tool_input": hook_tool_input(args),
    })
}

#[cfg(test)]
mod tests;
