//! The plain REPL: line-oriented, for terminals that cannot do the UI (`TERM=dumb`,
//! stdout not a terminal) or with `--repl`. Same commands as the UI: `/help`, `!cmd`, …
//! Ctrl+C interrupts a run; Ctrl+D (end of input) quits. It only translates: each line
//! goes to the runtime as typed (`Op::Line`), and what comes back is printed, in order —
//! the next line is read when the last one's work has ended.

use std::io::Write;
use std::sync::Arc;

use rab_agent::{AgentEvent, StopCause};
use rab_core::runtime::{Event, Op, RuntimeHandle, View};
use rab_core::setup::Setup;
use rab_core::{AgentSession, Approval};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

use crate::EXIT_OK;
use crate::term::safe;

type Input = Lines<BufReader<Stdin>>;

/// Runs the REPL until end of input or `/quit`.
pub async fn run(setup: Setup, session: AgentSession, first: Option<String>) -> u8 {
    let model = &session.agent().config().model;
    outln!(
        "rab {} — {} ({}) — /help for commands, Ctrl+D to quit",
        env!("CARGO_PKG_VERSION"),
        model.id,
        model.provider
    );
    let mut setup = Arc::new(setup);
    let mut rt = rab_core::runtime::start_with(setup.clone(), session);
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut out = Printer { at_line_start: true, shell_streamed: false };
    let mut next = first;
    loop {
        let line = match next.take() {
            Some(l) => l,
            None => {
                out!("> ");
                let _ = std::io::stdout().flush();
                tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(l)) => l,
                        Ok(None) | Err(_) => {
                            outln!();
                            break;
                        }
                    },
                    // A scheduled prompt fires while the REPL waits for a line.
                    // A run starts by itself (a scheduled prompt): follow it to its end.
                    Some(event) = rt.events.recv() => {
                        if let Event::RunStarted { submission } = event {
                            let waited = wait(&mut rt, submission, true, &mut lines, &mut out, &mut setup);
                            if !waited.await {
                                break;
                            }
                        } else {
                            out.event(event, &mut setup);
                        }
                        continue;
                    }
                }
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let submission = rt.submit(Op::Line { text: line });
        if !wait(&mut rt, submission, false, &mut lines, &mut out, &mut setup).await {
            break;
        }
    }
    if let Some(session) = rt.finish().await {
        for message in session.session_end("exit").await {
            eprintln!("rab: {}", crate::term::safe(&message));
        }
    }
    EXIT_OK
}

/// Prints what `submission` leads to until its work has ended, answering questions and
/// pickers from stdin; false after `/quit`.
async fn wait(
    rt: &mut RuntimeHandle,
    submission: u64,
    is_running: bool,
    lines: &mut Input,
    out: &mut Printer,
    setup: &mut Arc<Setup>,
) -> bool {
    let interrupts = |rt: &RuntimeHandle| {
        let aborter = rt.aborter();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                aborter.abort();
            }
        })
    };
    let mut watcher = is_running.then(|| interrupts(rt));
    // Whether the submission's own work (its line, then its run) has ended.
    let (mut is_running, mut is_done) = (is_running, is_running);
    let mut is_quit = false;
    let mut follow = Vec::new();
    // Runs the submission did not start (a scheduled prompt meanwhile): followed too.
    let mut others: Vec<u64> = Vec::new();
    loop {
        let Some(event) = rt.events.recv().await else {
            eprintln!("rab: the session's runtime ended");
            return false;
        };
        match event {
            Event::ApprovalRequested { id, request } => {
                let approval = ask(&request, lines).await;
                rt.submit(Op::Answer { id, approval });
            }
            Event::RunStarted { submission: s } => {
                if s == submission {
                    is_running = true;
                } else {
                    others.push(s);
                }
                if watcher.is_none() {
                    watcher = Some(interrupts(rt));
                }
            }
            // A compaction or a handoff talks to the model: Ctrl+C stops it too.
            Event::OpStarted { submission: s, .. } if s == submission && watcher.is_none() => {
                watcher = Some(interrupts(rt));
            }
            Event::RunEnded { submission: s, stop } if s == submission || others.contains(&s) => {
                out.line_end();
                stopped(&stop);
                if s == submission && is_running {
                    is_running = false;
                    is_done = true;
                } else {
                    others.retain(|o| *o != s);
                }
            }
            Event::Done { submission: s, result } if s == submission || follow.contains(&s) => {
                if let Err(e) = result {
                    eprintln!("rab: {}", safe(&e));
                }
                follow.retain(|f| *f != s);
                if s == submission && !is_running {
                    is_done = true;
                }
            }
            Event::Quit { .. } => is_quit = true,
            Event::Show { view: View::Login { provider }, .. } => {
                out!("{provider} API key (not echoed): ");
                let _ = std::io::stdout().flush();
                let echo_off = set_echo(false);
                let key = lines.next_line().await.ok().flatten().unwrap_or_default();
                if echo_off {
                    set_echo(true);
                    outln!();
                }
                follow.push(rt.submit(Op::StoreKey { provider, key }));
            }
            other => out.event(other, setup),
        }
        if is_done && !is_running && follow.is_empty() && others.is_empty() {
            break;
        }
    }
    if let Some(w) = watcher {
        w.abort();
    }
    !is_quit
}

