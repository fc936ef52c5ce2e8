//! Integration tests of rab-ai against rab-fake-llm over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
