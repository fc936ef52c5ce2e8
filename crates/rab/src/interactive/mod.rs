//! The terminal UI on the main screen: finished transcript items go into the terminal's
//! own scrollback; the live region at the bottom (streaming reply, running tools,
//! queued messages, editor, footer) is redrawn in place by rab-tui's differential
//! renderer. The session lives in the runtime (`rab_core::runtime`), so the UI keeps
//! taking keys while the agent works: Enter queues a steering message, Alt+Enter a
//! follow-up, Esc interrupts. The UI only translates: keys and typed lines become ops,
//! the runtime's events become transcript lines, overlays and questions.

mod app;
mod chrome;
mod command;
pub(crate) mod external;
mod images;
mod input_source;
mod line_edit;
mod outside;
mod overlay;
mod paste_image;
mod permission;
mod replay;
mod search_view;
mod settings_editor;
mod settings_io;
mod shell;
mod stream_view;
mod suspend;
mod tool_view;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::Event;
use rab_core::runtime::{self as rt, Op, RuntimeHandle, State};
use rab_core::{AgentSession, ApprovalRequest};
use rab_tui::input::Input;
use rab_tui::keys::Keybindings;
use rab_tui::screen::Screen;
use rab_tui::terminal::{CrosstermTerminal, Terminal, TerminalGuard, TerminalModes};
use rab_tui::{ColorDepth, Theme};

use self::app::{App, Effect};
use self::overlay::{Overlay, OverlayKey, Picked};
use crate::{EXIT_OK, EXIT_USAGE};
use rab_core::setup::Setup as Launch;

/// Renders a unified diff for tool results.
pub fn render_diff(diff: &str, width: usize, theme: &Theme) -> Vec<String> {
    rab_tui::diff::render_unified_diff(diff, width, theme, &rab_tui::diff::DiffOptions::default())
}

/// How long start-up waits for the terminal to say its background colour.
const BACKGROUND_QUERY: Duration = Duration::from_millis(200);

/// The theme from settings, else by the terminal's background: COLORFGBG ("15;0":
/// light text on a dark background) where set, else the terminal's answer to an OSC 11
/// query (in raw mode, before input is read), else dark.
fn load_theme(launch: &Launch) -> Result<Theme, String> {
    let env = &launch.env;
    let from_colorfgbg = env
        .get("COLORFGBG")
        .and_then(|v| v.rsplit(';').next())
        .and_then(|bg| bg.parse::<u8>().ok())
        .map(|bg| bg == 7 || bg >= 9);
    let background_is_light = if launch.settings.theme.is_some() {
        false
    } else {
        from_colorfgbg.unwrap_or_else(|| {
            rab_tui::background::query(BACKGROUND_QUERY).is_some_and(rab_tui::background::is_light)
        })
    };
    let name = launch
        .settings
        .theme
        .clone()
        .unwrap_or_else(|| if background_is_light { "light" } else { "dark" }.into());
    load_named_theme(launch, &name)
}

/// A built-in theme or `~/.rab/themes/NAME.json`, for the terminal's colour depth.
fn load_named_theme(launch: &Launch, name: &str) -> Result<Theme, String> {
    let env = &launch.env;
    let depth =
        ColorDepth::detect(env.get("NO_COLOR").is_some(), env.get("COLORTERM"), env.get("TERM"));
    if let Some(t) = Theme::builtin(name, depth) {
        return Ok(t);
    }
    let path = launch.paths.home().join("themes").join(format!("{name}.json"));
    let json = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "theme '{name}': cannot read {}: {e} (built-in themes: dark, light)",
            path.display()
        )
    })?;
    Theme::from_json(name, &json, depth).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the UI until the user quits.
