//! Every fuzz target's body (fuzz/src/, docs/fuzzing.md) over every seed of its corpus
//! (fuzz/corpus/<target>/), on the stable toolchain and in this test build: a parser
//! that panics on a seed, or a target that no longer builds against rab's crates, fails
//! `cargo test`. The fuzzing itself (nightly, libFuzzer) is `fuzz/run.sh`.

use std::path::{Path, PathBuf};

#[path = "../../../../fuzz/src/acp_line.rs"]
mod acp_line;
#[path = "../../../../fuzz/src/edit_match.rs"]
mod edit_match;
#[path = "../../../../fuzz/src/frontmatter.rs"]
mod frontmatter;
#[path = "../../../../fuzz/src/highlight.rs"]
mod highlight;
#[path = "../../../../fuzz/src/hook_output.rs"]
mod hook_output;
#[path = "../../../../fuzz/src/image.rs"]
mod image;
#[path = "../../../../fuzz/src/keybindings.rs"]
mod keybindings;
#[path = "../../../../fuzz/src/models.rs"]
mod models;
#[path = "../../../../fuzz/src/rpc_line.rs"]
mod rpc_line;
#[path = "../../../../fuzz/src/settings.rs"]
mod settings;
#[path = "../../../../fuzz/src/shell_rule.rs"]
mod shell_rule;
#[path = "../../../../fuzz/src/sse.rs"]
mod sse;
#[path = "../../../../fuzz/src/stream_anthropic.rs"]
mod stream_anthropic;
#[path = "../../../../fuzz/src/stream_gemini.rs"]
mod stream_gemini;
#[path = "../../../../fuzz/src/stream_openai_chat.rs"]
mod stream_openai_chat;
#[path = "../../../../fuzz/src/stream_openai_responses.rs"]
mod stream_openai_responses;
#[path = "../../../../fuzz/src/tape.rs"]
mod tape;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `run` on each seed of `target`, naming the seed that panicked.
fn replay(target: &str, run: fn(&[u8])) {
    let dir = repo().join("fuzz/corpus").join(target);
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{target} has no seeds in {}", dir.display());
    for seed in seeds {
        let data = std::fs::read(&seed).unwrap();
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            panic!("fuzz target {target} panicked on its seed {} (above)", seed.display());
        }
    }
}

/// A test per target, named after it.
macro_rules! seeds {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                super::replay(stringify!($name), super::$name::run);
            }
        )*
    };
}

mod every_seed_of {
    seeds!(
        acp_line,
        edit_match,
        frontmatter,
        highlight,
        hook_output,
        image,
        keybindings,
        models,
        rpc_line,
        settings,
        shell_rule,
        sse,
        stream_anthropic,
        stream_gemini,
        stream_openai_chat,
        stream_openai_responses,
        tape,
    );
}

/// Every target in fuzz/fuzz_targets/ and every corpus folder is replayed here.
#[test]
fn every_fuzz_target_is_replayed() {
    let listed = [
        "acp_line",
        "edit_match",
        "frontmatter",
        "highlight",
        "hook_output",
        "image",
        "keybindings",
        "models",
        "rpc_line",
        "settings",
        "shell_rule",
        "sse",
        "stream_anthropic",
        "stream_gemini",
        "stream_openai_chat",
        "stream_openai_responses",
        "tape",
    ];
    for folder in ["fuzz/fuzz_targets", "fuzz/corpus"] {
        let mut found: Vec<String> = std::fs::read_dir(repo().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(found, listed, "{folder}: add the new target to this file");
    }
}
