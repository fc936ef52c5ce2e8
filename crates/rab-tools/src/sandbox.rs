//! The sandbox (`--sandbox read-only|workspace-write|off`): which paths the file tools
//! may touch, and how programs the tools start are confined.
//!
//! File tools check every path after resolving `..` and symlinks against the workspace
//! roots (the project directory and `--add-dir` directories). Spawned programs (bash,
//! hooks, MCP servers) are started through rab's own executable as a re-exec helper
//! (`rab __sandbox …`), which applies a Landlock ruleset to itself and then `exec`s the
//! program: reading is allowed everywhere, writing only under the roots and the temp
//! directories, and TCP only when network is allowed. A helper is used because building
//! a ruleset allocates, which is not safe between `fork` and `exec` in a threaded
//! process. The keys rab uses are removed from every spawned program's environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::normalize;

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
    /// directories that do not exist are left out.
    pub fn with_caches(mut self, caches: &[PathBuf]) -> Self {
        self.caches = caches.iter().filter(|c| c.is_dir()).map(|c| real_path(c)).collect();
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

    /// Environment variables to remove from every spawned program.
    pub fn with_scrubbed_env(mut self, names: Vec<String>) -> Self {
        self.scrubbed_env = names;
        self
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
        let real = real_path(path);
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
            && real.parent().is_some_and(|dir| self.temp_dirs.iter().any(|t| t == dir))
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

    /// The program and arguments to spawn for `program args…`: through the Landlock
    /// helper when the sandbox is on and confinement is available, else as given.
    pub fn wrap(&self, program: &str, args: &[&str]) -> (OsString, Vec<OsString>) {
        let direct = || (OsString::from(program), args.iter().map(OsString::from).collect());
        let Some(exe) = self.helper.as_ref().filter(|_| self.mode != SandboxMode::Off) else {
            return direct();
        };
        let mut out: Vec<OsString> = vec![HELPER_ARG.into()];
        let writable: Vec<&PathBuf> = match self.mode {
            SandboxMode::Off => return direct(),
            SandboxMode::ReadOnly => self.temp_dirs.iter().collect(),
            SandboxMode::WorkspaceWrite => {
                self.roots.iter().chain(&self.temp_dirs).chain(&self.caches).collect()
            }
        };
        for dir in writable {
            out.push("--write".into());
            out.push(dir.into());
        }
        if self.is_network_allowed {
            out.push("--net".into());
        }
        out.push("--".into());
        out.push(program.into());
        out.extend(args.iter().map(OsString::from));
        (exe.clone().into_os_string(), out)
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
pub use landlock_helper::{is_landlock_available, landlock_support, run_helper};

/// What the kernel's Landlock enforces of what the sandbox asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LandlockSupport {
    /// File reads and writes (ABI 1): without it nothing is confined.
    pub files: bool,
    /// Truncating files (ABI 3): without it a confined program may still truncate a
    /// file it can open for reading only through `truncate(2)`.
    pub truncate: bool,
    /// TCP bind and connect (ABI 4): without it `sandbox.network: false` is not enforced.
    pub network: bool,
    /// ioctl on devices (ABI 5).
    pub ioctl: bool,
}

/// The tool caches under `home` that builds write (the documented list in
/// docs/sandbox.md), plus the cache directories the environment names
/// (`CARGO_HOME`, `RUSTUP_HOME`, `GOPATH`, `GOMODCACHE`, `XDG_CACHE_HOME`,
/// `npm_config_cache`); whether they exist is checked later.
pub fn tool_caches(home: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    const UNDER_HOME: [&str; 16] = [
        ".cache",
        ".cargo",
        ".rustup",
        ".npm",
        ".pnpm-store",
        ".yarn",
        ".bun",
        ".deno",
        "go",
        ".gradle",
        ".m2",
        ".nuget",
        ".ivy2",
        ".sbt",
        ".cabal",
        ".stack",
    ];
    let mut out: Vec<PathBuf> =
        home.map(|h| UNDER_HOME.iter().map(|d| h.join(d)).collect()).unwrap_or_default();
    for var in
        ["CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOMODCACHE", "XDG_CACHE_HOME", "npm_config_cache"]
    {
        if let Some(dir) = env(var).filter(|d| Path::new(d).is_absolute()) {
            out.push(PathBuf::from(dir));
        }
    }
    out
}

impl LandlockSupport {
    /// What the sandbox asks for and this kernel does not enforce (`network`: whether
    /// network is to be blocked), in words.
    pub fn missing(&self, block_network: bool) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.files {
            return vec!["all file confinement (Landlock is off or missing)"];
        }
        if !self.truncate {
            out.push("truncate (Linux 6.2+)");
        }
        if block_network && !self.network {
            out.push("network blocking (Linux 6.7+)");
        }
        if !self.ioctl {
            out.push("device ioctl (Linux 6.10+)");
        }
        out
    }
}

/// Landlock exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn landlock_support() -> LandlockSupport {
    LandlockSupport::default()
}

/// Without Landlock the helper only runs the program.
#[cfg(not(target_os = "linux"))]
pub fn run_helper(args: Vec<OsString>) -> Result<std::convert::Infallible, String> {
    let _ = args;
    Err("the sandbox helper needs Linux Landlock".into())
}

/// Landlock exists only on Linux.
#[cfg(not(target_os = "linux"))]
pub fn is_landlock_available() -> bool {
    false
}

#[cfg(test)]
mod tests;
