//! End-to-end tests: the real `rab` binary against rab-fake-llm over loopback HTTP,
//! with RAB_HOME in a temp dir and a clean environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
