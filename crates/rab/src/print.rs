//! Print mode: run one prompt to completion. Text output prints the final answer on
//! stdout (streamed live when no tools are offered, since then the first reply is the
//! answer); `json` prints one result object at the end; `stream-json` prints every
//! event as a JSON line. Tool activity goes to stderr with `--verbose`.

use std::io::Write;
use std::time::Instant;

use rab_agent::{AgentEvent, StopCause};
use rab_ai::Message;
use rab_core::{AgentSession, MAX_DENIALS};
use serde_json::Value;

use crate::cli::OutputFormat;
use crate::print_json::{InitLine, ResultLine};
use crate::{
    EXIT_BUDGET, EXIT_DENIED, EXIT_INTERRUPTED, EXIT_LENGTH, EXIT_LOOP, EXIT_MAX_TURNS, EXIT_OK,
    EXIT_PROVIDER,
};

/// How to print.
pub struct PrintOptions {
    /// Output format.
    pub format: OutputFormat,
    /// Tool activity and thinking on stderr; with `--output-compat claude`, `json` prints
    /// every message and the result as one array, as Claude Code does.
    pub verbose: bool,
    /// `--include-partial-messages`: with `--output-compat claude`, each reply's stream
    /// as `stream_event` lines too (rab's own stream-json always has its deltas).
    pub partial: bool,
}

/// The result object of a run, in the schema asked for.
fn result_line(
    session: &AgentSession,
    stop: Option<&StopCause>,
    (code, message): (u8, Option<String>),
    seen: &Seen,
    duration_ms: u64,
) -> String {
    match &seen.claude {
        Some(claude) => {
            let end = crate::print_claude::Ending {
                stop,
                code,
                message,
                final_text: &seen.final_text,
                duration_ms,
                api_ms: claude.api_ms,
                stop_reason: claude.stop_reason(),
            };
            claude.json_output(crate::print_claude::result(Some(session), &end)).to_string()
        }
        None => ResultLine::of_run(session, stop, (code, message), &seen.final_text, duration_ms)
            .to_line(),
    }
}

/// What the printer saw.
#[derive(Default)]
struct Seen {
    /// Lines in Claude Code's schema (`--output-compat claude`).
    claude: Option<crate::print_claude::Stream>,
    final_text: String,
    /// The last reply stopped at the output limit (and rab asks for the rest).
    cut_off: bool,
    streamed: bool,
    ends_with_newline: bool,
    stdout_closed: bool,
}

/// The prompt of a print run.
pub enum Input {
    /// Typed as arguments: a command or shell line runs as such (`rab_core::input`).
    Typed(String),
    /// Piped in: data for the model, never a command.
    Data(String),
}

