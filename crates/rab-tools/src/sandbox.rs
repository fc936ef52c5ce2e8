//! The sandbox (`--sandbox read-only|workspace-write|off`): which paths the file tools
//! may touch, and how programs the tools start are confined.
//!
//! File tools check every path after resolving `..` and symlinks against the workspace
//! roots (the project directory and `--add-dir` directories), then open it beneath the
//! root's handle ([`crate::beneath`]). Spawned programs (bash, hooks, MCP servers) are
//! started through rab's own executable as a helper (`rab __sandbox …`, see [`spec`]):
//! on Linux, where user namespaces are allowed, in namespaces of their own with a view
//! of the file system built for them ([`namespaces`]); else under Landlock alone. Either
//! way reading is allowed, writing only under the roots, the temp directory and the
//! named tool caches, and TCP only when network is allowed; protected paths
//! ([`protected`]) stay read-only. A helper is used because building a ruleset or a
//! namespace allocates, which is not safe between `fork` and `exec` in a threaded
//! process. The keys rab uses and the addresses of servers outside the sandbox are
//! removed from every spawned program's environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::normalize;

mod caches;
#[cfg(target_os = "linux")]
mod git_config;
#[cfg(target_os = "linux")]
mod guard;
pub mod hardening;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
pub mod namespaces;
#[cfg(target_os = "linux")]
mod netlink;
#[cfg(target_os = "linux")]
mod owner;
#[cfg(unix)]
pub mod private_dir;
pub mod protected;
#[cfg(target_os = "linux")]
mod restorer;
#[cfg(target_os = "linux")]
mod serve;
#[cfg(unix)]
mod sockets;
pub mod spec;
#[cfg(target_os = "linux")]
mod standby;
mod support;

pub use caches::tool_caches;
#[cfg(unix)]
pub use private_dir::PrivateDir;
pub use support::{LandlockSupport, NamespaceSupport, probe_namespaces, probe_namespaces_cached};

/// A private folder stands in for nothing off Unix.
#[cfg(not(unix))]
#[derive(Debug, PartialEq, Eq)]
pub struct PrivateDir;

/// Variables that lead a program to a server outside the sandbox (a terminal
/// multiplexer, an agent holding keys, the desktop bus, a container engine, an
/// editor): removed from every confined program's environment.
pub const SERVER_ENV: [&str; 22] = [
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "PODMAN_HOST",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "EMACS_SOCKET_NAME",
    "PULSE_SERVER",
];

/// The argument that turns rab's executable into the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox";

/// How strict the sandbox is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// No path checks and no confinement (permissions still apply).
    #[default]
    Off,
    /// Nothing may be written except temp files.
    ReadOnly,
    /// Writes only inside the workspace roots and temp directories.
    WorkspaceWrite,
}

impl SandboxMode {
    /// Parses `off`, `read-only` or `workspace-write`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "read-only" => Some(Self::ReadOnly),
            "workspace-write" => Some(Self::WorkspaceWrite),
            _ => None,
        }
    }

    /// The name as written in settings and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }
}

/// Whether a path is to be read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reading (read, ls, grep, glob).
    Read,
    /// Creating or changing (write, edit).
    Write,
}

/// The sandbox a workspace's tools run in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sandbox {
    mode: SandboxMode,
    /// Canonical workspace roots.
    roots: Vec<PathBuf>,
    /// Canonical temp directories.
    temp_dirs: Vec<PathBuf>,
    /// Canonical tool caches (`~/.cargo`, `~/.npm`, …): writable by confined programs
    /// under workspace-write, readable by the file tools.
    caches: Vec<PathBuf>,
    is_network_allowed: bool,
    /// rab's executable, when Landlock confinement is available.
    helper: Option<PathBuf>,
    /// Environment variables removed from spawned programs.
    scrubbed_env: Vec<String>,
    /// Confined programs run in namespaces of their own (sandbox v2).
    has_namespaces: bool,
    /// Paths confined programs cannot see (rab's home, read deny rules); canonical.
    hidden: Vec<PathBuf>,
    /// The home folder (its start-up files are protected; `~/.local` gets a private layer).
    home: Option<PathBuf>,
    /// The private `/tmp`, logs and layers of this rab.
    private: Option<Arc<PrivateDir>>,
    /// Commands the user typed (`!cmd`): protected paths are theirs to change.
    is_users: bool,
    /// Sockets of the user's servers under home, found when the first command starts.
    home_sockets: Arc<std::sync::OnceLock<Vec<PathBuf>>>,
    /// Helpers made ready for the next command.
    #[cfg(target_os = "linux")]
    standbys: Arc<standby::Standbys>,
}

