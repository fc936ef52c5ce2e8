//! What the bot keeps across restarts, in `~/.rab/telegram/BOT.json` (mode 0600):
//! the `getUpdates` offset, each chat's session file, and the messages taken but not
//! yet answered.
//!
//! An update is written here (with the offset past it) before anything acts on it, and
//! marked started just before its prompt goes to the session. So after a crash a
//! message that had not started is handled then (nothing lost), and one that had
//! started is not run again (nothing repeated): its chat is told the turn was cut off;
//! the session's tape, written before each step, already holds what happened.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The bot's state on disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Saved {
    /// The next `getUpdates` offset.
    pub offset: i64,
    /// Chat id → its session file.
    pub chats: BTreeMap<String, PathBuf>,
    /// Messages taken and not yet answered.
    pub pending: Vec<Pending>,
}

/// A message taken and not yet answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// The update as Telegram sent it.
    pub update: Value,
    /// Its prompt went to the session.
    pub started: bool,
}

impl Pending {
    /// The update's id.
    pub fn id(&self) -> i64 {
        self.update["update_id"].as_i64().unwrap_or(0)
    }
}

/// The state file, written atomically on every change.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    saved: std::sync::Mutex<Saved>,
}

impl Store {
    /// The store in `path`, as last saved (empty when there is none). A file that does
    /// not parse is an error naming it: starting over would repeat or lose messages.
    pub fn open(path: &Path) -> Result<Self, String> {
        let saved = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: {e}; fix or remove it (the bot's offset and chats are kept there)",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Saved::default(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(Self { path: path.to_path_buf(), saved: std::sync::Mutex::new(saved) })
    }

    /// A copy of what is saved.
    pub fn saved(&self) -> Saved {
        self.saved.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Changes the state and writes it (atomically, mode 0600) before returning.
    pub fn update(&self, change: impl FnOnce(&mut Saved)) -> Result<(), String> {
        let mut saved = self.saved.lock().map_err(|_| "the bot's state lock is poisoned")?;
        change(&mut saved);
        let text = serde_json::to_vec_pretty(&*saved).map_err(|e| e.to_string())?;
        rab_tools::atomic_write::write_atomic(&self.path, &text)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(())
    }

    /// Takes updates: saved as pending with the offset past the last, in one write.
    pub fn take(&self, updates: &[Value]) -> Result<(), String> {
        let Some(last) = updates.iter().filter_map(|u| u["update_id"].as_i64()).max() else {
            return Ok(());
        };
        self.update(|s| {
            s.offset = s.offset.max(last + 1);
            for u in updates {
                // Button presses are answered at once; only messages wait.
                if u.get("message").is_some() {
                    s.pending.push(Pending { update: u.clone(), started: false });
                }
            }
        })
    }

    /// Marks update `id` started.
    pub fn start(&self, id: i64) -> Result<(), String> {
        self.update(|s| {
            if let Some(p) = s.pending.iter_mut().find(|p| p.id() == id) {
                p.started = true;
            }
        })
    }

    /// Update `id` is answered.
    pub fn finish(&self, id: i64) -> Result<(), String> {
        self.update(|s| s.pending.retain(|p| p.id() != id))
    }

    /// Chat `chat`'s session file, if it has one.
    pub fn session(&self, chat: i64) -> Option<PathBuf> {
        self.saved.lock().ok().and_then(|s| s.chats.get(&chat.to_string()).cloned())
    }

    /// Chat `chat` continues in `path`.
    pub fn set_session(&self, chat: i64, path: &Path) -> Result<(), String> {
        if self.session(chat).as_deref() == Some(path) {
            return Ok(());
        }
        self.update(|s| {
            s.chats.insert(chat.to_string(), path.to_path_buf());
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn taken_updates_survive_a_restart_until_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bot.json");
        let store = Store::open(&path).unwrap();
        let msg = |id: i64| json!({"update_id": id, "message": {"text": "hi"}});
        let press = json!({"update_id": 12, "callback_query": {"data": "x"}});
        store.take(&[msg(10), msg(11), press]).unwrap();
        store.start(10).unwrap();
        store.set_session(7, Path::new("/s/a.jsonl")).unwrap();
        let again = Store::open(&path).unwrap().saved();
        assert_eq!(again.offset, 13);
        assert_eq!(
            again.pending.iter().map(|p| (p.id(), p.started)).collect::<Vec<_>>(),
            [(10, true), (11, false)]
        );
        assert_eq!(again.chats["7"], Path::new("/s/a.jsonl"));
        store.finish(10).unwrap();
        assert_eq!(Store::open(&path).unwrap().saved().pending.len(), 1);
        std::fs::write(&path, "{broken").unwrap();
        assert!(Store::open(&path).unwrap_err().contains("bot.json"));
    }
}
