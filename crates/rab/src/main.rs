//! The `rab` binary. Everything is in the library (`src/lib.rs`), so a custom binary
//! can add compile-time extensions with `rab::main_with`.

fn main() -> std::process::ExitCode {
    rab::main_with(Vec::new())
}
