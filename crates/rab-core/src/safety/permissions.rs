//! Permission modes and rules: which tool calls run, which ask, which never run.
//!
//! A rule is a tool name with an optional pattern: `bash(git status*)`, `edit(src/**)`,
//! `read(~/.ssh/**)`, `web_fetch(domain:example.com)`, `mcp__server__tool`. Claude
//! Code's names (`Bash`, `Edit`, `WebFetch`, …) and its `prefix:*` form are accepted.
//! `deny` beats `ask` beats `allow`; deny rules hold in every mode. Anything not
//! understood — an unknown tool, a malformed rule, an unknown mode — is an error at
//! load naming the file and the rule, never a rule silently dropped.

use crate::shell_scan;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use rab_agent::ToolLevel;
use rab_config::SafetyLayer;
use serde_json::Value;

pub(crate) use matching::wildcard;
use matching::{command_matches, host_of, rule_host};

mod matching;

pub use crate::tool_catalog::ToolCatalog;

/// How much runs without asking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PermissionMode {
    /// Ask before edits, commands and network use unless a rule allows them.
    #[default]
    Default,
    /// Edits run; commands and network use ask.
    AcceptEdits,
    /// Read-only tools only.
    Plan,
    /// Everything runs (deny rules still hold).
    Yolo,
}

impl PermissionMode {
    /// Parses a mode (`acceptEdits`, `bypassPermissions` accepted too).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(Self::Default),
            "accept-edits" | "acceptEdits" => Some(Self::AcceptEdits),
            "plan" => Some(Self::Plan),
            "yolo" | "bypass" | "bypassPermissions" => Some(Self::Yolo),
            _ => None,
        }
    }

    /// The name shown and written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::Yolo => "yolo",
        }
    }

    /// Claude Code's name of the mode (`default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`): what its hooks and its JSON output's readers expect.
    pub fn claude_name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Yolo => "bypassPermissions",
        }
    }

    /// The next mode for Shift+Tab: default → accept-edits → plan → default. `yolo` is
    /// only in the cycle when rab was started in it.
    pub fn next(self, has_yolo: bool) -> Self {
        match self {
            Self::Default => Self::AcceptEdits,
            Self::AcceptEdits => Self::Plan,
            Self::Plan if has_yolo => Self::Yolo,
            Self::Plan | Self::Yolo => Self::Default,
        }
    }
}

/// What the policy says about a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the user; the text says why.
    Ask(String),
    /// Refuse; the text says why and goes to the model.
    Deny(String),
    /// A write to a protected path: ask in every mode, never remember "always"; nobody
    /// to ask refuses with the advice (the one way to allow it).
    Protected {
        /// Why it asks.
        reason: String,
        /// How the user allows it for good.
        advice: String,
    },
}

/// A rule that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: permissions.{list}: {message} in rule \"{rule}\"; see docs/permissions.md")]
pub struct RuleError {
    /// The settings file (or `--allowed-tools`).
    pub file: String,
    /// `allow`, `ask`, `deny` or `defaultMode`.
    pub list: &'static str,
    /// The rule as written.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Clone, Debug)]
enum Pattern {
    /// Any call of the tool.
    Any,
    /// Commands (bash): a glob over the whole command, or a prefix (`cmd:*`).
    Command { glob: String, is_prefix: bool },
    /// Paths (file tools).
    Path(GlobMatcher),
    /// Hosts (`domain:example.com`).
    Domain(String),
}

/// One parsed rule.
#[derive(Clone, Debug)]
struct Rule {
    /// Canonical tool name, or an `mcp__SERVER` / `plugin__NAME` prefix (ending in `__`).
    tool: String,
    pattern: Pattern,
    text: String,
}

/// The rules and what they apply to.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    allow: Vec<Rule>,
    /// Allowed for the prompt being answered (a prompt command's `allowed-tools`).
    granted: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    root: PathBuf,
    home: Option<PathBuf>,
    tools: ToolCatalog,
    /// Rules of Claude Code's project settings that rab cannot use (a tool it does not
    /// have), one line each.
    skipped: Vec<String>,
    /// Some rule is about bash, so bash commands are parsed.
    reads_commands: bool,
    /// Protected paths, and the user's own rules naming them.
    protected: crate::safety::protected::ProtectedPaths,
    /// Paths the allow rules of the user's own settings name exactly.
    user_paths: Vec<PathBuf>,
    /// The user's own settings file.
    user_settings: Option<PathBuf>,
    /// The files the read deny rules cover, by identity.
    denied_files: crate::safety::denied_files::DeniedFiles,
}

