//! Print mode: run one prompt to completion. Text output prints the final answer on
//! stdout (streamed live when no tools are offered, since then the first reply is the
//! answer); `json` prints one result object at the end; `stream-json` prints every
//! event as a JSON line. Tool activity goes to stderr with `--verbose`.

use std::io::Write;
use std::time::Instant;

use rab_agent::{AgentEvent, StopCause};
use rab_ai::Message;
use rab_core::AgentSession;
use rab_core::input::ShellLine;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cli::OutputFormat;
use crate::{EXIT_BUDGET, EXIT_DENIED, EXIT_INTERRUPTED, EXIT_MAX_TURNS, EXIT_OK, EXIT_PROVIDER};

/// How to print.
pub struct PrintOptions {
    /// Output format.
    pub format: OutputFormat,
    /// Tool activity and thinking on stderr.
    pub verbose: bool,
}

/// What the printer saw.
#[derive(Default)]
struct Seen {
    final_text: String,
    streamed: bool,
    ends_with_newline: bool,
    stdout_closed: bool,
}

/// Runs the prompt on the runtime (headless: its questions are not taken, so the gate
/// refuses what would ask); returns the exit code.
pub async fn run(session: AgentSession, prompt: String, opts: PrintOptions) -> u8 {
    use rab_core::runtime::{Event, Op};
    let started = Instant::now();
    let live = opts.format == OutputFormat::Text && session.agent().tool_specs().is_empty();
    let (mut handle, _questions) = rab_core::runtime::start(session);
    let aborter = handle.aborter();
    watch_interrupts(aborter.clone());
    let submission = handle.submit(Op::Prompt { text: prompt, images: Vec::new() });
    let mut seen = Seen { ends_with_newline: true, ..Seen::default() };
    let mut out = std::io::stdout();
    let mut stop = StopCause::Aborted;
    while let Some(event) = handle.events.recv().await {
        match event {
            Event::Agent(event) => {
                show(&event, &opts, live, &mut seen, &mut out);
                if seen.stdout_closed {
                    aborter.abort();
                }
            }
            Event::RunEnded { stop: s, .. } => {
                stop = s;
                break;
            }
            Event::Done { submission: id, result: Err(message) } if id == submission => {
                stop = StopCause::Error { message };
                break;
            }
            _ => {}
        }
    }
    let Some(session) = handle.finish().await else {
        eprintln!("rab: the session was lost");
        return EXIT_PROVIDER;
    };
    let code = finish(&session, &stop, &seen, &opts, started.elapsed().as_millis() as u64);
    session.session_end("exit").await;
    code
}

/// What a `rab -p ",…"` prompt turned out to be.
pub enum Comma {
    /// Not a comma line: run it as the prompt.
    Prompt,
    /// Handled (a command, or a `,cmd` shell line); exit with this code.
    Done(u8),
    /// A `,,cmd`: run this message (command and output) as the prompt.
    Ask(String),
}

/// A command or shell line given to print mode, classified as everywhere
/// (`rab_core::input`): a known `/command` or `,command` runs (commands that need the
/// interactive UI say so); `,cmd` runs in the shell through the permission gate and
/// sandbox and `!!cmd` as the user's own; `,,cmd` and `!cmd` also send the command and
/// its output to the model.
pub async fn comma(
    launch: &rab_core::setup::Setup,
    session: &mut AgentSession,
    prompt: &str,
) -> Comma {
    use rab_core::input::{LineKind, classify};
    let line = match classify(prompt, &launch.extensions) {
        LineKind::Prompt => return Comma::Prompt,
        LineKind::Shell(line) => line,
        LineKind::Command => return command(launch, session, prompt).await,
    };
    shell(launch, &line).await
}

