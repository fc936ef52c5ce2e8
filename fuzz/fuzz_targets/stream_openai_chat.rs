//! Fuzz target `stream_openai_chat`: the body is `rab_fuzz::stream_openai_chat::run` (fuzz/src/stream_openai_chat.rs), which
//! the main workspace's tests also run over this target's seeds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rab_fuzz::stream_openai_chat::run(data));