/// What the policy needs besides the rules.
pub struct PolicyContext<'a> {
    /// The tools rules may name (every built-in, not only the enabled ones).
    pub tools: &'a ToolCatalog,
    /// The project root; relative patterns are under it.
    pub root: &'a Path,
    /// The home directory, for `~`.
    pub home: Option<&'a Path>,
}

impl Policy {
    /// The tools rules may name, with their facts.
    pub fn tools(&self) -> &ToolCatalog {
        &self.tools
    }

    /// Checks `rule` as the settings loader will read it: `Err` says what is wrong
    /// (with the tool meant, when a name is near one), before a command writes it.
    pub fn check_rule(&self, rule: &str) -> Result<(), String> {
        let cx = PolicyContext { tools: &self.tools, root: &self.root, home: self.home.as_deref() };
        parse_rule(rule, &cx).map(|_| ())
    }

    /// Parses every layer's rules and the command line's (`--allowed-tools`,
    /// `--disallowed-tools`); the first bad rule is the error.
    pub fn load(
        layers: &[SafetyLayer],
        cli_allow: &[String],
        cli_deny: &[String],
        cx: &PolicyContext<'_>,
    ) -> Result<Self, RuleError> {
        let mut policy = Self {
            root: cx.root.to_path_buf(),
            home: cx.home.map(Path::to_path_buf),
            tools: cx.tools.clone(),
            ..Self::default()
        };
        for layer in layers {
            let source = layer.source.display().to_string();
            let p = &layer.permissions;
            if let Some(mode) = &p.default_mode
                && PermissionMode::parse(mode).is_none()
            {
                return Err(RuleError {
                    file: source,
                    list: "defaultMode",
                    rule: mode.clone(),
                    message: "unknown mode (use default, accept-edits, plan or yolo)".into(),
                });
            }
            for (list, rules, out) in [
                ("allow", &p.allow, &mut policy.allow),
                ("ask", &p.ask, &mut policy.ask),
                ("deny", &p.deny, &mut policy.deny),
            ] {
                let before = out.len();
                // Claude Code has tools rab has not: its files' rules that cannot apply
                // here are skipped. So is a tool rab does not have (Claude Code's
                // `NotebookEdit`, a typo) in the user's own settings: a warning, not a
                // refusal to start. A malformed rule is still an error there, and so is
                // anything a project's own file gets wrong (a project's deny rule must
                // not silently vanish).
                let claude = layer.scope == rab_config::Scope::Claude;
                let own =
                    matches!(layer.scope, rab_config::Scope::Global | rab_config::Scope::Answers);
                for text in rules {
                    match parse_rule(text, cx) {
                        Ok(rule) => out.push(rule),
                        Err(e) if claude || (own && e.starts_with(UNKNOWN_TOOL)) => {
                            policy.skipped.push(format!(
                                "{source}: permissions.{list}: rule \"{text}\" skipped: {e}"
                            ));
                        }
                        Err(message) => {
                            return Err(RuleError {
                                file: source,
                                list,
                                rule: text.clone(),
                                message,
                            });
                        }
                    }
                }
                if layer.scope == rab_config::Scope::Global && list == "allow" {
                    policy.user_settings = Some(layer.source.clone());
                    policy.user_paths.extend(out[before..].iter().filter_map(
                        |r| match &r.pattern {
                            Pattern::Path(glob)
                                if !glob.glob().glob().contains(['*', '?', '[', '{']) =>
                            {
                                Some(PathBuf::from(glob.glob().glob()))
                            }
                            _ => None,
                        },
                    ));
                }
            }
        }
        parse_rules(cli_allow, "--allowed-tools", "allow", cx, &mut policy.allow)?;
        parse_rules(cli_deny, "--disallowed-tools", "deny", cx, &mut policy.deny)?;
        policy.note_bash_rules();
        Ok(policy)
    }

