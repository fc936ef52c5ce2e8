//! rab-mcp's integration tests: the manager against the in-repo test server over stdio,
//! configuration loading, `rab mcp serve`, streamable HTTP on loopback, and the npm
//! reference servers when installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
