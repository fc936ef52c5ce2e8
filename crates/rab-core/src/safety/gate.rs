//! The gate every tool call passes: PreToolUse hooks, the permission policy and the
//! person asked when it says so, then after the call PostToolUse hooks and the secret
//! firewall. One [`ToolHook`] on the agent, so the order is fixed and visible here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rab_agent::{AgentTool, BoxFuture, HookDecision, ToolHook, ToolLevel};
use rab_ai::{Content, ToolCall, ToolResultMessage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookEvent, HookRunner, args_from_hook, tool_event};
use crate::permissions::{PermissionMode, Policy, Verdict};
use crate::secrets::Redactor;

/// What the user is asked: front ends show each kind its own way and never look at the
/// tool's name to decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalKind {
    /// May this call run? (Once, always, no.)
    Permission,
    /// A question the agent asks (`ask_user`): free text, or one of the options.
    Question {
        /// The question.
        question: String,
        /// The answers offered (may be empty: any text).
        options: Vec<String>,
    },
    /// A plan to approve (`exit_plan_mode`): start (keep asking for edits), start
    /// accepting edits, or keep planning with a note.
    Plan {
        /// The plan, in markdown.
        plan: String,
    },
}

/// A call waiting for the user's decision.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalRequest {
    /// What is asked.
    pub kind: ApprovalKind,
    /// The tool.
    pub tool: String,
    /// The call's id (as in the agent's tool-call event).
    pub call_id: String,
    /// What it can do.
    pub level: ToolLevel,
    /// Its arguments.
    pub arguments: Value,
    /// A diff for edits, the command for bash (from the tool).
    pub preview: Option<String>,
    /// Why it asks.
    pub reason: String,
    /// The rule "always" would add to the project settings.
    pub rule: String,
    /// The one way to allow such a call without a question, where `rule` cannot (a
    /// write to a protected path: a rule in the user's own settings).
    pub advice: Option<String>,
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Run it this time.
    Once,
    /// Run it and add the suggested rule to the project's allow list.
    Always,
    /// Do not run it; the optional reason goes to the model.
    Deny(Option<String>),
    /// Nobody can answer (headless): refused with advice on how to allow it.
    Unavailable,
    /// A free answer (to `ask_user`); to a permission question it counts as a refusal
    /// with that text as the reason.
    Answer(String),
}

/// Who answers permission questions: the UI, the REPL, or nobody (headless).
pub trait Approver: Send + Sync {
    /// Asks about one call; must return promptly once `cancel` fires.
    fn approve<'a>(
        &'a self,
        request: ApprovalRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Approval>;
}

/// The permission mode, shared by the gate, the UI (Shift+Tab) and the plan-mode tools.
#[derive(Debug, Default)]
pub struct ModeSwitch(AtomicU8);

impl ModeSwitch {
    /// Starts in `mode`.
    pub fn new(mode: PermissionMode) -> Self {
        Self(AtomicU8::new(encode(mode)))
    }

    /// The current mode.
    pub fn get(&self) -> PermissionMode {
        match self.0.load(Ordering::Relaxed) {
            1 => PermissionMode::AcceptEdits,
            2 => PermissionMode::Plan,
            3 => PermissionMode::Yolo,
            _ => PermissionMode::Default,
        }
    }

    /// Switches to `mode`.
    pub fn set(&self, mode: PermissionMode) {
        self.0.store(encode(mode), Ordering::Relaxed);
    }
}

fn encode(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Default => 0,
        PermissionMode::AcceptEdits => 1,
        PermissionMode::Plan => 2,
        PermissionMode::Yolo => 3,
    }
}

/// Hook input fields that name the session.
#[derive(Clone, Debug, Default)]
struct SessionRef {
    id: String,
    transcript: String,
}

/// Permissions, hooks and redaction around every tool call.
pub struct Gate {
    policy: RwLock<Policy>,
    mode: Arc<ModeSwitch>,
    hooks: Arc<HookRunner>,
    approver: Arc<dyn Approver>,
    redactor: Option<Arc<Redactor>>,
    /// Where "always" answers go (rab's home), and the project they are for.
    answers: (PathBuf, PathBuf),
    session: Mutex<SessionRef>,
    /// Calls refused so far, for the headless result.
    denials: Mutex<Denials>,
}

