//! Fuzz target `rpc_line`: the body is `rab_fuzz::rpc_line::run` (fuzz/src/rpc_line.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::rpc_line::run(data));
