//! Writes to protected paths (rab-tools' [`rab_tools::sandbox::protected`] list: git
//! hooks and config, `.rab/`, `.claude/`, `.mcp.json`, instruction files, editor task
//! files, shell start-up files, rab's own home): every file-tool write to one asks, in
//! every mode, accept-edits and yolo included. Only a rule in the user's own settings
//! (`~/.rab/agent/settings.json`) that names the exact path allows it without asking; a
//! project's rules, hooks and "always" answers never do.

use std::path::{Path, PathBuf};

/// Where the protected paths are, and what the user allowed by name.
#[derive(Clone, Debug, Default)]
pub struct ProtectedPaths {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
    rab_home: Option<PathBuf>,
    /// Paths named exactly by allow rules in the user's own settings.
    user_allowed: Vec<PathBuf>,
    /// The user's own settings file, named in the advice.
    user_settings: Option<PathBuf>,
}

impl ProtectedPaths {
    /// Protected paths under `roots` (the workspace roots), `home`'s start-up files and
    /// `rab_home`; paths are compared as written and with links resolved.
    pub fn new(roots: &[PathBuf], home: Option<&Path>, rab_home: Option<&Path>) -> Self {
        let canon = |p: &Path| rab_tools::sandbox::real_path(&rab_tools::normalize(p));
        let mut all: Vec<PathBuf> = roots.iter().map(|r| rab_tools::normalize(r)).collect();
        all.extend(roots.iter().map(|r| canon(r)));
        all.sort();
        all.dedup();
        Self { roots: all, home: home.map(canon), rab_home: rab_home.map(canon), ..Self::default() }
    }

    /// Adds the user's own exact-path allow rules and where their settings are.
    pub fn with_user_rules(mut self, allowed: Vec<PathBuf>, settings: Option<PathBuf>) -> Self {
        self.user_allowed = allowed;
        self.user_settings = settings;
        self
    }

    /// Why writing `lexical` (absolute, folded; `real` is it with links resolved) must
    /// ask, or `None` when it is not protected or the user allowed it by name.
    pub fn check(&self, lexical: &Path, real: &Path) -> Option<String> {
        let hit = [lexical, real].into_iter().find(|p| {
            rab_tools::sandbox::protected::is_protected(
                p,
                &self.roots,
                self.home.as_deref(),
                self.rab_home.as_deref(),
            )
        })?;
        if self.user_allowed.iter().any(|a| a == lexical || a == real) {
            return None;
        }
        let shown = if hit == lexical {
            lexical.display().to_string()
        } else {
            format!("{} (which is {})", lexical.display(), real.display())
        };
        Some(format!(
            "{shown} is a protected path (git hooks and config, rab's and Claude Code's \
             settings, MCP servers, skills, instruction files, editor tasks and shell start-up \
             files run or steer programs later): every change to it asks, in every mode"
        ))
    }

    /// The one way to let a write to `path` run without asking.
    pub fn how_to_allow(&self, tool: &str, path: &Path) -> String {
        let file = self
            .user_settings
            .as_ref()
            .map_or_else(|| "~/.rab/agent/settings.json".to_owned(), |f| f.display().to_string());
        format!(
            "To allow it without a question, add the rule \"{tool}({})\" to permissions.allow \
             in your own settings ({file}); a project's settings, --allowed-tools and \
             \"always\" answers never allow a protected path",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_ask_unless_the_user_named_them() {
        let p = ProtectedPaths::new(&[PathBuf::from("/w")], Some(Path::new("/h")), None);
        let cfg = Path::new("/w/.git/config");
        assert!(p.check(cfg, cfg).is_some_and(|why| why.contains("protected path")));
        assert!(p.check(Path::new("/w/src/a.rs"), Path::new("/w/src/a.rs")).is_none());
        // Through a link: the real path counts.
        let why = p.check(Path::new("/w/docs/x"), Path::new("/w/.rab/settings.json")).unwrap();
        assert!(why.contains("which is /w/.rab/settings.json"), "{why}");
        let allowed = p.with_user_rules(vec![cfg.to_path_buf()], None);
        assert!(allowed.check(cfg, cfg).is_none());
        assert!(allowed.check(Path::new("/h/.bashrc"), Path::new("/h/.bashrc")).is_some());
    }
}