/// A tool call the gate refused.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    /// The tool's name.
    pub tool: String,
    /// What it was asked to do, in short: the command, path or URL, else the arguments.
    pub input: String,
    /// Why: the rule, the mode, a hook, the user, or nobody to ask.
    pub reason: String,
    /// The call's id (`permission_denials[].tool_use_id` of Claude Code's result).
    #[serde(skip)]
    pub call_id: String,
    /// The call's arguments when they are small (up to 4 KB of JSON; a `write` of a
    /// large file is kept as `input` only).
    #[serde(skip)]
    pub arguments: Option<Value>,
}

/// The largest arguments a kept refusal holds whole, in bytes of JSON.
const DENIAL_ARGUMENTS: usize = 4096;

/// The refusals kept (the first [`MAX_DENIALS`]) and how many there were.
#[derive(Debug, Default)]
struct Denials {
    kept: Vec<Denial>,
    count: usize,
}

/// Refusals kept for the result; the rest are counted (results say how many were left
/// out).
pub const MAX_DENIALS: usize = 100;

impl Gate {
    /// A gate with these parts; "always" rules are remembered in `answers`: the user's
    /// answers file in rab's home and the project's real path they are for.
    pub fn new(
        policy: Policy,
        mode: Arc<ModeSwitch>,
        hooks: Arc<HookRunner>,
        approver: Arc<dyn Approver>,
        redactor: Option<Arc<Redactor>>,
        answers: (PathBuf, PathBuf),
    ) -> Self {
        Self {
            policy: RwLock::new(policy),
            mode,
            hooks,
            approver,
            redactor,
            answers,
            session: Mutex::new(SessionRef::default()),
            denials: Mutex::new(Denials::default()),
        }
    }

    /// The calls refused so far (the first 100) and how many there were in all.
    pub fn denials(&self) -> (Vec<Denial>, usize) {
        let d = self.denials.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (d.kept.clone(), d.count)
    }

    fn record_denial(&self, call: &ToolCall, reason: &str) {
        let a = &call.arguments;
        let input = ["command", "path", "url", "pattern"]
            .iter()
            .find_map(|k| a.get(*k).and_then(Value::as_str))
            .map_or_else(|| a.to_string(), str::to_owned);
        let input: String = input.chars().take(200).collect();
        let mut d = self.denials.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        d.count += 1;
        if d.kept.len() < MAX_DENIALS {
            let small = serde_json::to_vec(a).is_ok_and(|j| j.len() <= DENIAL_ARGUMENTS);
            d.kept.push(Denial {
                tool: call.name.clone(),
                input,
                reason: reason.to_owned(),
                call_id: call.id.clone(),
                arguments: small.then(|| a.clone()),
            });
        }
    }

    /// Checks a permission rule as the settings loader will read it (`/permissions
    /// allow RULE` checks before it writes).
    pub fn check_rule(&self, rule: &str) -> Result<(), String> {
        match self.policy.read() {
            Ok(p) => p.check_rule(rule),
            Err(_) => Err("the permission rules are unavailable".into()),
        }
    }

    /// Allows `rules` (permission rules such as `bash(git *)`) without asking until
    /// the next call; an empty list ends the grant. For a prompt command's or skill's
    /// `allowed-tools` while the model answers it.
    pub fn grant(&self, rules: &[String]) -> Result<(), String> {
        match self.policy.write() {
            Ok(mut p) => p.set_granted(rules),
            Err(_) => Err("the permission rules are unavailable".into()),
        }
    }

    /// The web search the rules allow (see [`Policy::search_rules`]): the tool to offer,
    /// or `None` when the rules refuse every search (a poisoned lock refuses too).
    pub fn web_search(&self) -> Option<rab_tools::web_search::WebSearch> {
        let (offered, allowed, blocked) =
            self.policy.read().ok()?.search_rules(rab_tools::web_search::NAME);
        offered.then(|| rab_tools::web_search::WebSearch::new(allowed, blocked, None))
    }

    /// Whether a read deny rule covers `path` (for the filter grep, glob and ls use).
    pub fn read_denied(&self, path: &std::path::Path) -> bool {
        // A poisoned lock hides everything rather than nothing.
        self.policy.read().map_or(true, |p| p.read_denied(path))
    }

