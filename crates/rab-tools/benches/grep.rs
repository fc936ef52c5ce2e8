//! The `grep` tool against ripgrep on the same large tree: wall time, median of several
//! warm runs each, and the ratio (target: the tool within 1.2× of `rg`).
//!
//! ```text
//! cargo bench -p rab-tools --bench grep [-- <dir>]
//! ```
//!
//! The tree defaults to `$CARGO_HOME/registry/src` (hundreds of MB of Rust sources).
//! Both sides use the same semantics: ignore files respected, hidden and binary files
//! skipped, line numbers on. `rg` prints every matching line while the tool shows at most
//! 200, but it counts every match; the two counts must agree, and the bench says so.
//! Skips with a message when `rg` or the tree is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rab_agent::{Tool, ToolContext};
use rab_tools::Workspace;
use rab_tools::grep::{Args, Grep};

const RUNS: usize = 7;
const PATTERNS: [(&str, &str); 4] = [
    ("literal, 3M matches", "e"),
    ("literal, many matches", "Result<"),
    ("literal, rare", "PhantomPinned"),
    ("regex", r"fn [a-z_]+\(&mut self"),
];

fn main() {
    let Some(tree) = tree() else {
        println!("grep bench skipped: no tree (pass a directory or set CARGO_HOME)");
        return;
    };
    let rg_version = Command::new("rg").arg("--version").output();
    let Ok(rg_version) = rg_version.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()) else {
        println!("grep bench skipped: rg is not installed");
        return;
    };
    let rg_version = rg_version.lines().next().unwrap_or("rg").to_owned();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let grep = Grep::new(Workspace::new(&tree));
    println!("tree: {} ({})", tree.display(), rg_version);
    println!(
        "{:<24} {:>8} {:>8} {:>7} {:>8} {:>7} {:>9}",
        "pattern", "tool", "rg -n", "ratio", "rg -c", "ratio", "matches"
    );
    let mut worst: f64 = 0.0;
    for (label, pattern) in PATTERNS {
        let (rg_time, rg_count) = median(|| rg(&tree, pattern, false));
        let (count_time, count) = median(|| rg(&tree, pattern, true));
        let (tool_time, tool_count) = median(|| runtime.block_on(tool(&grep, pattern)));
        let ratio = tool_time.as_secs_f64() / rg_time.as_secs_f64();
        let count_ratio = tool_time.as_secs_f64() / count_time.as_secs_f64();
        worst = worst.max(ratio);
        println!(
            "{label:<24} {:>6.0}ms {:>6.0}ms {ratio:>6.2}x {:>6.0}ms {count_ratio:>6.2}x {tool_count:>9}",
            tool_time.as_secs_f64() * 1e3,
            rg_time.as_secs_f64() * 1e3,
            count_time.as_secs_f64() * 1e3,
        );
        assert_eq!(tool_count, rg_count, "{pattern}: tool and rg disagree on matching lines");
        assert_eq!(count, rg_count, "{pattern}: rg -c and rg -n disagree");
    }
    println!("same matching-line counts as rg for every pattern; worst ratio vs rg -n {worst:.2}x");
}

/// The tree to search: the first argument that is not a flag (cargo passes `--bench`),
/// else the cargo registry sources.
fn tree() -> Option<PathBuf> {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with("--")).map(PathBuf::from);
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let tree = arg.or_else(|| home.map(|h| h.join("registry/src")))?;
    tree.is_dir().then_some(tree)
}

/// One warm-up, then the median wall time of `RUNS`, with the (equal) count.
fn median(mut run: impl FnMut() -> usize) -> (Duration, usize) {
    let count = run();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(run(), count, "counts differ between runs");
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[RUNS / 2], count)
}

/// `rg` with its default filters and no colour: with `-n`, every matching line printed
/// and counted from the output, which the timing includes as any consumer of rg would pay
/// it; with `-c` (`count_only`), per-file counts summed: the same search without the
/// printing, the closest to what the tool does.
fn rg(tree: &Path, pattern: &str, count_only: bool) -> usize {
    let mode = if count_only { "-c" } else { "-n" };
    let out = Command::new("rg")
        .args([mode, "--no-heading", "--color", "never", "--no-messages", "-e", pattern])
        .arg(tree)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if count_only {
        stdout.lines().filter_map(|l| l.rsplit_once(':')?.1.parse::<usize>().ok()).sum()
    } else {
        out.stdout.iter().filter(|&&b| b == b'\n').count()
    }
}

/// The tool through its public API; its details carry the count of all matches.
async fn tool(grep: &Grep, pattern: &str) -> usize {
    let args = Args {
        pattern: pattern.to_owned(),
        path: None,
        glob: None,
        ignore_case: None,
        context: None,
        files_only: None,
    };
    let out = grep.run(args, ToolContext::detached("bench")).await.unwrap();
    out.details.unwrap()["matches"].as_u64().unwrap() as usize
}
