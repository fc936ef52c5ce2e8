//! Skills and custom prompt commands found at start-up, and the tools skills bring.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rab_agent::AgentTool;
use rab_core::prompt_commands::{PromptCommand, command_dirs, load_commands};
use rab_core::skills::{Skill, SkillAsTool, SkillTool, load_skills, skill_dirs};

/// What was discovered.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// Agent Skills.
    pub skills: Vec<Skill>,
    /// `/name` prompt commands from markdown files.
    pub commands: Vec<PromptCommand>,
}

impl Resources {
    /// Loads both; problems are pushed to `warnings`.
    pub fn load(
        cwd: &Path,
        rab_home: &Path,
        home: Option<&Path>,
        warnings: &mut Vec<String>,
    ) -> Self {
        let skills = load_skills(&skill_dirs(cwd, rab_home, home), warnings);
        let builtin: Vec<&str> = crate::commands::BUILTINS.iter().map(|(n, _)| *n).collect();
        let commands = load_commands(&command_dirs(cwd, rab_home), &builtin, warnings);
        Self { skills, commands }
    }

    /// The `skill` tool (when the model may invoke any skill) and, with `as_tools`, one
    /// tool per skill.
    pub fn tools(&self, as_tools: bool) -> Vec<Arc<dyn AgentTool>> {
        let invocable: Vec<&Skill> =
            self.skills.iter().filter(|s| !s.is_model_invocation_disabled).collect();
        if invocable.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<Arc<dyn AgentTool>> = vec![Arc::new(SkillTool::new(&self.skills))];
        if as_tools {
            out.extend(
                invocable
                    .into_iter()
                    .map(|s| Arc::new(SkillAsTool(s.clone())) as Arc<dyn AgentTool>),
            );
        }
        out
    }

    /// A skill by name.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// A prompt command by name.
    pub fn command(&self, name: &str) -> Option<&PromptCommand> {
        self.commands.iter().find(|c| c.name == name)
    }
}

/// `~` for display.
pub fn home_dir(env: &rab_config::Env) -> Option<PathBuf> {
    env.get("HOME").map(PathBuf::from)
}
