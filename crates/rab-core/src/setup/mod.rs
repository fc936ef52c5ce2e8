//! Everything a front end needs to create and re-create sessions: resolved settings,
//! model registry, tools, safety, system prompt. Built once at start-up from
//! [`RuntimeOptions`] (the binary fills them from its command line), the environment
//! and the config files; warnings come back as values, nothing is printed.

mod options;
pub mod resources;
pub mod safety;
pub mod target;
pub mod tools;
pub mod trust;

use std::path::PathBuf;
use std::sync::Arc;

use rab_agent::{AgentConfig, AgentTool, DrainMode};
use rab_ai::{Client, Registry, RetryPolicy, StreamOptions};
use rab_config::{Env, Paths, QueueMode, Settings};
use rab_session::Tape;

use crate::{AgentSession, Extensions, PromptSources, Resumed, build_system_prompt};
pub use options::{
    ExtensionFactory, FactoryContext, HEADLESS_MAX_TURNS, ModelChoice, PromptChoice,
    RuntimeOptions, SafetyChoice, TapeChoice, ToolChoice,
};
pub use target::Target;

/// A start-up failure: what is wrong and how to fix it, with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SetupError {
    /// [`SetupError::USAGE`] or [`SetupError::PROVIDER`].
    pub code: u8,
    /// The message, one paragraph.
    pub message: String,
}

impl SetupError {
    /// Exit code of bad usage or config files.
    pub const USAGE: u8 = 2;
    /// Exit code of a provider that cannot be used (no key).
    pub const PROVIDER: u8 = 1;

    /// Bad usage or a bad config file.
    pub fn usage(message: impl Into<String>) -> Self {
        Self { code: Self::USAGE, message: message.into() }
    }
}

/// The start-up state shared by every front end.
pub struct Setup {
    /// What building it noticed (settings, extensions, agents, the model), for the mode
    /// to show where it shows things: never printed from here, as the terminal UI may
    /// own the screen.
    pub warnings: Vec<String>,
    /// Process environment snapshot.
    pub env: Env,
    /// rab's home layout.
    pub paths: Paths,
    /// Working directory.
    pub cwd: PathBuf,
    /// Layered settings.
    pub settings: Settings,
    /// Providers and models (built-in + models.json + env base URLs).
    pub registry: Registry,
    /// Tools offered to the model.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The system prompt, built once.
    pub system_prompt: String,
    /// `--max-turns` or the setting.
    pub max_turns: Option<u32>,
    /// `--max-budget-usd` or the setting.
    pub max_budget_usd: Option<f64>,
    /// The settings profile applied (`--profile`, `/profile`).
    pub profile: Option<String>,
    /// Every profile the settings files define.
    pub profiles: Vec<String>,
    /// The model, key and thinking level chosen at start-up.
    pub target: Target,
    /// `fallbackModels`, resolved with their keys (those that resolved).
    pub fallbacks: Vec<rab_agent::Fallback>,
    /// The tools' workspace (root, sandbox).
    pub workspace: rab_tools::Workspace,
    /// Permissions, hooks and the secret firewall around every tool call.
    pub gate: Arc<crate::Gate>,
    /// Who answers permission questions.
    pub approver: Arc<safety::SwitchApprover>,
    /// Whether yolo is in the Shift+Tab cycle.
    pub has_yolo: bool,
    /// Whether sessions get the `task` tool.
    pub has_task: bool,
    /// Sub-agent definitions for `task`.
    pub agents: Vec<crate::task::AgentDef>,
    /// Prompts scheduled with cron_create.
    pub scheduler: Arc<crate::cron::Scheduler>,
    /// Who send_message reaches.
    pub inbox: crate::inbox::Inbox,
    /// Every extension: rab's commands and tools, skills and prompt commands,
    /// compiled-in extensions, MCP servers.
    pub extensions: Arc<Extensions>,
    /// What it was made from (for `/reload`).
    pub options: RuntimeOptions,
    /// How instruction files are read (trust, read rules), for `/memory`.
    pub prompt_files: crate::prompt_files::PromptFiles,
}

/// A named list of tools as an extension (rab's built-in tools).
struct ToolList {
    name: &'static str,
    tools: Vec<Arc<dyn AgentTool>>,
}

