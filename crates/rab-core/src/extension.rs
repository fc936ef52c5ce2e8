//! The one way capabilities reach a session: an [`Extension`] provides tools, commands,
//! hooks around tool calls and reactions to lifecycle events. rab's own tools and
//! commands arrive through it too, as do skills, prompt commands and MCP servers, so an
//! extension compiled into a custom binary is a peer of the built-ins.
//!
//! [`Extensions`] collects a list of them in order: the first tool or command of a name
//! wins, and each conflict is reported once.

use std::any::Any;
use std::sync::Arc;

use rab_agent::{AgentTool, BoxFuture, ContextTransform, HookDecision, ToolHook, ToolSource};
use rab_ai::{Message, ToolCall, ToolResultMessage};
use tokio_util::sync::CancellationToken;

use crate::AgentSession;

/// A provider of tools, commands and hooks.
pub trait Extension: Send + Sync {
    /// Short name, used in conflict reports and `/help`.
    fn name(&self) -> &str;

    /// Tools the model may call.
    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        Vec::new()
    }

    /// Tools that come and go while the session runs (MCP servers starting or changing
    /// their list). Read before every request.
    fn tool_source(&self) -> Option<Arc<dyn ToolSource>> {
        None
    }

    /// Commands a person can run as `/name args` or `,name args`.
    fn commands(&self) -> Vec<Command> {
        Vec::new()
    }

    /// Commands that come and go (an MCP server's prompts), read each time commands
    /// are listed or looked up. A name a fixed command already has is ignored.
    fn dynamic_commands(&self) -> Vec<Command> {
        Vec::new()
    }

    /// Before a tool call runs (after the permission check): continue, rewrite its
    /// arguments or block it with a reason the model sees. `cancel` fires when the run
    /// is interrupted: a hook that waits (on the network, on a person) must stop then.
    fn before_tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a dyn AgentTool,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        let _ = (call, tool, cancel);
        Box::pin(async { HookDecision::Continue })
    }

    /// After a tool call ran; `Some` replaces the result. `cancel` as in
    /// [`Extension::before_tool_call`].
    fn after_tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a ToolResultMessage,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<ToolResultMessage>> {
        let _ = (call, result, cancel);
        Box::pin(async { None })
    }

    /// Whether [`Extension::before_tool_call`] or [`Extension::after_tool_call`] do
    /// anything; when false the extension is not put in the tool-call path at all.
    fn has_tool_hooks(&self) -> bool {
        false
    }

    /// Before each request to the model: the messages to send instead of `messages`
    /// (prune old tool output, inject context fetched from elsewhere), or `None` to
    /// send them as they are. Only the request changes: the session keeps what
    /// happened. A result that separates a tool call from its result is not used (a
    /// warning goes to the log). Extensions run in order, each given what the one
    /// before it returned. `cancel` as in [`Extension::before_tool_call`].
    fn transform_context<'a>(
        &'a self,
        messages: &'a [Message],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Message>>> {
        let _ = (messages, cancel);
        Box::pin(async { None })
    }

    /// Whether [`Extension::transform_context`] does anything; when false the
    /// extension is not asked before requests.
    fn has_context_transform(&self) -> bool {
        false
    }

    /// Whether it will bring tools after start-up (MCP servers still starting): the
    /// session then keeps its tool view ready for them.
    fn expects_tools(&self) -> bool {
        false
    }

    /// The services it runs (MCP servers), whose state the runtime reports as events.
    fn services(&self) -> Option<Arc<dyn Services>> {
        None
    }

    /// The extension as `Any`, for a front end that knows its type; `None` by default.
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }

    /// Something happened in the session's life.
    fn on_event(&self, event: &Lifecycle<'_>) {
        let _ = event;
    }
}

/// Services an extension runs in the background (MCP servers), watched by the runtime.
pub trait Services: Send + Sync {
    /// Each service's state now.
    fn statuses(&self) -> Vec<ServiceStatus>;
    /// A counter that changes whenever a state does.
    fn watch(&self) -> tokio::sync::watch::Receiver<u64>;
}

