//! The terminal UI on the main screen: finished transcript items go into the terminal's
//! own scrollback; the live region at the bottom (streaming reply, running tools,
//! queued messages, editor, footer) is redrawn in place by rab-tui's differential
//! renderer. The agent runs in its own task so the UI keeps taking keys: Enter queues a
//! steering message, Alt+Enter a follow-up, Esc interrupts.

mod app;
mod chrome;
mod command;
#[cfg(feature = "mcp")]
mod mcp_notes;
mod overlay;
mod permission;
mod shell;
mod stream_view;
mod tool_view;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use rab_agent::{AgentEvent, StopCause};
use rab_core::AgentSession;
use rab_tui::keys::Keybindings;
use rab_tui::screen::Screen;
use rab_tui::terminal::{CrosstermTerminal, Terminal, TerminalGuard, TerminalModes};
use rab_tui::{ColorDepth, Theme};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use self::app::{App, Effect};
use self::overlay::{Overlay, OverlayKey, Picked};
use crate::{EXIT_OK, EXIT_USAGE};
use rab_core::setup::Setup as Launch;

/// Renders a unified diff for tool results.
pub fn render_diff(diff: &str, width: usize, theme: &Theme) -> Vec<String> {
    rab_tui::diff::render_unified_diff(diff, width, theme, &rab_tui::diff::DiffOptions::default())
}

/// Output of a running `!cmd` or `,cmd`, and reports of other work done off the UI
/// thread.
enum BangMsg {
    Output(String),
    Done(rab_core::shell_line::ShellResult, rab_core::input::ShellLine),
    /// `/search` results (or why it failed).
    Note(Result<String, String>),
    /// A command's slow part finished (an MCP prompt fetched).
    Later(rab_core::CommandOutcome),
}

/// How a background task on the session ended.
enum TaskEnd {
    /// An agent run.
    Run(StopCause),
    /// A session operation (compact, handoff, branch) with its report.
    Note(Result<String, String>),
}

type Task = JoinHandle<(AgentSession, TaskEnd)>;

/// The theme from settings (or the terminal's background), for the colour depth.
fn load_theme(launch: &Launch) -> Result<Theme, String> {
    let env = &launch.env;
    let depth =
        ColorDepth::detect(env.get("NO_COLOR").is_some(), env.get("COLORTERM"), env.get("TERM"));
    // COLORFGBG ("15;0": light text on a dark background) is the portable hint.
    let background_is_light = env
        .get("COLORFGBG")
        .and_then(|v| v.rsplit(';').next())
        .and_then(|bg| bg.parse::<u8>().ok())
        .is_some_and(|bg| bg == 7 || bg >= 9);
    let name = launch
        .settings
        .theme
        .clone()
        .unwrap_or_else(|| if background_is_light { "light" } else { "dark" }.into());
    if let Some(t) = Theme::builtin(&name, depth) {
        return Ok(t);
    }
    let path = launch.paths.home().join("themes").join(format!("{name}.json"));
    let json = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "theme '{name}': cannot read {}: {e} (built-in themes: dark, light)",
            path.display()
        )
    })?;
    Theme::from_json(&name, &json, depth).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the UI until the user quits.
pub async fn run(launch: Launch, session: AgentSession, first: Option<String>, resume: bool) -> u8 {
    let theme = match load_theme(&launch) {
        Ok(t) => t,
        Err(e) => return crate::fail(EXIT_USAGE, &e),
    };
    let bindings = match Keybindings::load(&launch.paths.home().join("keybindings.json")) {
        Ok(b) => b,
        Err(e) => return crate::fail(EXIT_USAGE, &e.to_string()),
    };
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        rab_tui::terminal::restore_stdout_terminal();
        previous_hook(info);
    }));
    let modes = TerminalModes { raw: true, bracketed_paste: true, keyboard_enhancement: true };
    let guard = match TerminalGuard::enter(CrosstermTerminal::new(), modes) {
        Ok(g) => g,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot set up the terminal: {e}"));
        }
    };
    let screen = match Screen::new(guard) {
        Ok(s) => s,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot set up the terminal: {e}"));
        }
    };
    crate::sessions::index_in_background(launch.paths.sessions_dir(), launch.paths.home());
    let launch = Arc::new(launch);
    let mut ui = Ui::new(launch, theme, bindings, session, screen);
    ui.welcome();
    if resume {
        ui.effect(Effect::Command("/resume".into()));
    }
    if let Some(prompt) = first {
        ui.effect(Effect::Run(prompt));
    }
    ui.run_loop().await
}

#[cfg(feature = "mcp")]
use mcp_notes::changed as mcp_changed;

