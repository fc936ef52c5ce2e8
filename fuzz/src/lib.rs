//! The fuzz targets' bodies, one module each (`run` takes one input). The targets in
//! `fuzz_targets/` call them under libFuzzer; the main workspace's tests run them over
//! every seed in `corpus/` on the stable toolchain (crates/rab/tests/suite/fuzz_seeds.rs).

pub mod acp_line;
pub mod edit_match;
pub mod frontmatter;
pub mod highlight;
pub mod hook_output;
pub mod image;
pub mod keybindings;
pub mod models;
pub mod rpc_line;
pub mod settings;
pub mod shell_rule;
pub mod sse;
pub mod stream_anthropic;
pub mod stream_gemini;
pub mod stream_openai_chat;
pub mod stream_openai_responses;
pub mod tape;