impl crate::Extension for ToolList {
    fn name(&self) -> &str {
        self.name
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools.clone()
    }
}

/// The `fallbackModels` that resolve to a model with a key, in order; each that does
/// not (or is the start-up model itself) is named in `warnings` and left out.
fn fallbacks(
    settings: &Settings,
    primary: &Target,
    given: &ModelChoice,
    env: &rab_config::Env,
    paths: &rab_config::Paths,
    registry: &Registry,
    warnings: &mut Vec<String>,
) -> Vec<rab_agent::Fallback> {
    let mut out: Vec<rab_agent::Fallback> = Vec::new();
    for name in &settings.fallback_models {
        let provider = &primary.model.provider;
        match target::resolve_keeping(name, provider, given, settings, env, paths, registry) {
            Ok(t) => {
                let same = |m: &rab_ai::Model| m.provider == t.model.provider && m.id == t.model.id;
                if same(&primary.model) || out.iter().any(|f| same(&f.model)) {
                    warnings.push(format!(
                        "fallbackModels: \"{name}\" is already in the chain; left out"
                    ));
                    continue;
                }
                out.push(rab_agent::Fallback {
                    model: t.model,
                    api_key: t.api_key,
                    auth_hint: Some(t.auth_hint),
                });
            }
            Err(e) => warnings.push(format!("fallbackModels: \"{name}\" left out: {}", e.message)),
        }
    }
    out
}

fn queue_mode(m: QueueMode) -> DrainMode {
    match m {
        QueueMode::OneAtATime => DrainMode::OneAtATime,
        QueueMode::All => DrainMode::All,
    }
}

impl std::fmt::Debug for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("cwd", &self.cwd)
            .field("model", &self.target.model.id)
            .finish_non_exhaustive()
    }
}

impl Setup {
    /// Resolves everything from `options`, the environment and the config files.
    pub fn new(options: RuntimeOptions) -> Result<Self, SetupError> {
        Self::build(options, None)
    }

    /// [`Setup::new`] with `scheduler`'s jobs: a chat's durable scheduler, whose cron
    /// tools are offered even though the front end does not itself stay running.
    pub fn with_scheduler(
        options: RuntimeOptions,
        scheduler: Arc<crate::cron::Scheduler>,
    ) -> Result<Self, SetupError> {
        Self::build(options, Some(scheduler))
    }

    /// Whether scheduled prompts run: the front end stays, or the jobs are durable.
    pub fn schedules(&self) -> bool {
        self.options.keeps_running || self.scheduler.is_durable()
    }