/// Without MCP nothing changes.
#[cfg(not(feature = "mcp"))]
async fn mcp_changed(_: &mut Option<()>) {
    std::future::pending().await
}

struct Ui {
    app: App,
    session: Option<AgentSession>,
    agent_rx: mpsc::UnboundedReceiver<AgentEvent>,
    task: Option<Task>,
    screen: Screen<TerminalGuard<CrosstermTerminal>>,
    bang_tx: mpsc::UnboundedSender<BangMsg>,
    bang_rx: mpsc::UnboundedReceiver<BangMsg>,
    /// Permission questions from the gate, answered one at a time.
    ask_rx: mpsc::UnboundedReceiver<rab_core::setup::safety::Asked>,
    asks: std::collections::VecDeque<rab_core::setup::safety::Asked>,
    quit: bool,
    /// MCP server states already reported.
    #[cfg(feature = "mcp")]
    mcp_seen: mcp_notes::McpSeen,
}

impl Ui {
    fn new(
        launch: Arc<Launch>,
        theme: Theme,
        bindings: Keybindings,
        mut session: AgentSession,
        screen: Screen<TerminalGuard<CrosstermTerminal>>,
    ) -> Self {
        let agent_rx = session.subscribe();
        let mut app = App::new(launch, theme, bindings, &session);
        app.width = usize::from(screen.size().0.max(20));
        let (bang_tx, bang_rx) = mpsc::unbounded_channel();
        let (ask_tx, ask_rx) = mpsc::unbounded_channel();
        app.launch.approver.install(Arc::new(rab_core::setup::safety::ChannelApprover(ask_tx)));
        Self {
            app,
            session: Some(session),
            agent_rx,
            task: None,
            screen,
            bang_tx,
            bang_rx,
            ask_rx,
            asks: std::collections::VecDeque::new(),
            quit: false,
            #[cfg(feature = "mcp")]
            mcp_seen: mcp_notes::McpSeen::default(),
        }
    }

    fn welcome(&mut self) {
        let Some(s) = &self.session else { return };
        let model = &s.agent().config().model;
        let t = &self.app.theme;
        let line = format!(
            "{} {} · {} ({}) · /help for commands, Ctrl+C twice to quit",
            t.fg(rab_tui::Role::Accent, &t.bold("rab")),
            env!("CARGO_PKG_VERSION"),
            model.id,
            model.provider
        );
        self.app.commit.push(line);
        let n = s.agent().messages().len();
        if n > 0 {
            let text = format!("Continuing session {} ({n} messages).", s.tape().id());
            self.app.info(&text);
        }
    }

    fn draw(&mut self) {
        let (cols, _) = self.screen.size();
        self.app.width = usize::from(cols.max(20));
        let (live, cursor) = self.app.live();
        let commit = std::mem::take(&mut self.app.commit);
        if let Err(e) = self.screen.frame(&commit, &live, cursor) {
            tracing::warn!("cannot draw: {e}");
        }
    }

    async fn run_loop(&mut self) -> u8 {
        let mut events = EventStream::new();
        let mut tick = tokio::time::interval(Duration::from_millis(80));
        while !self.quit {
            // Read each time: /reload replaces the launch and its scheduler.
            let scheduler = self.app.launch.scheduler.clone();
            // Watch first, then report: a change in between wakes the loop again.
            #[cfg(feature = "mcp")]
            let mut mcp_rx = self.mcp_watch();
            #[cfg(feature = "mcp")]
            self.mcp_check();
            #[cfg(not(feature = "mcp"))]
            let mut mcp_rx: Option<()> = None;
            self.draw();
            tokio::select! {
                ev = events.next() => match ev {
                    Some(Ok(ev)) => self.terminal_event(ev),
                    Some(Err(e)) => { tracing::warn!("terminal input: {e}"); self.quit = true; }
                    None => self.quit = true,
                },
                Some(ev) = self.agent_rx.recv() => {
                    self.app.agent_event(ev);
                    while let Ok(ev) = self.agent_rx.try_recv() {
                        self.app.agent_event(ev);
                    }
                }
                Some(msg) = self.bang_rx.recv() => self.bang_msg(msg),
                job = scheduler.next_due() => self.cron_fired(job),
                Some(asked) = self.ask_rx.recv() => {
                    self.asks.push_back(asked);
                    self.next_question();
                }
                done = wait(&mut self.task), if self.task.is_some() => self.run_done(done),
                _ = tick.tick(), if self.app.is_busy() => self.app.tick(),
                () = mcp_changed(&mut mcp_rx) => {}
            }
        }
        self.shutdown().await;
        EXIT_OK
    }