impl Sandbox {
    /// A sandbox with `mode` over `roots`, letting programs also write `temp_dirs`.
    /// Paths are canonicalised now; a root that does not exist is kept as given.
    pub fn new(mode: SandboxMode, roots: &[PathBuf], temp_dirs: &[PathBuf]) -> Self {
        let canon = |p: &PathBuf| real_path(&normalize(p));
        Self {
            mode,
            roots: roots.iter().map(canon).collect(),
            temp_dirs: temp_dirs.iter().map(canon).collect(),
            ..Self::default()
        }
    }

    /// Lets confined programs write these tool caches (and the file tools read them);
    /// those that do not exist are left out.
    pub fn with_caches(mut self, caches: &[PathBuf]) -> Self {
        self.caches = caches.iter().filter(|c| c.exists()).map(|c| real_path(c)).collect();
        self
    }

    /// The tool caches confined programs may write.
    pub fn caches(&self) -> &[PathBuf] {
        &self.caches
    }

    /// The workspace roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether spawned programs run confined by Landlock.
    pub fn is_confined(&self) -> bool {
        self.helper.is_some() && self.mode != SandboxMode::Off
    }

    /// Whether confined programs may use the network.
    pub fn is_network_allowed(&self) -> bool {
        self.is_network_allowed
    }

    /// Lets spawned programs use the network.
    pub fn with_network(mut self, is_allowed: bool) -> Self {
        self.is_network_allowed = is_allowed;
        self
    }

    /// Confines spawned programs with Landlock through `exe` (rab itself); `None` when
    /// Landlock is not available, which leaves only the path and permission checks.
    pub fn with_helper(mut self, exe: Option<PathBuf>) -> Self {
        self.helper = exe;
        self
    }

    /// Environment variables to remove from every spawned program; when the sandbox is
    /// on, [`SERVER_ENV`] too.
    pub fn with_scrubbed_env(mut self, mut names: Vec<String>) -> Self {
        if self.mode != SandboxMode::Off {
            names.extend(SERVER_ENV.iter().map(|n| (*n).to_owned()));
        }
        self.scrubbed_env = names;
        self
    }

    /// Runs confined programs in namespaces of their own (where the kernel allows it:
    /// see [`NamespaceSupport`]).
    pub fn with_namespaces(mut self, is_on: bool) -> Self {
        self.has_namespaces = is_on;
        self
    }

    /// Whether confined programs run in namespaces of their own.
    pub fn has_namespaces(&self) -> bool {
        self.has_namespaces && self.is_confined()
    }

    /// Hides `paths` from confined programs (those that exist; canonicalised now).
    pub fn with_hidden(mut self, paths: &[PathBuf]) -> Self {
        self.hidden = paths.iter().filter(|p| p.exists()).map(|p| real_path(p)).collect();
        self.hidden.sort();
        self.hidden.dedup();
        self
    }

    /// The paths hidden from confined programs.
    pub fn hidden(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// The home folder, for its protected start-up files and the `~/.local` layer.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home.map(|h| real_path(&h));
        self
    }

    /// Uses `dir` for the private `/tmp`, the bash logs and layers.
    pub fn with_private_dir(mut self, dir: Option<Arc<PrivateDir>>) -> Self {
        self.private = dir;
        self
    }

    /// The same sandbox for commands the user types (`!cmd`): still confined, but the
    /// protected paths are writable to them (the user's own action, not the model's).
    pub fn for_user_commands(&self) -> Self {
        Self { is_users: true, ..self.clone() }
    }

