//! Protected paths the sandbox cannot mount over — missing ones (`.mcp.json` in a
//! project without one) and links (`AGENTS.md -> CLAUDE.md`) — are put back as they
//! were once the program and everything it started have ended (the helper waits for
//! the PID namespace to empty). A command that made one, or replaced the link, finds it
//! gone, and its output says so. A `.git` a command made (`git init`) is kept, minus
//! hooks and config that would run programs.
//!
//! Everything is done through the root's handle without following links ([`RootDir`]),
//! so a link a command left on the way cannot turn a removal against another folder.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType};

use super::protected::Guarded;
use crate::beneath::{RootDir, open_child_dir, remove_tree_at};

/// Puts `guarded` back and cleans the `.git` folders made under `fresh_git` roots;
/// returns a note for each change, for the command's output.
pub fn restore(guarded: &[Guarded], fresh_git: &[std::path::PathBuf]) -> Vec<String> {
    let mut notes = Vec::new();
    // Each root's handle, opened once for all of its protected paths.
    let mut tops: Vec<(&Path, OwnedFd)> = Vec::new();
    for g in guarded {
        let top = match tops.iter().position(|(root, _)| *root == g.root.as_path()) {
            Some(i) => &tops[i].1,
            None => match RootDir::open(&g.root).and_then(|r| r.open_dir(Path::new("."))) {
                Ok(fd) => {
                    tops.push((g.root.as_path(), fd));
                    &tops[tops.len() - 1].1
                }
                Err(e) => {
                    notes.push(format!("could not check {}: {e}", g.path.display()));
                    continue;
                }
            },
        };
        match restore_one(g, top) {
            Ok(Some(note)) => notes.push(note),
            Ok(None) => {}
            Err(e) => notes.push(format!("could not check {}: {e}", g.path.display())),
        }
    }
    for root in fresh_git {
        match super::git_config::clean_new_git(root) {
            Ok(mut n) => notes.append(&mut n),
            Err(e) => notes.push(format!("could not check {}/.git: {e}", root.display())),
        }
    }
    notes
}

/// Puts `g` back; `top` is its root's handle.
fn restore_one(g: &Guarded, top: &OwnedFd) -> io::Result<Option<String>> {
    let Ok(rel) = g.path.strip_prefix(&g.root) else { return Ok(None) };
    let parts = crate::beneath::names(rel);
    let Some((name, dirs)) = parts.split_last() else { return Ok(None) };
    let mut below: Option<OwnedFd> = None;
    let mut walked = g.root.clone();
    for part in dirs {
        let dir = below.as_ref().unwrap_or(top);
        walked.push(part);
        match rustix::fs::statat(dir, *part, AtFlags::SYMLINK_NOFOLLOW) {
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                let next = open_child_dir(dir, part)?;
                below = Some(next);
            }
            Ok(_) => {
                // A link (or file) where a folder on the way to a protected path was.
                remove_tree_at(dir, part)?;
                return Ok(Some(removed(&walked, &g.path)));
            }
        }
    }
    let dir = below.as_ref().unwrap_or(top);
    let now = rustix::fs::statat(dir, *name, AtFlags::SYMLINK_NOFOLLOW);
    match (&g.link, now) {
        (None, Err(rustix::io::Errno::NOENT)) => Ok(None),
        (None, Err(e)) => Err(e.into()),
        (None, Ok(_)) => {
            remove_tree_at(dir, name)?;
            Ok(Some(removed(&g.path, &g.path)))
        }
        (Some(target), now) => {
            let is_same = now
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
                && rustix::fs::readlinkat(dir, *name, Vec::new())
                    .is_ok_and(|t| t.as_bytes() == target.as_os_str().as_encoded_bytes());
            if is_same {
                return Ok(None);
            }
            match remove_tree_at(dir, name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            rustix::fs::symlinkat(target.as_path(), dir, *name)?;
            Ok(Some(format!(
                "{} is protected: this command changed it, and it was put back (a link to {}) \
                 when the command ended. Protected files are changed with the file tools, \
                 which ask the user (docs/permissions.md).",
                g.path.display(),
                target.display()
            )))
        }
    }
}

fn removed(what: &Path, protected: &Path) -> String {
    format!(
        "{} was removed when the command ended: {} is protected, and commands may not \
         create it. Protected files are changed with the file tools, which ask the user \
         (docs/permissions.md).",
        what.display(),
        protected.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn what_a_command_made_at_a_protected_path_is_removed_and_a_link_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("tasks.json"), "victim").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "real").unwrap();
        let second = tempfile::tempdir().unwrap();
        let other = second.path().canonicalize().unwrap();
        let guarded = vec![
            Guarded { root: root.clone(), path: root.join(".mcp.json"), link: None },
            Guarded { root: root.clone(), path: root.join(".vscode/tasks.json"), link: None },
            Guarded { root: root.clone(), path: root.join(".claude"), link: None },
            Guarded {
                root: root.clone(),
                path: root.join("AGENTS.md"),
                link: Some("CLAUDE.md".into()),
            },
            Guarded { root: root.clone(), path: root.join(".envrc"), link: None },
            // A second root (`--add-dir`), and one that is gone.
            Guarded { root: other.clone(), path: other.join(".mcp.json"), link: None },
            Guarded { root: root.join("gone"), path: root.join("gone/.envrc"), link: None },
        ];
        std::fs::write(other.join(".mcp.json"), "{}").unwrap();
        // What a hostile command leaves behind.
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join(".vscode")).unwrap();
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "evil").unwrap();
        let notes = restore(&guarded, &[]);
        assert_eq!(notes.len(), 6, "{notes:?}");
        assert!(!other.join(".mcp.json").exists());
        assert!(notes.iter().any(|n| n.starts_with("could not check") && n.contains("gone")));
        assert!(!root.join(".mcp.json").exists());
        assert!(!root.join(".claude").exists());
        assert!(std::fs::symlink_metadata(root.join(".vscode")).is_err());
        assert_eq!(std::fs::read_to_string(outside.path().join("tasks.json")).unwrap(), "victim");
        assert_eq!(std::fs::read_link(root.join("AGENTS.md")).unwrap(), Path::new("CLAUDE.md"));
        assert_eq!(std::fs::read_to_string(root.join("CLAUDE.md")).unwrap(), "real");
        // Nothing changed: nothing to say but the root that is gone.
        assert_eq!(restore(&guarded, &[]).len(), 1);
    }
}
