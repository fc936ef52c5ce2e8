//! One chat: its session on a runtime of its own, fed the chat's messages and button
//! presses as ops, its events rendered back as Telegram messages — the answer streamed
//! by editing one message (at most one edit a second), tool calls as one line each in a
//! message updated in place, questions as buttons.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rab_agent::AgentEvent;
use rab_core::runtime::{Event, Op, RuntimeHandle, View};
use rab_core::setup::Setup;
use serde_json::json;
use tokio::time::Instant;

use super::api::{ApiError, Bot, Upload};
use super::questions::Questions;
use super::render::{self, LIMIT, escape};
use super::store::Store;

/// The least time between two edits of a chat's messages (the Bot API's advice).
const EDIT_GAP: Duration = Duration::from_secs(1);

/// Shell output longer than this goes as a file.
const LONG_OUTPUT: usize = 3000;

/// What reaches a chat from the poller.
pub enum Input {
    /// A message (text, photo, document) from an allowed user: its update, and the
    /// prompt made of it (text, with a document's text) and images.
    Message { update_id: i64, text: String, images: Vec<rab_ai::Content> },
    /// A button pressed under one of the bot's messages.
    Press { message_id: i64, data: String },
    /// A message that was taken but cut off by a restart before it was answered.
    CutOff,
}

/// The answer being streamed.
#[derive(Default)]
struct Stream {
    /// The Markdown of this part of the answer (since the last tool calls).
    text: String,
    /// Where the message being edited starts in `text`.
    mark: render::Mark,
    /// The message being edited, and what it shows.
    message: Option<(i64, String)>,
    /// Code blocks sent as files, by where they start in `text`.
    files_sent: Vec<usize>,
}

/// The tool calls since the answer's last text, one line each.
#[derive(Default)]
struct ToolLines {
    message: Option<(i64, String)>,
    lines: Vec<(String, String)>,
}

/// A chat's side of its runtime.
pub struct Chat {
    pub id: i64,
    bot: Arc<Bot>,
    store: Arc<Store>,
    setup: Arc<Setup>,
    handle: RuntimeHandle,
    stream: Stream,
    tools: ToolLines,
    questions: Questions,
    /// Submissions that came from updates (finished in the store when they end).
    updates: HashMap<u64, i64>,
    /// Steering messages, resent as lines when the run had ended.
    steers: HashMap<u64, String>,
    running: bool,
    dirty: bool,
    last_edit: Option<Instant>,
}

impl Chat {
    /// A chat over a started runtime.
    pub fn new(
        id: i64,
        bot: Arc<Bot>,
        store: Arc<Store>,
        setup: Arc<Setup>,
        handle: RuntimeHandle,
        question_timeout: Duration,
    ) -> Self {
        Self {
            id,
            bot,
            store,
            setup,
            handle,
            stream: Stream::default(),
            tools: ToolLines::default(),
            questions: Questions::new(question_timeout),
            updates: HashMap::new(),
            steers: HashMap::new(),
            running: false,
            dirty: false,
            last_edit: None,
        }
    }

    /// Runs the chat until its inputs end (shutdown), then ends its runtime: a run going
    /// on is aborted and its tape left whole.
    pub async fn run(mut self, mut inputs: tokio::sync::mpsc::UnboundedReceiver<Input>) {
        loop {
            let flush_at = self.dirty.then(|| self.next_edit());
            let question_at = self.questions.next_deadline();
            tokio::select! {
                input = inputs.recv() => match input {
                    Some(input) => self.input(input).await,
                    None => break,
                },
                event = self.handle.events.recv() => match event {
                    Some(event) => self.event(event).await,
                    None => break,
                },
                () = sleep_until(flush_at) => self.flush(false).await,
                () = sleep_until(question_at) => {
                    for (id, op) in self.questions.expire(&self.bot, self.id).await {
                        self.handle.submit(op);
                        tracing::info!(chat = self.id, question = id, "question timed out: denied");
                    }
                }
            }
        }
        self.flush(true).await;
        if self.running {
            self.say("⏹ rab is shutting down: this turn ends here (it is recorded up to now).")
                .await;
        }
        let Chat { handle, updates, store, id, .. } = self;
        // The run going on is aborted and its tape closed with a result for every call
        // (the runtime ends when its events do); its message is answered as far as it
        // goes, so a restart does not report it cut off.
        let mut events = handle.shutdown();
        while events.recv().await.is_some() {}
        for update in updates.into_values() {
            if let Err(e) = store.finish(update) {
                tracing::error!(chat = id, "{e}");
            }
        }
    }