/// One service's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceStatus {
    /// What kind of service it is.
    pub kind: ServiceKind,
    /// Its name (the configured server name, the plugin's name).
    pub name: String,
    /// Where it is.
    pub state: ServiceState,
    /// How many tools it offers.
    pub tools: usize,
    /// How many times it was loaded (a plugin reloaded from a changed file counts up),
    /// so a reload that changes nothing else is reported too; 0 where that means
    /// nothing.
    pub generation: u64,
}

/// The kinds of service an extension runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceKind {
    /// An MCP server.
    McpServer,
    /// A WASM plugin.
    Plugin,
}

impl ServiceKind {
    /// What a person calls it: `MCP server`, `plugin`.
    pub fn label(self) -> &'static str {
        match self {
            Self::McpServer => "MCP server",
            Self::Plugin => "plugin",
        }
    }

    /// As a protocol value: `mcp_server`, `plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::McpServer => "mcp_server",
            Self::Plugin => "plugin",
        }
    }

    /// The commands that show more about a service of this kind and try it again.
    pub fn hint(self, name: &str) -> String {
        match self {
            Self::McpServer => format!("/mcp shows more; /mcp restart {name} tries again"),
            Self::Plugin => "/plugins shows more; /reload-plugins tries again".to_owned(),
        }
    }
}

/// Where a service is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServiceState {
    /// Starting.
    Starting,
    /// Ready: its tools are offered.
    Ready,
    /// Could not start; why, and what to do.
    Failed(String),
    /// Was ready, then stopped; why.
    Crashed(String),
    /// Turned off in its configuration.
    Disabled,
    /// Gone while the session runs (a plugin whose file was removed): its tools are
    /// no longer offered.
    Removed,
}

impl ServiceState {
    /// A one-word label.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
            Self::Crashed(_) => "crashed",
            Self::Disabled => "disabled",
            Self::Removed => "removed",
        }
    }
}

/// Moments in a session's life extensions hear about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle<'a> {
    /// A session started or resumed (`source`: `startup`, `resume`, `clear`).
    SessionStart {
        /// The session's id.
        session_id: &'a str,
        /// Why it started.
        source: &'a str,
    },
    /// A prompt is about to be sent.
    Prompt {
        /// The prompt's text.
        text: &'a str,
    },
    /// The agent finished answering a prompt.
    AgentEnd,
    /// The session ends (`reason`: `exit`, `clear`, `other`).
    SessionEnd {
        /// Why it ended.
        reason: &'a str,
    },
}

/// A command: `/name args` (and `,name args`).
#[derive(Clone)]
pub struct Command {
    /// Name without the slash (`model`, `skill:review`, `mcp__github__pr`).
    pub name: String,
    /// One line for `/help` and the completion list.
    pub description: String,
    /// What the arguments look like (`[focus]`, `NAME`), if it takes any.
    pub argument_hint: Option<String>,
    /// What runs it.
    pub handler: Arc<dyn CommandHandler>,
    /// Where it comes from.
    pub source: CommandSource,
}

/// Where a command comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandSource {
    /// rab itself.
    Builtin,
    /// A prompt command: the markdown file.
    Prompt(std::path::PathBuf),
    /// A skill: its `SKILL.md`.
    Skill(std::path::PathBuf),
    /// An extension (an MCP server's prompt, a plugin): its name.
    Extension(String),
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// Runs a command and suggests its arguments.
pub trait CommandHandler: Send + Sync {
    /// Runs the command with the rest of the line (trimmed).
    fn run(&self, args: &str, cx: &mut CommandContext<'_>) -> CommandOutcome;

    /// Suggestions for the argument being typed (`args` is everything after the name
    /// and one space, up to the cursor).
    fn completions(&self, args: &str, host: &dyn Any) -> Vec<Completion> {
        let _ = (args, host);
        Vec::new()
    }
}

/// What a command gets to work with.
pub struct CommandContext<'a> {
    /// The session it runs in.
    pub session: &'a mut AgentSession,
    /// Every command (for `/help`).
    pub extensions: &'a Extensions,
    /// What the running program offers its own commands (rab's binary passes its
    /// start-up state); extensions that do not know the host ignore it.
    pub host: &'a dyn Any,
}

