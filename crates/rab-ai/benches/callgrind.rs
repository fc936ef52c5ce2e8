//! Instruction counts of rab-ai's hot paths under Valgrind's callgrind (gungraun), for
//! the performance gate (`bench/gate.py` compares them with `bench/budgets.toml`):
//! building one request body per wire format for a 50-turn tool-heavy conversation,
//! and decoding a long streamed reply (about 300 KB of SSE) per wire format.
//!
//! Run: `cargo bench -p rab-ai --bench callgrind` (needs valgrind and gungraun-runner
//! 0.20.0 on PATH or in GUNGRAUN_RUNNER; `.ci/run` installs both).
#![allow(clippy::expect_used)]

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use rab_ai::{Api, Context, Model, StreamOptions, ThinkingLevel};
use rab_fake_llm::Wire;

mod common;

fn request(api: Api) -> (Model, Context, StreamOptions) {
    let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
    (common::model(api), common::conversation(api, 50), opts)
}

#[library_benchmark]
#[bench::anthropic(setup = request, args = (Api::AnthropicMessages))]
#[bench::openai_responses(setup = request, args = (Api::OpenaiResponses))]
#[bench::openai_chat(setup = request, args = (Api::OpenaiCompletions))]
#[bench::gemini(setup = request, args = (Api::GoogleGenerativeAi))]
fn request_build(input: (Model, Context, StreamOptions)) -> usize {
    let (model, context, opts) = input;
    black_box(rab_ai::bench::build(&model, &context, &opts).expect("builds").0.len())
}

fn reply(api: Api, wire: Wire) -> (Api, Vec<u8>) {
    (api, common::stream(wire, 24, 4_000))
}

#[library_benchmark]
#[bench::anthropic(setup = reply, args = (Api::AnthropicMessages, Wire::Anthropic))]
#[bench::openai_responses(setup = reply, args = (Api::OpenaiResponses, Wire::OpenaiResponses))]
#[bench::openai_chat(setup = reply, args = (Api::OpenaiCompletions, Wire::OpenaiChat))]
#[bench::gemini(setup = reply, args = (Api::GoogleGenerativeAi, Wire::Gemini))]
fn sse_decode(input: (Api, Vec<u8>)) -> usize {
    let (api, bytes) = input;
    black_box(rab_ai::bench::decode(api, &bytes, 1400).expect("decodes").1)
}

library_benchmark_group!(name = wire; benchmarks = request_build, sse_decode);

main!(library_benchmark_groups = wire);