    /// The private folder, when there is one.
    pub fn private_dir(&self) -> Option<&Arc<PrivateDir>> {
        self.private.as_ref()
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// Environment variables removed from spawned programs.
    pub fn scrubbed_env(&self) -> &[String] {
        &self.scrubbed_env
    }

    /// Checks that `path` (absolute, lexically normalised) may be accessed, following
    /// symlinks; the error says why not and what to do.
    pub fn check(&self, path: &Path, access: Access) -> Result<(), String> {
        if self.mode == SandboxMode::Off {
            return Ok(());
        }
        self.check_real(path, &real_path(path), access)
    }

    /// [`Sandbox::check`] with the real path already resolved (`real_path(path)`), so a
    /// caller can open the very path that was checked.
    pub fn check_real(&self, path: &Path, real: &Path, access: Access) -> Result<(), String> {
        if self.mode == SandboxMode::Off {
            return Ok(());
        }
        let real = real.to_path_buf();
        let shown = if real == path {
            path.display().to_string()
        } else {
            format!("{} (which resolves to {})", path.display(), real.display())
        };
        if access == Access::Write && self.mode == SandboxMode::ReadOnly {
            return Err(format!(
                "{shown}: the sandbox is read-only; nothing may be written \
                 (run with --sandbox workspace-write to allow edits in the workspace)"
            ));
        }
        let inside = self.roots.iter().any(|r| real.starts_with(r))
            || (access == Access::Read && self.caches.iter().any(|c| real.starts_with(c)));
        // The bash tool's full-output files are the one thing outside the roots the
        // model is told to read.
        let is_bash_output = access == Access::Read
            && real.parent().is_some_and(|dir| {
                self.temp_dirs.iter().any(|t| t == dir) || self.logs_dir().is_some_and(|l| l == dir)
            })
            && real.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rab-bash-"));
        if inside || is_bash_output {
            return Ok(());
        }
        let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        Err(format!(
            "{shown} is outside the workspace; the sandbox ({}) only allows paths under {} \
             (add a directory with --add-dir DIR)",
            self.mode.as_str(),
            roots.join(", ")
        ))
    }

    /// Where the bash tool's full-output files go when there is a private folder.
    pub fn logs_dir(&self) -> Option<PathBuf> {
        #[cfg(unix)]
        return self.private.as_ref().map(|p| p.logs());
        #[cfg(not(unix))]
        return None;
    }

    /// The entry of the real `/tmp` (or temp folder) that `path` lies in, when it does:
    /// `/tmp/x` for `/tmp/x/y/z`.
    fn in_temp(&self, path: &Path) -> Option<PathBuf> {
        let tmp = Path::new("/tmp");
        std::iter::once(tmp).chain(self.temp_dirs.iter().map(PathBuf::as_path)).find_map(|t| {
            let first = path.strip_prefix(t).ok()?.components().next()?;
            Some(t.join(first))
        })
    }

    /// The program and arguments to spawn for `program args…`: through the helper when
    /// the sandbox is on and confinement is available, else as given.
    pub fn wrap(&self, program: &str, args: &[&str]) -> (OsString, Vec<OsString>) {
        let Some((exe, spec)) = self.spec_for(program, args) else {
            return (OsString::from(program), args.iter().map(OsString::from).collect());
        };
        let mut out: Vec<OsString> = vec![HELPER_ARG.into()];
        out.extend(spec.to_args());
        (exe.into_os_string(), out)
    }

    /// The helper and what it is to build for `program args…`; `None` when the
    /// program runs as given.
    fn spec_for(&self, program: &str, args: &[&str]) -> Option<(PathBuf, spec::Spec)> {
        let exe = self.helper.as_ref().filter(|_| self.mode != SandboxMode::Off)?;
        let mut spec = spec::Spec {
            network: self.is_network_allowed,
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            ..spec::Spec::default()
        };
        match self.mode {
            SandboxMode::Off => return None,
            SandboxMode::ReadOnly => {}
            SandboxMode::WorkspaceWrite => {
                spec.writable.extend(self.roots.iter().chain(&self.caches).cloned());
            }
        }
        if self.has_namespaces {
            self.plan_view(&mut spec);
            spec.owner = Some(std::process::id());
        } else {
            spec.writable.extend(self.temp_dirs.iter().cloned());
        }
        Some((exe.clone(), spec))
    }

    /// Waits a moment for the helper being made ready for the next command, when there
    /// is one (see [`standby`]).
    #[cfg(target_os = "linux")]
    pub(crate) async fn settle_ready(&self) {
        if self.has_namespaces() {
            self.standbys.settle().await;
        }
    }

    /// Starts `program args…` in `cwd` through a helper made ready for it beforehand
    /// ([`standby`]), with `stdout` and `stderr` as its streams and no input; `None`
    /// when there is none that fits (or commands do not run in namespaces): then start
    /// it the usual way, through [`Sandbox::wrap`].
    #[cfg(target_os = "linux")]
    pub(crate) fn start_ready(
        &self,
        program: &str,
        args: &[&str],
        cwd: &Path,
        stdout: std::os::fd::BorrowedFd<'_>,
        stderr: std::os::fd::BorrowedFd<'_>,
    ) -> Option<Box<dyn process_wrap::tokio::ChildWrapper>> {
        let start = self.standby_start(program, args)?;
        standby::start(&self.standbys, start, cwd, &self.scrubbed_env, stdout, stderr)
    }

    /// Makes a helper ready, in the background, for a next command like `program
    /// args…` in `cwd` (see [`standby`]).
    #[cfg(target_os = "linux")]
    pub(crate) fn prepare_ready(&self, program: &str, args: &[&str], cwd: &Path) {
        if let Some(start) = self.standby_start(program, args) {
            standby::prepare_next(&self.standbys, start, cwd, &self.scrubbed_env);
        }
    }

    /// What a helper made ready for `program args…` is built from; `None` when commands
    /// do not run in namespaces (or helpers could not be made ready here).
    #[cfg(target_os = "linux")]
    fn standby_start<'a>(
        &self,
        program: &'a str,
        args: &'a [&'a str],
    ) -> Option<standby::Start<'a>> {
        let (exe, mut spec) = self.spec_for(program, args)?;
        if !spec.namespaces || self.standbys.has_given_up() {
            return None;
        }
        spec.standby = true;
        spec.program = OsString::new();
        spec.args.clear();
        let mut helper_args: Vec<OsString> = vec![HELPER_ARG.into()];
        helper_args.extend(spec.to_args());
        Some(standby::Start { exe, args: helper_args, spec, program, program_args: args })
    }

    /// The namespace view's part of `spec`: the private `/tmp`, protected and hidden
    /// paths, the `~/.local` layer.
    fn plan_view(&self, spec: &mut spec::Spec) {
        spec.namespaces = true;
        spec.hidden = self.hidden.clone();
        #[cfg(unix)]
        if let Some(home) = &self.home {
            let skip: Vec<PathBuf> = self.roots.iter().chain(&self.hidden).cloned().collect();
            spec.hidden.extend(
                self.home_sockets.get_or_init(|| sockets::find(home, &skip)).iter().cloned(),
            );
        }
        // The private `/tmp` replaces the real one: a home folder in it stays readable,
        // and so does a program rab is told to start from it (an MCP server's command
        // or script), with the folder it came in.
        if let Some(home) = self.home.as_ref().filter(|h| self.in_temp(h).is_some()) {
            spec.visible.push(home.clone());
        }
        let words = std::iter::once(&spec.program).chain(&spec.args);
        let mut started_from: Vec<PathBuf> = words
            .filter(|w| Path::new(w).is_absolute())
            .filter_map(|w| self.in_temp(&real_path(Path::new(w))))
            .filter(|entry| entry.exists() && !spec.visible.contains(entry))
            .collect();
        started_from.sort();
        started_from.dedup();
        #[cfg(unix)]
        for dir in &started_from {
            let skip: Vec<PathBuf> = self.roots.iter().chain(&self.hidden).cloned().collect();
            spec.hidden.extend(sockets::find(dir, &skip));
        }
        spec.visible.extend(started_from);
        #[cfg(unix)]
        if let Some(private) = &self.private {
            spec.tmp = Some(private.tmp());
            match self.home.as_ref().map(|h| h.join(".local")) {
                Some(local) if local.is_dir() => spec.overlay = Some((local, private.local())),
                // No `~/.local` to put a layer on (home is read-only): `pip install
                // --user` goes to the private /tmp.
                Some(_) => spec.env.push(("PYTHONUSERBASE".into(), "/tmp/.local".into())),
                None => {}
            }
        }
        if self.mode != SandboxMode::WorkspaceWrite || self.is_users {
            return;
        }
        for root in &self.roots {
            let plan = protected::plan(root, self.home.as_deref());
            spec.read_only.extend(plan.read_only);
            spec.pinned.extend(plan.pinned);
            spec.guarded.extend(plan.guarded);
            spec.writable.extend(plan.writable);
            spec.fresh_git.extend(plan.fresh_git);
        }
    }
}