pub async fn run(launch: Launch, session: AgentSession, first: Option<String>, resume: bool) -> u8 {
    let bindings = match Keybindings::load(&launch.paths.home().join("keybindings.json")) {
        Ok(b) => b,
        Err(e) => return crate::fail(EXIT_USAGE, &e.to_string()),
    };
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        rab_tui::terminal::restore_stdout_terminal();
        previous_hook(info);
    }));
    let modes = TerminalModes::default();
    let guard = match TerminalGuard::enter(CrosstermTerminal::new(), modes) {
        Ok(g) => g,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot set up the terminal: {e}"));
        }
    };
    // In raw mode: the terminal's answer to the background query comes on stdin.
    let theme = match load_theme(&launch) {
        Ok(t) => t,
        Err(e) => {
            drop(guard);
            return crate::fail(EXIT_USAGE, &e);
        }
    };
    let screen = match Screen::new(guard) {
        Ok(s) => s,
        Err(e) => {
            return crate::fail(crate::EXIT_PROVIDER, &format!("cannot set up the terminal: {e}"));
        }
    };
    crate::sessions::index_in_background(launch.paths.sessions_dir(), launch.paths.home());
    images::init(&launch.env);
    let launch = Arc::new(launch);
    let mut ui = Ui::new(launch, theme, bindings, session, screen);
    ui.welcome();
    if resume {
        ui.effect(Effect::Line("/resume".into()));
    }
    if let Some(prompt) = first {
        ui.effect(Effect::Line(prompt));
    }
    ui.run_loop().await
}

struct Ui {
    app: App,
    /// The runtime (taken at shutdown).
    rt: Option<RuntimeHandle>,
    /// The session's state as the runtime last told it.
    state: State,
    screen: Screen<TerminalGuard<CrosstermTerminal>>,
    /// Questions, answered one at a time.
    asks: std::collections::VecDeque<(u64, ApprovalRequest)>,
    /// Operations shown with a status label, cleared when they are done.
    labelled: Vec<u64>,
    /// The messages asked for to show a resumed session.
    replay: Option<u64>,
    /// A jump in the session tree under way: the conversation is drawn again once it
    /// is done.
    jump: Option<u64>,
    /// The typed line whose work goes on.
    line: Option<u64>,
    /// A session operation going on (compact, branch, handoff): Esc stops it.
    op: Option<u64>,
    /// Messages sent to steer or follow up, until the runtime took them.
    queued: Vec<(u64, String)>,
    /// The window title, progress and notifications.
    outside: outside::Outside,
    /// Ctrl+G was pressed: the loop hands the terminal to the external editor.
    external_edit: Option<external::Target>,
    /// Ctrl+Z or a SIGTSTP: stop until `fg` (done by the loop, see [`Ui::suspend`]).
    suspend: bool,
    /// Images pasted into the prompt, by the marker the editor shows for each.
    images: Vec<(String, rab_ai::Content)>,
    /// `/settings` saved something that takes a reload to apply.
    settings_changed: bool,
    quit: bool,
}

impl Ui {
    fn new(
        launch: Arc<Launch>,
        theme: Theme,
        bindings: Keybindings,
        session: AgentSession,
        screen: Screen<TerminalGuard<CrosstermTerminal>>,
    ) -> Self {
        let state = State::of(&session);
        let mut app = App::new(launch.clone(), theme, bindings, session.agent().messages(), &state);
        app.width = usize::from(screen.size().0.max(20));
        let folder = launch.cwd.file_name().map(|n| n.to_string_lossy().into_owned());
        let outside = outside::Outside::detect(&launch.env, folder.as_deref().unwrap_or("/"));
        let rt = rt::start_with(launch, session);
        Self {
            app,
            rt: Some(rt),
            state,
            screen,
            asks: std::collections::VecDeque::new(),
            labelled: Vec::new(),
            replay: None,
            jump: None,
            line: None,
            op: None,
            queued: Vec::new(),
            outside,
            external_edit: None,
            suspend: false,
            images: Vec::new(),
            settings_changed: false,
            quit: false,
        }
    }

    /// Sends escapes for the terminal itself (title, progress, notifications).
    fn tell_terminal(&mut self, escapes: &str) {
        if escapes.is_empty() {
            return;
        }
        let term = self.screen.terminal_mut();
        if let Err(e) = term.write(escapes.as_bytes()).and_then(|()| term.flush()) {
            tracing::debug!("cannot write to the terminal: {e}");
        }
    }

