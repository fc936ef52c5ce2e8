//! Checkpoints and rewind (issue 23): the time a checkpoint adds to one edit of a 1 MB
//! source file (the content stored before the call, the hash of what it left after),
//! the store's size for it, and the time to rewind 100 changed files.
//!
//! Run: `cargo bench -p rab-core --bench checkpoint`
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use rab_agent::AgentTool;
use rab_ai::ToolCall;
use rab_core::checkpoint::{CHECKPOINT, CHECKPOINT_AFTER, Checkpointer};
use rab_core::rewind::{What, rewind};
use rab_session::{CheckpointStore, EntryBody, Tape};
use serde_json::json;

/// About 1 MB of varied source text.
fn source(seed: usize) -> String {
    let mut out = String::new();
    let mut i = seed;
    while out.len() < 1_000_000 {
        out.push_str(&format!(
            "fn item_{i}(x: u64) -> u64 {{ x.wrapping_mul({}) ^ {} }} // line {i}\n",
            i * 7919 % 1000,
            i * 104_729 % 65_536
        ));
        i += 1;
    }
    out
}

fn call(path: &str) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: "write".into(),
        arguments: json!({"path": path, "content": "x"}),
        invalid_arguments: None,
        item_id: None,
        signature: None,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    let store = CheckpointStore::new(dir.path().join("checkpoints"));
    let ws = rab_tools::Workspace::new(&root);
    let cp = Checkpointer::new(store.clone(), ws.clone());
    let write: std::sync::Arc<dyn AgentTool> =
        std::sync::Arc::new(rab_tools::write::Write::new(ws));

    // One edit of a 1 MB file: each round a new content (a real edit stores new bytes).
    let mut times = Vec::new();
    for round in 0..30 {
        let text = source(round);
        std::fs::write(root.join("big.rs"), &text).unwrap();
        let start = Instant::now();
        let before = cp.before(&call("big.rs"), write.as_ref()).unwrap();
        let after = cp.after(&before);
        // The two entries' seals, as the session's recorder makes them.
        let _ = store.seal(serde_json::to_value(&before).unwrap());
        let _ = store.seal(serde_json::to_value(&after).unwrap());
        times.push(start.elapsed());
    }
    let size = store.size();
    println!(
        "checkpoint of one edit of a 1 MB file: median {:.2} ms (min {:.2} ms) over 30 edits",
        median(times.clone()).as_secs_f64() * 1e3,
        times.iter().min().unwrap().as_secs_f64() * 1e3
    );
    println!(
        "store: {:.1} KB per 1 MB file stored ({} files, {:.1} MB on disk)",
        size as f64 / 30.0 / 1024.0,
        30,
        size as f64 / 1e6
    );

    // 100 files changed after a point, rewound.
    let mut tape = Tape::create(&dir.path().join("sessions"), &root, None);
    tape.append(EntryBody::Custom { custom_type: "mark".into(), data: json!({}) }).unwrap();
    let mark = tape.leaf().unwrap().id.clone();
    for i in 0..100 {
        let path = format!("f{i}.rs");
        std::fs::write(root.join(&path), format!("old {i}\n").repeat(200)).unwrap();
        let before = cp.before(&call(&path), write.as_ref()).unwrap();
        std::fs::write(root.join(&path), format!("new {i}\n").repeat(200)).unwrap();
        let after = cp.after(&before);
        let data = store.seal(serde_json::to_value(&before).unwrap());
        tape.append(EntryBody::Custom { custom_type: CHECKPOINT.into(), data }).unwrap();
        let data = store.seal(serde_json::to_value(&after).unwrap());
        tape.append(EntryBody::Custom { custom_type: CHECKPOINT_AFTER.into(), data }).unwrap();
    }
    let what = What { files: true, conversation: false, force: false };
    let start = Instant::now();
    let report = rewind(&mut tape, &store, Some(&mark), what).unwrap();
    let took = start.elapsed();
    assert_eq!(report.restored.len(), 100, "{report:?}");
    println!("rewind of 100 changed files: {:.1} ms", took.as_secs_f64() * 1e3);
}
