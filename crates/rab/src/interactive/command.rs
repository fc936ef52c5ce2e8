//! Typed lines go to the runtime, which classifies and carries them out; what a command
//! asks a person for comes back as a view, shown here as an overlay.

use rab_core::runtime::{Op, View};
use rab_tui::terminal::Terminal;

use super::overlay::Overlay;
use super::{Ui, hotkeys};

impl Ui {
    pub(super) fn line(&mut self, line: &str) {
        // In the UI, /help also lists the keys (as bound now).
        if matches!(line.trim(), "/help" | ",help") {
            let mut lines: Vec<String> = rab_core::commands::help(&self.app.launch.extensions)
                .lines()
                .map(str::to_owned)
                .collect();
            lines.push(String::new());
            lines.push("Keys:".to_owned());
            lines.extend(hotkeys(&self.app.bindings));
            self.app.overlay = Some(Overlay::Text { title: "Help".into(), lines, top: 0 });
            return;
        }
        if matches!(line.trim(), "/copy" | ",copy") {
            self.copy_answer();
            return;
        }
        let images = self.take_images(line);
        let id = if images.is_empty() {
            self.submit(Op::Line { text: line.to_owned() })
        } else {
            self.submit(Op::LineWithImages { text: line.to_owned(), images })
        };
        self.line = Some(id);
        self.app.line_in_flight = true;
        // A typed jump in the session (`/tree N`, `/rewind N`) redraws the conversation.
        let word = line.split_whitespace().next().unwrap_or_default();
        if matches!(word, "/tree" | "/rewind") && line.trim().len() > word.len() {
            self.jump = Some(id);
        }
    }

    /// `/copy`: the last answer to the clipboard with OSC 52, which terminals (and tmux
    /// with `set-clipboard on`) pass to the system clipboard, over SSH too.
    fn copy_answer(&mut self) {
        use base64::Engine as _;
        let text = self.app.last_answer.clone();
        if text.is_empty() {
            self.app.error("No answer to copy yet.");
            return;
        }
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        self.tell_terminal(&format!("\x1b]52;c;{encoded}\x07"));
        self.app.info(&format!(
            "Copied the last answer ({} characters) to the clipboard (OSC 52; a terminal that \
             does not allow it ignores it)",
            text.chars().count()
        ));
    }

    /// Shows what a command asked for.
    pub(super) fn show(&mut self, view: View) {
        match view {
            View::Clear => {
                let _ = self.screen.clear_live();
                let term = self.screen.terminal_mut();
                let _ = term.write(b"\x1b[2J\x1b[H");
                let _ = term.flush();
                self.screen.invalidate();
            }
            View::Hotkeys => {
                let lines = hotkeys(&self.app.bindings);
                self.app.overlay =
                    Some(Overlay::Text { title: "Keyboard shortcuts".into(), lines, top: 0 });
            }
            View::Memory { mut files, open: Some(i) } if i < files.len() => {
                self.external_edit = Some(super::external::Target::File(files.swap_remove(i)));
            }
            View::Memory { files, .. } => self.app.overlay = Some(Overlay::memory(files)),
            View::Models => self.open_models(),
            // The UI has its own settings editor.
            View::Settings(_) => self.open_settings(),
            View::Sessions(list) => self.app.overlay = Some(Overlay::sessions(list)),
            View::Tree(items) => self.app.overlay = Some(Overlay::tree(items)),
            View::Login { provider } => {
                self.app.overlay = Some(Overlay::Secret { provider, typed: String::new() })
            }
        }
    }
}
