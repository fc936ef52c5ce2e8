//! What rab tells the terminal beyond the screen: the window title (the session and
//! whether rab is working), a progress indicator while it works (OSC 9;4), and a
//! notification when a turn ends or a question waits while the terminal is not focused
//! (OSC 9, OSC 777, or the bell).
//!
//! Each is sent only where the terminal is known to understand it, by what its
//! environment says: an escape a terminal does not know can show up as text or, for
//! OSC 9 in a terminal that reads it as a notification, as a stray one. Focus comes from
//! focus reports (`CSI ?1004h`); a terminal that sends none is taken as focused, so it
//! gets no notifications.

use rab_config::Env;

/// How the terminal takes a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notify {
    /// `OSC 9 ; text BEL` (iTerm2, kitty, WezTerm, Ghostty, Windows Terminal, ConEmu).
    Osc9,
    /// `OSC 777 ; notify ; title ; body BEL` (foot, rxvt-unicode, Ghostty, WezTerm).
    Osc777,
    /// The bell: most terminals mark the tab or bounce the dock icon.
    Bell,
}

/// The terminal's abilities, and what rab last told it.
#[derive(Clone, Debug)]
pub struct Outside {
    /// The session's name for the title (the folder until it has one).
    name: String,
    /// Whether OSC 9;4 progress is understood.
    progress: bool,
    notify: Notify,
    /// `None` until the terminal reports focus.
    focused: Option<bool>,
    /// The last title sent, to send it only when it changes.
    title: String,
}

impl Outside {
    /// What the terminal of `env` understands; `name` titles the window.
    pub fn detect(env: &Env, name: &str) -> Outside {
        let program = env.get("TERM_PROGRAM").unwrap_or_default().to_ascii_lowercase();
        let term = env.get("TERM").unwrap_or_default();
        let windows_terminal = env.get("WT_SESSION").is_some();
        let conemu = env.get("ConEmuPID").is_some();
        let kitty = term == "xterm-kitty" || env.get("KITTY_WINDOW_ID").is_some();
        let progress = windows_terminal
            || conemu
            || matches!(program.as_str(), "ghostty" | "wezterm")
            || env.get("RAB_TERMINAL_PROGRESS") == Some("1");
        let notify = if matches!(program.as_str(), "iterm.app" | "ghostty" | "wezterm")
            || kitty
            || windows_terminal
            || conemu
        {
            Notify::Osc9
        } else if term.starts_with("foot") || term.starts_with("rxvt-unicode") {
            Notify::Osc777
        } else {
            Notify::Bell
        };
        Outside { name: clean(name), progress, notify, focused: None, title: String::new() }
    }

    /// The terminal reported a focus change.
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = Some(focused);
    }

    /// Renames the session in the title.
    pub fn set_name(&mut self, name: &str) {
        self.name = clean(name);
    }

    /// The escapes for rab starting (`true`) or stopping work: the title, and progress
    /// where it is understood. Empty when nothing changes.
    pub fn working(&mut self, working: bool) -> String {
        let mark = if working { "⋯ " } else { "" };
        let title = format!("{mark}rab · {}", self.name);
        let mut out = String::new();
        if title != self.title {
            out.push_str(&format!("\x1b]0;{title}\x07"));
            self.title = title;
        }
        if self.progress {
            // 3: indeterminate; 0: clear.
            out.push_str(if working { "\x1b]9;4;3;\x07" } else { "\x1b]9;4;0;\x07" });
        }
        out
    }

    /// Clears the progress indicator (leaving rab); the title is given back by the
    /// terminal guard.
    pub fn leave(&self) -> &'static str {
        if self.progress { "\x1b]9;4;0;\x07" } else { "" }
    }

    /// The escape that notifies the user of `text`, when the terminal says it is not
    /// focused; empty otherwise.
    pub fn notify(&self, text: &str) -> String {
        if self.focused != Some(false) {
            return String::new();
        }
        let text = clean(text);
        match self.notify {
            Notify::Osc9 => format!("\x1b]9;{text}\x07"),
            Notify::Osc777 => format!("\x1b]777;notify;rab;{text}\x07"),
            Notify::Bell => "\x07".to_owned(),
        }
    }
}

/// Text safe inside an OSC string: no control characters (an ESC or BEL would end the
/// sequence and let the rest act as escapes), `;` kept out of OSC 777's fields, at most
/// 120 characters.
fn clean(text: &str) -> String {
    let one_line: String =
        text.chars().map(|c| if c.is_control() || c == ';' { ' ' } else { c }).collect();
    let words: Vec<&str> = one_line.split_whitespace().collect();
    let mut out = words.join(" ");
    if out.chars().count() > 120 {
        out = out.chars().take(119).collect::<String>() + "…";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::from_pairs(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
    }

    #[test]
    fn progress_and_notifications_only_where_the_terminal_says_it_can() {
        let plain = Outside::detect(&env(&[("TERM", "xterm-256color")]), "proj");
        assert!(!plain.progress);
        assert_eq!(plain.notify, Notify::Bell);
        let ghostty = Outside::detect(&env(&[("TERM_PROGRAM", "ghostty")]), "proj");
        assert!(ghostty.progress);
        assert_eq!(ghostty.notify, Notify::Osc9);
        let iterm = Outside::detect(&env(&[("TERM_PROGRAM", "iTerm.app")]), "proj");
        assert!(!iterm.progress, "iTerm2 reads OSC 9;4 as a notification");
        assert_eq!(Outside::detect(&env(&[("TERM", "foot")]), "p").notify, Notify::Osc777);
    }

    #[test]
    fn the_title_follows_the_work_and_is_sent_once_per_change() {
        let mut o = Outside::detect(&env(&[("WT_SESSION", "1")]), "my project");
        assert_eq!(o.working(true), "\x1b]0;⋯ rab · my project\x07\x1b]9;4;3;\x07");
        assert_eq!(o.working(true), "\x1b]9;4;3;\x07");
        assert_eq!(o.working(false), "\x1b]0;rab · my project\x07\x1b]9;4;0;\x07");
    }

    #[test]
    fn notifications_wait_for_an_unfocused_terminal() {
        let mut o = Outside::detect(&env(&[("TERM_PROGRAM", "WezTerm")]), "p");
        assert_eq!(o.notify("done"), "", "focus unknown: taken as focused");
        o.set_focused(false);
        assert_eq!(o.notify("done"), "\x1b]9;done\x07");
        o.set_focused(true);
        assert_eq!(o.notify("done"), "");
    }

    #[test]
    fn hostile_text_cannot_end_the_sequence() {
        let mut o = Outside::detect(&env(&[("TERM", "foot")]), "x\x07\x1b]0;pwned\x1b\\");
        o.set_focused(false);
        let title = o.working(false);
        assert_eq!(title.matches('\x07').count(), 1, "{title:?}");
        assert_eq!(title.matches('\x1b').count(), 1, "{title:?}");
        let n = o.notify("a;b\x07\x1b[2J");
        assert_eq!(n, "\x1b]777;notify;rab;a b [2J\x07");
    }
}
