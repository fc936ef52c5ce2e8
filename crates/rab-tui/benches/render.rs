//! Renderer benchmark: a simulated session on an in-memory terminal.
//!
//! `cargo bench -p rab-tui --bench render` reports, per terminal size:
//! - **typical**: 2,000 transcript messages committed to the scrollback, then an
//!   assistant message streamed token by token in the live region (finished lines are
//!   committed as the app would), under editor and footer lines: median/p99 time per
//!   frame (building the live lines + `Screen::frame`) and bytes written per token;
//! - **worst case**: the app re-renders the whole 2,000-message transcript into the live
//!   region every frame (lines cached per message, so a frame only gathers references);
//! - **10 MB**: peak RSS (`VmHWM`) after streaming 10 MB of assistant text through the
//!   renderer.
//!
//! Pass `quick` as an argument for a shorter run.

use std::error::Error;
use std::time::{Duration, Instant};

use rab_tui::screen::Screen;
use rab_tui::terminal::TestTerminal;

mod common;
use common::{Live, Tokens, transcript};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn report(name: &str, mut times: Vec<Duration>, bytes: u64, tokens: usize) {
    times.sort();
    println!(
        "  {name:<34} median {:>8.1?}  p99 {:>8.1?}  {:>6.1} bytes/token over {tokens} tokens",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        bytes as f64 / tokens.max(1) as f64,
    );
}

fn typical(
    cols: u16,
    rows: u16,
    cache: &[Vec<String>],
    tokens: usize,
) -> Result<(), Box<dyn Error>> {
    let mut term = TestTerminal::new(cols, rows);
    term.is_recording = false;
    let mut screen = Screen::new(term)?;
    let width = usize::from(cols);
    let mut live = Live::new(width);
    let all: Vec<&str> = cache.iter().flatten().map(String::as_str).collect();
    let t = Instant::now();
    let lines = live.lines();
    screen.frame(&all, &lines, live.cursor(lines.len()))?;
    println!(
        "  commit {} transcript lines once:      {:>8.1?}  {} bytes",
        all.len(),
        t.elapsed(),
        screen.stats().bytes
    );
    let before = screen.stats().bytes;
    let mut words = Tokens(42);
    let mut total = Vec::with_capacity(tokens);
    let mut render_only = Vec::with_capacity(tokens);
    for _ in 0..tokens {
        let t = Instant::now();
        let commit = live.push(&words.word());
        let lines = live.lines();
        let r = Instant::now();
        screen.frame(&commit, &lines, live.cursor(lines.len()))?;
        render_only.push(r.elapsed());
        total.push(t.elapsed());
    }
    let bytes = screen.stats().bytes - before;
    report("typical: build lines + frame", total, bytes, tokens);
    report("typical: Screen::frame only", render_only, bytes, tokens);
    Ok(())
}

fn worst_case(
    cols: u16,
    rows: u16,
    cache: &[Vec<String>],
    tokens: usize,
) -> Result<(), Box<dyn Error>> {
    let mut term = TestTerminal::new(cols, rows);
    term.is_recording = false;
    let mut screen = Screen::new(term)?;
    let mut live = Live::new(usize::from(cols));
    let mut words = Tokens(42);
    let mut times = Vec::with_capacity(tokens);
    let n: usize = cache.iter().map(Vec::len).sum();
    let before = screen.stats().bytes;
    for _ in 0..tokens {
        let t = Instant::now();
        let _ = live.push(&words.word());
        live.done.clear(); // nothing is ever committed here; keep only the paragraph
        let tail = live.lines();
        let mut lines: Vec<&str> = Vec::with_capacity(n + tail.len());
        lines.extend(cache.iter().flatten().map(String::as_str));
        lines.extend(tail.iter().map(String::as_str));
        screen.frame(&[] as &[&str], &lines, live.cursor(lines.len()))?;
        times.push(t.elapsed());
    }
    let bytes = screen.stats().bytes - before;
    report(&format!("worst: {n} live lines re-gathered"), times, bytes, tokens);
    Ok(())
}

fn vm_hwm_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn ten_megabytes(cols: u16, rows: u16, target: usize) -> Result<(), Box<dyn Error>> {
    let mut term = TestTerminal::new(cols, rows);
    term.is_recording = false;
    let mut screen = Screen::new(term)?;
    let mut live = Live::new(usize::from(cols));
    let mut words = Tokens(9);
    // The app keeps the message text; committed lines live only in the scrollback.
    let mut message = String::new();
    let mut tokens = 0;
    let hwm_before = vm_hwm_kb();
    let t = Instant::now();
    while message.len() < target {
        let token = words.word();
        message.push_str(&token);
        let commit = live.push(&token);
        let lines = live.lines();
        screen.frame(&commit, &lines, live.cursor(lines.len()))?;
        tokens += 1;
    }
    let stats = screen.stats();
    println!(
        "  streamed {:.1} MB in {tokens} tokens, {:.1?}: {:.1} bytes/token, VmHWM {} kB (before {} kB)",
        message.len() as f64 / 1e6,
        t.elapsed(),
        stats.bytes as f64 / tokens as f64,
        vm_hwm_kb().unwrap_or(0),
        hwm_before.unwrap_or(0),
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let quick = std::env::args().any(|a| a == "quick");
    let tokens = if quick { 2_000 } else { 20_000 };
    let worst_tokens = if quick { 200 } else { 2_000 };
    for (cols, rows) in [(80u16, 24u16), (120, 40)] {
        println!("{cols}x{rows}:");
        let cache = transcript(2_000, usize::from(cols));
        typical(cols, rows, &cache, tokens)?;
        worst_case(cols, rows, &cache, worst_tokens)?;
    }
    println!("10 MB:");
    ten_megabytes(120, 40, if quick { 1_000_000 } else { 10_000_000 })?;
    Ok(())
}