    /// [`Setup::new`], keeping `scheduler` (its cron jobs) when given.
    fn build(
        options: RuntimeOptions,
        scheduler: Option<Arc<crate::cron::Scheduler>>,
    ) -> Result<Self, SetupError> {
        let RuntimeOptions { env, paths, cwd, trusted, .. } = options.clone();
        let registry = target::registry(&env, &paths)?;
        let loaded = rab_config::load_settings_with_profile(
            &paths.settings_file(),
            &cwd,
            &env,
            trusted,
            options.profile.as_deref(),
        )
        .map_err(|e| SetupError::usage(e.to_string()))?;
        let (profile, profiles) = (loaded.profile.clone(), loaded.profiles.clone());
        let mut warnings = loaded.warnings.clone();
        let settings = loaded.settings;
        let target = target::target(&options.model, &settings, &env, &paths, &registry)?;
        let home = resources::home_dir(&env);
        let choice = &options.tools;
        // Rules may name any tool rab knows, including extensions' and skills'. The
        // rules come first: skill and command files are read under them.
        let mut known = crate::tool_catalog::builtin(&cwd);
        for t in options.extensions.iter().flat_map(|e| e.tools()) {
            known.add(t.name(), t.facts());
        }
        if !choice.no_extensions {
            for (name, facts) in
                resources::Resources::tool_names(&cwd, paths.home(), home.as_deref())
            {
                known.add(name, facts);
            }
        }
        let safety = safety::build(
            &options.safety,
            options.sandbox_helper.clone(),
            &settings,
            &loaded.safety,
            &env,
            &paths,
            &cwd,
            &known,
            target.api_key.as_deref(),
            &mut warnings,
        )?;
        // Every file rab puts in a prompt on its own is read by this.
        let files = crate::prompt_files::PromptFiles::new(
            &cwd,
            safety.sandbox.roots(),
            home.as_deref(),
            trusted,
        )
        .with_read_filter(safety.gate.read_filter())
        .with_redact(safety.gate.redact_fn());
        let resources = if choice.no_extensions {
            resources::Resources::default()
        } else {
            resources::Resources::load(
                &cwd,
                paths.home(),
                home.as_deref(),
                settings.skills_as_tools,
                trusted,
                &files,
                &mut warnings,
            )
        };
        for t in resources.tools(true) {
            known.add(t.name(), t.facts());
        }
        let workspace = tools::workspace(&env, &cwd, safety.sandbox)
            .with_read_filter(safety.gate.read_filter())
            .with_redact(safety.gate.redact_fn())
            .with_editor_files(options.editor_files.clone())
            .with_editor_terminal(options.editor_terminal.clone());
        let inbox = crate::inbox::Inbox::default();
        let (enter_plan, exit_plan) =
            crate::plan_tools(safety.gate.mode().clone(), safety.approver.clone());
        let mut extra: Vec<Arc<dyn AgentTool>> = vec![
            Arc::new(enter_plan),
            Arc::new(exit_plan),
            Arc::new(crate::ask_user::AskUser::new(safety.approver.clone())),
            Arc::new(crate::config_tool::ConfigTool::new(
                settings.clone(),
                safety.gate.mode().clone(),
                paths.settings_file(),
            )),
            Arc::new(crate::inbox::SendMessage::new(inbox.clone(), crate::inbox::MAIN)),
        ];
        let scheduler = scheduler
            .unwrap_or_else(|| crate::cron::Scheduler::new(rab_session::time::now_millis()));
        if options.keeps_running || scheduler.is_durable() {
            let (create, list, delete) = crate::cron::cron_tools(&scheduler);
            extra.extend([
                Arc::new(create) as Arc<dyn AgentTool>,
                Arc::new(list),
                Arc::new(delete),
            ]);
        }
        let has_builtin_tools = !choice.no_builtin_tools && !choice.no_extensions;
        let mut list: Vec<Arc<dyn crate::Extension>> =
            vec![Arc::new(crate::commands::BuiltinCommands)];
        if has_builtin_tools {
            let edit_tool = tools::edit_tool(choice, &settings, &target.model);
            let search = safety.gate.web_search();
            let tools = tools::builtin_tools(&settings, &workspace, extra, edit_tool, search);
            list.push(Arc::new(ToolList { name: "builtin-tools", tools }));
        }
        if !choice.no_extensions {
            list.push(Arc::new(resources.clone()));
            list.extend(options.extensions.iter().cloned());
            for factory in &options.factories {
                list.push(factory.build(FactoryContext {
                    env: &env,
                    paths: &paths,
                    cwd: &cwd,
                    sandbox: workspace.sandbox(),
                    trusted,
                    warnings: &mut warnings,
                })?);
            }
        }
        let filter = tools::source_filter(choice, &settings);
        let extensions = Arc::new(Extensions::new(list).with_tool_filter(filter));
        warnings.extend(extensions.warnings().iter().cloned());
        let tools = tools::tools(choice, &settings, extensions.tools().to_vec(), &known)?;
        let only = choice.only.as_deref().or(settings.tools.as_deref());
        let has_task =
            has_builtin_tools && !choice.no_tools && tools::is_enabled("task", only, &settings);
        let mut agent_warnings = Vec::new();
        let agent_dirs = trust::agent_dirs(&cwd, paths.home(), trusted);
        let agent_dirs: Vec<&std::path::Path> = agent_dirs.iter().map(PathBuf::as_path).collect();
        let agents = crate::task::load_agents(&agent_dirs, &files, &mut agent_warnings);
        warnings.extend(agent_warnings);
        let system_prompt = build_system_prompt(&PromptSources {
            cwd: cwd.clone(),
            home: paths.home().to_path_buf(),
            system_prompt: options.prompt.system_prompt.clone(),
            append: options.prompt.append_system_prompt.clone(),
            no_context_files: options.prompt.no_context_files,
            date: today(&env),
            skills: crate::skills::prompt_block(&resources.skills),
            guidelines: tools
                .iter()
                .filter_map(|t| t.prompt_guidelines().map(|g| (t.name(), g)))
                .filter(|(_, g)| !g.trim().is_empty())
                .collect(),
            files: files.clone(),
        });
        warnings.extend(files.take_warnings());
        let max_turns = options.max_turns.or(settings.max_turns).or(options.default_max_turns);
        let temperature = options.model.temperature.or(settings.temperature);
        if let Some(t) = temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(SetupError::usage(format!(
                "temperature (--temperature or the setting) must be between 0 and 2, not {t}"
            )));
        }
        if let Some(bad) = env.get("RAB_TODAY").filter(|d| !is_date(d)) {
            warnings.push(format!("RAB_TODAY={bad} is not a date (YYYY-MM-DD); using today's"));
        }
        let max_budget_usd = options.max_budget_usd.or(settings.max_budget_usd);
        if let Some(b) = max_budget_usd
            && !(b.is_finite() && b >= 0.0)
        {
            return Err(SetupError::usage(format!(
                "--max-budget-usd must be a number of dollars ≥ 0, not {b}"
            )));
        }
        let cost = &target.model.cost;
        if max_budget_usd.is_some() && cost.input == 0.0 && cost.output == 0.0 {
            return Err(SetupError::usage(format!(
                "a budget (--max-budget-usd or maxBudgetUsd) needs the model's prices, and \
                     rab has none for {}/{}: give them in models.json (\"cost\": {{\"input\": \
                     …, \"output\": …}} in dollars per million tokens) or run without a budget",
                target.model.provider, target.model.id
            )));
        }
        warnings.extend(target.note.clone());
        let fallbacks =
            fallbacks(&settings, &target, &options.model, &env, &paths, &registry, &mut warnings);
        Ok(Self {
            warnings,
            env,
            paths,
            cwd,
            settings,
            registry,
            tools,
            system_prompt,
            max_turns,
            max_budget_usd,
            profile,
            profiles,
            target,
            fallbacks,
            workspace,
            gate: safety.gate,
            approver: safety.approver,
            has_yolo: safety.has_yolo,
            has_task,
            agents,
            scheduler,
            inbox,
            extensions,
            options,
            prompt_files: files,
        })
    }

    /// The same launch made again from the files (`/reload`); scheduled cron jobs stay.
    pub fn reload(&self) -> Result<Self, SetupError> {
        Self::build(self.options.clone(), Some(self.scheduler.clone()))
    }

    /// [`Setup::reload`] with another settings profile (`None`: none).
    pub fn with_profile(&self, profile: Option<String>) -> Result<Self, SetupError> {
        let mut options = self.options.clone();
        options.profile = profile;
        Self::build(options, Some(self.scheduler.clone()))
    }

    /// Stream options for the current target and a session id.
    fn options(&self, session_id: &str) -> StreamOptions {
        StreamOptions {
            api_key: self.target.api_key.clone(),
            thinking: self.target.thinking,
            auth_hint: Some(self.target.auth_hint.clone()),
            session_id: Some(session_id.to_owned()),
            temperature: self.options.model.temperature.or(self.settings.temperature),
            retry: RetryPolicy {
                max_retries: self.settings.retry.max_retries,
                base_delay: std::time::Duration::from_millis(self.settings.retry.base_delay_ms),
                budget: secs(self.settings.timeouts.retry_budget_secs),
                ..RetryPolicy::default()
            },
            timeouts: rab_ai::Timeouts {
                connect: secs(self.settings.timeouts.connect_secs),
                first_byte: secs(self.settings.timeouts.first_byte_secs),
                idle: secs(self.settings.timeouts.idle_secs),
                ..rab_ai::Timeouts::default()
            },
            credential: self.sign_in(),
            ..StreamOptions::default()
        }
    }

    /// The start-up provider's subscription sign-in, when its key is one: a token that
    /// renews itself from auth.json.
    fn sign_in(&self) -> Option<std::sync::Arc<dyn rab_ai::KeySource>> {
        let path = self.paths.auth_file();
        let auth = rab_config::Auth::load(&path).ok()?;
        let provider = &self.target.model.provider;
        match (auth.credential(provider), &self.target.api_key) {
            (Some(rab_config::Credential::Oauth { access, .. }), Some(key)) if access == key => {
                Some(std::sync::Arc::new(crate::signin::OauthKeys::new(provider, &path)))
            }
            _ => None,
        }
    }

    /// When a run counts as a runaway loop (`loopDetection`).
    fn loop_detection(&self) -> rab_agent::LoopDetection {
        let l = &self.settings.loop_detection;
        rab_agent::LoopDetection {
            enabled: l.enabled,
            call_repeats: l.call_repeats,
            text_repeats: l.text_repeats,
        }
    }

    /// A session over `tape` with the start-up model; what the tape records as spent
    /// counts toward the budget and `/cost`.
    pub fn session(&self, tape: Tape) -> Result<(AgentSession, Resumed), SetupError> {
        self.session_spending(tape, None)
    }

    /// A session over `tape` that goes on from `old` (a `/reload`): it takes over what
    /// `old` counted as spent (summaries and sub-agents included) instead of reading
    /// the tape's record of it again.
    pub fn session_after(
        &self,
        tape: Tape,
        old: &AgentSession,
    ) -> Result<(AgentSession, Resumed), SetupError> {
        self.session_spending(tape, Some(old))
    }

    fn session_spending(
        &self,
        tape: Tape,
        old: Option<&AgentSession>,
    ) -> Result<(AgentSession, Resumed), SetupError> {
        // A session that is not saved (`--no-session`) could never be rewound.
        let tape_is_saved = tape.path().is_some();
        let config = AgentConfig {
            model: self.target.model.clone(),
            options: self.options(tape.id()),
            max_turns: self.max_turns,
            steering_mode: queue_mode(self.settings.steering_mode),
            follow_up_mode: queue_mode(self.settings.follow_up_mode),
            spend: Some(rab_agent::Spend::new(rab_agent::Ledger::new(self.max_budget_usd))),
        };
        let provider: Arc<dyn rab_ai::Provider> = Arc::new(Client::new());
        let (tools, view) = self.session_tools(&provider, &config);
        // What the tape records as spent counts toward the budget and `/cost` (read
        // before the session takes the conversation and frees the loaded text).
        let spent = if old.is_none() { tape.spending() } else { Vec::new() };
        let (mut session, resumed) =
            AgentSession::new(provider, config, self.system_prompt.clone(), tools, tape)
                .map_err(|e| SetupError::usage(e.to_string()))?;
        if let Some(old) = old {
            session.take_spending_of(old);
        } else if !spent.is_empty() {
            let models = self.registry.models();
            session.restore_spending(&spent, |provider, id| {
                models.iter().find(|m| m.provider == provider && m.id == id).map(|m| m.cost.clone())
            });
        }
        if let Some(view) = view {
            session.set_tool_view(view);
        }
        self.inbox.register(crate::inbox::MAIN, session.queues());
        if self.settings.route_assistant_commands {
            let bash: Arc<dyn AgentTool> =
                Arc::new(rab_tools::bash::Bash::new(self.workspace.clone()));
            session.route_assistant_commands(bash);
        }
        session.enable_compaction(self.settings.compaction.clone());
        session.set_loop_detection(self.loop_detection());
        session.set_fallbacks(self.fallbacks.clone());
        session.set_gate(self.gate.clone());
        session.set_extensions(self.extensions.clone());
        let settings = &self.settings.checkpoints;
        if tape_is_saved && settings.enabled {
            let store = crate::checkpoint::store(self.paths.home());
            // Off the start-up path, and a thread only when it is time: once a day, old
            // and excess contents go.
            if store.prune_is_due() {
                let age = std::time::Duration::from_secs(u64::from(settings.max_age_days) * 86_400);
                let bytes = settings.max_size_mb << 20;
                let pruner = store.clone();
                std::thread::spawn(move || {
                    if let Err(e) = pruner.prune_if_due(age, bytes) {
                        tracing::warn!("pruning the checkpoint store: {e}");
                    }
                });
            }
            let cp = crate::checkpoint::Checkpointer::new(store, self.workspace.clone());
            session.set_checkpointer(Arc::new(cp));
        }
        Ok((session, resumed))
    }

    /// The session's tools: the start-up ones, `task` (sub-agents get the start-up
    /// ones), and with many tools `tool_search` and the progressive view.
    fn session_tools(
        &self,
        provider: &Arc<dyn rab_ai::Provider>,
        config: &AgentConfig,
    ) -> (Vec<Arc<dyn AgentTool>>, Option<Arc<rab_agent::ToolView>>) {
        let mut tools = self.tools.clone();
        if self.has_task {
            tools.push(Arc::new(
                crate::task::TaskTool::new(
                    provider.clone(),
                    config.clone(),
                    self.tools.clone(),
                    Some(self.gate.clone()),
                    self.agents.clone(),
                    self.registry.models().to_vec(),
                )
                .with_inbox(self.inbox.clone())
                .with_tool_sources(self.extensions.tool_sources())
                .with_loop_detection(self.loop_detection()),
            ));
        }
        // MCP servers still starting will bring tools: the view must be there for them.
        let expects_more = self.extensions.iter().any(|e| e.expects_tools());
        if self.settings.tool_search == Some(false) {
            return (tools, None);
        }
        let view = crate::tool_catalog::offer_tool_search(&mut tools, expects_more);
        (tools, view)
    }

    /// The tape a session records to, as `choice` says; with what the user should know.
    pub fn tape(&self, choice: &TapeChoice) -> Result<(Tape, Vec<String>), SetupError> {
        tools::tape(choice, &self.paths, &self.cwd)
    }

    /// The first extension of type `T` (e.g. the MCP servers' for their status).
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        self.extensions.iter().find_map(|e| e.as_any().and_then(|a| a.downcast_ref::<T>()))
    }

    /// A new tape for this directory.
    pub fn new_tape(&self) -> Tape {
        Tape::create(
            &rab_session::session_dir(&self.paths.sessions_dir(), &self.cwd),
            &self.cwd,
            None,
        )
    }

    /// Resolves a `/model` argument to a model with its key.
    pub fn resolve_model(&self, query: &str) -> Result<Target, String> {
        let resolved = target::resolve_keeping(
            query,
            &self.target.model.provider,
            &self.options.model,
            &self.settings,
            &self.env,
            &self.paths,
            &self.registry,
        );
        resolved
            .map(|mut t| {
                t.thinking = self.target.thinking;
                t
            })
            .map_err(|e| e.message)
    }
}

