//! `rab doctor`: what protects this folder, and what configures it. The sandbox as it
//! would be set up here (and what this kernel's Landlock enforces), whether the folder
//! is trusted, the settings files in effect, and what was ignored in them.

use std::fmt::Write as _;
use std::path::Path;

use rab_config::{Env, Paths};

use crate::cli::Cli;

/// Prints the report; exit 0, or 2 when a settings file is broken (named in the report).
pub fn run(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> u8 {
    let (mut text, code) = report(cli, env, paths, cwd);
    text.push_str(&providers(cli, env, paths));
    out!("{}", crate::term::safe(&text));
    code
}

/// How long doctor waits for each provider.
const REACH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

/// Each provider: where its key comes from (never the key), and whether its endpoint
/// answers (any HTTP status counts: the server is there). Providers that need a key
/// are tried only with one; local servers are always tried.
fn providers(cli: &Cli, env: &Env, paths: &Paths) -> String {
    let mut out = String::from("providers:\n");
    let registry = match rab_core::setup::target::registry(env, paths) {
        Ok(r) => r,
        Err(e) => return format!("{out}  cannot read the model table: {}\n", e.message),
    };
    let auth = rab_config::Auth::load(&paths.auth_file()).unwrap_or_default();
    let mut rows: Vec<(String, String, Option<String>)> = Vec::new();
    for p in registry.providers() {
        let key = rab_config::resolve_key(p, cli.api_key.as_deref(), env, &auth);
        let base = cli.base_url.clone().filter(|_| cli.provider.as_deref() == Some(&p.name));
        let url = base.unwrap_or_else(|| p.base_url.clone());
        let (what, probe) = match (&key, p.requires_key) {
            (Some((key, rab_config::KeySource::AuthFile)), _) if matches!(auth.credential(&p.name), Some(rab_config::Credential::Oauth { access, .. }) if access == key) => {
                (
                    format!("ChatGPT sign-in from {} (renews itself)", paths.auth_file().display()),
                    Some(url),
                )
            }
            (Some((_, source)), _) => {
                (format!("key from {}", source.describe(&paths.auth_file())), Some(url))
            }
            (None, true) => {
                let var = p.key_env.first().map_or(String::new(), |v| format!("set {v} or "));
                (format!("no key ({var}/login {})", p.name), None)
            }
            (None, false) => ("no key needed".to_owned(), Some(url)),
        };
        rows.push((p.name.clone(), what, probe));
    }
    let probes: Vec<Option<String>> = rows.iter().map(|(_, _, u)| u.clone()).collect();
    let answers = reach_all(probes);
    for ((name, what, url), answer) in rows.iter().zip(answers) {
        let reach = match (url, answer) {
            (Some(url), Some(a)) => format!(" · {url} {a}"),
            _ => String::new(),
        };
        let _ = writeln!(out, "  {name:<11} {what}{reach}");
    }
    out
}

/// Tries every URL at once; `None` where there was none to try.
fn reach_all(urls: Vec<Option<String>>) -> Vec<Option<String>> {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return urls.iter().map(|_| None).collect();
    };
    let Ok(client) = rab_ai::http_client_builder().and_then(|b| {
        b.timeout(REACH_TIMEOUT).connect_timeout(REACH_TIMEOUT).build().map_err(|e| e.to_string())
    }) else {
        return urls.iter().map(|_| None).collect();
    };
    rt.block_on(futures_util::future::join_all(urls.into_iter().map(|url| {
        let client = client.clone();
        async move {
            let url = url?;
            let started = std::time::Instant::now();
            Some(match client.get(&url).send().await {
                Ok(r) => format!(
                    "reachable (HTTP {}, {} ms)",
                    r.status().as_u16(),
                    started.elapsed().as_millis()
                ),
                Err(e) if e.is_timeout() => "not reachable (no answer in 4 s)".to_owned(),
                Err(e) => {
                    let why = innermost_cause(&e);
                    format!("not reachable ({why})")
                }
            })
        }
    })))
}

