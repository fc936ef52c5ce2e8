//! The terminal the renderer draws on: a small trait over "write bytes, flush, size, raw
//! mode, bracketed paste, cursor visibility, keyboard enhancement", with a crossterm
//! implementation on stdout and an in-memory one for tests and benchmarks.
//!
//! Modes that change how the user's terminal behaves must be undone however rab exits:
//! [`TerminalGuard`] enters them and restores them on drop (which also runs while a
//! panic unwinds), and [`restore_stdout_terminal`] is for a panic hook, which runs before
//! unwinding and would otherwise print its message into a raw-mode terminal.

use std::io::{self, Write};

use crossterm::event::KeyboardEnhancementFlags;

/// Turns on bracketed paste (pasted text arrives as one event, not as keystrokes).
const PASTE_ON: &[u8] = b"\x1b[?2004h";
/// Turns off bracketed paste.
const PASTE_OFF: &[u8] = b"\x1b[?2004l";
/// Shows the cursor.
pub const SHOW_CURSOR: &[u8] = b"\x1b[?25h";
/// Hides the cursor.
pub const HIDE_CURSOR: &[u8] = b"\x1b[?25l";
/// Pops one entry of the kitty keyboard protocol flag stack.
const KEYBOARD_POP: &[u8] = b"\x1b[<1u";
/// Asks the terminal to report focus changes (`CSI I` / `CSI O`) and, on Unix where
/// rab reads its own input (`crate::input`), colour-scheme changes (mode 2031:
/// `CSI ? 997 ; 1|2 n`; crossterm's reader, used elsewhere, would swallow keys after one).
#[cfg(unix)]
const FOCUS_ON: &[u8] = b"\x1b[?1004h\x1b[?2031h";
#[cfg(not(unix))]
const FOCUS_ON: &[u8] = b"\x1b[?1004h";
/// Stops focus and colour-scheme reports.
const FOCUS_OFF: &[u8] = b"\x1b[?1004l\x1b[?2031l";
/// Saves the window and icon titles on the terminal's title stack (xterm; others
/// ignore it).
const TITLE_PUSH: &[u8] = b"\x1b[22;0t";
/// Restores the titles saved by [`TITLE_PUSH`].
const TITLE_POP: &[u8] = b"\x1b[23;0t";

/// A terminal the renderer can draw on.
///
/// Only raw mode and size need the OS; everything else is escape sequences, written
/// through [`Terminal::write`] by the provided methods so every implementation records
/// the same bytes.
pub trait Terminal {
    /// Queues bytes for the terminal.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Sends queued bytes.
    fn flush(&mut self) -> io::Result<()>;
    /// Size as (columns, rows).
    fn size(&self) -> io::Result<(u16, u16)>;
    /// Stops line buffering and echo, so keys arrive one by one.
    fn enter_raw_mode(&mut self) -> io::Result<()>;
    /// Gives the terminal back its line discipline.
    fn leave_raw_mode(&mut self) -> io::Result<()>;

    /// Asks for pasted text to arrive as one paste event.
    fn enable_bracketed_paste(&mut self) -> io::Result<()> {
        self.write(PASTE_ON)
    }
    /// Undoes [`Terminal::enable_bracketed_paste`].
    fn disable_bracketed_paste(&mut self) -> io::Result<()> {
        self.write(PASTE_OFF)
    }
    /// Shows the hardware cursor.
    fn show_cursor(&mut self) -> io::Result<()> {
        self.write(SHOW_CURSOR)
    }
    /// Hides the hardware cursor.
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.write(HIDE_CURSOR)
    }
    /// Turns on the kitty keyboard protocol (so Shift+Enter differs from Enter) when the
    /// terminal supports it; returns whether it was turned on. The default assumes no
    /// support, since asking needs a round trip through the real input.
    fn enable_keyboard_enhancement(&mut self) -> io::Result<bool> {
        Ok(false)
    }
    /// Undoes [`Terminal::enable_keyboard_enhancement`].
    fn disable_keyboard_enhancement(&mut self) -> io::Result<()> {
        self.write(KEYBOARD_POP)
    }
}

