//! Fuzz target `shell_rule`: the body is `rab_fuzz::shell_rule::run` (fuzz/src/shell_rule.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::shell_rule::run(data));
