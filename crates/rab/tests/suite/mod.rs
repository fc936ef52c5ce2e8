mod agent;
mod context;
mod harness;
mod print;
mod pty;
mod repl;
mod sessions;
mod tui;
