//! Slash commands shared by the terminal UI and the REPL. (The command registry with
//! extension commands and comma routing comes with the extensions work; these are the
//! built-ins every interactive mode needs.)

use std::path::Path;

use rab_core::AgentSession;

use crate::launch::Launch;

/// A parsed `/name args` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Command name without the slash.
    pub name: String,
    /// The rest of the line, trimmed.
    pub args: String,
}

/// Parses a line starting with `/` (not `//`, which is text), or with `,` followed by
/// the name of a known command (`,handoff`, `,anchor NAME`, a prompt command,
/// `,skill:NAME`: the same handlers).
pub fn parse(line: &str, launch: &Launch) -> Option<Invocation> {
    parse_with(line, |name| {
        launch.resources.command(name).is_some()
            || name.strip_prefix("skill:").is_some_and(|s| launch.resources.skill(s).is_some())
    })
}

/// [`parse`] with `is_extra` saying which names besides the built-ins are commands.
fn parse_with(line: &str, is_extra: impl Fn(&str) -> bool) -> Option<Invocation> {
    let line = line.trim();
    let (rest, is_comma) = match line.strip_prefix('/') {
        Some(rest) => (rest, false),
        None => (line.strip_prefix(',')?, true),
    };
    if rest.starts_with(['/', ',']) || rest.is_empty() {
        return None;
    }
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let is_known = BUILTINS.iter().any(|(n, _)| *n == name) || is_extra(name);
    if is_comma && !is_known {
        return None;
    }
    Some(Invocation { name: name.to_owned(), args: args.trim().to_owned() })
}

/// The built-in commands with one-line descriptions (for help and autocomplete).
pub const BUILTINS: [(&str, &str); 22] = [
    ("help", "Show commands and keys"),
    ("quit", "Exit rab"),
    ("exit", "Exit rab"),
    ("model", "Switch model: /model NAME, or pick from a list"),
    ("thinking", "Set thinking: /thinking off|minimal|low|medium|high"),
    ("new", "Start a new session"),
    ("session", "Show this session's file, id and usage"),
    ("resume", "Resume an earlier session of this directory"),
    ("hotkeys", "Show keyboard shortcuts"),
    ("settings", "Show the settings in effect"),
    ("clear", "Clear the screen (the session continues)"),
    ("cost", "Show tokens and cost of this session, per request"),
    ("compact", "Summarise older messages now: /compact [focus]"),
    ("tree", "Show the session's branches; /tree N [summary] continues from message N"),
    ("fork", "Copy this branch into a new session and continue there"),
    ("name", "Name this session: /name NAME"),
    ("anchor", "Mark this point: /anchor NAME"),
    ("anchors", "List anchors; /anchors NAME continues from one"),
    ("handoff", "Summarise and continue in a fresh session: /handoff [focus]"),
    ("search", "Search every session: /search WORDS"),
    ("export", "Export this session: /export [html|md|json] [FILE]"),
    ("tools", "List the tools with their permission level and the permission mode"),
];

/// What a command asks the mode to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Show this text.
    Info(String),
    /// Show this error.
    Error(String),
    /// Leave rab.
    Quit,
    /// Replace the session with a fresh one.
    NewSession,
    /// Let the user pick a session to resume (or resume this file).
    Resume(Option<String>),
    /// Let the user pick a model.
    PickModel,
    /// Clear the screen.
    Clear,
    /// Show the keyboard shortcuts.
    Hotkeys,
    /// Compact the conversation now.
    Compact(Option<String>),
    /// Show the tree (the UI opens a picker).
    Tree,
    /// Continue from this entry (summarising the abandoned branch or not).
    Branch(String, bool),
    /// Hand off to a fresh session.
    Handoff(Option<String>),
    /// Search every session (may take a while the first time: the UI runs it off the
    /// UI thread).
    Search(String),
    /// Send this as the user's message (a prompt command or a skill), with this model
    /// when given.
    Prompt(String, Option<String>),
}

