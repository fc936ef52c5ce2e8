//! `/init`: the model explores the repository with read-only tools (the run goes in plan
//! mode: reads, searches and read-only commands such as `git log`) and answers with an
//! `AGENTS.md` for it; rab then shows the file and writes it only when you say so. In a
//! run without a person nothing is written, and the proposal is the answer.

use std::path::{Path, PathBuf};

use rab_tools::beneath::RootDir;

/// What the model is asked.
pub const PROMPT: &str = "\
Write an AGENTS.md for this repository: the instructions a coding agent (or a new \
teammate) needs to work in it. Explore first with your read-only tools: the layout, the \
build and test commands (README, manifests such as Cargo.toml, package.json, Makefile, \
CI files), the code style and conventions actually used, and anything easy to get wrong. \
If AGENTS.md or CLAUDE.md exists, read it and improve on it, keeping what is still right. \
Keep it short and concrete: commands that work, paths that exist, no generic advice. \
You cannot write files now: answer with the complete file in one ```markdown block, and \
do not call exit_plan_mode.";

/// The file the answer proposes: the last ```markdown (or ```md) block, else the last
/// fenced block without a language, else the whole answer when it is a Markdown
/// document (it begins with a heading). `None` when the answer holds no such file: a
/// reply about the file ("Done, I updated it"), a block of code or JSON, or nothing.
pub fn proposal(answer: &str) -> Option<String> {
    let blocks = fenced_blocks(answer);
    let chosen = blocks
        .iter()
        .rev()
        .find(|(info, _)| matches!(info.as_str(), "markdown" | "md"))
        .or_else(|| blocks.iter().rev().find(|(info, _)| info.is_empty()))
        .map(|(_, body)| body.clone())
        .or_else(|| answer.trim_start().starts_with('#').then(|| answer.to_owned()))?;
    let text = chosen.trim();
    (!text.is_empty()).then(|| format!("{text}\n"))
}

/// The proposal merged with the `existing` file: each section of the existing file
/// (a heading and what follows it, or the text before the first heading) that the
/// proposal dropped is kept, at the end, so that nothing the user wrote is lost by
/// accepting it. Returns the merged text and the headings of the sections kept.
pub fn merge(existing: &str, proposal: &str) -> (String, Vec<String>) {
    let present: Vec<String> =
        sections(proposal).iter().map(|(h, _)| h.trim().to_lowercase()).collect();
    let proposed: std::collections::HashSet<&str> =
        proposal.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut out = proposal.trim_end().to_owned();
    let mut kept = Vec::new();
    for (heading, body) in sections(existing) {
        let lines = || heading.lines().chain(body.lines()).map(str::trim).filter(|l| !l.is_empty());
        let covered = if heading.is_empty() {
            // Text before the first heading: kept unless every line of it is still there.
            lines().all(|l| proposed.contains(l))
        } else {
            present.contains(&heading.trim().to_lowercase())
        };
        if covered || lines().next().is_none() {
            continue;
        }
        out.push_str("\n\n");
        if heading.is_empty() {
            out.push_str(body.trim_matches('\n'));
        } else {
            out.push_str(heading.trim_end());
            out.push('\n');
            out.push_str(body.trim_end_matches('\n'));
        }
        kept.push(if heading.is_empty() {
            "(the opening text)".into()
        } else {
            heading.trim().to_owned()
        });
    }
    out.push('\n');
    (out, kept)
}

