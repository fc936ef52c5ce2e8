//! Where the UI's input comes from: on Unix rab's own reader (`rab_tui::input`), which
//! also hears the terminal's colour scheme change, with window-size changes from
//! SIGWINCH; elsewhere crossterm's event stream.

use rab_tui::input::Input;

#[cfg(unix)]
pub(super) struct InputSource {
    rx: tokio::sync::mpsc::UnboundedReceiver<Input>,
    reader: rab_tui::input::InputReader,
    resized: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl InputSource {
    pub(super) fn start() -> std::io::Result<InputSource> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let reader = rab_tui::input::InputReader::start(move |batch| {
            batch.into_iter().all(|i| tx.send(i).is_ok())
        })?;
        let resized =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())?;
        Ok(InputSource { rx, reader, resized })
    }

    /// The next input; `None` when the terminal's input ended.
    pub(super) async fn next(&mut self) -> Option<Input> {
        tokio::select! {
            input = self.rx.recv() => input,
            Some(()) = self.resized.recv() => {
                let (cols, rows) = crossterm::terminal::size().ok()?;
                Some(Input::Event(crossterm::event::Event::Resize(cols, rows)))
            }
        }
    }

    /// Stops reading the terminal (a child process has it) until [`Self::resume`].
    pub(super) fn pause(&mut self) {
        self.reader.pause();
    }

    /// Reads the terminal again.
    pub(super) fn resume(&mut self) {
        self.reader.resume();
    }
}

#[cfg(not(unix))]
pub(super) struct InputSource {
    events: Option<crossterm::event::EventStream>,
}

#[cfg(not(unix))]
impl InputSource {
    pub(super) fn start() -> std::io::Result<InputSource> {
        Ok(InputSource { events: Some(crossterm::event::EventStream::new()) })
    }

    pub(super) async fn next(&mut self) -> Option<Input> {
        use futures_util::StreamExt;
        let events = self.events.as_mut()?;
        match events.next().await? {
            Ok(ev) => Some(Input::Event(ev)),
            Err(e) => {
                tracing::warn!("terminal input: {e}");
                None
            }
        }
    }

    pub(super) fn pause(&mut self) {
        self.events = None;
    }

    pub(super) fn resume(&mut self) {
        self.events = Some(crossterm::event::EventStream::new());
    }
}
