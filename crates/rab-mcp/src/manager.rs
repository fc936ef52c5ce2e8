//! [`McpManager`]: starts every configured server in the background, tracks its state,
//! and hands out its tools, resources and prompts.
//!
//! Starting never blocks: each server gets a task of its own on the current tokio
//! runtime, and the tools appear through [`McpManager::tool_source`] as servers become
//! ready. State lives behind one `std` mutex never held across an await; every change
//! bumps a version that the tool source reports and a `watch` channel announces.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rab_agent::ToolSource;
use rab_tools::Sandbox;
use rmcp::model::{GetPromptRequestParams, Prompt};
use rmcp::service::{Peer, RoleClient};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::{Error, connect, prompts, tools};

/// How long one tool call may take by default: long builds and searches finish, a
/// server that never answers does not hold a headless run for ever.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// Settings for [`McpManager::start`].
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// Confines stdio servers and lists the variables removed from their environment.
    pub sandbox: Sandbox,
    /// Working directory of stdio servers without a `cwd` of their own.
    pub cwd: PathBuf,
    /// How long a server may take to start when its config gives no `timeout`.
    pub startup_timeout: Duration,
    /// How long one tool call may take when the server's config gives no `toolTimeout`.
    pub tool_timeout: Duration,
    /// Sent to servers as the client's name.
    pub client_name: String,
    /// Sent to servers as the client's version.
    pub client_version: String,
}

impl StartOptions {
    /// Options with a 30 s startup timeout, naming the client `rab` at this crate's version.
    pub fn new(sandbox: Sandbox, cwd: PathBuf) -> Self {
        Self {
            sandbox,
            cwd,
            startup_timeout: Duration::from_secs(30),
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            client_name: "rab".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Where a server is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerState {
    /// Connecting and listing its tools.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// Could not start; the message says why and what to do.
    Failed(String),
    /// Was ready, then its process exited or its connection closed; the message has the
    /// exit status and the last lines of its stderr.
    Crashed(String),
    /// `"disabled": true` in its configuration.
    Disabled,
}

impl ServerState {
    /// Whether the server is done starting, one way or another.
    pub fn is_settled(&self) -> bool {
        match self {
            Self::Starting => false,
            Self::Ready | Self::Failed(_) | Self::Crashed(_) | Self::Disabled => true,
        }
    }

    /// A short word for status lines: `starting`, `ready`, `failed`, `crashed`, `disabled`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
            Self::Crashed(_) => "crashed",
            Self::Disabled => "disabled",
        }
    }
}

/// One argument a prompt declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgumentInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub is_required: bool,
}

/// A prompt a server offers (shown as a slash command).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server offering it.
    pub server: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments, in the order a command line fills them.
    pub arguments: Vec<PromptArgumentInfo>,
}

impl PromptInfo {
    pub(crate) fn from_rmcp(server: &str, prompt: &Prompt) -> Self {
        Self {
            server: server.to_owned(),
            name: prompt.name.clone(),
            description: prompt.description.clone(),
            arguments: prompt
                .arguments
                .iter()
                .flatten()
                .map(|a| PromptArgumentInfo {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    is_required: a.required.unwrap_or(false),
                })
                .collect(),
        }
    }
}

/// A server as `/mcp` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// The command line or URL.
    pub transport: String,
    /// Where it is in its life.
    pub state: ServerState,
    /// The server's own tool names (not the `mcp__…` names the model sees).
    pub tools: Vec<String>,
    /// How many resources it listed when it started.
    pub resource_count: usize,
    /// Its prompts.
    pub prompts: Vec<PromptInfo>,
    /// The instructions it sent when connecting.
    pub instructions: Option<String>,
}

/// What a ready server offers, listed when it connected and again on list changes.
#[derive(Clone)]
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) tools: Vec<rmcp::model::Tool>,
    pub(crate) has_resources: bool,
    pub(crate) resource_count: usize,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) instructions: Option<String>,
}