/// A command given to print mode.
async fn command(
    launch: &rab_core::setup::Setup,
    session: &mut AgentSession,
    prompt: &str,
) -> Comma {
    use rab_core::CommandOutcome as Outcome;
    if let Some(mut outcome) = launch.extensions.run(prompt, session, launch) {
        while let Outcome::Later(work) = outcome {
            outcome = work.await;
        }
        return match outcome {
            Outcome::Info(text) => {
                println!("{}", text.trim_end());
                Comma::Done(EXIT_OK)
            }
            Outcome::Error(text) => {
                eprintln!("rab: {text}");
                Comma::Done(crate::EXIT_USAGE)
            }
            Outcome::Prompt(request) => {
                match rab_core::commands::apply_prompt(&request, session, launch) {
                    Ok(()) => Comma::Ask(request.text),
                    Err(e) => {
                        eprintln!("rab: {e}");
                        Comma::Done(crate::EXIT_USAGE)
                    }
                }
            }
            Outcome::Quit
            | Outcome::NewSession
            | Outcome::Resume(_)
            | Outcome::PickModel
            | Outcome::Clear
            | Outcome::Hotkeys
            | Outcome::Compact(_)
            | Outcome::Tree
            | Outcome::Branch(..)
            | Outcome::Handoff(_)
            | Outcome::Search(_)
            | Outcome::Reload
            | Outcome::Login(_)
            | Outcome::Later(_) => {
                let name = prompt.split_whitespace().next().unwrap_or_default();
                eprintln!("rab: {name} needs the interactive UI or the REPL");
                Comma::Done(crate::EXIT_USAGE)
            }
        };
    }
    Comma::Prompt
}

/// A shell line given to print mode.
async fn shell(launch: &rab_core::setup::Setup, line: &ShellLine) -> Comma {
    let result = rab_core::shell_line::run(
        launch,
        line,
        CancellationToken::new(),
        rab_agent::UpdateSink::none(),
    )
    .await;
    if line.share {
        return Comma::Ask(rab_core::shell_line::context(&line.command, &result));
    }
    if result.is_error {
        eprintln!("{}", crate::term::safe(result.output.trim_end()));
        return Comma::Done(EXIT_PROVIDER);
    }
    println!("{}", crate::term::for_stdout(result.output.trim_end()));
    Comma::Done(EXIT_OK)
}

/// First Ctrl+C stops the run cleanly; a second one exits at once.
fn watch_interrupts(aborter: rab_core::runtime::Aborter) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            aborter.abort();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
        }
    });
}

fn show(
    event: &AgentEvent,
    opts: &PrintOptions,
    live: bool,
    seen: &mut Seen,
    out: &mut std::io::Stdout,
) {
    if let AgentEvent::MessageEnd { message: Message::Assistant(a) } = event {
        seen.final_text = a.text();
    }
    notice(event);
    match opts.format {
        OutputFormat::StreamJson => {
            if let Ok(line) = serde_json::to_string(event) {
                seen.stdout_closed |= writeln!(out, "{line}").and_then(|()| out.flush()).is_err();
            }
        }
        OutputFormat::Json => {}
        OutputFormat::Text => {
            if let (true, AgentEvent::TextDelta { delta }) = (live, event) {
                let shown = crate::term::for_stdout(delta);
                seen.stdout_closed |=
                    out.write_all(shown.as_bytes()).and_then(|()| out.flush()).is_err();
                seen.streamed = true;
                seen.ends_with_newline = delta.ends_with('\n');
            }
            if opts.verbose {
                verbose(event);
            }
        }
    }
}

/// What the user must hear about even without `--verbose`: compaction.
fn notice(event: &AgentEvent) {
    match event {
        AgentEvent::CompactionStart { tokens, .. } => {
            eprintln!(
                "rab: compacting the conversation (~{tokens} tokens) to fit the context window…"
            )
        }
        AgentEvent::CompactionEnd { tokens_before, tokens_after, is_fallback, .. } => {
            let how = if *is_fallback { "dropped older messages" } else { "summarised" };
            eprintln!("rab: compacted ({how}): ~{tokens_before} → ~{tokens_after} tokens");
        }
        AgentEvent::CompactionFailed { message, .. } => {
            eprintln!("rab: compaction failed: {}", crate::term::safe(message))
        }
        _ => {}
    }
}

fn verbose(event: &AgentEvent) {
    match event {
        AgentEvent::ThinkingDelta { delta } => {
            eprint!("\x1b[2m{}\x1b[0m", crate::term::safe(delta))
        }
        AgentEvent::ToolCall { call } => {
            let args = call.arguments.to_string();
            let shown: String = args.chars().take(200).collect();
            eprintln!("\n● {} {}", crate::term::safe(&call.name), crate::term::safe(&shown));
        }
        AgentEvent::ToolResult { result, duration_ms, .. } => {
            let text = result.text();
            let first = text.lines().next().unwrap_or_default();
            let mark = if result.is_error { "✗" } else { "✓" };
            let first = crate::term::safe(first);
            eprintln!("  {mark} {first} ({} lines, {duration_ms} ms)", text.lines().count());
        }
        AgentEvent::Retry { attempt, delay, message } => {
            let message = crate::term::safe(message);
            eprintln!("rab: {message}; retrying in {:.1}s (attempt {attempt})", delay.as_secs_f64())
        }
        AgentEvent::AgentStart
        | AgentEvent::TurnStart { .. }
        | AgentEvent::TextDelta { .. }
        | AgentEvent::MessageEnd { .. }
        | AgentEvent::ToolUpdate { .. }
        | AgentEvent::Usage { .. }
        | AgentEvent::CompactionStart { .. }
        | AgentEvent::CompactionEnd { .. }
        | AgentEvent::CompactionFailed { .. }
        | AgentEvent::Error { .. }
        | AgentEvent::TurnEnd { .. }
        | AgentEvent::AgentEnd { .. } => {}
    }
}