    /// The editor's border: bash mode, else the thinking level.
    fn border_role(&self) -> rab_tui::Role {
        use rab_tui::Role;
        if self.app.editor.starts_with("!") {
            return Role::Bash;
        }
        match self.state.thinking_level {
            rab_ai::ThinkingLevel::Off => Role::Border,
            rab_ai::ThinkingLevel::Minimal => Role::Dim,
            rab_ai::ThinkingLevel::Low => Role::Thinking,
            rab_ai::ThinkingLevel::Medium => Role::Accent,
            rab_ai::ThinkingLevel::High => Role::Warning,
        }
    }

    fn submit(&self, op: Op) -> u64 {
        self.rt.as_ref().map_or(0, |r| r.submit(op))
    }

    /// Shows `label` until `submission` is done.
    fn submit_label(&mut self, submission: u64, label: &str) {
        self.app.set_status(label.to_owned());
        self.labelled.push(submission);
    }

    fn welcome(&mut self) {
        let t = &self.app.theme;
        let line = format!(
            "{} {} · {} ({}) · /help for commands, Ctrl+C twice to quit",
            t.fg(rab_tui::Role::Accent, &t.bold("rab")),
            env!("CARGO_PKG_VERSION"),
            self.state.model,
            self.state.provider
        );
        // Wrapped at words here: the terminal would break them anywhere (40 columns).
        let width = self.app.width;
        let hints = self.app.theme.dim(&header_hints(&self.app.bindings));
        for l in [line, hints] {
            self.app.commit.extend(rab_tui::wrap::wrap(&l, width));
        }
        let launch = &self.app.launch;
        let keyless = launch.target.api_key.is_none()
            && launch.registry.provider(&self.state.provider).is_some_and(|p| p.requires_key);
        if keyless {
            let p = self.state.provider.clone();
            self.app.error(&format!(
                "No API key for {p}. Type /login {p} to store one (or /login to see every \
                 provider), or set its environment variable and restart."
            ));
        }
        let n = self.state.message_count;
        if n > 0 {
            let text = format!("Continuing session {} ({n} messages).", self.state.session_id);
            self.app.info(&text);
            // Where it stood: the conversation so far, as it looked live.
            self.replay = Some(self.submit(Op::GetMessages));
        }
    }

    fn draw(&mut self) {
        self.app.editor.set_border(self.border_role());
        let (cols, rows) = self.screen.size();
        self.app.width = usize::from(cols.max(20));
        self.app.height = usize::from(rows.max(10));
        let (live, cursor) = self.app.live();
        let commit = std::mem::take(&mut self.app.commit);
        if let Err(e) = self.screen.frame(&commit, &live, cursor) {
            tracing::warn!("cannot draw: {e}");
        }
    }

    async fn run_loop(&mut self) -> u8 {
        let title = self.outside.working(false);
        self.tell_terminal(&title);
        let mut input = match input_source::InputSource::start() {
            Ok(i) => i,
            Err(e) => {
                self.app.error(&format!("cannot read the terminal: {e}"));
                return crate::EXIT_PROVIDER;
            }
        };
        let mut tick = tokio::time::interval(Duration::from_millis(80));
        let mut stops = suspend::stop_signals();
        while !self.quit {
            self.draw();
            tokio::select! {
                got = input.next() => match got {
                    Some(Input::Event(ev)) => self.terminal_event(ev),
                    Some(Input::Light(light)) => self.colour_scheme(light),
                    None => self.quit = true,
                },
                ev = next_event(&mut self.rt) => match ev {
                    Some(ev) => {
                        self.runtime_event(ev);
                        while let Some(ev) = self.rt.as_mut().and_then(|r| r.events.try_recv().ok()) {
                            self.runtime_event(ev);
                        }
                    }
                    None => {
                        self.app.error("the session's runtime ended; restart rab to go on");
                        self.rt = None;
                    }
                },
                _ = tick.tick(), if self.app.is_busy() => self.app.tick(),
                () = suspend::next_stop(&mut stops) => self.suspend = true,
            }
            if let Some(target) = self.external_edit.take() {
                // Nothing may read the terminal while the editor has it.
                input.pause();
                self.edit_externally(target);
                input.resume();
            }
            if std::mem::take(&mut self.suspend) {
                input.pause();
                self.suspend();
                input.resume();
            }
        }
        self.shutdown().await;
        EXIT_OK
    }

