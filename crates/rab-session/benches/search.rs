//! Full-text search over 2,000 sessions / ~1 GB of JSONL: the first search ever (no
//! index: it indexes for a bounded time and reads the rest directly), the whole index
//! build, cold searches, warm searches per query kind, and after appending to a few
//! sessions.
//!
//! Run: `cargo bench -p rab-session --bench search` (needs ~1.3 GB free in the temp dir;
//! generating the sessions takes a minute). "Cold" is measured in a fresh process after
//! dropping the OS page cache, which needs root (`/proc/sys/vm/drop_caches`); without
//! it those lines say they were skipped, and the other figures have the JSONL in the
//! page cache (the files were just written).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall,
    ToolResultMessage,
};
use rab_session::search::{search, update_index};
use rab_session::{EntryBody, Tape, session_dir};
use serde_json::json;

const SESSIONS: usize = 2_000;
const CWDS: usize = 50;

const ENGLISH: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "in",
    "is",
    "it",
    "that",
    "this",
    "for",
    "with",
    "on",
    "be",
    "not",
    "we",
    "file",
    "test",
    "function",
    "error",
    "fix",
    "code",
    "should",
    "now",
    "can",
    "will",
    "need",
    "let",
    "me",
    "check",
    "add",
    "change",
    "update",
    "run",
    "build",
    "see",
    "when",
    "if",
    "then",
    "so",
    "but",
    "also",
    "which",
    "from",
    "by",
    "as",
    "at",
    "value",
    "return",
    "type",
    "module",
    "crate",
    "first",
    "because",
    "missing",
    "case",
    "handle",
    "instead",
    "use",
    "call",
    "new",
    "old",
    "line",
    "output",
    "input",
    "string",
    "number",
    "list",
    "map",
    "struct",
    "field",
    "method",
    "trait",
    "impl",
    "async",
    "await",
    "loop",
    "parser",
    "token",
    "lexer",
    "cache",
    "config",
    "session",
    "index",
    "query",
    "result",
    "panic",
    "unwrap",
    "borrow",
    "lifetime",
    "clone",
    "vector",
    "buffer",
    "stream",
    "thread",
    "lock",
    "mutex",
    "channel",
    "timeout",
    "retry",
    "request",
    "response",
    "header",
    "body",
    "json",
    "serde",
    "format",
    "write",
    "read",
    "path",
    "directory",
    "command",
    "shell",
    "works",
    "failing",
    "passes",
    "compiles",
    "looks",
    "good",
    "right",
    "wrong",
    "better",
    "simpler",
    "faster",
    "slower",
    "bug",
    "issue",
    "pull",
    "commit",
    "branch",
    "merge",
    "review",
    "comment",
    "doc",
    "example",
    "benchmark",
    "measure",
    "profile",
    "memory",
];
const SYLLABLES: &[&str] = &[
    "get", "set", "parse", "token", "buffer", "stream", "index", "node", "tree", "value", "config",
    "session", "tool", "agent", "render", "line", "span", "cache", "query", "event", "state",
    "error", "result", "path", "file", "block", "entry", "frame", "queue", "layout", "write",
    "read", "load", "save", "find", "merge", "split", "join", "scan", "emit",
];

struct Gen {
    rng: fastrand::Rng,
    idents: Vec<String>,
}

impl Gen {
    fn new() -> Self {
        let mut rng = fastrand::Rng::with_seed(42);
        let idents = (0..20_000)
            .map(|i| {
                let parts: Vec<&str> =
                    (0..rng.usize(2..4)).map(|_| SYLLABLES[rng.usize(..SYLLABLES.len())]).collect();
                match i % 3 {
                    0 => parts.join("_"),
                    1 => parts
                        .iter()
                        .enumerate()
                        .map(|(n, p)| if n == 0 { p.to_string() } else { capitalize(p) })
                        .collect(),
                    _ => format!("{}{}", parts.join("_"), i),
                }
            })
            .collect();
        Self { rng, idents }
    }

