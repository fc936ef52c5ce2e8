//! A streamed response body of OpenAI Chat Completions, arbitrary bytes, through
//! the path the HTTP driver takes after a 200 (SSE decoding, the adapter's per-event
//! handling, the end-of-stream check): it ends in a message or an error, never a panic,
//! and how the bytes are split into network chunks does not change which.

use rab_ai::Api;
use rab_ai::bench::replay;

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    // The same made-up call ids in both runs.
    let run = |chunk: usize| {
        fastrand::seed(7);
        replay(Api::OpenaiCompletions, data, chunk)
    };
    let whole = run(data.len().max(1));
    let chunk = 1 + data.len() % 29;
    assert_eq!(whole, run(chunk), "split in {chunk}-byte chunks");
}
