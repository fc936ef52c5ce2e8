//! Ctrl+G: the prompt in `$VISUAL` or `$EDITOR`, and `/memory`: an instruction file
//! there. The text goes to a private temporary file, the terminal is handed over (raw
//! mode and rab's modes off), and what the editor saved comes back into the prompt (or
//! is written to the instruction file).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use rab_tui::terminal::{Terminal, TerminalModes};

use super::Ui;

/// What the external editor opens.
pub(super) enum Target {
    /// The prompt being typed (Ctrl+G).
    Prompt,
    /// An instruction file (`/memory`).
    File(rab_core::memory::MemoryFile),
}

impl Ui {
    /// Runs the external editor on `target` (the caller stopped reading input).
    pub(super) fn edit_externally(&mut self, target: Target) {
        let Some(command) = editor_command(&self.app.launch.env) else {
            self.app.error("No external editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)");
            return;
        };
        match target {
            Target::Prompt => self.edit_prompt(&command),
            Target::File(file) => {
                match edit_instructions(&command, &file, |c, p| self.hand_over(c, p)) {
                    Ok(text) => self.app.info(&text),
                    Err(e) => self.app.error(&e),
                }
            }
        }
    }

    fn edit_prompt(&mut self, command: &[String]) {
        let path = match write_private(&self.app.editor.text()) {
            Ok(p) => p,
            Err(e) => {
                self.app.error(&format!("cannot write the prompt to a temporary file: {e}"));
                return;
            }
        };
        let status = self.hand_over(command, &path);
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

    /// Hands the terminal to `command path` until it exits.
    fn hand_over(&mut self, command: &[String], path: &Path) -> std::io::Result<ExitStatus> {
        self.handing_over(|ui| {
            std::process::Command::new(&command[0])
                .args(&command[1..])
                .arg(path)
                .current_dir(&ui.app.launch.cwd)
                .status()
        })
    }

    /// Gives the terminal back (raw mode and rab's modes off) while `during` runs (an
    /// editor, a stop by Ctrl+Z), then takes it back and redraws the screen.
    pub(super) fn handing_over<T>(&mut self, during: impl FnOnce(&mut Self) -> T) -> T {
        let _ = self.screen.clear_live();
        if let Err(e) = self.screen.terminal_mut().restore() {
            tracing::warn!("cannot hand the terminal over: {e}");
        }
        let out = during(self);
        let guard = self.screen.terminal_mut();
        if let Err(e) = guard.resume(TerminalModes::default()) {
            tracing::warn!("cannot take the terminal back: {e}");
        }
        let _ = guard.write(b"\x1b[2J\x1b[H");
        let _ = guard.flush();
        self.screen.invalidate();
        out
    }
}

/// `/memory`: `file` edited in the user's editor (`run` starts it on a path and waits).
/// The editor gets a private copy; what it saved is written back atomically through a
/// handle on the file's folder, so an instruction file that is a link out of its
/// folder is neither read nor written through. What happened, in a sentence.
pub(crate) fn edit_instructions(
    command: &[String],
    file: &rab_core::memory::MemoryFile,
    run: impl FnOnce(&[String], &Path) -> std::io::Result<ExitStatus>,
) -> Result<String, String> {
    let (Some(folder), Some(name)) = (file.path.parent(), file.path.file_name()) else {
        return Err(format!("{} is not a file path", file.path.display()));
    };
    let name = name.to_string_lossy();
    let before = rab_core::memory::read_in(folder, &name)?;
    let copy = write_private(&before).map_err(|e| format!("cannot make a copy to edit: {e}"))?;
    let status = run(command, &copy);
    let after = std::fs::read_to_string(&copy);
    let _ = std::fs::remove_file(&copy);
    let shown = file.path.display();
    match (status, after) {
        (Err(e), _) => Err(format!("cannot run {}: {e}; {shown} is unchanged", command[0])),
        (Ok(s), _) if !s.success() => {
            Err(format!("{} exited with {s}; {shown} is unchanged", command[0]))
        }
        (Ok(_), Err(e)) => {
            Err(format!("cannot read the edited copy back: {e}; {shown} is unchanged"))
        }
        (Ok(_), Ok(after)) if after == before => Ok(format!("{shown} is unchanged")),
        (Ok(_), Ok(after)) => {
            let path = rab_core::memory::write_in(folder, &name, &after)?;
            Ok(format!("Saved {}; /reload or the next session reads it", path.display()))
        }
    }
}

/// `$VISUAL`, else `$EDITOR`, split into words (`code --wait`).
pub(crate) fn editor_command(env: &rab_config::Env) -> Option<Vec<String>> {
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