    /// The filter grep, glob and ls use: what the read deny rules cover, as the rules
    /// stand at each call.
    pub fn read_filter(self: &Arc<Self>) -> rab_tools::ReadFilter {
        let gate = self.clone();
        rab_tools::ReadFilter::new(move |p| gate.read_denied(p))
    }

    /// The firewall's redaction for files the tools write (as is when it is off).
    pub fn redact_fn(&self) -> rab_tools::Redact {
        match &self.redactor {
            Some(r) => {
                let r = r.clone();
                rab_tools::Redact::new(move |text| r.redact(text).0)
            }
            None => rab_tools::Redact::default(),
        }
    }

    /// The shared mode.
    pub fn mode(&self) -> &Arc<ModeSwitch> {
        &self.mode
    }

    /// The hooks (for the session's prompt, stop and lifecycle events).
    pub fn hooks(&self) -> &Arc<HookRunner> {
        &self.hooks
    }

    /// The secret firewall, when on.
    pub fn redactor(&self) -> Option<&Arc<Redactor>> {
        self.redactor.as_ref()
    }

    /// Names the session in hook input.
    pub fn set_session(&self, id: &str, transcript: &str) {
        if let Ok(mut s) = self.session.lock() {
            *s = SessionRef { id: id.to_owned(), transcript: transcript.to_owned() };
        }
    }

    /// Common hook fields for a non-tool event.
    pub fn event_input(&self, extra: Value) -> Value {
        let s = self.session.lock().map(|s| s.clone()).unwrap_or_default();
        let mut v = json!({
            "session_id": s.id,
            "transcript_path": s.transcript,
            // Claude Code's words: hooks written for it test `== "acceptEdits"`.
            "permission_mode": self.mode.get().claude_name(),
        });
        if let (Value::Object(map), Value::Object(more)) = (&mut v, extra) {
            map.extend(more);
        }
        v
    }

    /// The names hooks may match a call's tool by (rab's, Claude Code's, the tools
    /// whose rules cover it), from the tools' declared facts.
    fn hook_names(&self, tool: &str) -> Vec<String> {
        match self.policy.read() {
            Ok(p) => p.tools().hook_names(tool).into_iter().map(str::to_owned).collect(),
            Err(_) => vec![tool.to_owned()],
        }
    }

    fn tool_input(&self, call: &ToolCall, extra: Option<(&str, Value)>) -> Value {
        let s = self.session.lock().map(|s| s.clone()).unwrap_or_default();
        let claude = self.policy.read().ok().and_then(|p| p.tools().claude_name(&call.name));
        let mut v = tool_event(
            &s.id,
            &s.transcript,
            self.mode.get().claude_name(),
            &call.name,
            claude,
            &call.id,
            &call.arguments,
        );
        if let (Some((k, extra)), Value::Object(map)) = (extra, &mut v) {
            map.insert(k.into(), extra);
        }
        v
    }

    /// Whether `call` may run, and how. A block is a refusal (counted in the result's
    /// denials) except for a call that would fail anyway ([`AgentTool::doomed`]).
    async fn decide(
        &self,
        call: &ToolCall,
        tool: &dyn AgentTool,
        cancel: &CancellationToken,
    ) -> (HookDecision, Refusal) {
        match self.verdict(call, tool, cancel).await {
            Ok(decision) => (decision, Refusal::Counted),
            Err(doomed) => (HookDecision::Block(doomed), Refusal::NotCounted),
        }
    }

