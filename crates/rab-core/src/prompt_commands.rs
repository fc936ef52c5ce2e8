//! Custom prompt commands: markdown files in `.rab/commands/`, `.claude/commands/` and
//! `~/.rab/commands/` become `/name` (file name without `.md`). Frontmatter is optional:
//! `description`, `argument-hint`, `model`, `allowed-tools`. Running one sends its body,
//! with `$ARGUMENTS` and `$1`…`$9` filled in, as the user's message.

use std::path::{Path, PathBuf};

use crate::skills::{frontmatter_fields, split_frontmatter, substitute};

/// One command file.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptCommand {
    /// `/name`.
    pub name: String,
    /// For help and completion (the body's first line when not given).
    pub description: String,
    /// What arguments it takes, e.g. `[file] [focus]`.
    pub argument_hint: Option<String>,
    /// Model to run it with.
    pub model: Option<String>,
    /// Tools it may use without asking.
    pub allowed_tools: Vec<String>,
    /// The prompt text.
    pub body: String,
    /// The file.
    pub path: PathBuf,
}

impl PromptCommand {
    /// The prompt for `args`. A body without `$ARGUMENTS` gets the arguments appended.
    pub fn expand(&self, args: &str) -> String {
        let text = substitute(&self.body, args);
        let uses_args = self.body.contains("$ARGUMENTS")
            || (1..=9).any(|i| self.body.contains(&format!("${i}")));
        if uses_args || args.trim().is_empty() {
            text.trim().to_owned()
        } else {
            format!("{}\n\n{}", text.trim(), args.trim())
        }
    }
}

fn parse(path: &Path, files: &crate::prompt_files::PromptFiles) -> Result<PromptCommand, String> {
    let text = crate::skills::read_definition(files, path)?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err("the file name must be letters, digits, - or _ (it becomes /NAME)".into());
    }
    let (fields, body) = match split_frontmatter(&text) {
        Some((front, body)) => (frontmatter_fields(front), body),
        None if text.starts_with("---") => return Err("frontmatter is not closed by ---".into()),
        None => (Vec::new(), text.as_str()),
    };
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    if body.trim().is_empty() {
        return Err("the command has no prompt text".into());
    }
    let description = get("description").unwrap_or_else(|| {
        body.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim_start_matches('#')
            .trim()
            .to_owned()
    });
    let allowed_tools =
        get("allowed-tools").map(|v| crate::rule_list::split_rule_list(&v)).unwrap_or_default();
    Ok(PromptCommand {
        name,
        description,
        argument_hint: get("argument-hint"),
        model: get("model"),
        allowed_tools,
        body: body.to_owned(),
        path: path.to_owned(),
    })
}

/// The discovery directories, in priority order: the project's, then the user's (`home`
/// is `~`, for `~/.claude/commands`).
pub fn command_dirs(cwd: &Path, rab_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs =
        vec![cwd.join(".rab/commands"), cwd.join(".claude/commands"), rab_home.join("commands")];
    dirs.extend(home.map(|h| h.join(".claude/commands")));
    dirs
}

/// The commands in `dirs`; the first of a name wins, and names in `taken` (built-in
/// commands) are reported and skipped. Problems go to `warnings`.
pub fn load_commands(
    dirs: &[PathBuf],
    taken: &[&str],
    files: &crate::prompt_files::PromptFiles,
    warnings: &mut Vec<String>,
) -> Vec<PromptCommand> {
    let mut out: Vec<PromptCommand> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
            match parse(&path, files) {
                Ok(c) if taken.contains(&c.name.as_str()) => warnings.push(format!(
                    "{}: /{} is a built-in command (file skipped)",
                    path.display(),
                    c.name
                )),
                Ok(c) if out.iter().any(|o| o.name == c.name) => {}
                Ok(c) => out.push(c),
                Err(e) => warnings.push(format!("{}: {e} (command skipped)", path.display())),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn commands_load_expand_and_skip_builtin_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("review.md"),
            "---\ndescription: Review a file\nargument-hint: [file]\nmodel: claude-haiku-4-5\n---\nReview $1 for $ARGUMENTS.\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("plain.md"),
            "# Explain the build\nExplain how this builds.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("help.md"), "mine").unwrap();
        let mut warnings = Vec::new();
        let cmds =
            load_commands(&[dir.path().into()], &["help"], &Default::default(), &mut warnings);
        assert_eq!(cmds.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["plain", "review"]);
        assert_eq!(cmds[1].expand("a.rs b.rs"), "Review a.rs for a.rs b.rs.");
        assert_eq!(cmds[1].model.as_deref(), Some("claude-haiku-4-5"));
        assert_eq!(cmds[0].description, "Explain the build");
        assert_eq!(cmds[0].expand("fast"), "# Explain the build\nExplain how this builds.\n\nfast");
        assert!(
            warnings[0].contains("help.md") && warnings[0].contains("built-in"),
            "{warnings:?}"
        );
    }
}
