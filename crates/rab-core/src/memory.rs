//! Quick memory, as Claude Code's `#`: a one-line note typed as `# note` is added to the
//! project's instructions (`AGENTS.md`, or `CLAUDE.md` when only that exists), and
//! `#~ note` to your own (`~/.rab/AGENTS.md`), as a list item. The file is written
//! atomically through a handle on its folder, so a project whose `AGENTS.md` is a link
//! to somewhere outside it (`~/.bashrc`) cannot have rab write there.

use std::path::{Path, PathBuf};

use rab_tools::beneath::RootDir;

/// A `# note` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLine {
    /// The note.
    pub text: String,
    /// `#~`: the user's own instructions, not the project's.
    pub global: bool,
}

/// `# note` or `#~ note` on one line; `None` for anything else (a pasted markdown
/// document starting with a heading has more than one line and stays a prompt).
pub fn memory_line(line: &str) -> Option<MemoryLine> {
    let line = line.trim();
    if line.contains('\n') {
        return None;
    }
    let (rest, global) = match line.strip_prefix("#~") {
        Some(rest) => (rest, true),
        None => (line.strip_prefix('#')?, false),
    };
    // `# note`, not `#tag` or `##`.
    if !rest.starts_with(' ') {
        return None;
    }
    let text = rest.trim().to_owned();
    (!text.is_empty()).then_some(MemoryLine { text, global })
}

/// Adds `m` to its file: under `cwd` (the project's) or `home` (rab's home). Returns
/// the file written.
pub fn remember(m: &MemoryLine, cwd: &Path, home: &Path) -> Result<PathBuf, String> {
    let folder = if m.global { home } else { cwd };
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let root =
        RootDir::open(folder).map_err(|e| format!("cannot open {}: {e}", folder.display()))?;
    let name = if m.global || folder.join("AGENTS.md").symlink_metadata().is_ok() {
        "AGENTS.md"
    } else if folder.join("CLAUDE.md").symlink_metadata().is_ok() {
        "CLAUDE.md"
    } else {
        "AGENTS.md"
    };
    let rel = Path::new(name);
    let path = folder.join(name);
    let mut text = match root.open_read(rel) {
        Ok(mut file) => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            text
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(format!(
                "not written: {} cannot be read inside {} ({e}); a link out of the folder \
                 is not followed",
                path.display(),
                folder.display()
            ));
        }
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let line = m.text.replace(['\r', '\n'], " ");
    text.push_str(&format!("- {line}\n"));
    root.write_atomic(rel, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_one_line_note_after_hash_space_is_memory() {
        let note = |t: &str, g| Some(MemoryLine { text: t.into(), global: g });
        assert_eq!(memory_line("# use pnpm, not npm"), note("use pnpm, not npm", false));
        assert_eq!(memory_line("#~ I like short answers"), note("I like short answers", true));
        for not in ["#tag", "## Title", "# Title\nbody", "#", "#   ", "no # here"] {
            assert_eq!(memory_line(not), None, "{not:?}");
        }
    }

    #[test]
    fn a_note_is_appended_and_a_link_out_of_the_project_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, home) = (dir.path().join("p"), dir.path().join("h"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("CLAUDE.md"), "# Rules\nbe kind").unwrap();
        let m = memory_line("# run cargo test before committing").unwrap();
        assert_eq!(remember(&m, &cwd, &home).unwrap(), cwd.join("CLAUDE.md"));
        let text = std::fs::read_to_string(cwd.join("CLAUDE.md")).unwrap();
        assert_eq!(text, "# Rules\nbe kind\n- run cargo test before committing\n");
        let g = memory_line("#~ answer in English").unwrap();
        assert_eq!(remember(&g, &cwd, &home).unwrap(), home.join("AGENTS.md"));
        assert_eq!(
            std::fs::read_to_string(home.join("AGENTS.md")).unwrap(),
            "- answer in English\n"
        );
        // A hostile checkout: AGENTS.md links to a file outside it.
        let outside = dir.path().join("bashrc");
        std::fs::write(&outside, "original\n").unwrap();
        let evil = dir.path().join("evil");
        std::fs::create_dir_all(&evil).unwrap();
        std::os::unix::fs::symlink(&outside, evil.join("AGENTS.md")).unwrap();
        let err = remember(&m, &evil, &home).unwrap_err();
        assert!(err.contains("not written"), "{err}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "original\n");
    }
}
