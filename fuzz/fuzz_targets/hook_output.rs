//! Fuzz target `hook_output`: the body is `rab_fuzz::hook_output::run` (fuzz/src/hook_output.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::hook_output::run(data));