/// Runs the input on the runtime; returns the exit code. Headless: a question is
/// refused (a permission with a note on stderr saying which rule would allow it). A
/// command's text goes to stdout; one that needs a person (a picker, a key) says so.
pub async fn run(
    setup: std::sync::Arc<rab_core::setup::Setup>,
    session: AgentSession,
    input: Input,
    opts: PrintOptions,
) -> u8 {
    use rab_core::runtime::{Event, Op};
    let started = Instant::now();
    let live = opts.format == OutputFormat::Text && session.agent().tool_specs().is_empty();
    let claude = crate::print_json::is_claude() && opts.format != OutputFormat::Text;
    let session_id = session.tape().id().to_owned();
    let mut claude_stream = claude.then(|| crate::print_claude::Stream::new(&session_id));
    if opts.format == OutputFormat::StreamJson {
        let init = if claude {
            crate::print_claude::init(&session, &setup.cwd).to_string()
        } else {
            serde_json::to_string(&InitLine::of(&session, &setup.cwd)).unwrap_or_default()
        };
        outln!("{init}");
        if opts.partial {
            let model = session.agent().config().model.id.clone();
            claude_stream = claude_stream.map(|s| s.with_partials(&model));
        }
    } else if opts.verbose {
        let init = crate::print_claude::init(&session, &setup.cwd);
        claude_stream = claude_stream.map(|s| s.keep_all(init));
    }
    let mut handle = rab_core::runtime::start_with(setup, session);
    let aborter = handle.aborter();
    watch_interrupts(aborter.clone());
    let (op, line) = match input {
        Input::Typed(text) => (Op::Line { text: text.clone() }, text),
        Input::Data(text) => (Op::Prompt { text, images: Vec::new() }, String::new()),
    };
    let mut submission = handle.submit(op);
    let mut seen = Seen { ends_with_newline: true, claude: claude_stream, ..Seen::default() };
    let mut out = std::io::stdout();
    let mut stop = None;
    let mut code = EXIT_OK;
    // Why the run failed without a model run (a command's error), for the result object.
    let mut failure: Option<String> = None;
    let mut is_running = false;
    // A shell line's output waits for the next prompt (`!cmd`, or `,,cmd` refused).
    let mut shared = false;
    while let Some(event) = handle.events.recv().await {
        match event {
            Event::Agent(event) => {
                show(&event, &opts, live, &mut seen, &mut out);
                if seen.stdout_closed {
                    aborter.abort();
                }
            }
            Event::ApprovalRequested { id, request } => {
                if request.kind == rab_core::ApprovalKind::Permission {
                    let how = match &request.advice {
                        Some(advice) => advice.clone(),
                        None => {
                            format!("allow it with --allowed-tools '{}' or --yolo", request.rule)
                        }
                    };
                    eprintln!(
                        "rab: denied {} ({}); {}",
                        crate::term::safe(&request.tool),
                        crate::term::safe(&request.reason),
                        crate::term::safe(&how)
                    );
                }
                handle.submit(Op::Answer { id, approval: rab_core::Approval::Unavailable });
            }
            Event::RunStarted { .. } => is_running = true,
            Event::RunEnded { stop: s, .. } => {
                stop = Some(s);
                break;
            }
            Event::Info { text, .. } => outln!("{}", crate::term::for_stdout(text.trim_end())),
            Event::Warning(w) => eprintln!("rab: warning: {}", crate::term::safe(&w)),
            Event::Attached { files, .. } if opts.verbose => {
                eprintln!("rab: attached {}", crate::term::safe(&files.join(", ")));
            }
            Event::Show { view: rab_core::runtime::View::Settings(text), .. } => {
                outln!("{}", crate::term::for_stdout(text.trim_end()));
            }
            Event::Show { view: rab_core::runtime::View::Memory { files, open: None }, .. } => {
                let list = rab_core::memory::memory_list(&files);
                outln!("{}", crate::term::for_stdout(list.trim_end()));
            }
            Event::Show { .. } => {
                let name = line.split_whitespace().next().unwrap_or_default();
                let message = format!("{name} needs the interactive UI or the REPL");
                eprintln!("rab: {}", crate::term::safe(&message));
                failure = Some(message);
                code = crate::EXIT_USAGE;
            }
            Event::ShellEnded { output, is_error, is_shared, .. } => {
                if is_shared {
                    shared = true;
                    continue;
                }
                if is_error {
                    eprintln!("{}", crate::term::safe(output.trim_end()));
                    failure = Some(output.trim_end().to_owned());
                    code = EXIT_PROVIDER;
                } else {
                    outln!("{}", crate::term::for_stdout(output.trim_end()));
                }
            }
            Event::Done { submission: id, result } if id == submission => match result {
                Err(message) if is_running => {
                    stop = Some(StopCause::Error { message });
                    break;
                }
                Err(message) => {
                    eprintln!("rab: {}", crate::term::safe(&message));
                    failure = Some(message);
                    code = crate::EXIT_USAGE;
                    break;
                }
                // A `!cmd`: print mode has no next prompt, so its output goes now.
                Ok(()) if !is_running && std::mem::take(&mut shared) => {
                    submission =
                        handle.submit(Op::Prompt { text: String::new(), images: Vec::new() });
                }
                Ok(()) if !is_running => break,
                Ok(()) => {}
            },
            _ => {}
        }
    }
    let Some(session) = handle.finish().await else {
        return crate::fail(EXIT_PROVIDER, "the session was lost");
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let code = match stop {
        Some(stop) => finish(&session, &stop, &seen, &opts, duration_ms),
        None => {
            if opts.format != OutputFormat::Text {
                outln!("{}", result_line(&session, None, (code, failure), &seen, duration_ms));
            }
            code
        }
    };
    for message in session.session_end("exit").await {
        eprintln!("rab: {}", crate::term::safe(&message));
    }
    code
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
        // A reply cut off at the output limit is continued by the next one.
        if seen.cut_off {
            seen.final_text.push_str(&a.text());
        } else {
            seen.final_text = a.text();
        }
        seen.cut_off =
            a.stop_reason == rab_ai::StopReason::Length && a.tool_calls().next().is_none();
    }
    notice(event);
    match opts.format {
        OutputFormat::StreamJson => {
            let lines = match seen.claude.as_mut() {
                Some(claude) => claude.lines(event).iter().map(Value::to_string).collect(),
                None => serde_json::to_string(event).into_iter().collect::<Vec<_>>(),
            };
            for line in lines {
                seen.stdout_closed |= writeln!(out, "{line}").and_then(|()| out.flush()).is_err();
            }
        }
        OutputFormat::Json => {
            if let Some(claude) = seen.claude.as_mut() {
                claude.lines(event); // for the stop reason and the time spent waiting
            }
        }
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

/// What the user must hear about even without `--verbose`: retries, long waits for
/// the model, compaction.
fn notice(event: &AgentEvent) {
    match event {
        AgentEvent::Retry { attempt, delay, message, discarded } => {
            let message = crate::term::safe(message);
            let again =
                if *discarded { " from the start (the partial answer is discarded)" } else { "" };
            eprintln!(
                "rab: {message}; retrying{again} in {:.1}s (attempt {attempt})",
                delay.as_secs_f64()
            )
        }
        AgentEvent::Waiting { seconds, first } => {
            let what = if *first { "no response" } else { "no data" };
            eprintln!("rab: waiting for the model: {what} for {seconds} s");
        }
        AgentEvent::Fallback { to, message, .. } => {
            eprintln!(
                "rab: {}; continuing on {} (fallbackModels)",
                crate::term::safe(message),
                crate::term::safe(to)
            );
        }
        AgentEvent::MessageEnd { message: Message::User(u) }
            if matches!(u.content.first(), Some(rab_ai::Content::Text { text })
                if text.starts_with(rab_agent::CONTINUE_PREFIX)) =>
        {
            eprintln!("rab: the reply hit the output limit; asking the model to continue")
        }
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
        AgentEvent::Notice { message } => eprintln!("rab: {}", crate::term::safe(message)),
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
        AgentEvent::WebSearch { search } => eprintln!(
            "\n● web_search {} ({} results)",
            crate::term::safe(&search.queries.join("; ")),
            search.results.len()
        ),
        AgentEvent::ToolResult { result, duration_ms, .. } => {
            let text = result.text();
            let first = text.lines().next().unwrap_or_default();
            let mark = if result.is_error { "✗" } else { "✓" };
            let first = crate::term::safe(first);
            eprintln!("  {mark} {first} ({} lines, {duration_ms} ms)", text.lines().count());
        }
        AgentEvent::Retry { .. }
        | AgentEvent::Fallback { .. }
        | AgentEvent::Waiting { .. }
        | AgentEvent::AgentStart
        | AgentEvent::TurnStart { .. }
        | AgentEvent::TextDelta { .. }
        | AgentEvent::MessageEnd { .. }
        | AgentEvent::ToolUpdate { .. }
        | AgentEvent::Usage { .. }
        | AgentEvent::CompactionStart { .. }
        | AgentEvent::CompactionEnd { .. }
        | AgentEvent::CompactionFailed { .. }
        | AgentEvent::Error { .. }
        | AgentEvent::Notice { .. }
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
        StopCause::Loop { .. } => EXIT_LOOP,
        StopCause::Length { .. } => EXIT_LENGTH,
    }
}

fn finish(
    session: &AgentSession,
    stop: &StopCause,
    seen: &Seen,
    opts: &PrintOptions,
    duration_ms: u64,
) -> u8 {
    let denied = session.gate().map(|g| g.denials().1).unwrap_or_default();
    let code = match exit_code(stop) {
        EXIT_OK if denied > 0 => EXIT_DENIED,
        code => code,
    };
    let message = stop_message(stop, denied);
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
            let line = result_line(session, Some(stop), (code, message.clone()), seen, duration_ms);
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
    if let Some(message) = message {
        eprintln!("rab: {}", crate::term::safe(&message));
    }
    code
}

/// What stopped the run, in words, unless the model simply finished: for stderr and the
/// result object's `error`.
fn stop_message(stop: &StopCause, denied: usize) -> Option<String> {
    Some(match stop {
        StopCause::Done if denied > MAX_DENIALS => format!(
            "finished, but {denied} tool calls were refused (exit {EXIT_DENIED}; \
             --output-format json lists the first {MAX_DENIALS} in permissionDenials, \
             {} more are counted in permissionDenialCount)",
            denied - MAX_DENIALS
        ),
        StopCause::Done if denied > 0 => format!(
            "finished, but {denied} tool call{} refused (exit {EXIT_DENIED}; \
             --output-format json lists them in permissionDenials)",
            if denied == 1 { " was" } else { "s were" }
        ),
        StopCause::Done => return None,
        StopCause::MaxTurns { limit } => format!(
            "stopped after {limit} turns (--max-turns, maxTurns, else {} in print mode); \
             continue with `rab -c -p \"go on\"`",
            rab_core::setup::HEADLESS_MAX_TURNS
        ),
        StopCause::Budget { limit, spent } => format!(
            "stopped before the next request: it would take spending past the ${limit:.4} \
             budget (spent ${spent:.4}); raise --max-budget-usd to go on"
        ),
        StopCause::Error { message } => message.clone(),
        StopCause::Aborted => "interrupted".to_owned(),
        StopCause::Loop { message } => {
            format!("stopped: {message}; rephrase the task or continue with `rab -c -p \"...\"`")
        }
        StopCause::Length { max_tokens } => format!(
            "the reply was cut off at the output limit ({max_tokens} tokens) twice; ask for a \
             shorter answer, or continue with `rab -c -p \"go on\"`"
        ),
    })
}
