//! Fuzz target `frontmatter`: the body is `rab_fuzz::frontmatter::run` (fuzz/src/frontmatter.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::frontmatter::run(data));
