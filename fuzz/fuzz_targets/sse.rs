//! Fuzz target `sse`: the body is `rab_fuzz::sse::run` (fuzz/src/sse.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::sse::run(data));