/// Help text listing the commands.
pub fn help(launch: &Launch) -> String {
    let mut out = String::from("Commands:\n");
    for (name, desc) in BUILTINS {
        out.push_str(&format!("  /{name:<10} {desc}\n"));
    }
    for c in &launch.resources.commands {
        let hint = c.argument_hint.as_deref().map_or(String::new(), |h| format!(" {h}"));
        out.push_str(&format!("  /{:<10} {}{hint}\n", c.name, c.description));
    }
    for s in &launch.resources.skills {
        out.push_str(&format!("  /skill:{:<4} {}\n", s.name, s.description));
    }
    out.push_str(
        "  !cmd        Run a shell command; its output goes to the model with your next message\n",
    );
    out.push_str("  !!cmd       Run a shell command without sending it to the model\n");
    out
}

/// Runs a command against the session.
pub fn execute(inv: &Invocation, session: &mut AgentSession, launch: &Launch) -> Outcome {
    match inv.name.as_str() {
        "help" => Outcome::Info(help(launch)),
        "quit" | "exit" => Outcome::Quit,
        "new" => Outcome::NewSession,
        "clear" => Outcome::Clear,
        "hotkeys" => Outcome::Hotkeys,
        "resume" => Outcome::Resume((!inv.args.is_empty()).then(|| inv.args.clone())),
        "model" if inv.args.is_empty() => Outcome::PickModel,
        "model" => match launch.resolve_model(&inv.args) {
            Ok(t) => {
                let text = format!("model: {} ({})", t.model.id, t.model.provider);
                session.set_model(t.model, t.api_key, Some(t.auth_hint));
                Outcome::Info(text)
            }
            Err(e) => Outcome::Error(e),
        },
        "thinking" => match rab_ai::ThinkingLevel::parse(&inv.args) {
            Some(level) => {
                session.set_thinking(level);
                Outcome::Info(format!("thinking: {level}"))
            }
            None => Outcome::Error(format!(
                "/thinking takes one of off, minimal, low, medium, high (now: {})",
                session.thinking()
            )),
        },
        "session" => Outcome::Info(session_info(session)),
        "compact" => Outcome::Compact((!inv.args.is_empty()).then(|| inv.args.clone())),
        "handoff" => Outcome::Handoff((!inv.args.is_empty()).then(|| inv.args.clone())),
        "tree" if inv.args.is_empty() => Outcome::Tree,
        "tree" => tree_pick(&inv.args, session),
        "fork" => {
            let dir = rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd);
            match session.fork(&dir) {
                Ok(path) => Outcome::Info(format!("forked into {}", path.display())),
                Err(e) => Outcome::Error(e),
            }
        }
        "name" if inv.args.is_empty() => Outcome::Info(session.name().map_or_else(
            || "this session has no name; /name NAME sets one".into(),
            |n| format!("name: {n}"),
        )),
        "name" => match session.set_name(&inv.args) {
            Ok(()) => Outcome::Info(format!("named: {}", inv.args)),
            Err(e) => Outcome::Error(e),
        },
        "anchor" if inv.args.is_empty() => Outcome::Error("/anchor takes a name".into()),
        "anchor" => match session.add_anchor(&inv.args) {
            Ok(()) => Outcome::Info(format!("anchor \"{}\" set", inv.args)),
            Err(e) => Outcome::Error(e),
        },
        "anchors" => {
            let anchors = session.anchors();
            if inv.args.is_empty() {
                if anchors.is_empty() {
                    return Outcome::Info("no anchors yet; /anchor NAME marks this point".into());
                }
                let list: Vec<String> =
                    anchors.iter().map(|(n, id)| format!("  {n}  ({id})")).collect();
                return Outcome::Info(format!(
                    "anchors (newest first):\n{}\n/anchors NAME continues from one",
                    list.join("\n")
                ));
            }
            match anchors.into_iter().find(|(n, _)| *n == inv.args) {
                Some((_, id)) => Outcome::Branch(id, false),
                None => {
                    Outcome::Error(format!("no anchor named \"{}\"; /anchors lists them", inv.args))
                }
            }
        }
        "search" if inv.args.is_empty() => Outcome::Error("/search takes words to find".into()),
        "search" => Outcome::Search(inv.args.clone()),
        "export" => export(&inv.args, session, launch),
        "cost" => Outcome::Info(cost_info(session)),
        "settings" => Outcome::Info(settings_info(launch, session)),
        "tools" => Outcome::Info(tools_info(launch, session)),
        other => resource(other, &inv.args, launch),
    }
}

