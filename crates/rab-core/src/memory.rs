//! Memory as files, as Claude Code keeps it: a one-line note typed as `# note` is added
//! to the project's instructions (`AGENTS.md`, or `CLAUDE.md` when only that exists),
//! and `#~ note` to your own (`~/.rab/AGENTS.md`), as a list item; `/memory` opens the
//! instruction files in effect (yours, the project's, your local one for the project)
//! in your editor. Files are read and written atomically through a handle on their
//! folder, so a project whose `AGENTS.md` is a link to somewhere outside it
//! (`~/.bashrc`) cannot have rab read or write there.

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

/// Which of the instruction files `/memory` and `#` lines write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScope {
    /// Yours, for every project: `~/.rab/AGENTS.md`.
    User,
    /// The project's, shared with its team: `AGENTS.md` (or `CLAUDE.md` when only that
    /// exists) in the folder rab runs in.
    Project,
    /// Yours, for this project only (keep it out of git): `AGENTS.local.md` (or
    /// `CLAUDE.local.md` when only that exists) there.
    Local,
}

impl MemoryScope {
    /// Every scope, in the order `/memory` lists them.
    pub const ALL: [MemoryScope; 3] = [MemoryScope::User, MemoryScope::Project, MemoryScope::Local];

    /// `user`, `project`, `local`: the argument `/memory` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::User => "user",
            MemoryScope::Project => "project",
            MemoryScope::Local => "local",
        }
    }

    /// The scope an argument names.
    pub fn parse(arg: &str) -> Option<MemoryScope> {
        MemoryScope::ALL.into_iter().find(|s| s.as_str() == arg.trim())
    }

    /// The folder and file name of this scope's file: the rab-named file, or the Claude
    /// Code-named one when only that exists.
    pub fn file(self, cwd: &Path, home: &Path) -> (PathBuf, &'static str) {
        let (folder, names) = match self {
            MemoryScope::User => return (home.to_path_buf(), "AGENTS.md"),
            MemoryScope::Project => (cwd, ["AGENTS.md", "CLAUDE.md"]),
            MemoryScope::Local => (cwd, ["AGENTS.local.md", "CLAUDE.local.md"]),
        };
        let exists = |n: &str| folder.join(n).symlink_metadata().is_ok();
        let name = if !exists(names[0]) && exists(names[1]) { names[1] } else { names[0] };
        (folder.to_path_buf(), name)
    }
}

/// An instruction file as `/memory` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryFile {
    /// The scope it is the file of; `None` for another file in effect (a parent
    /// folder's `AGENTS.md`), which `/memory` opens all the same.
    pub scope: Option<MemoryScope>,
    /// Where it is.
    pub path: PathBuf,
    /// Whether it exists (a scope's file is listed before it is first written).
    pub exists: bool,
}

/// The files `/memory` offers: the three scopes' files (existing or not), then the
/// other instruction files in effect (`in_effect`, as the system prompt read them).
pub fn memory_files(cwd: &Path, home: &Path, in_effect: &[PathBuf]) -> Vec<MemoryFile> {
    let mut out: Vec<MemoryFile> = MemoryScope::ALL
        .into_iter()
        .map(|scope| {
            let (folder, name) = scope.file(cwd, home);
            let path = folder.join(name);
            MemoryFile { scope: Some(scope), exists: path.symlink_metadata().is_ok(), path }
        })
        .collect();
    for path in in_effect {
        if !out.iter().any(|f| f.path == *path) {
            out.push(MemoryFile { scope: None, path: path.clone(), exists: true });
        }
    }
    out
}

impl MemoryFile {
    /// What it is, for lists: `user (yours, every project)`, `other in effect`.
    pub fn label(&self) -> &'static str {
        match self.scope {
            Some(MemoryScope::User) => "user: yours, for every project",
            Some(MemoryScope::Project) => "project: shared with the project",
            Some(MemoryScope::Local) => "local: yours, for this project (keep it out of git)",
            None => "also in effect",
        }
    }
}

/// The files as a numbered list, with how to open one.
pub fn memory_list(files: &[MemoryFile]) -> String {
    let mut out =
        String::from("Instruction files (/memory user|project|local|N opens one in $EDITOR):\n");
    for (i, f) in files.iter().enumerate() {
        let new = if f.exists { "" } else { " (not written yet)" };
        out.push_str(&format!("  {}. {}{new} — {}\n", i + 1, f.path.display(), f.label()));
    }
    out
}

/// Reads `name` in `folder` through a handle on the folder (empty when missing); a
/// link out of the folder is an error, not followed.
pub fn read_in(folder: &Path, name: &str) -> Result<String, String> {
    let path = folder.join(name);
    if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        let target = std::fs::read_link(&path).unwrap_or_default();
        return Err(format!(
            "{} is a link (to {}): rab neither reads nor writes instruction files through \
             a link; edit the file it leads to yourself",
            path.display(),
            target.display()
        ));
    }
    let root = match RootDir::open(folder) {
        Ok(root) => root,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(format!("cannot open {}: {e}", folder.display())),
    };
    match root.open_read(Path::new(name)) {
        Ok(mut file) => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Ok(text)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!(
            "{} cannot be read inside {} ({e}); a link out of the folder is not followed",
            path.display(),
            folder.display()
        )),
    }
}

/// Writes `text` to `name` in `folder` atomically through a handle on the folder
/// (created when missing), so a link out of the folder is replaced, never written
/// through. Returns the path written.
pub fn write_in(folder: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let root =
        RootDir::open(folder).map_err(|e| format!("cannot open {}: {e}", folder.display()))?;
    let path = folder.join(name);
    root.write_atomic(Path::new(name), text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Adds `m` to its file: under `cwd` (the project's) or `home` (rab's home). Returns
/// the file written.
pub fn remember(m: &MemoryLine, cwd: &Path, home: &Path) -> Result<PathBuf, String> {
    let scope = if m.global { MemoryScope::User } else { MemoryScope::Project };
    let (folder, name) = scope.file(cwd, home);
    let mut text = read_in(&folder, name).map_err(|e| format!("not written: {e}"))?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let line = m.text.replace(['\r', '\n'], " ");
    text.push_str(&format!("- {line}\n"));
    write_in(&folder, name, &text)
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
