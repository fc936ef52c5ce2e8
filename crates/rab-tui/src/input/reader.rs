//! The thread that reads the terminal (stdin) for [`super::Parser`]. It waits with
//! `poll` in short slices so it can be paused — while `$EDITOR` has the terminal nothing
//! of rab's may read it — and stopped.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::{Input, Parser};

/// How long one wait for input lasts before the thread looks at its orders.
const SLICE: Duration = Duration::from_millis(50);
/// How long after a lone Esc more bytes may follow before it counts as the Esc key.
const ESC_WAIT: Duration = Duration::from_millis(30);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    PauseAsked,
    Paused,
    Stop,
}

#[derive(Debug)]
struct Control {
    state: Mutex<State>,
    changed: Condvar,
}

impl Control {
    fn set(&self, state: State) {
        if let Ok(mut s) = self.state.lock() {
            *s = state;
        }
        self.changed.notify_all();
    }
}

/// Reads stdin on a thread of its own and hands what it parsed to a callback.
#[derive(Debug)]
pub struct InputReader {
    control: Arc<Control>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InputReader {
    /// Starts reading; `deliver` gets each batch of input and returns false to stop (the
    /// receiver is gone). At the end of input (stdin closed) the thread ends, and
    /// `deliver` is not called again.
    pub fn start(
        mut deliver: impl FnMut(Vec<Input>) -> bool + Send + 'static,
    ) -> std::io::Result<InputReader> {
        let control =
            Arc::new(Control { state: Mutex::new(State::Running), changed: Condvar::new() });
        let theirs = control.clone();
        let thread = std::thread::Builder::new()
            .name("rab-input".into())
            .spawn(move || read_loop(&theirs, &mut deliver))?;
        Ok(InputReader { control, thread: Some(thread) })
    }

    /// Stops reading until [`InputReader::resume`]: when this returns, the thread is not
    /// inside a read (it waits at most one slice, 50 ms, to get there).
    pub fn pause(&self) {
        let Ok(mut state) = self.control.state.lock() else { return };
        if *state != State::Running {
            return;
        }
        *state = State::PauseAsked;
        self.control.changed.notify_all();
        let wait =
            self.control.changed.wait_timeout_while(state, SLICE * 4, |s| *s == State::PauseAsked);
        drop(wait);
    }

    /// Reads again after [`InputReader::pause`].
    pub fn resume(&self) {
        self.control.set(State::Running);
    }
}

impl Drop for InputReader {
    fn drop(&mut self) {
        self.control.set(State::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_loop(control: &Control, deliver: &mut dyn FnMut(Vec<Input>) -> bool) {
    let stdin = rustix::stdio::stdin();
    let mut parser = Parser::default();
    let mut buf = [0u8; 4096];
    loop {
        // Orders first: pause (until resumed) or stop.
        {
            let Ok(mut state) = control.state.lock() else { return };
            if *state == State::PauseAsked {
                *state = State::Paused;
                control.changed.notify_all();
            }
            while *state == State::Paused {
                state = match control.changed.wait(state) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
            if *state == State::Stop {
                return;
            }
        }
        let wait = if parser.is_pending() { ESC_WAIT } else { SLICE };
        let Ok(wait) = Timespec::try_from(wait) else { return };
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let ready = match poll(&mut fds, Some(&wait)) {
            Ok(n) => n > 0,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        };
        let mut out = Vec::new();
        if ready {
            match rustix::io::read(stdin, &mut buf) {
                Ok(0) => return,
                Ok(n) => parser.feed(&buf[..n], &mut out),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
                Err(_) => return,
            }
        } else if parser.is_pending() {
            // Nothing followed: a lone Esc is the key.
            parser.flush(&mut out);
        }
        if !out.is_empty() && !deliver(out) {
            return;
        }
    }
}
