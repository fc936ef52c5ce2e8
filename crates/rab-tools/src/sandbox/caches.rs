//! The tool caches confined programs may write: download caches that builds fill
//! (`~/.cargo/registry`, `~/.npm/_cacache`, each folder in `~/.cache`, …), never the
//! folders tools run programs from or read settings from (`~/.cargo/bin`,
//! `~/.cargo/config.toml`, `~/.local/bin`, `~/.npmrc`): a command must not leave there
//! something the user runs later outside the sandbox.

use std::path::{Path, PathBuf};

/// Caches under the home folder, as documented in docs/permissions.md.
pub const UNDER_HOME: [&str; 14] = [
    ".cargo/registry",
    ".cargo/git",
    // cargo's lock and last-use files (data, not programs).
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".cargo/.global-cache",
    ".npm/_cacache",
    ".pnpm-store",
    ".yarn/berry/cache",
    ".bun/install/cache",
    "go/pkg/mod",
    ".gradle/caches",
    ".m2/repository",
    ".nuget/packages",
    ".ivy2/cache",
];

/// The tool caches under `home`, plus those the environment names (`CARGO_HOME`'s
/// registry and git folders, `GOMODCACHE`, `npm_config_cache`'s `_cacache`), plus each
/// folder in `~/.cache` (or `XDG_CACHE_HOME`); whether they exist is checked later.
pub fn tool_caches(home: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let abs = |var: &str| env(var).filter(|d| Path::new(d).is_absolute()).map(PathBuf::from);
    let mut out: Vec<PathBuf> =
        home.map(|h| UNDER_HOME.iter().map(|d| h.join(d)).collect()).unwrap_or_default();
    if let Some(cargo) = abs("CARGO_HOME") {
        out.extend(
            [".package-cache", ".package-cache-mutate", ".global-cache", "registry", "git"]
                .map(|d| cargo.join(d)),
        );
    }
    out.extend(abs("GOMODCACHE"));
    out.extend(abs("npm_config_cache").map(|c| c.join("_cacache")));
    let cache = abs("XDG_CACHE_HOME").or_else(|| home.map(|h| h.join(".cache")));
    if let Some(cache) = cache {
        // Each tool's folder, not `~/.cache` itself: a new folder there is not a cache.
        let dirs = std::fs::read_dir(&cache).into_iter().flatten().flatten();
        out.extend(dirs.filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_are_named_folders_never_a_tool_home_as_a_whole() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cache/pip")).unwrap();
        let caches = tool_caches(Some(home.path()), |_| None);
        let h = home.path();
        assert!(caches.contains(&h.join(".cargo/registry")));
        assert!(caches.contains(&h.join(".npm/_cacache")));
        assert!(caches.contains(&h.join(".cache/pip")));
        for whole in [".cargo", ".cargo/bin", ".npm", ".local", ".local/bin", ".cache", ".rustup"] {
            assert!(!caches.contains(&h.join(whole)), "{whole} must not be writable");
        }
        let with_env = tool_caches(None, |v| (v == "CARGO_HOME").then(|| "/opt/cargo".to_owned()));
        assert!(with_env.contains(&PathBuf::from("/opt/cargo/registry")));
        assert!(!with_env.contains(&PathBuf::from("/opt/cargo")));
    }
}
