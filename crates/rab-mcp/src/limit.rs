//! A stdio server's output, one JSON message per line, read with a bound: a line longer
//! than [`MAX_MESSAGE`] ends the connection with a clear reason, instead of being
//! buffered without end while the call that waits for it never returns.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// The most one message from a stdio server may hold (16 MiB).
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// `inner`, failing once a line passes `limit` bytes; the reason goes into `notes`
/// (the server's stderr tail, which every report of its end shows).
pub(crate) struct LimitedLines<R> {
    inner: R,
    limit: usize,
    /// Bytes since the last newline.
    line: usize,
    notes: Arc<Mutex<VecDeque<String>>>,
}

impl<R> LimitedLines<R> {
    pub(crate) fn new(inner: R, limit: usize, notes: Arc<Mutex<VecDeque<String>>>) -> Self {
        Self { inner, limit, line: 0, notes }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let new = &buf.filled()[before..];
        self.line = match new.iter().rposition(|&b| b == b'\n') {
            Some(i) => new.len() - i - 1,
            None => self.line + new.len(),
        };
        if self.line > self.limit {
            let why = format!(
                "rab: the server sent a message over {} MiB (rab's limit for one message) and \
                 rab stopped reading it",
                self.limit / (1024 * 1024)
            );
            tracing::warn!("{why}");
            self.notes.lock().unwrap_or_else(PoisonError::into_inner).push_back(why.clone());
            // A read that fails hands over nothing.
            buf.set_filled(before);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, why)));
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_up_to_the_limit_pass_and_a_longer_one_fails_with_a_note() {
        let notes = Arc::default();
        let text = b"0123456789\n0123456789\n".to_vec();
        let mut ok = LimitedLines::new(&text[..], 10, Arc::clone(&notes));
        let mut out = Vec::new();
        ok.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, text);
        let long = b"0123\n01234567890".to_vec();
        let mut bad = LimitedLines::new(&long[..], 10, Arc::clone(&notes));
        let err = bad.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(notes.lock().unwrap()[0].contains("over 0 MiB"), "{:?}", notes.lock().unwrap());
    }
}