impl<T: Terminal + ?Sized> Terminal for Box<T> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        (**self).write(bytes)
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
    fn size(&self) -> io::Result<(u16, u16)> {
        (**self).size()
    }
    fn enter_raw_mode(&mut self) -> io::Result<()> {
        (**self).enter_raw_mode()
    }
    fn leave_raw_mode(&mut self) -> io::Result<()> {
        (**self).leave_raw_mode()
    }
    fn enable_keyboard_enhancement(&mut self) -> io::Result<bool> {
        (**self).enable_keyboard_enhancement()
    }
}

/// The real terminal: stdout, with crossterm for raw mode, size and the keyboard query.
#[derive(Debug, Default)]
pub struct CrosstermTerminal {
    buf: Vec<u8>,
}

impl CrosstermTerminal {
    /// A terminal on this process's stdout.
    pub fn new() -> CrosstermTerminal {
        CrosstermTerminal { buf: Vec::with_capacity(16 * 1024) }
    }
}

impl Terminal for CrosstermTerminal {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Buffered here, not in stdout's line buffer, so one frame leaves in one write and
        // the terminal never shows half of it.
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(&self.buf)?;
        self.buf.clear();
        out.flush()
    }

    fn size(&self) -> io::Result<(u16, u16)> {
        crossterm::terminal::size()
    }

    fn enter_raw_mode(&mut self) -> io::Result<()> {
        crossterm::terminal::enable_raw_mode()
    }

    fn leave_raw_mode(&mut self) -> io::Result<()> {
        crossterm::terminal::disable_raw_mode()
    }

    fn enable_keyboard_enhancement(&mut self) -> io::Result<bool> {
        // The query waits for the terminal's answer on stdin; a terminal that answers
        // neither query (rare) costs a 2 s timeout, which is reported as an error.
        if !crossterm::terminal::supports_keyboard_enhancement()? {
            return Ok(false);
        }
        // Only disambiguation: reporting releases or all keys as escapes would change
        // what plain typing produces.
        let flags = KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES;
        self.write(format!("\x1b[>{}u", flags.bits()).as_bytes())?;
        self.flush()?;
        Ok(true)
    }
}

/// Restores stdout's terminal without any state: raw mode off, keyboard protocol popped,
/// paste off, styles reset, cursor shown. For a panic hook, which runs before the
/// [`TerminalGuard`] is dropped. Errors are ignored: there is nothing left to do with them.
pub fn restore_stdout_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let mut out = io::stdout().lock();
    let _ = out.write_all(b"\x1b[<1u\x1b[?2004l\x1b[?1004l\x1b[?2031l\x1b[0m\x1b[?25h");
    let _ = out.flush();
}

/// Which modes [`TerminalGuard::enter`] turns on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalModes {
    /// Raw mode (keys one by one, no echo).
    pub raw: bool,
    /// Bracketed paste.
    pub bracketed_paste: bool,
    /// The kitty keyboard protocol where supported.
    pub keyboard_enhancement: bool,
    /// Focus reports (crossterm's `FocusGained` / `FocusLost`), and the window title
    /// saved so rab can set its own and give the user's back.
    pub focus_and_title: bool,
}

impl Default for TerminalModes {
    fn default() -> TerminalModes {
        TerminalModes {
            raw: true,
            bracketed_paste: true,
            keyboard_enhancement: true,
            focus_and_title: true,
        }
    }
}

/// Owns a terminal with modes turned on and turns them off again when dropped, including
/// while a panic unwinds. It is itself a [`Terminal`], so the renderer can own it.
#[derive(Debug)]
pub struct TerminalGuard<T: Terminal> {
    term: T,
    raw: bool,
    paste: bool,
    keyboard: bool,
    focus: bool,
}

impl<T: Terminal> TerminalGuard<T> {
    /// Turns on `modes`. If one fails, the ones already on are turned off again before the
    /// error is returned. Keyboard enhancement failing is not an error: the terminal just
    /// does not support it (see [`TerminalGuard::has_keyboard_enhancement`]).
    pub fn enter(term: T, modes: TerminalModes) -> io::Result<TerminalGuard<T>> {
        let mut guard =
            TerminalGuard { term, raw: false, paste: false, keyboard: false, focus: false };
        if modes.raw {
            guard.term.enter_raw_mode()?;
            guard.raw = true;
        }
        if modes.bracketed_paste {
            guard.term.enable_bracketed_paste()?;
            guard.paste = true;
        }
        if modes.focus_and_title {
            guard.term.write(TITLE_PUSH)?;
            guard.term.write(FOCUS_ON)?;
            guard.focus = true;
        }
        if modes.keyboard_enhancement {
            guard.keyboard = guard.term.enable_keyboard_enhancement().unwrap_or_else(|err| {
                tracing::debug!("keyboard enhancement query failed: {err}");
                false
            });
        }
        guard.term.flush()?;
        Ok(guard)
    }