/// One suggested argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The text that replaces the argument being typed.
    pub value: String,
    /// Shown beside it.
    pub description: Option<String>,
}

/// What a command asks the mode to do.
pub enum CommandOutcome {
    /// Show this text.
    Info(String),
    /// Show this error.
    Error(String),
    /// Leave rab.
    Quit,
    /// Replace the session with a fresh one.
    NewSession,
    /// Let the user pick a session to resume (or resume this file).
    Resume(Option<String>),
    /// Let the user pick a model.
    PickModel,
    /// Clear the screen.
    Clear,
    /// Show the keyboard shortcuts.
    Hotkeys,
    /// `/memory`: open one of these instruction files in the user's editor (`open`, or
    /// the one they pick).
    Memory {
        /// The files, in the order listed.
        files: Vec<crate::memory::MemoryFile>,
        /// The one to open at once.
        open: Option<usize>,
    },
    /// Show the settings in effect (this text, or a front end's own settings editor).
    Settings(String),
    /// Compact the conversation now.
    Compact(Option<String>),
    /// Show the tree (the UI opens a picker).
    Tree,
    /// Continue from this entry (summarising the abandoned branch or not).
    Branch(String, bool),
    /// Hand off to a fresh session.
    Handoff(Option<String>),
    /// Search every session.
    Search(String),
    /// Send this as the user's message.
    Prompt(PromptRequest),
    /// `/init`: a read-only run that proposes an AGENTS.md, written when approved.
    Init,
    /// Read skills, prompt commands, agents and settings again.
    Reload,
    /// [`CommandOutcome::Reload`] with this settings profile applied (`None`: none).
    Profile(Option<String>),
    /// Rewind to a point (`None`: undo the last rewind), as `/rewind` says.
    Rewind(Option<String>, crate::rewind::What),
    /// Ask for a provider's API key (masked) and store it.
    Login(String),
    /// Sign in to a provider through a browser (`openai`: a ChatGPT plan;
    /// `openrouter`: OAuth PKCE), then reload to use it.
    SignIn(String),
    /// Work that takes a while (fetching an MCP prompt): the mode runs it without
    /// blocking input and handles its outcome when it is done.
    Later(BoxFuture<'static, CommandOutcome>),
}

impl std::fmt::Debug for CommandOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Info(t) => f.debug_tuple("Info").field(t).finish(),
            Self::Error(t) => f.debug_tuple("Error").field(t).finish(),
            Self::Quit => f.write_str("Quit"),
            Self::NewSession => f.write_str("NewSession"),
            Self::Resume(p) => f.debug_tuple("Resume").field(p).finish(),
            Self::PickModel => f.write_str("PickModel"),
            Self::Clear => f.write_str("Clear"),
            Self::Hotkeys => f.write_str("Hotkeys"),
            Self::Memory { files, open } => {
                f.debug_struct("Memory").field("files", files).field("open", open).finish()
            }
            Self::Settings(_) => f.write_str("Settings"),
            Self::Compact(t) => f.debug_tuple("Compact").field(t).finish(),
            Self::Tree => f.write_str("Tree"),
            Self::Branch(id, s) => f.debug_tuple("Branch").field(id).field(s).finish(),
            Self::Handoff(t) => f.debug_tuple("Handoff").field(t).finish(),
            Self::Search(t) => f.debug_tuple("Search").field(t).finish(),
            Self::Prompt(p) => f.debug_tuple("Prompt").field(p).finish(),
            Self::Init => f.write_str("Init"),
            Self::Reload => f.write_str("Reload"),
            Self::Profile(p) => f.debug_tuple("Profile").field(p).finish(),
            Self::Rewind(p, w) => f.debug_tuple("Rewind").field(p).field(w).finish(),
            Self::Login(p) => f.debug_tuple("Login").field(p).finish(),
            Self::SignIn(p) => f.debug_tuple("SignIn").field(p).finish(),
            Self::Later(_) => f.write_str("Later(..)"),
        }
    }
}

/// A message a command sends to the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptRequest {
    /// The text.
    pub text: String,
    /// Switch to this model first.
    pub model: Option<String>,
    /// Tools allowed without asking while the model answers it (permission rules such
    /// as `bash(git status*)`).
    pub allowed_tools: Vec<String>,
}