/// A skill (`skill:NAME`) or a prompt command.
fn resource(name: &str, args: &str, launch: &Launch) -> Outcome {
    if let Some(skill_name) = name.strip_prefix("skill:") {
        return match launch.resources.skill(skill_name) {
            Some(skill) => {
                let mut text = skill.invoke(args);
                if !skill.body.contains("$ARGUMENTS") && !args.trim().is_empty() {
                    text.push_str(&format!("\n\n{}", args.trim()));
                }
                Outcome::Prompt(text, None)
            }
            None => Outcome::Error(format!("no skill named {skill_name}; /help lists the skills")),
        };
    }
    match launch.resources.command(name) {
        Some(c) => Outcome::Prompt(c.expand(args), c.model.clone()),
        None => Outcome::Error(format!("unknown command /{name}; /help lists the commands")),
    }
}

/// The tree as numbered lines (the numbers `/tree N` takes).
pub fn tree_text(session: &AgentSession) -> String {
    let items = session.tree();
    if items.is_empty() {
        return "the session has no messages yet".into();
    }
    let mut out = String::from("Messages of every branch (* = active branch):\n");
    for (i, t) in items.iter().enumerate() {
        let mark = if t.is_active { "*" } else { " " };
        out.push_str(&format!("{mark}{:>3}. {}{}\n", i + 1, "  ".repeat(t.depth), t.text));
    }
    out.push_str("/tree N continues before message N (its text comes back to edit); add `summary` to summarise the branch left");
    out
}

fn tree_pick(args: &str, session: &AgentSession) -> Outcome {
    let mut words = args.split_whitespace();
    let n = words.next().and_then(|w| w.parse::<usize>().ok());
    let summary = words.next() == Some("summary");
    let items = session.tree();
    match n.and_then(|n| items.get(n.wrapping_sub(1))) {
        // Continue from the message's parent, so the message itself can be edited and resent.
        Some(t) => Outcome::Branch(t.parent_id.clone().unwrap_or_default(), summary),
        None => Outcome::Error(format!("/tree N takes a number from 1 to {}", items.len())),
    }
}

/// `/search WORDS`: the best 20 hits across every session, as text.
pub fn search(query: &str, sessions_root: &Path, home: &Path) -> Result<String, String> {
    let index = crate::sessions::index_dir(home);
    match rab_session::search::search(sessions_root, &index, query, 20) {
        Ok(hits) if hits.is_empty() => Ok(format!("no matches for \"{query}\"")),
        Ok(hits) => {
            let lines: Vec<String> = hits
                .iter()
                .map(|h| {
                    let when = h.timestamp.get(..16).unwrap_or(&h.timestamp).replace('T', " ");
                    let (id, cwd, role, entry) = (&h.session_id, &h.cwd, &h.role, &h.entry_id);
                    format!("{id}  {when}  {cwd}  [{role} {entry}]\n    {}", h.snippet)
                })
                .collect();
            Ok(lines.join("\n"))
        }
        Err(e) => Err(e.to_string()),
    }
}

fn export(args: &str, session: &AgentSession, launch: &Launch) -> Outcome {
    use rab_session::export::ExportFormat;
    let by_name = |w: &str| match w.to_ascii_lowercase().as_str() {
        "html" | "htm" => Some(ExportFormat::Html),
        "md" | "markdown" => Some(ExportFormat::Markdown),
        "json" => Some(ExportFormat::Json),
        _ => None,
    };
    let (mut format, mut file) = (None, None);
    for word in args.split_whitespace() {
        match by_name(word) {
            Some(f) if format.is_none() => format = Some(f),
            _ if file.is_none() => file = Some(launch.cwd.join(word)),
            _ => {
                return Outcome::Error(
                    "usage: /export [html|md|json] [FILE] (the format follows FILE's extension)"
                        .into(),
                );
            }
        }
    }
    let from_extension = file
        .as_ref()
        .and_then(|f: &std::path::PathBuf| f.extension())
        .and_then(|e| by_name(&e.to_string_lossy()));
    let format = format.or(from_extension).unwrap_or(ExportFormat::Html);
    let file = file.unwrap_or_else(|| {
        launch.cwd.join(format!("rab-session-{}.{}", session.tape().id(), format.extension()))
    });
    match rab_session::export::export(session.tape(), format) {
        Ok(text) => match rab_tools::atomic_write::write_atomic(&file, text.as_bytes()) {
            Ok(()) => Outcome::Info(format!("exported to {}", file.display())),
            Err(e) => Outcome::Error(format!("cannot write {}: {e}", file.display())),
        },
        Err(e) => Outcome::Error(e.to_string()),
    }
}

