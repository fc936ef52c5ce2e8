//! The tools a set-up offers and the tape a session records to.

use std::path::Path;
use std::sync::Arc;

use rab_agent::AgentTool;
use rab_config::{Env, Paths, Settings};
use rab_session::{Tape, Warning};

use super::{SetupError, TapeChoice, ToolChoice};

/// The workspace the tools work in: the project root, home, temp dir and sandbox.
pub fn workspace(env: &Env, cwd: &Path, sandbox: rab_tools::Sandbox) -> rab_tools::Workspace {
    // The bash tool's full output goes to rab's private folder (0700) when there is one.
    let temp = sandbox
        .logs_dir()
        .unwrap_or_else(|| std::path::PathBuf::from(env.get("TMPDIR").unwrap_or("/tmp")));
    rab_tools::Workspace::new(cwd)
        .with_home(env.get("HOME").map(std::path::PathBuf::from))
        .with_temp_dir(temp)
        .with_sandbox(sandbox)
}

/// The tool the model changes files with: the one a tool list (`--tools`, settings
/// `tools`) names when it names only one kind, else the settings' `editTool`, else the
/// model's.
pub fn edit_tool(
    choice: &ToolChoice,
    settings: &Settings,
    model: &rab_ai::Model,
) -> rab_ai::EditTool {
    use rab_ai::EditTool;
    let list = choice.only.as_ref().or(settings.tools.as_ref());
    let names =
        |wanted: &[&str]| list.is_some_and(|l| l.iter().any(|n| wanted.contains(&n.as_str())));
    match (names(&["edit", "write"]), names(&[rab_tools::apply_patch::NAME])) {
        (true, false) => EditTool::Edit,
        (false, true) => EditTool::ApplyPatch,
        _ => settings.edit_tool.unwrap_or(model.edit_tool),
    }
}

/// rab's built-in tools: rab-tools' and `extra` (the session-level ones), with
/// `apply_patch` in place of `write` and `edit` for models that edit with it, and the
/// provider's web search as the permission rules allow it (`None`: not at all).
pub fn builtin_tools(
    settings: &Settings,
    ws: &rab_tools::Workspace,
    extra: Vec<Arc<dyn AgentTool>>,
    edit_tool: rab_ai::EditTool,
    web_search: Option<rab_tools::web_search::WebSearch>,
) -> Vec<Arc<dyn AgentTool>> {
    let mut all = rab_tools::builtin_in(ws);
    match web_search {
        Some(search) => {
            for t in &mut all {
                if t.name() == rab_tools::web_search::NAME {
                    *t = Arc::new(search.clone());
                }
            }
        }
        None => all.retain(|t| t.name() != rab_tools::web_search::NAME),
    }
    if edit_tool == rab_ai::EditTool::ApplyPatch {
        let at = all.iter().position(|t| t.name() == "write").unwrap_or(all.len());
        all.retain(|t| !matches!(t.name().as_str(), "write" | "edit"));
        all.insert(
            at.min(all.len()),
            Arc::new(rab_tools::apply_patch::ApplyPatch::new(ws.clone())),
        );
    }
    if settings.sandbox.allow_private_network {
        for t in &mut all {
            if t.name() == "web_fetch" {
                *t = Arc::new(rab_tools::web_fetch::WebFetch::new().with_private_addresses(true));
            }
        }
    }
    all.extend(extra);
    all
}

