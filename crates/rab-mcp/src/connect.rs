//! One server's life: connect (spawning its process or opening its HTTP session), list
//! what it offers, then watch it until it is stopped, exits, or its connection closes,
//! re-listing whenever it says a list changed.
//!
//! Stdio servers run through the sandbox in a session (and so a process group) of their
//! own, without rab's keys in their environment. The group is killed when the task ends
//! or is aborted, so no server outlives the manager; tokio reaps what is left.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessSession};
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::{
    NotificationContext, Peer, QuitReason, RoleClient, RunningService,
    RunningServiceCancellationToken, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, Transport};
use crate::manager::{Live, ServerState, Shared, StartOptions};

/// Lines of a server's stderr kept for error messages.
const STDERR_LINES: usize = 20;
/// How long a stopped server gets to exit after its stdin closes before it is killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Which list a server said had changed.
#[derive(Clone, Copy, Debug)]
enum ListKind {
    Tools,
    Prompts,
    Resources,
}

/// rab's side of the protocol: identifies the client and turns list-changed
/// notifications into events for the server's task.
struct Handler {
    info: InitializeRequestParams,
    events: mpsc::UnboundedSender<ListKind>,
    lists: Arc<crate::manager::ListSync>,
}

impl Handler {
    fn changed(&self, kind: ListKind) {
        self.lists.begin();
        if self.events.send(kind).is_err() {
            self.lists.end();
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed(ListKind::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed(ListKind::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed(ListKind::Resources);
    }
}

/// List-changed events for a server's task; those left when it ends are counted as
/// done, so no tool call waits for them.
struct Changes {
    rx: mpsc::UnboundedReceiver<ListKind>,
    lists: Arc<crate::manager::ListSync>,
}

impl Drop for Changes {
    fn drop(&mut self) {
        self.rx.close();
        while self.rx.try_recv().is_ok() {
            self.lists.end();
        }
    }
}

/// The last lines a server wrote to stderr.
#[derive(Clone, Default)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    /// Reads `stderr` to its end in the background, keeping the last lines.
    fn collect(&self, server: &str, stderr: ChildStderr) -> tokio::task::JoinHandle<()> {
        let lines = Arc::clone(&self.lines);
        let server = server.to_owned();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                tracing::debug!(server = %server, "stderr: {line}");
                let mut lines = lines.lock().unwrap_or_else(PoisonError::into_inner);
                if lines.len() == STDERR_LINES {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        })
    }

    /// The kept lines, shared (notes of rab's own join them).
    fn lines(&self) -> Arc<Mutex<VecDeque<String>>> {
        Arc::clone(&self.lines)
    }

    /// `; stderr: …` with the kept lines, or nothing.
    fn suffix(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.is_empty() {
            return String::new();
        }
        let text: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("; stderr:\n{}", text.join("\n"))
    }
}

/// A stdio server's process group, killed when dropped unless already reaped.
struct ChildGuard {
    child: Box<dyn ChildWrapper>,
    is_reaped: bool,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl ChildGuard {
    async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.is_reaped = status.is_ok();
        status
    }

    /// Waits briefly for stderr to reach its end, so its last lines are kept.
    async fn drain_stderr(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
        }
    }

    /// Kills whatever is left of the group once the server itself has exited: its own
    /// children must not outlive it. A group id is not reused while any member lives.
    fn kill_stragglers(&mut self) {
        let _ = self.child.start_kill();
    }

    async fn kill(&mut self) {
        if !self.is_reaped && tokio::time::timeout(EXIT_GRACE, self.wait()).await.is_err() {
            let _ = self.child.start_kill();
            let _ = self.wait().await;
        }
        self.kill_stragglers();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.is_reaped {
            // SIGKILL to the whole group: a server's own children go with it.
            let _ = self.child.start_kill();
        }
    }
}

type Waiting = Pin<Box<dyn Future<Output = Result<QuitReason, tokio::task::JoinError>> + Send>>;