    fn note_bash_rules(&mut self) {
        let mut all = self.allow.iter().chain(&self.granted).chain(&self.ask).chain(&self.deny);
        self.reads_commands = all.any(|r| r.applies("bash", &self.tools));
    }

    /// Whether a `read(...)` deny rule covers `path` (absolute, as written: the tools
    /// ask again with the target of a symbolic link): grep, glob and ls leave such
    /// paths out of their results.
    pub fn read_denied(&self, path: &Path) -> bool {
        self.deny.iter().any(|r| {
            r.tool == "read"
                && match &r.pattern {
                    Pattern::Path(glob) => glob.is_match(path),
                    Pattern::Any => true,
                    _ => false,
                }
        }) || self.denied_files.contains(path)
    }

    /// The existing paths the `read(...)` deny rules cover, for the sandbox to hide from
    /// commands (at most `max`; the flag says whether more were left out), and indexes
    /// the files among them by identity, so that another name for one is denied too.
    pub fn read_denied_paths(&mut self, max: usize) -> (Vec<PathBuf>, bool) {
        let globs: Vec<&GlobMatcher> = self
            .deny
            .iter()
            .filter(|r| r.tool == "read")
            .filter_map(|r| match &r.pattern {
                Pattern::Path(glob) => Some(glob),
                _ => None,
            })
            .collect();
        let (mut paths, is_cut) = crate::safety::denied_files::existing(&globs);
        self.denied_files = crate::safety::denied_files::DeniedFiles::index(&paths);
        let is_cut = is_cut || paths.len() > max;
        paths.truncate(max);
        (paths, is_cut)
    }

    /// Makes writes to the protected paths under `roots` (the workspace roots), `home`'s
    /// start-up files and `rab_home` ask in every mode.
    pub fn set_protected(
        &mut self,
        roots: &[PathBuf],
        home: Option<&Path>,
        rab_home: Option<&Path>,
    ) {
        self.protected = crate::safety::protected::ProtectedPaths::new(roots, home, rab_home)
            .with_user_rules(self.user_paths.clone(), self.user_settings.clone());
    }

    /// What the rules make of the provider's web search, which runs on the provider's
    /// side, so no call of it can be checked or asked about: whether it is offered at
    /// all (not with a `deny` or `ask` rule for every search), the domains `allow`
    /// rules name (searches keep to them when there are any) and the domains `deny` and
    /// `ask` rules name (never searched).
    pub fn search_rules(&self, tool: &str) -> (bool, Vec<String>, Vec<String>) {
        let of = |rules: &[Rule]| -> Vec<String> {
            rules
                .iter()
                .filter(|r| r.tool == tool)
                .filter_map(|r| match &r.pattern {
                    Pattern::Domain(d) => Some(d.clone()),
                    _ => None,
                })
                .collect()
        };
        let every = |rules: &[Rule]| {
            rules.iter().any(|r| r.tool == tool && matches!(r.pattern, Pattern::Any))
        };
        let offered = !every(&self.deny) && !every(&self.ask);
        let mut blocked = of(&self.deny);
        blocked.extend(of(&self.ask));
        (offered, of(&self.allow), blocked)
    }

    /// Rules that were skipped (Claude Code's that rab cannot apply, and rules naming a
    /// tool rab does not have), one line each.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Adds an allow rule (the user's "always").
    pub fn add_allow(&mut self, text: &str) -> Result<(), String> {
        let tools = self.tools.clone();
        let cx = PolicyContext { tools: &tools, root: &self.root, home: self.home.as_deref() };
        self.allow.push(parse_rule(text, &cx)?);
        self.note_bash_rules();
        Ok(())
    }

