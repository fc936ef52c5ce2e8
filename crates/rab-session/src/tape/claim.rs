//! One writer per session. A process that appends to a session holds an exclusive
//! advisory lock (`flock`) on its file from the moment it continues it (or first writes
//! a new one) until it lets it go; a second process that tries gets [`Error::Busy`]
//! and may continue a copy instead ([`Tape::forked`]), so two processes never
//! interleave lines in one file. Readers (listing, search, export) take no lock. The
//! lock goes with the process, so a crash leaves none behind.

use std::fs::File;
use std::path::Path;

use super::{Error, Tape, open_append};
use crate::entry::EntryBody;

/// Takes the writer's lock on `file` (the session at `path`), or says who has it.
pub(crate) fn lock(file: &File, path: &Path) -> Result<(), Error> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Busy { path: path.to_path_buf() }),
        Err(std::fs::TryLockError::Error(source)) => {
            Err(Error::Io { path: path.to_path_buf(), source })
        }
    }
}

impl Tape {
    /// Makes this process the session's writer now, not at its first append: fails with
    /// [`Error::Busy`] while another process writes it. A session not yet on disk has
    /// nothing to claim (its first append creates and locks the file).
    pub fn claim(&mut self) -> Result<(), Error> {
        let Some(path) = self.path.clone() else { return Ok(()) };
        if self.file.is_some() || !path.exists() {
            return Ok(());
        }
        let file = open_append(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        lock(&file, &path)?;
        self.file = Some(Box::new(file));
        Ok(())
    }

    /// A new session in `dir` holding a copy of this one's active branch (entry ids
    /// made anew, references between them kept), its header naming this one as its
    /// parent. Written at once; this tape is left as it is.
    pub fn forked(&self, dir: &Path) -> Result<Tape, Error> {
        let parent = self.path().map(|p| p.display().to_string());
        let cwd = std::path::PathBuf::from(&self.header().cwd);
        let mut new = Tape::create(dir, &cwd, parent);
        let mut map: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        let bodies: Vec<(String, EntryBody)> =
            self.active_branch().iter().map(|e| (e.id.clone(), e.body.clone())).collect();
        for (old_id, mut body) in bodies {
            match &mut body {
                EntryBody::Compaction { first_kept_entry_id, .. } => {
                    if let Some(n) = map.get(first_kept_entry_id) {
                        *first_kept_entry_id = n.clone();
                    }
                }
                EntryBody::Label { target_id, .. } => {
                    if let Some(n) = map.get(target_id) {
                        *target_id = n.clone();
                    }
                }
                EntryBody::Message { .. }
                | EntryBody::ModelChange { .. }
                | EntryBody::ThinkingLevelChange { .. }
                | EntryBody::Context { .. }
                | EntryBody::Custom { .. } => {}
            }
            let id = new.append(body)?.id.clone();
            map.insert(old_id, id);
        }
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryBody;

    fn note(text: &str) -> EntryBody {
        EntryBody::Custom { custom_type: "note".into(), data: serde_json::json!(text) }
    }

    #[test]
    fn a_second_writer_is_refused_and_can_fork_instead() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = Tape::create(dir.path(), dir.path(), None);
        first.append(note("one")).unwrap();
        let path = first.path().unwrap().to_path_buf();
        // Another handle (as another process would have) cannot write it.
        let (mut second, _) = Tape::open(&path).unwrap();
        match second.claim() {
            Err(Error::Busy { path: p }) => assert_eq!(p, path),
            other => panic!("{other:?}"),
        }
        let err = second.append(note("two")).unwrap_err();
        assert!(err.to_string().contains("--fork"), "{err}");
        // It can continue a copy.
        let forked = second.forked(dir.path()).unwrap();
        assert_ne!(forked.path(), Some(path.as_path()));
        assert_eq!(forked.header().parent_session.as_deref(), Some(path.to_str().unwrap()));
        assert_eq!(forked.entries().len(), 1);
        // The first writer goes on; the file has its lines only.
        first.append(note("three")).unwrap();
        let (reloaded, warnings) = Tape::open(&path).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(reloaded.entries().len(), 2);
        // Once the first lets go, the session can be claimed.
        drop(first);
        let (mut third, _) = Tape::open(&path).unwrap();
        third.claim().unwrap();
        third.append(note("four")).unwrap();
    }
}
