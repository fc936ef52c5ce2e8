//! The layout of rab's home directory (`~/.rab`, or `RAB_HOME`).

use std::path::{Path, PathBuf};

use crate::{Env, Error};

/// Locations of rab's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    home: PathBuf,
}

impl Paths {
    /// `RAB_HOME` if set, else `$HOME/.rab`.
    pub fn from_env(env: &Env) -> Result<Self, Error> {
        if let Some(home) = env.get("RAB_HOME") {
            return Ok(Self { home: PathBuf::from(home) });
        }
        let user_home = env.get("HOME").or_else(|| env.get("USERPROFILE")).ok_or(Error::NoHome)?;
        Ok(Self { home: Path::new(user_home).join(".rab") })
    }

    /// A layout rooted at `home`.
    pub fn at(home: impl Into<PathBuf>) -> Self {
        Self { home: home.into() }
    }

    /// The home directory itself.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `agent/`: settings and credentials.
    pub fn agent_dir(&self) -> PathBuf {
        self.home.join("agent")
    }

    /// `agent/settings.json`.
    pub fn settings_file(&self) -> PathBuf {
        self.agent_dir().join("settings.json")
    }

    /// `agent/answers.json`: the user's "always" answers, per project.
    pub fn answers_file(&self) -> PathBuf {
        self.agent_dir().join("answers.json")
    }

    /// `agent/auth.json` (mode 0600).
    pub fn auth_file(&self) -> PathBuf {
        self.agent_dir().join("auth.json")
    }

    /// `models.json`: custom providers and models. Where it is missing and one lies
    /// beside settings.json (`agent/models.json`, where it is easy to put by mistake),
    /// that one.
    pub fn models_file(&self) -> PathBuf {
        let main = self.home.join("models.json");
        let beside = self.agent_dir().join("models.json");
        if !main.exists() && beside.is_file() { beside } else { main }
    }

    /// `sessions/`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.home.join("sessions")
    }

    /// `SYSTEM.md`: replaces the default system prompt.
    pub fn system_prompt_file(&self) -> PathBuf {
        self.home.join("SYSTEM.md")
    }

    /// `APPEND_SYSTEM.md`: appended to the system prompt.
    pub fn append_system_prompt_file(&self) -> PathBuf {
        self.home.join("APPEND_SYSTEM.md")
    }

    /// `AGENTS.md`: global context for every project.
    pub fn agents_file(&self) -> PathBuf {
        self.home.join("AGENTS.md")
    }

    /// `.rab/settings.json` of a project.
    pub fn project_settings_file(project: &Path) -> PathBuf {
        project.join(".rab").join("settings.json")
    }

    /// `.rab/settings.local.json` of a project: your own settings for it, kept out of
    /// git (`.rab/.gitignore` names it); "always allow" answers go here.
    pub fn project_local_settings_file(project: &Path) -> PathBuf {
        project.join(".rab").join("settings.local.json")
    }

    /// `trusted.json`: the folders trusted (and refused) to run what they bring.
    pub fn trust_file(&self) -> PathBuf {
        self.home.join("trusted.json")
    }

    /// `logs/rab.log`.
    pub fn log_file(&self) -> PathBuf {
        self.home.join("logs").join("rab.log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_file_beside_settings_is_found_when_the_home_one_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::from_pairs([("RAB_HOME", dir.path().to_str().unwrap())]);
        let paths = Paths::from_env(&env).unwrap();
        assert_eq!(paths.models_file(), dir.path().join("models.json"));
        std::fs::create_dir_all(dir.path().join("agent")).unwrap();
        std::fs::write(dir.path().join("agent/models.json"), "{}").unwrap();
        assert_eq!(paths.models_file(), dir.path().join("agent/models.json"));
        std::fs::write(dir.path().join("models.json"), "{}").unwrap();
        assert_eq!(paths.models_file(), dir.path().join("models.json"), "the home one wins");
    }
}
