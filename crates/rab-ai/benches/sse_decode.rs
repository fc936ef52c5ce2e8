//! SSE decoding throughput: a long streamed response of each wire format, rendered by
//! rab-fake-llm exactly as it serves it, fed in 1400-byte network-sized pieces through
//! the same SSE decoder, adapter decoder and message builder the HTTP driver uses.
//!
//! Run: `cargo bench -p rab-ai --bench sse_decode`
#![allow(clippy::expect_used)]

use std::time::Instant;

use rab_ai::Api;
use rab_fake_llm::Wire;

mod common;

fn main() {
    let cases = [
        (Api::AnthropicMessages, Wire::Anthropic),
        (Api::OpenaiResponses, Wire::OpenaiResponses),
        (Api::OpenaiCompletions, Wire::OpenaiChat),
        (Api::GoogleGenerativeAi, Wire::Gemini),
    ];
    println!("{:<22} {:>10} {:>8} {:>10} {:>12}", "wire", "delta", "MB", "events", "MB/s (median)");
    for delta in [16, 64] {
        for (api, wire) in cases {
            let bytes = common::stream(wire, delta, 40_000);
            let mut rates = Vec::new();
            let mut events = 0;
            for _ in 0..7 {
                let start = Instant::now();
                let (message, n) = rab_ai::bench::decode(api, &bytes, 1400).expect("decodes");
                let secs = start.elapsed().as_secs_f64();
                assert!(message.text().len() > 1_000_000);
                events = n;
                rates.push(bytes.len() as f64 / secs / 1e6);
            }
            rates.sort_by(f64::total_cmp);
            println!(
                "{:<22} {:>10} {:>8.1} {:>10} {:>12.0}",
                api.as_str(),
                delta,
                bytes.len() as f64 / 1e6,
                events,
                rates[rates.len() / 2]
            );
        }
    }
}