    fn next_edit(&self) -> Instant {
        self.last_edit.map_or_else(Instant::now, |t| t + EDIT_GAP)
    }

    async fn input(&mut self, input: Input) {
        match input {
            Input::Message { update_id, text, images } => {
                self.message(update_id, text, images).await
            }
            Input::Press { message_id, data } => {
                if let Some((id, approval)) =
                    self.questions.press(&self.bot, self.id, message_id, &data).await
                {
                    self.handle.submit(Op::Answer { id, approval });
                }
            }
            Input::CutOff => {
                self.say(
                    "⚠️ rab restarted while it was answering your last message. The session \
                          goes on from what was recorded; send the message again to repeat it.",
                )
                .await;
            }
        }
    }

    async fn message(&mut self, update_id: i64, text: String, images: Vec<rab_ai::Content>) {
        let text = strip_bot_name(text.trim());
        if let Some(id) = self.questions.awaiting_text() {
            self.questions.answered_by_text(&self.bot, self.id, id, &text).await;
            self.handle.submit(Op::Answer { id, approval: rab_core::Approval::Answer(text) });
            self.done_update(update_id);
            return;
        }
        if let Some(why) = export_refusal(&text, &self.setup.cwd, self.setup.paths.home()) {
            self.say(&escape(&why)).await;
            self.done_update(update_id);
            return;
        }
        let op = match text.as_str() {
            "/start" => {
                let cwd = self.setup.cwd.display().to_string();
                self.say(&format!("rab is here, working in <code>{}</code>. Send a task; /stop interrupts, /new starts over, /help lists the commands.", escape(&cwd))).await;
                self.done_update(update_id);
                return;
            }
            "/stop" => {
                self.handle.submit(Op::Abort);
                self.done_update(update_id);
                return;
            }
            _ if rab_core::input::shell_line(&text).is_some_and(|s| !s.gated) => {
                self.say("Shell lines starting with ! are not run from a chat; write ,command instead: it asks first, like the model's commands.").await;
                self.done_update(update_id);
                return;
            }
            _ if !images.is_empty() => Op::Prompt { text, images },
            _ if self.running && !text.starts_with(['/', ',']) => {
                let id = self.handle.submit(Op::Steer { text: text.clone(), images: Vec::new() });
                self.steers.insert(id, text);
                self.done_update(update_id);
                return;
            }
            _ => Op::Line { text },
        };
        if let Err(e) = self.store.start(update_id) {
            tracing::error!(chat = self.id, "{e}");
        }
        let _ =
            self.bot.call("sendChatAction", json!({"chat_id": self.id, "action": "typing"})).await;
        let submission = self.handle.submit(op);
        self.updates.insert(submission, update_id);
    }

    fn done_update(&self, update_id: i64) {
        if let Err(e) = self.store.finish(update_id) {
            tracing::error!(chat = self.id, "{e}");
        }
    }

    fn finish(&mut self, submission: u64) {
        if let Some(update) = self.updates.remove(&submission) {
            self.done_update(update);
        }
    }

