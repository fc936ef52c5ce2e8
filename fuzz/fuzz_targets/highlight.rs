//! Fuzz target `highlight`: the body is `rab_fuzz::highlight::run` (fuzz/src/highlight.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::highlight::run(data));