    async fn shutdown(&mut self) {
        if let (Some(task), Some(r)) = (self.task.take(), &self.app.running) {
            r.cancel.cancel();
            // Let the agent record its aborted results before the process goes.
            if let Ok(Ok((session, _))) = tokio::time::timeout(Duration::from_secs(3), task).await {
                self.session = Some(session);
            }
        }
        if let Some(session) = &self.session {
            session.session_end("exit").await;
        }
        let _ = self.screen.clear_live();
        let term = self.screen.terminal_mut();
        let _ = term.write(b"\r\n");
        let _ = term.flush();
    }

    fn terminal_event(&mut self, ev: Event) {
        match ev {
            Event::Key(key) => {
                if let Some(view) = &mut self.app.permission {
                    if let Some(answer) = view.key(&key, &self.app.bindings) {
                        self.app.permission = None;
                        if let Some(asked) = self.asks.pop_front() {
                            let _ = asked.reply.send(answer);
                        }
                        self.next_question();
                    }
                    return;
                }
                if let Some(overlay) = &mut self.app.overlay {
                    match overlay.key(&key, &self.app.bindings) {
                        OverlayKey::Handled => {}
                        OverlayKey::Close => self.app.overlay = None,
                        OverlayKey::Picked(p) => self.picked(p),
                        OverlayKey::Replace(next) => self.app.overlay = Some(*next),
                    }
                    return;
                }
                let effect = self.app.key(&key);
                self.effect(effect);
            }
            Event::Paste(text) => match &mut self.app.overlay {
                None => self.app.editor.paste(&text.replace("\r\n", "\n").replace('\r', "\n")),
                Some(Overlay::Secret { typed, .. }) => typed.push_str(text.trim()),
                Some(_) => {}
            },
            Event::Resize(cols, rows) => {
                self.screen.resize(cols, rows);
                self.app.width = usize::from(cols.max(20));
            }
            Event::FocusGained | Event::FocusLost | Event::Mouse(_) => {}
        }
    }

    /// A scheduled prompt is due: run it now, or queue it as a follow-up while the
    /// agent works.
    fn cron_fired(&mut self, job: rab_core::cron::Job) {
        self.app.info(&format!(
            "Scheduled prompt {} ({}): {}",
            job.id,
            job.schedule_text(),
            job.prompt
        ));
        match &self.session {
            Some(_) => self.start_run(vec![rab_ai::Message::user(job.prompt)]),
            None => {
                if let Some(r) = &self.app.running {
                    r.queues.follow_up(rab_ai::Message::user(job.prompt));
                }
            }
        }
    }