impl PromptRequest {
    /// Just text.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// Which tools of the extensions' sources (MCP servers, plugins) a session offers: the
/// same choice as for the fixed tools (`--no-tools`, `--tools`, `excludeTools`). It is
/// given a tool's name and the other name rules know it by (a plugin's tool:
/// `plugin__NAME__TOOL`).
pub type ToolFilter = Arc<dyn Fn(&str, Option<&str>) -> bool + Send + Sync>;

/// The extensions of a run, collected in order.
#[derive(Default)]
pub struct Extensions {
    list: Vec<Arc<dyn Extension>>,
    tools: Vec<Arc<dyn AgentTool>>,
    commands: Vec<Command>,
    warnings: Vec<String>,
    filter: Option<ToolFilter>,
}

/// A tool source seen through a [`ToolFilter`].
struct Filtered {
    source: Arc<dyn ToolSource>,
    filter: ToolFilter,
}

impl ToolSource for Filtered {
    fn version(&self) -> u64 {
        self.source.version()
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.source
            .tools()
            .into_iter()
            .filter(|t| (self.filter)(&t.name(), t.rule_alias().as_deref()))
            .collect()
    }
}

impl Extensions {
    /// Collects `list`: the first tool or command of a name wins; each later one is
    /// left out with a warning naming both extensions.
    pub fn new(list: Vec<Arc<dyn Extension>>) -> Self {
        let mut out = Self { list, ..Self::default() };
        let mut tool_owner: Vec<(String, String)> = Vec::new();
        let mut command_owner: Vec<(String, String)> = Vec::new();
        for ext in &out.list {
            for tool in ext.tools() {
                let name = tool.name();
                match tool_owner.iter().find(|(n, _)| *n == name) {
                    Some((_, first)) => out.warnings.push(format!(
                        "tool {name} of extension {} is left out: extension {first} already \
                         provides it",
                        ext.name()
                    )),
                    None => {
                        tool_owner.push((name, ext.name().to_owned()));
                        out.tools.push(tool);
                    }
                }
            }
            for command in ext.commands() {
                match command_owner.iter().find(|(n, _)| *n == command.name) {
                    Some((_, first)) => out.warnings.push(format!(
                        "command /{} of extension {} is left out: extension {first} already \
                         provides it",
                        command.name,
                        ext.name()
                    )),
                    None => {
                        command_owner.push((command.name.clone(), ext.name().to_owned()));
                        out.commands.push(command);
                    }
                }
            }
        }
        out
    }

    /// The extensions, in load order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Extension>> {
        self.list.iter()
    }

    /// Conflicts found while collecting, one line each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every tool, deduplicated.
    pub fn tools(&self) -> &[Arc<dyn AgentTool>] {
        &self.tools
    }

    /// Tool sources (tools that come and go).
    pub fn tool_sources(&self) -> Vec<Arc<dyn ToolSource>> {
        let sources = self.list.iter().filter_map(|e| e.tool_source());
        match &self.filter {
            None => sources.collect(),
            Some(filter) => sources
                .map(|source| {
                    let filter = filter.clone();
                    Arc::new(Filtered { source, filter }) as Arc<dyn ToolSource>
                })
                .collect(),
        }
    }