    /// Skewed towards the start of the list, like word frequencies.
    fn zipf(&mut self, n: usize) -> usize {
        ((n as f64) * self.rng.f64().powf(3.0)) as usize % n
    }

    fn id(&mut self) -> String {
        let i = self.zipf(self.idents.len());
        self.idents[i].clone()
    }

    fn prose(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 32);
        while s.len() < bytes {
            let w = if self.rng.u8(..) < 30 {
                format!("`{}`", self.id())
            } else {
                ENGLISH[self.zipf(ENGLISH.len())].to_owned()
            };
            s.push_str(&w);
            s.push(if self.rng.u8(..) < 20 { '.' } else { ' ' });
            if self.rng.u8(..) < 4 {
                s.push_str("\n\n");
            }
        }
        s
    }

    fn code(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 64);
        let mut n = 1;
        while s.len() < bytes {
            let (a, b, c) = (self.zipf(20_000), self.zipf(20_000), self.zipf(20_000));
            let line = format!(
                "{n}\t    let {} = {}(&{}, {});\n",
                self.idents[a],
                self.idents[b],
                self.idents[c],
                self.rng.u32(..1000)
            );
            s.push_str(&line);
            n += 1;
        }
        s
    }

    fn shell(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 64);
        while s.len() < bytes {
            let line = match self.rng.u8(..4) {
                0 => format!("commit {:016x}{:016x}\n", self.rng.u64(..), self.rng.u64(..)),
                1 => format!("test {}::{} ... ok\n", self.id(), self.id()),
                2 => format!(
                    "src/{}/{}.rs:{}: {}\n",
                    self.id(),
                    self.id(),
                    self.rng.u32(1..900),
                    self.prose(60)
                ),
                _ => format!(
                    "   Compiling {} v0.{}.{}\n",
                    self.id(),
                    self.rng.u8(..9),
                    self.rng.u8(..30)
                ),
            };
            s.push_str(&line);
        }
        s
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

fn assistant(text: String, call: Option<(&str, serde_json::Value)>) -> EntryBody {
    let mut a = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude-sonnet-5-5");
    a.content.push(AssistantBlock::text(text));
    if let Some((name, arguments)) = call {
        a.stop_reason = StopReason::ToolUse;
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: "toolu_1".into(),
            name: name.into(),
            arguments,
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
    }
    EntryBody::Message { message: Message::Assistant(a), details: None }
}

fn tool_result(text: String) -> EntryBody {
    let r = ToolResultMessage {
        tool_call_id: "toolu_1".into(),
        tool_name: "bash".into(),
        content: vec![Content::text(text)],
        is_error: false,
    };
    EntryBody::Message { message: Message::ToolResult(r), details: None }
}

fn user(text: String) -> EntryBody {
    EntryBody::Message { message: Message::user(text), details: None }
}

/// One turn: prompt, assistant with a tool call, tool result (code, shell output or
/// a short note), closing reply.
fn turn(g: &mut Gen, tape: &mut Tape, plant: Option<&str>) -> u64 {
    let mut prompt = {
        let n = g.rng.usize(40..400);
        g.prose(n)
    };
    if let Some(p) = plant {
        prompt.push_str(p);
    }
    let sized = g.rng.usize(200..12_000);
    let (call, result) = match g.rng.u8(..3) {
        0 => {
            let path = format!("src/{}.rs", g.id());
            (("read", json!({"path": path})), g.code(sized))
        }
        1 => {
            let cmd = format!("cargo test -p {}", g.id());
            (("bash", json!({"command": cmd})), g.shell(sized))
        }
        _ => {
            let old = {
                let n = g.rng.usize(50..600);
                g.code(n)
            };
            let new = {
                let n = g.rng.usize(50..600);
                g.code(n)
            };
            let args = json!({"path": "src/lib.rs", "old_string": old, "new_string": new});
            (("edit", args), g.prose(100))
        }
    };
    let reply = {
        let n = g.rng.usize(100..1500);
        g.prose(n)
    };
    let done = {
        let n = g.rng.usize(50..800);
        g.prose(n)
    };
    let bodies =
        [user(prompt), assistant(reply, Some(call)), tool_result(result), assistant(done, None)];
    let mut bytes = 0;
    for body in bodies {
        bytes += serde_json::to_string(&body).unwrap().len() as u64 + 100;
        tape.append(body).unwrap();
    }
    bytes
}

