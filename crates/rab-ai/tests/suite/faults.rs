//! Failures, per wire format: retry on 429 honouring retry-after, give up after
//! repeated 5xx, a dropped connection, a malformed line, an error event, auth errors.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rab_ai::{Error, StopReason, StreamEvent};
use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{APIS, context, model, options, run};

#[tokio::test]
async fn retries_a_429_after_its_retry_after() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.script([Turn::text("after the wait").after_fault(429, Some(1))]);
        let start = Instant::now();
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "after the wait", "{api}");
        let retries: Vec<_> = out
            .events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retry { attempt, delay, .. } => Some((*attempt, *delay)),
                _ => None,
            })
            .collect();
        assert_eq!(retries, [(2, Duration::from_secs(1))], "{api}");
        assert!(start.elapsed() >= Duration::from_secs(1), "{api}: waited for retry-after");
        let statuses: Vec<u16> = llm.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, [429, 200], "{api}");
    }
}

#[tokio::test]
async fn gives_up_after_three_server_errors_with_a_clear_error() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.script([Turn::text("unreachable")
            .after_fault(500, None)
            .after_fault(500, None)
            .after_fault(500, None)]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        let err = out.error();
        assert!(matches!(err, Error::Http { status: 500, .. }), "{api}: {err:?}");
        let text = err.to_string();
        assert!(
            text.contains("HTTP 500 for test-model") && text.contains("try again later"),
            "{text}"
        );
        assert_eq!(llm.requests().len(), 3, "{api}: 1 attempt + 2 retries");
        assert_eq!(out.count(|e| matches!(e, StreamEvent::Retry { .. })), 2);
    }
}

#[tokio::test]
async fn a_disconnect_mid_stream_is_retried_and_the_partial_answer_discarded() {
    for api in APIS {
        let llm = FakeLlm::start();
        // Enough events for some text to have streamed before the cut.
        let cut = Turn::text("a fairly long answer that will be cut off").disconnect_after(6);
        llm.script([cut, Turn::text("the whole answer")]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "the whole answer", "{api}");
        let retries: Vec<bool> = out
            .events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retry { discarded, .. } => Some(*discarded),
                _ => None,
            })
            .collect();
        assert_eq!(retries, [true], "{api}: one retry, the partial text discarded");
        assert_eq!(llm.requests().len(), 2, "{api}");
    }
}

#[tokio::test]
async fn a_stream_that_keeps_breaking_ends_with_its_error_and_partial_text() {
    for api in APIS {
        let llm = FakeLlm::start();
        let cut = || Turn::text("a fairly long answer that will be cut off").disconnect_after(6);
        llm.script([cut(), cut(), cut()]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        let (err, partial) = match out.events.last() {
            Some(StreamEvent::Error { error, partial }) => (error, partial),
            other => panic!("{api}: {other:?}"),
        };
        assert!(matches!(err, Error::Stream { .. }), "{api}: {err:?}");
        assert_eq!(partial.stop_reason, StopReason::Error);
        assert!(!partial.text().is_empty(), "{api}: partial text kept");
        assert_eq!(llm.requests().len(), 3, "{api}: 1 attempt + 2 retries, then it stops");
    }
}

#[tokio::test]
async fn a_disconnect_before_any_content_is_retried() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.script([Turn::text("x").disconnect_after(0), Turn::text("second try")]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "second try", "{api}");
    }
}