    async fn shutdown(&mut self) {
        // What a run cut short had on screen stays in the scrollback.
        let kept = self.app.take_in_flight();
        if !kept.is_empty() {
            let _ = self.screen.frame(&kept, &[] as &[String], None);
        }
        // SessionEnd hooks' failures, shown once the screen is the terminal's again.
        let mut ended = Vec::new();
        if let Some(rt) = self.rt.take() {
            // A run going on is aborted; its results are recorded before the process goes.
            if let Ok(Some(session)) =
                tokio::time::timeout(Duration::from_secs(3), rt.finish()).await
            {
                ended = session.session_end("exit").await;
            }
        }
        let _ = self.screen.clear_live();
        let leave = self.outside.leave();
        self.tell_terminal(leave);
        let term = self.screen.terminal_mut();
        let _ = term.write(b"\r\n");
        let _ = term.flush();
        for message in ended {
            eprintln!("rab: {}", crate::term::safe(&message));
        }
    }

    /// What the runtime says, on screen.
    fn runtime_event(&mut self, ev: rt::Event) {
        use rt::Event as E;
        match ev {
            E::Agent(e) => self.app.agent_event(e),
            E::Data { .. } => {}
            E::ApprovalRequested { id, request } => {
                let note = self.outside.notify(&format!("rab is waiting: allow {}?", request.tool));
                self.tell_terminal(&note);
                self.app.asking(&request.call_id);
                self.asks.push_back((id, request));
                self.next_question();
            }
            E::QuestionClosed { id } => {
                if let Some((_, request)) = self.asks.iter().find(|(q, _)| *q == id) {
                    let call_id = request.call_id.clone();
                    self.app.answered(&call_id);
                }
                let is_shown = self.asks.front().is_some_and(|(q, _)| *q == id);
                self.asks.retain(|(q, _)| *q != id);
                if is_shown {
                    self.app.permission = None;
                    self.next_question();
                }
            }
            E::RunStarted { .. } => {
                // A run no typed line started carries what was queued too late for the
                // last one (or a scheduled prompt).
                if self.line.is_none() {
                    self.app.queued.clear();
                }
                self.app.run_started();
                let escapes = self.outside.working(true);
                self.tell_terminal(&escapes);
            }
            E::RunEnded { stop, .. } => {
                // What was queued for a run that did not finish goes back to the editor.
                if stop != rab_agent::StopCause::Done {
                    self.app.restore_queued();
                    self.queued.clear();
                }
                self.app.run_ended(&stop);
                let mut escapes = self.outside.working(false);
                escapes.push_str(&self.outside.notify(&match &stop {
                    rab_agent::StopCause::Done => "rab finished".to_owned(),
                    rab_agent::StopCause::Error { message } => format!("rab stopped: {message}"),
                    other => format!("rab stopped ({})", stop_word(other)),
                }));
                self.tell_terminal(&escapes);
            }
            E::OpStarted { submission, label } => {
                self.app.running = Some(app::Running { started: std::time::Instant::now() });
                self.op = Some(submission);
                self.submit_label(submission, &label);
            }
            E::StateChanged(state) => {
                self.app.update_footer(&state);
                if state.session_name != self.state.session_name {
                    let folder = self.app.launch.cwd.file_name().map(|n| n.to_string_lossy());
                    let name = state.session_name.clone().or(folder.map(|f| f.into_owned()));
                    self.outside.set_name(name.as_deref().unwrap_or("/"));
                    let title = self.outside.working(state.is_streaming);
                    self.tell_terminal(&title);
                }
                self.state = state;
            }
            E::Info { submission, text } => {
                self.end_label(submission);
                self.app.info(&text);
            }
            E::Done { submission, result } => {
                self.end_label(submission);
                if self.jump == Some(submission) {
                    self.jump = None;
                    if result.is_ok() {
                        self.app.info("── The conversation from here on ──");
                        self.replay = Some(self.submit(Op::GetMessages));
                    }
                }
                if self.op == Some(submission) {
                    self.op = None;
                    self.app.running = None;
                }
                if self.line == Some(submission) {
                    self.line = None;
                    self.app.line_in_flight = false;
                }
                let queued = self.queued.iter().position(|(q, _)| *q == submission);
                match (queued.map(|i| self.queued.remove(i)), result) {
                    // The run ended just before the message reached it: it starts one.
                    (Some((_, text)), Err(_)) => {
                        self.app.queued.retain(|(t, _)| *t != text);
                        self.line(&text);
                    }
                    (_, Err(e)) => self.app.error(&e),
                    (_, Ok(())) => {}
                }
            }
            E::Warning(w) => self.app.error(&format!("warning: {w}")),
            E::Attached { files, .. } => self.app.info(&format!("Attached {}", files.join(", "))),
            E::Show { view, .. } => self.show(view),
            E::SessionReplaced { reason, .. } => {
                if reason == rt::Replaced::Resumed {
                    self.replay = Some(self.submit(Op::GetMessages));
                }
            }
            E::Messages { submission, messages } if self.replay == Some(submission) => {
                self.replay = None;
                replay::replay(&mut self.app, &messages);
            }
            E::ShellStarted { command, .. } => self.shell_started(command),
            E::ShellOutput { chunk, .. } => self.shell_output(&chunk),
            E::ShellEnded { command, output, is_error, is_shared, .. } => {
                self.shell_ended(&command, &output, is_error, is_shared)
            }
            E::CronFired { job, schedule, prompt } => {
                self.app.info(&format!("Scheduled prompt {job} ({schedule}): {prompt}"));
            }
            E::SetupChanged(setup) => self.app.set_launch(setup),
            E::ServiceStatus(status) => self.service(&status),
            E::Quit { .. } => self.quit = true,
            E::State { .. } | E::Messages { .. } => {}
        }
    }

