//! Tools: the object-safe [`AgentTool`] the loop runs, and the typed [`Tool`] trait
//! whose arguments struct yields both the JSON Schema sent to the model and the parser
//! of the model's arguments, so the two cannot drift.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rab_ai::{Content, ToolResultMessage, ToolSpec};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Whether a tool may run alongside others of the same assistant message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionMode {
    /// Runs concurrently with neighbouring parallel calls (the default).
    Parallel,
    /// Runs alone, after the calls before it and before the calls after it.
    Sequential,
}

/// What a tool can do, for the permission check. Modes and rules decide per level:
/// read-only tools run in every mode, the others ask or are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolLevel {
    /// Reads files or state; changes nothing outside rab.
    ReadOnly,
    /// Changes files.
    Edit,
    /// Runs programs.
    Execute,
    /// Talks to the network.
    Network,
}

/// Every string in a call's arguments (at most 64, none over 4,096 bytes: longer ones
/// are file contents, not names), for a tool that writes files named by arguments it
/// does not declare as paths (a plugin's `{"file": …}`): the gate checks each as a
/// path it writes, so a protected path cannot pass under another argument's name.
pub fn string_arguments(arguments: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if out.len() < 64 && !s.is_empty() && s.len() <= 4096 => {
                out.push(s.clone());
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(arguments, &mut out);
    out
}

impl ToolLevel {
    /// The level's name as shown in docs and prompts.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Edit => "edit",
            Self::Execute => "execute",
            Self::Network => "network",
        }
    }
}

/// What a permission rule's pattern matches in a tool's calls: `bash(git *)` a
/// command, `edit(src/**)` a path, `web_fetch(domain:docs.rs)` a host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuleKind {
    /// Rules name the tool only.
    #[default]
    None,
    /// Its `path` argument (and the files it writes).
    Path,
    /// Its `command` argument, read as shell.
    Command,
    /// The host of its `url` argument.
    Domain,
}

/// What permission rules, hooks and the tool view know about a tool, declared by the
/// tool itself (not kept in lists of names elsewhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolFacts {
    /// What its rules' patterns match.
    pub rule: RuleKind,
    /// Claude Code's names for it (`Bash`; `Edit` and `MultiEdit`), so rules and hook
    /// matchers written for Claude Code work.
    pub claude_names: &'static [&'static str],
    /// Tools whose rules cover it too (`edit(…)` rules cover `write`; `read(…)` rules
    /// cover `grep`), and whose hooks see it.
    pub covered_by: &'static [&'static str],
    /// Always sent with its full schema, never deferred by the tool view.
    pub always_full: bool,
}

impl ToolFacts {
    /// Nothing special: rules name the tool, no alias, may be deferred.
    pub const NONE: ToolFacts =
        ToolFacts { rule: RuleKind::None, claude_names: &[], covered_by: &[], always_full: false };
}

impl Default for ToolFacts {
    fn default() -> Self {
        Self::NONE
    }
}

/// What a tool produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<Content>,
    /// Structured data for the UI and the tape (a diff, an exit code), not sent to the model.
    pub details: Option<Value>,
}

impl ToolOutput {
    /// Text output.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::text(text)], details: None }
    }

    /// Adds UI details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// A failed tool call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// Goes back to the model as an error result; the loop goes on. Bad arguments,
    /// a missing file, a failed command.
    #[error("{0}")]
    Model(String),
    /// Ends the run: something the model cannot fix.
    #[error("{0}")]
    Fatal(String),
}

/// Partial output a running tool reports (bash output as it arrives).
#[derive(Clone, Debug)]
pub struct UpdateSink {
    call_id: String,
    tx: Option<mpsc::UnboundedSender<(String, String)>>,
}

impl UpdateSink {
    /// A sink that drops updates.
    pub fn none() -> Self {
        Self { call_id: String::new(), tx: None }
    }

    pub(crate) fn new(call_id: &str, tx: mpsc::UnboundedSender<(String, String)>) -> Self {
        Self { call_id: call_id.to_owned(), tx: Some(tx) }
    }

    /// A sink and the receiver of what is sent to it, `(call id, chunk)` (for running a
    /// tool outside the loop, and for tests).
    pub fn channel(call_id: &str) -> (Self, mpsc::UnboundedReceiver<(String, String)>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::new(call_id, tx), rx)
    }

    /// Reports a chunk of partial output.
    pub fn send(&self, chunk: impl Into<String>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((self.call_id.clone(), chunk.into()));
        }
    }
}