    /// Allows `rules` until [`Policy::set_granted`] is called again (a prompt
    /// command's or skill's `allowed-tools`, for the prompt it sends). Deny and ask
    /// rules still win. A bad rule leaves the grants empty.
    pub fn set_granted(&mut self, rules: &[String]) -> Result<(), String> {
        let tools = self.tools.clone();
        let cx = PolicyContext { tools: &tools, root: &self.root, home: self.home.as_deref() };
        self.granted.clear();
        let parsed: Result<Vec<Rule>, String> = rules.iter().map(|r| parse_rule(r, &cx)).collect();
        self.granted = parsed?;
        self.note_bash_rules();
        Ok(())
    }

    /// The verdict on calling `tool` (of `level`) with `args` in `mode`.
    pub fn check(
        &self,
        mode: PermissionMode,
        tool: &str,
        level: ToolLevel,
        args: &Value,
    ) -> Verdict {
        self.check_as(mode, tool, None, level, args)
    }

    /// [`Policy::check`] for a tool that rules may also name by `alias` (a plugin's
    /// tool: `plugin__NAME__TOOL`).
    pub fn check_as(
        &self,
        mode: PermissionMode,
        tool: &str,
        alias: Option<&str>,
        level: ToolLevel,
        args: &Value,
    ) -> Verdict {
        // A command is parsed once, for every rule.
        let scan = match (tool, args.get("command").and_then(Value::as_str)) {
            ("bash", Some(cmd)) if self.reads_commands || mode == PermissionMode::Plan => {
                Some(shell_scan::scan(cmd))
            }
            _ => None,
        };
        let call = Call { tool, alias, args, scan: scan.as_ref() };
        if let Some(rule) = self.deny.iter().find(|r| self.matches_any(r, &call)) {
            return Verdict::Deny(format!("denied by the rule \"{}\"", rule.text));
        }
        if let Some(p) = args.get("path").and_then(Value::as_str)
            && let Some(rule) = self.deny.iter().find(|r| {
                r.tool == "read"
                    && matches!(r.pattern, Pattern::Path(_))
                    && r.names(&call, &self.tools)
            })
            && self.denied_files.contains(&self.resolve(p))
        {
            return Verdict::Deny(format!(
                "{p} is another name (a hard link or a mount) for a file a read deny rule \
                 covers (\"{}\")",
                rule.text
            ));
        }
        if let Some(why) = scan.as_ref().and_then(|s| s.unknown.as_deref())
            && let Some(rule) = self.deny.iter().find(|r| r.covers_commands(tool, &self.tools))
        {
            return Verdict::Deny(format!(
                "rab cannot tell which commands this runs: {why}. A deny rule for bash \
                 (\"{}\") is in effect, and deny rules only hold for commands rab can read, \
                 so it refuses the command. Write the command out plainly (no eval, no \
                 command in a variable, no shell reading a pipe)",
                rule.text
            ));
        }
        // PowerShell is another way to run any command; rab reads only sh's syntax.
        if tool == "powershell"
            && let Some(rule) = self.deny.iter().find(|r| r.covers_commands("bash", &self.tools))
        {
            return Verdict::Deny(format!(
                "a deny rule for bash (\"{}\") is in effect, and rab can hold it only for sh \
                 commands, which it reads: PowerShell commands are refused while it is. Use bash",
                rule.text
            ));
        }
        if mode == PermissionMode::Plan && level != ToolLevel::ReadOnly {
            let why = match scan.as_ref().filter(|_| tool == "bash") {
                Some(scan) => match self.plan_reads(scan) {
                    Ok(()) => return Verdict::Allow,
                    Err(why) => format!("this command is not read-only: {why}"),
                },
                None => format!("{tool} {}", level_phrase(level)),
            };
            return Verdict::Deny(format!(
                "plan mode allows read-only tools and read-only commands only (git \
                 diff/log/show/status, rg, grep, ls, cat, find … inside the project), and {why}. \
                 Present the plan with exit_plan_mode; in a run without a person, give the plan \
                 as your answer"
            ));
        }
        if level == ToolLevel::Edit
            && let Some(p) = args.get("path").and_then(Value::as_str)
        {
            let lexical = self.resolve(p);
            let real = rab_tools::sandbox::real_path(&lexical);
            if let Some(reason) = self.protected.check(&lexical, &real) {
                // A tool that writes through `path` without being a path tool (`config
                // set`) is allowed by the edit rule that covers it.
                let rule_tool = if self.tools.is_path_tool(tool) || self.tools.covers("edit", tool)
                {
                    "edit"
                } else {
                    tool
                };
                let advice = self.protected.how_to_allow(rule_tool, &lexical);
                return Verdict::Protected { reason, advice };
            }
        }
        if mode == PermissionMode::Yolo {
            return Verdict::Allow;
        }
        if let Some(rule) = self.ask.iter().find(|r| self.matches_any(r, &call)) {
            return Verdict::Ask(format!("the rule \"{}\" asks", rule.text));
        }
        if let Some(why) = scan.as_ref().and_then(|s| s.unknown.as_deref())
            && let Some(rule) = self.ask.iter().find(|r| r.covers_commands(tool, &self.tools))
        {
            return Verdict::Ask(format!(
                "rab cannot tell which commands this runs ({why}), and the rule \"{}\" asks",
                rule.text
            ));
        }
        if self.allowed(&call) {
            return Verdict::Allow;
        }
        match level {
            ToolLevel::ReadOnly => Verdict::Allow,
            ToolLevel::Edit if mode == PermissionMode::AcceptEdits => Verdict::Allow,
            ToolLevel::Edit | ToolLevel::Execute | ToolLevel::Network => {
                Verdict::Ask(format!("{tool} {} and no rule allows it", level_phrase(level)))
            }
        }
    }