    /// An MCP server or a plugin became ready, failed or crashed: the user hears of it
    /// (the UI never waits for them, so this is where a failure shows up).
    fn service(&mut self, s: &rab_core::ServiceStatus) {
        // A server's prompts and a plugin's commands are commands: offer them in
        // completion once they exist.
        self.app.refresh_commands();
        let (kind, label) = (s.kind.label(), s.state.label());
        match &s.state {
            rab_core::ServiceState::Ready => {
                let verb = if s.generation > 1 { "reloaded" } else { "ready" };
                self.app.set_status(format!("{kind} {} {verb}: {} tools", s.name, s.tools))
            }
            rab_core::ServiceState::Failed(why) | rab_core::ServiceState::Crashed(why) => {
                let first = why.lines().next().unwrap_or_default();
                self.app.error(&format!(
                    "{kind} {} {label}: {first} ({})",
                    s.name,
                    s.kind.hint(&s.name)
                ));
            }
            rab_core::ServiceState::Removed => {
                self.app.set_status(format!("{kind} {} unloaded: its file was removed", s.name))
            }
            rab_core::ServiceState::Starting | rab_core::ServiceState::Disabled => {}
        }
    }

    fn end_label(&mut self, submission: u64) {
        if let Some(i) = self.labelled.iter().position(|l| *l == submission) {
            self.labelled.remove(i);
            self.app.status = None;
        }
    }

    /// The terminal's colour scheme is (now) light or dark: with no theme set, the
    /// matching built-in one takes over.
    fn colour_scheme(&mut self, light: bool) {
        if self.app.launch.settings.theme.is_some() || (self.app.theme.name == "light") == light {
            return;
        }
        let name = if light { "light" } else { "dark" };
        match load_named_theme(&self.app.launch, name) {
            Ok(theme) => {
                self.app.theme = theme;
                self.screen.invalidate();
            }
            Err(e) => tracing::warn!("cannot switch to the {name} theme: {e}"),
        }
    }