/// `path` with symlinks resolved: the longest existing prefix is canonicalised and the
/// rest appended (a file about to be created does not exist yet).
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(mut real) = std::fs::canonicalize(existing) {
            real.extend(rest.iter().rev());
            return normalize(&real);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(target_os = "linux")]
mod landlock_helper;

#[cfg(target_os = "linux")]
pub use landlock_helper::{is_landlock_available, landlock_support};
#[cfg(target_os = "linux")]
pub use namespaces::{INIT_ARG, run_init};

/// How the helper ended: its exit code, and notes for the command's output (protected
/// paths put back).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HelperExit {
    /// The exit code to pass on.
    pub code: u8,
    /// Lines to print on stderr.
    pub notes: Vec<String>,
}

/// The helper: `args` are what follows `__sandbox` ([`spec::Spec`]). With namespaces it
/// runs the program in them and returns its exit; otherwise it confines itself with
/// Landlock and `exec`s the program (returning only on failure). `warn` hears a
/// fallback from namespaces to Landlock alone before the program runs.
#[cfg(target_os = "linux")]
pub fn run_helper(args: Vec<OsString>, warn: impl FnOnce(&str)) -> Result<HelperExit, String> {
    let spec = spec::Spec::parse(args.clone())?;
    if spec.namespaces {
        match namespaces::outer(&spec, &args) {
            Ok((code, notes)) => return Ok(HelperExit { code, notes }),
            // A helper made ready has no command to run some other way.
            Err(e) if spec.standby => return Err(e.to_string()),
            Err(namespaces::NsError::Refused(e)) => warn(&format!(
                "rab sandbox: user namespaces are refused here ({e}); this command runs \
                 under Landlock alone (see rab doctor)"
            )),
            Err(e) => return Err(e.to_string()),
        }
    }
    let mut spec = spec;
    if let Some(tmp) = spec.tmp.take() {
        spec.writable.push(tmp);
    }
    landlock_helper::exec_confined(&spec).map(|never| match never {})
}

/// Without Linux the helper only runs the program.
#[cfg(not(target_os = "linux"))]
pub fn run_helper(args: Vec<OsString>, warn: impl FnOnce(&str)) -> Result<HelperExit, String> {
    let _ = (args, warn);
    Err("the sandbox helper needs Linux".into())
}

/// Stage two exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn run_init(args: Vec<OsString>) -> Result<u8, String> {
    let _ = args;
    Err("the sandbox helper needs Linux".into())
}

/// The argument of stage two (unused off Linux).
#[cfg(not(target_os = "linux"))]
pub const INIT_ARG: &str = "__sandbox-init";

/// Landlock exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn landlock_support() -> LandlockSupport {
    LandlockSupport::default()
}

/// Landlock exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn is_landlock_available() -> bool {
    false
}

#[cfg(test)]
mod tests;