fn exit_code(stop: &StopCause) -> u8 {
    match stop {
        StopCause::Done => EXIT_OK,
        StopCause::MaxTurns { .. } => EXIT_MAX_TURNS,
        StopCause::Budget { .. } => EXIT_BUDGET,
        StopCause::Error { .. } => EXIT_PROVIDER,
        StopCause::Aborted => EXIT_INTERRUPTED,
    }
}

fn finish(
    session: &AgentSession,
    stop: &StopCause,
    seen: &Seen,
    opts: &PrintOptions,
    duration_ms: u64,
) -> u8 {
    let (denials, denied) = session.gate().map(|g| g.denials()).unwrap_or_default();
    let code = match exit_code(stop) {
        EXIT_OK if denied > 0 => EXIT_DENIED,
        code => code,
    };
    let mut out = std::io::stdout();
    match opts.format {
        OutputFormat::Text => {
            if seen.streamed {
                if !seen.ends_with_newline {
                    let _ = writeln!(out);
                }
            } else if !seen.final_text.is_empty() && *stop == StopCause::Done {
                let _ = writeln!(out, "{}", crate::term::for_stdout(seen.final_text.trim_end()));
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let line = result_json(session, stop, seen, code, duration_ms, (&denials, denied));
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
    match stop {
        StopCause::Done if denied > 0 => eprintln!(
            "rab: finished, but {denied} tool call{} refused (exit {EXIT_DENIED}; \
             --output-format json lists them in permissionDenials)",
            if denied == 1 { " was" } else { "s were" }
        ),
        StopCause::Done => {}
        StopCause::MaxTurns { limit } => eprintln!(
            "rab: stopped after {limit} turns (--max-turns); continue with `rab -c -p \"go on\"`"
        ),
        StopCause::Budget { limit, spent } => eprintln!(
            "rab: stopped before the next request: it would take spending past the ${limit:.4} budget \
             (spent ${spent:.4}); raise --max-budget-usd to go on"
        ),
        StopCause::Error { message } => eprintln!("rab: {}", crate::term::safe(message)),
        StopCause::Aborted => eprintln!("rab: interrupted"),
    }
    code
}

fn result_json(
    session: &AgentSession,
    stop: &StopCause,
    seen: &Seen,
    code: u8,
    duration_ms: u64,
    (denials, denied): (&[rab_core::Denial], usize),
) -> String {
    let totals = session.totals();
    let sub = session.sub_agents();
    let model = &session.agent().config().model;
    let status = match stop {
        StopCause::Done if denied > 0 => "success_with_denials",
        StopCause::Done => "success",
        StopCause::MaxTurns { .. } => "error_max_turns",
        StopCause::Budget { .. } => "error_budget",
        StopCause::Error { .. } => "error",
        StopCause::Aborted => "interrupted",
    };
    let mut usage = totals.usage;
    usage.input += sub.usage.input;
    usage.output += sub.usage.output;
    usage.cache_read += sub.usage.cache_read;
    usage.cache_write += sub.usage.cache_write;
    usage.reasoning += sub.usage.reasoning;
    json!({
        "type": "result",
        "status": status,
        "isError": code != EXIT_OK,
        "exitCode": code,
        "result": seen.final_text,
        "error": match stop { StopCause::Error { message } => Some(message.as_str()), _ => None },
        "sessionId": session.tape().id(),
        "sessionPath": session.tape().path().map(|p| p.display().to_string()),
        "model": model.id,
        "provider": model.provider,
        "turns": totals.turns,
        "durationMs": duration_ms,
        "usage": usage,
        "costUsd": totals.cost + sub.cost,
        "subAgents": {"usage": sub.usage, "costUsd": sub.cost, "requests": sub.requests},
        "perTurn": session.turn_costs(),
        "permissionDenials": denials,
        "permissionDenialCount": denied,
    })
    .to_string()
}
