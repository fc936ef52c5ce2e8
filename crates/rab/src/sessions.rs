//! `rab sessions list`: the saved sessions of this directory (or all), newest first.

use std::path::Path;
use std::time::SystemTime;

use rab_session::{SessionInfo, list_sessions, session_dir};

/// Prints the table; returns the exit code.
pub fn list(sessions_root: &Path, cwd: &Path, all: bool) -> u8 {
    let mut sessions: Vec<SessionInfo> = if all {
        let mut v: Vec<SessionInfo> = std::fs::read_dir(sessions_root)
            .map(|rd| rd.filter_map(Result::ok).flat_map(|d| list_sessions(&d.path())).collect())
            .unwrap_or_default();
        v.sort_by_key(|s| std::cmp::Reverse(s.modified));
        v
    } else {
        list_sessions(&session_dir(sessions_root, cwd))
    };
    if sessions.is_empty() {
        println!("no saved sessions{}", if all { "" } else { " in this directory (try --all)" });
        return crate::EXIT_OK;
    }
    println!("{:<36}  {:>9}  {:>8}  first message", "session", "modified", "size");
    for s in sessions.drain(..) {
        let cwd_note = if all { format!("  [{}]", s.cwd) } else { String::new() };
        println!(
            "{:<36}  {:>9}  {:>8}  {}{cwd_note}",
            s.id,
            ago(s.modified),
            rab_tools::truncate::format_size(s.size as usize),
            s.first_message
        );
    }
    crate::EXIT_OK
}

fn ago(t: SystemTime) -> String {
    let secs = SystemTime::now().duration_since(t).map_or(0, |d| d.as_secs());
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}
