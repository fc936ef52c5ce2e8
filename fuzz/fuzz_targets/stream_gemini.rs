//! Fuzz target `stream_gemini`: the body is `rab_fuzz::stream_gemini::run` (fuzz/src/stream_gemini.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::stream_gemini::run(data));
