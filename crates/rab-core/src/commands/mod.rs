//! rab's own commands (`/help`, `/model`, …), provided through the same `Extension`
//! trait as every other command, plus helpers the modes share (help text, tree text,
//! session search).

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

pub mod login;
mod status;

use crate::setup::Setup as Launch;
use crate::{
    AgentSession, Command, CommandContext, CommandHandler, CommandOutcome as Outcome, Completion,
    Extension, Extensions,
};

/// rab's own commands, as an extension (the first one loaded, so its names win).
pub struct BuiltinCommands;

impl Extension for BuiltinCommands {
    fn name(&self) -> &str {
        "builtin-commands"
    }

    fn commands(&self) -> Vec<Command> {
        BUILTINS
            .iter()
            .map(|(name, desc)| Command {
                name: (*name).to_owned(),
                description: (*desc).to_owned(),
                argument_hint: None,
                handler: Arc::new(Builtin(name)),
                source: crate::extension::CommandSource::Builtin,
            })
            .collect()
    }
}

/// One built-in command: its handler needs rab's start-up state, passed as the host.
struct Builtin(&'static str);

impl CommandHandler for Builtin {
    fn run(&self, args: &str, cx: &mut CommandContext<'_>) -> Outcome {
        let Some(launch) = cx.host.downcast_ref::<Launch>() else {
            return Outcome::Error(format!("/{} runs only inside rab's own modes", self.0));
        };
        execute(self.0, args, cx.session, launch, cx.extensions)
    }

    fn completions(&self, args: &str, host: &dyn Any) -> Vec<Completion> {
        let Some(launch) = host.downcast_ref::<Launch>() else { return Vec::new() };
        let options: Vec<(String, Option<String>)> = match self.0 {
            "model" => launch
                .registry
                .models()
                .iter()
                .map(|m| (format!("{}/{}", m.provider, m.id), Some(m.name.clone())))
                .collect(),
            "thinking" => {
                ["off", "minimal", "low", "medium", "high"].map(|l| (l.to_owned(), None)).to_vec()
            }
            "cron" => {
                [("add", "a recurring prompt"), ("once", "a one-off prompt"), ("delete", "by id")]
                    .map(|(f, d)| (f.to_owned(), Some(d.to_owned())))
                    .to_vec()
            }
            "memory" => {
                crate::memory::MemoryScope::ALL.map(|s| (s.as_str().to_owned(), None)).to_vec()
            }
            "export" => [("html", "a web page"), ("md", "Markdown"), ("json", "JSON")]
                .map(|(f, d)| (f.to_owned(), Some(d.to_owned())))
                .to_vec(),
            "profile" => launch.profiles.iter().map(|p| (p.clone(), None)).collect(),
            "login" | "logout" => launch
                .registry
                .providers()
                .iter()
                .filter(|p| p.requires_key)
                .map(|p| (p.name.clone(), None))
                .collect(),
            _ => Vec::new(),
        };
        let needle = args.to_ascii_lowercase();
        options
            .into_iter()
            .filter(|(v, _)| v.to_ascii_lowercase().contains(&needle))
            .take(50)
            .map(|(value, description)| Completion { value, description })
            .collect()
    }
}

/// The built-in commands with one-line descriptions (for help and autocomplete).
pub const BUILTINS: [(&str, &str); 33] = [
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
    ("clear", "Start a new conversation, as /new (Alt+L clears the screen)"),
    ("cost", "Show tokens and cost of this session, per request"),
    ("compact", "Summarise older messages now: /compact [focus]"),
    ("tree", "Show the session's branches; /tree N [summary] continues from message N"),
    ("fork", "Copy this branch into a new session: /fork [N|ENTRY [files]] from a point"),
    (
        "rewind",
        "Files and conversation back to a point: /rewind N|ENTRY [files|conversation], /rewind undo",
    ),
    ("name", "Name this session: /name NAME"),
    ("anchor", "Mark this point: /anchor NAME"),
    ("anchors", "List anchors; /anchors NAME continues from one"),
    ("handoff", "Summarise and continue in a fresh session: /handoff [focus]"),
    ("search", "Search every session: /search WORDS"),
    ("export", "Export this session: /export [html|md|json] [FILE]"),
    ("tools", "List the tools with their permission level and the permission mode"),
    ("reload", "Read skills, prompt commands, agents, settings and MCP servers again"),
    (
        "profile",
        "Settings profile: /profile NAME applies one, /profile none none; alone, lists them",
    ),
    (
        "login",
        "Store an API key: /login PROVIDER (asks for it); alone, lists the keys and sign-ins",
    ),
    ("logout", "Forget a stored API key: /logout PROVIDER"),
    ("init", "Explore the repository (read-only) and propose an AGENTS.md to write"),
    ("memory", "Edit the instruction files in your editor: /memory [user|project|local|N]"),
    (
        "cron",
        "Scheduled prompts (UTC): /cron lists, /cron add|once MIN HOUR DAY MONTH WEEKDAY PROMPT, /cron delete ID",
    ),
    ("copy", "Copy the last answer to the clipboard (OSC 52, over SSH too); elsewhere print it"),
    ("status", "Model, endpoint, key, sandbox, trust, MCP servers and plugins, context use"),
    ("permissions", "The rules in effect; /permissions allow|ask|deny|remove RULE changes yours"),
];

/// `/fork N|ENTRY [files]`: a new session from a point, with its files if asked.
fn fork_at(args: &str, session: &mut AgentSession, launch: &Launch) -> Outcome {
    let mut words = args.split_whitespace();
    let point = words.next().unwrap_or_default();
    let files = match words.next() {
        None => false,
        Some("files") => true,
        Some(other) => {
            return Outcome::Error(format!("/fork: unknown word {other:?}; /fork N|ENTRY [files]"));
        }
    };
    let target = match crate::rewind::resolve_point(session.tape(), point) {
        Ok(t) => t,
        Err(e) => return Outcome::Error(e),
    };
    let dir = rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd);
    let store = crate::checkpoint::store(launch.paths.home());
    match session.fork_at(&dir, target.as_deref(), files.then_some(&store)) {
        Ok((path, report)) => {
            let mut lines = vec![format!("forked into {}", path.display())];
            lines.extend(report.iter().flat_map(crate::rewind::Report::lines));
            Outcome::Info(lines.join("\n"))
        }
        Err(e) => Outcome::Error(e),
    }
}

