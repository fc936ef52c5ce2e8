//! Hostile and huge input: each ends in a clear result with bounded memory, never a
//! panic, a hang or a poisoned session.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use rab_fake_llm::{FakeLlm, ScriptedCall, Turn};
use serde_json::{Value, json};

use super::harness::{Home, stderr, stdout};

/// Runs `cmd` feeding `input` on stdin, and samples the child's peak resident memory
/// (VmHWM) until it exits. Returns the output and the peak in MB.
fn run_sampled(cmd: &mut Command, input: &[u8]) -> (Output, u64) {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let sampler = std::thread::spawn(move || {
        let mut peak = 0;
        while let Ok(text) = std::fs::read_to_string(&status) {
            let kb = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok());
            match kb {
                Some(kb) => peak = peak.max(kb),
                None => break, // a zombie: exited
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        peak / 1024
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (out, sampler.join().unwrap())
}

fn rab(home: &Home, llm: &FakeLlm) -> Command {
    home.rab_for("anthropic-messages", llm, Some("k"))
}

fn last_result(llm: &FakeLlm) -> String {
    let reqs = llm.requests();
    let results = reqs.last().unwrap().tool_results();
    results.last().map(|r| r.1.clone()).unwrap_or_default()
}

#[test]
fn a_prompt_larger_than_the_window_is_refused_before_anything_is_sent_or_recorded() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("fits"), Turn::text("after")]);
    // 10 MB on stdin: about 2.6 M tokens, for a model that takes 1 M.
    let words = ["alpha ", "beta ", "gamma ", "delta "];
    let huge: String = (0..2_000_000).map(|i| words[i % 4]).collect();
    assert!(huge.len() > 10_000_000);
    let (out, peak) = run_sampled(rab(&home, &llm).args(["-p", "summarise"]), huge.as_bytes());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rab: prompt is ~2875003 tokens, the model takes 1000000"), "{err}");
    assert!(err.contains("save it to a file"), "{err}");
    assert!(llm.requests().is_empty(), "nothing was sent");
    eprintln!("peak RSS refusing a 10 MB prompt: {peak} MB");
    assert!(peak < 400, "peak {peak} MB for a 10 MB prompt");
    // Nothing of it is in the session: the next prompt continues cleanly.
    let out = rab(&home, &llm).args(["-c", "-p", "hello"]).output().unwrap();
    assert_eq!(stdout(&out), "fits\n", "{}", stderr(&out));
    assert_eq!(llm.requests()[0].user_texts(), ["hello"]);
    // A large prompt that fits (3 MB) goes through stdin whole.
    let big: String = (0..600_000).map(|i| words[i % 4]).collect();
    let (out, _) = run_sampled(rab(&home, &llm).args(["-c", "-p", "count"]), big.as_bytes());
    assert_eq!(stdout(&out), "after\n", "{}", stderr(&out));
    let sent = llm.requests()[1].user_texts().concat();
    assert!(sent.len() > big.len(), "{} bytes sent", sent.len());
}

/// A session file that cannot be read: set up `path` so, or say why it cannot be here.
fn make_unusable(path: &std::path::Path, how: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mode = if how == "unreadable" { 0o000 } else { 0o444 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let blocked = match how {
        "unreadable" => std::fs::File::open(path).is_err(),
        _ => std::fs::OpenOptions::new().append(true).open(path).is_err(),
    };
    if blocked {
        return true;
    }
    // As root, modes do not bind; an immutable file does (where chattr works).
    if how == "read-only"
        && Command::new("chattr").arg("+i").arg(path).status().is_ok_and(|s| s.success())
    {
        return true;
    }
    eprintln!("skipped the {how} session case: this user can read and write any file");
    false
}

#[test]
fn session_paths_rab_cannot_use_get_exit_2_and_the_way_out() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("ok"), Turn::text("ok"), Turn::text("ok")]);
    let run = |path: &std::path::Path| {
        rab(&home, &llm).arg("--session").arg(path).args(["-p", "hi"]).output().unwrap()
    };
    let check = |out: &Output, what: &str| {
        let err = stderr(out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("run with --no-session"), "{what}: {err}");
        err
    };
    // A folder that does not exist, outside RAB_HOME: not made behind the user's back.
    let elsewhere = tempfile::tempdir().unwrap();
    let missing = elsewhere.path().join("typo/sessions/s.jsonl");
    let err = check(&run(&missing), "missing folder");
    assert!(err.contains("typo/sessions does not exist"), "{err}");
    assert!(!elsewhere.path().join("typo").exists());
    // Under RAB_HOME it is made, and said.
    let inside = home.dir.path().join("rab/sessions/mine/s.jsonl");
    let out = run(&inside);
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("created the folder"), "{}", stderr(&out));
    assert!(inside.is_file());
    // A folder, a FIFO (which would block a read forever) and a file that is not a session.
    let err = check(&run(elsewhere.path()), "folder");
    assert!(err.contains("is a folder"), "{err}");
    let fifo = elsewhere.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = check(&run(&fifo), "fifo");
    assert!(err.contains("is not a regular file"), "{err}");
    let notes = elsewhere.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let err = check(&run(&notes), "not a session");
    assert!(err.contains("is not a rab session"), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n", "left alone");
    // A session that cannot be written, or read: refused at start, file untouched.
    for how in ["read-only", "unreadable"] {
        let path = elsewhere.path().join(format!("{how}.jsonl"));
        std::fs::copy(&inside, &path).unwrap();
        let before = std::fs::read(&path).unwrap();
        if !make_unusable(&path, how) {
            continue;
        }
        let out = run(&path);
        let _ = Command::new("chattr").arg("-i").arg(&path).status();
        let err = check(&out, how);
        let word = if how == "read-only" { "cannot be written" } else { "cannot be read" };
        assert!(err.contains(word), "{how}: {err}");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), before, "{how}: untouched");
    }
    assert_eq!(llm.requests().len(), 1, "only the usable session asked the model");
}

