//! Commands typed in the UI: every `/name` and known `,name` goes through the
//! extensions' command registry; the outcome is acted on here.

use rab_core::CommandOutcome as Outcome;
use rab_tui::terminal::Terminal;

use super::overlay::Overlay;
use super::{BangMsg, Op, Ui, hotkeys};

impl Ui {
    pub(super) fn command(&mut self, line: &str) {
        let launch = self.app.launch.clone();
        if launch.extensions.parse(line).is_some_and(|(c, _)| c.name == "settings") {
            self.open_settings();
            return;
        }
        let Some(session) = self.session.as_mut() else {
            self.app
                .set_status("Wait for the agent to finish (or press Esc) before running commands");
            return;
        };
        if let Some(outcome) = launch.extensions.run(line, session, launch.as_ref()) {
            self.outcome(outcome);
        }
    }

    /// Acts on what a command asked for.
    pub(super) fn outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Info(text) => self.app.info(&text),
            Outcome::Error(text) => self.app.error(&text),
            Outcome::Quit => self.quit = true,
            Outcome::Clear => {
                let _ = self.screen.clear_live();
                let term = self.screen.terminal_mut();
                let _ = term.write(b"\x1b[2J\x1b[H");
                let _ = term.flush();
                self.screen.invalidate();
            }
            Outcome::Hotkeys => {
                let lines = hotkeys(&self.app.bindings);
                self.app.overlay =
                    Some(Overlay::Text { title: "Keyboard shortcuts".into(), lines });
            }
            Outcome::PickModel => self.open_models(),
            Outcome::NewSession => {
                let tape = self.app.launch.new_tape();
                self.replace_session(tape, "Started a new session.");
            }
            Outcome::Resume(Some(path)) => self.resume(std::path::PathBuf::from(path)),
            Outcome::Resume(None) => {
                let dir = rab_session::session_dir(
                    &self.app.launch.paths.sessions_dir(),
                    &self.app.launch.cwd,
                );
                self.app.overlay = Some(Overlay::sessions(rab_session::list_sessions(&dir)));
            }
            Outcome::Tree => {
                let items = self.session.as_ref().map(|s| s.tree()).unwrap_or_default();
                self.app.overlay = Some(Overlay::tree(items));
            }
            Outcome::Compact(focus) => self.start_op("Compacting…", Op::Compact(focus)),
            Outcome::Search(query) => {
                self.app.set_status(format!("Searching every session for {query}…"));
                let (root, home) =
                    (self.app.launch.paths.sessions_dir(), self.app.launch.paths.home().to_owned());
                let tx = self.bang_tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ =
                        tx.send(BangMsg::Note(rab_core::commands::search(&query, &root, &home)));
                });
            }
            Outcome::Handoff(focus) => {
                self.start_op("Summarising for the handoff…", Op::Handoff(focus))
            }
            Outcome::Branch(id, summary) => {
                let id = (!id.is_empty()).then_some(id);
                self.start_op("Branching…", Op::Branch(id, summary));
            }
            Outcome::Prompt(request) => {
                if self.session.is_none() {
                    self.app.set_status("Wait for the agent to finish before sending this");
                    return;
                }
                if let Some(m) = &request.model {
                    self.set_model(m);
                }
                if let Err(e) = self.app.launch.gate.grant(&request.allowed_tools) {
                    self.app.error(&format!("allowed-tools: {e}"));
                    return;
                }
                self.start_run(vec![rab_ai::Message::user(request.text)]);
                return;
            }
            Outcome::Reload => self.reload(),
            Outcome::Login(provider) => {
                match rab_core::commands::login::check_provider(&self.app.launch, &provider) {
                    Ok(()) => {
                        self.app.overlay = Some(Overlay::Secret { provider, typed: String::new() })
                    }
                    Err(e) => self.app.error(&e),
                }
            }
            Outcome::Later(work) => {
                self.app.set_status("Working on the command…");
                let tx = self.bang_tx.clone();
                tokio::spawn(async move {
                    let _ = tx.send(BangMsg::Later(work.await));
                });
            }
        }
        if let Some(s) = &self.session {
            self.app.update_footer(s);
        }
    }

    /// `/reload`: the launch made again from the files; the session goes on with the new
    /// tools, commands and system prompt.
    fn reload(&mut self) {
        let launch = match self.app.launch.reload() {
            Ok(l) => std::sync::Arc::new(l),
            Err(e) => {
                self.app.error(&format!("reload failed, nothing changed: {}", e.message));
                return;
            }
        };
        let Some(path) = self.session.as_ref().and_then(|s| s.tape().path().map(|p| p.to_owned()))
        else {
            self.app.error("/reload needs a saved session (not --no-session); restart rab instead");
            return;
        };
        self.app.launch.approver.hand_over(&launch.approver);
        for w in &launch.warnings {
            self.app.error(&format!("warning: {w}"));
        }
        self.app.set_launch(launch);
        match rab_session::Tape::open(&path) {
            Ok((tape, _)) => {
                let n = (self.app.launch.extensions.commands().len(), tape.messages().len());
                let note =
                    format!("Reloaded: {} commands; the session goes on ({} messages).", n.0, n.1);
                self.replace_session(tape, &note);
            }
            Err(e) => self.app.error(&e.to_string()),
        }
    }
}