/// `/rewind N|ENTRY [files|conversation] [force]`, `/rewind undo [force]`.
fn rewind_args(args: &str) -> Outcome {
    let mut words = args.split_whitespace();
    let Some(point) = words.next() else {
        return Outcome::Error(
            "/rewind takes a point: N (the end of the N-th prompt's turn, 0 before the first) \
             or an entry id, then files or conversation for one of them; /rewind undo undoes \
             the last rewind"
                .into(),
        );
    };
    let mut what = crate::rewind::What { files: true, conversation: true, force: false };
    for w in words {
        match w {
            "files" => what.conversation = false,
            "conversation" => what.files = false,
            "force" | "--force" => what.force = true,
            other => {
                return Outcome::Error(format!(
                    "/rewind: unknown word {other:?}; after the point: files, conversation or force"
                ));
            }
        }
    }
    if !what.files && !what.conversation {
        return Outcome::Error("/rewind: files or conversation, not both".into());
    }
    Outcome::Rewind((point != "undo").then(|| point.to_owned()), what)
}

/// `/profile`: the profiles the settings files define, the one in effect marked.
fn profiles_info(launch: &Launch) -> String {
    if launch.profiles.is_empty() {
        return "No profiles: add \"profiles\": {\"NAME\": {…settings…}} to settings.json, then \
                /profile NAME or rab --profile NAME."
            .to_owned();
    }
    let mut out = String::from("Profiles (/profile NAME applies one, /profile none leaves it):\n");
    for p in &launch.profiles {
        let mark = if launch.profile.as_deref() == Some(p.as_str()) { "* " } else { "  " };
        out.push_str(&format!("{mark}{p}\n"));
    }
    out.trim_end().to_owned()
}

/// Help text listing the commands.
pub fn help(extensions: &Extensions) -> String {
    let mut out = String::from("Commands (each also runs as ,name):\n");
    for c in extensions.commands() {
        let hint = c.argument_hint.as_deref().map_or(String::new(), |h| format!(" {h}"));
        out.push_str(&format!("  /{:<10} {}{hint}\n", c.name, c.description));
    }
    out.push_str(
        "  !cmd        Run a shell command; its output goes to the model with your next message\n",
    );
    out.push_str("  !!cmd       Run a shell command without sending it to the model\n");
    out.push_str(
        "  ,cmd        Run a shell command (any other word after the comma); show its output\n",
    );
    out.push_str("  ,,cmd       Run it and send the command and its output to the model\n");
    out
}