    fn terminal_event(&mut self, ev: Event) {
        match ev {
            Event::Key(key) => {
                if let Some(view) = &mut self.app.permission {
                    if let Some(approval) = view.key(&key, &self.app.bindings) {
                        self.app.permission = None;
                        if let Some((id, request)) = self.asks.pop_front() {
                            self.submit(Op::Answer { id, approval });
                            self.app.answered(&request.call_id);
                        }
                        self.next_question();
                    }
                    return;
                }
                if let Some(overlay) = &mut self.app.overlay {
                    match overlay.key(&key, &self.app.bindings) {
                        OverlayKey::Handled => {}
                        OverlayKey::Close => {
                            self.app.overlay = None;
                            self.settings_closed();
                        }
                        OverlayKey::Picked(p) => self.picked(p),
                        OverlayKey::Replace(next) => self.app.overlay = Some(*next),
                    }
                    return;
                }
                let effect = self.app.key(&key);
                self.effect(effect);
            }
            Event::Paste(text) if self.app.overlay.is_none() && self.paste_image_path(&text) => {}
            Event::Paste(text) => match &mut self.app.overlay {
                None => self.app.editor.paste(&text.replace("\r\n", "\n").replace('\r', "\n")),
                Some(Overlay::Secret { typed, .. }) => typed.push_str(text.trim()),
                Some(_) => {}
            },
            Event::Resize(cols, rows) => {
                self.screen.resize(cols, rows);
                self.app.width = usize::from(cols.max(20));
            }
            Event::FocusGained => {
                self.outside.set_focused(true);
                // The terminal's colours may have changed while it was away (a terminal
                // without colour-scheme reports still answers this).
                if self.app.launch.settings.theme.is_none() {
                    self.tell_terminal("\x1b]11;?\x07");
                }
            }
            Event::FocusLost => self.outside.set_focused(false),
            Event::Mouse(_) => {}
        }
    }

    /// Shows the oldest unanswered question, if none is on screen.
    fn next_question(&mut self) {
        if self.app.permission.is_none()
            && let Some((_, request)) = self.asks.front()
        {
            self.app.permission = Some(permission::PermissionView::new(request.clone()));
        }
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Quit => self.quit = true,
            Effect::Line(line) => self.line(&line),
            Effect::Steer(text) => {
                let id = self.submit(Op::Steer { text: text.clone(), images: Vec::new() });
                self.queued.push((id, text));
            }
            Effect::FollowUp(text) => {
                let id = self.submit(Op::FollowUp { text: text.clone(), images: Vec::new() });
                self.queued.push((id, text));
            }
            Effect::Interrupt => {
                if self.app.running.is_some() {
                    self.submit(Op::Abort);
                    self.app.restore_queued();
                }
            }
            Effect::PickModel => self.open_models(),
            Effect::ClearScreen => self.show(rt::View::Clear),
            Effect::CycleModel => self.cycle_model(true),
            Effect::CycleModelBackward => self.cycle_model(false),
            // Done by the loop, which must stop reading the terminal first.
            Effect::ExternalEditor => self.external_edit = Some(external::Target::Prompt),
            Effect::Suspend => self.suspend = true,
            Effect::PasteImage => self.paste_clipboard_image(),
        }
    }

    fn open_models(&mut self) {
        let current = format!("{}/{}", self.state.provider, self.state.model);
        self.app.overlay = Some(Overlay::models(&self.app.launch.registry, &current));
    }

    fn set_model(&mut self, id: &str) {
        if self.app.running.is_some() {
            self.app
                .set_status("Wait for the agent to finish (or press Esc) before switching models");
            return;
        }
        match self.app.launch.resolve_model(id) {
            Ok(t) => {
                let text = format!("Model: {} ({})", t.model.id, t.model.provider);
                if let Some(note) = &t.note {
                    self.app.info(note);
                }
                let (model, api_key, auth_hint) = (Box::new(t.model), t.api_key, Some(t.auth_hint));
                self.submit(Op::SetModel { model, api_key, auth_hint });
                self.app.set_status(text);
            }
            Err(e) => self.app.error(&e),
        }
    }

    fn cycle_model(&mut self, forward: bool) {
        if self.app.running.is_some() {
            return;
        }
        let current = (self.state.provider.clone(), self.state.model.clone());
        let models: Vec<&rab_ai::Model> =
            self.app.launch.registry.models().iter().filter(|m| m.provider == current.0).collect();
        if models.len() < 2 {
            self.app.set_status(format!("No other {} model to cycle to", current.0));
            return;
        }
        let n = models.len();
        let step = if forward { 1 } else { n - 1 };
        let i = models.iter().position(|m| m.id == current.1).map_or(0, |i| (i + step) % n);
        let id = format!("{}/{}", models[i].provider, models[i].id);
        self.set_model(&id);
    }

    fn picked(&mut self, p: Picked) {
        match p {
            Picked::Secret { provider, key } => {
                self.app.overlay = None;
                self.submit(Op::StoreKey { provider, key });
            }
            Picked::Model(id) => {
                self.app.overlay = None;
                self.set_model(&id);
            }
            Picked::Memory(file) => {
                self.app.overlay = None;
                self.external_edit = Some(external::Target::File(file));
            }
            Picked::Session(path) => {
                self.app.overlay = None;
                if self.app.running.is_some() {
                    self.app
                        .set_status("Wait for the agent to finish before resuming another session");
                    return;
                }
                self.submit(Op::SwitchSession { path });
            }
            Picked::Branch { parent, text, summarise, files } => {
                use overlay::Files;
                self.app.overlay = None;
                let point = parent.unwrap_or_else(|| "0".to_owned());
                match files {
                    Files::Keep => {
                        self.app.editor.set_text(&text);
                        // The runtime says what it does (OpStarted) until it is done.
                        self.jump = Some(self.submit(Op::Branch {
                            entry: Some(point).filter(|p| p != "0"),
                            summarise,
                        }));
                    }
                    Files::Restore => {
                        self.app.editor.set_text(&text);
                        self.jump =
                            Some(self.submit(Op::Line { text: format!("/rewind {point}") }));
                    }
                    Files::Only => {
                        self.submit(Op::Line { text: format!("/rewind {point} files") });
                    }
                }
            }
            Picked::SaveSetting { key, value, scope } => self.save_setting(&key, value, scope),
        }
    }
}

