//! `rab acp`: rab as an Agent Client Protocol agent over stdio, the protocol Zed,
//! JetBrains IDEs and Neovim plugins drive coding agents with. Each editor session is a
//! runtime of its own (`rab_core::runtime`), recorded on a tape like any other session:
//! prompts go in as ops, the runtime's events come out as `session/update`
//! notifications (text, thoughts, tool calls with their diffs and status, the to-do
//! list as a plan), and questions become `session/request_permission` requests. The
//! front end only translates. See docs/acp.md.

mod auth;
mod convert;
mod decode;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, ReadTextFileRequest, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, v1};
use rab_agent::StopCause;
use rab_config::{Env, Paths};
use rab_core::runtime::{Event, Op, RuntimeHandle};
use rab_core::setup::{Setup, TapeChoice};
use rab_core::{Approval, Extension};
use rab_session::Tape;
use tokio::sync::{mpsc, oneshot};

use crate::cli::Cli;
use auth::{auth_methods, authenticate, available_commands};
use convert::{ToolLookup, Translator};
pub(crate) use decode::decode_line;

/// What the agent keeps for the connection.
/// What an error of [`Acp::open`] begins with when the provider has no key: the editor
/// gets `auth_required` (with its sign-in methods) rather than "Invalid params".
const NO_KEY: &str = "no API key for ";

/// The answer to a failed `session/new` or `session/load`.
fn open_error(e: String) -> Error {
    if e.starts_with(NO_KEY) {
        Error::auth_required().data(e)
    } else {
        Error::invalid_params().data(e)
    }
}

struct Acp {
    /// Sessions that went on in another file, by the editor's id.
    aliases: Arc<Mutex<HashMap<String, String>>>,
    /// What the editor offers: reading and writing its files.
    files: Mutex<(bool, bool)>,
    /// The editor offers a terminal.
    terminal: Mutex<bool>,
    cli: Cli,
    env: Env,
    paths: Paths,
    extensions: Vec<Arc<dyn Extension>>,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

/// A session the editor has open.
struct Live {
    /// The runtime (taken at shutdown).
    handle: Mutex<Option<RuntimeHandle>>,
    /// Prompts waiting for their run to end, by submission.
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<StopCause, String>>>>,
}

/// Runs the agent until the editor closes stdin; the exit code.
pub fn run(cli: &Cli, env: Env, paths: Paths, extensions: Vec<Arc<dyn Extension>>) -> u8 {
    let acp = Arc::new(Acp {
        aliases: Arc::new(Mutex::new(HashMap::new())),
        files: Mutex::new((false, false)),
        terminal: Mutex::new(false),
        cli: cli.clone(),
        env,
        paths,
        extensions,
        sessions: Mutex::new(HashMap::new()),
    });
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot start the runtime: {e}"));
        }
    };
    let served = runtime.block_on(async {
        let served = RabAcp(acp.clone()).connect_to(stdio_lines()).await;
        // The editor is gone: each session's run is stopped (its calls recorded as
        // interrupted) and the session ends, hooks included.
        let live: Vec<Arc<Live>> = acp
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, l)| l).collect())
            .unwrap_or_default();
        for l in live {
            let handle = l.handle.lock().ok().and_then(|mut h| h.take());
            if let Some(handle) = handle {
                let finished =
                    tokio::time::timeout(std::time::Duration::from_secs(3), handle.finish());
                if let Ok(Some(session)) = finished.await {
                    // Logged (session_end does): stdout is the editor's, and it has
                    // gone.
                    let _ = session.session_end("exit").await;
                }
            }
        }
        served
    });
    match served {
        Ok(()) => crate::EXIT_OK,
        Err(e) => crate::fail(crate::EXIT_PROVIDER, &format!("the editor connection failed: {e}")),
    }
}