/// Prepares a command's prompt: switches the model it names and allows its
/// `allowed-tools` until the next `gate.grant`.
pub fn apply_prompt(
    request: &crate::PromptRequest,
    session: &mut AgentSession,
    launch: &Launch,
) -> Result<(), String> {
    if let Some(m) = &request.model {
        let t = launch.resolve_model(m)?;
        session.set_model(t.model, t.api_key, Some(t.auth_hint));
    }
    launch.gate.grant(&request.allowed_tools).map_err(|e| format!("allowed-tools: {e}"))
}

/// Runs built-in command `name` against the session.
fn execute(
    name: &str,
    args: &str,
    session: &mut AgentSession,
    launch: &Launch,
    extensions: &Extensions,
) -> Outcome {
    match name {
        "help" => Outcome::Info(help(extensions)),
        "quit" | "exit" => Outcome::Quit,
        "new" => Outcome::NewSession,
        // As in Claude Code: a new conversation. The screen alone: a key (Alt+L).
        "clear" => Outcome::NewSession,
        "hotkeys" => Outcome::Hotkeys,
        "memory" => memory(args, launch),
        "cron" => cron(args, launch),
        "resume" => Outcome::Resume((!args.is_empty()).then(|| args.to_owned())),
        "model" if args.is_empty() => Outcome::PickModel,
        "model" => match launch.resolve_model(args) {
            Ok(t) => {
                let mut text = format!("model: {} ({})", t.model.id, t.model.provider);
                if let Some(note) = &t.note {
                    text.push_str(&format!("\n{note}"));
                }
                session.set_model(t.model, t.api_key, Some(t.auth_hint));
                Outcome::Info(text)
            }
            Err(e) => Outcome::Error(e),
        },
        "thinking" => match rab_ai::ThinkingLevel::parse(args) {
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
        "compact" => Outcome::Compact((!args.is_empty()).then(|| args.to_owned())),
        "handoff" => Outcome::Handoff((!args.is_empty()).then(|| args.to_owned())),
        "tree" if args.is_empty() => Outcome::Tree,
        "tree" => tree_pick(args, session),
        "fork" if args.is_empty() => {
            let dir = rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd);
            match session.fork(&dir) {
                Ok(path) => Outcome::Info(format!("forked into {}", path.display())),
                Err(e) => Outcome::Error(e),
            }
        }
        "fork" => fork_at(args, session, launch),
        "name" if args.is_empty() => Outcome::Info(session.name().map_or_else(
            || "this session has no name; /name NAME sets one".into(),
            |n| format!("name: {n}"),
        )),
        "name" => match session.set_name(args) {
            Ok(()) => Outcome::Info(format!("named: {args}")),
            Err(e) => Outcome::Error(e),
        },
        "anchor" if args.is_empty() => Outcome::Error("/anchor takes a name".into()),
        "anchor" => match session.add_anchor(args) {
            Ok(()) => Outcome::Info(format!("anchor \"{args}\" set")),
            Err(e) => Outcome::Error(e),
        },
        "anchors" => {
            let anchors = session.anchors();
            if args.is_empty() {
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
            match anchors.into_iter().find(|(n, _)| *n == args) {
                Some((_, id)) => Outcome::Branch(id, false),
                None => Outcome::Error(format!("no anchor named \"{args}\"; /anchors lists them")),
            }
        }
        "search" if args.is_empty() => Outcome::Error("/search takes words to find".into()),
        "search" => Outcome::Search(args.to_owned()),
        "export" => export(args, session, launch),
        "cost" => Outcome::Info(cost_info(session)),
        "settings" => Outcome::Settings(settings_info(launch, session)),
        "tools" => Outcome::Info(tools_info(launch, session)),
        "status" => Outcome::Info(status::status(launch, session)),
        "init" => Outcome::Init,
        // The terminal UI copies to the clipboard itself; elsewhere the answer is printed.
        "copy" => match last_answer(session) {
            Some(text) => Outcome::Info(text),
            None => Outcome::Error("no answer to copy yet".into()),
        },
        "permissions" => status::permissions(args, launch),
        "reload" => Outcome::Reload,
        "rewind" => rewind_args(args),
        "profile" if args.is_empty() => Outcome::Info(profiles_info(launch)),
        "profile" if args == "none" && !launch.profiles.iter().any(|p| p == "none") => {
            Outcome::Profile(None)
        }
        "profile" => Outcome::Profile(Some(args.to_owned())),
        "login" if args.is_empty() => Outcome::Info(login::list(launch)),
        // A browser sign-in, where the provider's terms allow one.
        "login" if args.split_whitespace().any(|a| a == "--chatgpt" || a == "--oauth") => {
            match args.split_whitespace().next().unwrap_or_default() {
                p @ ("openai" | "openrouter") => Outcome::SignIn(p.to_owned()),
                other => Outcome::Error(format!(
                    "{other} offers no sign-in that allows rab (openai and openrouter do); \
                     /login {other} stores an API key"
                )),
            }
        }
        "login" => Outcome::Login(args.to_owned()),
        "logout" => login::logout(launch, args),
        other => Outcome::Error(format!("unknown command /{other}; /help lists the commands")),
    }
}

/// The tree as numbered lines (the numbers `/tree N` takes).
pub fn tree_text(session: &AgentSession) -> String {
    tree_lines(&session.tree())
}

/// Tree items as numbered lines (the numbers `/tree N` takes).
pub fn tree_lines(items: &[crate::TreeItem]) -> String {
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

/// Where the search index of every session lives under rab's home.
pub fn index_dir(home: &Path) -> std::path::PathBuf {
    home.join("index")
}

/// `/search WORDS`: the best 20 hits across every session, as text.
pub fn search(query: &str, sessions_root: &Path, home: &Path) -> Result<String, String> {
    let index = index_dir(home);
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
    match export_session(session, launch, format, file) {
        Ok(file) => Outcome::Info(format!("exported to {}", file.display())),
        Err(e) => Outcome::Error(e),
    }
}

/// Writes `session` as `format` to `file` (relative to the working directory), or
/// beside the session file (not in the project) when none is given; the file written.
pub fn export_session(
    session: &AgentSession,
    launch: &Launch,
    format: rab_session::export::ExportFormat,
    file: Option<std::path::PathBuf>,
) -> Result<std::path::PathBuf, String> {
    let file = match file {
        Some(f) => launch.cwd.join(f),
        None => {
            let dir = session.tape().path().and_then(|p| p.parent()).map_or_else(
                || rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd),
                std::path::Path::to_owned,
            );
            dir.join(format!("rab-session-{}.{}", session.tape().id(), format.extension()))
        }
    };
    let text = rab_session::export::export(session.tape(), format).map_err(|e| e.to_string())?;
    rab_tools::atomic_write::write_atomic(&file, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}

/// The tools, their levels, which are deferred, and the permission mode.
fn tools_info(launch: &Launch, session: &AgentSession) -> String {
    let agent = session.agent();
    let sent = agent.request_specs();
    let mut out = format!(
        "Permission mode: {} (Shift+Tab or --permission-mode changes it)\nTools ({}):\n",
        launch.gate.mode().get().as_str(),
        agent.tools().len()
    );
    for tool in agent.tools() {
        let spec = tool.spec();
        let is_stub = !sent.iter().any(|s| s.name == spec.name);
        let note = match rab_ai::search_unavailable(&agent.config().model, &spec) {
            Some(why) => format!("  (not offered: {why})"),
            None if is_stub => "  (schema on request via tool_search)".to_owned(),
            None if spec.server.is_some() => "  (runs at the provider)".to_owned(),
            None => String::new(),
        };
        out.push_str(&format!("  {:<16} {:<10}{note}\n", spec.name, tool.level().as_str()));
    }
    if agent.tools().is_empty() {
        out.push_str("  none (--no-tools)\n");
    }
    out
}

/// The text of the last answer with any, for `/copy`.
pub fn last_answer(session: &AgentSession) -> Option<String> {
    session.agent().messages().iter().rev().find_map(|m| match m {
        rab_ai::Message::Assistant(a) => Some(a.text()).filter(|t| !t.trim().is_empty()),
        _ => None,
    })
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
    let sub = session.sub_agents();
    if sub.requests > 0 || sub.cost > 0.0 {
        out.push_str(&format!(
            "\nsub-agents: {} in ({} cached), {} out; ${:.4} over {} requests\ntotal: ${:.4}",
            sub.usage.total_input(),
            sub.usage.cache_read,
            sub.usage.output,
            sub.cost,
            sub.requests,
            t.cost + sub.cost
        ));
    }
    let listed = session.turn_costs();
    let earlier = (t.turns as usize).saturating_sub(listed.len());
    if earlier > 0 {
        out.push_str(&format!("\n  ({earlier} earlier requests not listed)"));
    }
    for (i, turn) in listed.iter().enumerate() {
        let u = &turn.usage;
        out.push_str(&format!(
            "\n  {:>3}. in {} (cache read {}, write {}), out {}: ${:.4}",
            earlier + i + 1,
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

/// `/memory`: the instruction files to open (the three scopes', then the others in
/// effect), and the one an argument names (`user`, `project`, `local` or a number).
fn memory(args: &str, launch: &Launch) -> Outcome {
    let home = launch.paths.home();
    let in_effect: Vec<std::path::PathBuf> =
        crate::context_files(&launch.cwd, home, &launch.prompt_files)
            .into_iter()
            .map(|f| f.path)
            .collect();
    let files = crate::memory::memory_files(&launch.cwd, home, &in_effect);
    let args = args.trim();
    let open = if args.is_empty() {
        None
    } else {
        let by_scope = crate::memory::MemoryScope::parse(args)
            .and_then(|scope| files.iter().position(|f| f.scope == Some(scope)));
        let by_number = || args.parse::<usize>().ok()?.checked_sub(1).filter(|i| *i < files.len());
        match by_scope.or_else(by_number) {
            Some(i) => Some(i),
            None => {
                return Outcome::Error(format!(
                    "/memory takes user, project, local or a number from 1 to {} (not '{args}')",
                    files.len()
                ));
            }
        }
    };
    Outcome::Memory { files, open }
}

/// `/cron`: lists, adds (`add`: recurring, `once`: one-off) and deletes scheduled
/// prompts, as the cron tools do.
fn cron(args: &str, launch: &Launch) -> Outcome {
    if !launch.schedules() {
        return Outcome::Error(
            "scheduled prompts need a mode that stays running: the terminal UI, the REPL, \
             RPC or a chat channel (print mode ends before any would run)"
                .into(),
        );
    }
    let scheduler = &launch.scheduler;
    let (verb, rest) = args.trim().split_once(char::is_whitespace).unwrap_or((args.trim(), ""));
    match verb {
        "" | "list" => {
            let jobs = scheduler.list();
            if jobs.is_empty() {
                return Outcome::Info(
                    "no scheduled prompts; /cron add MIN HOUR DAY MONTH WEEKDAY PROMPT adds one \
                     (UTC), e.g. /cron add 0 8 * * 1-5 check CI and tell me"
                        .into(),
                );
            }
            let lines: Vec<String> = jobs.iter().map(crate::cron::Job::line).collect();
            let kept =
                if scheduler.is_durable() { "kept across restarts" } else { "until rab exits" };
            Outcome::Info(format!("{}\n(UTC; {kept})", lines.join("\n")))
        }
        "add" | "once" => {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.len() < 6 {
                return Outcome::Error(format!(
                    "/cron {verb} takes five schedule fields and a prompt: MIN HOUR DAY MONTH \
                     WEEKDAY PROMPT (UTC), e.g. /cron {verb} 0 8 * * 1-5 check CI and tell me"
                ));
            }
            let prompt = words[5..].join(" ");
            match scheduler.add(&words[..5].join(" "), &prompt, verb == "add") {
                Ok(job) => Outcome::Info(format!(
                    "{} scheduled: {} (UTC), next {}",
                    job.id,
                    job.schedule_text(),
                    rab_session::time::rfc3339(job.next_ms)
                )),
                Err(e) => Outcome::Error(format!("not scheduled: {e}")),
            }
        }
        "delete" | "rm" | "remove" if !rest.trim().is_empty() => {
            let id = rest.trim();
            if scheduler.remove(id) {
                Outcome::Info(format!("{id} deleted"))
            } else {
                Outcome::Error(format!("no scheduled prompt {id}; /cron lists them"))
            }
        }
        other => {
            Outcome::Error(format!("/cron takes list, add, once or delete ID (not '{other}')"))
        }
    }
}
