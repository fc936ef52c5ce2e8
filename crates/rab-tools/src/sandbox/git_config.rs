//! A `.git` folder a sandboxed command created (`git init`, `git clone .`): the
//! repository is kept, but what git would run later outside the sandbox is taken out —
//! hooks other than git's own `*.sample` files, a `commondir` or `config.worktree`, and
//! every config key that is not on a short list of keys that only describe the
//! repository (`core.fsmonitor`, `core.hooksPath`, aliases, filters, `include` … go).

use std::io;
use std::path::Path;

use rustix::fs::{AtFlags, FileType};

use crate::beneath::{RootDir, remove_tree_at};

/// Keys a new repository's config may keep, as `section.key` (lower case); `*` stands
/// for any subsection (`remote.*.url`).
const SAFE_KEYS: [&str; 27] = [
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.quotepath",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "remote.*.url",
    "remote.*.fetch",
    "remote.*.pushurl",
    "remote.*.tagopt",
    "remote.*.prune",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "user.name",
    "user.email",
    "init.defaultbranch",
    "extensions.objectformat",
    "extensions.refstorage",
    "submodule.*.url",
    "submodule.*.active",
];

/// Cleans `root/.git` when a command made it; the notes say what was taken out.
pub fn clean_new_git(root: &Path) -> io::Result<Vec<String>> {
    let dir = RootDir::open(root)?;
    let git = Path::new(".git");
    let st = match dir.symlink_metadata(git) {
        Ok(st) => st,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let shown = root.join(".git");
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        // A `.git` file or link would point git at a folder of the command's choosing.
        let top = dir.open_dir(Path::new("."))?;
        remove_tree_at(&top, git.as_os_str())?;
        return Ok(vec![format!(
            "{} was removed when the command ended: a new .git that is not a folder \
             would point git at another repository's config (docs/permissions.md).",
            shown.display()
        )]);
    }
    let mut notes = Vec::new();
    let gitdir = dir.open_dir(git)?;
    for name in ["commondir", "config.worktree"] {
        if rustix::fs::statat(&gitdir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            remove_tree_at(&gitdir, name.as_ref())?;
            notes.push(format!("removed {}/{name}", shown.display()));
        }
    }
    if let Ok(hooks) = dir.open_dir(&git.join("hooks")) {
        let mut planted = Vec::new();
        for entry in rustix::fs::Dir::read_from(&hooks)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." && !name.ends_with(".sample") {
                planted.push(entry.file_name().to_owned());
            }
        }
        for name in planted {
            remove_tree_at(&hooks, std::os::unix::ffi::OsStrExt::from_bytes(name.as_bytes()))?;
            notes.push(format!(
                "removed the hook {}/hooks/{}",
                shown.display(),
                name.to_string_lossy()
            ));
        }
    } else if dir.symlink_metadata(&git.join("hooks")).is_ok() {
        let top = dir.open_dir(git)?;
        remove_tree_at(&top, "hooks".as_ref())?;
        notes.push(format!("removed {}/hooks (not a folder)", shown.display()));
    }
    let config = git.join("config");
    if let Ok(file) = dir.open_read(&config) {
        let text = io::read_to_string(file)?;
        let (kept, dropped) = filter_config(&text);
        if !dropped.is_empty() {
            dir.write_atomic(&config, kept.as_bytes())?;
            notes.push(format!(
                "removed from {}/config: {} (keys that make git run programs are not kept in \
                 a repository a command created)",
                shown.display(),
                dropped.join(", ")
            ));
        }
    }
    if notes.is_empty() {
        return Ok(notes);
    }
    let mut out = vec![format!(
        "{} was made by this command; what git would run outside the sandbox was taken \
         out when it ended (docs/permissions.md):",
        shown.display()
    )];
    out.extend(notes.into_iter().map(|n| format!("  {n}")));
    Ok(out)
}

/// The config with only [`SAFE_KEYS`] kept, and the keys dropped.
fn filter_config(text: &str) -> (String, Vec<String>) {
    let mut kept = String::new();
    let mut dropped = Vec::new();
    let mut section = String::new();
    let mut header: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if let Some(inner) = t.strip_prefix('[') {
            let inner = inner.split(']').next().unwrap_or("");
            let (name, sub) = match inner.split_once(char::is_whitespace) {
                Some((n, s)) => (n, Some(s.trim().trim_matches('"'))),
                None => match inner.split_once('.') {
                    Some((n, s)) => (n, Some(s)),
                    None => (inner, None),
                },
            };
            section = match sub {
                Some(_) => format!("{}.*", name.to_ascii_lowercase()),
                None => name.to_ascii_lowercase(),
            };
            header = Some(format!("[{inner}]"));
            // Anything after the closing bracket (`[core] fsmonitor = x`) is a key too.
            let rest = t.split_once(']').map_or("", |(_, r)| r.trim());
            if rest.is_empty() {
                continue;
            }
            dropped.push(format!("{section}: {rest}"));
            continue;
        }
        let key = t.split(['=', ' ', '\t']).next().unwrap_or("").to_ascii_lowercase();
        let full = format!("{section}.{key}");
        let is_continued = t.ends_with('\\');
        if SAFE_KEYS.contains(&full.as_str()) && !is_continued {
            if let Some(h) = header.take() {
                kept.push_str(&h);
                kept.push('\n');
            }
            kept.push('\t');
            kept.push_str(t);
            kept.push('\n');
        } else {
            dropped.push(full.replace(".*.", "."));
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_keys_that_describe_the_repository_are_kept() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch /tmp/x\n\
                    \tbare = false\n[remote \"origin\"]\n\turl = https://x/y\n\
                    [alias]\n\tst = !sh -c evil\n[include]\n\tpath = ../evil\n\
                    [core] hooksPath = /tmp/h\n";
        let (kept, dropped) = filter_config(text);
        assert_eq!(
            kept,
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\
             \turl = https://x/y\n"
        );
        assert_eq!(
            dropped,
            ["core.fsmonitor", "alias.st", "include.path", "core: hooksPath = /tmp/h"]
        );
    }

    #[test]
    fn a_new_git_keeps_its_samples_and_loses_planted_hooks_and_config() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join(".git/hooks/post-commit"), "#!/bin/sh\nevil\n").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n\tbare = false\n")
            .unwrap();
        std::fs::write(root.join(".git/commondir"), "../elsewhere\n").unwrap();
        let notes = clean_new_git(root).unwrap();
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(root.join(".git/hooks/pre-commit.sample").exists());
        assert!(!root.join(".git/hooks/post-commit").exists());
        assert!(!root.join(".git/commondir").exists());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert_eq!(clean_new_git(root).unwrap(), Vec::<String>::new());
    }
}
