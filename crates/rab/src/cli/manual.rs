//! What `rab completions SHELL` and `rab man` print: the completion scripts and the man
//! page, made from the command line's own description.

use super::Cli;

/// The completion script for `shell`, as `rab completions SHELL` prints it.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rab", &mut out);
    out
}

/// rab's man page (roff), as `rab man` prints it: clap's sections (the name said once),
/// then EXIT STATUS, ENVIRONMENT, FILES and the examples as a verbatim block.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    use clap::CommandFactory;
    use std::io::Write;
    let cmd = Cli::command();
    let about = cmd.get_about().map(ToString::to_string).unwrap_or_default();
    // NAME reads `rab \- WHAT`: the about's own `rab: ` would say the name twice.
    let what = about.strip_prefix("rab: ").unwrap_or(&about).trim_end_matches('.').to_owned();
    let examples = cmd.get_after_help().map(ToString::to_string).unwrap_or_default();
    let man = clap_mangen::Man::new(cmd.about(what));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    let list = |out: &mut Vec<u8>, title: &str, rows: &[(&str, &str)]| -> std::io::Result<()> {
        writeln!(out, ".SH \"{title}\"")?;
        for (term, text) in rows {
            writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(term), roff(text))?;
        }
        Ok(())
    };
    list(&mut out, "EXIT STATUS", EXIT_STATUS)?;
    list(&mut out, "ENVIRONMENT", ENVIRONMENT)?;
    list(&mut out, "FILES", FILES)?;
    writeln!(out, ".SH EXAMPLES\n.nf")?;
    for line in examples.lines().skip_while(|l| l.trim_end().ends_with(':')) {
        writeln!(out, "{}", roff(line))?;
    }
    writeln!(out, ".fi")?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// `text` safe in roff: backslashes and hyphens escaped, no line read as a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    match escaped.chars().next() {
        Some('.' | '\'') => format!("\\&{escaped}"),
        _ => escaped,
    }
}

/// The exit codes (docs/stream-json.md has the same table).
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "the model finished"),
    ("1", "a model or provider error (an HTTP error, a broken stream, a missing key)"),
    ("2", "a bad command line or config file"),
    (
        "3",
        "--max-turns reached before the model finished (print mode stops at 100 turns when neither --max-turns nor maxTurns says otherwise)",
    ),
    ("4", "the next request would have taken spending past --max-budget-usd"),
    (
        "5",
        "the model finished, but tool calls were refused (by a rule, the permission mode, a hook, the user, or nobody being there to approve)",
    ),
    ("6", "the model was stopped for repeating itself"),
    ("7", "the reply was cut off at the output limit even after one automatic continuation"),
    ("130", "interrupted (SIGINT); the session stays consistent"),
];

/// The environment rab reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("RAB_HOME", "rab's home instead of ~/.rab (settings, keys, sessions, logs)"),
    (
        "ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY), OPENROUTER_API_KEY, DEEPSEEK_API_KEY, MISTRAL_API_KEY, GROQ_API_KEY, XAI_API_KEY",
        "the providers' keys (also stored with /login in ~/.rab/agent/auth.json)",
    ),
    (
        "ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GEMINI_BASE_URL, OLLAMA_BASE_URL, …",
        "another endpoint for a provider (a proxy, a local server)",
    ),
    (
        "RAB_PROVIDER, RAB_MODEL, RAB_THINKING",
        "the provider, model and thinking level when the command line gives none (over the settings)",
    ),
    ("RAB_TRUST_PROJECT=1", "trust this folder without asking (as --trust-project)"),
    (
        "RAB_LOG",
        "what is logged to ~/.rab/logs/rab.log (a tracing filter, e.g. debug or rab_ai=trace; default warn)",
    ),
    ("RAB_TODAY", "the date the system prompt gives (YYYY-MM-DD), for reproducible runs"),
    ("VISUAL, EDITOR", "the editor Ctrl+G opens the prompt in"),
    (
        "RAB_UPDATE_URL",
        "where rab update asks for the latest release (GitHub's API by default; off: not at all)",
    ),
    ("NO_COLOR", "no colours in the terminal UI"),
];

/// The files rab reads and writes.
const FILES: &[(&str, &str)] = &[
    (
        "~/.rab/agent/settings.json",
        "your settings (permissions, hooks, sandbox, model); /settings edits them",
    ),
    (
        ".rab/settings.json, .rab/settings.local.json",
        "a project's settings (read once the folder is trusted)",
    ),
    (
        ".claude/settings.json",
        "Claude Code's project settings, whose rules rab applies where it can",
    ),
    ("~/.rab/agent/auth.json", "keys and sign-ins stored with /login (readable by you only)"),
    ("~/.rab/agent/answers.json", "your \"always\" answers, per project"),
    ("~/.rab/models.json", "your own providers and models, with their prices"),
    ("~/.rab/sessions/", "every session, one JSON-lines file each (rab sessions lists them)"),
    (
        "AGENTS.md, CLAUDE.md (and .local.md)",
        "instructions for the model, from the project root down to where rab runs, and ~/.rab/AGENTS.md",
    ),
    (
        "~/.rab/SYSTEM.md, ~/.rab/APPEND_SYSTEM.md",
        "your own system prompt, or text appended to rab's",
    ),
    (".mcp.json", "a project's MCP servers (read once the folder is trusted)"),
    ("~/.rab/extensions/", "WASM plugins"),
    ("~/.rab/trusted.json", "the folders you trusted"),
    ("~/.rab/logs/rab.log", "the log (RAB_LOG sets how much)"),
];