/// A Markdown document's sections: `(heading line, body)`, the first with an empty
/// heading for text before any heading. Fenced code is never read as a heading.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), String::new())];
    let mut fence: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match fence {
            Some(n) if ticks >= n && trimmed[ticks..].trim().is_empty() => fence = None,
            Some(_) => {}
            None if ticks >= 3 => fence = Some(ticks),
            None if line.starts_with('#') => {
                out.push((line.to_owned(), String::new()));
                continue;
            }
            None => {}
        }
        if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The file as it is, read through a handle on `cwd` (a link to outside the project is
/// not followed: its target is not shown in a question). `None` when there is none.
pub fn existing(cwd: &Path) -> Option<String> {
    use std::io::Read;
    let root = RootDir::open(cwd).ok()?;
    let mut file = root.open_read(Path::new("AGENTS.md")).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Each fenced block of `text` (``` or longer, closed by a fence at least as long) as
/// its info word and body.
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match &mut open {
            None if ticks >= 3 => {
                let info = trimmed[ticks..].split_whitespace().next().unwrap_or("").to_lowercase();
                open = Some((ticks, info, String::new()));
            }
            Some((n, _, _)) if ticks >= *n && trimmed[ticks..].trim().is_empty() => {
                if let Some((_, info, body)) = open.take() {
                    out.push((info, body));
                }
            }
            Some((_, _, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Writes `content` as `AGENTS.md` in `cwd`, through a handle on the folder (a link to
/// outside it is not written through). Returns the file written.
pub fn write(cwd: &Path, content: &str) -> Result<PathBuf, String> {
    let root = RootDir::open(cwd).map_err(|e| format!("cannot open {}: {e}", cwd.display()))?;
    let path = cwd.join("AGENTS.md");
    root.write_atomic(Path::new("AGENTS.md"), content.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proposal_is_the_markdown_block_else_the_answer() {
        let answer = "Here it is:\n\n```markdown\n# AGENTS.md\n\n```sh\ncargo test\n```\n```\n";
        // A longer outer fence would hold the inner one; a plain one ends at the first.
        let answer4 = "Here:\n````markdown\n# Guide\n```sh\ncargo test\n```\n````\ndone";
        assert_eq!(proposal(answer4).unwrap(), "# Guide\n```sh\ncargo test\n```\n");
        assert!(proposal(answer).unwrap().starts_with("# AGENTS.md"));
        assert_eq!(proposal("# Title\nbody").unwrap(), "# Title\nbody\n");
        assert_eq!(proposal("  \n"), None);
        let two = "```json\n{}\n```\n```md\n# Rules\n```\n";
        assert_eq!(proposal(two).unwrap(), "# Rules\n");
    }

    /// What was found: a reply that was not the file was taken as the file.
    #[test]
    fn issue_53_a_reply_that_is_not_the_file_proposes_nothing() {
        for reply in [
            "Done! I updated AGENTS.md with the build commands.",
            "I could not find a build system here.",
            "```json\n{\"a\": 1}\n```",
            "```sh\ncargo test\n```",
        ] {
            assert_eq!(proposal(reply), None, "{reply}");
        }
        assert_eq!(proposal("```\n# Guide\n```\n").unwrap(), "# Guide\n");
    }

    /// What was found: `/init` on an existing AGENTS.md replaced the user's notes.
    /// Sections the proposal dropped stay; sections it rewrote are the proposal's.
    #[test]
    fn issue_53_a_merge_keeps_every_section_the_proposal_dropped() {
        let existing = "Read me first.\n\n# Build\n\nmake\n\n## Deploy notes\n\nNever \
                        deploy on Fridays.\n```sh\n# not a heading\n```\n";
        let proposal = "# Build\n\ncargo build\n\n# Tests\n\ncargo test\n";
        let (merged, kept) = merge(existing, proposal);
        assert_eq!(kept, ["(the opening text)", "## Deploy notes"]);
        assert!(merged.starts_with(proposal.trim_end()), "{merged}");
        assert!(merged.contains("Read me first."), "{merged}");
        assert!(
            merged.contains(
                "## Deploy notes\n\nNever deploy on Fridays.\n```sh\n# not a heading\n```"
            ),
            "{merged}"
        );
        assert!(!merged.contains("make\n"), "the rewritten section is the proposal's: {merged}");
        // Nothing dropped: the proposal as it is.
        assert_eq!(merge("# Build\nmake\n", proposal), (proposal.to_owned(), Vec::<String>::new()));
    }

    #[test]
    fn a_link_to_outside_the_project_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let (project, outside) = (dir.path().join("p"), dir.path().join("bashrc"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(&outside, "mine\n").unwrap();
        std::os::unix::fs::symlink(&outside, project.join("AGENTS.md")).unwrap();
        assert!(write(&project, "# x\n").is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine\n");
        std::fs::remove_file(project.join("AGENTS.md")).unwrap();
        assert_eq!(write(&project, "# x\n").unwrap(), project.join("AGENTS.md"));
    }
}
