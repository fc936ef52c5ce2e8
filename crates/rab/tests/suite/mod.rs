mod agent;
mod harness;
mod print;
mod pty;
mod repl;
mod tui;