/// A stop cause in a word or two, for a notification.
fn stop_word(stop: &rab_agent::StopCause) -> &'static str {
    use rab_agent::StopCause as S;
    match stop {
        S::Done => "done",
        S::MaxTurns { .. } => "turn limit",
        S::Error { .. } => "error",
        S::Budget { .. } => "budget reached",
        S::Aborted => "interrupted",
        S::Loop { .. } => "loop stopped",
        S::Length { .. } => "reply cut off",
    }
}

/// The header's one line of key hints, as bound; the first Ctrl+O expands them.
fn header_hints(b: &Keybindings) -> String {
    use rab_tui::keys::Action;
    let key = |a: Action| b.label(a).unwrap_or_else(|| "?".into());
    format!(
        "{} interrupt · {} clear, twice quit · / commands · ! shell · @ files · # remember · {} all keys",
        key(Action::Interrupt),
        key(Action::Clear),
        key(Action::ExpandTools)
    )
}

fn hotkeys(b: &Keybindings) -> Vec<String> {
    use rab_tui::keys::Action;
    let rows: [(&str, Action); 16] = [
        ("Send (queue while the agent works)", Action::Submit),
        ("New line", Action::Newline),
        ("Follow-up while the agent works", Action::FollowUp),
        ("Interrupt the agent", Action::Interrupt),
        ("Clear the editor / quit (twice)", Action::Clear),
        ("Show or hide thinking", Action::ToggleThinking),
        ("Expand tool output", Action::ExpandTools),
        ("Pick a model", Action::ModelSelector),
        ("Clear the screen (/clear: a new conversation)", Action::ClearScreen),
        ("Next model", Action::CycleModel),
        ("Complete /command or @file", Action::Autocomplete),
        ("History", Action::HistoryPrev),
        ("Kill to end of line", Action::KillLine),
        ("Yank", Action::Yank),
        ("Undo", Action::Undo),
        ("Suspend (fg to come back)", Action::Suspend),
    ];
    let mut out: Vec<String> = rows
        .iter()
        .map(|(what, a)| format!("  {:<16} {what}", b.label(*a).unwrap_or_default()))
        .collect();
    out.push("  !cmd / !!cmd    Run a shell command (sent / not sent to the model)".into());
    out
}

/// The runtime's next event (never, without a runtime).
async fn next_event(rt: &mut Option<RuntimeHandle>) -> Option<rt::Event> {
    match rt {
        Some(r) => r.events.recv().await,
        None => std::future::pending().await,
    }
}
