//! Reads the prompt: arguments, with stdin prepended when it is piped.
//!
//! When a prompt is given as arguments, stdin is only read if data (or end of input)
//! arrives promptly: an inherited, idle stdin (as in some CI runners) must never make
//! rab hang.

use std::io::{IsTerminal, Read};
use std::sync::mpsc;
use std::time::Duration;

/// How long to wait for piped input to start when a prompt argument was given.
const STDIN_GRACE: Duration = Duration::from_millis(250);

/// The prompt from arguments and stdin, and whether it was all typed as arguments (only
/// then can it be a command or a shell line: piped text is data, never run); `None`
/// when both are empty.
pub fn prompt(args: &[String]) -> std::io::Result<Option<(String, bool)>> {
    let arg = args.join(" ");
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() {
        None
    } else if arg.trim().is_empty() {
        let mut text = String::new();
        stdin.lock().read_to_string(&mut text)?;
        Some(text)
    } else {
        read_if_prompt()
    };
    let piped = piped.map(|s| s.trim_end().to_owned()).filter(|s| !s.is_empty());
    Ok(match (piped, arg.trim().is_empty()) {
        (Some(p), true) => Some((p, false)),
        (Some(p), false) => Some((format!("{p}\n\n{arg}"), false)),
        (None, false) => Some((arg, true)),
        (None, true) => None,
    })
}

/// Reads stdin on a helper thread; gives up if nothing (not even end of input) arrives
/// within the grace period.
fn read_if_prompt() -> Option<String> {
    let (started_tx, started_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        let mut first = true;
        loop {
            let n = stdin.read(&mut chunk).unwrap_or(0);
            if first {
                first = false;
                let _ = started_tx.send(());
            }
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let _ = done_tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    started_rx.recv_timeout(STDIN_GRACE).ok()?;
    done_rx.recv().ok()
}

/// The subcommand among `names` that `word` is one edit from (a letter added, dropped,
/// changed, or two neighbours swapped), ignoring names and words under four letters
/// (too many ordinary words are one edit from `mcp` or `man`). A word equal to a name
/// apart from case is taken as meant.
pub fn near_subcommand<'a>(word: &str, names: &'a [String]) -> Option<&'a str> {
    let word = word.to_lowercase();
    if word.chars().count() < 4 {
        return None;
    }
    names.iter().map(String::as_str).find(|name| name.len() >= 4 && one_edit(&word, name))
}

/// Whether `a` and `b` differ by exactly one edit (optimal string alignment distance 1).
fn one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Less => ra == &rb[1..],
        std::cmp::Ordering::Greater => &ra[1..] == rb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["sessions", "mcp", "plugin", "serve", "telegram", "trust", "untrust", "doctor", "acp"]
            .map(str::to_owned)
            .to_vec()
    }

    #[test]
    fn a_word_one_edit_from_a_subcommand_is_found() {
        let n = names();
        assert_eq!(near_subcommand("sesions", &n), Some("sessions"));
        assert_eq!(near_subcommand("sessionss", &n), Some("sessions"));
        assert_eq!(near_subcommand("trsut", &n), Some("trust"));
        assert_eq!(near_subcommand("doctr", &n), Some("doctor"));
        assert_eq!(near_subcommand("plugins", &n), Some("plugin"));
        assert_eq!(near_subcommand("Dcotor", &n), Some("doctor"));
    }

    #[test]
    fn ordinary_words_and_short_names_are_left_alone() {
        let n = names();
        for w in ["fix", "map", "mcq", "acpi", "explain", "sessions", "Serve", "review", "tests"] {
            assert_eq!(near_subcommand(w, &n), None, "{w}");
        }
    }
}