fn report(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> (String, u8) {
    let mut out = String::new();
    let mut code = crate::EXIT_OK;
    let _ = writeln!(out, "rab {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "folder: {}", cwd.display());
    // Trust.
    let trust = crate::trust::decide(cli, env, paths, cwd);
    match &trust {
        Ok(t) if t.trusted => {
            let how = if t.remembered { "remembered" } else { "for this run" };
            let _ = writeln!(out, "trust: trusted ({how})");
        }
        Ok(_) => {
            let offers = crate::trust::offers(env, paths, cwd);
            if offers.is_empty() {
                let _ = writeln!(out, "trust: not trusted (it brings nothing that needs trust)");
            } else {
                let _ = writeln!(out, "trust: not trusted; ignored until `rab trust`:");
                for o in offers {
                    let _ = writeln!(out, "  {o}");
                }
            }
        }
        Err(e) => {
            let _ = writeln!(out, "trust: unknown ({e})");
        }
    }
    let trusted = trust.as_ref().is_ok_and(|t| t.trusted);
    // Settings.
    let loaded = rab_config::load_settings(&paths.settings_file(), cwd, env, trusted);
    let settings = match loaded {
        Ok(l) => {
            let _ = writeln!(out, "settings files in effect:");
            if l.files.is_empty() {
                let _ = writeln!(out, "  none (defaults)");
            }
            for f in &l.files {
                let _ = writeln!(out, "  {}", f.display());
            }
            for w in &l.warnings {
                let _ = writeln!(out, "  warning: {w}");
            }
            // What they asked for and did not get is listed under trust above.
            Some(l.settings)
        }
        Err(e) => {
            let _ = writeln!(out, "settings: {e}");
            code = crate::EXIT_USAGE;
            None
        }
    };
    out.push_str(&claude_home(env));
    out.push_str(&crate::doctor_sandbox::report(cli, env, paths, cwd, settings.as_ref()));
    (out, code)
}

/// What of a Claude Code user's own files (`~/.claude`, `~/.claude.json`) rab reads,
/// and what it does not (with where the same thing goes in rab). Empty without them.
fn claude_home(env: &Env) -> String {
    let Some(home) = env.get("HOME").map(Path::new) else { return String::new() };
    let dir = home.join(".claude");
    let config = home.join(".claude.json");
    if !dir.is_dir() && !config.is_file() {
        return String::new();
    }
    let count = |sub: &str| std::fs::read_dir(dir.join(sub)).map_or(0, |d| d.flatten().count());
    let mut read = Vec::new();
    let mut not_read = Vec::new();
    for (sub, what) in [("skills", "skills"), ("commands", "prompt commands")] {
        let n = count(sub);
        if n > 0 {
            read.push(format!("{what} (~/.claude/{sub}: {n})"));
        }
    }
    if dir.join("projects").is_dir() {
        read.push("sessions, when you run `rab sessions import claude`".to_owned());
    }
    let exists = |p: &str| dir.join(p).exists();
    if exists("settings.json") {
        not_read.push(
            "settings.json (its permissions, hooks and env: put them in ~/.rab/agent/settings.json)"
                .to_owned(),
        );
    }
    if exists("CLAUDE.md") {
        not_read.push("CLAUDE.md (put what applies in ~/.rab/AGENTS.md)".to_owned());
    }
    if count("agents") > 0 {
        not_read.push("agents/ (put them in ~/.rab/agents)".to_owned());
    }
    if exists("output-styles") {
        not_read.push("output-styles/".to_owned());
    }
    if config.is_file() {
        not_read.push("~/.claude.json (its MCP servers: put them in ~/.rab/mcp.json)".to_owned());
    }
    let mut out = String::from("Claude Code's own files (~/.claude):\n");
    let list = |v: &[String]| if v.is_empty() { "nothing".to_owned() } else { v.join("; ") };
    out.push_str(&format!("  read: {}\n  not read: {}\n", list(&read), list(&not_read)));
    out
}

/// The innermost cause of `e` ("Connection refused", not reqwest's "error sending
/// request"): what a user can act on.
pub(crate) fn innermost_cause(e: &dyn std::error::Error) -> String {
    let mut why = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        why = s.to_string();
        source = s.source();
    }
    why
}
