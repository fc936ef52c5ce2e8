//! Slash commands shared by the terminal UI and the REPL. (The command registry with
//! extension commands and comma routing comes with the extensions work; these are the
//! built-ins every interactive mode needs.)

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

/// Parses a line starting with `/` (not `//`, which is text).
pub fn parse(line: &str) -> Option<Invocation> {
    let rest = line.trim().strip_prefix('/')?;
    if rest.starts_with('/') || rest.is_empty() {
        return None;
    }
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some(Invocation { name: name.to_owned(), args: args.trim().to_owned() })
}

/// The built-in commands with one-line descriptions (for help and autocomplete).
pub const BUILTINS: [(&str, &str); 12] = [
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
    ("cost", "Show tokens and cost of this session"),
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
}

/// Help text listing the commands.
pub fn help() -> String {
    let mut out = String::from("Commands:\n");
    for (name, desc) in BUILTINS {
        out.push_str(&format!("  /{name:<10} {desc}\n"));
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
        "help" => Outcome::Info(help()),
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
        "cost" => Outcome::Info(cost_info(session)),
        "settings" => Outcome::Info(settings_info(launch, session)),
        other => Outcome::Error(format!("unknown command /{other}; /help lists the commands")),
    }
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
    format!(
        "tokens: {} in ({} cached, {} cache writes), {} out; cost ${:.4}; {} requests",
        t.usage.input + t.usage.cache_read + t.usage.cache_write,
        t.usage.cache_read,
        t.usage.cache_write,
        t.usage.output,
        t.cost,
        t.turns
    )
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

    #[test]
    fn parses_commands_but_not_paths_or_double_slashes() {
        assert_eq!(
            parse("/model gpt-6"),
            Some(Invocation { name: "model".into(), args: "gpt-6".into() })
        );
        assert_eq!(
            parse("  /quit  "),
            Some(Invocation { name: "quit".into(), args: String::new() })
        );
        assert_eq!(parse("//not a command"), None);
        assert_eq!(parse("hello /model"), None);
        assert_eq!(parse("/"), None);
    }
}
