//! The host's tests, by topic. Test plugins are built at test time from text (this
//! machine has no wasm32 Rust target): see `test_support`.

mod grants;
mod limits;
mod registry;
