//! Fuzz target `image`: the body is `rab_fuzz::image::run` (fuzz/src/image.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::image::run(data));
