//! Instruction counts of the UI's frame under Valgrind's callgrind (gungraun), for the
//! performance gate (`bench/gate.py` compares them with `bench/budgets.toml`), with
//! 2,000 messages in the transcript at 120x40:
//! - a typical frame: one streamed token into the live region, the 2,000 messages
//!   already committed to the scrollback;
//! - the worst case: the whole transcript re-gathered into the live region.
//!
//! Run: `cargo bench -p rab-tui --bench callgrind` (needs valgrind and gungraun-runner
//! 0.20.0 on PATH or in GUNGRAUN_RUNNER; `.ci/run` installs both).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use rab_tui::screen::Screen;
use rab_tui::terminal::TestTerminal;

mod common;
use common::{Live, Tokens, transcript};

const COLS: u16 = 120;
const ROWS: u16 = 40;

/// A screen with the transcript committed and a reply streaming.
fn streaming() -> (Screen<TestTerminal>, Live, Tokens) {
    let mut term = TestTerminal::new(COLS, ROWS);
    term.is_recording = false;
    let mut screen = Screen::new(term).unwrap();
    let cache = transcript(2_000, usize::from(COLS));
    let all: Vec<&str> = cache.iter().flatten().map(String::as_str).collect();
    let mut live = Live::new(usize::from(COLS));
    let mut words = Tokens(42);
    for _ in 0..50 {
        let _ = live.push(&words.word());
    }
    let lines = live.lines();
    screen.frame(&all, &lines, live.cursor(lines.len())).unwrap();
    (screen, live, words)
}

#[library_benchmark]
#[bench::one_token_2000_committed(setup = streaming)]
fn frame_typical(input: (Screen<TestTerminal>, Live, Tokens)) -> Screen<TestTerminal> {
    let (mut screen, mut live, mut words) = input;
    let commit = live.push(&words.word());
    let lines = live.lines();
    screen.frame(&commit, &lines, live.cursor(lines.len())).unwrap();
    black_box(screen)
}

/// A screen that has drawn the whole transcript in the live region once.
fn everything_live() -> (Screen<TestTerminal>, Vec<Vec<String>>, Live) {
    let mut term = TestTerminal::new(COLS, ROWS);
    term.is_recording = false;
    let mut screen = Screen::new(term).unwrap();
    let cache = transcript(2_000, usize::from(COLS));
    let live = Live::new(usize::from(COLS));
    let mut lines: Vec<&str> = cache.iter().flatten().map(String::as_str).collect();
    let tail = live.lines();
    lines.extend(tail.iter().map(String::as_str));
    screen.frame(&[] as &[&str], &lines, live.cursor(lines.len())).unwrap();
    (screen, cache, live)
}

#[library_benchmark]
#[bench::whole_transcript_2000_live(setup = everything_live)]
fn frame_worst(input: (Screen<TestTerminal>, Vec<Vec<String>>, Live)) -> Screen<TestTerminal> {
    let (mut screen, cache, mut live) = input;
    let _ = live.push(" token");
    let tail = live.lines();
    let mut lines: Vec<&str> = cache.iter().flatten().map(String::as_str).collect();
    lines.extend(tail.iter().map(String::as_str));
    screen.frame(&[] as &[&str], &lines, live.cursor(lines.len())).unwrap();
    black_box(screen)
}

library_benchmark_group!(name = ui; benchmarks = frame_typical, frame_worst);

main!(library_benchmark_groups = ui);