    /// [`Gate::decide`]'s work: `Err` is the reason a call that would fail is not run.
    async fn verdict(
        &self,
        call: &ToolCall,
        tool: &dyn AgentTool,
        cancel: &CancellationToken,
    ) -> Result<HookDecision, String> {
        let mut args = call.arguments.clone();
        let alias = tool.rule_alias();
        let mut hook_allows = false;
        let mut hook_asks = false;
        if self.hooks.has(HookEvent::PreToolUse) {
            let input = self.tool_input(call, None);
            let mut names = self.hook_names(&call.name);
            names.extend(alias.clone());
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let out = self.hooks.run(HookEvent::PreToolUse, Some(&names), input, cancel).await;
            for w in &out.warnings {
                tracing::warn!("{w}");
            }
            if let Some(reason) = out.block {
                return Ok(HookDecision::Block(format!("blocked by a PreToolUse hook: {reason}")));
            }
            if let Some(updated) = out.updated_input {
                args = args_from_hook(updated);
            }
            hook_allows = out.allow;
            hook_asks = out.ask;
        }
        let mode = self.mode.get();
        // A tool that writes files it does not take as `path` is checked as writing each
        // of them (`config set`, every file of a patch): the strictest verdict stands.
        // A `path` of its own is checked as well.
        let checked: Vec<Value> = match (tool.written_paths(&args), &args) {
            (paths, Value::Object(map)) if !paths.is_empty() => {
                let mut checked: Vec<Value> = paths
                    .into_iter()
                    .map(|path| {
                        let mut with = map.clone();
                        with.insert("path".into(), Value::String(path));
                        Value::Object(with)
                    })
                    .collect();
                if map.contains_key("path") {
                    checked.push(args.clone());
                }
                checked
            }
            _ => vec![args.clone()],
        };
        let verdict =
            match self.policy.read() {
                Ok(p) => strictest(checked.iter().map(|c| {
                    p.check_as(mode, &call.name, alias.as_deref(), tool.level_of(&args), c)
                })),
                Err(_) => Verdict::Deny("the permission rules are unavailable".into()),
            };
        // A hook may make a call ask, or let one that asks run, but never a write to a
        // protected path: only the user decides those.
        let verdict = match verdict {
            Verdict::Ask(_) | Verdict::Allow if hook_asks => {
                Verdict::Ask("a PreToolUse hook asks for confirmation".into())
            }
            Verdict::Ask(_) if hook_allows => Verdict::Allow,
            v => v,
        };
        let rewritten = |args: Value| {
            if args == call.arguments {
                HookDecision::Continue
            } else {
                HookDecision::Rewrite(args)
            }
        };
        Ok(match verdict {
            Verdict::Allow => rewritten(args),
            Verdict::Deny(why) => HookDecision::Block(format!("permission denied: {why}")),
            // A call that would fail without changing anything is not put to the user
            // and not counted as refused; nothing runs (the file may change before it
            // would, so it is not run unasked either), and the model hears why.
            Verdict::Ask(_) if let Some(why) = tool.doomed(&args) => {
                return Err(format!("{why} (not run: nothing was changed)"));
            }
            Verdict::Ask(why) => match self.ask(call, tool, &args, why, None, cancel).await {
                None => rewritten(args),
                Some(refusal) => HookDecision::Block(refusal),
            },
            Verdict::Protected { reason, advice } => {
                match self.ask(call, tool, &args, reason, Some(advice), cancel).await {
                    None => rewritten(args),
                    Some(refusal) => HookDecision::Block(refusal),
                }
            }
        })
    }

    /// Asks the approver; `Some` is the refusal for the model. `protected`: the call
    /// writes a protected path, and this is the one way to allow it for good ("always"
    /// is not offered, and counts as once).
    async fn ask(
        &self,
        call: &ToolCall,
        tool: &dyn AgentTool,
        args: &Value,
        reason: String,
        protected: Option<String>,
        cancel: &CancellationToken,
    ) -> Option<String> {
        // A tool that arrived after the rules were read is allowed by its alias (the
        // plain name would not parse at the next start).
        let rule = match (tool.rule_alias(), &protected) {
            (_, Some(_)) => String::new(),
            (Some(alias), None) => alias,
            (None, None) => {
                self.policy.read().map(|p| p.suggest_rule(&call.name, args)).unwrap_or_default()
            }
        };
        let request = ApprovalRequest {
            kind: ApprovalKind::Permission,
            tool: call.name.clone(),
            call_id: call.id.clone(),
            level: tool.level(),
            arguments: args.clone(),
            preview: tool.preview(args),
            reason: reason.clone(),
            rule: rule.clone(),
            advice: protected.clone(),
        };
        if self.hooks.has(HookEvent::Notification) {
            let hooks = self.hooks.clone();
            let input = self.event_input(json!({
                "message": format!("rab needs your permission to use {}", call.name),
            }));
            // A notification must not hold up the question.
            let cancel = cancel.clone();
            tokio::spawn(async move {
                hooks.run(HookEvent::Notification, None, input, &cancel).await;
            });
        }
        match self.approver.approve(request, cancel).await {
            Approval::Once => None,
            Approval::Always if protected.is_some() => None,
            Approval::Always => {
                let (file, project) = &self.answers;
                if let Err(e) = rab_config::add_answer(file, project, &rule) {
                    tracing::warn!("could not save the rule {rule}: {e}");
                }
                if let Ok(mut p) = self.policy.write()
                    && let Err(e) = p.add_allow(&rule)
                {
                    tracing::warn!("could not apply the rule {rule}: {e}");
                }
                None
            }
            Approval::Deny(None) => Some("the user denied this call; ask how to go on".into()),
            Approval::Deny(Some(why)) | Approval::Answer(why) => {
                Some(format!("the user denied this call: {why}"))
            }
            Approval::Unavailable => match protected {
                Some(advice) => Some(format!(
                    "permission denied: {reason}, and rab is running headless with nobody to \
                     approve it. {advice}."
                )),
                None => Some(format!(
                    "permission denied: {reason}, and rab is running headless with nobody to \
                     approve it. To allow it, run with --allowed-tools '{rule}', add that rule \
                     to permissions.allow in .rab/settings.json, or choose --permission-mode \
                     accept-edits (edits) or --yolo (everything)."
                )),
            },
        }
    }

