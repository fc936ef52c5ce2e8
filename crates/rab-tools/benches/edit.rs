//! Edit time on a 10 MB file, through the tools as the agent runs them (read, match,
//! diff, atomic write): `edit` with old_text found verbatim (exact path), `edit` with
//! old_text retyped with spaces where the file has tabs and ASCII quotes where it has
//! curly ones (tolerant path: every line normalised, the match written faithfully),
//! `edit` with old_text found nowhere (the closest-region search), the same for a
//! fragment whose every word is in the file (the encoding views are built too), and
//! `apply_patch` with the same two changes as a patch. Medians of 9 runs; the file is
//! restored between runs, outside the timing.
//!
//! Run: `cargo bench -p rab-tools --bench edit`
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use rab_agent::{AgentTool, ToolContext};
use rab_tools::Workspace;
use serde_json::{Value, json};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.rs");
    let mut content = String::with_capacity(10 << 20);
    let mut i = 0;
    while content.len() < 10 << 20 {
        content.push_str(&format!("fn f{i}() {{\n\tlet v = compute(“item {i}”, {i});\n}}\n"));
        i += 1;
    }
    let middle = i / 2;
    let ws = Workspace::new(dir.path());
    let edit = rab_tools::edit::Edit::new(ws.clone());
    let patch = rab_tools::apply_patch::ApplyPatch::new(ws);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let run = |tool: &dyn AgentTool, args: Value, ok: bool| {
        let mut times = Vec::new();
        for _ in 0..9 {
            std::fs::write(&path, &content).unwrap();
            let t = Instant::now();
            let out = rt.block_on(tool.execute(args.clone(), ToolContext::detached("b")));
            times.push(t.elapsed());
            assert_eq!(out.is_ok(), ok, "{:?}", out.err());
        }
        median(times)
    };
    let exact = run(
        &edit,
        json!({"path": "big.rs", "edits": [{
            "old_text": format!("compute(“item {middle}”, {middle})"),
            "new_text": format!("compute(“item {middle}”, {middle} + 1)")}]}),
        true,
    );
    let tolerant = run(
        &edit,
        json!({"path": "big.rs", "edits": [{
            "old_text": format!("fn f{middle}() {{\n    let v = compute(\"item {middle}\", {middle});"),
            "new_text": format!("fn f{middle}() {{\n    let v = compute(\"item {middle}\", {middle} + 1);")}]}),
        true,
    );
    let missing = run(
        &edit,
        json!({"path": "big.rs", "edits": [{
            "old_text": format!("fn f{middle}() {{\n    let w = compute(\"thing\", 0);"),
            "new_text": "x"}]}),
        false,
    );
    // Curly quotes typed straight in a fragment of a line: no pass matches it, and its
    // every word is in the file, so the views (edit_views) are built before the miss.
    let viewed = run(
        &edit,
        json!({"path": "big.rs", "edits": [{
            "old_text": format!("compute(\"item {middle}\", {middle})"),
            "new_text": "x"}]}),
        false,
    );
    let patched = run(
        &patch,
        json!({"input": format!(
            "*** Begin Patch\n*** Update File: big.rs\n@@ fn f{middle}() {{\n-    let v = compute(\"item {middle}\", {middle});\n+    let v = compute(\"item {middle}\", {middle} + 1);\n*** End Patch\n")}),
        true,
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("edit of a {:.1} MB file ({i} functions), median of 9:", content.len() as f64 / 1e6);
    println!("  edit, exact match:          {:>8.1} ms", ms(exact));
    println!("  edit, tolerant match:       {:>8.1} ms", ms(tolerant));
    println!("  edit, no match (closest):   {:>8.1} ms", ms(missing));
    println!("  edit, no match, views built:{:>8.1} ms", ms(viewed));
    println!("  apply_patch, tolerant:      {:>8.1} ms", ms(patched));
}