    /// Offers only the sources' tools `filter` lets through.
    pub fn with_tool_filter(mut self, filter: ToolFilter) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Every command, deduplicated, in registration order (the fixed ones, then those
    /// that come and go).
    pub fn commands(&self) -> Vec<Command> {
        let mut out = self.commands.clone();
        for ext in &self.list {
            for c in ext.dynamic_commands() {
                if !out.iter().any(|o| o.name == c.name) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The command called `name`.
    pub fn command(&self, name: &str) -> Option<Command> {
        if let Some(c) = self.commands.iter().find(|c| c.name == name) {
            return Some(c.clone());
        }
        self.list.iter().find_map(|e| e.dynamic_commands().into_iter().find(|c| c.name == name))
    }

    /// Hooks for the extensions that have tool hooks, in order.
    pub fn hooks(&self) -> Vec<Arc<dyn ToolHook>> {
        self.list
            .iter()
            .filter(|e| e.has_tool_hooks())
            .map(|e| Arc::new(ExtensionHook(e.clone())) as Arc<dyn ToolHook>)
            .collect()
    }

    /// Context transforms of the extensions that have one, in order.
    pub fn transforms(&self) -> Vec<Arc<dyn ContextTransform>> {
        self.list
            .iter()
            .filter(|e| e.has_context_transform())
            .map(|e| Arc::new(ExtensionHook(e.clone())) as Arc<dyn ContextTransform>)
            .collect()
    }

    /// Tells every extension about `event`.
    pub fn emit(&self, event: &Lifecycle<'_>) {
        for ext in &self.list {
            ext.on_event(event);
        }
    }

    /// Parses `/name args`, or `,name args` when `name` is a command (a `,` line that
    /// names no command is for the shell). `//` and `,,` lines are not commands.
    pub fn parse<'l>(&self, line: &'l str) -> Option<(Command, &'l str)> {
        let line = line.trim();
        let rest = line.strip_prefix('/').or_else(|| line.strip_prefix(','))?;
        if rest.starts_with(['/', ',']) || rest.is_empty() {
            return None;
        }
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        self.command(name).map(|c| (c, args.trim()))
    }

    /// Whether `line` is meant as a command: `/name` (known or not) or `,name` of a
    /// known command.
    pub fn is_command_line(&self, line: &str) -> bool {
        let line = line.trim();
        if self.parse(line).is_some() {
            return true;
        }
        line.strip_prefix('/').is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
    }

    /// Runs `line` if it is a command. An unknown `/name` is an error naming it.
    pub fn run(
        &self,
        line: &str,
        session: &mut AgentSession,
        host: &dyn Any,
    ) -> Option<CommandOutcome> {
        if let Some((command, args)) = self.parse(line) {
            let handler = command.handler;
            let mut cx = CommandContext { session, extensions: self, host };
            return Some(handler.run(args, &mut cx));
        }
        let name = line.trim().strip_prefix('/')?.split_whitespace().next()?;
        if name.starts_with('/') {
            return None;
        }
        Some(CommandOutcome::Error(format!("unknown command /{name}; /help lists the commands")))
    }

    /// Suggestions for the argument of the command on `line` (`/name partial`).
    pub fn completions(&self, line: &str, host: &dyn Any) -> Option<(usize, Vec<Completion>)> {
        let rest = line.strip_prefix('/').or_else(|| line.strip_prefix(','))?;
        let (name, args) = rest.split_once(' ')?;
        let command = self.command(name)?;
        let items = command.handler.completions(args, host);
        Some((line.len() - args.len(), items))
    }
}

/// Puts an extension's tool hooks in the tool-call path (and its context transform
/// before each request).
struct ExtensionHook(Arc<dyn Extension>);

impl ToolHook for ExtensionHook {
    fn before<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a dyn AgentTool,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, HookDecision> {
        self.0.before_tool_call(call, tool, cancel)
    }

    fn after<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a ToolResultMessage,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<ToolResultMessage>> {
        self.0.after_tool_call(call, result, cancel)
    }
}

impl ContextTransform for ExtensionHook {
    fn transform<'a>(
        &'a self,
        messages: &'a [Message],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Message>>> {
        self.0.transform_context(messages, cancel)
    }
}

/// A command whose handler is a closure (for small extensions and tests).
pub fn command(
    name: &str,
    description: &str,
    run: impl Fn(&str, &mut CommandContext<'_>) -> CommandOutcome + Send + Sync + 'static,
) -> Command {
    struct FnHandler<F>(F);
    impl<F> CommandHandler for FnHandler<F>
    where
        F: Fn(&str, &mut CommandContext<'_>) -> CommandOutcome + Send + Sync,
    {
        fn run(&self, args: &str, cx: &mut CommandContext<'_>) -> CommandOutcome {
            (self.0)(args, cx)
        }
    }
    Command {
        name: name.to_owned(),
        description: description.to_owned(),
        argument_hint: None,
        handler: Arc::new(FnHandler(run)),
        source: CommandSource::Extension(String::new()),
    }
}

#[cfg(test)]
mod tests;
