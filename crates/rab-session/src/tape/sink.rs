//! Where a tape's lines go. A session on disk appends to its [`File`]; a test (or a
//! host that keeps sessions elsewhere) can put any [`TapeSink`] in its place, such as
//! one that fails like a full disk, to check that trouble while writing never damages
//! what is already written.

use std::fs::File;
use std::io::{self, Write as _};

/// The end of a tape's file that appends go to.
pub trait TapeSink: Send + Sync + std::fmt::Debug {
    /// Appends `bytes` (one or more whole lines) at the end.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// The length in bytes now.
    fn size(&self) -> io::Result<u64>;
    /// Cuts the end back to `len` bytes: undoes an append that failed part-way.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl TapeSink for File {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }

    fn size(&self) -> io::Result<u64> {
        self.metadata().map(|m| m.len())
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::entry::EntryBody;
    use crate::tape::{Error, Tape};

    /// A disk with room for `room` bytes: an append writes what fits, then fails as a
    /// full disk does (ENOSPC), leaving a torn line behind it.
    #[derive(Debug, Clone)]
    struct Disk {
        bytes: Arc<Mutex<Vec<u8>>>,
        room: Arc<Mutex<usize>>,
    }

    impl Disk {
        fn new(room: usize) -> Self {
            Self { bytes: Arc::default(), room: Arc::new(Mutex::new(room)) }
        }

        fn contents(&self) -> Vec<u8> {
            self.bytes.lock().unwrap().clone()
        }
    }

    impl TapeSink for Disk {
        fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut held = self.bytes.lock().unwrap();
            let free = self.room.lock().unwrap().saturating_sub(held.len());
            held.extend_from_slice(&bytes[..bytes.len().min(free)]);
            if bytes.len() > free {
                return Err(io::Error::from_raw_os_error(28));
            }
            Ok(())
        }

        fn size(&self) -> io::Result<u64> {
            Ok(self.bytes.lock().unwrap().len() as u64)
        }

        fn truncate(&mut self, len: u64) -> io::Result<()> {
            self.bytes.lock().unwrap().truncate(len as usize);
            Ok(())
        }
    }

    fn note(i: usize) -> EntryBody {
        EntryBody::Custom { custom_type: "note".into(), data: serde_json::json!(format!("n{i}")) }
    }

    #[test]
    fn a_full_disk_at_any_byte_leaves_every_written_entry_whole() {
        let dir = tempfile::tempdir().unwrap();
        // The size of a header and five entries, to put the disk's end at every byte.
        let mut whole = Tape::create(dir.path(), dir.path(), None);
        let disk = Disk::new(usize::MAX);
        whole.set_sink(Box::new(disk.clone()));
        for i in 0..5 {
            whole.append(note(i)).unwrap();
        }
        let total = disk.contents().len();
        for room in 0..=total {
            let mut tape = Tape::create(dir.path(), dir.path(), None);
            let disk = Disk::new(room);
            tape.set_sink(Box::new(disk.clone()));
            let mut written = 0;
            let mut failure = None;
            for i in 0..5 {
                match tape.append(note(i)) {
                    Ok(_) => written += 1,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            assert_eq!(failure.is_none(), room == total, "room {room}");
            if let Some(e) = failure {
                assert!(
                    matches!(&e, Error::Io { source, .. } if source.raw_os_error() == Some(28))
                );
                assert!(e.to_string().contains("No space left on device"), "{e}");
            }
            // In memory: only what reached the disk.
            assert_eq!(tape.entries().len(), written, "room {room}");
            // On the disk: whole lines only, which load to the same branch.
            let bytes = disk.contents();
            assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "room {room}: torn tail");
            if written > 0 {
                let path = dir.path().join(format!("{room}.jsonl"));
                std::fs::write(&path, &bytes).unwrap();
                let (loaded, warnings) = Tape::open(&path).unwrap();
                assert!(warnings.is_empty(), "room {room}: {warnings:?}");
                let ids = |t: &Tape| -> Vec<String> {
                    t.active_branch().iter().map(|e| e.id.clone()).collect()
                };
                assert_eq!(ids(&loaded), ids(&tape), "room {room}");
            }
            // Room again: the session goes on where it stopped.
            *disk.room.lock().unwrap() = usize::MAX;
            tape.append(note(9)).unwrap();
            assert_eq!(tape.entries().len(), written + 1);
            let path = dir.path().join(format!("{room}-after.jsonl"));
            std::fs::write(&path, disk.contents()).unwrap();
            let (loaded, warnings) = Tape::open(&path).unwrap();
            assert!(warnings.is_empty(), "room {room}: {warnings:?}");
            assert_eq!(loaded.active_branch().len(), written + 1, "room {room}");
        }
    }
}
