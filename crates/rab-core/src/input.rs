//! What a line the user typed is, decided once for every front end (terminal UI, REPL,
//! print mode): a command (`/name`, `,name` when `name` is one), a quick memory note
//! (`# note`), a shell line (`!cmd`, `!!cmd`, `,cmd`, `,,cmd`), or a prompt for the
//! model.

use crate::extension::Extensions;

/// A shell line: run with the bash tool (same limits and process handling as the
/// model's calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLine {
    /// The shell command.
    pub command: String,
    /// `!cmd`: the output goes to the model with the next message; `,,cmd`: the
    /// command and its output go to the model at once. (`!!cmd` and `,cmd`: not.)
    pub share: bool,
    /// Typed with a comma (CrabClaw's comma routing): it passes the permission gate,
    /// the sandbox and the secret firewall as the model's bash calls do.
    pub gated: bool,
}

/// What a typed line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// A command of one of the extensions (run it with [`Extensions::run`]).
    Command,
    /// A shell line.
    Shell(ShellLine),
    /// `# note`: quick memory ([`crate::memory`]).
    Memory(crate::memory::MemoryLine),
    /// A prompt for the model.
    Prompt,
}

/// Classifies a typed line: a known command first (`,help` is the command, not a shell
/// line), then a shell line, else a prompt.
pub fn classify(line: &str, extensions: &Extensions) -> LineKind {
    if extensions.is_command_line(line) {
        return LineKind::Command;
    }
    if let Some(m) = crate::memory::memory_line(line) {
        return LineKind::Memory(m);
    }
    match shell_line(line) {
        Some(shell) => LineKind::Shell(shell),
        None => LineKind::Prompt,
    }
}

/// `!cmd`, `!!cmd`, `,cmd` or `,,cmd`, whichever `line` is.
pub fn shell_line(line: &str) -> Option<ShellLine> {
    let line = line.trim_start();
    let (rest, share, gated) = if let Some(rest) = line.strip_prefix("!!") {
        (rest, false, false)
    } else if let Some(rest) = line.strip_prefix('!') {
        (rest, true, false)
    } else if let Some(rest) = line.strip_prefix(",,") {
        (rest, true, true)
    } else {
        (line.strip_prefix(',')?, false, true)
    };
    let command = rest.trim().to_owned();
    (!command.is_empty()).then_some(ShellLine { command, share, gated })
}

/// What the model is given for a shared shell line: the command and its output, a
/// failure wrapped with a request to correct it.
pub fn shell_context(command: &str, output: &str, is_error: bool) -> String {
    if is_error {
        return format!(
            "I ran `{command}` in the shell and it failed:\n```\n{}\n```\nFind out why and \
             correct it.",
            output.trim_end()
        );
    }
    format!("I ran `{command}` in the shell:\n```\n{}\n```", output.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_are_read_with_their_kind() {
        let s = |c: &str, share, gated| Some(ShellLine { command: c.into(), share, gated });
        assert_eq!(shell_line("!ls -la"), s("ls -la", true, false));
        assert_eq!(shell_line("!! git status"), s("git status", false, false));
        assert_eq!(shell_line("!"), None);
        assert_eq!(shell_line("hello!"), None);
        assert_eq!(shell_line(",ls -la"), s("ls -la", false, true));
        assert_eq!(shell_line(",, cargo test"), s("cargo test", true, true));
        assert_eq!(shell_line(","), None);
        assert_eq!(shell_line("a, b"), None);
    }

    #[test]
    fn commands_come_before_shell_lines() {
        let ext = Extensions::new(Vec::new());
        assert_eq!(classify("hello", &ext), LineKind::Prompt);
        assert!(matches!(classify(",ls", &ext), LineKind::Shell(_)));
    }
}
