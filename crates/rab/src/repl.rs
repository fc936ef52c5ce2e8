//! The plain REPL: line-oriented, for terminals that cannot do the UI (`TERM=dumb`,
//! stdout not a terminal) or with `--repl`. Same commands as the UI: `/help`, `!cmd`, …
//! Ctrl+C interrupts a run; Ctrl+D (end of input) quits.

use crate::term::safe;
use std::io::Write;

use rab_agent::{AgentEvent, StopCause};
use rab_core::{AgentSession, Approval};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use rab_core::CommandOutcome as Outcome;

use rab_core::commands;
use rab_core::setup::Setup as Launch;
use rab_core::shell_line;

use crate::EXIT_OK;
use rab_core::input::{LineKind, classify};

/// Runs the REPL until end of input or `/quit`.
pub async fn run(mut launch: Launch, mut session: AgentSession, first: Option<String>) -> u8 {
    let model = &session.agent().config().model;
    println!(
        "rab {} — {} ({}) — /help for commands, Ctrl+D to quit",
        env!("CARGO_PKG_VERSION"),
        model.id,
        model.provider
    );
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let (ask_tx, mut ask_rx) = mpsc::unbounded_channel();
    launch
        .approver
        .install(std::sync::Arc::new(rab_core::setup::safety::ChannelApprover(ask_tx.clone())));
    let mut pending_context: Vec<String> = Vec::new();
    let mut next = first;
    loop {
        let line = match next.take() {
            Some(l) => l,
            None => {
                print!("> ");
                let _ = std::io::stdout().flush();
                tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(l)) => l,
                        Ok(None) | Err(_) => {
                            println!();
                            session.session_end("exit").await;
                            return EXIT_OK;
                        }
                    },
                    job = launch.scheduler.next_due() => {
                        println!("(scheduled prompt {}: {})", job.id, job.prompt);
                        job.prompt
                    }
                }
            }
        };
        let line = line.trim_end().to_owned();
        if line.trim().is_empty() {
            continue;
        }
        let kind = classify(&line, &launch.extensions);
        if kind == LineKind::Command {
            let Some(mut outcome) = launch.extensions.run(&line, &mut session, &launch) else {
                continue;
            };
            // A slow part (an MCP prompt being fetched) is awaited here.
            while let Outcome::Later(work) = outcome {
                outcome = work.await;
            }
            match outcome {
                Outcome::Info(text) => println!("{}", safe(text.trim_end())),
                Outcome::Error(text) => eprintln!("rab: {}", safe(&text)),
                Outcome::Quit => {
                    session.session_end("exit").await;
                    return EXIT_OK;
                }
                Outcome::Clear => print!("\n\n"),
                Outcome::Hotkeys => {
                    println!("The REPL reads whole lines: Ctrl+C interrupts a run, Ctrl+D quits.")
                }
                Outcome::PickModel => {
                    for m in launch.registry.models().iter().take(40) {
                        println!("  {}/{}", m.provider, m.id);
                    }
                    println!("switch with /model NAME");
                }
                Outcome::NewSession => match launch.session(launch.new_tape()) {
                    Ok((s, _)) => {
                        session = s;
                        println!("new session {}", session.tape().id());
                    }
                    Err(e) => eprintln!("rab: {}", e.message),
                },
                Outcome::Resume(arg) => resume(&launch, &mut session, arg),
                Outcome::Tree => println!("{}", commands::tree_text(&session)),
                Outcome::Compact(focus) => {
                    match session.compact(focus, CancellationToken::new()).await {
                        Ok(()) => println!("compacted"),
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Branch(id, summary) => {
                    let id = (!id.is_empty()).then_some(id);
                    match session.branch_to(id.as_deref(), summary, CancellationToken::new()).await
                    {
                        Ok(()) => println!(
                            "continuing on a new branch ({} messages of context)",
                            session.agent().messages().len()
                        ),
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Search(query) => {
                    match commands::search(
                        &query,
                        &launch.paths.sessions_dir(),
                        launch.paths.home(),
                    ) {
                        Ok(text) => println!("{text}"),
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Handoff(focus) => {
                    let dir = rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd);
                    match session.handoff(focus.as_deref(), &dir, CancellationToken::new()).await {
                        Ok(path) => println!("handed off to {}", path.display()),
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Prompt(request) => {
                    match commands::apply_prompt(&request, &mut session, &launch) {
                        Ok(()) => {
                            run_prompt(&mut session, request.text, &mut ask_rx, &mut lines).await;
                            let _ = launch.gate.grant(&[]);
                        }
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Reload => match reload(&launch, &session, &ask_tx) {
                    Ok((l, s)) => {
                        launch = l;
                        session = s;
                        println!(
                            "reloaded: {} commands, {} tools",
                            launch.extensions.commands().len(),
                            session.agent().tools().len()
                        );
                    }
                    Err(e) => eprintln!("rab: reload failed, nothing changed: {e}"),
                },
                Outcome::Login(provider) => {
                    if let Err(e) = rab_core::commands::login::check_provider(&launch, &provider) {
                        eprintln!("rab: {e}");
                        continue;
                    }
                    print!("{provider} API key (not echoed): ");
                    let _ = std::io::stdout().flush();
                    let echo_off = set_echo(false);
                    let key = lines.next_line().await.ok().flatten().unwrap_or_default();
                    if echo_off {
                        set_echo(true);
                        println!();
                    }
                    match rab_core::commands::login::store(&launch, &provider, &key) {
                        Ok(text) => println!("{text}"),
                        Err(e) => eprintln!("rab: {e}"),
                    }
                }
                Outcome::Later(_) => {}
            }
            continue;
        }
        if let LineKind::Shell(b) = kind {
            let cancel = CancellationToken::new();
            let (sink, mut rx) = rab_agent::UpdateSink::channel("shell");
            let printer = tokio::spawn(async move {
                while let Some((_, chunk)) = rx.recv().await {
                    print!("{}", safe(&chunk));
                    let _ = std::io::stdout().flush();
                }
            });
            let result = shell_line::run(&launch, &b, cancel, sink).await;
            let _ = printer.await;
            if b.gated {
                // A comma line shows its result (a refusal streams nothing).
                println!("{}", safe(result.output.trim_end()));
            }
            println!("{}", if result.is_error { "(command failed)" } else { "" });
            match (b.share, b.gated) {
                (true, false) => pending_context.push(shell_line::context(&b.command, &result)),
                (true, true) => {
                    let text = shell_line::context(&b.command, &result);
                    run_prompt(&mut session, text, &mut ask_rx, &mut lines).await;
                }
                (false, _) => {}
            }
            continue;
        }
        let mut prompt = pending_context.join("\n\n");
        pending_context.clear();
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(&line);
        run_prompt(&mut session, prompt, &mut ask_rx, &mut lines).await;
    }
}

/// `/reload`: the launch made again from the files, and the session reopened with it.
fn reload(
    launch: &Launch,
    session: &AgentSession,
    ask_tx: &mpsc::UnboundedSender<rab_core::setup::safety::Asked>,
) -> Result<(Launch, AgentSession), String> {
    let path = session
        .tape()
        .path()
        .ok_or("/reload needs a saved session (not --no-session); restart rab instead")?
        .to_owned();
    let fresh = launch.reload().map_err(|e| e.message)?;
    for w in &fresh.warnings {
        eprintln!("rab: warning: {}", crate::term::safe(w));
    }
    let (tape, _) = rab_session::Tape::open(&path).map_err(|e| e.to_string())?;
    let (s, _) = fresh.session(tape).map_err(|e| e.message)?;
    fresh
        .approver
        .install(std::sync::Arc::new(rab_core::setup::safety::ChannelApprover(ask_tx.clone())));
    Ok((fresh, s))
}

/// Turns terminal echo off or on (for typing a key); false when stdin is not a
/// terminal or `stty` is missing.
fn set_echo(on: bool) -> bool {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return false;
    }
    std::process::Command::new("stty")
        .arg(if on { "echo" } else { "-echo" })
        .stdin(std::process::Stdio::inherit())
        .status()
        .is_ok_and(|s| s.success())
}

fn resume(launch: &Launch, session: &mut AgentSession, arg: Option<String>) {
    let dir = rab_session::session_dir(&launch.paths.sessions_dir(), &launch.cwd);
    let sessions = rab_session::list_sessions(&dir);
    let chosen = match arg.as_deref().map(str::parse::<usize>) {
        Some(Ok(n)) if n >= 1 && n <= sessions.len() => sessions.get(n - 1).map(|s| s.path.clone()),
        Some(_) => arg.map(std::path::PathBuf::from),
        None => {
            for (i, s) in sessions.iter().enumerate().take(20) {
                let name = s.name.as_deref().map(|n| format!("[{n}] ")).unwrap_or_default();
                println!(
                    "  {:>2}. {}  {:>8}  {:>8}  {name}{}",
                    i + 1,
                    s.id,
                    crate::sessions::ago(s.modified),
                    rab_tools::truncate::format_size(s.size as usize),
                    s.first_message
                );
            }
            println!("resume with /resume N");
            return;
        }
    };
    let Some(path) = chosen else { return };
    match rab_session::Tape::open(&path) {
        Ok((tape, _)) => match launch.session(tape) {
            Ok((s, _)) => {
                *session = s;
                println!(
                    "resumed {} ({} messages)",
                    session.tape().id(),
                    session.agent().messages().len()
                );
            }
            Err(e) => eprintln!("rab: {}", e.message),
        },
        Err(e) => eprintln!("rab: {e}"),
    }
}

/// Runs one prompt, printing the answer as it streams and tool activity as it happens,
/// and asking on stdin when a call needs permission.
async fn run_prompt(
    session: &mut AgentSession,
    prompt: String,
    asks: &mut mpsc::UnboundedReceiver<rab_core::setup::safety::Asked>,
    lines: &mut Lines<BufReader<Stdin>>,
) {
    let mut rx = session.subscribe();
    let cancel = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let run = session.prompt(prompt, cancel);
    let printer = print_events(&mut rx);
    tokio::pin!(run, printer);
    let mut is_printed = false;
    let stop = loop {
        tokio::select! {
            stop = &mut run => break stop,
            () = &mut printer, if !is_printed => is_printed = true,
            Some(asked) = asks.recv() => {
                let answer = ask(&asked.request, lines).await;
                let _ = asked.reply.send(answer);
            }
        }
    };
    if !is_printed {
        printer.await;
    }
    watcher.abort();
    match stop {
        StopCause::Done => {}
        StopCause::MaxTurns { limit } => eprintln!("rab: stopped after {limit} turns"),
        StopCause::Budget { limit, spent } => {
            eprintln!(
                "rab: stopped: the next request would pass the ${limit:.4} budget (spent ${spent:.4})"
            )
        }
        StopCause::Error { message } => eprintln!("rab: {}", safe(&message)),
        StopCause::Aborted => eprintln!("rab: interrupted"),
    }
}

/// Shows a permission question and reads the answer line.
async fn ask(r: &rab_core::ApprovalRequest, lines: &mut Lines<BufReader<Stdin>>) -> Approval {
    use rab_core::ApprovalKind;
    match &r.kind {
        ApprovalKind::Question { question, options } => {
            println!("\n? {}", safe(question));
            for (i, o) in options.iter().enumerate() {
                println!("  {}. {}", i + 1, safe(o));
            }
            print!("  answer (a number or your own words) > ");
            let _ = std::io::stdout().flush();
            let line = lines.next_line().await.ok().flatten().unwrap_or_default();
            let line = line.trim();
            let picked = line.parse::<usize>().ok().and_then(|n| options.get(n.checked_sub(1)?));
            return match (picked, line.is_empty()) {
                (Some(choice), _) => Approval::Answer(choice.clone()),
                (None, true) => Approval::Deny(None),
                (None, false) => Approval::Answer(line.to_owned()),
            };
        }
        ApprovalKind::Plan { plan } => {
            println!("\n? Start with this plan?");
            plan.lines().for_each(|l| println!("  {}", safe(l)));
            print!("  [y]es · [a]ccept edits too · [n]o [what to change] > ");
        }
        ApprovalKind::Permission => {
            println!("\n? Allow {} ({})", safe(&r.tool), safe(&r.reason));
            match (&r.preview, r.arguments.get("command").and_then(serde_json::Value::as_str)) {
                (Some(p), _) => p.lines().take(40).for_each(|l| println!("  {}", safe(l))),
                (None, Some(cmd)) => println!("  $ {}", safe(cmd)),
                (None, None) => println!("  {}", r.arguments),
            }
            print!("  [y]es once · [a]lways ({}) · [n]o [reason] > ", safe(&r.rule));
        }
    }
    let _ = std::io::stdout().flush();
    let line = lines.next_line().await.ok().flatten().unwrap_or_default();
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" => Approval::Once,
        "a" | "always" => Approval::Always,
        _ => Approval::Deny(Some(rest.trim().to_owned()).filter(|r| !r.is_empty())),
    }
}

async fn print_events(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) {
    let mut out = std::io::stdout();
    let mut at_line_start = true;
    while let Some(event) = rx.recv().await {
        match &event {
            AgentEvent::TextDelta { delta } => {
                let _ = out.write_all(safe(delta).as_bytes());
                let _ = out.flush();
                at_line_start = delta.ends_with('\n');
            }
            AgentEvent::ToolCall { call } => {
                if !at_line_start {
                    println!();
                }
                let args: String = call.arguments.to_string().chars().take(160).collect();
                println!("● {} {}", safe(&call.name), safe(&args));
                at_line_start = true;
            }
            AgentEvent::ToolResult { result, .. } => {
                let text = result.text();
                let mark = if result.is_error { "✗" } else { "✓" };
                println!(
                    "  {mark} {} ({} lines)",
                    safe(text.lines().next().unwrap_or_default()),
                    text.lines().count()
                );
            }
            AgentEvent::AgentEnd { .. } => {
                if !at_line_start {
                    println!();
                }
                return;
            }
            AgentEvent::CompactionStart { tokens, .. } => {
                println!("(compacting the conversation, ~{tokens} tokens…)");
            }
            AgentEvent::CompactionEnd { tokens_before, tokens_after, .. } => {
                println!(
                    "(compacted: ~{tokens_before} → ~{tokens_after} tokens; the full history \
                     stays in the session: /tree, /export)"
                );
            }
            AgentEvent::CompactionFailed { message, .. } => {
                eprintln!("rab: compaction failed: {}", safe(message))
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::Retry { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::TurnEnd { .. } => {}
        }
    }
}
