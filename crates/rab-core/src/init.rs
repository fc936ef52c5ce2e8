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
/// fenced block, else the whole answer; `None` when the answer is empty.
pub fn proposal(answer: &str) -> Option<String> {
    let blocks = fenced_blocks(answer);
    let chosen = blocks
        .iter()
        .rev()
        .find(|(info, _)| matches!(info.as_str(), "markdown" | "md"))
        .or_else(|| blocks.last())
        .map(|(_, body)| body.clone())
        .unwrap_or_else(|| answer.to_owned());
    let text = chosen.trim();
    (!text.is_empty()).then(|| format!("{text}\n"))
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
