//! Which shell the command tool runs: `sh -c` on Unix (the `bash` tool), PowerShell on
//! Windows (the `powershell` tool), and PowerShell 7 (`pwsh`) wherever it is installed
//! (the `powershell` tool beside `bash`). Everything else about running a command — timeout,
//! killing the whole tree, output cut to its tail — is the same code (`bash.rs`); only
//! the invocation here and the spawning and killing in `bash.rs`'s platform functions
//! differ.

/// A shell the command tool can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// `sh -c COMMAND`.
    Sh,
    /// `powershell -NoLogo -NoProfile -NonInteractive -Command COMMAND`, with UTF-8
    /// output (Windows PowerShell writes the console code page to a pipe otherwise).
    PowerShell,
    /// `pwsh -NoLogo -NoProfile -NonInteractive -Command COMMAND`: PowerShell 7, the
    /// cross-platform one.
    Pwsh,
}

/// Put before a PowerShell command so what it prints reaches rab as UTF-8.
const UTF8_OUTPUT: &str = "[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; ";

impl Shell {
    /// This platform's: PowerShell on Windows, `sh` elsewhere.
    pub fn native() -> Self {
        if cfg!(windows) { Shell::PowerShell } else { Shell::Sh }
    }

    /// The program and its arguments that run `command`.
    pub fn invocation(self, command: &str) -> (&'static str, Vec<String>) {
        match self {
            Shell::Sh => ("sh", vec!["-c".to_owned(), command.to_owned()]),
            Shell::PowerShell | Shell::Pwsh => (
                if self == Shell::Pwsh { "pwsh" } else { "powershell" },
                ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain([format!("{UTF8_OUTPUT}{command}")])
                    .collect(),
            ),
        }
    }

    /// The program's name, for errors (`could not start sh in …`).
    pub fn program(self) -> &'static str {
        self.invocation("").0
    }

    /// The tool's description for the model.
    pub fn description(self) -> &'static str {
        match self {
            Shell::Sh => {
                "Run a shell command (sh -c) in the project root, stdin closed. Returns stdout \
                 and stderr combined, cut to the last 2000 lines/50KB (full output in a file). \
                 A non-zero exit is an error."
            }
            Shell::PowerShell => {
                "Run a PowerShell command (powershell -NonInteractive -Command) in the project \
                 root, stdin closed. Returns the output streams combined, cut to the last 2000 \
                 lines/50KB (full output saved to a file). A non-zero exit is an error."
            }
            Shell::Pwsh => {
                "Run a PowerShell 7 command (pwsh -NonInteractive -Command) in the project \
                 root, stdin closed; use it for PowerShell scripts and cmdlets, bash for \
                 everything else. Returns the output streams combined, cut to the last 2000 \
                 lines/50KB (full output saved to a file). A non-zero exit is an error."
            }
        }
    }
}

/// Where `program` is found on `PATH` (an executable file), if anywhere.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &std::path::Path) -> bool {
    p.with_extension("exe").is_file() || p.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_gets_its_invocation() {
        assert_eq!(
            Shell::Sh.invocation("echo a; echo b"),
            ("sh", vec!["-c".to_owned(), "echo a; echo b".to_owned()])
        );
        let (program, args) = Shell::PowerShell.invocation("Get-ChildItem | Select -First 1");
        assert_eq!(program, "powershell");
        assert_eq!(args[..4], ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]);
        assert_eq!(args.len(), 5, "the command is one argument, never split: {args:?}");
        assert!(args[4].starts_with("[Console]::OutputEncoding"), "{}", args[4]);
        assert!(args[4].ends_with("; Get-ChildItem | Select -First 1"), "{}", args[4]);
        assert_eq!(Shell::native(), if cfg!(windows) { Shell::PowerShell } else { Shell::Sh });
        assert!(Shell::PowerShell.description().contains("PowerShell"));
        let (program, pwsh_args) = Shell::Pwsh.invocation("Get-ChildItem | Select -First 1");
        assert_eq!(program, "pwsh");
        assert_eq!(pwsh_args, args, "the same arguments as Windows PowerShell");
        assert!(Shell::Pwsh.description().contains("pwsh"));
    }
}
