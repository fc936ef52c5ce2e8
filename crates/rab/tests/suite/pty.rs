//! Runs the real binary in a pseudo-terminal and parses what it draws with a vt100
//! screen model, so tests assert on what a user would see.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte rab wrote, for escapes the screen model does not keep.
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// Spawns `rab` with `args` and `envs` in a `cols`×`rows` terminal.
    pub fn spawn(
        cwd: &std::path::Path,
        args: &[&str],
        envs: &[(String, String)],
        cols: u16,
        rows: u16,
    ) -> Pty {
        Self::spawn_with_background(cwd, args, envs, cols, rows, None)
    }

    /// [`Pty::spawn`] in a terminal that answers the background colour query (OSC 11)
    /// with `background` (`rgb:ffff/ffff/ffff`) and device attributes after it.
    pub fn spawn_with_background(
        cwd: &std::path::Path,
        args: &[&str],
        envs: &[(String, String)],
        cols: u16,
        rows: u16,
        background: Option<&str>,
    ) -> Pty {
        let rab = std::path::Path::new(env!("CARGO_BIN_EXE_rab"));
        Self::spawn_program(rab, cwd, args, envs, (cols, rows), background)
    }

    /// [`Pty::spawn_with_background`] running `program` (a custom rab, such as the
    /// `hello_extension` example) instead of `rab`.
    pub fn spawn_program(
        program: &std::path::Path,
        cwd: &std::path::Path,
        args: &[&str],
        envs: &[(String, String)],
        (cols, rows): (u16, u16),
        background: Option<&str>,
    ) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("TERM", "xterm-256color");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn rab in a pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 10_000)));
        let s = screen.clone();
        let raw = Arc::new(Mutex::new(Vec::new()));
        let r = raw.clone();
        let answer = background.map(|bg| format!("\x1b]11;{bg}\x1b\\\x1b[?62;22c"));
        let w = writer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut answered = false;
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                s.lock().unwrap().process(&buf[..n]);
                let mut all = r.lock().unwrap();
                all.extend_from_slice(&buf[..n]);
                if let Some(answer) = &answer
                    && !answered
                    && String::from_utf8_lossy(&all).contains("\x1b]11;?\x07\x1b[c")
                {
                    answered = true;
                    let mut w = w.lock().unwrap();
                    let _ = w.write_all(answer.as_bytes());
                    let _ = w.flush();
                }
            }
        });
        Pty { master: pair.master, writer, child, screen, raw }
    }

    /// Sends keys (raw bytes: `\r` is Enter, `\x1b` Esc, `\x03` Ctrl+C).
    /// The process id of the program in the terminal.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a running child")
    }

    pub fn send(&mut self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Everything rab wrote so far, escapes and all.
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Waits until what rab wrote satisfies `pred`.
    pub fn wait_for_raw(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if pred(&self.raw()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out waiting for {what}; rab wrote:\n{:?}", self.raw());
    }

    /// Sends text as a bracketed paste.
    pub fn paste(&mut self, text: &str) {
        self.send(&format!("\x1b[200~{text}\x1b[201~"));
    }

    /// The visible screen as text, one line per row, trailing spaces trimmed.
    pub fn screen(&self) -> String {
        let p = self.screen.lock().unwrap();
        p.screen()
            .rows(0, p.screen().size().1)
            .map(|r| r.trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Scrollback plus screen, as text.
    pub fn history(&self) -> String {
        let mut p = self.screen.lock().unwrap();
        let mut out = Vec::new();
        let (rows, cols) = p.screen().size();
        // Walk the scrollback from the oldest line.
        let mut offset = usize::MAX;
        p.screen_mut().set_scrollback(offset);
        offset = p.screen().scrollback();
        loop {
            p.screen_mut().set_scrollback(offset);
            let top: Vec<String> = p.screen().rows(0, cols).take(1).collect();
            out.extend(top);
            if offset == 0 {
                break;
            }
            offset -= 1;
        }
        let rest: Vec<String> =
            p.screen().rows(0, cols).skip(1).take(usize::from(rows) - 1).collect();
        out.extend(rest);
        out.iter().map(|l| l.trim_end().to_owned()).collect::<Vec<_>>().join("\n")
    }

    /// Waits until the scrollback plus screen satisfies `pred`.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) {
        self.wait(what, timeout, Self::history, pred);
    }

    /// Waits until the visible screen alone satisfies `pred` (for what must be gone).
    pub fn wait_for_screen(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) {
        self.wait(what, timeout, Self::screen, pred);
    }

    fn wait(
        &self,
        what: &str,
        timeout: Duration,
        read: fn(&Self) -> String,
        pred: impl Fn(&str) -> bool,
    ) {
        let start = Instant::now();
        loop {
            let screen = read(self);
            if pred(&screen) {
                return;
            }
            if start.elapsed() > timeout {
                panic!(
                    "timed out after {timeout:?} waiting for {what}; screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether any visible cell has a foreground or background colour.
    pub fn has_colour(&self) -> bool {
        let p = self.screen.lock().unwrap();
        let (rows, cols) = p.screen().size();
        (0..rows).any(|r| {
            (0..cols).any(|c| {
                p.screen().cell(r, c).is_some_and(|cell| {
                    cell.fgcolor() != vt100::Color::Default
                        || cell.bgcolor() != vt100::Color::Default
                })
            })
        })
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
        self.screen.lock().unwrap().screen_mut().set_size(rows, cols);
    }

    /// Waits for the program to exit; returns its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<u32> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.exit_code());
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