    async fn finish(
        &self,
        call: &ToolCall,
        result: &ToolResultMessage,
        cancel: &CancellationToken,
    ) -> Option<ToolResultMessage> {
        let mut out = result.clone();
        let mut changed = false;
        if self.hooks.has(HookEvent::PostToolUse) {
            let response = json!({"content": result.text(), "is_error": result.is_error});
            let input = self.tool_input(call, Some(("tool_response", response)));
            let names = self.hook_names(&call.name);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let hook = self.hooks.run(HookEvent::PostToolUse, Some(&names), input, cancel).await;
            for w in &hook.warnings {
                tracing::warn!("{w}");
            }
            let mut notes: Vec<String> =
                hook.block.into_iter().map(|r| format!("PostToolUse hook: {r}")).collect();
            notes.extend(hook.context);
            if !notes.is_empty() {
                out.content.push(Content::text(notes.join("\n")));
                changed = true;
            }
        }
        if let Some(r) = &self.redactor {
            let is_env_file = call.name == "read"
                && call
                    .arguments
                    .get("path")
                    .and_then(Value::as_str)
                    .and_then(|p| std::path::Path::new(p).file_name())
                    .is_some_and(|n| n.to_string_lossy().starts_with(".env"));
            for c in &mut out.content {
                if let Content::Text { text } = c {
                    if is_env_file {
                        r.learn_env_file(text);
                    }
                    let (clean, found) = r.redact(text);
                    if !found.is_empty() {
                        tracing::info!(tool = %call.name, "redacted {} secret(s)", found.len());
                        *text = clean;
                        changed = true;
                    }
                }
            }
        }
        changed.then_some(out)
    }
}

impl ToolHook for Gate {
    fn before<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a dyn AgentTool,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        Box::pin(async move {
            let (decision, refusal) = self.decide(call, tool, cancel).await;
            if let (HookDecision::Block(reason), Refusal::Counted) = (&decision, refusal) {
                self.record_denial(call, reason);
            }
            decision
        })
    }

    fn after<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a ToolResultMessage,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<ToolResultMessage>> {
        Box::pin(self.finish(call, result, cancel))
    }
}

/// Whether a blocked call counts as refused in the result's denials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Refused by a rule, a hook, the mode or the user.
    Counted,
    /// Not run because it would fail: the model's mistake, not a refusal.
    NotCounted,
}

/// The strictest of several verdicts: a denial, else a question, else allowed.
fn strictest(verdicts: impl Iterator<Item = Verdict>) -> Verdict {
    let mut out = Verdict::Allow;
    for v in verdicts {
        match (&out, v) {
            (Verdict::Deny(_), _) => {}
            (_, deny @ Verdict::Deny(_)) => out = deny,
            (Verdict::Protected { .. }, _) => {}
            (_, protected @ Verdict::Protected { .. }) => out = protected,
            (Verdict::Allow, ask @ Verdict::Ask(_)) => out = ask,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