/// The extensions' tools, narrowed by `--no-tools`, `--tools` and the settings' `tools`
/// / `excludeTools`. An unknown tool name is an error, never silently ignored.
/// `known`: every tool rules may name (the built-in ones, enabled or not).
pub fn tools(
    cli: &ToolChoice,
    settings: &Settings,
    all: Vec<Arc<dyn AgentTool>>,
    known: &crate::ToolCatalog,
) -> Result<Vec<Arc<dyn AgentTool>>, SetupError> {
    if cli.no_tools {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = all.iter().map(|t| t.name()).collect();
    // Tools added per session or only in some modes, and the file-editing tools of
    // other models, can be named all the same.
    for name in known.names() {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    let check = |list: &[String], what: &str| -> Result<(), SetupError> {
        // MCP servers' and plugins' tools arrive after start-up: they are named by their
        // server or plugin (`mcp__SERVER__TOOL`, `plugin__NAME__TOOL`, or all of one).
        let later = |n: &str| n.starts_with("mcp__") || n.starts_with("plugin__");
        match list.iter().find(|n| !names.contains(n) && !later(n)) {
            Some(bad) => Err(SetupError::usage(format!(
                "{what}: unknown tool '{bad}'; available tools: {}",
                names.join(", ")
            ))),
            None => Ok(()),
        }
    };
    let only = match (&cli.only, &settings.tools) {
        (Some(list), _) => {
            check(list, "--tools")?;
            Some(list.clone())
        }
        (None, Some(list)) => {
            check(list, "settings \"tools\"")?;
            Some(list.clone())
        }
        (None, None) => None,
    };
    check(&settings.exclude_tools, "settings \"excludeTools\"")?;
    Ok(all.into_iter().filter(|t| is_enabled(&t.name(), only.as_deref(), settings)).collect())
}

/// The same choice for the tools of MCP servers and plugins, which come and go while
/// the session runs: `--no-tools` leaves out every one, `--tools` and the settings'
/// `tools` / `excludeTools` keep only those they name.
pub fn source_filter(cli: &ToolChoice, settings: &Settings) -> crate::extension::ToolFilter {
    let none = cli.no_tools;
    let only = cli.only.clone().or_else(|| settings.tools.clone());
    let exclude = settings.exclude_tools.clone();
    // `mcp__SERVER` names every tool of that server and `plugin__NAME` every tool of
    // that plugin, as in permission rules; a plugin's tool is also named by its own
    // name or as `plugin__NAME__TOOL`.
    let one = |list: &[String], name: &str| {
        list.iter().any(|n| {
            n == name
                || ((n.starts_with("mcp__") || n.starts_with("plugin__"))
                    && name.strip_prefix(n.as_str()).is_some_and(|rest| rest.starts_with("__")))
        })
    };
    let names = move |list: &[String], name: &str, alias: Option<&str>| {
        one(list, name) || alias.is_some_and(|a| one(list, a))
    };
    Arc::new(move |name: &str, alias: Option<&str>| {
        !none
            && only.as_ref().is_none_or(|o| names(o, name, alias))
            && !names(&exclude, name, alias)
    })
}

/// Whether `--tools`/settings leave a tool in.
pub fn is_enabled(name: &str, only: Option<&[String]>, settings: &Settings) -> bool {
    only.is_none_or(|o| o.iter().any(|n| n == name))
        && !settings.exclude_tools.iter().any(|n| n == name)
}

/// The session to record to: `--no-session`, `--session PATH`, `-c` (the most recent
/// of this directory), or a new one.
pub fn tape(
    cli: &TapeChoice,
    paths: &Paths,
    cwd: &Path,
) -> Result<(Tape, Vec<String>), SetupError> {
    let dir = rab_session::session_dir(&paths.sessions_dir(), cwd);
    // Continued here, or copied with --fork: one process writes a session at a time.
    let open = |path: &Path| {
        let (mut tape, warnings) =
            Tape::open(path).map_err(|e| SetupError::usage(e.to_string()))?;
        let mut warnings: Vec<String> = warnings.iter().map(line_warning).collect();
        if cli.fork {
            tape = tape.forked(&dir).map_err(|e| SetupError::usage(e.to_string()))?;
            let into = tape.path().map(|p| p.display().to_string()).unwrap_or_default();
            warnings.push(format!("continuing a copy of {} in {into}", path.display()));
        } else {
            tape.claim().map_err(|e| SetupError::usage(e.to_string()))?;
        }
        Ok((tape, warnings))
    };
    if cli.fork && !cli.continue_session && cli.session.is_none() {
        return Err(SetupError::usage(
            "--fork copies the session -c or --session names; add one of them",
        ));
    }
    if cli.no_session {
        if cli.continue_session || cli.session.is_some() {
            return Err(SetupError::usage("--no-session cannot be combined with -c or --session"));
        }
        return Ok((Tape::ephemeral(cwd), Vec::new()));
    }
    if let Some(path) = &cli.session {
        if path.exists() {
            usable_session(path)?;
            return open(path).map_err(|e: SetupError| SetupError {
                message: format!(
                    "{}; give another --session path, or run with --no-session",
                    e.message
                ),
                ..e
            });
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut notes = Vec::new();
        if !parent.is_dir() {
            // Folders are made unasked only under RAB_HOME: a mistyped path elsewhere
            // must not leave a trail of directories behind.
            if !parent.starts_with(paths.home()) {
                return Err(session_error(
                    path,
                    &format!(
                        "the folder {} does not exist (rab makes folders only under RAB_HOME)",
                        parent.display()
                    ),
                ));
            }
            std::fs::create_dir_all(parent).map_err(|e| session_error(path, &e.to_string()))?;
            notes.push(format!("created the folder {}", parent.display()));
        }
        // Found out now, not at the first entry after the model has been paid.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|_| std::fs::remove_file(path))
            .map_err(|e| session_error(path, &format!("cannot be created: {e}")))?;
        let mut tape = Tape::create(parent, cwd, None);
        tape.set_path(path.clone());
        return Ok((tape, notes));
    }
    if cli.continue_session {
        return match rab_session::most_recent(&dir) {
            Some(path) => open(&path),
            None => {
                let note = "no earlier session in this directory; starting a new one".to_owned();
                Ok((Tape::create(&dir, cwd, None), vec![note]))
            }
        };
    }
    Ok((Tape::create(&dir, cwd, None), Vec::new()))
}

/// A session file named on the command line that rab cannot use: the usage exit code
/// (2) for every such case, with the way out.
fn session_error(path: &Path, reason: &str) -> SetupError {
    SetupError::usage(format!(
        "session {}: {reason}; give another --session path, or run with --no-session",
        path.display()
    ))
}

/// An existing session file must be a file rab can read and append to.
fn usable_session(path: &Path) -> Result<(), SetupError> {
    if path.is_dir() {
        return Err(session_error(path, "is a folder, not a session file"));
    }
    if !path.is_file() {
        // A FIFO or a device would block the read or never hold a tape.
        return Err(session_error(path, "is not a regular file"));
    }
    std::fs::File::open(path).map_err(|e| session_error(path, &format!("cannot be read: {e}")))?;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| session_error(path, &format!("cannot be written: {e}")))?;
    Ok(())
}

fn line_warning(w: &Warning) -> String {
    format!("session line {}: {}", w.line, w.message)
}