fn generate(root: &Path) -> (u64, Vec<PathBuf>) {
    let mut g = Gen::new();
    let mut paths = Vec::new();
    for s in 0..SESSIONS {
        let cwd = PathBuf::from(format!("/home/dev/project{}", s % CWDS));
        let mut tape = Tape::create(&session_dir(root, &cwd), &cwd, None);
        // Mean ~500 KB; ten sessions of ~5 MB.
        let target = if s % 200 == 7 { 5_000_000 } else { g.rng.u64(50_000..930_000) };
        let mut written = 0;
        let mut turns = 0;
        while written < target {
            let plant = match (s, turns) {
                (3 | 777 | 1500, 2) => Some(" the quantum flux capacitor is overheating"),
                (s, 1) if s % 400 == 11 => Some(" ask the xylophonist"),
                _ => None,
            };
            written += turn(&mut g, &mut tape, plant);
            turns += 1;
        }
        paths.push(tape.path().unwrap().to_owned());
    }
    let total = paths.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    (total, paths)
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// CPU time of this process (all threads) so far, from /proc (0 elsewhere).
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 =
        fields.get(11..13).map_or(0.0, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
    ticks * 10.0 // USER_HZ is 100 on Linux
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum()
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Drops the OS page cache (dentries, inodes, file data); false without permission.
fn drop_caches() -> bool {
    // `sync` first so that dirty pages can be dropped too.
    let synced = std::process::Command::new("sync").status().is_ok_and(|s| s.success());
    synced && std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

/// Searches, each in a fresh process after dropping the page cache; with `without_index`
/// the index is deleted first (the first search ever: the coldest start there is).
fn in_fresh_processes(root: &Path, index: &Path, queries: &[(&str, &str)], without_index: bool) {
    for (kind, q) in queries {
        let mut times = Vec::new();
        let mut out = String::new();
        for _ in 0..3 {
            if without_index {
                let _ = std::fs::remove_dir_all(index);
            }
            if !drop_caches() {
                println!(
                    "page cache dropped: skipped, needs permission to write /proc/sys/vm/drop_caches"
                );
                return;
            }
            let s = Instant::now();
            let o = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--search".as_ref(), root.as_os_str(), index.as_os_str(), q.as_ref()])
                .output()
                .unwrap();
            times.push(ms(s));
            out = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        }
        let (med, lo, hi) = median(times);
        let what = if without_index { "first search ever," } else { "cold" };
        let index_note = if without_index { ", no index" } else { "" };
        println!(
            "{what} {kind:<12} {q:<26} fresh process{index_note}, page cache dropped: median {med:6.1} ms (min {lo:.1}, max {hi:.1}), {out} hits"
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--search") {
        let (root, index, q) = (Path::new(&args[i + 1]), Path::new(&args[i + 2]), &args[i + 3]);
        println!("{}", search(root, index, q, 20).unwrap().len());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let index = tmp.path().join("index");
    let start = Instant::now();
    let (total, paths) = generate(&root);
    println!(
        "generated {SESSIONS} sessions in {CWDS} cwds, {:.2} GB of JSONL, in {:.0} s",
        total as f64 / 1e9,
        start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let read: usize = paths.iter().map(|p| std::fs::read(p).unwrap().len()).sum();
    println!(
        "reading every file once (page cache, one thread): {:.0} ms ({read} bytes)",
        ms(start)
    );

    // No index yet: a search indexes for a bounded time and reads the rest directly.
    let first_queries = [
        ("rare word", "xylophonist", 5),
        ("common word", "error", 20),
        ("phrase", "\"quantum flux capacitor\"", 3),
    ];
    for (kind, q, expected) in first_queries {
        let _ = std::fs::remove_dir_all(&index);
        let (start, cpu) = (Instant::now(), cpu_ms());
        let hits = search(&root, &index, q, 20).unwrap();
        println!(
            "first search ever, {kind:<12} {q:<26} (no index; page cache warm): {:.0} ms ({:.0} ms of CPU), {} hits",
            ms(start),
            cpu_ms() - cpu,
            hits.len()
        );
        assert_eq!(hits.len(), expected);
    }
    in_fresh_processes(
        &root,
        &index,
        &[("rare word", "xylophonist"), ("common word", "error")],
        true,
    );
    for run in 1..=2 {
        let _ = std::fs::remove_dir_all(&index);
        let (start, cpu) = (Instant::now(), cpu_ms());
        update_index(&root, &index).unwrap();
        println!(
            "whole index built #{run} (update_index, as the terminal UI does in the background): {:.0} ms ({:.0} ms of CPU)",
            ms(start),
            cpu_ms() - cpu
        );
    }
    assert_eq!(search(&root, &index, "xylophonist", 20).unwrap().len(), 5);
    let segments = std::fs::read_dir(&index)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".seg"))
        .count();
    println!(
        "index on disk: {:.1} MB in {segments} segments ({:.1}% of the JSONL)",
        dir_size(&index) as f64 / 1e6,
        dir_size(&index) as f64 * 100.0 / total as f64
    );

    let cold = [
        ("rare word", "xylophonist"),
        ("common word", "error"),
        ("phrase", "\"quantum flux capacitor\""),
    ];
    in_fresh_processes(&root, &index, &cold, false);

    let times: Vec<f64> = (0..7)
        .map(|_| {
            let s = Instant::now();
            update_index(&root, &index).unwrap();
            ms(s)
        })
        .collect();
    let (med, lo, hi) = median(times);
    println!(
        "warm consistency check alone (stat 2,000 files, no change): median {med:.1} ms (min {lo:.1}, max {hi:.1})"
    );

    let queries = [
        ("common word", "the"),
        ("common word", "error"),
        ("two words", "parser token"),
        ("rare word", "xylophonist"),
        ("phrase", "\"quantum flux capacitor\""),
        ("phrase of common words", "\"the test\""),
        ("no match", "zzqqxxyy"),
    ];
    for (kind, q) in queries {
        let mut n = 0;
        let times: Vec<f64> = (0..7)
            .map(|_| {
                let s = Instant::now();
                n = search(&root, &index, q, 20).unwrap().len();
                ms(s)
            })
            .collect();
        let (med, lo, hi) = median(times);
        println!(
            "warm {kind:<24} {q:<28} median {med:6.1} ms (min {lo:.1}, max {hi:.1}), {n} hits"
        );
    }
    let hits = search(&root, &index, "\"quantum flux capacitor\"", 20).unwrap();
    assert_eq!(hits.len(), 3);

    // Incremental: a few sessions grow (as running rabs append), one is new, one deleted.
    let mut g = Gen::new();
    let mut times = Vec::new();
    for round in 0..8 {
        for p in paths.iter().skip(round * 5).take(5) {
            let (mut tape, _) = Tape::open(p).unwrap();
            turn(&mut g, &mut tape, if round == 7 { Some(" grown pangolin") } else { None });
        }
        let cwd = PathBuf::from("/home/dev/new");
        let mut fresh = Tape::create(&session_dir(&root, &cwd), &cwd, None);
        turn(&mut g, &mut fresh, None);
        std::fs::remove_file(&paths[SESSIONS - 1 - round]).unwrap();
        let s = Instant::now();
        let n = search(&root, &index, "pangolin", 20).unwrap().len();
        times.push(ms(s));
        assert_eq!(n, if round == 7 { 5 } else { 0 });
    }
    let (med, lo, hi) = median(times);
    println!(
        "incremental (5 sessions +1 turn, 1 new, 1 deleted, then search): median {med:.1} ms (min {lo:.1}, max {hi:.1}) over 8 rounds"
    );
    println!("index on disk after: {:.1} MB", dir_size(&index) as f64 / 1e6);
}