/// A connected server.
struct Connection {
    peer: Peer<RoleClient>,
    /// Resolves when the protocol loop ends; dropping it closes the connection.
    waiting: Waiting,
    cancel: Option<RunningServiceCancellationToken>,
    child: Option<ChildGuard>,
    tail: StderrTail,
}

impl Connection {
    fn new(service: RunningService<RoleClient, Handler>, child: Option<ChildGuard>) -> Self {
        let peer = service.peer().clone();
        let cancel = Some(service.cancellation_token());
        Self {
            peer,
            waiting: Box::pin(service.waiting()),
            cancel,
            child,
            tail: StderrTail::default(),
        }
    }

    /// Waits until the process exits or the connection closes, and says which.
    async fn ended(&mut self) -> String {
        let Some(child) = self.child.as_mut() else {
            let _ = (&mut self.waiting).await;
            return "the connection closed".into();
        };
        let status = tokio::select! {
            status = child.wait() => Some(status),
            _ = &mut self.waiting => None,
        };
        let status = match status {
            Some(status) => Some(status),
            // The server closed its stdout; give it a moment to exit before saying so.
            None => tokio::time::timeout(Duration::from_secs(2), child.wait()).await.ok(),
        };
        child.kill_stragglers();
        child.drain_stderr().await;
        let what = match status {
            Some(Ok(status)) => describe_exit(status),
            Some(Err(e)) => format!("its process could not be waited for ({e})"),
            None => "it closed its stdout but kept running".into(),
        };
        format!("{what}{}", self.tail.suffix())
    }

    /// Closes the connection and ends the process.
    async fn close(mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        let _ = tokio::time::timeout(EXIT_GRACE, &mut self.waiting).await;
        if let Some(child) = self.child.as_mut() {
            child.kill().await;
        }
    }
}

fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("exited ({status})"),
    }
}

/// An error and its causes on one line.
pub(crate) fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A failed request, in words for the model or the user, with what to do.
pub(crate) fn describe_service_error(server: &str, error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => {
            format!("the server answered with an error: {}", data.message)
        }
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
            "the connection to the server is closed ({}); restart it with /mcp restart {server}",
            causes(error)
        ),
        ServiceError::Timeout { timeout } => {
            format!("the server did not answer within {}s", timeout.as_secs())
        }
        other => causes(other),
    }
}

/// The task behind one server: connects, reports ready, then follows the server until it
/// is stopped or ends. State updates carry `generation`, so a restarted server's old task
/// cannot overwrite the new one's state.
pub(crate) async fn run(
    shared: Arc<Shared>,
    config: ServerConfig,
    generation: u64,
    stop: CancellationToken,
) {
    let name = config.name.clone();
    let timeout = config.startup_timeout.unwrap_or(shared.options.startup_timeout);
    let (events, changes) = mpsc::unbounded_channel();
    let mut changes = Changes { rx: changes, lists: Arc::clone(&shared.lists) };
    let lists = Arc::clone(&shared.lists);
    let handler = Handler { info: client_info(&shared.options), events, lists };
    let tail = StderrTail::default();
    let connecting = connect(&config, &shared.options, handler, tail.clone());
    let outcome = tokio::select! {
        () = stop.cancelled() => return,
        outcome = tokio::time::timeout(timeout, connecting) => outcome,
    };
    let fail = |message: String| {
        tracing::warn!(server = %name, "MCP server failed to start: {message}");
        shared.update(&name, generation, |slot| slot.state = ServerState::Failed(message));
    };
    let (mut connection, live) = match outcome {
        Err(_) => {
            return fail(format!(
                "did not finish starting within {} ms (its startup timeout); raise `timeout` \
                 (milliseconds) for it in {} or check that it starts on its own{}",
                timeout.as_millis(),
                config.source.display(),
                tail.suffix()
            ));
        }
        Ok(Err(message)) => return fail(message),
        Ok(Ok(connected)) => connected,
    };
    tracing::info!(server = %name, tools = live.tools.len(), "MCP server ready");
    shared.update(&name, generation, |slot| {
        slot.state = ServerState::Ready;
        slot.live = Some(live);
    });
    loop {
        tokio::select! {
            () = stop.cancelled() => return connection.close().await,
            why = connection.ended() => {
                tracing::warn!(server = %name, "MCP server crashed: {why}");
                shared.update(&name, generation, |slot| {
                    slot.state = ServerState::Crashed(why);
                    slot.live = None;
                });
                return;
            }
            Some(kind) = changes.rx.recv() => {
                relist(&shared, &name, generation, &connection.peer, kind, timeout).await;
                shared.lists.end();
            }
        }
    }
}

