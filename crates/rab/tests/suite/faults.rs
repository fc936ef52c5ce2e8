//! The fault matrix: every fault the fake server can inject, on every wire format, in a
//! headless run of the real binary that has already run a tool. Each run recovers or
//! ends with the documented exit code and a clear message; afterwards the session's
//! tape loads and `-c` continues it (the fake server refuses a history with a call and
//! no result), and no child process is left. One table, not 48 copies; run with
//! `--nocapture` to see it as a table.

use std::process::Output;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::{Home, WIRES, stderr, stdout};

/// What a case should end with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// Exit 0 with the final answer.
    Recovers,
    /// This exit code, and stderr containing this.
    Fails(i32, &'static str),
}

struct Case {
    name: &'static str,
    /// The responses to the request after the tool call (the fault, then what follows).
    turns: fn(&str) -> Vec<Turn>,
    expect: Expect,
}

const LONG: &str = "a fairly long answer, long enough to be cut into many small events";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "429 with retry-after",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text("done").after_fault(429, Some(1))],
        },
        Case {
            name: "500 ×3",
            expect: Expect::Fails(1, "HTTP 500"),
            turns: |_| {
                vec![
                    Turn::text("never")
                        .after_fault(500, None)
                        .after_fault(500, None)
                        .after_fault(500, None),
                ]
            },
        },
        Case {
            name: "529 overloaded",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text("done").after_fault(529, None)],
        },
        Case {
            name: "disconnect before any byte",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text("done").after_drop()],
        },
        Case {
            name: "disconnect mid-text",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text(LONG).disconnect_after(6), Turn::text("done")],
        },
        Case {
            name: "disconnect mid-tool-arguments",
            expect: Expect::Recovers,
            // Gemini sends a call whole, in one event: cut after it, before the end.
            turns: |wire| {
                let after = if wire == "google-generative-ai" { 1 } else { 3 };
                vec![
                    Turn::tool_call("bash", json!({"command": "echo cut before it ran"}))
                        .disconnect_after(after),
                    Turn::text("done"),
                ]
            },
        },
        Case {
            name: "malformed SSE line",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text(LONG).malformed_after(6), Turn::text("done")],
        },
        Case {
            name: "truncated JSON in tool arguments",
            expect: Expect::Recovers,
            turns: |_| {
                let mut t = Turn::tool_call("bash", json!({}));
                t.tool_calls[0].raw_arguments = Some("{\"command\": \"echo trunc".into());
                vec![t, Turn::text("done")]
            },
        },
        Case {
            name: "no response (server silent)",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text("never").hang(), Turn::text("done")],
        },
        Case {
            name: "stream stalls",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text(LONG).stall_after(3), Turn::text("done")],
        },
        Case {
            name: "oversized response",
            expect: Expect::Recovers,
            turns: |_| {
                let mut t = Turn::text("x".repeat(17 * 1024 * 1024));
                t.chunk_chars = Some(17 * 1024 * 1024);
                vec![t, Turn::text("done")]
            },
        },
        Case {
            name: "error event mid-stream",
            expect: Expect::Recovers,
            turns: |_| vec![Turn::text(LONG).error_after(3), Turn::text("done")],
        },
    ]
}

fn run(home: &Home, llm: &FakeLlm, wire: &str, args: &[&str], project: &std::path::Path) -> Output {
    home.rab_for(wire, llm, Some("k")).current_dir(project).args(args).output().unwrap()
}

#[test]
fn every_fault_on_every_wire_recovers_or_ends_clearly_and_leaves_a_whole_session() {
    let mut table = Vec::new();
    for case in cases() {
        for wire in WIRES {
            let home = Home::new();
            let project = home.dir.path().join("proj");
            std::fs::create_dir_all(home.dir.path().join("rab/agent")).unwrap();
            std::fs::create_dir_all(&project).unwrap();
            // Fast retries; short silences where silence is the fault (the run waits
            // seconds, not minutes).
            let silent = case.name.starts_with("no response") || case.name == "stream stalls";
            let settings = if silent {
                json!({"retry": {"baseDelayMs": 10}, "timeouts": {"firstByteSecs": 1, "idleSecs": 1}})
            } else {
                json!({"retry": {"baseDelayMs": 10}})
            };
            std::fs::write(home.dir.path().join("rab/agent/settings.json"), settings.to_string())
                .unwrap();
            let marker = format!("M{}", fastrand::u64(..));
            let llm = FakeLlm::start();
            let mut turns =
                vec![Turn::tool_call("bash", json!({"command": format!("echo {marker}")}))];
            turns.extend((case.turns)(wire));
            llm.script(turns);
            let out = run(&home, &llm, wire, &["-p", "--yolo", "go"], &project);
            let (code, err) = (out.status.code().unwrap_or(-1), stderr(&out));
            let what = format!("{wire} × {}", case.name);
            let outcome = match case.expect {
                Expect::Recovers => {
                    assert_eq!(code, 0, "{what}: {err}");
                    assert!(stdout(&out).trim_end().ends_with("done"), "{what}: {}", stdout(&out));
                    let retried = err.contains("retrying");
                    if retried { "recovers (retried)" } else { "recovers" }
                }
                Expect::Fails(expected, message) => {
                    assert_eq!(code, expected, "{what}: {err}");
                    assert!(err.contains(message), "{what}: {err}");
                    "ends: exit 1, HTTP 500 named"
                }
            };
            // A mid-answer break says the partial answer was dropped.
            if case.name.starts_with("disconnect mid") || case.name == "malformed SSE line" {
                assert!(
                    err.contains("discarded"),
                    "{what}: the partial answer is said discarded: {err}"
                );
            }
            // The tape loads and -c continues it; every call of the history has its result
            // (the fake server refuses a history without), the first prompt is there once.
            llm.script([Turn::text("continued")]);
            let again = run(&home, &llm, wire, &["-c", "-p", "again"], &project);
            assert_eq!(again.status.code(), Some(0), "{what}: -c: {}", stderr(&again));
            let last = llm.requests().last().cloned().unwrap();
            let prompts = last.user_texts();
            assert_eq!(
                prompts.iter().filter(|t| t.contains("go")).count(),
                1,
                "{what}: {prompts:?}"
            );
            assert!(!last.tool_results().is_empty(), "{what}: the tool call's result is kept");
            let ran = last.tool_results().iter().any(|r| r.1.contains("cut before it ran"));
            assert!(!ran, "{what}: a call from a broken response ran");
            // No child process is left behind.
            let ps = std::process::Command::new("ps").args(["-eo", "args"]).output().unwrap();
            assert!(
                !String::from_utf8_lossy(&ps.stdout).contains(&marker),
                "{what}: a child lives on"
            );
            table.push((wire, case.name, outcome));
        }
    }
    let mut text = String::from(
        "| fault | anthropic | responses | completions | gemini |\n|---|---|---|---|---|\n",
    );
    for case in cases() {
        let row: Vec<&str> = WIRES
            .iter()
            .map(|w| {
                table.iter().find(|(tw, n, _)| tw == w && *n == case.name).map_or("?", |t| t.2)
            })
            .collect();
        text.push_str(&format!("| {} | {} |\n", case.name, row.join(" | ")));
    }
    eprintln!("{text}");
}
