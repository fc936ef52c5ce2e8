//! rab-session: the session tape.
//!
//! It owns the JSONL format ([`Header`], [`Entry`], [`EntryBody`]), the [`Tape`] (append,
//! branch, active branch, torn-line recovery, repair of interrupted tool calls), where
//! sessions are stored and how they are listed. It must not call a model.
//!
//! ```
//! use rab_session::{EntryBody, Tape};
//! let dir = tempfile::tempdir().unwrap();
//! let mut tape = Tape::create(dir.path(), std::path::Path::new("/work/p"), None);
//! tape.append(EntryBody::Message { message: rab_ai::Message::user("hi"), details: None }).unwrap();
//! let (loaded, warnings) = Tape::open(tape.path().unwrap()).unwrap();
//! assert!(warnings.is_empty());
//! assert_eq!(loaded.messages(), vec![rab_ai::Message::user("hi")]);
//! ```

#![deny(missing_docs)]

pub mod checkpoints;
mod entry;
pub mod export;
mod id;
pub mod import;
pub mod search;
mod source;
mod store;
mod tape;
pub mod time;

pub use checkpoints::{CheckpointError, CheckpointStore, content_hash};
pub use entry::{Entry, EntryBody, FORMAT_VERSION, Header};
pub use id::{entry_id, session_id};
pub use store::{SessionInfo, list_sessions, most_recent, session_dir};
pub use tape::{EntryKind, Error, INTERRUPTED_RESULT, Spent, Tape, TapeSink, Warning};
