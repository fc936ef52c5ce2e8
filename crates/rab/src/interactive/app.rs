//! The UI state: what is committed, what is live, the editor, queued messages, and how
//! keys and agent events change them. The event loop lives in `mod.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, KeyEventKind};
use rab_agent::{AgentEvent, StopCause};
use rab_ai::Message;
use rab_core::runtime::State;
use rab_tui::autocomplete::{Autocomplete, Completions, PromptCompleter};
use rab_tui::editor::Editor;
use rab_tui::highlight::Highlighter;
use rab_tui::keys::{Action, Keybindings};
use rab_tui::select::{SelectItem, SelectList};
use rab_tui::{Component, CursorPos, RenderCx, Theme};

use super::chrome::{self, FooterInfo};
use super::overlay::Overlay;
use super::stream_view::StreamView;
use super::tool_view::ToolView;
use rab_core::setup::Setup as Launch;

/// Something the event loop must do after a key or event.
pub enum Effect {
    /// Nothing.
    None,
    /// A line as typed, for the runtime to classify and carry out.
    Line(String),
    /// A message for the running agent, delivered at its next step.
    Steer(String),
    /// A message for when the running agent would stop.
    FollowUp(String),
    /// Leave.
    Quit,
    /// Interrupt the current run.
    Interrupt,
    /// Open the model selector.
    PickModel,
    /// Clear the screen.
    ClearScreen,
    /// Stop rab until the shell's `fg` (Ctrl+Z).
    Suspend,
    /// Switch to the next model.
    CycleModel,
    /// Switch to the previous model.
    CycleModelBackward,
    /// Edit the prompt in `$VISUAL` / `$EDITOR`.
    ExternalEditor,
    /// Attach the clipboard's image.
    PasteImage,
}

/// A `!cmd` in progress.
pub struct BangView {
    /// The command.
    pub command: String,
    /// Output so far.
    pub output: String,
    /// When it started.
    pub started: Instant,
}

/// The UI state.
pub struct App {
    pub launch: Arc<Launch>,
    pub theme: Theme,
    pub bindings: Keybindings,
    pub highlighter: Highlighter,
    pub editor: Editor,
    completer: PromptCompleter,
    completions: Option<(Completions, SelectList)>,
    /// Lines to commit to scrollback at the next frame.
    pub commit: Vec<String>,
    pub stream: StreamView,
    pub tools: Vec<ToolView>,
    pub bang: Option<BangView>,
    /// Messages typed while the agent works: text and whether it is a follow-up.
    pub queued: Vec<(String, bool)>,
    pub overlay: Option<Overlay>,
    /// A permission question on screen (above any overlay).
    pub permission: Option<super::permission::PermissionView>,
    pub status: Option<(String, Instant)>,
    pub show_thinking: bool,
    pub expand_tools: bool,
    /// The header's key hints were expanded to the full list (Ctrl+O before any tool).
    pub hints_expanded: bool,
    /// How the last run ended (0: an answer), for the prompt marks (OSC 133) until the
    /// output's end is marked.
    pub run_status: Option<u8>,
    /// The last committed tool view, for Ctrl+O.
    pub last_tool: Option<ToolView>,
    pub running: Option<Running>,
    /// A typed line was sent and its work has not ended: more lines queue like steering
    /// (the runtime may be starting a run for it).
    pub line_in_flight: bool,
    pub footer: FooterInfo,
    pub width: usize,
    /// The screen's rows.
    pub height: usize,
    /// The text of the last answer (for `/copy`).
    pub last_answer: String,
    pub frame: usize,
    last_ctrl_c: Option<Instant>,
    /// The last Esc on an empty editor (a second one soon after opens the tree).
    last_esc: Option<Instant>,
    /// The user message of a run just started, committed when the agent records it.
    awaiting_prompt: bool,
}

/// A run in progress.
pub struct Running {
    pub started: Instant,
}

