//! Fuzz target `keybindings`: the body is `rab_fuzz::keybindings::run` (fuzz/src/keybindings.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::keybindings::run(data));