    async fn event(&mut self, event: Event) {
        match event {
            Event::Agent(e) => self.agent(e).await,
            Event::ApprovalRequested { id, request } => {
                self.flush(true).await;
                self.questions.ask(&self.bot, self.id, id, &request).await;
            }
            Event::QuestionClosed { id } => self.questions.close(&self.bot, self.id, id).await,
            Event::RunStarted { .. } => self.running = true,
            Event::RunEnded { submission, stop } => {
                self.running = false;
                self.flush(true).await;
                self.close_tools().await;
                self.stream = Stream::default();
                match stop {
                    rab_agent::StopCause::Error { message } => {
                        self.say(&format!("⚠️ {}", escape(&message))).await;
                    }
                    rab_agent::StopCause::MaxTurns { limit } => {
                        self.say(&format!("⏹ Stopped after {limit} model requests (maxTurns)."))
                            .await;
                    }
                    rab_agent::StopCause::Budget { limit, spent } => {
                        self.say(&format!("⏹ Stopped: the next request would pass the budget (${spent:.2} of ${limit:.2}).")).await;
                    }
                    rab_agent::StopCause::Aborted => self.say("⏹ Stopped.").await,
                    rab_agent::StopCause::Loop { message } => {
                        self.say(&format!("⏹ Stopped: {}.", escape(&message))).await;
                    }
                    rab_agent::StopCause::Length { max_tokens } => {
                        self.say(&format!("⏹ The reply was cut off at the output limit ({max_tokens} tokens) twice.")).await;
                    }
                    rab_agent::StopCause::Done => {}
                }
                self.finish(submission);
                self.remember_session();
            }
            Event::Done { submission, result } => {
                if let Err(e) = result {
                    match self.steers.remove(&submission) {
                        // The run ended before the message reached it: it starts one.
                        Some(text) => {
                            let id = self.handle.submit(Op::Line { text });
                            let _ = id;
                        }
                        None => self.say(&format!("⚠️ {}", escape(&e))).await,
                    }
                } else {
                    self.steers.remove(&submission);
                }
                if !self.running {
                    self.finish(submission);
                }
            }
            Event::Info { text, submission } => {
                self.send_text(&format!("<pre>{}</pre>", escape(text.trim_end()))).await;
                if !self.running {
                    self.finish(submission);
                }
            }
            Event::Warning(w) => self.say(&format!("⚠️ {}", escape(&w))).await,
            Event::Attached { files, .. } => {
                self.say(&format!("📎 {}", escape(&files.join(", ")))).await;
            }
            Event::Show { view, .. } => self.show(view).await,
            Event::ShellEnded { command, output, is_error, .. } => {
                self.shell_output(&command, &output, is_error).await;
            }
            Event::SessionReplaced { .. } => {
                self.stream = Stream::default();
                self.remember_session();
                self.say("🆕 A new session starts here.").await;
            }
            Event::SetupChanged(setup) => self.setup = setup,
            Event::StateChanged(state) => {
                if let Some(path) = state.session_file {
                    let _ = self.store.set_session(self.id, std::path::Path::new(&path));
                }
            }
            Event::CronFired { prompt, .. } => self.say(&format!("⏰ {}", escape(&prompt))).await,
            Event::ServiceStatus(s) => match &s.state {
                rab_core::ServiceState::Failed(why) | rab_core::ServiceState::Crashed(why) => {
                    let first = why.lines().next().unwrap_or_default();
                    self.say(&format!(
                        "⚠️ {} {} {}: {}",
                        s.kind.label(),
                        escape(&s.name),
                        s.state.label(),
                        escape(first)
                    ))
                    .await;
                }
                _ => {}
            },
            Event::State { .. }
            | Event::Messages { .. }
            | Event::ShellOutput { .. }
            | Event::ShellStarted { .. }
            | Event::OpStarted { .. }
            | Event::Data { .. }
            | Event::Quit { .. } => {}
        }
    }

    /// Keeps the session file of the chat for after a restart.
    fn remember_session(&self) {
        self.handle.submit(Op::GetState);
    }

