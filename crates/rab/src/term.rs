//! Text from sessions, tools and models, made safe to print to a terminal outside the
//! UI's renderer: control characters (but newline and tab), DEL, C1 controls and the
//! bidirectional overrides are shown as visible escapes, so a prompt, a file or a reply
//! cannot move the cursor, rewrite the screen, set the title, hide text or reorder it.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// Whether `c` must not reach a terminal as it is.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// `text` with every unsafe character shown as an escape: `^[` for ESC (caret notation
/// for C0 controls and DEL), `\u{9b}` for C1 controls and bidi overrides. A `\r`
/// before `\n` is dropped (CRLF line ends).
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_unsafe(c) {
            out.push(c);
            continue;
        }
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// Whether stdout is a terminal (asked once).
pub fn stdout_is_tty() -> bool {
    static TTY: OnceLock<bool> = OnceLock::new();
    *TTY.get_or_init(|| std::io::stdout().is_terminal())
}

/// `text` made safe when stdout is a terminal; as it is for a pipe or file, where the
/// exact bytes may matter.
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    if stdout_is_tty() { safe(text) } else { Cow::Borrowed(text) }
}

/// Set once stdout was found to be a closed pipe: later writes are dropped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `args` to stdout (the `out!`/`outln!` macros). A closed pipe (the reader, such
/// as `head -1`, has gone) silences stdout for the rest of the run instead of panicking
/// as `print!` does; any other write error is reported once on stderr.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("rab: cannot write to stdout: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_shown_not_obeyed() {
        assert_eq!(safe("plain\ttext\nline"), "plain\ttext\nline");
        assert_eq!(safe("a\x1b]0;pwned\x07b"), "a^[]0;pwned^Gb");
        assert_eq!(safe("\x1b[2J\x1b[Hgone"), "^[[2J^[[Hgone");
        assert_eq!(safe("nul\0byte"), "nul^@byte");
        assert_eq!(safe("win\r\nline\rover"), "win\nline^Mover");
        assert_eq!(safe("c1\u{9b}31m del\u{7f}"), "c1\\u{9b}31m del^?");
        assert_eq!(safe("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert!(matches!(safe("ok"), Cow::Borrowed(_)));
    }
}