impl App {
    /// The UI for a session.
    pub fn new(
        launch: Arc<Launch>,
        theme: Theme,
        bindings: Keybindings,
        messages: &[Message],
        state: &State,
    ) -> Self {
        let gate = launch.gate.clone();
        let completer = PromptCompleter::new(command_infos(&launch), launch.cwd.clone())
            .with_hidden(Arc::new(move |p: &std::path::Path| gate.read_denied(p)));
        let mut editor = Editor::new();
        for m in messages {
            if let Message::User(u) = m
                && let Some(rab_ai::Content::Text { text }) = u.content.first()
            {
                editor.push_history(text);
            }
        }
        // Loaded by the first code block that needs a language, not at start.
        let highlighter = Highlighter::new();
        let mut app = Self {
            launch,
            theme,
            bindings,
            highlighter,
            editor,
            completer,
            completions: None,
            commit: Vec::new(),
            stream: StreamView::default(),
            tools: Vec::new(),
            bang: None,
            queued: Vec::new(),
            overlay: None,
            permission: None,
            status: None,
            show_thinking: false,
            expand_tools: false,
            hints_expanded: false,
            run_status: None,
            last_tool: None,
            running: None,
            line_in_flight: false,
            footer: FooterInfo::default(),
            width: 80,
            height: 24,
            last_answer: String::new(),
            frame: 0,
            last_ctrl_c: None,
            last_esc: None,
            awaiting_prompt: false,
        };
        app.update_footer(state);
        app
    }

    /// Refreshes the footer from the session.
    pub fn update_footer(&mut self, state: &State) {
        // Sub-agents' spending counts in the footer's cost, as in /cost's total.
        self.footer = FooterInfo {
            cwd: chrome::tilde(&self.launch.cwd, self.launch.env.get("HOME")),
            branch: chrome::git_branch(&self.launch.cwd),
            model: state.model.clone(),
            thinking: state.thinking_level.to_string(),
            input: state.input_tokens,
            output: state.output_tokens,
            cache_read: state.cache_read_tokens,
            cost: state.cost,
            context: state.context_tokens,
            window: state.context_window,
            mode: self.launch.gate.mode().get().as_str().to_owned(),
        };
    }

    /// Shows a transient status line.
    pub fn set_status(&mut self, text: impl Into<String>) {
        self.status = Some((text.into(), Instant::now()));
    }

    /// Commits info lines.
    pub fn info(&mut self, text: &str) {
        self.commit.push(String::new());
        self.commit.extend(chrome::info(text, self.width, &self.theme));
    }

    /// Commits error lines.
    pub fn error(&mut self, text: &str) {
        self.commit.push(String::new());
        self.commit.extend(chrome::error(text, self.width, &self.theme));
    }

    /// While the editor holds a `# note` line: where Enter will write it.
    fn memory_hint(&self) -> Option<String> {
        if !self.editor.starts_with("#") {
            return None;
        }
        let text = self.editor.text();
        let m = rab_core::memory::memory_line(&text)?;
        let scope = if m.global {
            rab_core::memory::MemoryScope::User
        } else {
            rab_core::memory::MemoryScope::Project
        };
        let (folder, name) = scope.file(&self.launch.cwd, self.launch.paths.home());
        let other = if m.global { "# for the project's" } else { "#~ for your own" };
        Some(format!("Enter adds \"- {}\" to {} ({other})", m.text, folder.join(name).display()))
    }

    /// The live region and where the cursor goes.
    pub fn live(&self) -> (Vec<String>, Option<CursorPos>) {
        let (w, t) = (self.width, &self.theme);
        let mut lines = self.stream.live(w, t, &self.highlighter, self.show_thinking);
        for tool in &self.tools {
            lines.extend(tool.render(w, t, self.expand_tools));
        }
        if let Some(b) = &self.bang {
            lines.push(String::new());
            lines.push(t.fg(rab_tui::Role::Bash, &format!("$ {}", b.command)));
            let tail: Vec<&str> = b.output.lines().rev().take(8).collect();
            lines
                .extend(tail.into_iter().rev().map(|l| rab_tui::ansi::truncate(&t.dim(l), w, "…")));
        }
        if let Some((text, _)) = &self.status {
            lines.push(t.fg(rab_tui::Role::Warning, text));
        }
        if !self.queued.is_empty() {
            lines.extend(chrome::queued(&self.queued, w, t));
        }
        if let Some(r) = &self.running {
            lines.push(chrome::working(self.frame, r.started.elapsed(), "Working", t));
        } else if let Some(b) = &self.bang {
            lines.push(chrome::working(self.frame, b.started.elapsed(), "Running", t));
        }
        let mut cursor = None;
        if let Some(p) = &self.permission {
            lines.extend(p.render(w, t));
        } else if let Some(overlay) = &self.overlay {
            lines.extend(overlay.render(w, self.height, t));
        } else {
            let (editor_lines, pos) = self.editor.render(w, t);
            cursor = Some(CursorPos { row: lines.len() + pos.row, col: pos.col });
            lines.extend(editor_lines);
            if let Some(hint) = self.memory_hint() {
                lines.push(t.dim(&rab_tui::ansi::truncate(&hint, w, "…")));
            }
            if let Some((_, list)) = &self.completions {
                lines.extend(list.render(&RenderCx { width: w, theme: t }));
            }
        }
        lines.extend(chrome::footer(&self.footer, w, t));
        (lines, cursor)
    }

