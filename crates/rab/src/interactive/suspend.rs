//! Ctrl+Z: rab stops as a shell's job does, and `fg` brings it back with its screen.
//! In raw mode the terminal sends Ctrl+Z as a key, not as SIGTSTP, so rab gives the
//! terminal back (raw mode and its modes off) and stops itself; a SIGTSTP sent from
//! outside (`kill -TSTP`) takes the same way instead of stopping rab with the terminal
//! still raw. When the shell continues rab, the terminal is taken back and the screen
//! drawn anew.

use rab_tui::terminal::Terminal;

use super::Ui;

/// SIGTSTP sent to rab from outside, on Unix.
#[cfg(unix)]
pub(super) type Stops = Option<tokio::signal::unix::Signal>;
/// No job control elsewhere.
#[cfg(not(unix))]
pub(super) type Stops = ();

/// Starts listening for SIGTSTP (which then no longer stops rab by itself).
#[cfg(unix)]
pub(super) fn stop_signals() -> Stops {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::from_raw(nix::sys::signal::Signal::SIGTSTP as i32))
        .inspect_err(|e| tracing::warn!("cannot watch for SIGTSTP: {e}"))
        .ok()
}

/// No job control elsewhere.
#[cfg(not(unix))]
pub(super) fn stop_signals() -> Stops {}

/// The next SIGTSTP (never, when not listening).
#[cfg(unix)]
pub(super) async fn next_stop(stops: &mut Stops) {
    match stops {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// Never, without job control.
#[cfg(not(unix))]
pub(super) async fn next_stop(_: &mut Stops) {
    std::future::pending().await
}

impl Ui {
    /// Gives the terminal back and stops until continued (the caller stopped reading
    /// input), then takes it back and redraws.
    pub(super) fn suspend(&mut self) {
        self.handing_over(|ui| {
            let terminal = ui.screen.terminal_mut();
            let _ = terminal.write(b"rab stopped; `fg` brings it back\r\n");
            let _ = terminal.flush();
            stop_self();
        });
    }
}

/// Stops this process until SIGCONT. SIGSTOP, not SIGTSTP: rab catches the latter.
#[cfg(unix)]
fn stop_self() {
    if let Err(e) = nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP) {
        tracing::warn!("cannot stop: {e}");
    }
}

/// No job control elsewhere: nothing to do.
#[cfg(not(unix))]
fn stop_self() {}