pub(crate) struct Slot {
    pub(crate) config: ServerConfig,
    pub(crate) state: ServerState,
    /// Bumped by each restart, so an old task's late updates are ignored.
    generation: u64,
    pub(crate) live: Option<Live>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

/// State shared by the manager, its server tasks and its tools.
pub(crate) struct Shared {
    /// List-changed notifications not yet re-listed.
    pub(crate) lists: Arc<ListSync>,
    slots: Mutex<Vec<Slot>>,
    version: AtomicU64,
    changed: watch::Sender<u64>,
    pub(crate) options: StartOptions,
    runtime: Option<tokio::runtime::Handle>,
}

/// Counts list-changed notifications still being re-listed, so a tool call that made a
/// server change its list can wait until the new list is in (the model's next request
/// then offers the new tools).
#[derive(Debug, Default)]
pub(crate) struct ListSync {
    pending: std::sync::atomic::AtomicUsize,
    settled: tokio::sync::Notify,
}

impl ListSync {
    /// A notification arrived.
    pub(crate) fn begin(&self) {
        self.pending.fetch_add(1, Ordering::SeqCst);
    }

    /// Its list was read again (or could not be).
    pub(crate) fn end(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// Waits, at most `max`, until no re-listing is pending. Yields first, so
    /// notifications that arrived with a response are counted.
    pub(crate) async fn settle(&self, max: Duration) {
        tokio::task::yield_now().await;
        let deadline = tokio::time::Instant::now() + max;
        loop {
            let notified = self.settled.notified();
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

impl Shared {
    pub(crate) fn slots(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        let version = self.version.fetch_add(1, Ordering::SeqCst) + 1;
        self.changed.send_replace(version);
    }

    /// Applies `change` to the server's slot if it still belongs to `generation`.
    pub(crate) fn update(&self, name: &str, generation: u64, change: impl FnOnce(&mut Slot)) {
        let applied = {
            let mut slots = self.slots();
            match slots.iter_mut().find(|s| s.config.name == name && s.generation == generation) {
                Some(slot) => {
                    change(slot);
                    true
                }
                None => false,
            }
        };
        if applied {
            self.bump();
        }
    }

    /// The connection to a ready server, or a message for the model saying why there
    /// is none and what to do.
    pub(crate) fn peer(&self, server: &str) -> Result<Peer<RoleClient>, String> {
        self.peer_and_timeout(server).map(|(peer, _)| peer)
    }

    /// The server's peer, and how long one of its tool calls may take.
    pub(crate) fn peer_and_timeout(
        &self,
        server: &str,
    ) -> Result<(Peer<RoleClient>, Duration), String> {
        let slots = self.slots();
        let Some(slot) = slots.iter().find(|s| s.config.name == server) else {
            return Err(format!("MCP server `{server}` is no longer configured"));
        };
        let timeout = slot.config.tool_timeout.unwrap_or(self.options.tool_timeout);
        match (&slot.state, &slot.live) {
            (ServerState::Ready, Some(live)) => Ok((live.peer.clone(), timeout)),
            (state, _) => Err(not_ready_message(server, state)),
        }
    }
}

/// Why a server cannot take a call, with what to do about it.
pub(crate) fn not_ready_message(server: &str, state: &ServerState) -> String {
    let restart = format!("restart it with /mcp restart {server}");
    match state {
        ServerState::Starting => {
            format!("MCP server `{server}` is still starting; try again in a moment")
        }
        ServerState::Ready => format!("MCP server `{server}` lost its connection; {restart}"),
        ServerState::Failed(why) => {
            format!("MCP server `{server}` failed to start: {why}; {restart}")
        }
        ServerState::Crashed(why) => format!("MCP server `{server}` crashed: {why}; {restart}"),
        ServerState::Disabled => format!(
            "MCP server `{server}` is disabled; set \"disabled\": false in its configuration"
        ),
    }
}

/// Owns the server tasks: dropping the last handle stops them and kills their processes.
struct Inner {
    shared: Arc<Shared>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for slot in self.shared.slots().iter_mut() {
            slot.stop.cancel();
            // Aborting drops the task's future, whose child guard kills the process group.
            if let Some(task) = slot.task.take() {
                task.abort();
            }
        }
    }
}

/// The MCP client: every configured server, started in the background. Cheap to clone;
/// the servers stop when the last clone (including the one inside
/// [`McpManager::tool_source`]) is dropped.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> =
            self.inner.shared.slots().iter().map(|s| s.config.name.clone()).collect();
        f.debug_struct("McpManager").field("servers", &names).finish()
    }
}

impl McpManager {
    /// Starts every server in `servers` on the current tokio runtime and returns at once.
    /// Disabled servers are listed but not started; servers whose configuration has a
    /// problem are reported as failed. Without a runtime every server fails (no panic).
    pub fn start(servers: Vec<ServerConfig>, options: StartOptions) -> Self {
        let (changed, _) = watch::channel(0);
        let slots = servers
            .into_iter()
            .map(|config| Slot {
                config,
                state: ServerState::Starting,
                generation: 0,
                live: None,
                stop: CancellationToken::new(),
                task: None,
            })
            .collect();
        let shared = Arc::new(Shared {
            lists: Arc::default(),
            slots: Mutex::new(slots),
            version: AtomicU64::new(0),
            changed,
            options,
            runtime: tokio::runtime::Handle::try_current().ok(),
        });
        {
            let mut slots = shared.slots();
            for slot in slots.iter_mut() {
                launch(&shared, slot);
            }
        }
        shared.bump();
        Self { inner: Arc::new(Inner { shared }) }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// Every configured server with its state, tools, prompts and instructions.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.shared()
            .slots()
            .iter()
            .map(|slot| {
                let live = slot.live.as_ref();
                ServerStatus {
                    name: slot.config.name.clone(),
                    transport: slot.config.transport.summary(),
                    state: slot.state.clone(),
                    tools: live
                        .map(|l| l.tools.iter().map(|t| t.name.to_string()).collect())
                        .unwrap_or_default(),
                    resource_count: live.map_or(0, |l| l.resource_count),
                    prompts: live
                        .map(|l| {
                            l.prompts
                                .iter()
                                .map(|p| PromptInfo::from_rmcp(&slot.config.name, p))
                                .collect()
                        })
                        .unwrap_or_default(),
                    instructions: live.and_then(|l| l.instructions.clone()),
                }
            })
            .collect()
    }

