//! Fuzz target `stream_anthropic`: the body is `rab_fuzz::stream_anthropic::run` (fuzz/src/stream_anthropic.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::stream_anthropic::run(data));
