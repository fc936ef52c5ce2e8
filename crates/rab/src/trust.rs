//! Trusted folders, at start-up: whether the working directory may run code and widen
//! access through what it brings (see rab-config's `trust.rs` for the store). A
//! cloned repository must not be able to run a hook, start an MCP server or allow
//! itself commands the moment rab starts in it, least of all in a CI job running
//! `rab -p` on a pull request. So until the folder is trusted those parts are inert:
//! the UI and the REPL ask once, listing them; headless runs name them on stderr and go
//! on without them (`--trust-project` or `RAB_TRUST_PROJECT=1` trusts for one run).

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use rab_config::{Env, Paths, TrustStore, canonical_dir};

use crate::cli::Cli;

/// The decision for this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trust {
    /// What the folder brings may run.
    pub trusted: bool,
    /// The answer was given before (a refusal is not asked again).
    pub remembered: bool,
}

fn is_truthy(v: Option<&str>) -> bool {
    v.is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
}

/// Trusted: `--trust-project`, `RAB_TRUST_PROJECT=1`, the home directory or rab's own
/// home, or a folder (or one above it) trusted before.
pub fn decide(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> Result<Trust, String> {
    if cli.trust_project || is_truthy(env.get("RAB_TRUST_PROJECT")) {
        return Ok(Trust { trusted: true, remembered: false });
    }
    let dir = canonical_dir(cwd);
    let home = env.get("HOME").map(|h| canonical_dir(Path::new(h)));
    if home.as_deref() == Some(dir.as_path()) || dir.starts_with(canonical_dir(paths.home())) {
        return Ok(Trust { trusted: true, remembered: true });
    }
    let store = TrustStore::load(&paths.trust_file()).map_err(|e| e.to_string())?;
    Ok(match store.lookup(&dir) {
        Some(trusted) => Trust { trusted, remembered: true },
        None => Trust { trusted: false, remembered: false },
    })
}

/// What an untrusted folder brings that is left out: one line per file and kind.
/// Costs a read of the project's settings, MCP, agent, skill and command files.
pub fn offers(env: &Env, paths: &Paths, cwd: &Path) -> Vec<String> {
    let mut out = rab_config::load_settings(&paths.settings_file(), cwd, env, false)
        .map(|l| l.ignored)
        .unwrap_or_default();
    #[cfg(feature = "mcp")]
    out.extend(crate::mcp::project_servers(cwd));
    for dir in [cwd.join(".rab/agents"), cwd.join(".claude/agents")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if !names.is_empty() {
            out.push(format!("{}: agents {}", dir.display(), names.join(", ")));
        }
    }
    #[cfg(feature = "plugins")]
    {
        let dir = cwd.join(".rab/extensions");
        let mut names: Vec<String> = crate::plugins::plugin_files(&dir)
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if !names.is_empty() {
            out.push(format!("{}: WASM plugins {}", dir.display(), names.join(", ")));
        }
        // It can grant the project's own plugins folders and the network.
        let grants = cwd.join(".rab/extensions.toml");
        if grants.is_file() {
            out.push(format!("{}: WASM plugin settings and grants", grants.display()));
        }
    }
    let home = rab_core::setup::resources::home_dir(env);
    let mut warnings = Vec::new();
    let resources = rab_core::setup::resources::Resources::load(
        cwd,
        paths.home(),
        home.as_deref(),
        false,
        true,
        // Only the front matter's grants are shown; a link out is not followed.
        &rab_core::prompt_files::PromptFiles::new(
            cwd,
            &[cwd.to_path_buf()],
            home.as_deref(),
            false,
        ),
        &mut warnings,
    );
    out.extend(resources.grants(cwd));
    out
}

fn listing(cwd: &Path, offers: &[String]) -> String {
    let mut text = format!(
        "this folder ({}) brings what would run code or widen what rab may do:\n",
        canonical_dir(cwd).display()
    );
    for o in offers {
        // A checkout wrote these: shown, never obeyed by the terminal.
        text.push_str(&format!("  {}\n", crate::term::safe(o)));
    }
    text
}

/// Says once, on stderr, what an untrusted folder brings and how to use it.
pub fn report(cwd: &Path, offers: &[String]) {
    eprint!("rab: {}", listing(cwd, offers));
    eprintln!(
        "rab: the folder is not trusted, so none of it is used; run `rab trust` (or pass \
         --trust-project for one run) to use it"
    );
}

/// Asks on the terminal whether to trust the folder; `None` when there is no terminal
/// to ask on.
pub fn ask(cwd: &Path, offers: &[String]) -> Option<bool> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return None;
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "rab: {}Trust this folder? Its hooks, servers and rules then run and apply every \
         time rab starts here (`rab untrust` undoes it). [y/N] ",
        listing(cwd, offers)
    );
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok()?;
    Some(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// Records the answer for `cwd`.
pub fn remember(paths: &Paths, cwd: &Path, trusted: bool) -> Result<(), String> {
    let mut store = TrustStore::load(&paths.trust_file()).map_err(|e| e.to_string())?;
    store.set(cwd, trusted).map_err(|e| e.to_string())
}

/// `rab trust [DIR]` and `rab untrust [DIR]`.
pub fn command(env: &Env, paths: &Paths, cwd: &Path, dir: Option<&Path>, trusted: bool) -> u8 {
    let dir = dir.map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
    if !dir.is_dir() {
        return crate::fail(crate::EXIT_USAGE, &format!("{} is not a directory", dir.display()));
    }
    if let Err(e) = remember(paths, &dir, trusted) {
        return crate::fail(crate::EXIT_USAGE, &e);
    }
    let shown = canonical_dir(&dir);
    if trusted {
        let offers = offers(env, paths, &dir);
        outln!("trusted {} (and the folders under it)", shown.display());
        for o in offers {
            outln!("  now used: {o}");
        }
    } else {
        outln!(
            "untrusted {}: its hooks, MCP servers, allow rules and other widening settings \
             are ignored",
            shown.display()
        );
    }
    crate::EXIT_OK
}