fn client_info(options: &StartOptions) -> InitializeRequestParams {
    InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new(options.client_name.clone(), options.client_version.clone()),
    )
}

/// Lists one kind again after a list-changed notification and updates the server.
async fn relist(
    shared: &Shared,
    name: &str,
    generation: u64,
    peer: &Peer<RoleClient>,
    kind: ListKind,
    timeout: Duration,
) {
    let listing = async {
        match kind {
            ListKind::Tools => peer.list_all_tools().await.map(|tools| {
                Box::new(move |live: &mut Live| live.tools = tools)
                    as Box<dyn FnOnce(&mut Live) + Send>
            }),
            ListKind::Prompts => peer.list_all_prompts().await.map(|prompts| {
                Box::new(move |live: &mut Live| live.prompts = prompts)
                    as Box<dyn FnOnce(&mut Live) + Send>
            }),
            ListKind::Resources => peer.list_all_resources().await.map(|resources| {
                Box::new(move |live: &mut Live| live.resource_count = resources.len())
                    as Box<dyn FnOnce(&mut Live) + Send>
            }),
        }
    };
    match tokio::time::timeout(timeout, listing).await {
        Ok(Ok(apply)) => shared.update(name, generation, |slot| {
            if let Some(live) = slot.live.as_mut() {
                apply(live);
            }
        }),
        Ok(Err(e)) => tracing::warn!(server = %name, "re-listing {kind:?} failed: {e}"),
        Err(_) => tracing::warn!(server = %name, "re-listing {kind:?} timed out"),
    }
}

/// Connects and lists what the server offers; the error says what failed and what to do.
async fn connect(
    config: &ServerConfig,
    options: &StartOptions,
    handler: Handler,
    tail: StderrTail,
) -> Result<(Connection, Live), String> {
    let mut connection = match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let spawned = spawn(config, options, command, args, env, cwd.as_deref(), &tail)?;
            let (child, stdout, stdin) = spawned;
            let stdout =
                crate::limit::LimitedLines::new(stdout, crate::limit::MAX_MESSAGE, tail.lines());
            match handler.serve((stdout, stdin)).await {
                Ok(service) => Connection::new(service, Some(child)),
                Err(e) => {
                    let mut child = child;
                    // A server that exits during the handshake: report how it exited.
                    let exit = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
                    child.drain_stderr().await;
                    let exit = match exit {
                        Ok(Ok(status)) => format!(" ({})", describe_exit(status)),
                        _ => String::new(),
                    };
                    return Err(format!(
                        "the MCP handshake with `{command}` failed{exit}: {}{}",
                        causes(&e),
                        tail.suffix()
                    ));
                }
            }
        }
        Transport::Http { url, headers, is_legacy_sse } => {
            match connect_http(config, url, headers, handler).await {
                Ok(service) => Connection::new(service, None),
                Err(e) if *is_legacy_sse => return Err(legacy_sse_message(url, &e)),
                Err(e) => return Err(e),
            }
        }
    };
    connection.tail = tail;
    let live = list(&connection.peer).await.map_err(|e| {
        format!(
            "listing its tools failed: {}{}",
            describe_service_error(&config.name, &e),
            connection.tail.suffix()
        )
    })?;
    Ok((connection, live))
}

