//! Fuzz target `stream_openai_responses`: the body is `rab_fuzz::stream_openai_responses::run` (fuzz/src/stream_openai_responses.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::stream_openai_responses::run(data));