    /// Shows the oldest unanswered permission question, if none is on screen. A
    /// question whose call was interrupted meanwhile is dropped.
    fn next_question(&mut self) {
        while self.asks.front().is_some_and(|a| a.reply.is_closed()) {
            self.asks.pop_front();
        }
        if self.app.permission.is_none()
            && let Some(asked) = self.asks.front()
        {
            self.app.permission = Some(permission::PermissionView::new(asked.request.clone()));
        }
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Quit => self.quit = true,
            Effect::Run(prompt) => self.start_run(vec![rab_ai::Message::user(prompt)]),
            Effect::Interrupt => {
                if let Some(r) = &self.app.running {
                    r.cancel.cancel();
                    let queues = r.queues.clone();
                    self.app.restore_queued(&queues);
                }
            }
            Effect::Bang(bang) => self.start_bang(bang),
            Effect::Command(line) => self.command(&line),
            Effect::PickModel => self.open_models(),
            Effect::CycleModel => self.cycle_model(),
        }
    }

    fn start_run(&mut self, prompts: Vec<rab_ai::Message>) {
        let Some(mut session) = self.session.take() else { return };
        let cancel = CancellationToken::new();
        self.app.run_started(cancel.clone(), session.queues());
        let token = cancel.clone();
        self.task = Some(tokio::spawn(async move {
            let stop = session.run(prompts, token).await;
            (session, TaskEnd::Run(stop))
        }));
    }

    /// Runs a session operation in the background (the UI stays live meanwhile).
    fn start_op(&mut self, label: &str, op: Op) {
        let Some(mut session) = self.session.take() else { return };
        let cancel = CancellationToken::new();
        self.app.run_started(cancel.clone(), session.queues());
        self.app.set_status(label.to_owned());
        let dir =
            rab_session::session_dir(&self.app.launch.paths.sessions_dir(), &self.app.launch.cwd);
        self.task = Some(tokio::spawn(async move {
            let note = match op {
                Op::Compact(focus) => session.compact(focus, cancel).await.map(|()| String::new()),
                Op::Handoff(focus) => {
                    session.handoff(focus.as_deref(), &dir, cancel).await.map(|p| {
                        format!("Handed off: continuing in a fresh session ({}).", p.display())
                    })
                }
                Op::Branch(id, summary) => session
                    .branch_to(id.as_deref(), summary, cancel)
                    .await
                    .map(|()| "Continuing on a new branch.".to_owned()),
            };
            (session, TaskEnd::Note(note))
        }));
    }

    fn run_done(&mut self, done: Result<(AgentSession, TaskEnd), tokio::task::JoinError>) {
        self.task = None;
        // Events the task sent before it returned are still in the channel.
        while let Ok(ev) = self.agent_rx.try_recv() {
            self.app.agent_event(ev);
        }
        match done {
            Ok((session, TaskEnd::Note(note))) => {
                self.app.running = None;
                self.app.status = None;
                match note {
                    Ok(text) if text.is_empty() => {}
                    Ok(text) => self.app.info(&text),
                    Err(e) => self.app.error(&e),
                }
                self.app.update_footer(&session);
                self.session = Some(session);
            }
            Ok((session, TaskEnd::Run(stop))) => {
                // A prompt command's allowed-tools last for its run only.
                let _ = self.app.launch.gate.grant(&[]);
                let leftover = session.queues().clear();
                self.app.run_ended(&stop);
                self.app.update_footer(&session);
                self.session = Some(session);
                if !leftover.is_empty() && stop == StopCause::Done {
                    self.app.queued.clear();
                    self.start_run(leftover);
                }
            }
            Err(e) => {
                self.app.running = None;
                self.app.error(&format!("the agent task failed: {e}; restart rab to go on"));
            }
        }
    }

    fn replace_session(&mut self, tape: rab_session::Tape, note: &str) {
        match self.app.launch.session(tape) {
            Ok((mut s, _)) => {
                self.agent_rx = s.subscribe();
                self.app.info(note);
                self.app.update_footer(&s);
                self.session = Some(s);
            }
            Err(e) => self.app.error(&e.message),
        }
    }

    fn resume(&mut self, path: std::path::PathBuf) {
        match rab_session::Tape::open(&path) {
            Ok((tape, _)) => {
                let n = tape.messages().len();
                let text = format!("Resumed session {} ({n} messages).", tape.id());
                self.replay(&tape);
                self.replace_session(tape, &text);
            }
            Err(e) => self.app.error(&e.to_string()),
        }
    }

    /// Shows the last messages of a resumed session so the user sees where it stood.
    fn replay(&mut self, tape: &rab_session::Tape) {
        let messages = tape.messages();
        let start = messages.len().saturating_sub(6);
        for m in &messages[start..] {
            match m {
                rab_ai::Message::User(u) => {
                    let text = rab_ai::Content::join_text(&u.content);
                    self.app.commit.extend(chrome::user_message(
                        &text,
                        self.app.width,
                        &self.app.theme,
                    ));
                }
                rab_ai::Message::Assistant(a) => {
                    let text = a.text();
                    if !text.trim().is_empty() {
                        self.app.commit.push(String::new());
                        self.app.commit.extend(rab_tui::markdown::render_markdown(
                            &text,
                            self.app.width,
                            &self.app.theme,
                            Some(&self.app.highlighter),
                        ));
                    }
                }
                rab_ai::Message::ToolResult(_) | rab_ai::Message::System(_) => {}
            }
        }
    }

    fn open_models(&mut self) {
        let current = self.session.as_ref().map(|s| {
            let m = &s.agent().config().model;
            format!("{}/{}", m.provider, m.id)
        });
        self.app.overlay = Some(Overlay::models(
            &self.app.launch.registry,
            current.as_deref().unwrap_or_default(),
        ));
    }

    fn set_model(&mut self, id: &str) {
        let Some(session) = self.session.as_mut() else {
            self.app
                .set_status("Wait for the agent to finish (or press Esc) before switching models");
            return;
        };
        match self.app.launch.resolve_model(id) {
            Ok(t) => {
                let text = format!("Model: {} ({})", t.model.id, t.model.provider);
                if let Some(note) = &t.note {
                    self.app.info(note);
                }
                session.set_model(t.model, t.api_key, Some(t.auth_hint));
                self.app.set_status(text);
                self.app.update_footer(session);
            }
            Err(e) => self.app.error(&e),
        }
    }

    fn cycle_model(&mut self) {
        let Some(session) = &self.session else { return };
        let current = session.agent().config().model.clone();
        let models: Vec<&rab_ai::Model> = self
            .app
            .launch
            .registry
            .models()
            .iter()
            .filter(|m| m.provider == current.provider)
            .collect();
        if models.len() < 2 {
            self.app.set_status(format!("No other {} model to cycle to", current.provider));
            return;
        }
        let i =
            models.iter().position(|m| m.id == current.id).map_or(0, |i| (i + 1) % models.len());
        let id = format!("{}/{}", models[i].provider, models[i].id);
        self.set_model(&id);
    }

    fn settings_rows(&self) -> Vec<(String, String)> {
        let thinking =
            self.session.as_ref().map_or_else(|| "-".to_owned(), |s| s.thinking().to_string());
        vec![
            ("Thinking level".into(), thinking),
            ("Theme".into(), self.app.theme.name.clone()),
            ("Show thinking".into(), on_off(self.app.show_thinking)),
            ("Expand tool output".into(), on_off(self.app.expand_tools)),
        ]
    }

    fn open_settings(&mut self) {
        self.app.overlay = Some(Overlay::settings(self.settings_rows()));
    }

    fn picked(&mut self, p: Picked) {
        match p {
            Picked::Secret { provider, key } => {
                self.app.overlay = None;
                match rab_core::commands::login::store(&self.app.launch, &provider, &key) {
                    Ok(text) => self.app.info(&text),
                    Err(e) => self.app.error(&e),
                }
            }
            Picked::Model(id) => {
                self.app.overlay = None;
                self.set_model(&id);
            }
            Picked::Session(path) => {
                self.app.overlay = None;
                if self.session.is_none() {
                    self.app
                        .set_status("Wait for the agent to finish before resuming another session");
                    return;
                }
                self.resume(path);
            }
            Picked::Branch { parent, text, summarise } => {
                self.app.overlay = None;
                self.app.editor.set_text(&text);
                let label = if summarise {
                    "Summarising the branch left behind…"
                } else {
                    "Branching…"
                };
                self.start_op(label, Op::Branch(parent, summarise));
            }
            Picked::Setting(i) => {
                match i {
                    0 => {
                        if let Some(s) = self.session.as_mut() {
                            let levels = rab_ai::ThinkingLevel::ALL;
                            let next = levels
                                .iter()
                                .position(|l| *l == s.thinking())
                                .map_or(0, |p| (p + 1) % levels.len());
                            s.set_thinking(levels[next]);
                        }
                    }
                    1 => {
                        let name = if self.app.theme.name == "dark" { "light" } else { "dark" };
                        if let Some(t) = Theme::builtin(name, self.app.theme.depth) {
                            self.app.theme = t;
                        }
                    }
                    2 => self.app.show_thinking = !self.app.show_thinking,
                    _ => self.app.expand_tools = !self.app.expand_tools,
                }
                let rows = self.settings_rows();
                if let Some(o) = &mut self.app.overlay {
                    o.refresh_settings(rows);
                }
                if let Some(s) = &self.session {
                    self.app.update_footer(s);
                }
            }
        }
    }
}

