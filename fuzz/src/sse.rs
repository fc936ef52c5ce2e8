//! The SSE decoder on arbitrary bytes: it yields events or an error, never panics, and
//! how the bytes are split into network chunks does not change what it yields.

use rab_ai::sse::{FeedError, SseDecoder};

/// Every event (name and data), then the error, if any, and whether an event was left
/// unfinished at the end.
fn decode(data: &[u8], chunk: usize) -> (Vec<(String, String)>, Option<String>, bool) {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in data.chunks(chunk) {
        let fed = decoder.feed(piece, |ev| {
            events.push((ev.event.to_owned(), ev.data.to_owned()));
            Ok::<(), ()>(())
        });
        match fed {
            Ok(()) => {}
            Err(FeedError::Sse(e)) => return (events, Some(e.to_string()), false),
            Err(FeedError::Handler(())) => unreachable!("the handler never refuses"),
        }
    }
    let pending = decoder.finish();
    (events, None, pending)
}

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let whole = decode(data, data.len().max(1));
    // A split that varies with the input, and the worst one: a byte at a time.
    let chunk = 1 + data.first().map_or(0, |b| usize::from(*b) % 17);
    assert_eq!(whole, decode(data, chunk), "split in {chunk}-byte chunks");
    assert_eq!(whole, decode(data, 1), "split byte by byte");
}