/// What the server offers, by its capabilities. Prompts and resources failing to list
/// is logged, not fatal: the tools are what matter.
async fn list(peer: &Peer<RoleClient>) -> Result<Live, ServiceError> {
    let info = peer.peer_info();
    let capabilities = info.as_ref().map(|i| i.capabilities.clone()).unwrap_or_default();
    let tools =
        if capabilities.tools.is_some() { peer.list_all_tools().await? } else { Vec::new() };
    let prompts = match capabilities.prompts.is_some() {
        true => peer.list_all_prompts().await.unwrap_or_else(|e| {
            tracing::warn!("listing prompts failed: {e}");
            Vec::new()
        }),
        false => Vec::new(),
    };
    let has_resources = capabilities.resources.is_some();
    let resource_count = match has_resources {
        true => peer.list_all_resources().await.map(|r| r.len()).unwrap_or_else(|e| {
            tracing::warn!("listing resources failed: {e}");
            0
        }),
        false => 0,
    };
    Ok(Live {
        peer: peer.clone(),
        tools,
        has_resources,
        resource_count,
        prompts,
        instructions: info.and_then(|i| i.instructions.clone()),
    })
}

type Spawned = (ChildGuard, tokio::process::ChildStdout, tokio::process::ChildStdin);

/// Starts a stdio server through the sandbox, in its own session, with rab's keys
/// removed from its environment and the configured `env` added.
fn spawn(
    config: &ServerConfig,
    options: &StartOptions,
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
    tail: &StderrTail,
) -> Result<Spawned, String> {
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (program, wrapped) = options.sandbox.wrap(command, &arg_refs);
    let dir = match cwd {
        Some(dir) => options.cwd.join(dir),
        None => options.cwd.clone(),
    };
    let mut cmd = CommandWrap::with_new(program, |c| {
        c.args(&wrapped)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in options.sandbox.scrubbed_env() {
            c.env_remove(name);
        }
        c.envs(env);
    });
    cmd.wrap(ProcessSession);
    cmd.wrap(KillOnDrop);
    let mut child = cmd.spawn().map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound if !dir.is_dir() => format!(
                "the directory {} does not exist; fix `cwd` in {}",
                dir.display(),
                config.source.display()
            ),
            std::io::ErrorKind::NotFound => {
                format!("is it installed and on PATH? Fix `command` in {}", config.source.display())
            }
            _ => format!("check `command` and `cwd` in {}", config.source.display()),
        };
        format!("cannot run `{command}`: {e}; {hint}")
    })?;
    let stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let mut guard = ChildGuard { child, is_reaped: false, stderr_reader: None };
    guard.stderr_reader = stderr.map(|stderr| tail.collect(&config.name, stderr));
    match (stdout, stdin) {
        (Some(stdout), Some(stdin)) => Ok((guard, stdout, stdin)),
        _ => Err(format!("`{command}` started without stdio pipes; this is a bug in rab")),
    }
}

async fn connect_http(
    config: &ServerConfig,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    handler: Handler,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let client = http_client()?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let bad = |what: &str| {
            format!("header `{name}` has {what}; fix `headers` in {}", config.source.display())
        };
        let header_name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| bad("an invalid name"))?;
        let header_value =
            reqwest::header::HeaderValue::from_str(value).map_err(|_| bad("an invalid value"))?;
        custom.insert(header_name, header_value);
    }
    let transport_config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
    handler.serve(transport).await.map_err(|e| {
        format!(
            "connecting to {url} failed: {}; check `url` and `headers` in {}",
            causes(&e),
            config.source.display()
        )
    })
}

fn legacy_sse_message(url: &str, error: &str) -> String {
    format!(
        "{error}. The server is configured as legacy SSE (`\"type\": \"sse\"` or a URL ending \
         in /sse), which rab does not support: use the server's streamable HTTP endpoint \
         instead (often /mcp in place of /sse), or bridge it with a stdio proxy such as \
         `\"command\": \"npx\", \"args\": [\"mcp-remote\", \"{url}\"]`"
    )
}

/// A reqwest client on rab's one TLS stack (see `rab_ai::http_client_builder`).
fn http_client() -> Result<reqwest::Client, String> {
    rab_ai::http_client_builder()?
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {}", causes(&e)))
}