    /// Replaces the launch (after `/reload`) and the command list completion offers.
    pub fn set_launch(&mut self, launch: Arc<Launch>) {
        self.launch = launch;
        self.refresh_commands();
    }

    /// Reads the command list again (MCP prompts come and go).
    pub fn refresh_commands(&mut self) {
        self.completer.set_commands(command_infos(&self.launch));
    }

    /// Argument suggestions from the command being typed (`/model cl`).
    /// The tool called `name`: the session's (built-ins, `task`, extensions'), else one a
    /// source offers now (an MCP server's, a plugin's).
    fn tool_named(&self, name: &str) -> Option<std::sync::Arc<dyn rab_agent::AgentTool>> {
        let fixed = self.launch.tools.iter().chain(self.launch.extensions.tools());
        if let Some(tool) = fixed.into_iter().find(|t| t.name() == name) {
            return Some(tool.clone());
        }
        self.launch
            .extensions
            .tool_sources()
            .iter()
            .flat_map(|s| s.tools())
            .find(|t| t.name() == name)
    }

    fn argument_completions(&self) -> Option<Completions> {
        let before = self.editor.text_before_cursor();
        if before.contains('\n') {
            return None;
        }
        let (start, items) = self.launch.extensions.completions(before, self.launch.as_ref())?;
        if items.is_empty() {
            return None;
        }
        let items = items
            .into_iter()
            .map(|c| rab_tui::autocomplete::CompletionItem {
                label: c.value.clone(),
                description: c.description,
                replacement: format!("{} ", c.value),
            })
            .collect();
        Some(Completions { range: start..before.len(), items })
    }

    fn refresh_completions(&mut self) {
        let found = self
            .argument_completions()
            .or_else(|| self.completer.complete(self.editor.text_before_cursor()));
        self.completions = found.and_then(|c| {
            if c.items.is_empty() {
                return None;
            }
            let items = c
                .items
                .iter()
                .map(|i| {
                    let item = SelectItem::new(i.label.clone());
                    match &i.description {
                        Some(d) => item.with_description(d.clone()),
                        None => item,
                    }
                })
                .collect();
            Some((c, SelectList::new(items, 6)))
        });
    }

    fn accept_completion(&mut self) -> bool {
        let Some((c, list)) = self.completions.take() else { return false };
        let Some(i) = list.selected() else { return false };
        if let Some(item) = c.items.get(i) {
            self.editor.accept_completion(&c, item);
        }
        self.refresh_completions();
        true
    }