fn stopped(stop: &StopCause) {
    match stop {
        StopCause::Done => {}
        StopCause::MaxTurns { limit } => eprintln!("rab: stopped after {limit} turns"),
        StopCause::Budget { limit, spent } => {
            eprintln!(
                "rab: stopped: the next request would pass the ${limit:.4} budget (spent ${spent:.4})"
            )
        }
        StopCause::Error { message } => eprintln!("rab: {}", safe(message)),
        StopCause::Aborted => eprintln!("rab: interrupted"),
        StopCause::Loop { message } => eprintln!("rab: stopped: {}", safe(message)),
        StopCause::Length { max_tokens } => {
            eprintln!("rab: the reply was cut off at the output limit ({max_tokens} tokens) twice")
        }
    }
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

/// Shows a permission question and reads the answer line.
async fn ask(r: &rab_core::ApprovalRequest, lines: &mut Input) -> Approval {
    use rab_core::ApprovalKind;
    match &r.kind {
        ApprovalKind::Question { question, options } => {
            outln!("\n? {}", safe(question));
            for (i, o) in options.iter().enumerate() {
                outln!("  {}. {}", i + 1, safe(o));
            }
            out!("  answer (a number or your own words) > ");
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
            outln!("\n? Start with this plan?");
            plan.lines().for_each(|l| outln!("  {}", safe(l)));
            out!("  [y]es · [a]ccept edits too · [n]o [what to change] > ");
        }
        ApprovalKind::Permission => {
            outln!("\n? Allow {} ({})", safe(&r.tool), safe(&r.reason));
            match (&r.preview, r.arguments.get("command").and_then(serde_json::Value::as_str)) {
                (Some(p), _) => p.lines().take(40).for_each(|l| outln!("  {}", safe(l))),
                (None, Some(cmd)) => outln!("  $ {}", safe(cmd)),
                (None, None) => outln!("  {}", r.arguments),
            }
            if r.rule.is_empty() {
                // A protected path: asked about every time.
                out!("  [y]es once · [n]o [reason] > ");
            } else {
                out!("  [y]es once · [a]lways ({}) · [n]o [reason] > ", safe(&r.rule));
            }
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

/// Prints the runtime's events as lines.
struct Printer {
    at_line_start: bool,
    /// The shell line going on has streamed output.
    shell_streamed: bool,
}

impl Printer {
    fn line_end(&mut self) {
        if !self.at_line_start {
            outln!();
            self.at_line_start = true;
        }
    }

    fn event(&mut self, event: Event, setup: &mut Arc<Setup>) {
        match event {
            Event::Agent(e) => self.agent(&e),
            Event::Info { text, .. } => outln!("{}", safe(text.trim_end())),
            Event::Warning(w) => eprintln!("rab: warning: {}", safe(&w)),
            Event::Attached { files, .. } => eprintln!("(attached {})", safe(&files.join(", "))),
            Event::Show { view, .. } => show(view, setup),
            Event::ShellOutput { chunk, .. } => {
                out!("{}", safe(&chunk));
                let _ = std::io::stdout().flush();
                self.shell_streamed = true;
            }
            Event::ShellEnded { output, is_error, .. } => {
                // What streamed nothing (a refusal) shows its result.
                if !std::mem::take(&mut self.shell_streamed) {
                    outln!("{}", safe(output.trim_end()));
                }
                outln!("{}", if is_error { "(command failed)" } else { "" });
            }
            Event::SetupChanged(fresh) => *setup = fresh,
            Event::CronFired { job, prompt, .. } => {
                outln!("(scheduled prompt {job}: {})", safe(&prompt));
            }
            Event::ApprovalRequested { .. }
            | Event::State { .. }
            | Event::Messages { .. }
            | Event::Done { .. }
            | Event::RunStarted { .. }
            | Event::RunEnded { .. }
            | Event::SessionReplaced { .. }
            | Event::Quit { .. }
            | Event::StateChanged(_)
            | Event::QuestionClosed { .. }
            | Event::ShellStarted { .. }
            | Event::OpStarted { .. }
            | Event::Data { .. } => {}
            Event::ServiceStatus(s) => match &s.state {
                rab_core::ServiceState::Failed(why) | rab_core::ServiceState::Crashed(why) => {
                    let first = why.lines().next().unwrap_or_default();
                    let kind = s.kind.label();
                    eprintln!("rab: {kind} {} {}: {}", s.name, s.state.label(), safe(first));
                }
                _ => {}
            },
        }
    }

    fn agent(&mut self, event: &AgentEvent) {
        let at_line_start = &mut self.at_line_start;
        let mut out = std::io::stdout();
        match event {
            AgentEvent::TextDelta { delta } => {
                let _ = out.write_all(safe(delta).as_bytes());
                let _ = out.flush();
                *at_line_start = delta.ends_with('\n');
            }
            AgentEvent::WebSearch { search } => {
                if !*at_line_start {
                    outln!();
                }
                let query = search.queries.join("; ");
                outln!("● web_search {} ({} results)", safe(&query), search.results.len());
                *at_line_start = true;
            }
            AgentEvent::ToolCall { call } => {
                if !*at_line_start {
                    outln!();
                }
                let args: String = call.arguments.to_string().chars().take(160).collect();
                outln!("● {} {}", safe(&call.name), safe(&args));
                *at_line_start = true;
            }
            AgentEvent::ToolResult { result, .. } => {
                let text = result.text();
                let mark = if result.is_error { "✗" } else { "✓" };
                outln!(
                    "  {mark} {} ({} lines)",
                    safe(text.lines().next().unwrap_or_default()),
                    text.lines().count()
                );
            }
            AgentEvent::AgentEnd { .. } => {
                if !*at_line_start {
                    outln!();
                }
                *at_line_start = true;
            }
            AgentEvent::CompactionStart { tokens, .. } => {
                outln!("(compacting the conversation, ~{tokens} tokens…)");
            }
            AgentEvent::CompactionEnd { tokens_before, tokens_after, .. } => {
                outln!(
                    "(compacted: ~{tokens_before} → ~{tokens_after} tokens; the full history \
                     stays in the session: /tree, /export)"
                );
            }
            AgentEvent::CompactionFailed { message, .. } => {
                eprintln!("rab: compaction failed: {}", safe(message))
            }
            AgentEvent::Fallback { to, message, .. } => {
                if !*at_line_start {
                    outln!();
                    *at_line_start = true;
                }
                eprintln!(
                    "rab: {}; continuing on {} (the answer above, if any, is discarded)",
                    safe(message),
                    safe(to)
                );
            }
            AgentEvent::Retry { attempt, delay, message, discarded } => {
                if !*at_line_start {
                    outln!();
                    *at_line_start = true;
                }
                let again =
                    if *discarded { " from the start (the answer above is discarded)" } else { "" };
                eprintln!(
                    "rab: {}; retrying{again} in {:.1}s (attempt {attempt})",
                    safe(message),
                    delay.as_secs_f64()
                );
            }
            AgentEvent::Waiting { seconds, first } => {
                let what = if *first { "no response" } else { "no data" };
                eprintln!("rab: waiting for the model: {what} for {seconds} s");
            }
            AgentEvent::Notice { message } => {
                if !*at_line_start {
                    outln!();
                    *at_line_start = true;
                }
                eprintln!("rab: {}", safe(message));
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::MessageEnd { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::TurnEnd { .. } => {}
        }
    }
}

/// What a command asked a person for, as lines.
fn show(view: View, setup: &Setup) {
    match view {
        View::Clear => out!("\n\n"),
        View::Hotkeys => {
            outln!("The REPL reads whole lines: Ctrl+C interrupts a run, Ctrl+D quits.")
        }
        View::Models => {
            for m in setup.registry.models().iter().take(40) {
                outln!("  {}/{}", m.provider, m.id);
            }
            outln!("switch with /model NAME");
        }
        View::Tree(items) => outln!("{}", rab_core::commands::tree_lines(&items)),
        View::Settings(text) => outln!("{}", safe(text.trim_end())),
        View::Sessions(sessions) => {
            for (i, s) in sessions.iter().enumerate().take(20) {
                let name = s.name.as_deref().map(|n| format!("[{n}] ")).unwrap_or_default();
                outln!(
                    "  {:>2}. {}  {:>8}  {:>8}  {name}{}",
                    i + 1,
                    s.id,
                    crate::sessions::ago(s.modified),
                    rab_tools::truncate::format_size(s.size as usize),
                    s.first_message
                );
            }
            outln!("resume with /resume N");
        }
        View::Login { .. } => {}
        View::Memory { files, open: None } => {
            out!("{}", safe(&rab_core::memory::memory_list(&files)));
        }
        View::Memory { files, open: Some(i) } => {
            let Some(file) = files.get(i) else { return };
            let Some(command) = crate::interactive::external::editor_command(&setup.env) else {
                eprintln!(
                    "rab: no external editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)"
                );
                return;
            };
            // The REPL reads no line while the editor has the terminal.
            let run = |c: &[String], p: &std::path::Path| {
                std::process::Command::new(&c[0])
                    .args(&c[1..])
                    .arg(p)
                    .current_dir(&setup.cwd)
                    .status()
            };
            match crate::interactive::external::edit_instructions(&command, file, run) {
                Ok(text) => outln!("{}", safe(&text)),
                Err(e) => eprintln!("rab: {}", safe(&e)),
            }
        }
    }
}
