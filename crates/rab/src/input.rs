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