    /// A number that changes whenever any server's state, tools, resources or prompts do.
    pub fn version(&self) -> u64 {
        self.shared().version()
    }

    /// A receiver told the new [`McpManager::version`] after every change (for a UI).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared().changed.subscribe()
    }

    /// Waits until every server is ready, failed, crashed or disabled, at most `timeout`.
    /// Returns whether they all got there.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let mut changes = self.subscribe();
        let settled = async {
            loop {
                if self.shared().slots().iter().all(|s| s.state.is_settled()) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, settled).await.is_ok()
    }

    /// The tools of every ready server, plus the resource tools while any ready server
    /// offers resources. The source keeps the servers running while it lives.
    pub fn tool_source(&self) -> Arc<dyn ToolSource> {
        Arc::new(tools::McpToolSource::new(self.clone()))
    }

    /// Stops the server (if running) and starts it again in the background.
    pub fn restart(&self, name: &str) -> Result<(), Error> {
        let shared = self.shared();
        {
            let mut slots = shared.slots();
            let known = known_names(&slots);
            let Some(slot) = slots.iter_mut().find(|s| s.config.name == name) else {
                return Err(Error::UnknownServer { name: name.to_owned(), known });
            };
            if slot.config.disabled {
                return Err(Error::NotReady {
                    server: name.to_owned(),
                    state: "disabled".into(),
                    advice: format!(
                        "set \"disabled\": false for it in {}",
                        slot.config.source.display()
                    ),
                });
            }
            stop(slot);
            slot.generation += 1;
            slot.stop = CancellationToken::new();
            launch(shared, slot);
        }
        shared.bump();
        Ok(())
    }

