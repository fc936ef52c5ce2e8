//! What building one request costs as a conversation grows: the body for each wire
//! format, and for Anthropic the prefix fingerprint that decides which thinking goes
//! back (one pass over the history). The conversation is a tool-heavy session: each
//! turn a reply with thinking and a tool call, and a 2 KB tool result. For Anthropic,
//! also a request of a conversation that remembers its last one (`+memo`, as the agent
//! sends every request after its first): only the last turns are built.
//!
//! Run: `cargo bench -p rab-ai --bench request_build`
#![allow(clippy::expect_used)]

use std::time::Instant;

use rab_ai::{Api, StreamOptions, ThinkingLevel};

mod common;
use common::{conversation, model};

fn main() {
    println!("{:<22} {:>7} {:>9} {:>12} {:>10}", "wire", "turns", "body MB", "ms (median)", "MB/s");
    for turns in [50, 500] {
        let memo = [(Api::AnthropicMessages, true)];
        for (api, with_memo) in Api::ALL.into_iter().map(|a| (a, false)).chain(memo) {
            let mut ctx = conversation(api, turns);
            let m = model(api);
            let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
            if with_memo {
                // The request before, two messages shorter, leaves the memo.
                ctx.memo = Some(rab_ai::RequestMemo::new());
                let mut before = ctx.clone();
                before.messages.truncate(before.messages.len() - 2);
                rab_ai::bench::build(&m, &before, &opts).expect("builds");
            }
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..9 {
                let start = Instant::now();
                let (body, _) = rab_ai::bench::build(&m, &ctx, &opts).expect("builds");
                times.push(start.elapsed().as_secs_f64());
                size = body.len();
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            println!(
                "{:<22} {:>7} {:>9.2} {:>12.2} {:>10.0}",
                format!("{}{}", api.as_str(), if with_memo { " +memo" } else { "" }),
                turns,
                size as f64 / 1e6,
                median * 1e3,
                size as f64 / median / 1e6
            );
        }
    }
}