/// The tools, their levels, which are deferred, and the permission mode.
fn tools_info(launch: &Launch, session: &AgentSession) -> String {
    let agent = session.agent();
    let sent = agent.request_specs();
    let mut out = format!(
        "Permission mode: {} (Shift+Tab or --permission-mode changes it)\nTools:\n",
        launch.gate.mode().get().as_str()
    );
    for tool in agent.tools() {
        let spec = tool.spec();
        let is_stub = sent.iter().any(|s| s.name == spec.name && s.parameters != spec.parameters);
        let note = if is_stub { "  (schema on request via tool_search)" } else { "" };
        out.push_str(&format!("  {:<16} {:<10}{note}\n", spec.name, tool.level().as_str()));
    }
    if agent.tools().is_empty() {
        out.push_str("  none (--no-tools)\n");
    }
    out
}

fn session_info(session: &AgentSession) -> String {
    let tape = session.tape();
    let path = tape
        .path()
        .map_or_else(|| "(not saved: --no-session)".to_owned(), |p| p.display().to_string());
    format!(
        "session {}\nfile: {path}\nentries: {}, messages: {}\n{}",
        tape.id(),
        tape.len(),
        session.agent().messages().len(),
        cost_info(session)
    )
}

fn cost_info(session: &AgentSession) -> String {
    let t = session.totals();
    let mut out = format!(
        "session: {} in ({} cached, {} cache writes), {} out; ${:.4} over {} requests",
        t.usage.input + t.usage.cache_read + t.usage.cache_write,
        t.usage.cache_read,
        t.usage.cache_write,
        t.usage.output,
        t.cost,
        t.turns
    );
    for (i, turn) in session.turn_costs().iter().enumerate() {
        let u = &turn.usage;
        out.push_str(&format!(
            "\n  {:>3}. in {} (cache read {}, write {}), out {}: ${:.4}",
            i + 1,
            u.total_input(),
            u.cache_read,
            u.cache_write,
            u.output,
            turn.cost
        ));
    }
    out
}

fn settings_info(launch: &Launch, session: &AgentSession) -> String {
    let model = &session.agent().config().model;
    let tools: Vec<String> = session.agent().tool_specs().iter().map(|t| t.name.clone()).collect();
    format!(
        "model: {} ({}, {})\nthinking: {}\ntools: {}\nmax turns: {}\nsettings files: {}, {}",
        model.id,
        model.provider,
        model.api,
        session.thinking(),
        if tools.is_empty() { "none".to_owned() } else { tools.join(", ") },
        launch.max_turns.map_or_else(|| "none".to_owned(), |n| n.to_string()),
        launch.paths.settings_file().display(),
        rab_config::Paths::project_settings_file(&launch.cwd).display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn parses_commands_but_not_paths_or_double_slashes() {
        assert_eq!(
            parse_with("/model gpt-6", none),
            Some(Invocation { name: "model".into(), args: "gpt-6".into() })
        );
        assert_eq!(
            parse_with("  /quit  ", none),
            Some(Invocation { name: "quit".into(), args: String::new() })
        );
        assert_eq!(parse_with("//not a command", none), None);
        assert_eq!(parse_with("hello /model", none), None);
        assert_eq!(parse_with("/", none), None);
    }

    #[test]
    fn comma_runs_known_commands_only() {
        assert_eq!(
            parse_with(",anchor before refactor", none),
            Some(Invocation { name: "anchor".into(), args: "before refactor".into() })
        );
        assert_eq!(
            parse_with(",handoff", none),
            Some(Invocation { name: "handoff".into(), args: String::new() })
        );
        assert_eq!(
            parse_with(",ls -la", none),
            None,
            "not a command (comma shell routing comes later)"
        );
        assert_eq!(parse_with(",,handoff", none), None);
        assert_eq!(parse_with("a, b", none), None);
    }
}