    /// Whether plan mode lets the command line `scan` run: it only reads
    /// ([`crate::safety::read_only`]), and the files it names are inside the project
    /// and not covered by a read deny rule.
    fn plan_reads(&self, scan: &shell_scan::Scan) -> Result<(), String> {
        for file in crate::safety::read_only::read_only(scan)? {
            let path = self.resolve(&file);
            let real = rab_tools::sandbox::real_path(&path);
            if file.starts_with('~')
                || !path.starts_with(&self.root)
                || !real.starts_with(&self.root)
            {
                return Err(format!("{file} is outside the project"));
            }
            let args = serde_json::json!({ "path": file });
            let read = Call { tool: "read", alias: None, args: &args, scan: None };
            if let Some(rule) = self.deny.iter().find(|r| self.matches_any(r, &read)) {
                return Err(format!("{file} is covered by the rule \"{}\"", rule.text));
            }
            if self.denied_files.contains(&path) {
                return Err(format!("{file} is a file a read deny rule covers"));
            }
        }
        Ok(())
    }

    /// Whether allow rules (and the prompt's grants) cover the whole call: for bash,
    /// every simple command it runs, each by some rule.
    fn allowed(&self, call: &Call<'_>) -> bool {
        let mut rules =
            self.allow.iter().chain(&self.granted).filter(|r| r.names(call, &self.tools));
        let Some(scan) = call.scan else {
            return rules.any(|r| self.matches(r, call, true));
        };
        let rules: Vec<&Rule> = rules.collect();
        if rules.iter().any(|r| matches!(r.pattern, Pattern::Any)) {
            return true;
        }
        if scan.unknown.is_some() || scan.compound_writes || scan.commands.is_empty() {
            return false;
        }
        scan.commands.iter().all(|cmd| {
            rules.iter().any(|r| match &r.pattern {
                Pattern::Command { glob, is_prefix } if cmd.writes.is_empty() => {
                    command_matches(&cmd.written, glob, *is_prefix)
                }
                // Output to a file only when the rule says so (`bash(make > build.log)`).
                Pattern::Command { glob, is_prefix } if glob.contains('>') => {
                    let with = format!("{} {}", cmd.written, cmd.writes.join(" "));
                    command_matches(&with, glob, *is_prefix)
                }
                _ => false,
            })
        })
    }

