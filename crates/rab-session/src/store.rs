//! Where sessions live (`<sessions>/<cwd-slug>/<id>.jsonl`) and how they are listed.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rab_ai::{Content, Message};

use crate::entry::{Entry, EntryBody, Header};

/// The directory of a working directory's sessions: a readable slug of the path plus
/// a hash, so `/a/b` and `/a-b` never share one.
pub fn session_dir(sessions_root: &Path, cwd: &Path) -> PathBuf {
    let full = cwd.display().to_string();
    let mut slug: String = full
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' })
        .collect();
    if slug.len() > 60 {
        slug = slug[slug.len() - 60..].trim_start_matches('-').to_owned();
    }
    let mut hash: u32 = 0x811c_9dc5;
    for b in full.as_bytes() {
        hash ^= u32::from(*b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    sessions_root.join(format!("{slug}-{hash:08x}"))
}

/// A summary of one session file.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// Session id.
    pub id: String,
    /// Working directory.
    pub cwd: String,
    /// Creation time (RFC 3339).
    pub created: String,
    /// Last modification.
    pub modified: SystemTime,
    /// File size in bytes.
    pub size: u64,
    /// The first user message, shortened.
    pub first_message: String,
    /// The name given with `/name`, if any.
    pub name: Option<String>,
}

/// Sessions in `dir`, most recently modified first. Unreadable files are left out.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<SessionInfo> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| summarize(&p))
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| b.id.cmp(&a.id)));
    out
}

/// The most recently modified session in `dir`.
pub fn most_recent(dir: &Path) -> Option<PathBuf> {
    list_sessions(dir).into_iter().next().map(|s| s.path)
}

/// Reads the header, the first user message (within the first 50 lines) and the name.
fn summarize(path: &Path) -> Option<SessionInfo> {
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let mut lines = BufReader::new(file).lines();
    let header: Header = serde_json::from_str(&lines.next()?.ok()?).ok()?;
    let mut first_message = String::new();
    for line in lines.map_while(Result::ok).take(50) {
        let Ok(entry) = serde_json::from_str::<Entry>(&line) else { continue };
        if let Some(Message::User(u)) = entry.message() {
            first_message = u
                .content
                .iter()
                .find_map(|c| match c {
                    Content::Text { text } => Some(text.as_str()),
                    Content::Image { .. } => None,
                })
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if first_message.chars().count() > 80 {
                first_message = first_message.chars().take(79).chain(['…']).collect();
            }
            break;
        }
    }
    let name = if meta.len() <= MAX_NAME_SCAN { name(path, &header.id) } else { None };
    Some(SessionInfo {
        path: path.to_owned(),
        id: header.id,
        cwd: header.cwd,
        created: header.timestamp,
        modified: meta.modified().ok()?,
        size: meta.len(),
        first_message,
        name,
    })
}

/// Files larger than this are listed without their name (finding it reads the file).
const MAX_NAME_SCAN: u64 = 256 << 20;

/// The session's name: the last label whose target is the session id. A byte search
/// for the target finds it without parsing every line (GB/s rather than MB/s).
fn name(path: &Path, session_id: &str) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let needle = serde_json::to_string(session_id).ok()?;
    let needle = format!("\"targetId\":{needle}");
    for at in memchr::memmem::rfind_iter(&bytes, needle.as_bytes()) {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        if let Ok(Entry { body: EntryBody::Label { target_id, label }, .. }) =
            serde_json::from_slice::<Entry>(&bytes[start..end])
            && target_id == session_id
        {
            return label;
        }
    }
    None
}