    /// Handles a key press outside overlays.
    pub fn key(&mut self, key: &KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        let b = &self.bindings;
        let is = |a: Action| b.matches(a, key);
        if is(Action::Interrupt) {
            if self.completions.take().is_some() {
                return Effect::None;
            }
            if self.running.is_some() {
                return Effect::Interrupt;
            }
            // Esc twice on an empty editor: the session tree, to rewind (as Claude Code).
            if self.editor.is_empty() {
                let again = self.last_esc.is_some_and(|t| t.elapsed() < Duration::from_millis(800));
                self.last_esc = if again { None } else { Some(Instant::now()) };
                if again {
                    return Effect::Line("/tree".to_owned());
                }
            }
            return Effect::None;
        }
        if is(Action::Clear) || is(Action::Quit) {
            let ctrl_d = key.code == crossterm::event::KeyCode::Char('d');
            if !self.editor.is_empty() && !ctrl_d {
                self.editor.clear();
                self.completions = None;
                return Effect::None;
            }
            if ctrl_d && !self.editor.is_empty() {
                self.editor.delete_forward();
                return Effect::None;
            }
            // Ctrl+C during a run interrupts it, as Esc does (Claude Code, Codex); twice
            // on an idle editor quits.
            if !ctrl_d && self.running.is_some() {
                self.last_ctrl_c = None;
                self.set_status("Interrupting… (Ctrl+C twice on an idle editor quits)");
                return Effect::Interrupt;
            }
            let again = self.last_ctrl_c.is_some_and(|t| t.elapsed() < Duration::from_millis(1500));
            if again || ctrl_d {
                return Effect::Quit;
            }
            self.last_ctrl_c = Some(Instant::now());
            self.set_status("Press Ctrl+C again to quit");
            return Effect::None;
        }
        if self.completions.is_some() {
            if is(Action::CursorUp) || is(Action::CursorDown) {
                if let Some((_, list)) = &mut self.completions {
                    if is(Action::CursorUp) { list.move_up() } else { list.move_down() }
                }
                return Effect::None;
            }
            let before = self.editor.text_before_cursor();
            let is_file =
                before.rsplit(char::is_whitespace).next().is_some_and(|t| t.starts_with('@'));
            if is(Action::Submit) && before.starts_with('/') && !before.contains('\n') && !is_file {
                // `/tre` + Enter runs `/tree`, and `/model son` + Enter the model picked,
                // as if typed in full.
                self.accept_completion();
                return self.submit(false);
            }
            if is(Action::Autocomplete) || is(Action::Submit) {
                self.accept_completion();
                return Effect::None;
            }
        }
        if is(Action::Submit) {
            return self.submit(false);
        }
        if self.running.is_some() && (is(Action::FollowUp) || alt_enter(key)) {
            return self.submit(true);
        }
        if is(Action::ToggleThinking) {
            self.show_thinking = !self.show_thinking;
            self.set_status(if self.show_thinking { "Thinking shown" } else { "Thinking hidden" });
            return Effect::None;
        }
        if is(Action::ExpandTools) && !self.hints_expanded && self.last_tool.is_none() {
            // Nothing to expand yet: the header's hints, as the full list of keys.
            self.hints_expanded = true;
            self.commit.extend(super::hotkeys(&self.bindings).iter().map(|l| self.theme.dim(l)));
            return Effect::None;
        }
        if is(Action::ExpandTools) {
            self.expand_tools = !self.expand_tools;
            if let (true, Some(tool)) = (self.expand_tools, &self.last_tool) {
                let lines = tool.render(self.width, &self.theme, true);
                self.commit.extend(lines);
            }
            self.set_status(if self.expand_tools {
                "Tool output expanded"
            } else {
                "Tool output collapsed"
            });
            return Effect::None;
        }
        if is(Action::ModelSelector) {
            return Effect::PickModel;
        }
        if is(Action::ClearScreen) {
            return Effect::ClearScreen;
        }
        if is(Action::Suspend) {
            return Effect::Suspend;
        }
        if is(Action::CycleModel) {
            return Effect::CycleModel;
        }
        if is(Action::CycleModelBackward) {
            return Effect::CycleModelBackward;
        }
        if is(Action::ExternalEditor) {
            return Effect::ExternalEditor;
        }
        if is(Action::PasteImage) {
            return Effect::PasteImage;
        }
        if is(Action::CyclePermissionMode) {
            let mode = self.launch.gate.mode();
            mode.set(mode.get().next(self.launch.has_yolo));
            self.footer.mode = mode.get().as_str().to_owned();
            self.set_status(format!("Permission mode: {}", mode.get().as_str()));
            return Effect::None;
        }
        if is(Action::Autocomplete) {
            self.refresh_completions();
            if self.completions.as_ref().is_some_and(|(c, _)| c.items.len() == 1) {
                self.accept_completion();
            }
            return Effect::None;
        }
        self.edit(key);
        self.refresh_completions_if_typing();
        Effect::None
    }

