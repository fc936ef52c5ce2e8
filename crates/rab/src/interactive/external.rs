//! Ctrl+G: the prompt in `$VISUAL` or `$EDITOR`. The editor's text goes to a private
//! temporary file, the terminal is handed over (raw mode and rab's modes off), and what
//! the editor saved comes back into the prompt.

use std::io::Write;
use std::path::PathBuf;

use rab_tui::terminal::{Terminal, TerminalModes};

use super::Ui;

impl Ui {
    /// Runs the external editor on the prompt (the caller stopped reading input).
    pub(super) fn edit_externally(&mut self) {
        let Some(command) = editor_command(&self.app.launch.env) else {
            self.app.error("No external editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)");
            return;
        };
        let path = match write_private(&self.app.editor.text()) {
            Ok(p) => p,
            Err(e) => {
                self.app.error(&format!("cannot write the prompt to a temporary file: {e}"));
                return;
            }
        };
        let _ = self.screen.clear_live();
        let guard = self.screen.terminal_mut();
        if let Err(e) = guard.restore() {
            tracing::warn!("cannot hand the terminal over: {e}");
        }
        let status = std::process::Command::new(&command[0])
            .args(&command[1..])
            .arg(&path)
            .current_dir(&self.app.launch.cwd)
            .status();
        let guard = self.screen.terminal_mut();
        if let Err(e) = guard.resume(TerminalModes::default()) {
            tracing::warn!("cannot take the terminal back: {e}");
        }
        let _ = guard.write(b"\x1b[2J\x1b[H");
        let _ = guard.flush();
        self.screen.invalidate();
        let text = std::fs::read_to_string(&path);
        let _ = std::fs::remove_file(&path);
        match (status, text) {
            (Err(e), _) => {
                self.app.error(&format!("cannot run {}: {e}; the prompt is unchanged", command[0]))
            }
            (Ok(s), _) if !s.success() => {
                self.app.error(&format!("{} exited with {s}; the prompt is unchanged", command[0]));
            }
            (Ok(_), Err(e)) => self.app.error(&format!("cannot read the edited prompt back: {e}")),
            (Ok(_), Ok(text)) => {
                // A trailing newline is the editor's, not the user's.
                self.app.editor.set_text(text.strip_suffix('\n').unwrap_or(&text));
            }
        }
    }
}

/// `$VISUAL`, else `$EDITOR`, split into words (`code --wait`).
fn editor_command(env: &rab_config::Env) -> Option<Vec<String>> {
    let value = env.get("VISUAL").filter(|v| !v.trim().is_empty()).or(env.get("EDITOR"))?;
    let words: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
    (!words.is_empty()).then_some(words)
}

/// The prompt in a new file only this user can read (it may hold secrets).
fn write_private(text: &str) -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = std::env::temp_dir().join(format!("rab-prompt-{}-{nanos}.md", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path)?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visual_wins_and_words_are_split() {
        let env = rab_config::Env::from_pairs([("VISUAL", "code --wait"), ("EDITOR", "vim")]);
        assert_eq!(editor_command(&env), Some(vec!["code".into(), "--wait".into()]));
        let env = rab_config::Env::from_pairs([("VISUAL", " "), ("EDITOR", "vim")]);
        assert_eq!(editor_command(&env), Some(vec!["vim".into()]));
        assert_eq!(editor_command(&rab_config::Env::default()), None);
    }

    #[test]
    fn the_temporary_file_is_private() {
        let path = write_private("secret prompt").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret prompt");
        std::fs::remove_file(path).unwrap();
    }
}