    /// The rule "always allow" writes for this call: the command's first words for
    /// bash, the file's directory for file tools, the host for web_fetch.
    pub fn suggest_rule(&self, tool: &str, args: &Value) -> String {
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim);
        match tool {
            "bash" => {
                let scan = text("command").map(shell_scan::scan);
                match scan.as_ref().and_then(|s| s.commands.first()) {
                    // A command that deletes, overwrites or kills is allowed for good
                    // only exactly as it is (`bash(rm -rf build)`, never `bash(rm -rf:*)`),
                    // and not at all when a glob in it would widen the rule.
                    Some(first) if destroys(&first.written) => {
                        if first.written.contains(['*', '?', '[']) {
                            String::new()
                        } else {
                            format!("bash({})", first.written)
                        }
                    }
                    Some(first) => {
                        // The command word and what follows it, never a bare prefix of
                        // the word (`bash(ls -la:*)`, not `bash(ls*)`, which is `lsof` too).
                        let words: Vec<&str> = first.written.split(' ').take(2).collect();
                        format!("bash({}:*)", words.join(" "))
                    }
                    None => tool.to_owned(),
                }
            }
            "web_fetch" => match text("url").and_then(host_of) {
                Some(host) => format!("web_fetch(domain:{host})"),
                None => tool.to_owned(),
            },
            _ if self.tools.is_path_tool(tool) => match text("path") {
                // The narrowest rule that covers it: the file itself at the root (never
                // `**`, which is every file), else its folder.
                Some(p) => {
                    let path = rab_tools::normalize(&self.root.join(p));
                    let dir = path.parent().unwrap_or(&path);
                    match dir.strip_prefix(&self.root) {
                        Ok(rel) if rel.as_os_str().is_empty() => match path.file_name() {
                            Some(name) => format!("{tool}(./{})", name.to_string_lossy()),
                            None => tool.to_owned(),
                        },
                        Ok(rel) => format!("{tool}({}/**)", rel.display()),
                        Err(_) => format!("{tool}(/{}/**)", dir.display()),
                    }
                }
                None => tool.to_owned(),
            },
            _ => tool.to_owned(),
        }
    }

    /// Whether `rule` matches any part of the call (deny and ask rules).
    fn matches_any(&self, rule: &Rule, call: &Call<'_>) -> bool {
        self.matches(rule, call, false)
    }

    /// Whether `rule` matches a call; `all`: a path must match both as written and
    /// with symbolic links resolved (allow rules), else either (deny and ask rules).
    fn matches(&self, rule: &Rule, call: &Call<'_>, all: bool) -> bool {
        if !rule.names(call, &self.tools) {
            return false;
        }
        let args = call.args;
        match &rule.pattern {
            Pattern::Any => true,
            Pattern::Command { glob, is_prefix } => {
                let Some(cmd) = args.get("command").and_then(Value::as_str) else { return false };
                let one = |text: &str| command_matches(text, glob, *is_prefix);
                one(cmd.trim())
                    || call.scan.is_some_and(|scan| {
                        scan.commands.iter().any(|c| {
                            c.all_forms().any(one)
                                || (!c.writes.is_empty()
                                    && one(&format!("{} {}", c.written, c.writes.join(" "))))
                        })
                    })
            }
            Pattern::Path(glob) => {
                let p = args.get("path").and_then(Value::as_str).unwrap_or(".");
                let lexical = self.resolve(p);
                let real = rab_tools::sandbox::real_path(&lexical);
                if all {
                    glob.is_match(&lexical) && glob.is_match(&real)
                } else {
                    glob.is_match(&lexical) || glob.is_match(&real)
                }
            }
            Pattern::Domain(domain) => args
                .get("url")
                .and_then(Value::as_str)
                .and_then(host_of)
                .is_some_and(|h| h == *domain || h.ends_with(&format!(".{domain}"))),
        }
    }

    fn resolve(&self, p: &str) -> PathBuf {
        let p = p.trim();
        let joined = match (p.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if Path::new(p).is_absolute() => PathBuf::from(p),
            _ => self.root.join(p),
        };
        rab_tools::normalize(&joined)
    }
}