    fn refresh_completions_if_typing(&mut self) {
        let before = self.editor.text_before_cursor();
        let token = before.rsplit(char::is_whitespace).next().unwrap_or_default();
        let is_argument = before.starts_with('/') && !before.contains('\n');
        if token.starts_with('@') || is_command_name(before) || is_argument {
            self.refresh_completions();
        } else {
            self.completions = None;
        }
    }

    fn edit(&mut self, key: &KeyEvent) {
        super::line_edit::edit_key(&mut self.editor, &self.bindings, key);
    }

    /// Enter (or follow-up): queue while running, else decide what the line is.
    fn submit(&mut self, follow_up: bool) -> Effect {
        self.completions = None;
        if self.editor.is_empty() {
            return Effect::None;
        }
        let text = self.editor.submit();
        if self.running.is_some() || self.line_in_flight {
            self.queued.push((text.clone(), follow_up));
            return if follow_up { Effect::FollowUp(text) } else { Effect::Steer(text) };
        }
        Effect::Line(text)
    }

    /// A run is starting.
    pub fn run_started(&mut self) {
        self.running = Some(Running { started: Instant::now() });
        self.awaiting_prompt = true;
    }

    /// The lines of what is on screen for a run not finished (its streamed text, its
    /// tools as they stand, a `!command`'s output), taken out of the live region so
    /// quitting leaves them in the scrollback.
    pub fn take_in_flight(&mut self) -> Vec<String> {
        let (w, t) = (self.width, &self.theme);
        let mut lines = self.stream.finish(w, t, &self.highlighter, self.show_thinking);
        for tool in std::mem::take(&mut self.tools) {
            lines.extend(tool.render(w, t, self.expand_tools));
        }
        if let Some(b) = self.bang.take() {
            lines.push(String::new());
            lines.push(t.fg(rab_tui::Role::Bash, &format!("$ {}", b.command)));
            lines.extend(b.output.lines().map(|l| rab_tui::ansi::truncate(&t.dim(l), w, "…")));
        }
        lines
    }

    /// Commits the tool calls on screen that have no result (a resumed session whose
    /// last run was cut off before its results were written), marked so.
    pub fn drop_unfinished_tools(&mut self) {
        for mut v in std::mem::take(&mut self.tools) {
            let result = rab_ai::ToolResultMessage {
                tool_call_id: v.call.id.clone(),
                tool_name: v.call.name.clone(),
                content: vec![rab_ai::Content::Text {
                    text: "(no result was recorded: the run was cut off)".to_owned(),
                }],
                is_error: true,
            };
            v.result = Some((result, None, 0));
            self.commit.extend(v.render(self.width, &self.theme, self.expand_tools));
        }
    }

