//! Incremental Server-Sent Events decoder (WHATWG HTML §9.2 event stream format).
//!
//! Bytes arrive in arbitrary network chunks; the decoder keeps the unfinished line and
//! the event being assembled, and hands each complete event to a callback as borrowed
//! strings, so the hot path allocates nothing per event. Written here rather than taken
//! from eventsource-stream because the adapters need a synchronous, callback-driven core
//! (for the decoding benchmark and for errors that name the offending line).

use memchr::memchr2;

/// Longest line or event accepted; a hostile or broken server cannot grow memory past it.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, empty when the server sent none.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
}

/// Why a byte stream is not a valid event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line was not UTF-8.
    #[error("invalid UTF-8 in event stream line: {line:?}")]
    InvalidUtf8 {
        /// The line, lossily decoded.
        line: String,
    },
    /// A line or an event exceeded [`MAX_EVENT_BYTES`].
    #[error("event stream line or event longer than {MAX_EVENT_BYTES} bytes")]
    TooLong,
}

/// Either the stream was malformed or the callback refused an event.
#[derive(Debug)]
pub enum FeedError<E> {
    /// The byte stream was not a valid event stream.
    Sse(SseError),
    /// The callback returned an error.
    Handler(E),
}

/// The decoder state between chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the unfinished last line.
    partial: Vec<u8>,
    /// The previous chunk ended with `\r`, so a leading `\n` belongs to it.
    skip_lf: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk; `on_event` runs for every event completed by it.
    pub fn feed<E>(
        &mut self,
        mut chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(pos) = memchr2(b'\n', b'\r', chunk) {
            let line_end = pos;
            let mut next = pos + 1;
            if chunk[pos] == b'\r' {
                if pos + 1 < chunk.len() {
                    if chunk[pos + 1] == b'\n' {
                        next += 1;
                    }
                } else {
                    self.skip_lf = true;
                }
            }
            if self.partial.is_empty() {
                self.line(&chunk[..line_end], &mut on_event)?;
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..line_end]);
                let result = self.line(&line, &mut on_event);
                line.clear();
                self.partial = line;
                result?;
            }
            chunk = &chunk[next..];
        }
        if self.partial.len() + chunk.len() > MAX_EVENT_BYTES {
            return Err(FeedError::Sse(SseError::TooLong));
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// Ends the stream. Per the spec an event not terminated by a blank line is dropped;
    /// this returns whether such an unfinished event (or line) was pending.
    pub fn finish(&mut self) -> bool {
        let pending = !self.partial.is_empty() || self.has_data;
        self.partial.clear();
        self.reset_event();
        pending
    }

    fn line<E>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| {
            FeedError::Sse(SseError::InvalidUtf8 { line: String::from_utf8_lossy(line).into() })
        })?;
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() > MAX_EVENT_BYTES {
                    return Err(FeedError::Sse(SseError::TooLong));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            // `id` and `retry` matter only for reconnecting EventSource clients;
            // LLM streams are never resumed, and unknown fields are ignored by the spec.
            _ => {}
        }
        Ok(())
    }

    fn dispatch<E>(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if !self.has_data {
            self.event.clear();
            return Ok(());
        }
        let result = on_event(SseEvent { event: &self.event, data: &self.data });
        self.reset_event();
        result.map_err(FeedError::Handler)
    }

    fn reset_event(&mut self) {
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn collect(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            dec.feed(c, |e| {
                out.push((e.event.to_owned(), e.data.to_owned()));
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        out
    }

    #[test]
    fn decodes_events_split_at_every_byte() {
        let stream = b"event: a\ndata: {\"x\":1}\n\n: comment\ndata: line1\ndata:line2\n\n";
        let whole = collect(&[stream]);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(collect(&bytes), whole);
        assert_eq!(
            whole,
            vec![("a".into(), "{\"x\":1}".into()), (String::new(), "line1\nline2".into())]
        );
    }

    #[test]
    fn accepts_crlf_and_cr_line_endings_across_chunks() {
        let got = collect(&[b"data: one\r", b"\n\r", b"\ndata: two\r\r"]);
        assert_eq!(got, vec![(String::new(), "one".into()), (String::new(), "two".into())]);
    }

    #[test]
    fn event_name_resets_after_dispatch_and_blank_events_are_skipped() {
        let got = collect(&[b"event: ping\n\nevent: x\ndata: 1\n\ndata: 2\n\n"]);
        assert_eq!(got, vec![("x".into(), "1".into()), (String::new(), "2".into())]);
    }

    #[test]
    fn reports_invalid_utf8() {
        let mut dec = SseDecoder::new();
        let err = dec.feed(b"data: \xff\xfe\n\n", |_| Ok::<(), ()>(())).unwrap_err();
        assert!(matches!(err, FeedError::Sse(SseError::InvalidUtf8 { .. })));
    }

    #[test]
    fn finish_reports_an_unterminated_event() {
        let mut dec = SseDecoder::new();
        dec.feed(b"data: half", |_| Ok::<(), ()>(())).unwrap();
        assert!(dec.finish());
        assert!(!dec.finish());
    }

    #[test]
    fn rejects_an_endless_line() {
        let mut dec = SseDecoder::new();
        let big = vec![b'a'; MAX_EVENT_BYTES + 1];
        let err = dec.feed(&big, |_| Ok::<(), ()>(())).unwrap_err();
        assert!(matches!(err, FeedError::Sse(SseError::TooLong)));
    }
}
