use std::path::PathBuf;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rab_agent::AgentTool;
use tempfile::TempDir;

use super::*;
use crate::test_support::{model_error, text};

struct Fixture {
    root: TempDir,
    temp: TempDir,
    bash: Bash,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let ws = Workspace::new(root.path()).with_temp_dir(temp.path().to_path_buf());
    Fixture { bash: Bash::new(ws), root, temp }
}

async fn run(bash: &Bash, command: &str, timeout: Option<u64>) -> Result<ToolOutput, ToolError> {
    let args = Args { command: command.into(), timeout, run_in_background: None };
    bash.run(args, ToolContext::detached("c")).await
}

/// Whether `pid` is gone. A zombie counts as gone: it runs nothing, and in a container
/// whose init does not reap, an orphan stays a zombie forever.
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// Waits up to 3 s for `pid` to be gone. Not a sleep-then-check: a killed process has
/// closed its files (the tool saw the pipe close) but the kernel may still be tearing it
/// down, briefly, on a loaded machine; a survivor still fails after the deadline.
fn dies_soon(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !is_dead(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

fn read_pid(path: PathBuf) -> u32 {
    std::fs::read_to_string(&path).unwrap().trim().parse().unwrap()
}

#[test]
fn spec_fits_the_budget() {
    let spec = serde_json::to_string(&fixture().bash.spec()).unwrap();
    // 500 before run_in_background; every byte goes out on every request.
    assert!(spec.len() < 580, "{} bytes: {spec}", spec.len());
}

#[tokio::test]
async fn captures_stdout_and_stderr_interleaved_as_written() {
    let f = fixture();
    let out = run(&f.bash, "echo out; echo err >&2; echo again", None).await.unwrap();
    assert_eq!(text(&out), "out\nerr\nagain");
    let details = out.details.unwrap();
    assert_eq!(details["exitCode"], 0);
    assert_eq!(details["truncated"], false);
    assert_eq!(details["fullOutputPath"], serde_json::Value::Null);
    assert!(details["durationMs"].is_u64());
}

#[tokio::test]
async fn runs_in_the_workspace_root_with_stdin_closed() {
    let f = fixture();
    let out = run(&f.bash, "pwd -P; cat; echo done", None).await.unwrap();
    let root = f.root.path().canonicalize().unwrap();
    assert_eq!(text(&out), format!("{}\ndone", root.display()));
}

#[tokio::test]
async fn empty_output_says_so() {
    let f = fixture();
    assert_eq!(text(&run(&f.bash, "true", None).await.unwrap()), "(no output)");
}

#[tokio::test]
async fn non_zero_exit_is_an_error_with_the_output() {
    let f = fixture();
    let err = model_error(run(&f.bash, "echo oops; echo bad >&2; exit 3", None).await);
    assert_eq!(err, "exit code 3\noops\nbad");
}

#[tokio::test]
async fn death_by_signal_is_reported() {
    let f = fixture();
    let err = model_error(run(&f.bash, "echo before; kill -9 $$", None).await);
    assert_eq!(err, "killed by signal 9\nbefore");
}

#[tokio::test]
async fn timeout_kills_a_tree_that_ignores_sigterm() {
    let f = fixture();
    // Ignored signals are inherited, so neither the shell nor either sleep obeys SIGTERM.
    let command = "trap '' TERM; echo $$ > sh.pid; sleep 100 & echo $! > bg.pid; \
                   echo started; sleep 100";
    let started = Instant::now();
    let err = model_error(run(&f.bash, command, Some(1)).await);
    assert_eq!(err, "timed out after 1s; killed the process group\nstarted");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    for file in ["sh.pid", "bg.pid"] {
        let pid = read_pid(f.root.path().join(file));
        assert!(dies_soon(pid), "{file}: process {pid} survived");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_the_group_and_returns_promptly() {
    let f = fixture();
    let fifo = f.root.path().join("ready");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let cx = ToolContext::detached("c");
    let cancel = cx.cancel.clone();
    let command = "echo partial; sleep 30 & echo $! > ready; wait".into();
    let args = Args { command, timeout: None, run_in_background: None };
    let bash = f.bash;
    let call = tokio::spawn(async move { bash.run(args, cx).await });
    // Opening the fifo blocks until the shell writes the pid: no sleeping, no polling.
    let pid = tokio::task::spawn_blocking(move || read_pid(fifo)).await.unwrap();
    let started = Instant::now();
    cancel.cancel();
    // The command sleeps 30 s: well under that is prompt, whatever else the machine does.
    let result = tokio::time::timeout(Duration::from_secs(20), call).await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(model_error(result), format!("{ABORTED}; killed the process group\npartial"));
    assert!(dies_soon(pid), "sleep {pid} survived");
}

#[tokio::test]
async fn ten_megabytes_are_cut_to_the_tail_and_saved_in_full() {
    let f = fixture();
    let out = run(&f.bash, "yes | head -c 10000000; echo last", None).await.unwrap();
    let details = out.details.clone().unwrap();
    assert_eq!(details["truncated"], true);
    let path = PathBuf::from(details["fullOutputPath"].as_str().unwrap());
    assert!(path.starts_with(f.temp.path()), "{}", path.display());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 10_000_005);
    let text = text(&out);
    let (tail, note) = text.rsplit_once('\n').unwrap();
    assert_eq!(tail.lines().count(), 2000);
    assert!(tail.ends_with("y\ny\nlast"), "{}", &tail[tail.len() - 20..]);
    assert_eq!(
        note,
        format!(
            "[output truncated: showing the last 2000 of 5000001 lines; full output in {}]",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_long_line_is_cut_by_bytes_and_the_note_gives_sizes() {
    let f = fixture();
    let out = run(&f.bash, "head -c 200000 /dev/zero | tr '\\0' x", None).await.unwrap();
    let text = text(&out);
    let (tail, note) = text.rsplit_once('\n').unwrap();
    assert_eq!(tail, "x".repeat(crate::truncate::MAX_BYTES));
    let expected = "[output truncated: showing the last 1 of 1 lines (50.0 KB of 195.3 KB); full \
                    output in ";
    assert!(note.starts_with(expected), "{note}");
}

#[tokio::test]
async fn short_output_leaves_no_file_behind() {
    let f = fixture();
    // Exactly 2000 lines reaches the spill threshold without being truncated.
    let out = run(&f.bash, "seq 1 2000", None).await.unwrap();
    assert_eq!(out.details.as_ref().unwrap()["truncated"], false);
    assert_eq!(text(&out).lines().count(), 2000);
    assert_eq!(std::fs::read_dir(f.temp.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn failing_output_keeps_the_tail_and_the_exit_code() {
    let f = fixture();
    let err = model_error(run(&f.bash, "seq 1 3000; exit 1", None).await);
    let mut lines = err.lines();
    assert_eq!(lines.next(), Some("exit code 1"));
    assert_eq!(lines.next(), Some("1001"));
    assert!(err.contains(
        "\n3000\n[output truncated: showing the last 2000 of 3000 lines; full output in "
    ));
}

#[tokio::test]
async fn a_background_job_holding_the_pipe_does_not_hold_the_result() {
    let f = fixture();
    let started = Instant::now();
    let out = run(&f.bash, "sleep 30 & echo $! > bg.pid; echo hi", None).await.unwrap();
    assert_eq!(text(&out), "hi");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // A job started on purpose outlives the call; end it here.
    let pid = read_pid(f.root.path().join("bg.pid"));
    assert!(!is_dead(pid));
    std::process::Command::new("kill").arg(pid.to_string()).status().unwrap();
}

/// The Windows command tool is this one under another name with PowerShell's
/// invocation; timeouts, tree kill and output cutting are the code tested above. Where
/// PowerShell is not installed (this machine), starting it fails with a clear error.
#[tokio::test]
async fn powershell_is_the_command_tool_with_its_own_name_and_invocation() {
    let f = fixture();
    let ps = PowerShell::new(f.bash);
    let spec = ps.spec();
    assert_eq!(spec.name, "powershell");
    assert!(spec.description.contains("PowerShell"), "{}", spec.description);
    let args =
        Args { command: "Write-Output hi".into(), timeout: Some(5), run_in_background: None };
    let summary = Tool::summary(&ps, &args);
    assert_eq!(summary.as_deref(), Some("PS> Write-Output hi"));
    let installed = std::process::Command::new("powershell").arg("-Help").output().is_ok();
    let out = ps.run(args, ToolContext::detached("c")).await;
    if installed {
        assert_eq!(text(&out.unwrap()).trim(), "hi");
    } else {
        let err = model_error(out);
        assert!(
            err.starts_with(&format!("could not start powershell in {}", f.root.path().display())),
            "{err}"
        );
    }
}