    /// Handles an agent event.
    pub fn agent_event(&mut self, event: AgentEvent) {
        let (w, t) = (self.width, &self.theme);
        match event {
            AgentEvent::MessageEnd { message: Message::User(u) } => {
                if !self.awaiting_prompt && !self.queued.is_empty() {
                    self.queued.remove(0);
                }
                self.awaiting_prompt = false;
                let mut lines = user_lines(&u, w, t);
                rab_tui::marks::mark_prompt(&mut lines, self.run_status.take());
                self.commit.extend(lines);
            }
            AgentEvent::TextDelta { delta } => {
                let lines =
                    self.stream.push_text(&delta, w, t, &self.highlighter, self.show_thinking);
                self.commit.extend(lines);
            }
            AgentEvent::ThinkingDelta { delta } => self.stream.push_thinking(&delta),
            AgentEvent::MessageEnd { message: Message::Assistant(a) } => {
                let text = a.text();
                if !text.trim().is_empty() {
                    self.last_answer = text;
                }
                let lines = self.stream.finish(w, t, &self.highlighter, self.show_thinking);
                self.commit.extend(lines);
                self.commit.extend(super::search_view::source_lines(&a, w, t));
            }
            // A search the provider ran: what streamed before it goes first.
            AgentEvent::WebSearch { search } => {
                let lines = self.stream.finish(w, t, &self.highlighter, self.show_thinking);
                self.commit.extend(lines);
                self.commit.extend(super::search_view::search_lines(&search, w, t));
            }
            // Tool results show with their call; system updates are rab's own
            // bookkeeping (tools that arrived, a new date) and stay out of the chat.
            AgentEvent::MessageEnd { message: Message::ToolResult(_) | Message::System(_) } => {}
            // The footer follows each response; the run's end makes it exact again
            // (sub-agents' spending included).
            AgentEvent::Usage { usage } => {
                let f = &mut self.footer;
                f.input += usage.total_input();
                f.output += usage.output;
                f.cache_read += usage.cache_read;
                f.context = usage.total_input() + usage.output;
                let model = self.launch.registry.models().iter().find(|m| m.id == f.model);
                if let Some(m) = model {
                    f.cost += m.cost.of(&usage);
                }
            }
            AgentEvent::ToolCall { call } => {
                let tool = self.tool_named(&call.name);
                let mut view = ToolView::new(call, tool);
                view.relative_to(&self.launch.cwd);
                self.tools.push(view);
            }
            AgentEvent::ToolUpdate { call_id, chunk } => {
                if let Some(v) = self.tools.iter_mut().find(|v| v.call.id == call_id) {
                    v.output.push_str(&chunk);
                }
            }
            AgentEvent::ToolResult { result, details, duration_ms } => {
                if let Some(v) = self.tools.iter_mut().find(|v| v.call.id == result.tool_call_id) {
                    v.result = Some((result, details, duration_ms));
                }
                while self.tools.first().is_some_and(|v| v.result.is_some()) {
                    let mut v = self.tools.remove(0);
                    v.show_images = true;
                    self.commit.extend(v.render(w, t, self.expand_tools));
                    self.last_tool = Some(v);
                }
            }
            AgentEvent::Retry { attempt, delay, message, discarded } => {
                if discarded {
                    // Lines already in the scrollback stay; they are marked, and the answer
                    // starts again below them.
                    let lines = self.stream.finish(w, t, &self.highlighter, self.show_thinking);
                    self.commit.extend(lines);
                    self.info("↻ The answer above broke off and is discarded; it starts again.");
                }
                self.set_status(format!(
                    "{message}; retrying in {:.0}s (attempt {attempt})",
                    delay.as_secs_f64()
                ));
            }
            AgentEvent::Waiting { seconds, first } => {
                let what = if first { "no response" } else { "no data" };
                self.set_status(format!("Waiting for the model: {what} for {seconds} s…"));
            }
            AgentEvent::Fallback { from, to, message, .. } => {
                let lines = self.stream.finish(w, t, &self.highlighter, self.show_thinking);
                self.commit.extend(lines);
                self.info(&format!(
                    "⤳ {from} failed: {message}\nContinuing on {to} for this prompt; the next \
                     prompt goes to {from} again."
                ));
                if let Some((_, id)) = to.split_once('/') {
                    self.footer.model = id.to_owned();
                }
            }
            AgentEvent::Error { message } => self.error(&message),
            // A hook's stderr: a project's hook may print escapes.
            AgentEvent::Notice { message } => {
                self.info(&format!("⚠ {}", crate::term::safe(&message)))
            }
            AgentEvent::CompactionStart { tokens, .. } => {
                self.info(&format!(
                    "Compacting the conversation (~{tokens} tokens) to fit the context window…"
                ));
            }
            AgentEvent::CompactionEnd { tokens_before, tokens_after, is_fallback, .. } => {
                let how = if is_fallback { "dropped older messages" } else { "summarised" };
                self.info(&format!(
                    "Compacted ({how}): ~{tokens_before} → ~{tokens_after} tokens. \
                     The full history stays in the session (/tree, /export)."
                ));
            }
            AgentEvent::CompactionFailed { message, .. } => {
                self.error(&format!("Compaction failed: {message}"))
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::AgentEnd { .. } => {}
        }
    }

    /// A permission question about `call_id` waits for the user: its line says so
    /// instead of counting the wait as the tool's time.
    pub fn asking(&mut self, call_id: &str) {
        if let Some(v) = self.tools.iter_mut().find(|v| v.call.id == call_id) {
            v.waiting = true;
        }
    }

    /// A permission question about `call_id` was answered: the call's timer starts
    /// now, so the time shown is the tool's, not the wait for the user.
    pub fn answered(&mut self, call_id: &str) {
        if let Some(v) = self.tools.iter_mut().find(|v| v.call.id == call_id) {
            v.started = Instant::now();
            v.waiting = false;
        }
    }

    /// The run ended.
    pub fn run_ended(&mut self, stop: &StopCause) {
        let lines =
            self.stream.finish(self.width, &self.theme, &self.highlighter, self.show_thinking);
        self.commit.extend(lines);
        for mut v in std::mem::take(&mut self.tools) {
            v.show_images = true;
            self.commit.extend(v.render(self.width, &self.theme, self.expand_tools));
        }
        self.running = None;
        self.awaiting_prompt = false;
        // The output's end, for terminals that mark prompts (OSC 133).
        let status = u8::from(*stop != StopCause::Done);
        match self.commit.last_mut() {
            Some(last) => last.push_str(&rab_tui::marks::finished(status)),
            None => self.run_status = Some(status),
        }
        match stop {
            StopCause::Done => {}
            StopCause::MaxTurns { limit } => {
                self.error(&format!("stopped after {limit} turns (max turns)"))
            }
            StopCause::Budget { limit, spent } => self.error(&format!(
                "stopped: the next request would pass the ${limit:.4} budget (spent ${spent:.4})"
            )),
            StopCause::Error { .. } => {}
            StopCause::Aborted => self.info("Interrupted."),
            StopCause::Loop { message } => self.error(&format!("stopped: {message}")),
            StopCause::Length { max_tokens } => self.error(&format!(
                "the reply was cut off at the output limit ({max_tokens} tokens) twice; ask for \
                 a shorter answer or say \"go on\""
            )),
        }
    }

    /// Puts queued messages back into the editor (after an interrupt; the runtime
    /// drops them).
    pub fn restore_queued(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let mut texts: Vec<String> = self.queued.drain(..).map(|(t, _)| t).collect();
        let current = self.editor.text();
        if !current.is_empty() {
            texts.push(current);
        }
        self.editor.set_text(&texts.join("\n\n"));
    }

    /// Animation and expiring status.
    pub fn tick(&mut self) {
        self.frame = self.frame.wrapping_add(1);
        if self.status.as_ref().is_some_and(|(_, at)| at.elapsed() > Duration::from_secs(3)) {
            self.status = None;
        }
    }

    /// Whether something animates (spinner, running tools).
    pub fn is_busy(&self) -> bool {
        self.running.is_some() || self.bang.is_some() || self.status.is_some()
    }
}

/// Alt+Enter (a follow-up while the agent works, a newline otherwise).
fn alt_enter(key: &KeyEvent) -> bool {
    key.code == crossterm::event::KeyCode::Enter
        && key.modifiers.contains(crossterm::event::KeyModifiers::ALT)
}

/// The editor holds a slash command's name being typed (no arguments yet).
fn is_command_name(before_cursor: &str) -> bool {
    before_cursor.starts_with('/') && !before_cursor.contains(' ')
}

/// Every command for completion, from the extensions' registry.
fn command_infos(launch: &Launch) -> Vec<rab_tui::autocomplete::CommandInfo> {
    launch
        .extensions
        .commands()
        .iter()
        .map(|c| rab_tui::autocomplete::CommandInfo {
            name: c.name.clone(),
            description: c.description.clone(),
        })
        .collect()
}

/// A user message as the scrollback shows it: what was typed, then one line per
/// attached file (its content went to the model, not to the screen) and each image
/// (drawn where the terminal can).
pub fn user_lines(u: &rab_ai::UserMessage, width: usize, theme: &rab_tui::Theme) -> Vec<String> {
    let mut typed = Vec::new();
    let mut after = Vec::new();
    for block in &u.content {
        match block {
            rab_ai::Content::Text { text } => {
                let attached = ["<file path=\"", "<directory path=\""]
                    .iter()
                    .find_map(|p| text.strip_prefix(p))
                    .and_then(|rest| rest.split('"').next());
                match attached {
                    Some(path) => after.push(theme.dim(&format!("  📎 {path}"))),
                    None if text.starts_with("<image path=") => {}
                    None => typed.push(text.as_str()),
                }
            }
            rab_ai::Content::Image { mime_type, data } => {
                after.extend(super::images::lines(mime_type, data, width, theme));
            }
        }
    }
    let mut out = chrome::user_message(&typed.join("\n"), width, theme);
    out.extend(after);
    out
}
