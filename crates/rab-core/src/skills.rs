//! Agent Skills: `SKILL.md` files (frontmatter `name`, `description`,
//! `disable-model-invocation`, `allowed-tools`, then instructions) in `~/.rab/skills`,
//! `.rab/skills`, `.agent/skills`, `.claude/skills` and `~/.claude/skills`, one
//! directory per skill. They are listed in the system prompt as `<available_skills>`
//! (unless the model may not invoke them) and used through `/skill:name args`, the
//! `skill` tool, or one `skill_<name>` tool each when `skillsAsTools` is on. A bad file
//! is a warning naming the file and the field, and is skipped.

use std::path::{Path, PathBuf};

use rab_agent::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};

use crate::prompt_commands::PromptCommand;
use crate::prompt_files::PromptFiles;
use schemars::JsonSchema;
use serde::Deserialize;

/// Longest name the standard allows.
const MAX_NAME: usize = 64;
/// Longest description the standard allows.
const MAX_DESCRIPTION: usize = 1024;

/// One skill.
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    /// Lower-case letters, digits and hyphens.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// Only the user may invoke it (`/skill:name`); not listed for the model.
    pub is_model_invocation_disabled: bool,
    /// Tools it expects (informational).
    pub allowed_tools: Vec<String>,
    /// The instructions (the file without its frontmatter).
    pub body: String,
    /// Its directory (other files of the skill live there).
    pub dir: PathBuf,
}

impl Skill {
    /// The instructions with `$ARGUMENTS` (and `$1`…`$9`) filled in, wrapped with the
    /// skill's name and directory so the model can read its other files.
    pub fn invoke(&self, args: &str) -> String {
        format!(
            "<skill name=\"{}\" location=\"{}\">\n{}\n</skill>",
            self.name,
            self.dir.display(),
            substitute(&self.body, args).trim_end()
        )
    }
}

/// `$ARGUMENTS` becomes `args`, `$1`…`$9` its whitespace-separated words.
pub fn substitute(text: &str, args: &str) -> String {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut out = text.replace("$ARGUMENTS", args.trim());
    for i in (1..=9).rev() {
        out = out.replace(&format!("${i}"), words.get(i - 1).copied().unwrap_or_default());
    }
    out
}

/// Splits `---\nfrontmatter\n---\nbody`; `None` when there is no frontmatter.
pub fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?;
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Largest skill, command or agent file read; these go into prompts whole.
pub const MAX_DEFINITION_BYTES: u64 = 256 * 1024;

/// Reads a skill, command or agent definition file through `files` (links, read
/// rules, the secret firewall), refusing one too large to be meant as a prompt.
pub fn read_definition(files: &PromptFiles, path: &Path) -> Result<String, String> {
    files.definition(path)
}

/// `key: value` lines of a frontmatter (quotes removed; `[a, b]` lists kept as text).
pub fn frontmatter_fields(front: &str) -> Vec<(String, String)> {
    front
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().trim_matches(['"', '\'']).to_owned()))
        .collect()
}

fn parse(path: &Path, files: &PromptFiles) -> Result<Skill, String> {
    let text = read_definition(files, path)?;
    let (front, body) =
        split_frontmatter(&text).ok_or("missing the --- frontmatter with name and description")?;
    let fields = frontmatter_fields(front);
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let name = get("name").ok_or("frontmatter field 'name' is missing")?;
    let dir_name =
        path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    if name.is_empty()
        || name.len() > MAX_NAME
        || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(format!(
            "frontmatter field 'name' (\"{name}\") must be 1-{MAX_NAME} lower-case letters, digits or hyphens"
        ));
    }
    if dir_name.as_deref() != Some(name.as_str()) {
        return Err(format!(
            "frontmatter field 'name' (\"{name}\") must match the directory name ({})",
            dir_name.unwrap_or_default()
        ));
    }
    let description = get("description").unwrap_or_default();
    if description.is_empty() || description.len() > MAX_DESCRIPTION {
        return Err(format!(
            "frontmatter field 'description' must be 1-{MAX_DESCRIPTION} characters"
        ));
    }
    let disabled = match get("disable-model-invocation").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(format!(
                "frontmatter field 'disable-model-invocation' must be true or false, not \"{other}\""
            ));
        }
    };
    let allowed_tools =
        get("allowed-tools").map(|v| crate::rule_list::split_rule_list(&v)).unwrap_or_default();
    Ok(Skill {
        name,
        description,
        is_model_invocation_disabled: disabled,
        allowed_tools,
        body: body.to_owned(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
    })
}

/// The skills under `dirs` (`<dir>/<name>/SKILL.md`); an earlier directory's skill wins
/// over a later one of the same name. Problems go to `warnings`.
pub fn load_skills(
    dirs: &[PathBuf],
    files: &PromptFiles,
    warnings: &mut Vec<String>,
) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<PathBuf> =
            entries.flatten().map(|e| e.path().join("SKILL.md")).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.is_file()) {
            match parse(&path, files) {
                Ok(s) if out.iter().any(|o| o.name == s.name) => {}
                Ok(s) => out.push(s),
                Err(e) => warnings.push(format!("{}: {e} (skill skipped)", path.display())),
            }
        }
    }
    out
}