/// What a tool gets besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// Id of the call being run.
    pub call_id: String,
    /// Cancelled when the user interrupts; long-running tools must stop promptly.
    pub cancel: CancellationToken,
    /// Partial output for the UI.
    pub updates: UpdateSink,
}

impl ToolContext {
    /// A context for running a tool outside the loop (tests, `rab mcp serve`).
    pub fn detached(call_id: &str) -> Self {
        Self {
            call_id: call_id.to_owned(),
            cancel: CancellationToken::new(),
            updates: UpdateSink::none(),
        }
    }
}

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool as the loop sees it: a spec and an execute function over raw JSON arguments.
/// Implement [`Tool`] instead unless the schema comes from elsewhere (MCP, plugins).
pub trait AgentTool: Send + Sync {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;
    /// The name alone. Looking a tool up by name happens on every call; the default
    /// builds the whole [`AgentTool::spec`] (the schema too), so tools override it.
    fn name(&self) -> String {
        self.spec().name
    }
    /// Whether the call may run alongside others.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// What the tool can do. A tool that does not say is treated as running programs,
    /// so an unknown tool is never waved through as read-only.
    fn level(&self) -> ToolLevel {
        ToolLevel::Execute
    }
    /// What rules, hooks and the tool view know about it.
    fn facts(&self) -> ToolFacts {
        ToolFacts::NONE
    }
    /// Whether the model is offered it now. A tool that only makes sense in some state
    /// (`exit_plan_mode` in plan mode) is left out of requests otherwise, which spends
    /// no schema bytes on it; the conversation learns of it when it arrives or goes.
    fn offered(&self) -> bool {
        true
    }
    /// A second name permission rules and hook matchers know it by, for tools that
    /// arrive after the rules are read (a WASM plugin's: `plugin__NAME__TOOL`, so
    /// `plugin__NAME` rules cover every tool of the plugin).
    fn rule_alias(&self) -> Option<String> {
        None
    }
    /// What this call can do, when it depends on the arguments (`config` reads with
    /// `get` and writes with `set`); the tool's [`AgentTool::level`] otherwise.
    fn level_of(&self, arguments: &Value) -> ToolLevel {
        let _ = arguments;
        self.level()
    }
    /// The file this call writes when no `path` argument names it (`config set` writes
    /// the settings file), so path rules apply to it.
    fn written_path(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// Every file this call writes when it writes several, so path rules apply to each
    /// ([`AgentTool::written_path`] by default).
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        self.written_path(arguments).into_iter().collect()
    }
    /// A one-line summary of a call for a UI header (`src/main.rs:1-40`, `"TODO" in
    /// src`); `None` shows the arguments.
    fn summary(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// What the call would do, for a person deciding whether to allow it (a diff for
    /// an edit); `None` shows the arguments.
    fn preview(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// Why the call would fail without changing anything (an edit whose text is not in
    /// the file), known before it runs: such a call is not put to the user, and the
    /// model hears why instead. `None`: it may succeed.
    fn doomed(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// A name for people (`Web search`), shown by front ends instead of the tool's
    /// name; the model always sees the name.
    fn label(&self) -> Option<String> {
        None
    }
    /// The tool's own drawing of a call in the terminal UI: plain-text lines (the UI
    /// styles and cuts them to `width`), the first one the header; `None` draws the
    /// usual header from [`AgentTool::label`] and [`AgentTool::summary`].
    fn render_call(&self, arguments: &Value, width: usize) -> Option<Vec<String>> {
        let _ = (arguments, width);
        None
    }
    /// The tool's own drawing of a finished call's result (`details` as the tool gave
    /// them): plain-text lines, shown in full; `None` draws the usual result.
    fn render_result(
        &self,
        result: &ToolResultMessage,
        details: Option<&Value>,
        width: usize,
    ) -> Option<Vec<String>> {
        let _ = (result, details, width);
        None
    }
    /// How to use the tool well, added to the system prompt while the tool is offered
    /// (under a heading with its name). Keep it short: it goes out with every request.
    fn prompt_guidelines(&self) -> Option<String> {
        None
    }
    /// Runs the call.
    fn execute(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;
}

/// Tools that can change while an agent lives (MCP servers starting, stopping or
/// changing their tool list). The agent reads [`ToolSource::tools`] again whenever
/// [`ToolSource::version`] changes.
pub trait ToolSource: Send + Sync {
    /// A number that changes whenever `tools` would return something different.
    fn version(&self) -> u64;
    /// The tools now.
    fn tools(&self) -> Vec<Arc<dyn AgentTool>>;
}

/// A tool with typed arguments. The schema is derived from `Args`, and the model's
/// arguments are parsed into `Args` before `run`; a mismatch is a [`ToolError::Model`].
pub trait Tool: Send + Sync + 'static {
    /// The arguments: `Deserialize` for parsing, `JsonSchema` for the model.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// Lower snake case name.
    const NAME: &'static str;
    /// What the tool can do (for permissions).
    const LEVEL: ToolLevel;
    /// What rules, hooks and the tool view know about it.
    const FACTS: ToolFacts = ToolFacts::NONE;
    /// What the tool does and when to use it (shown to the model).
    fn description(&self) -> String;
    /// See [`AgentTool::offered`].
    fn offered(&self) -> bool {
        true
    }
    /// Whether the call may run alongside others.
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// What the call would do, shown when asking for permission.
    fn preview(&self, args: &Self::Args) -> Option<String> {
        let _ = args;
        None
    }
    /// Why the call would fail without changing anything, known before it runs (see
    /// [`AgentTool::doomed`]).
    fn doomed(&self, args: &Self::Args) -> Option<String> {
        let _ = args;
        None
    }
    /// What this call can do, when it depends on the arguments ([`Tool::LEVEL`] by
    /// default).
    fn level_of(&self, args: &Self::Args) -> ToolLevel {
        let _ = args;
        Self::LEVEL
    }
    /// The file this call writes when no `path` argument names it.
    fn written_path(&self, args: &Self::Args) -> Option<String> {
        let _ = args;
        None
    }
    /// Every file this call writes, when it writes several (`apply_patch`); the one of
    /// [`Tool::written_path`] by default.
    fn written_paths(&self, args: &Self::Args) -> Vec<String> {
        self.written_path(args).into_iter().collect()
    }
    /// A free-form tool's Lark grammar (see [`ToolSpec::grammar`]); `None` for a tool
    /// with JSON arguments.
    fn grammar(&self) -> Option<String> {
        None
    }
    /// A tool the provider runs on its side (see [`ToolSpec::server`]); `None` for a
    /// tool rab runs.
    fn server(&self) -> Option<rab_ai::ServerTool> {
        None
    }
    /// A one-line summary of a call for a UI header; `None` shows the arguments.
    fn summary(&self, args: &Self::Args) -> Option<String> {
        let _ = args;
        None
    }
    /// See [`AgentTool::label`].
    fn label(&self) -> Option<String> {
        None
    }
    /// See [`AgentTool::render_call`]; arguments that do not parse get the usual header.
    fn render_call(&self, args: &Self::Args, width: usize) -> Option<Vec<String>> {
        let _ = (args, width);
        None
    }
    /// See [`AgentTool::render_result`].
    fn render_result(
        &self,
        result: &ToolResultMessage,
        details: Option<&Value>,
        width: usize,
    ) -> Option<Vec<String>> {
        let _ = (result, details, width);
        None
    }
    /// See [`AgentTool::prompt_guidelines`].
    fn prompt_guidelines(&self) -> Option<String> {
        None
    }
    /// Runs the call.
    fn run(
        &self,
        args: Self::Args,
        cx: ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

impl<T: Tool> AgentTool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_owned(),
            description: self.description(),
            parameters: schema_of::<T::Args>(),
            grammar: self.grammar(),
            server: self.server(),
        }
    }

    fn name(&self) -> String {
        T::NAME.to_owned()
    }

    fn mode(&self) -> ExecutionMode {
        Tool::mode(self)
    }

    fn level(&self) -> ToolLevel {
        T::LEVEL
    }

    fn facts(&self) -> ToolFacts {
        T::FACTS
    }

    fn offered(&self) -> bool {
        Tool::offered(self)
    }

    fn preview(&self, arguments: &Value) -> Option<String> {
        let args: T::Args = serde_json::from_value(arguments.clone()).ok()?;
        Tool::preview(self, &args)
    }

    fn doomed(&self, arguments: &Value) -> Option<String> {
        let args: T::Args = serde_json::from_value(arguments.clone()).ok()?;
        Tool::doomed(self, &args)
    }

    fn label(&self) -> Option<String> {
        Tool::label(self)
    }

    fn render_call(&self, arguments: &Value, width: usize) -> Option<Vec<String>> {
        let args: T::Args = serde_json::from_value(arguments.clone()).ok()?;
        Tool::render_call(self, &args, width)
    }

    fn render_result(
        &self,
        result: &ToolResultMessage,
        details: Option<&Value>,
        width: usize,
    ) -> Option<Vec<String>> {
        Tool::render_result(self, result, details, width)
    }

    fn prompt_guidelines(&self) -> Option<String> {
        Tool::prompt_guidelines(self)
    }

    fn level_of(&self, arguments: &Value) -> ToolLevel {
        // Arguments that do not parse fail at run time; until then, the tool's level.
        match serde_json::from_value::<T::Args>(arguments.clone()) {
            Ok(args) => Tool::level_of(self, &args),
            Err(_) => T::LEVEL,
        }
    }

    fn written_path(&self, arguments: &Value) -> Option<String> {
        let args: T::Args = serde_json::from_value(arguments.clone()).ok()?;
        Tool::written_path(self, &args)
    }

    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        match serde_json::from_value::<T::Args>(arguments.clone()) {
            Ok(args) => Tool::written_paths(self, &args),
            Err(_) => Vec::new(),
        }
    }

    fn summary(&self, arguments: &Value) -> Option<String> {
        let args: T::Args = serde_json::from_value(arguments.clone()).ok()?;
        Tool::summary(self, &args)
    }

    fn execute(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: T::Args = serde_json::from_value(arguments)
                .map_err(|e| ToolError::Model(format!("invalid arguments for {}: {e}", T::NAME)))?;
            self.run(args, cx).await
        })
    }
}