    /// Stops every server, closing connections and killing (and reaping) processes.
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut slots = self.shared().slots();
            slots
                .iter_mut()
                .filter_map(|slot| {
                    slot.stop.cancel();
                    slot.generation += 1;
                    slot.live = None;
                    if slot.state != ServerState::Disabled {
                        slot.state = ServerState::Failed(
                            "stopped by shutdown; /mcp restart starts it again".into(),
                        );
                    }
                    slot.task.take()
                })
                .collect()
        };
        self.shared().bump();
        for task in tasks {
            let _ = task.await;
        }
    }

    /// Every prompt of every ready server.
    pub fn prompts(&self) -> Vec<PromptInfo> {
        self.shared()
            .slots()
            .iter()
            .filter(|s| s.state == ServerState::Ready)
            .filter_map(|s| Some((s.config.name.as_str(), s.live.as_ref()?)))
            .flat_map(|(name, live)| live.prompts.iter().map(|p| PromptInfo::from_rmcp(name, p)))
            .collect()
    }

    /// Fetches a prompt, filling its declared arguments in order from the
    /// whitespace-separated `args` (the last argument takes the rest of the line), and
    /// joins its messages into one text.
    pub async fn get_prompt(&self, server: &str, name: &str, args: &str) -> Result<String, Error> {
        let (peer, prompt) = {
            let slots = self.shared().slots();
            let known = known_names(&slots);
            let Some(slot) = slots.iter().find(|s| s.config.name == server) else {
                return Err(Error::UnknownServer { name: server.to_owned(), known });
            };
            let (ServerState::Ready, Some(live)) = (&slot.state, &slot.live) else {
                return Err(Error::NotReady {
                    server: server.to_owned(),
                    state: slot.state.label().into(),
                    advice: not_ready_message(server, &slot.state),
                });
            };
            let Some(prompt) = live.prompts.iter().find(|p| p.name == name) else {
                let names: Vec<&str> = live.prompts.iter().map(|p| p.name.as_str()).collect();
                return Err(Error::UnknownPrompt {
                    server: server.to_owned(),
                    prompt: name.to_owned(),
                    known: if names.is_empty() { "none".into() } else { names.join(", ") },
                });
            };
            (live.peer.clone(), PromptInfo::from_rmcp(server, prompt))
        };
        let arguments = prompts::map_arguments(&prompt, args)?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = peer.get_prompt(params).await.map_err(|e| Error::Request {
            server: server.to_owned(),
            message: format!(
                "getting prompt `{name}` failed: {}",
                connect::describe_service_error(server, &e)
            ),
        })?;
        Ok(prompts::join_messages(&result))
    }
}

fn known_names(slots: &[Slot]) -> String {
    if slots.is_empty() {
        return "none".into();
    }
    slots.iter().map(|s| s.config.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// Ends a slot's task; aborting drops its connection and kills its process group.
fn stop(slot: &mut Slot) {
    slot.stop.cancel();
    if let Some(task) = slot.task.take() {
        task.abort();
    }
    slot.live = None;
}

/// Sets a slot going: disabled, failed for a config problem, or a task connecting.
fn launch(shared: &Arc<Shared>, slot: &mut Slot) {
    slot.live = None;
    if slot.config.disabled {
        slot.state = ServerState::Disabled;
        return;
    }
    if let Some(problem) = &slot.config.problem {
        slot.state = ServerState::Failed(problem.clone());
        return;
    }
    let Some(runtime) = &shared.runtime else {
        slot.state = ServerState::Failed(
            "no tokio runtime was running when MCP servers were started".into(),
        );
        return;
    };
    slot.state = ServerState::Starting;
    let task =
        connect::run(Arc::clone(shared), slot.config.clone(), slot.generation, slot.stop.clone());
    slot.task = Some(runtime.spawn(task));
}
