//! Issue 36: the seams a new user crosses in the first hour and a team crosses every day
//! in CI — output into a closed pipe, settings from newer or other agents, JSON results
//! for every exit, resuming where you were.

use std::process::Stdio;

use rab_fake_llm::FakeLlm;

use super::harness::{Home, stderr};

/// Runs `cmd` with its stdout a pipe whose reader has already gone (`| head -1` after
/// the first line): rab must stop writing quietly, not panic (exit 101).
fn into_a_closed_pipe(mut cmd: std::process::Command) -> std::process::Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn issue_36_output_into_a_closed_pipe_ends_quietly() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut list = home.rab();
    list.args(["sessions", "list", "--all"]);
    let mut help = home.rab_for("anthropic-messages", &llm, Some("k"));
    help.args(["-p", "/help"]);
    let mut models = home.rab();
    models.arg("--list-models");
    for (what, cmd) in [("sessions list", list), ("-p /help", help), ("--list-models", models)] {
        let out = into_a_closed_pipe(cmd);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
}