/// The discovery directories, in priority order.
pub fn skill_dirs(cwd: &Path, rab_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![
        cwd.join(".rab/skills"),
        cwd.join(".agent/skills"),
        cwd.join(".claude/skills"),
        rab_home.join("skills"),
    ];
    if let Some(h) = home {
        dirs.push(h.join(".claude/skills"));
    }
    dirs
}

/// The `<available_skills>` block for the system prompt (empty without skills the model
/// may invoke).
pub fn prompt_block(skills: &[Skill]) -> String {
    let listed: Vec<&Skill> = skills.iter().filter(|s| !s.is_model_invocation_disabled).collect();
    if listed.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<available_skills>\nSkills hold instructions for particular tasks; when one fits, \
         load it with the skill tool before starting.\n",
    );
    for s in listed {
        out.push_str(&format!(
            "<skill name=\"{}\">{}</skill>\n",
            s.name,
            s.description.replace('<', "&lt;")
        ));
    }
    out.push_str("</available_skills>");
    out
}

/// The `skill` tool: loads a skill or a prompt command by name; `list` lists them.
pub struct SkillTool {
    skills: Vec<Skill>,
    commands: Vec<PromptCommand>,
}

impl SkillTool {
    /// Over the skills the model may invoke and the prompt commands.
    pub fn new(skills: &[Skill], commands: &[PromptCommand]) -> Self {
        Self {
            skills: skills.iter().filter(|s| !s.is_model_invocation_disabled).cloned().collect(),
            commands: commands.to_vec(),
        }
    }

    /// Every skill and command, one per line with its description.
    fn list(&self) -> String {
        let mut out = String::new();
        if !self.skills.is_empty() {
            out.push_str("Skills:\n");
            for s in &self.skills {
                out.push_str(&format!("- {}: {}\n", s.name, s.description));
            }
        }
        if !self.commands.is_empty() {
            out.push_str("Prompt commands:\n");
            for c in &self.commands {
                let hint = c.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
                out.push_str(&format!("- {}{hint}: {}\n", c.name, c.description));
            }
        }
        if out.is_empty() {
            out.push_str("No skills or prompt commands are installed.");
        }
        out.trim_end().to_owned()
    }
}

/// The name that lists instead of loading.
pub const LIST: &str = "list";

/// Arguments of `skill`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// A skill or prompt command name; "list" lists them.
    pub name: String,
    /// Arguments for it.
    pub arguments: Option<String>,
}

impl Tool for SkillTool {
    type Args = Args;
    const NAME: &'static str = "skill";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Load a skill's instructions (listed in available_skills; its other files are in the \
         directory given) or a prompt command's; name \"list\" lists both."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = args.arguments.as_deref().unwrap_or_default();
        if args.name == LIST {
            return Ok(ToolOutput::text(self.list()));
        }
        if let Some(skill) = self.skills.iter().find(|s| s.name == args.name) {
            return Ok(ToolOutput::text(skill.invoke(arguments)));
        }
        let command = self.commands.iter().find(|c| c.name == args.name.trim_start_matches('/'));
        if let Some(command) = command {
            return Ok(ToolOutput::text(format!(
                "<command name=\"{}\" location=\"{}\">\n{}\n</command>",
                command.name,
                command.path.display(),
                command.expand(arguments)
            )));
        }
        let names: Vec<&str> = self
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .chain(self.commands.iter().map(|c| c.name.as_str()))
            .collect();
        Err(ToolError::Model(format!(
            "no skill or prompt command named {}; there are: {} (name \"list\" describes them)",
            args.name,
            names.join(", ")
        )))
    }
}

/// The tool name of the skill `name` as its own tool: `skill_<name>`.
pub fn skill_tool_name(name: &str) -> String {
    // `skill_`, not `skill.`: Anthropic and OpenAI allow only letters, digits, _ and -,
    // and a session's history moves between providers.
    rab_agent::portable_tool_name(&format!("skill_{}", name.replace('-', "_")), name)
}

/// One skill as its own tool (`skillsAsTools`): `skill_<name>`.
pub struct SkillAsTool(pub Skill);

/// Arguments of a `skill_<name>` tool.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct AsToolArgs {
    /// Arguments for the skill.
    pub arguments: Option<String>,
}

impl rab_agent::AgentTool for SkillAsTool {
    fn name(&self) -> String {
        skill_tool_name(&self.0.name)
    }

    fn spec(&self) -> rab_ai::ToolSpec {
        rab_ai::ToolSpec {
            name: self.name(),
            description: self.0.description.clone(),
            parameters: rab_agent::schema_of::<AsToolArgs>(),
            grammar: None,
            server: None,
        }
    }

    fn level(&self) -> ToolLevel {
        ToolLevel::ReadOnly
    }

    fn execute(
        &self,
        arguments: serde_json::Value,
        _cx: ToolContext,
    ) -> rab_agent::BoxFuture<'_, Result<ToolOutput, ToolError>> {
        let args: String = arguments
            .get("arguments")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move { Ok(ToolOutput::text(self.0.invoke(&args))) })
    }
}

#[cfg(test)]
mod tests;
