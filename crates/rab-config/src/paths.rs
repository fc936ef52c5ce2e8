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

    /// `agent/auth.json` (mode 0600).
    pub fn auth_file(&self) -> PathBuf {
        self.agent_dir().join("auth.json")
    }

    /// `models.json`: custom providers and models.
    pub fn models_file(&self) -> PathBuf {
        self.home.join("models.json")
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

    /// `trusted.json`: the folders trusted (and refused) to run what they bring.
    pub fn trust_file(&self) -> PathBuf {
        self.home.join("trusted.json")
    }

    /// `logs/rab.log`.
    pub fn log_file(&self) -> PathBuf {
        self.home.join("logs").join("rab.log")
    }
}
