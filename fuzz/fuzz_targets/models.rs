//! Fuzz target `models`: the body is `rab_fuzz::models::run` (fuzz/src/models.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::models::run(data));