/// Where protocol lines are written.
type LineSink = std::pin::Pin<Box<dyn futures_util::Sink<String, Error = std::io::Error> + Send>>;
/// Where protocol lines are read from.
type LineStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = std::io::Result<String>> + Send>>;

/// Standard input and output as protocol lines. A line that is not UTF-8 is passed on
/// as text the protocol answers with a parse error, and the next line is read (the
/// crate's own stdio transport ends the connection on it).
fn stdio_lines() -> agent_client_protocol::Lines<LineSink, LineStream> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let reader = tokio::io::BufReader::new(tokio::io::stdin());
    let incoming = futures_util::stream::unfold(Some(reader), |reader| async move {
        let mut reader = reader?;
        let mut bytes = Vec::new();
        match reader.read_until(b'\n', &mut bytes).await {
            Ok(0) => None,
            Err(e) => Some((Err(e), None)),
            Ok(_) => {
                while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    bytes.pop();
                }
                let line = String::from_utf8(bytes).unwrap_or_else(|e| {
                    format!("(a line that is not UTF-8: {})", String::from_utf8_lossy(e.as_bytes()))
                });
                Some((Ok(line), Some(reader)))
            }
        }
    });
    let outgoing =
        futures_util::sink::unfold(tokio::io::stdout(), |mut out, line: String| async move {
            out.write_all(line.as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await?;
            Ok::<_, std::io::Error>(out)
        });
    agent_client_protocol::Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

/// The agent as a component the protocol crate connects (to stdio, or to a client in
/// tests).
struct RabAcp(Arc<Acp>);

impl ConnectTo<Client> for RabAcp {
    async fn connect_to(self, client: impl ConnectTo<Agent>) -> agent_client_protocol::Result<()> {
        let acp = self.0;
        let (a1, a2, a3, a4, a5) =
            (acp.clone(), acp.clone(), acp.clone(), acp.clone(), acp.clone());
        let a6 = acp;
        Agent
            .v1()
            .name("rab")
            .on_receive_request(
                async move |req: InitializeRequest, responder, _cx| {
                    let fs = &req.client_capabilities.fs;
                    if let Ok(mut files) = a1.files.lock() {
                        *files = (fs.read_text_file, fs.write_text_file);
                    }
                    if let Ok(mut terminal) = a1.terminal.lock() {
                        *terminal = req.client_capabilities.terminal;
                    }
                    responder.respond(
                        InitializeResponse::new(req.protocol_version)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .load_session(true)
                                    .prompt_capabilities(
                                        PromptCapabilities::new()
                                            .image(true)
                                            .embedded_context(true),
                                    )
                                    .mcp_capabilities(McpCapabilities::new().http(true)),
                            )
                            .auth_methods(auth_methods(&a1.env, &a1.paths))
                            .agent_info(Implementation::new("rab", env!("CARGO_PKG_VERSION"))),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: AuthenticateRequest, responder, _cx| match authenticate(
                    &a6.env, &a6.paths, &req,
                ) {
                    Ok(()) => responder.respond(AuthenticateResponse::new()),
                    Err(e) => responder.respond_with_error(e),
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: NewSessionRequest, responder, cx| match a2
                    .open(&req.cwd, &req.mcp_servers, None, &cx)
                    .await
                {
                    Ok((id, commands)) => {
                        responder.respond(NewSessionResponse::new(id.clone()))?;
                        cx.send_notification(SessionNotification::new(SessionId::new(id), commands))
                    }
                    Err(e) => responder.respond_with_error(open_error(e)),
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: LoadSessionRequest, responder, cx| {
                    let id = req.session_id.0.to_string();
                    match a3.open(&req.cwd, &req.mcp_servers, Some(&id), &cx).await {
                        Ok((_, commands)) => {
                            cx.send_notification(SessionNotification::new(
                                req.session_id,
                                commands,
                            ))?;
                            responder.respond(LoadSessionResponse::new())
                        }
                        Err(e) => responder.respond_with_error(open_error(e)),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: PromptRequest, responder, cx| {
                    let id = req.session_id.0.to_string();
                    let Some(live) = a4.live(&id) else {
                        return responder.respond_with_error(
                            Error::invalid_params()
                                .data(format!("no session {id}: session/new first")),
                        );
                    };
                    let (text, images) = convert::prompt(&req.prompt);
                    // A `/command` line runs as one (`/compact`, `/model NAME`, …).
                    let op = if text.starts_with('/') && !text.contains('\n') && images.is_empty() {
                        Op::Line { text }
                    } else {
                        Op::Prompt { text, images }
                    };
                    let (tx, rx) = oneshot::channel();
                    if let (Ok(mut waiting), Ok(handle)) = (live.waiting.lock(), live.handle.lock())
                        && let Some(handle) = handle.as_ref()
                    {
                        let submission = handle.submit(op);
                        waiting.insert(submission, tx);
                    }
                    // The run goes on outside the dispatch loop, so that its questions
                    // and a cancel can come in meanwhile.
                    cx.spawn(async move {
                        match rx.await {
                            Ok(Ok(stop)) => {
                                let (reason, _) = convert::stop_reason(&stop);
                                match reason {
                                    Ok(r) => responder.respond(PromptResponse::new(r)),
                                    Err(e) => responder
                                        .respond_with_error(Error::internal_error().data(e)),
                                }
                            }
                            Ok(Err(refused)) => {
                                responder.respond_with_error(Error::invalid_request().data(refused))
                            }
                            Err(_) => responder.respond(PromptResponse::new(StopReason::Cancelled)),
                        }
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |n: CancelNotification, _cx| {
                    if let Some(live) = a5.live(&n.session_id.0) {
                        live.submit(Op::Abort);
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_to(client)
            .await
    }
}

impl Acp {
    fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// Opens a session in `cwd`: a new one, or `load` (an earlier session's id) with its
    /// conversation replayed to the editor first. Its id, and its commands for the
    /// editor (sent once the editor knows the session).
    async fn open(
        &self,
        cwd: &Path,
        servers: &[McpServer],
        load: Option<&str>,
        cx: &v1::ConnectionTo<Client>,
    ) -> Result<(String, SessionUpdate), String> {
        if !cwd.is_absolute() {
            return Err(format!("cwd must be an absolute path, not {}", cwd.display()));
        }
        if !cwd.is_dir() {
            return Err(format!("{} is not a directory", cwd.display()));
        }
        let session_id = Arc::new(OnceLock::new());
        let setup = self.setup(cwd, servers, cx, &session_id)?;
        let tape = match load {
            Some(id) => {
                // A session that went on in another file (/new, /fork, /handoff) is loaded
                // from where it went on.
                let now = self.aliases.lock().ok().and_then(|a| a.get(id).cloned());
                let path = crate::sessions::find(
                    &self.paths.sessions_dir(),
                    now.as_deref().unwrap_or(id),
                )?;
                let (mut tape, warnings) = Tape::open(&path).map_err(|e| e.to_string())?;
                for w in warnings {
                    eprintln!("rab: warning: session line {}: {}", w.line, w.message);
                }
                tape.claim().map_err(|e| e.to_string())?;
                tape
            }
            None => setup.tape(&TapeChoice::default()).map_err(|e| e.message)?.0,
        };
        let (mut session, _) = setup.session(tape).map_err(|e| e.message)?;
        // The editor's id for the session: the one it loads, or the new tape's.
        let id = load.map_or_else(|| session.tape().id().to_owned(), str::to_owned);
        let _ = session_id.set(SessionId::new(id.clone()));
        let source = if load.is_some() { "resume" } else { "startup" };
        for w in session.session_start(source).await {
            eprintln!("rab: warning: {w}");
        }
        let setup = Arc::new(setup);
        let lookup: ToolLookup = {
            let setup = setup.clone();
            Arc::new(move |name: &str| find_tool(&setup, name))
        };
        let translator = Translator::new(cwd, lookup);
        let sid = SessionId::new(id.clone());
        if load.is_some() {
            for update in translator.history(session.agent().messages()) {
                let _ = cx.send_notification(SessionNotification::new(sid.clone(), update));
            }
        }
        let commands = available_commands(&setup);
        let mut handle = rab_core::runtime::start_with(setup.clone(), session);
        let events = std::mem::replace(&mut handle.events, mpsc::unbounded_channel().1);
        let live = Arc::new(Live {
            handle: Mutex::new(Some(handle)),
            waiting: Mutex::new(HashMap::new()),
        });
        let aliases = (self.aliases.clone(), id.clone());
        tokio::spawn(pump(Arc::downgrade(&live), events, translator, cx.clone(), sid, aliases));
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(id.clone(), live);
        }
        Ok((id, commands))
    }

    /// The set-up of a session in `cwd`: the command line's choices, the folder's trust
    /// (never asked: the editor owns the terminal), and the editor's MCP servers.
    fn setup(
        &self,
        cwd: &Path,
        servers: &[McpServer],
        cx: &v1::ConnectionTo<Client>,
        session: &Arc<OnceLock<SessionId>>,
    ) -> Result<Setup, String> {
        let trusted = crate::trust::decide(&self.cli, &self.env, &self.paths, cwd)?.trusted;
        if !trusted && !self.cli.no_extensions {
            let offers = crate::trust::offers(&self.env, &self.paths, cwd);
            if !offers.is_empty() {
                crate::trust::report(cwd, &offers);
            }
        }
        let mut options =
            self.cli.options(self.env.clone(), self.paths.clone(), cwd.to_path_buf(), trusted);
        // No cron tools: a scheduled run would start outside any prompt of the editor's,
        // and the editor's next prompt would be refused while it goes on.
        options.keeps_running = false;
        options.extensions = self.extensions.clone();
        let (read, write) = self.files.lock().map(|f| *f).unwrap_or_default();
        if read || write {
            let files = EditorFiles { cx: cx.clone(), session: session.clone(), read, write };
            options.editor_files = Some(Arc::new(files));
        }
        let has_terminal = self.terminal.lock().map(|t| *t).unwrap_or_default();
        if self.cli.editor_terminal && has_terminal {
            let terminal = EditorTerminal { cx: cx.clone(), session: session.clone() };
            options.editor_terminal = Some(Arc::new(terminal));
        }
        #[cfg(feature = "mcp")]
        options.factories.push(Arc::new(crate::mcp::Servers::with(mcp_servers(servers, cwd)?)));
        #[cfg(feature = "plugins")]
        options.factories.push(Arc::new(crate::plugins::Plugins { watch: true }));
        #[cfg(not(feature = "mcp"))]
        if !servers.is_empty() {
            return Err("this rab was built without MCP (the `mcp` feature)".into());
        }
        // A missing key is the editor's to resolve (`authMethods`), not a bad request.
        options.model.allow_missing_key = true;
        let setup = Setup::new(options).map_err(|e| e.message)?;
        let p = &setup.target.model.provider;
        if setup.target.api_key.is_none()
            && setup.registry.provider(p).is_some_and(|p| p.requires_key)
        {
            return Err(format!(
                "{NO_KEY}{p}: run `rab login {p}` in a terminal (the editor's authentication \
                 methods offer it) or set the provider's key variable ({})",
                setup.target.auth_hint
            ));
        }
        for w in &setup.warnings {
            eprintln!("rab: warning: {}", crate::term::safe(w));
        }
        Ok(setup)
    }
}

/// A tool of the session by name: the start-up ones, then those of extensions whose
/// tools come and go (MCP servers).
fn find_tool(setup: &Setup, name: &str) -> Option<Arc<dyn rab_agent::AgentTool>> {
    setup.tools.iter().find(|t| t.name() == name).cloned().or_else(|| {
        setup.extensions.tool_sources().iter().flat_map(|s| s.tools()).find(|t| t.name() == name)
    })
}

/// The editor's MCP servers as rab's (stdio and HTTP; SSE is tried over HTTP).
#[cfg(feature = "mcp")]
fn mcp_servers(
    servers: &[McpServer],
    cwd: &Path,
) -> Result<Vec<rab_mcp::config::ServerConfig>, String> {
    use rab_mcp::config::{ServerConfig, Transport};
    let source = std::path::PathBuf::from("(the editor's session/new)");
    let mut out = Vec::new();
    for s in servers {
        let (name, transport) = match s {
            McpServer::Stdio(s) => (
                s.name.clone(),
                Transport::Stdio {
                    command: s.command.to_string_lossy().into_owned(),
                    args: s.args.clone(),
                    env: s.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect(),
                    cwd: Some(cwd.to_path_buf()),
                },
            ),
            McpServer::Http(s) => (
                s.name.clone(),
                Transport::Http {
                    url: s.url.clone(),
                    headers: s.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
                    is_legacy_sse: false,
                },
            ),
            McpServer::Sse(s) => (
                s.name.clone(),
                Transport::Http {
                    url: s.url.clone(),
                    headers: s.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
                    is_legacy_sse: true,
                },
            ),
            _ => return Err("an MCP server of a transport rab does not know".into()),
        };
        out.push(ServerConfig {
            name,
            transport,
            source: source.clone(),
            startup_timeout: None,
            tool_timeout: None,
            disabled: false,
            problem: None,
        });
    }
    Ok(out)
}

/// Sends one session's events to the editor, in order: updates as notifications,
/// questions as permission requests (answered off this loop), and ends its prompts.
async fn pump(
    live: Weak<Live>,
    mut events: mpsc::UnboundedReceiver<Event>,
    mut translator: Translator,
    cx: v1::ConnectionTo<Client>,
    sid: SessionId,
    aliases: (Arc<Mutex<HashMap<String, String>>>, String),
) {
    let mut started = std::collections::HashSet::new();
    let notify = |update: SessionUpdate| {
        let _ = cx.send_notification(SessionNotification::new(sid.clone(), update));
    };
    while let Some(event) = events.recv().await {
        match event {
            Event::Agent(e) => translator.event(&e).into_iter().for_each(notify),
            Event::ApprovalRequested { id, request } => {
                let options = convert::options(&request);
                let ask = RequestPermissionRequest::new(
                    sid.clone(),
                    convert::question_call(&request),
                    options.iter().map(|(o, _)| o.clone()).collect::<Vec<_>>(),
                );
                let (cx, live) = (cx.clone(), live.clone());
                tokio::spawn(async move {
                    let approval = match cx.send_request(ask).block_task().await {
                        Ok(answer) => match answer.outcome {
                            RequestPermissionOutcome::Selected(s) => options
                                .into_iter()
                                .find(|(o, _)| o.option_id == s.option_id)
                                .map_or(Approval::Deny(None), |(_, a)| a),
                            _ => Approval::Deny(Some("cancelled in the editor".into())),
                        },
                        Err(e) => Approval::Deny(Some(format!("the editor did not answer: {e}"))),
                    };
                    if let Some(live) = live.upgrade() {
                        live.submit(Op::Answer { id, approval });
                    }
                });
            }
            Event::Done { submission, result: Err(why) } => {
                if let Some(tx) = waiter(&live, submission) {
                    let _ = tx.send(Err(why));
                }
            }
            Event::RunStarted { submission } => {
                started.insert(submission);
            }
            // The session goes on in another file: a later load of the editor's id finds it.
            Event::SessionReplaced { id, .. } => {
                if let Ok(mut a) = aliases.0.lock() {
                    a.insert(aliases.1.clone(), id);
                }
            }
            // A command line that ran no prompt ends its turn here.
            Event::Done { submission, result: Ok(()) } if !started.contains(&submission) => {
                if let Some(tx) = waiter(&live, submission) {
                    let _ = tx.send(Ok(StopCause::Done));
                }
            }
            Event::Info { text, .. } => notify(agent_text(&format!("{text}\n"))),
            Event::Warning(text) => notify(agent_text(&format!("(warning: {text})\n"))),
            Event::Attached { files, .. } => {
                notify(agent_text(&format!("(attached {})\n", files.join(", "))))
            }
            Event::Show { view: rab_core::runtime::View::Settings(text), .. } => {
                notify(agent_text(&format!("{text}\n")));
            }
            Event::Show { .. } => notify(agent_text(
                "(this command needs rab's own terminal UI or REPL; in the editor use its \
                 arguments, e.g. /model NAME, /resume N)\n",
            )),
            Event::ShellEnded { command, output, .. } => {
                notify(agent_text(&format!("$ {command}\n{output}\n")));
            }
            Event::CronFired { prompt, .. } => {
                notify(agent_text(&format!("(scheduled prompt: {prompt})\n")));
            }
            Event::RunEnded { submission, stop } => {
                started.remove(&submission);
                if let (_, Some(text)) = convert::stop_reason(&stop) {
                    notify(agent_text(&text));
                }
                if let Some(tx) = waiter(&live, submission) {
                    let _ = tx.send(Ok(stop));
                }
            }
            Event::Done { .. }
            | Event::State { .. }
            | Event::Messages { .. }
            | Event::ShellOutput { .. }
            | Event::SetupChanged(_)
            | Event::Quit { .. }
            | Event::StateChanged(_)
            | Event::QuestionClosed { .. }
            | Event::ShellStarted { .. }
            | Event::ServiceStatus(_)
            | Event::OpStarted { .. }
            | Event::Data { .. } => {}
        }
    }
    // The runtime ended: prompts still waiting get an answer.
    if let Some(live) = live.upgrade()
        && let Ok(mut waiting) = live.waiting.lock()
    {
        for (_, tx) in waiting.drain() {
            let _ = tx.send(Err("the session's runtime ended".into()));
        }
    }
}

impl Live {
    fn submit(&self, op: Op) {
        if let Ok(handle) = self.handle.lock()
            && let Some(handle) = handle.as_ref()
        {
            handle.submit(op);
        }
    }
}

fn waiter(
    live: &Weak<Live>,
    submission: u64,
) -> Option<oneshot::Sender<Result<StopCause, String>>> {
    live.upgrade()?.waiting.lock().ok()?.remove(&submission)
}

fn agent_text(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new(
        text.into(),
    ))
}

/// The editor's files, when it offers them: `read`, `edit` and `write` see its unsaved
/// buffers and write through it (the paths are checked first, as for the disk).
struct EditorFiles {
    cx: v1::ConnectionTo<Client>,
    session: Arc<OnceLock<SessionId>>,
    read: bool,
    write: bool,
}

impl rab_tools::editor_files::EditorFiles for EditorFiles {
    fn can_read(&self) -> bool {
        self.read
    }

    fn can_write(&self) -> bool {
        self.write
    }

    fn read<'a>(&'a self, path: &'a Path) -> rab_agent::BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let sid = self.session.get().ok_or("the session is not open yet")?.clone();
            let asked = ReadTextFileRequest::new(sid, path.to_path_buf());
            let answer = self.cx.send_request(asked).block_task().await;
            answer.map(|r| r.content).map_err(|e| format!("the editor could not read it: {e}"))
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: String,
    ) -> rab_agent::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let sid = self.session.get().ok_or("the session is not open yet")?.clone();
            let asked = WriteTextFileRequest::new(sid, path.to_path_buf(), content);
            let answer = self.cx.send_request(asked).block_task().await;
            answer.map(|_| ()).map_err(|e| format!("the editor could not write it: {e}"))
        })
    }
}

/// The editor's terminal, used for commands only with `--editor-terminal` (there they run
/// outside rab's sandbox): the command shows in the tool call as a live terminal.
struct EditorTerminal {
    cx: v1::ConnectionTo<Client>,
    session: Arc<OnceLock<SessionId>>,
}

impl EditorTerminal {
    async fn run_in(
        &self,
        command: &str,
        cwd: &Path,
        call_id: &str,
        cancel: tokio_util::sync::CancellationToken,
        timeout: std::time::Duration,
    ) -> Result<rab_tools::editor_files::TerminalRun, agent_client_protocol::Error> {
        use agent_client_protocol::v1::schema::{
            CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest, Terminal,
            ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
        };
        let Some(sid) = self.session.get().cloned() else {
            return Err(Error::internal_error().data("the session is not open yet"));
        };
        let create = CreateTerminalRequest::new(sid.clone(), "sh")
            .args(vec!["-c".to_owned(), command.to_owned()])
            .cwd(cwd.to_path_buf())
            .output_byte_limit(Some(1024 * 1024));
        let id = self.cx.send_request(create).block_task().await?.terminal_id;
        // The editor shows the terminal in the tool call.
        let shown = ToolCallUpdateFields::new()
            .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]);
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_owned(), shown));
        let _ = self.cx.send_notification(SessionNotification::new(sid.clone(), update));
        let run = self.follow(&sid, &id, cancel, timeout).await;
        // Whatever happened, the terminal is not left running (`follow` kills it on cancel
        // and timeout; here when following it failed), and it is released.
        if run.is_err() {
            let kill = KillTerminalRequest::new(sid.clone(), id.clone());
            let _ = self.cx.send_request(kill).block_task().await;
        }
        let _ = self.cx.send_request(ReleaseTerminalRequest::new(sid, id)).block_task().await;
        run
    }

    /// Waits for the command's end (or cancel, or the timeout) and reads its output.
    async fn follow(
        &self,
        sid: &SessionId,
        id: &agent_client_protocol::v1::schema::TerminalId,
        cancel: tokio_util::sync::CancellationToken,
        timeout: std::time::Duration,
    ) -> Result<rab_tools::editor_files::TerminalRun, agent_client_protocol::Error> {
        use agent_client_protocol::v1::schema::{
            TerminalOutputRequest, WaitForTerminalExitRequest,
        };
        let wait = self.cx.send_request(WaitForTerminalExitRequest::new(sid.clone(), id.clone()));
        let mut run = rab_tools::editor_files::TerminalRun::default();
        tokio::select! {
            exited = wait.block_task() => {
                let status = exited?.exit_status;
                run.exit_code = status.exit_code;
                run.signal = status.signal;
            }
            () = cancel.cancelled() => run.is_aborted = true,
            () = tokio::time::sleep(timeout) => run.is_timed_out = true,
        }
        if run.is_aborted || run.is_timed_out {
            let kill = agent_client_protocol::v1::schema::KillTerminalRequest::new(
                sid.clone(),
                id.clone(),
            );
            let _ = self.cx.send_request(kill).block_task().await;
        }
        let output = TerminalOutputRequest::new(sid.clone(), id.clone());
        let output = self.cx.send_request(output).block_task().await?;
        run.output = output.output;
        run.is_truncated = output.truncated;
        Ok(run)
    }
}

impl rab_tools::editor_files::EditorTerminal for EditorTerminal {
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a Path,
        call_id: &'a str,
        cancel: tokio_util::sync::CancellationToken,
        timeout: std::time::Duration,
    ) -> rab_agent::BoxFuture<'a, Result<rab_tools::editor_files::TerminalRun, String>> {
        Box::pin(async move {
            self.run_in(command, cwd, call_id, cancel, timeout).await.map_err(|e| e.to_string())
        })
    }
}