#[test]
fn huge_and_odd_tool_input_gives_clear_bounded_results() {
    let home = Home::new();
    let ws = home.dir.path();
    // A 50 MB file of one line, binary and Latin-1 files, 10,000 files, a link loop.
    let line = vec![b'x'; 50 << 20];
    std::fs::write(ws.join("one-line.txt"), &line).unwrap();
    let mut bin = vec![0u8; 4096];
    bin[..4].copy_from_slice(b"\x7fELF");
    std::fs::write(ws.join("tool.bin"), &bin).unwrap();
    std::fs::write(
        ws.join("latin1.txt"),
        b"// the menu: caf\xe9 and cr\xe8me br\xfbl\xe9e, a needle in the text\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("many")).unwrap();
    for i in 0..10_000 {
        std::fs::write(ws.join(format!("many/f{i}.txt")), "").unwrap();
    }
    std::fs::create_dir_all(ws.join("loop/a")).unwrap();
    std::os::unix::fs::symlink("../../loop", ws.join("loop/a/back")).unwrap();
    std::os::unix::fs::symlink("self", ws.join("self")).unwrap();
    let deep =
        format!(r#"{{"path":"latin1.txt","x":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
    let call = |name: &str, args: Value| ScriptedCall {
        name: name.into(),
        arguments: args,
        ..Default::default()
    };
    let turns = [
        // 100 MB of output, half of it one line.
        Turn::tool_call(
            "bash",
            json!({"command": "head -c 50000000 /dev/zero | tr '\\0' a; echo; seq 1 7000000"}),
        ),
        Turn::tool_call("read", json!({"path": "one-line.txt"})),
        Turn::tool_call("read", json!({"path": "tool.bin"})),
        Turn::tool_call("read", json!({"path": "latin1.txt"})),
        Turn::tool_call("grep", json!({"pattern": "needle"})),
        Turn::tool_call("glob", json!({"pattern": "**/*.txt"})),
        Turn {
            tool_calls: vec![ScriptedCall {
                name: "read".into(),
                raw_arguments: Some(deep),
                ..Default::default()
            }],
            ..Default::default()
        },
        Turn {
            tool_calls: vec![
                call("ls", json!({"path": "loop/a/back/a/back"})),
                call("glob", json!({"pattern": "**/*", "path": "loop"})),
            ],
            ..Default::default()
        },
        Turn::text("survived"),
    ];
    let llm = FakeLlm::start();
    llm.script(turns);
    // The bash tool keeps the full 100 MB output in TMPDIR: a folder of the test's own
    // (outside the workspace the model searches), so it goes with it (in /tmp, every run of this test would leave 100 MB behind).
    let tmp_dir = tempfile::tempdir().unwrap();
    let tmp = tmp_dir.path().to_path_buf();
    let mut cmd = rab(&home, &llm);
    cmd.env("TMPDIR", &tmp).args(["-p", "--yolo", "--output-format", "json", "go"]);
    let (out, peak) = run_sampled(&mut cmd, b"");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    eprintln!("peak RSS over the huge tool input: {peak} MB");
    assert!(peak < 300, "peak {peak} MB");
    let results: Vec<String> =
        llm.requests()[1..].iter().map(|r| r.tool_results().last().unwrap().1.clone()).collect();
    let has = |i: usize, what: &str| {
        assert!(
            results[i].contains(what),
            "{i}: {what} not in {}",
            &results[i][..results[i].len().min(600)]
        )
    };
    has(0, "[output truncated: showing the last 2000 of 7000001 lines; full output in ");
    // In rab's private folder in TMPDIR (mode 0700), removed when rab ends.
    has(0, &format!("full output in {}", tmp.join("rab-").display()));
    has(0, "/logs/rab-bash-");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert_eq!(left.len(), 0, "rab's private folder is removed when it ends: {left:?}");
    assert!(results[0].len() < 100_000, "{} bytes", results[0].len());
    has(1, "[line cut at 2000 characters of 50.0 MB]");
    has(2, "binary file tool.bin (4.0 KB) not shown");
    has(3, "caf\u{fffd} and cr\u{fffd}me br\u{fffd}l\u{fffd}e, a needle");
    // grep skips the one-line file and says so, finds the rest.
    has(4, "latin1.txt:1:// the menu: caf\u{fffd} and cr\u{fffd}me");
    has(4, "[not searched: one-line.txt: a line longer than 8 MB");
    has(5, "[9002 more files not shown; narrow the pattern or path]");
    has(6, "invalid JSON arguments for read: recursion limit exceeded");
    let last = last_result(&llm);
    assert!(last.contains("loop/a/back"), "{last}");
    let session: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let tape = std::fs::metadata(session["sessionPath"].as_str().unwrap()).unwrap().len();
    assert!(tape < 2 << 20, "the session is {tape} bytes");
}
