//! Print mode: stream one reply to stdout, errors to stderr, exit code by outcome.

use std::io::Write;

use futures_util::StreamExt;
use rab_ai::{Client, Context, Message, Provider, StreamEvent, StreamOptions};
use tokio_util::sync::CancellationToken;

use crate::setup::Target;
use crate::{EXIT_INTERRUPTED, EXIT_OK, EXIT_PROVIDER};

/// Until the agent issue lands its prompt builder, print mode sends this.
const SYSTEM_PROMPT: &str = "You are rab, a coding assistant running in a terminal. \
Answer concisely and precisely; use Markdown only where it helps.";

/// Streams the answer to `prompt`; returns the exit code.
pub async fn run(target: Target, prompt: String, verbose: bool) -> u8 {
    let context = Context {
        system_prompt: SYSTEM_PROMPT.to_owned(),
        messages: vec![Message::user(prompt)],
        tools: Vec::new(),
    };
    let options = StreamOptions {
        api_key: target.api_key.clone(),
        thinking: target.thinking,
        auth_hint: Some(target.auth_hint.clone()),
        ..Default::default()
    };
    let cancel = CancellationToken::new();
    let mut events = Client::new().stream(&target.model, &context, &options, cancel.clone());
    let mut out = std::io::stdout();
    let mut ends_with_newline = true;
    let mut interrupted = false;
    let mut thinking_shown = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let event = tokio::select! {
            e = events.next() => e,
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                cancel.cancel();
                continue;
            }
        };
        let Some(event) = event else { return EXIT_PROVIDER };
        match event {
            StreamEvent::TextDelta { delta, .. } => {
                if std::mem::take(&mut thinking_shown) {
                    eprintln!();
                }
                if out.write_all(delta.as_bytes()).and_then(|()| out.flush()).is_err() {
                    // stdout closed (e.g. piped into `head`): nobody is reading.
                    cancel.cancel();
                    return EXIT_OK;
                }
                ends_with_newline = delta.ends_with('\n');
            }
            StreamEvent::ThinkingDelta { delta, .. } if verbose => {
                thinking_shown = true;
                eprint!("\x1b[2m{delta}\x1b[0m");
            }
            StreamEvent::Retry { attempt, delay, error } if verbose => {
                eprintln!(
                    "rab: {error}; retrying in {:.1}s (attempt {attempt})",
                    delay.as_secs_f64()
                );
            }
            StreamEvent::ThinkingDelta { .. }
            | StreamEvent::Retry { .. }
            | StreamEvent::ToolCallStart { .. }
            | StreamEvent::ToolCallDelta { .. }
            | StreamEvent::ToolCallEnd { .. }
            | StreamEvent::Usage(_) => {}
            StreamEvent::Done(_) => {
                if !ends_with_newline {
                    let _ = writeln!(out);
                }
                return EXIT_OK;
            }
            StreamEvent::Error { error, .. } => {
                if !ends_with_newline {
                    let _ = writeln!(out);
                }
                if matches!(error, rab_ai::Error::Aborted) {
                    eprintln!("rab: interrupted");
                    return EXIT_INTERRUPTED;
                }
                eprintln!("rab: {error}");
                return EXIT_PROVIDER;
            }
        }
    }
}
