//! Fuzz target `tape`: the body is `rab_fuzz::tape::run` (fuzz/src/tape.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::tape::run(data));
