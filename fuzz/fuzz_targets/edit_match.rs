//! Fuzz target `edit_match`: the body is `rab_fuzz::edit_match::run` (fuzz/src/edit_match.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::edit_match::run(data));
