//! The system prompt: the default (or a `SYSTEM.md` override), `APPEND_SYSTEM.md`, the
//! context files (`AGENTS.md`/`CLAUDE.md`) each wrapped with its path, then date and
//! working directory. Built once per session, so it is byte-identical on every turn
//! and the provider's prompt cache keeps hitting.

use std::path::{Path, PathBuf};

use crate::prompt_files::PromptFiles;

/// The prompt rab uses unless `SYSTEM.md` or `--system-prompt` replaces it.
pub const DEFAULT_SYSTEM_PROMPT: &str = "\
You are rab, a coding agent working in the user's terminal. You complete software \
engineering tasks with your tools and finish the task instead of describing how it could \
be done.

Guidelines:
- Look before you change: read the relevant files and search (grep, glob) rather than guess.
- Make focused edits that follow the surrounding style. Use edit to change files and write \
only for new files or full rewrites.
- Verify: run the project's tests, build or linter, and fix what fails.
- Use bash for git, builds and tests; prefer read, grep, glob and ls to cat, grep and find.
- Issue independent tool calls together in one message; they run in parallel.
- Do not undo changes you did not make, and ask before destructive actions (force push, \
deleting data).
- When done, answer briefly: what changed and how you checked it. Cite code as path:line.";

/// Where the prompt's parts come from.
#[derive(Clone, Debug, Default)]
pub struct PromptSources {
    /// The working directory (context files are searched from here up to the root).
    pub cwd: PathBuf,
    /// rab's home (`~/.rab`): global SYSTEM.md, APPEND_SYSTEM.md, AGENTS.md.
    pub home: PathBuf,
    /// `--system-prompt`: replaces everything SYSTEM.md would.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`, in order.
    pub append: Vec<String>,
    /// `-nc/--no-context-files`.
    pub no_context_files: bool,
    /// Today's date, `YYYY-MM-DD`.
    pub date: String,
    /// The `<available_skills>` block (empty without skills).
    pub skills: String,
    /// Tools' own guidelines (`AgentTool::prompt_guidelines`): tool name, text.
    pub guidelines: Vec<(String, String)>,
    /// How the files are read (links, read rules, the secret firewall).
    pub files: PromptFiles,
}

/// The instruction files read in each folder from the root down to where rab runs, in
/// this order: the project's (shared) and then your local ones (kept out of git).
pub const INSTRUCTION_FILES: [&str; 4] =
    ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"];

/// One context file found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text.
    pub content: String,
}

/// `~/.rab/AGENTS.md`, then [`INSTRUCTION_FILES`] from the root down to `cwd`
/// (the most specific last, so it has the final word). A file reached twice (a
/// symlink) or with the same text as its sibling is included once. Read by `files`.
pub fn context_files(cwd: &Path, home: &Path, files: &PromptFiles) -> Vec<ContextFile> {
    let mut found: Vec<ContextFile> = Vec::new();
    let push = |path: PathBuf, found: &mut Vec<ContextFile>| {
        let Some(content) = files.instructions(&path) else { return };
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        let duplicate = found
            .iter()
            .any(|f| f.content == content || f.path.canonicalize().is_ok_and(|c| c == canonical));
        if !duplicate {
            found.push(ContextFile { path, content });
        }
    };
    push(home.join("AGENTS.md"), &mut found);
    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    for dir in dirs {
        for name in INSTRUCTION_FILES {
            push(dir.join(name), &mut found);
        }
    }
    found
}