/// The JSON Schema of `A`, compacted for the request: no `$schema`, no `title`, no
/// integer `format`s, and `minimum: 0` dropped for unsigned integers, which the
/// parser enforces anyway. Every byte here is sent on every request.
pub fn schema_of<A: JsonSchema>() -> Value {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<A>()
        .to_value();
    compact(&mut schema);
    if let Value::Object(map) = &mut schema {
        // The args struct's own doc comment repeats the tool description.
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
    }
    schema
}

fn compact(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let is_int = map.get("type").and_then(Value::as_str) == Some("integer")
                || map
                    .get("type")
                    .and_then(Value::as_array)
                    .is_some_and(|t| t.iter().any(|x| x == "integer"));
            if is_int {
                map.remove("format");
                if map.get("minimum").and_then(Value::as_f64) == Some(0.0) {
                    map.remove("minimum");
                }
            }
            // `Option<T>` becomes `type: [T, "null"]`; models handle plain `T` with the
            // field left out of `required` better, and the parser accepts both.
            if let Some(Value::Array(types)) = map.get("type")
                && types.len() == 2
                && types.iter().any(|t| t == "null")
                && let Some(single) = types.iter().find(|t| *t != "null").cloned()
            {
                map.insert("type".into(), single);
            }
            for child in map.values_mut() {
                compact(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(compact),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// File to read.
        path: String,
        /// First line, 1-based.
        offset: Option<usize>,
    }

    struct Echo;
    impl Tool for Echo {
        type Args = Args;
        const NAME: &'static str = "echo";
        const LEVEL: ToolLevel = ToolLevel::ReadOnly;
        fn description(&self) -> String {
            "Echo the path.".into()
        }
        async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(args.path))
        }
    }

    #[test]
    fn schema_is_derived_from_the_args_and_compact() {
        assert_eq!(
            Echo.spec().parameters,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to read."},
                    "offset": {"type": "integer", "description": "First line, 1-based."}
                },
                "required": ["path"]
            })
        );
    }

    #[tokio::test]
    async fn arguments_that_do_not_fit_the_schema_are_a_model_error() {
        let err = Echo.execute(json!({"offset": 3}), ToolContext::detached("c")).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::Model("invalid arguments for echo: missing field `path`".into())
        );
        let ok = Echo.execute(json!({"path": "a"}), ToolContext::detached("c")).await.unwrap();
        assert_eq!(ok, ToolOutput::text("a"));
    }
}
