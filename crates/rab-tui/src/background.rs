//! The terminal's background colour, asked with OSC 11 (`ESC ] 11 ; ? BEL`), so the
//! theme can match a light or dark terminal without the user saying which. The query
//! is followed by a primary device attributes request (`ESC [ c`), which every
//! terminal answers: its answer marks the end of the wait, so a terminal that does not
//! know OSC 11 costs one round trip, not the timeout.
//!
//! Call it in raw mode, before anything else reads the terminal: the answers arrive on
//! stdin.

use std::time::Duration;

/// The background colour as 8-bit RGB, parsed from an OSC 11 answer
/// (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by BEL or ST; 1 to 4 hex digits a channel).
pub fn parse_answer(bytes: &[u8]) -> Option<(u8, u8, u8)> {
    let text = String::from_utf8_lossy(bytes);
    let start = text.find("\x1b]11;")? + 5;
    let rest = &text[start..];
    let end = rest.find(['\x07', '\x1b']).unwrap_or(rest.len());
    let spec = rest[..end].trim();
    let spec = spec.strip_prefix("rgba:").or_else(|| spec.strip_prefix("rgb:"))?;
    let mut channels = spec.split('/').map(|c| {
        let digits = c.len();
        if digits == 0 || digits > 4 {
            return None;
        }
        let value = u32::from_str_radix(c, 16).ok()?;
        let max = (1u32 << (4 * digits)) - 1;
        u8::try_from(value * 255 / max).ok()
    });
    Some((channels.next()??, channels.next()??, channels.next()??))
}

/// Whether a background colour is light (relative luminance above one half).
pub fn is_light((r, g, b): (u8, u8, u8)) -> bool {
    let l = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
    l > 127.5
}

/// Whether `bytes` hold the answer to the device attributes request (`ESC [ ? … c`).
fn has_attributes_answer(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("\x1b[?").any(|(i, _)| {
        let tail = &text[i + 3..];
        let digits = tail.chars().take_while(|c| c.is_ascii_digit() || *c == ';').count();
        tail[digits..].starts_with('c')
    })
}

/// Asks the terminal on stdout for its background and waits up to `timeout` for the
/// answer on stdin; `None` when it does not say (or stdin is not a terminal).
#[cfg(unix)]
pub fn query(timeout: Duration) -> Option<(u8, u8, u8)> {
    use std::io::{IsTerminal, Write};
    use std::time::Instant;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    if !std::io::stdin().is_terminal() {
        return None;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(b"\x1b]11;?\x07\x1b[c").ok()?;
    out.flush().ok()?;
    drop(out);
    let stdin = rustix::stdio::stdin();
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !has_attributes_answer(&got) && got.len() < 4096 {
        let Some(left) = timeout.checked_sub(started.elapsed()) else { break };
        let wait = Timespec::try_from(left).ok()?;
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        if poll(&mut fds, Some(&wait)).ok()? == 0 {
            break;
        }
        let n = rustix::io::read(stdin, &mut buf).ok()?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    parse_answer(&got)
}

/// Asks the terminal for its background (not on this platform: `None`).
#[cfg(not(unix))]
pub fn query(_timeout: Duration) -> Option<(u8, u8, u8)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_of_every_width_and_terminator_are_read() {
        assert_eq!(parse_answer(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\"), Some((255, 255, 255)));
        assert_eq!(parse_answer(b"\x1b]11;rgb:1e1e/1e1e/2e2e\x07"), Some((30, 30, 46)));
        assert_eq!(parse_answer(b"\x1b]11;rgb:f/0/8\x07\x1b[?62;22c"), Some((255, 0, 136)));
        assert_eq!(parse_answer(b"\x1b]11;rgba:0000/0000/0000/ffff\x07"), Some((0, 0, 0)));
        assert_eq!(parse_answer(b"\x1b[?62c"), None);
        assert_eq!(parse_answer(b"\x1b]11;rgb:zz/00/00\x07"), None);
        assert_eq!(parse_answer(b"\x1b]11;rgb:12345/0/0\x07"), None);
    }

    #[test]
    fn light_and_dark_backgrounds_are_told_apart() {
        assert!(is_light((255, 255, 255)));
        assert!(is_light((250, 244, 230)));
        assert!(!is_light((30, 30, 46)));
        assert!(!is_light((0, 0, 0)));
    }

    #[test]
    fn the_attributes_answer_ends_the_wait() {
        assert!(has_attributes_answer(b"\x1b]11;rgb:0/0/0\x07\x1b[?62;22c"));
        assert!(has_attributes_answer(b"\x1b[?1;2c"));
        assert!(!has_attributes_answer(b"\x1b]11;rgb:0/0/0\x07"));
        assert!(!has_attributes_answer(b"\x1b[?1;2"));
    }
}