/// Builds the prompt.
pub fn build_system_prompt(src: &PromptSources) -> String {
    let project_override = src.cwd.join(".rab").join("SYSTEM.md");
    let read = |p: &Path| src.files.instructions(p);
    let base = src
        .system_prompt
        .clone()
        .or_else(|| read(&project_override))
        // The CrabClaw layout's project prompt, for projects set up for it.
        .or_else(|| read(&src.cwd.join(".agent").join("system-prompt.md")))
        .or_else(|| read(&src.home.join("SYSTEM.md")))
        .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned());
    let mut out = base.trim_end().to_owned();
    for path in [src.home.join("APPEND_SYSTEM.md"), src.cwd.join(".rab").join("APPEND_SYSTEM.md")] {
        if let Some(text) = read(&path) {
            out.push_str("\n\n");
            out.push_str(text.trim_end());
        }
    }
    for text in &src.append {
        out.push_str("\n\n");
        out.push_str(text.trim_end());
    }
    if !src.no_context_files {
        let files = context_files(&src.cwd, &src.home, &src.files);
        if !files.is_empty() {
            out.push_str("\n\n<project_context>\n");
            for f in files {
                out.push_str(&format!(
                    "<project_instructions path=\"{}\">\n{}\n</project_instructions>\n",
                    f.path.display(),
                    f.content.trim_end()
                ));
            }
            out.push_str("</project_context>");
        }
    }
    if !src.guidelines.is_empty() {
        out.push_str("\n\n<tool_guidelines>\n");
        for (name, text) in &src.guidelines {
            out.push_str(&format!("<tool name=\"{name}\">\n{}\n</tool>\n", text.trim_end()));
        }
        out.push_str("</tool_guidelines>");
    }
    if !src.skills.is_empty() {
        out.push_str("\n\n");
        out.push_str(&src.skills);
    }
    out.push_str(&format!(
        "\n\nCurrent date: {}\nCurrent working directory: {}",
        src.date,
        src.cwd.display()
    ));
    out
}