fn on_off(b: bool) -> String {
    if b { "on".into() } else { "off".into() }
}

fn hotkeys(b: &Keybindings) -> Vec<String> {
    use rab_tui::keys::Action;
    let rows: [(&str, Action); 14] = [
        ("Send (queue while the agent works)", Action::Submit),
        ("New line", Action::Newline),
        ("Follow-up while the agent works", Action::FollowUp),
        ("Interrupt the agent", Action::Interrupt),
        ("Clear the editor / quit (twice)", Action::Clear),
        ("Show or hide thinking", Action::ToggleThinking),
        ("Expand tool output", Action::ExpandTools),
        ("Pick a model", Action::ModelSelector),
        ("Next model", Action::CycleModel),
        ("Complete /command or @file", Action::Autocomplete),
        ("History", Action::HistoryPrev),
        ("Kill to end of line", Action::KillLine),
        ("Yank", Action::Yank),
        ("Undo", Action::Undo),
    ];
    let mut out: Vec<String> = rows
        .iter()
        .map(|(what, a)| format!("  {:<16} {what}", b.label(*a).unwrap_or_default()))
        .collect();
    out.push("  !cmd / !!cmd    Run a shell command (sent / not sent to the model)".into());
    out
}

/// A session operation run in the background.
enum Op {
    Compact(Option<String>),
    Handoff(Option<String>),
    Branch(Option<String>, bool),
}

async fn wait(task: &mut Option<Task>) -> Result<(AgentSession, TaskEnd), tokio::task::JoinError> {
    match task {
        Some(t) => t.await,
        None => std::future::pending().await,
    }
}
