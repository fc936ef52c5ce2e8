//! `rab-fake-llm --script FILE [--listen ADDR] [--repeat] [--timings LOG] [--requests LOG] [--lean]`:
//! serves a script for manual testing and benchmarks; prints the base URL on the first
//! line of stdout, runs until killed. `--timings` logs when each request arrived and its
//! answer ended (`req N MICROS` / `end N MICROS`), for measuring the client's turn
//! overhead; `--requests` logs each request's size, status and tools (how many, and
//! the bytes of the `tools` field) as a JSON line. `--lean` answers without reading or
//! checking requests, for timing the client alone (not with `--requests`).

use std::io::Write;

fn usage() -> ! {
    eprintln!(
        "usage: rab-fake-llm --script FILE.json [--listen 127.0.0.1:0] [--repeat] [--timings LOG] [--requests LOG] [--lean]"
    );
    std::process::exit(2);
}

fn main() {
    let mut script_path = None;
    let mut listen = "127.0.0.1:0".to_owned();
    let mut repeat = false;
    let mut timings = None;
    let mut requests = None;
    let mut lean = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script_path = args.next(),
            "--listen" => listen = args.next().unwrap_or_else(|| usage()),
            "--repeat" => repeat = true,
            "--timings" => timings = Some(args.next().unwrap_or_else(|| usage())),
            "--requests" => requests = Some(args.next().unwrap_or_else(|| usage())),
            "--lean" => lean = true,
            _ => usage(),
        }
    }
    let Some(path) = script_path else { usage() };
    if lean && requests.is_some() {
        eprintln!(
            "rab-fake-llm: --lean does not read requests, so it cannot log them (--requests)"
        );
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("rab-fake-llm: cannot read {path}: {e}");
        std::process::exit(2);
    });
    let mut script: rab_fake_llm::Script = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("rab-fake-llm: {path} is not a valid script: {e}");
        std::process::exit(2);
    });
    script.repeat |= repeat;
    let server = rab_fake_llm::FakeLlm::try_start(script, &listen).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    // Nothing can read the requests of a server run as a program.
    server.forget_requests();
    if lean {
        server.answer_unread();
    }
    if let Some(path) = timings {
        let file = std::fs::File::create(&path).unwrap_or_else(|e| {
            eprintln!("rab-fake-llm: cannot create {path}: {e}");
            std::process::exit(2);
        });
        server.log_timings(file);
    }
    if let Some(path) = requests {
        let file = std::fs::File::create(&path).unwrap_or_else(|e| {
            eprintln!("rab-fake-llm: cannot create {path}: {e}");
            std::process::exit(2);
        });
        server.log_requests(file);
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", server.url());
    let _ = out.flush();
    loop {
        std::thread::park();
    }
}