/// `prompt` without the local time of day on its `Current date:` line.
fn without_time(prompt: &str) -> String {
    prompt
        .split('\n')
        .map(|line| match line.strip_prefix("Current date: ") {
            // `YYYY-MM-DD`, then ` HH:MM UTC±hh:mm`.
            Some(rest) if rest.len() > 10 && rest.is_char_boundary(10) => &line[..24],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What to tell the model when the system prompt rebuilt now (`new`: a new date,
/// edited AGENTS.md, other skills) differs from the one its conversation began with
/// (`old`), which rab keeps sending unchanged: the paragraphs that are new or changed,
/// and those that no longer apply. `None` when nothing changed.
pub fn prompt_update(old: &str, new: &str) -> Option<String> {
    // The time of day alone is no news: a resume on the same day says nothing.
    if old == new || without_time(old) == without_time(new) {
        return None;
    }
    let old_parts: Vec<&str> = old.split("\n\n").collect();
    let new_parts: Vec<&str> = new.split("\n\n").collect();
    let added: Vec<&str> = new_parts.iter().copied().filter(|p| !old_parts.contains(p)).collect();
    // A short paragraph replaced by a new version of itself (the same `Key:` opening
    // its first line, such as `Current date:`) needs no separate mention.
    let key = |p: &str| {
        let first = p.lines().next()?;
        let (k, _) = first.split_once(':')?;
        (p.lines().count() <= 3 && !k.is_empty() && k.len() <= 40).then(|| k.to_owned())
    };
    let removed: Vec<&str> = old_parts
        .iter()
        .copied()
        .filter(|p| !new_parts.contains(p))
        .filter(|p| key(p).is_none_or(|k| !added.iter().any(|a| key(a).as_ref() == Some(&k))))
        .collect();
    let mut out = String::from(
        "Your instructions changed since this conversation began (the system prompt above \
         is the one it began with).",
    );
    if !added.is_empty() {
        out.push_str(" These parts are new or updated and take precedence over the earlier text:");
        for p in &added {
            out.push_str("\n\n");
            out.push_str(p);
        }
    }
    if !removed.is_empty() {
        out.push_str("\n\nThese earlier parts no longer apply:");
        for p in &removed {
            out.push_str("\n\n");
            out.push_str(p);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_new_time_of_day_alone_is_no_update_but_a_new_date_is() {
        let at = |when: &str| {
            format!("Be brief.\n\nCurrent date: {when}\nCurrent working directory: /p")
        };
        let morning = at("2026-12-07 09:00 UTC+01:00");
        let evening = at("2026-12-07 19:30 UTC+01:00");
        assert_eq!(prompt_update(&morning, &evening), None);
        let next = at("2026-12-08 09:00 UTC+01:00");
        let update = prompt_update(&morning, &next).unwrap();
        assert!(update.contains("Current date: 2026-12-08 09:00"), "{update}");
    }

    #[test]
    fn an_update_names_what_changed_in_the_prompt() {
        let old =
            "Be brief.\n\nUse tabs.\n\nCurrent date: 2026-11-23\nCurrent working directory: /p";
        let new = "Be brief.\n\nCurrent date: 2026-11-24\nCurrent working directory: /p";
        let update = prompt_update(old, new).unwrap();
        assert!(update.contains("Current date: 2026-11-24"), "{update}");
        assert!(!update.contains("2026-11-23"), "the replaced date needs no mention: {update}");
        assert!(update.contains("no longer apply:\n\nUse tabs."), "{update}");
        assert!(!update.contains("Be brief."), "unchanged parts are not repeated: {update}");
        assert_eq!(prompt_update(new, new), None);
        let only_removed = prompt_update("A\n\nB", "A").unwrap();
        assert!(!only_removed.contains("new or updated"), "{only_removed}");
        assert!(only_removed.ends_with("no longer apply:\n\nB"), "{only_removed}");
    }

    fn sources(cwd: &Path, home: &Path) -> PromptSources {
        PromptSources {
            cwd: cwd.into(),
            home: home.into(),
            date: "2026-11-22".into(),
            skills: String::new(),
            ..Default::default()
        }
    }

    #[test]
    fn context_files_are_wrapped_with_their_paths_outermost_first() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("repo");
        let sub = project.join("crates/x");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("AGENTS.md"), "global rules").unwrap();
        std::fs::write(project.join("AGENTS.md"), "repo rules").unwrap();
        std::fs::write(project.join("CLAUDE.md"), "repo rules").unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "crate rules").unwrap();
        let files = context_files(&sub, &home, &PromptFiles::default());
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global rules", "repo rules", "crate rules"]);
        let prompt = build_system_prompt(&sources(&sub, &home));
        assert!(prompt.starts_with("You are rab"));
        assert!(prompt.contains(&format!(
            "<project_instructions path=\"{}\">\nrepo rules\n</project_instructions>",
            project.join("AGENTS.md").display()
        )));
        assert!(prompt.ends_with(&format!(
            "Current date: 2026-11-22\nCurrent working directory: {}",
            sub.display()
        )));
        let mut no_ctx = sources(&sub, &home);
        no_ctx.no_context_files = true;
        assert!(!build_system_prompt(&no_ctx).contains("project_context"));
    }

    #[test]
    fn system_md_overrides_and_appends_follow() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("p");
        std::fs::create_dir_all(project.join(".rab")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("SYSTEM.md"), "global system").unwrap();
        std::fs::write(home.join("APPEND_SYSTEM.md"), "global append").unwrap();
        let mut src = sources(&project, &home);
        src.append.push("cli append".into());
        let p = build_system_prompt(&src);
        assert!(
            p.starts_with("global system\n\nglobal append\n\ncli append\n\nCurrent date"),
            "{p}"
        );
        std::fs::create_dir_all(project.join(".agent")).unwrap();
        std::fs::write(project.join(".agent/system-prompt.md"), "agent system").unwrap();
        assert!(build_system_prompt(&src).starts_with("agent system\n\nglobal append"));
        std::fs::write(project.join(".rab/SYSTEM.md"), "project system").unwrap();
        assert!(build_system_prompt(&src).starts_with("project system"));
        src.system_prompt = Some("cli system".into());
        assert!(build_system_prompt(&src).starts_with("cli system"));
    }
}