/// The date the system prompt gives the model: `RAB_TODAY` (`YYYY-MM-DD`, for
/// reproducible runs), else today's.
/// The local date and time of day for the system prompt (`2026-12-07 14:05 UTC+01:00`,
/// always as long: the request bytes do not change with the day), as the CrabClaw
/// design has it; `RAB_TODAY=YYYY-MM-DD` pins the date alone (tests, reproducible
/// prompts).
fn today(env: &rab_config::Env) -> String {
    match env.get("RAB_TODAY").filter(|d| is_date(d)) {
        Some(date) => date.to_owned(),
        None => local_now(&chrono::Local::now()),
    }
}

/// [`today`]'s text for a moment in some time zone.
fn local_now<Tz: chrono::TimeZone>(now: &chrono::DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    now.format("%Y-%m-%d %H:%M UTC%:z").to_string()
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter()
            .enumerate()
            .all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// `n` seconds, at least one (a zero limit would fail every request at once).
fn secs(n: u64) -> std::time::Duration {
    std::time::Duration::from_secs(n.max(1))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    /// Issue 53, row 12: the prompt carries the local time of day with the date, in
    /// the user's zone.
    #[test]
    fn the_prompt_has_the_local_date_weekday_and_time() {
        let zone = chrono::FixedOffset::east_opt(3600).unwrap();
        let now = zone.with_ymd_and_hms(2026, 12, 7, 0, 5, 0).unwrap();
        assert_eq!(super::local_now(&now), "2026-12-07 00:05 UTC+01:00");
        // The same instant in UTC is the day before: the user's date is the one shown.
        let utc = now.with_timezone(&chrono::Utc);
        assert_eq!(super::local_now(&utc), "2026-12-06 23:05 UTC+00:00");
    }
}