    /// Whether the kitty keyboard protocol is on, i.e. Shift+Enter can be told apart from
    /// Enter. Without it, Alt+Enter and Ctrl+J are the ways to type a newline.
    pub fn has_keyboard_enhancement(&self) -> bool {
        self.keyboard
    }

    /// The terminal inside.
    pub fn inner(&self) -> &T {
        &self.term
    }

    /// The terminal inside, mutably.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.term
    }

    /// Turns the modes off now (dropping does the same); safe to call twice. Use before
    /// handing the terminal to a child process such as `$EDITOR`, then [`Self::resume`].
    pub fn restore(&mut self) -> io::Result<()> {
        let mut first_err = None;
        let mut note = |r: io::Result<()>| {
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        };
        if self.keyboard {
            note(self.term.disable_keyboard_enhancement());
            self.keyboard = false;
        }
        if self.paste {
            note(self.term.disable_bracketed_paste());
            self.paste = false;
        }
        if self.focus {
            note(self.term.write(FOCUS_OFF));
            note(self.term.write(TITLE_POP));
            self.focus = false;
        }
        note(self.term.write(crate::ansi::RESET.as_bytes()));
        note(self.term.show_cursor());
        note(self.term.flush());
        if self.raw {
            note(self.term.leave_raw_mode());
            self.raw = false;
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Turns the modes on again after [`Self::restore`].
    pub fn resume(&mut self, modes: TerminalModes) -> io::Result<()> {
        if modes.raw && !self.raw {
            self.term.enter_raw_mode()?;
            self.raw = true;
        }
        if modes.bracketed_paste && !self.paste {
            self.term.enable_bracketed_paste()?;
            self.paste = true;
        }
        if modes.focus_and_title && !self.focus {
            self.term.write(TITLE_PUSH)?;
            self.term.write(FOCUS_ON)?;
            self.focus = true;
        }
        if modes.keyboard_enhancement && !self.keyboard {
            self.keyboard = self.term.enable_keyboard_enhancement().unwrap_or(false);
        }
        self.term.flush()
    }
}

impl<T: Terminal> Drop for TerminalGuard<T> {
    fn drop(&mut self) {
        if let Err(err) = self.restore() {
            tracing::warn!("could not restore the terminal: {err}");
        }
    }
}

impl<T: Terminal> Terminal for TerminalGuard<T> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.term.write(bytes)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.term.flush()
    }
    fn size(&self) -> io::Result<(u16, u16)> {
        self.term.size()
    }
    fn enter_raw_mode(&mut self) -> io::Result<()> {
        self.term.enter_raw_mode()?;
        self.raw = true;
        Ok(())
    }
    fn leave_raw_mode(&mut self) -> io::Result<()> {
        self.term.leave_raw_mode()?;
        self.raw = false;
        Ok(())
    }
    fn enable_keyboard_enhancement(&mut self) -> io::Result<bool> {
        self.keyboard = self.term.enable_keyboard_enhancement()?;
        Ok(self.keyboard)
    }
    fn disable_keyboard_enhancement(&mut self) -> io::Result<()> {
        self.term.disable_keyboard_enhancement()?;
        self.keyboard = false;
        Ok(())
    }
}

/// An in-memory terminal: records what is written, has a settable size and remembers
/// which modes are on. For tests (feed [`TestTerminal::output`] to a terminal emulator)
/// and benchmarks (count bytes without a tty).
#[derive(Clone, Debug)]
pub struct TestTerminal {
    /// Bytes written and not yet taken.
    pub output: Vec<u8>,
    /// Bytes queued since the last flush.
    pending: Vec<u8>,
    /// When false, written bytes are counted but not kept (long benchmarks).
    pub is_recording: bool,
    /// All bytes ever flushed, kept or not.
    pub total_bytes: u64,
    /// Number of flushes.
    pub flushes: u64,
    /// Current size (columns, rows).
    pub cols_rows: (u16, u16),
    /// Whether raw mode is on.
    pub is_raw: bool,
    /// Answer for [`Terminal::enable_keyboard_enhancement`].
    pub supports_keyboard_enhancement: bool,
}

