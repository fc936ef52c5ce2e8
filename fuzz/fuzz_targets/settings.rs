//! Fuzz target `settings`: the body is `rab_fuzz::settings::run` (fuzz/src/settings.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::settings::run(data));