/// A call being checked, with its command parsed once.
struct Call<'a> {
    tool: &'a str,
    /// The name rules may also give it (`plugin__NAME__TOOL`).
    alias: Option<&'a str>,
    args: &'a Value,
    scan: Option<&'a shell_scan::Scan>,
}

impl Rule {
    /// Whether the rule is about the call's tool, by its name or its alias.
    fn names(&self, call: &Call<'_>, tools: &ToolCatalog) -> bool {
        self.applies(call.tool, tools) || call.alias.is_some_and(|a| self.applies(a, tools))
    }

    /// Whether the rule is about `tool`.
    fn applies(&self, tool: &str, tools: &ToolCatalog) -> bool {
        if let Some(server) = self.tool.strip_suffix("__") {
            tool.strip_prefix(server).is_some_and(|rest| rest.starts_with("__"))
        } else {
            self.tool == tool || tools.covers(&self.tool, tool)
        }
    }

    /// Whether the rule names commands of `tool` (a bash rule with a pattern, or bash).
    fn covers_commands(&self, tool: &str, tools: &ToolCatalog) -> bool {
        tool == "bash" && self.applies(tool, tools)
    }
}

/// Whether a command (its words as written) deletes, overwrites, kills or runs as
/// another user: such a command gets no prefix rule from "always".
fn destroys(written: &str) -> bool {
    let mut words = written.split(' ');
    let word = words.next().unwrap_or_default();
    let word = word.rsplit('/').next().unwrap_or(word);
    let rest: Vec<&str> = words.collect();
    match word {
        "rm" | "rmdir" | "unlink" | "shred" | "dd" | "truncate" | "mv" | "chmod" | "chown"
        | "chgrp" | "kill" | "pkill" | "killall" | "sudo" | "su" | "doas" | "reboot"
        | "shutdown" | "halt" | "poweroff" | "crontab" => true,
        w if w.starts_with("mkfs") => true,
        "find" => rest.iter().any(|a| matches!(*a, "-delete" | "-exec" | "-execdir" | "-ok")),
        "git" => rest.first().is_some_and(|sub| {
            matches!(
                *sub,
                "push"
                    | "reset"
                    | "clean"
                    | "rm"
                    | "rebase"
                    | "checkout"
                    | "restore"
                    | "branch"
                    | "filter-branch"
                    | "filter-repo"
                    | "gc"
                    | "prune"
                    | "stash"
                    | "tag"
            )
        }),
        _ => false,
    }
}

fn level_phrase(level: ToolLevel) -> &'static str {
    match level {
        ToolLevel::ReadOnly => "only reads",
        ToolLevel::Edit => "changes files",
        ToolLevel::Execute => "runs commands",
        ToolLevel::Network => "uses the network",
    }
}

/// Parses `rules` from `source`'s `list` into `out`; the first bad one is the error.
fn parse_rules(
    rules: &[String],
    source: &str,
    list: &'static str,
    cx: &PolicyContext<'_>,
    out: &mut Vec<Rule>,
) -> Result<(), RuleError> {
    for text in rules {
        let rule = parse_rule(text, cx).map_err(|message| RuleError {
            file: source.to_owned(),
            list,
            rule: text.clone(),
            message,
        })?;
        out.push(rule);
    }
    Ok(())
}

/// How [`parse_rule`]'s error for a tool rab does not have begins.
const UNKNOWN_TOOL: &str = "unknown tool";