impl TestTerminal {
    /// A recording terminal of `cols` × `rows`.
    pub fn new(cols: u16, rows: u16) -> TestTerminal {
        TestTerminal {
            output: Vec::new(),
            pending: Vec::new(),
            is_recording: true,
            total_bytes: 0,
            flushes: 0,
            cols_rows: (cols, rows),
            is_raw: false,
            supports_keyboard_enhancement: false,
        }
    }

    /// Takes the bytes flushed so far.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.output)
    }

    /// Changes the size the next [`Terminal::size`] reports.
    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.cols_rows = (cols, rows);
    }
}

impl Terminal for TestTerminal {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.pending.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.total_bytes += self.pending.len() as u64;
        self.flushes += 1;
        if self.is_recording {
            self.output.append(&mut self.pending);
        } else {
            self.pending.clear();
        }
        Ok(())
    }

    fn size(&self) -> io::Result<(u16, u16)> {
        Ok(self.cols_rows)
    }

    fn enter_raw_mode(&mut self) -> io::Result<()> {
        self.is_raw = true;
        Ok(())
    }

    fn leave_raw_mode(&mut self) -> io::Result<()> {
        self.is_raw = false;
        Ok(())
    }

    fn enable_keyboard_enhancement(&mut self) -> io::Result<bool> {
        if self.supports_keyboard_enhancement {
            self.write(b"\x1b[>1u")?;
        }
        Ok(self.supports_keyboard_enhancement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn guard_turns_modes_on_and_restores_them_on_drop() {
        let mut term = TestTerminal::new(80, 24);
        term.supports_keyboard_enhancement = true;
        let mut guard = TerminalGuard::enter(term, TerminalModes::default()).unwrap();
        assert!(guard.inner().is_raw);
        assert!(guard.has_keyboard_enhancement());
        let on = String::from_utf8(guard.inner_mut().take_output()).unwrap();
        let focus = String::from_utf8(FOCUS_ON.to_vec()).unwrap();
        assert_eq!(on, format!("\x1b[?2004h\x1b[22;0t{focus}\x1b[>1u"));
        guard.restore().unwrap();
        let off = String::from_utf8(guard.inner_mut().take_output()).unwrap();
        assert_eq!(off, "\x1b[<1u\x1b[?2004l\x1b[?1004l\x1b[?2031l\x1b[23;0t\x1b[0m\x1b[?25h");
        assert!(!guard.inner().is_raw);
        // A second restore (the drop) only re-shows the cursor.
        guard.restore().unwrap();
        assert_eq!(guard.inner_mut().take_output(), b"\x1b[0m\x1b[?25h");
    }

    #[test]
    fn guard_restores_while_a_panic_unwinds() {
        use std::sync::{Arc, Mutex};
        // A terminal whose log outlives the guard, to look at after the panic.
        struct Shared(Arc<Mutex<Vec<u8>>>, bool);
        impl Terminal for Shared {
            fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
            fn size(&self) -> io::Result<(u16, u16)> {
                Ok((80, 24))
            }
            fn enter_raw_mode(&mut self) -> io::Result<()> {
                self.1 = true;
                Ok(())
            }
            fn leave_raw_mode(&mut self) -> io::Result<()> {
                self.0.lock().unwrap().extend_from_slice(b"<cooked>");
                Ok(())
            }
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let term = Shared(log.clone(), false);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _guard = TerminalGuard::enter(term, TerminalModes::default()).unwrap();
            panic!("boom");
        }));
        assert!(result.is_err());
        let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
        assert!(
            log.ends_with("\x1b[?2004l\x1b[?1004l\x1b[?2031l\x1b[23;0t\x1b[0m\x1b[?25h<cooked>"),
            "{log:?}"
        );
    }

    #[test]
    fn test_terminal_counts_bytes_without_recording() {
        let mut term = TestTerminal::new(80, 24);
        term.is_recording = false;
        term.write(b"hello").unwrap();
        term.flush().unwrap();
        assert_eq!((term.total_bytes, term.output.len(), term.flushes), (5, 0, 1));
        term.set_size(100, 30);
        assert_eq!(term.size().unwrap(), (100, 30));
    }
}
