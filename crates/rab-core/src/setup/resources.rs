//! Skills and custom prompt commands found at start-up, and the tools skills bring.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::prompt_commands::{PromptCommand, command_dirs, load_commands};
use crate::prompt_files::PromptFiles;
use crate::skills::{Skill, SkillAsTool, SkillTool, load_skills, skill_dirs};
use crate::{Command, CommandContext, CommandHandler, CommandOutcome, Extension, PromptRequest};
use rab_agent::AgentTool;

/// What was discovered.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// Agent Skills.
    pub skills: Vec<Skill>,
    /// `/name` prompt commands from markdown files.
    pub commands: Vec<PromptCommand>,
    /// `skillsAsTools`: one tool per skill besides the `skill` tool.
    pub skills_as_tools: bool,
}

/// Skills and prompt commands as an extension: their tools and `/skill:NAME`, `/name`.
impl Extension for Resources {
    fn name(&self) -> &str {
        "skills-and-prompt-commands"
    }

    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        Resources::tools(self, self.skills_as_tools)
    }

    fn commands(&self) -> Vec<Command> {
        let mut out: Vec<Command> = self
            .commands
            .iter()
            .map(|c| Command {
                name: c.name.clone(),
                description: c.description.clone(),
                argument_hint: c.argument_hint.clone(),
                handler: Arc::new(PromptHandler(c.clone())),
                source: crate::extension::CommandSource::Prompt(c.path.clone()),
            })
            .collect();
        out.extend(self.skills.iter().map(|s| Command {
            name: format!("skill:{}", s.name),
            description: s.description.clone(),
            argument_hint: None,
            handler: Arc::new(SkillHandler(s.clone())),
            source: crate::extension::CommandSource::Skill(s.dir.join("SKILL.md")),
        }));
        out
    }
}

struct PromptHandler(PromptCommand);

impl CommandHandler for PromptHandler {
    fn run(&self, args: &str, _cx: &mut CommandContext<'_>) -> CommandOutcome {
        CommandOutcome::Prompt(PromptRequest {
            text: self.0.expand(args),
            model: self.0.model.clone(),
            allowed_tools: self.0.allowed_tools.clone(),
        })
    }
}

struct SkillHandler(Skill);

impl CommandHandler for SkillHandler {
    fn run(&self, args: &str, _cx: &mut CommandContext<'_>) -> CommandOutcome {
        let skill = &self.0;
        let mut text = skill.invoke(args);
        if !skill.body.contains("$ARGUMENTS") && !args.trim().is_empty() {
            text.push_str(&format!("\n\n{}", args.trim()));
        }
        CommandOutcome::Prompt(PromptRequest {
            text,
            model: None,
            allowed_tools: skill.allowed_tools.clone(),
        })
    }
}

impl Resources {
    /// Loads both; problems are pushed to `warnings`. In an untrusted folder the
    /// project's skills and commands keep their text but grant no tools. The files are
    /// read through `files` (links, read rules, the secret firewall).
    pub fn load(
        cwd: &Path,
        rab_home: &Path,
        home: Option<&Path>,
        skills_as_tools: bool,
        trusted: bool,
        files: &PromptFiles,
        warnings: &mut Vec<String>,
    ) -> Self {
        let mut skills = load_skills(&skill_dirs(cwd, rab_home, home), files, warnings);
        let builtin: Vec<&str> = crate::commands::BUILTINS.iter().map(|(n, _)| *n).collect();
        let mut commands =
            load_commands(&command_dirs(cwd, rab_home, home), &builtin, files, warnings);
        for s in skills.iter().filter(|s| s.name == crate::skills::LIST) {
            warnings.push(format!(
                "{}: a skill named `list` runs only as /skill:list; for the skill tool, `list` \
                 lists the skills",
                s.dir.display()
            ));
        }
        if !trusted {
            let project = |p: &Path| super::trust::is_project_path(cwd, p);
            for s in skills.iter_mut().filter(|s| project(&s.dir)) {
                s.allowed_tools.clear();
            }
            for c in commands.iter_mut().filter(|c| project(&c.path)) {
                c.allowed_tools.clear();
            }
        }
        Self { skills, commands, skills_as_tools }
    }

    /// The names of the tools skills and commands would bring, found without reading
    /// any file (for the permission rules, which are read before the files are): the
    /// `skill` tool and `skill_<name>` for each folder holding a `SKILL.md`.
    pub fn tool_names(
        cwd: &Path,
        rab_home: &Path,
        home: Option<&Path>,
    ) -> Vec<(String, rab_agent::ToolFacts)> {
        let mut out = Vec::new();
        for dir in skill_dirs(cwd, rab_home, home) {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entry.path().join("SKILL.md").is_file() {
                    let tool = crate::skills::skill_tool_name(&name);
                    out.push((tool, rab_agent::ToolFacts::NONE));
                }
            }
        }
        let has_commands = command_dirs(cwd, rab_home, home).iter().any(|d| {
            std::fs::read_dir(d).is_ok_and(|mut e| {
                e.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "md")))
            })
        });
        if has_commands || !out.is_empty() {
            let skill = SkillTool::new(&[], &[]);
            out.push((skill.name(), skill.facts()));
        }
        out
    }

    /// What the project's skills and commands would grant once the folder is trusted.
    pub fn grants(&self, cwd: &Path) -> Vec<String> {
        let project = |p: &Path| super::trust::is_project_path(cwd, p);
        let skills = self.skills.iter().filter(|s| project(&s.dir) && !s.allowed_tools.is_empty());
        let commands =
            self.commands.iter().filter(|c| project(&c.path) && !c.allowed_tools.is_empty());
        skills
            .map(|s| (s.dir.clone(), format!("skill {}", s.name), &s.allowed_tools))
            .chain(
                commands
                    .map(|c| (c.path.clone(), format!("command /{}", c.name), &c.allowed_tools)),
            )
            .map(|(path, what, tools)| {
                format!("{}: {what} grants {}", path.display(), tools.join(", "))
            })
            .collect()
    }

    /// The `skill` tool (when there is a skill the model may invoke or a prompt command)
    /// and, with `as_tools`, one tool per skill.
    pub fn tools(&self, as_tools: bool) -> Vec<Arc<dyn AgentTool>> {
        let invocable: Vec<&Skill> =
            self.skills.iter().filter(|s| !s.is_model_invocation_disabled).collect();
        if invocable.is_empty() && self.commands.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<Arc<dyn AgentTool>> =
            vec![Arc::new(SkillTool::new(&self.skills, &self.commands))];
        if as_tools {
            out.extend(
                invocable
                    .into_iter()
                    .map(|s| Arc::new(SkillAsTool(s.clone())) as Arc<dyn AgentTool>),
            );
        }
        out
    }
}

/// `~` for display.
pub fn home_dir(env: &rab_config::Env) -> Option<PathBuf> {
    env.get("HOME").map(PathBuf::from)
}