    async fn agent(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta { delta } => {
                if !self.tools.lines.is_empty() {
                    self.close_tools().await;
                }
                self.stream.text.push_str(&delta);
                self.dirty = true;
            }
            AgentEvent::ToolCall { call } => {
                self.flush(true).await;
                self.stream = Stream::default();
                let tool = self.setup.tools.iter().find(|t| t.name() == call.name).cloned();
                let name =
                    tool.as_ref().and_then(|t| t.label()).unwrap_or_else(|| call.name.clone());
                let summary = tool.and_then(|t| t.summary(&call.arguments)).unwrap_or_default();
                let line = format!("<b>{}</b> {}", escape(&name), escape(&truncate(&summary, 120)));
                self.tools.lines.push((call.id.clone(), format!("⏳ {line}")));
                self.dirty = true;
            }
            AgentEvent::ToolResult { result, .. } => {
                let mark = if result.is_error { "✗" } else { "✓" };
                if let Some((_, line)) =
                    self.tools.lines.iter_mut().find(|(id, _)| *id == result.tool_call_id)
                {
                    *line = format!("{mark}{}", line.trim_start_matches('⏳'));
                }
                self.dirty = true;
            }
            AgentEvent::Retry { attempt, message, discarded, .. } => {
                tracing::info!(chat = self.id, attempt, "retrying the model: {message}");
                if discarded {
                    // The answer starts again: the message being edited will show it.
                    self.stream.text.clear();
                    self.stream.mark = render::Mark::default();
                    self.stream.files_sent.clear();
                    self.dirty = true;
                }
            }
            AgentEvent::Fallback { from, to, message, .. } => {
                tracing::info!(chat = self.id, %from, %to, "failing over: {message}");
                self.stream.text.clear();
                self.stream.mark = render::Mark::default();
                self.stream.files_sent.clear();
                self.dirty = true;
                self.say(&format!("⤳ {from} is out of capacity; continuing on {to}.")).await;
            }
            AgentEvent::CompactionEnd { .. } => self.say("🗜 The conversation was compacted.").await,
            // A hook's stderr, into an HTML message.
            AgentEvent::Notice { message } => {
                self.say(&format!("⚠ {}", render::escape(&message))).await
            }
            // A long wait for the model: "typing…" stays up.
            AgentEvent::Waiting { .. } => {
                let action = json!({"chat_id": self.id, "action": "typing"});
                let _ = self.bot.call("sendChatAction", action).await;
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::WebSearch { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::CompactionFailed { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::AgentEnd { .. } => {}
        }
    }

    /// Brings the chat's messages up to date: the tool lines, then the answer. `last`:
    /// the part is complete (its last code block may go as a file, and the edit waits
    /// for its turn rather than being skipped).
    async fn flush(&mut self, last: bool) {
        if !self.dirty && !last {
            return;
        }
        if last && self.dirty {
            tokio::time::sleep_until(self.next_edit()).await;
        }
        self.dirty = false;
        if !self.tools.lines.is_empty() {
            let html: Vec<&str> = self.tools.lines.iter().map(|(_, l)| l.as_str()).collect();
            let html = html.join("\n");
            let message = self.tools.message.take();
            self.tools.message = self.show_in(message, html).await;
        }
        self.flush_answer(last).await;
    }

    async fn flush_answer(&mut self, last: bool) {
        // Long code blocks go as files once complete (the last block may still grow).
        let from = self.stream.mark.start;
        let blocks = render::blocks(&self.stream.text[from..]);
        let count = blocks.len();
        for (i, block) in blocks.into_iter().enumerate() {
            let at = from + block.start;
            if let Some((name, code)) = &block.file
                && (last || i + 1 < count)
                && !self.stream.files_sent.contains(&at)
            {
                self.stream.files_sent.push(at);
                let upload = Upload { name, bytes: code.as_bytes() };
                if let Err(e) = self.bot.send_document(self.id, upload, None).await {
                    tracing::warn!(chat = self.id, "the file {name} was not sent: {e}");
                }
            }
        }
        let (full, current, mark) = render::pack(&self.stream.text, self.stream.mark, LIMIT);
        self.stream.mark = mark;
        // The first complete message is the one being edited; each after it is new.
        for html in full {
            let message = self.stream.message.take();
            let _ = self.show_in(message, html).await;
        }
        if !current.trim().is_empty() {
            let message = self.stream.message.take();
            self.stream.message = self.show_in(message, current).await;
        }
    }

    /// Shows `html` in `message` (edited when it shows something else) or in a new
    /// message; the message and what it shows now.
    async fn show_in(
        &mut self,
        message: Option<(i64, String)>,
        html: String,
    ) -> Option<(i64, String)> {
        match message {
            Some((id, shown)) if shown == html => Some((id, shown)),
            Some((id, _)) => {
                self.last_edit = Some(Instant::now());
                let params = json!({"chat_id": self.id, "message_id": id, "text": html, "parse_mode": "HTML"});
                match self.bot.call("editMessageText", params).await {
                    Ok(_) => {}
                    Err(ApiError::Refused { description, .. })
                        if description.contains("not modified") => {}
                    Err(e) => tracing::warn!(chat = self.id, "an edit failed: {e}"),
                }
                Some((id, html))
            }
            None => self.send_html(&html).await.map(|id| (id, html)),
        }
    }

    /// Sends `html` as a new message; its id. HTML Telegram refuses goes as plain text.
    async fn send_html(&mut self, html: &str) -> Option<i64> {
        self.last_edit = Some(Instant::now());
        let params = json!({"chat_id": self.id, "text": html, "parse_mode": "HTML",
                            "link_preview_options": {"is_disabled": true}});
        match self.bot.send("sendMessage", params).await {
            Ok(m) => m["message_id"].as_i64(),
            Err(ApiError::Refused { description, .. }) => {
                tracing::warn!(
                    chat = self.id,
                    "Telegram refused the HTML ({description}); sending it as plain text"
                );
                let plain = json!({"chat_id": self.id, "text": plain_text(html)});
                self.bot
                    .send("sendMessage", plain)
                    .await
                    .ok()
                    .and_then(|m| m["message_id"].as_i64())
            }
            Err(ApiError::Stopped) => None,
        }
    }

    /// Sends HTML of any length: cut into messages.
    async fn send_text(&mut self, html: &str) {
        for piece in render::split_block(html, LIMIT) {
            self.send_html(&piece).await;
        }
    }

    /// A short notice.
    async fn say(&mut self, html: &str) {
        self.send_text(html).await;
    }

    async fn close_tools(&mut self) {
        if !self.tools.lines.is_empty() {
            let html =
                self.tools.lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
            let message = self.tools.message.take();
            let _ = self.show_in(message, html).await;
        }
        self.tools = ToolLines::default();
    }

    async fn shell_output(&mut self, command: &str, output: &str, is_error: bool) {
        let mark = if is_error { "✗" } else { "✓" };
        let head = format!("{mark} <code>{}</code>", escape(&truncate(command, 200)));
        if output.chars().count() > LONG_OUTPUT {
            self.say(&format!("{head}\n(output sent as a file)")).await;
            let upload = Upload { name: "output.txt", bytes: output.as_bytes() };
            if let Err(e) = self.bot.send_document(self.id, upload, None).await {
                tracing::warn!(chat = self.id, "the output was not sent: {e}");
            }
        } else if output.trim().is_empty() {
            self.say(&head).await;
        } else {
            self.say(&format!("{head}\n<pre>{}</pre>", escape(output.trim_end()))).await;
        }
    }

    async fn show(&mut self, view: View) {
        let text = match view {
            View::Settings(text) => format!("<pre>{}</pre>", escape(&text)),
            View::Models => {
                "Name the model: /model NAME (rab --list-models lists them).".to_owned()
            }
            View::Login { provider } => format!(
                "Keys are not taken in a chat: set the {} key where rab runs.",
                escape(&provider)
            ),
            other => {
                let name = format!("{other:?}");
                let name = name.split(['(', ' ', '{']).next().unwrap_or_default().to_owned();
                format!("That view ({name}) needs rab's terminal UI.")
            }
        };
        self.say(&text).await;
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why `/export … FILE` from a chat is refused, if it is: a chat message must not
/// choose a file of the user's to replace (`/export md /home/me/.bashrc`), so from a
/// chat the file is inside the workspace (no `..` out of it, no link on the way that
/// leads out) and not a protected path. Without a FILE, /export writes beside the
/// session file, as everywhere.
fn export_refusal(text: &str, cwd: &Path, rab_home: &Path) -> Option<String> {
    let args = text.strip_prefix("/export")?;
    if !args.is_empty() && !args.starts_with(char::is_whitespace) {
        return None;
    }
    let is_format = |w: &str| {
        matches!(w.to_ascii_lowercase().as_str(), "html" | "htm" | "md" | "markdown" | "json")
    };
    let file = args.split_whitespace().find(|w| !is_format(w))?;
    let refuse = |why: &str| {
        Some(format!(
            "/export from a chat writes only inside the workspace ({}): {file} {why}. \
             Give a path inside it, or no FILE to write beside the session file.",
            cwd.display()
        ))
    };
    // The path as written: an absolute one below the workspace, no `..` (which the
    // kernel takes after a link, not before it).
    let given = Path::new(file);
    let relative = match given.strip_prefix(cwd) {
        Ok(inside) => inside,
        Err(_) if given.is_absolute() => return refuse("is outside it"),
        Err(_) => given,
    };
    let mut rel = PathBuf::new();
    for part in relative.components() {
        match part {
            Component::Normal(p) => rel.push(p),
            Component::CurDir => {}
            _ => return refuse("climbs out with .. or is not a plain path"),
        }
    }
    if rel.as_os_str().is_empty() {
        return refuse("is the workspace itself");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let full = cwd.join(&rel);
    if rab_tools::sandbox::protected::is_protected(
        &full,
        &[cwd.to_path_buf()],
        home.as_deref(),
        Some(rab_home),
    ) {
        return refuse("is a protected path (docs/permissions.md)");
    }
    // Then the folders as they are on disk: a link inside the workspace may lead out.
    let root = std::fs::canonicalize(cwd).ok()?;
    let mut existing = full.parent().map(Path::to_path_buf);
    while let Some(dir) = existing {
        if let Ok(real) = std::fs::canonicalize(&dir) {
            return (!real.starts_with(&root)).then(|| refuse("leads out of it through a link"))?;
        }
        existing = dir.parent().map(Path::to_path_buf);
    }
    None
}

/// `/cmd@this_bot args` as `/cmd args` (commands in groups name the bot).
fn strip_bot_name(text: &str) -> String {
    if let Some(rest) = text.strip_prefix('/')
        && let Some((cmd, after)) = rest.split_once('@')
    {
        let args = after.split_once(char::is_whitespace).map(|(_, a)| a).unwrap_or("");
        if !cmd.contains(char::is_whitespace) {
            return format!("/{cmd} {args}").trim_end().to_owned();
        }
    }
    text.to_owned()
}

fn truncate(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max || text.contains('\n') {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}

/// HTML as the text it shows (for a message Telegram would not parse).
pub fn plain_text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match (c, in_tag) {
            ('<', false) => in_tag = true,
            ('>', true) => in_tag = false,
            (c, false) => out.push(c),
            (_, true) => {}
        }
    }
    out.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_from_a_chat_stays_inside_the_workspace_and_off_protected_paths() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join("notes")).unwrap();
        std::fs::create_dir_all(d.path().join("out")).unwrap();
        std::os::unix::fs::symlink(d.path().join("out"), ws.join("link")).unwrap();
        let rab_home = d.path().join("rabhome");
        let check = |line: &str| export_refusal(line, &ws, &rab_home);
        for fine in [
            "/export",
            "/export md",
            "/export md notes/s.md",
            "/export session.html",
            "/export ./x.json json",
            "/exporter ../../x",
        ] {
            assert_eq!(check(fine), None, "{fine}");
        }
        let inside = format!("/export md {}", ws.join("notes/s.md").display());
        assert_eq!(check(&inside), None);
        for (bad, why) in [
            ("/export md /etc/passwd", "outside"),
            (&format!("/export md {}/.bashrc", d.path().display()), "outside"),
            ("/export md ../x.md", ".."),
            ("/export md notes/../../x.md", ".."),
            ("/export md link/x.md", "link"),
            ("/export md link/../x.md", ".."),
            ("/export md .git/hooks/pre-commit", "protected"),
            ("/export md AGENTS.md", "protected"),
            ("/export json .rab/settings.json", "protected"),
        ] {
            let refusal = check(bad).unwrap_or_else(|| panic!("{bad} let through"));
            assert!(refusal.contains(why), "{bad}: {refusal}");
        }
    }
}