fn parse_rule(text: &str, cx: &PolicyContext<'_>) -> Result<Rule, String> {
    let t = text.trim();
    let (name, pattern) = match t.find('(') {
        Some(open) => {
            let Some(inner) = t[open + 1..].strip_suffix(')') else {
                return Err("a pattern must end with ')' and nothing after it".into());
            };
            if inner.trim().is_empty() {
                return Err("empty pattern: write the tool name alone to match every call".into());
            }
            (&t[..open], Some(inner.trim()))
        }
        None if t.contains(')') => return Err("')' without '('".into()),
        None => (t, None),
    };
    if name.is_empty() {
        return Err("missing tool name".into());
    }
    // MCP servers' tools and WASM plugins' arrive after the rules are read: their rules
    // name them by server or plugin.
    for (prefix, kind, whole) in [("mcp__", "MCP", "SERVER"), ("plugin__", "plugin", "PLUGIN")] {
        let Some(rest) = name.strip_prefix(prefix) else { continue };
        if pattern.is_some() {
            return Err(format!("{kind} tools take no pattern"));
        }
        let (owner, tool) = rest.split_once("__").unwrap_or((rest, ""));
        let ok = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if owner.is_empty() || !ok(owner) || !(ok(tool) || tool == "*") {
            return Err(format!("a {kind} rule is {prefix}{whole} or {prefix}{whole}__TOOL"));
        }
        let tool = if tool.is_empty() || tool == "*" {
            format!("{prefix}{owner}__")
        } else {
            name.to_owned()
        };
        return Ok(Rule { tool, pattern: Pattern::Any, text: t.to_owned() });
    }
    let Some(canonical) = cx.tools.canonical(name) else {
        let names = cx.tools.names();
        let hint = rab_config::did_you_mean(name, names.iter().copied());
        return Err(format!("{UNKNOWN_TOOL} '{name}'{hint} (known: {})", names.join(", ")));
    };
    let pattern = match pattern {
        None => Pattern::Any,
        Some(p) => parse_pattern(&canonical, p, cx)?,
    };
    Ok(Rule { tool: canonical, pattern, text: t.to_owned() })
}

fn parse_pattern(tool: &str, p: &str, cx: &PolicyContext<'_>) -> Result<Pattern, String> {
    if tool == "bash" {
        let (glob, is_prefix) = match p.strip_suffix(":*") {
            Some(prefix) => (prefix.trim_end().to_owned(), true),
            None => (p.to_owned(), false),
        };
        return Ok(Pattern::Command { glob, is_prefix });
    }
    if cx.tools.facts(tool).rule == rab_agent::RuleKind::Domain {
        let Some(domain) = p.strip_prefix("domain:") else {
            return Err(format!("{tool} patterns are domain:HOST"));
        };
        if domain.is_empty()
            || domain.contains(['/', ' ', '*', '@', '\\', ':']) && !domain.starts_with('[')
        {
            return Err("domain:HOST takes a plain host name (no scheme, port or path)".into());
        }
        return rule_host(domain).map(Pattern::Domain);
    }
    if cx.tools.is_path_tool(tool) {
        return path_glob(p, cx).map(Pattern::Path);
    }
    Err(format!("{tool} takes no pattern; write '{tool}' alone"))
}

/// A gitignore-like path glob made absolute: `~/x` under home, `//abs` or `/abs`
/// absolute, `dir/x` under the root, a bare `*.env` in any directory of the root.
fn path_glob(p: &str, cx: &PolicyContext<'_>) -> Result<GlobMatcher, String> {
    let abs = if let Some(rest) = p.strip_prefix("~/") {
        let home = cx.home.ok_or("'~' needs HOME to be set")?;
        format!("{}/{rest}", home.display())
    } else if let Some(rest) = p.strip_prefix("//") {
        format!("/{rest}")
    } else if p.starts_with('/') {
        p.to_owned()
    } else if p.contains('/') {
        format!("{}/{}", cx.root.display(), p.trim_start_matches("./"))
    } else {
        format!("{}/**/{p}", cx.root.display())
    };
    // `dir/` and `dir/**` both mean everything under dir, and dir itself.
    let abs = abs.strip_suffix('/').map_or(abs.clone(), |d| format!("{d}/**"));
    let abs = abs.strip_suffix("/**").map_or(abs.clone(), |d| format!("{d}{{,/**}}"));
    GlobBuilder::new(&abs)
        .literal_separator(true)
        .empty_alternates(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("bad path pattern: {e}"))
}

#[cfg(test)]
mod tests;