#[tokio::test]
async fn a_malformed_sse_line_is_retried_then_a_clear_error_naming_the_provider() {
    for api in APIS {
        let llm = FakeLlm::start();
        let bad = || {
            Turn::text("hello world, this is long enough to need many chunks of eight characters")
                .malformed_after(5)
        };
        llm.script([bad(), Turn::text("clean")]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "clean", "{api}: recovered on the retry");
        let llm = FakeLlm::start();
        llm.script([bad(), bad(), bad()]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        let err = out.error();
        assert!(matches!(err, Error::Protocol { .. }), "{api}: {err:?}");
        let text = err.to_string();
        let provider = &model(api, &llm).provider;
        assert!(text.starts_with(&format!("{provider}: malformed response stream")), "{text}");
        assert!(text.contains("invalid JSON"), "{text}");
        assert_eq!(llm.requests().len(), 3, "{api}");
    }
}

#[tokio::test]
async fn an_overload_event_in_the_stream_is_retried_then_reported() {
    for api in APIS {
        let long = "hello world, this is long enough to need many chunks of eight characters";
        let llm = FakeLlm::start();
        llm.script([Turn::text(long).error_after(5), Turn::text("after the overload")]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "after the overload", "{api}");
        let llm = FakeLlm::start();
        llm.script([0, 1, 2].map(|_| Turn::text(long).error_after(5)));
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert!(matches!(out.error(), Error::Api { .. }), "{api}: {:?}", out.error());
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_says_how_to_fix_it() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.require_api_key(Some("right-key"));
        llm.script([Turn::text("never")]);
        let mut opts = options();
        opts.api_key = Some("wrong-key".into());
        opts.auth_hint = Some("set TEST_API_KEY or run rab with --api-key".into());
        let out = run(&model(api, &llm), &context("hi"), &opts).await;
        let text = out.error().to_string();
        assert!(text.contains("HTTP 401") && text.contains("set TEST_API_KEY"), "{api}: {text}");
        assert_eq!(llm.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_refused_connection_names_the_url() {
    let llm = FakeLlm::start();
    let mut m = model(rab_ai::Api::AnthropicMessages, &llm);
    m.base_url = "http://127.0.0.1:9".into();
    let mut opts = options();
    opts.retry = rab_ai::RetryPolicy::none();
    let out = run(&m, &context("hi"), &opts).await;
    let text = out.error().to_string();
    assert!(text.contains("cannot reach http://127.0.0.1:9/v1/messages"), "{text}");
    assert!(text.contains("local server running"), "{text}");
}

#[tokio::test]
async fn cancelling_ends_the_stream_as_aborted() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("slow slow slow slow slow slow").slow(200)]);
    let m = model(rab_ai::Api::AnthropicMessages, &llm);
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut stream = rab_ai::Provider::stream(
        &rab_ai::Client::new(),
        &m,
        &context("hi"),
        &options(),
        cancel.clone(),
    );
    use futures_util::StreamExt;
    cancel.cancel();
    let mut last = None;
    while let Some(e) = stream.next().await {
        last = Some(e);
    }
    match last {
        Some(StreamEvent::Error { error: Error::Aborted, partial }) => {
            assert_eq!(partial.stop_reason, StopReason::Aborted)
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn issue_13_a_key_with_a_trailing_newline_works_and_a_bad_character_is_named() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.require_api_key(Some("k"));
        llm.script([Turn::text("ok")]);
        let mut opts = options();
        opts.api_key = Some("k\n".into());
        assert_eq!(run(&model(api, &llm), &context("hi"), &opts).await.message().text(), "ok");
        opts.api_key = Some("k\u{201d}".into());
        let err = run(&model(api, &llm), &context("hi"), &opts).await.error().to_string();
        assert!(
            err.contains("the API key has a character an HTTP header cannot carry ('\u{201d}')"),
            "{api}: {err}"
        );
        assert!(!err.contains("builder error"), "{err}");
        assert_eq!(llm.requests().len(), 1, "{api}: nothing was sent for the bad key");
    }
}

#[tokio::test]
async fn issue_13_an_html_page_instead_of_a_stream_says_so() {
    let page = "<!doctype html><html><head><title>Sign in</title></head><body>Sign in to \
                continue</body></html>";
    for api in APIS {
        let llm = FakeLlm::start();
        llm.script([Turn::text("never").after_page(200, "text/html; charset=utf-8", page)]);
        let err = run(&model(api, &llm), &context("hi"), &options()).await.error().to_string();
        assert!(
            err.contains("expected an event stream, got text/html — wrong base URL?")
                && err.contains("(HTML page) Sign in"),
            "{api}: {err}"
        );
        let llm = FakeLlm::start();
        let bad_gateway = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad \
                           Gateway</h1><hr>nginx</body></html>";
        llm.script([Turn::text("never")
            .after_page(502, "text/html", bad_gateway)
            .after_page(502, "text/html", bad_gateway)
            .after_page(502, "text/html", bad_gateway)]);
        let err = run(&model(api, &llm), &context("hi"), &options()).await.error().to_string();
        assert!(err.contains("HTTP 502 for test-model: (HTML page) 502 Bad Gateway"), "{err}");
        assert!(!err.contains("<h1>"), "{err}");
    }
}

/// Silence is bounded: a server that never answers, and one that stalls after some
/// events, each end the attempt with a message that says how long nothing came, and
/// the waits are reported while they last; the retry then succeeds.
///
/// The limits are seconds long, so that a machine busy with other work cannot make a
/// healthy stream look silent, and the eight cases run at once to keep the test short.
#[tokio::test]
async fn a_silent_server_is_given_up_on_with_a_clear_message_and_retried() {
    let case = |api: rab_ai::Api, what: &'static str, turn: Turn| async move {
        let llm = FakeLlm::start();
        llm.script([turn, Turn::text("after the silence")]);
        let mut opts = options();
        opts.timeouts = rab_ai::Timeouts {
            first_byte: Duration::from_secs(3),
            idle: Duration::from_secs(3),
            notice: Duration::from_millis(500),
            ..rab_ai::Timeouts::default()
        };
        let out = run(&model(api, &llm), &context("hi"), &opts).await;
        assert_eq!(out.message().text(), "after the silence", "{api}: {what}");
        let waits = out.count(|e| matches!(e, StreamEvent::Waiting { .. }));
        assert!(waits >= 2, "{api}: {what}: the wait was reported ({waits})");
        let message = out
            .events
            .iter()
            .find_map(|e| match e {
                StreamEvent::Retry { error, .. } => Some(error.to_string()),
                _ => None,
            })
            .unwrap();
        assert!(message.contains(&format!("{what} from 127.0.0.1")), "{api}: {message}");
        assert!(message.contains("for 3 s") && message.contains("timeouts."), "{message}");
    };
    let mut cases = Vec::new();
    for api in APIS {
        cases.push(case(api, "no response", Turn::text("never").hang()));
        let stalls = Turn::text("a stream that will stall in the middle").stall_after(4);
        cases.push(case(api, "no data", stalls));
    }
    futures_util::future::join_all(cases).await;
}

#[tokio::test]
async fn a_connection_closed_before_any_byte_is_retried() {
    for api in APIS {
        let llm = FakeLlm::start();
        llm.script([Turn::text("on the second try").after_drop()]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "on the second try", "{api}");
    }
}

#[tokio::test]
async fn retries_stop_once_their_time_budget_is_spent() {
    for api in APIS {
        let llm = FakeLlm::start();
        // The first retry waits 1 s and the second would wait 30 s, against a budget of
        // 20 s: whatever a busy machine adds to each attempt, only the second is past it.
        llm.script([Turn::text("late").after_fault(503, Some(1)).after_fault(503, Some(30))]);
        let mut opts = options();
        opts.retry.budget = Duration::from_secs(20);
        let out = run(&model(api, &llm), &context("hi"), &opts).await;
        assert!(matches!(out.error(), Error::Http { status: 503, .. }), "{api}");
        assert_eq!(llm.requests().len(), 2, "{api}: the second retry would end past the budget");
    }
}

/// What was found: `x-should-retry` was ignored, a `retry-after` over 60 s (or given as
/// an HTTP-date) made rab give up where the providers' SDKs back off, and Gemini's
/// `RetryInfo` delay in the error body was not read.
#[tokio::test]
async fn issue_35_the_server_decides_retries_and_long_or_dated_waits_back_off() {
    use rab_fake_llm::HttpFault;
    let fault = |status: u16, retry_after: Option<u64>, headers: &[(&str, &str)]| HttpFault {
        status,
        retry_after,
        headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..HttpFault::default()
    };
    let retries = |out: &super::harness::Outcome| -> Vec<Duration> {
        out.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retry { delay, .. } => Some(*delay),
                _ => None,
            })
            .collect()
    };
    for api in APIS {
        // A 400 the server says to retry is retried; a 500 it says not to, is not.
        let llm = FakeLlm::start();
        let mut turn = Turn::text("retried");
        turn.faults.push(fault(400, None, &[("x-should-retry", "true")]));
        llm.script([turn]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "retried", "{api}");
        let llm = FakeLlm::start();
        let mut turn = Turn::text("never");
        turn.faults.push(fault(500, None, &[("x-should-retry", "false")]));
        llm.script([turn]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert!(matches!(out.error(), Error::Http { status: 500, .. }), "{api}");
        assert_eq!(llm.requests().len(), 1, "{api}: not retried");

        // A retry-after of an hour is not waited for: the backoff is used instead.
        let llm = FakeLlm::start();
        let mut turn = Turn::text("after the backoff");
        turn.faults.push(fault(429, Some(3600), &[]));
        llm.script([turn]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "after the backoff", "{api}");
        assert!(retries(&out)[0] < Duration::from_secs(1), "{api}: {:?}", retries(&out));

        // An HTTP-date in the past: retried at once.
        let llm = FakeLlm::start();
        let mut turn = Turn::text("after the date");
        turn.faults.push(fault(503, None, &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]));
        llm.script([turn]);
        let out = run(&model(api, &llm), &context("hi"), &options()).await;
        assert_eq!(out.message().text(), "after the date", "{api}");
        assert_eq!(retries(&out), [Duration::ZERO], "{api}");
    }
}
