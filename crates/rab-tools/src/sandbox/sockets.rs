//! Unix sockets of the user's own servers in the home folder — gpg-agent's
//! (`~/.gnupg/S.gpg-agent`), Docker Desktop's or colima's `docker.sock`, a custom
//! ssh-agent's — which the sandbox's read-only view would still let a program connect
//! to (a read-only mount does not stop `connect`). The sandbox covers the ones it finds
//! under home when it first starts a command: a bounded walk that skips the big
//! folders servers do not keep sockets in.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// How deep below home the walk goes (`~/.lima/VM/sock/ssh.sock` is 4).
const MAX_DEPTH: usize = 4;
/// How many entries it looks at in all.
const BUDGET: usize = 20_000;
/// Folders no server keeps its socket in, and that can be huge.
const SKIPPED: [&str; 12] = [
    ".cache",
    ".cargo",
    ".rustup",
    ".npm",
    ".m2",
    ".gradle",
    "go",
    "node_modules",
    ".git",
    "target",
    ".pnpm-store",
    "snap",
];

/// The sockets under `home`, not looking inside `skip` (the workspace, rab's home).
pub fn find(home: &Path, skip: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut budget = BUDGET;
    walk(home, 0, skip, &mut budget, &mut out);
    out
}

fn walk(dir: &Path, depth: usize, skip: &[PathBuf], budget: &mut usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_socket() {
            out.push(path);
        } else if kind.is_dir()
            && depth + 1 < MAX_DEPTH
            && !SKIPPED.iter().any(|s| entry.file_name() == *s)
            && !skip.iter().any(|s| path.starts_with(s))
        {
            walk(&path, depth + 1, skip, budget, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_in_home_are_found_and_skipped_folders_are_not_walked() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir_all(h.join(".gnupg")).unwrap();
        std::fs::create_dir_all(h.join(".docker/run")).unwrap();
        std::fs::create_dir_all(h.join("work/proj")).unwrap();
        std::fs::create_dir_all(h.join(".cache/x")).unwrap();
        let bind = |p: PathBuf| std::os::unix::net::UnixListener::bind(p).unwrap();
        let _a = bind(h.join(".gnupg/S.gpg-agent"));
        let _b = bind(h.join(".docker/run/docker.sock"));
        let _c = bind(h.join("work/proj/dev.sock"));
        let _d = bind(h.join(".cache/x/s.sock"));
        let mut found = find(h, &[h.join("work/proj")]);
        found.sort();
        assert_eq!(found, [h.join(".docker/run/docker.sock"), h.join(".gnupg/S.gpg-agent")]);
    }
}
