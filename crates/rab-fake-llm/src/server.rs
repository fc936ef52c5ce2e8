//! The HTTP side: accept loop on its own thread and runtime, request recording,
//! validation, fault injection and paced SSE streaming.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame as HttpFrame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::inspect::{RecordedRequest, parse, validate};
use crate::render::{Frame, error_body, error_event, malformed_event, render_reply};
use crate::rules::check;
use crate::script::Turn;
use crate::{State, TimingLog, Wire};

type ResBody = BoxBody<Bytes, std::io::Error>;

/// Runs the accept loop until `stop` fires.
pub(crate) fn run(
    listener: std::net::TcpListener,
    state: Arc<Mutex<State>>,
    stop: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return;
    };
    rt.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
        let mut stop = stop;
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = &mut stop => return,
            };
            let Ok((stream, _)) = accepted else { continue };
            // Without it, Nagle's algorithm holds back small SSE writes until the
            // client's delayed ACK (40 ms per request on Linux).
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let service = hyper::service::service_fn(move |req| handle(req, state.clone()));
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
}

fn full(status: u16, content_type: &str, body: String) -> Response<ResBody> {
    let mut res =
        Response::new(Full::new(Bytes::from(body)).map_err(|never| match never {}).boxed());
    *res.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = content_type.parse() {
        res.headers_mut().insert("content-type", v);
    }
    res
}

/// What to answer, decided under the state lock.
enum Answer {
    Error { status: u16, body: String, retry_after: Option<u64>, headers: Vec<(String, String)> },
    Page { status: u16, content_type: String, body: String },
    Stream { wire: Wire, turn: Box<Turn>, frames: Vec<Frame> },
}

fn key_of(wire: Wire, headers: &[(String, String)], path: &str) -> Option<String> {
    let h = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    match wire {
        Wire::Anthropic => h("x-api-key"),
        Wire::OpenaiResponses | Wire::OpenaiChat => {
            h("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_owned))
        }
        Wire::Gemini => h("x-goog-api-key").or_else(|| {
            path.split(['?', '&']).find_map(|kv| kv.strip_prefix("key=").map(str::to_owned))
        }),
    }
}

/// What a local server answers about its models: `GET …/models` (OpenAI style, with
/// vLLM's `max_model_len`), Ollama's `GET /api/tags` and `POST /api/show`.
fn model_listing(state: &State, req: &RecordedRequest) -> Option<Answer> {
    let path = req.path.split('?').next().unwrap_or_default();
    let json = |status: u16, body: Value| Answer::Page {
        status,
        content_type: "application/json".into(),
        body: body.to_string(),
    };
    let models = &state.script.models;
    if req.method == "GET" && path.ends_with("/models") {
        let data: Vec<Value> = models
            .iter()
            .map(|m| {
                let mut v = serde_json::json!({"id": m.id, "object": "model", "owned_by": "fake"});
                if let Some(n) = m.context_window {
                    v["max_model_len"] = n.into();
                }
                v
            })
            .collect();
        return Some(json(200, serde_json::json!({"object": "list", "data": data})));
    }
    if req.method == "GET" && path == "/api/tags" {
        let list: Vec<Value> = models
            .iter()
            .map(|m| serde_json::json!({"name": m.id, "model": m.id, "size": 1_000_000}))
            .collect();
        return Some(json(200, serde_json::json!({"models": list})));
    }
    if req.method == "POST" && path == "/api/show" {
        let asked = req.body.get("model").or_else(|| req.body.get("name")).and_then(Value::as_str);
        return Some(match models.iter().find(|m| Some(m.id.as_str()) == asked) {
            Some(m) => {
                let mut info = serde_json::json!({"general.architecture": "fake"});
                if let Some(n) = m.context_window {
                    info["fake.context_length"] = n.into();
                }
                json(200, serde_json::json!({"model_info": info}))
            }
            None => json(404, serde_json::json!({"error": format!("model {asked:?} not found")})),
        });
    }
    None
}

/// The model a request asks for (in the body, or Gemini's path).
fn requested_model(wire: Wire, req: &RecordedRequest) -> Option<String> {
    match wire {
        Wire::Gemini => {
            let path = req.path.split([':', '?']).next().unwrap_or_default();
            path.rsplit('/').next().map(str::to_owned)
        }
        _ => req.body.get("model").and_then(Value::as_str).map(str::to_owned),
    }
}

fn decide(state: &mut State, wire: Option<Wire>, req: &mut RecordedRequest) -> Answer {
    let base = req.header("host").map(|h| format!("http://{h}")).unwrap_or_default();
    if let Some((status, content_type, body, headers)) =
        crate::oauth::answer(&mut state.oauth, req, &base)
    {
        if headers.is_empty() {
            return Answer::Page { status, content_type: content_type.to_owned(), body };
        }
        return Answer::Error { status, body, retry_after: None, headers };
    }
    if let Some(answer) = model_listing(state, req) {
        return answer;
    }
    let Some(wire) = wire else {
        let body = format!("{{\"error\":\"fake-llm: no route for {} {}\"}}", req.method, req.path);
        return Answer::Error { status: 404, body, retry_after: None, headers: Vec::new() };
    };
    let reject = |status: u16, message: &str| Answer::Error {
        status,
        body: error_body(wire, status, Some(message)),
        retry_after: None,
        headers: Vec::new(),
    };
    if req.method != "POST" {
        return reject(405, "only POST is supported");
    }
    if req.body.is_null() {
        return reject(400, "the request body is not valid JSON");
    }
    let signed_in = state.oauth.enabled && matches!(wire, Wire::OpenaiResponses | Wire::OpenaiChat);
    if signed_in && key_of(wire, &req.headers, &req.path) != state.oauth.access {
        return Answer::Error {
            status: 401,
            body: error_body(wire, 401, Some("Your authentication token has expired.")),
            retry_after: None,
            headers: Vec::new(),
        };
    }
    if signed_in {
        state.oauth.served += 1;
        if state.oauth.expire_after.is_some_and(|n| state.oauth.served >= n) {
            state.oauth.access = None;
            state.oauth.expire_after = None;
        }
    }
    if let Some(expected) = &state.script.api_key
        && key_of(wire, &req.headers, &req.path).as_deref() != Some(expected.as_str())
    {
        return Answer::Error {
            status: 401,
            body: error_body(wire, 401, None),
            retry_after: None,
            headers: Vec::new(),
        };
    }
    let streams =
        wire == Wire::Gemini || req.body.get("stream").and_then(Value::as_bool) == Some(true);
    if !streams {
        return reject(400, "fake-llm answers streaming requests only (set stream: true)");
    }
    // A lean server answers without reading the history (timing the client alone).
    let transcript = match state.lean {
        true => Default::default(),
        false => match parse(wire, &req.body) {
            Ok(t) => t,
            Err(e) => return reject(400, &e),
        },
    };
    if !state.lean
        && let Err(e) = validate(wire, &transcript)
    {
        return reject(400, &e);
    }
    if let Some(model) = requested_model(wire, req)
        && state.script.overloaded.contains(&model)
    {
        let status = if wire == Wire::Anthropic { 529 } else { 503 };
        let message = format!("{model} is overloaded");
        return Answer::Error {
            status,
            body: error_body(wire, status, Some(&message)),
            retry_after: None,
            headers: Vec::new(),
        };
    }
    if let Some(limit) = state.script.context_limit {
        let tokens = req.raw.len() as u64 / 4;
        if tokens > limit {
            let message = match wire {
                Wire::Anthropic => format!("prompt is too long: {tokens} tokens > {limit} maximum"),
                Wire::OpenaiChat | Wire::OpenaiResponses => format!(
                    "This model's maximum context length is {limit} tokens. However, your \
                     messages resulted in {tokens} tokens."
                ),
                Wire::Gemini => format!(
                    "The input token count ({tokens}) exceeds the maximum number of tokens \
                     allowed ({limit})."
                ),
            };
            return reject(400, &message);
        }
    }
    let checked = if state.lean { Ok(Default::default()) } else { check(wire, req) };
    let reply = match checked {
        Ok(reply) => reply,
        Err(e) => return reject(400, &e),
    };
    req.transformations = reply.transformations.clone().unwrap_or_default();
    if let Some(summary) = &state.script.summary
        && transcript.tools.is_empty()
    {
        let turn = Turn::text(summary.clone());
        let frames = render_reply(wire, &turn, state.served + 1, &reply);
        return Answer::Stream { wire, turn: Box::new(turn), frames };
    }
    if state.script.repeat && state.next_turn >= state.script.turns.len() {
        state.next_turn = 0;
    }
    let n = state.next_turn;
    let Some(mut turn) = state.script.turns.get(n).cloned() else {
        let message = format!(
            "fake-llm: the script has no turn left for request #{} ({} turns scripted)",
            state.served + 1,
            state.script.turns.len()
        );
        return reject(400, &message);
    };
    if let Some(fault) = turn.faults.get(state.faults_served) {
        state.faults_served += 1;
        if let Some(body) = &fault.body {
            return Answer::Page {
                status: fault.status,
                content_type: fault.content_type.clone().unwrap_or_else(|| "text/html".into()),
                body: body.clone(),
            };
        }
        return Answer::Error {
            status: fault.status,
            body: error_body(wire, fault.status, fault.message.as_deref()),
            retry_after: fault.retry_after,
            headers: fault.headers.clone(),
        };
    }
    if turn.search.is_some() && reply.search.is_none() {
        return reject(
            400,
            "fake-llm: the scripted turn searches the web, but the request offers no web search tool",
        );
    }
    state.next_turn += 1;
    state.faults_served = 0;
    if state.script.measure_input && turn.usage.is_none() {
        let mut usage = turn.effective_usage();
        usage.input = req.raw.len() as u64 / 4;
        turn.usage = Some(usage);
    }
    // A provider bills no more output than the request allowed.
    if let Some(cap) = output_cap(&req.body)
        && turn.effective_usage().output > cap
    {
        let mut usage = turn.effective_usage();
        usage.output = cap;
        usage.reasoning = usage.reasoning.min(cap);
        turn.usage = Some(usage);
    }
    let frames = render_reply(wire, &turn, n + 1, &reply);
    Answer::Stream { wire, turn: Box::new(turn), frames }
}

/// The output limit a request sets, in any wire's spelling.
fn output_cap(body: &Value) -> Option<u64> {
    ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(k).and_then(Value::as_u64))
        .or_else(|| body.pointer("/generationConfig/maxOutputTokens").and_then(Value::as_u64))
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<ResBody>, std::io::Error> {
    let arrived = std::time::Instant::now();
    let method = req.method().to_string();
    let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let raw = match req.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(_) => Vec::new(),
    };
    let lean = state.lock().unwrap_or_else(|p| p.into_inner()).lean;
    let body: Value = match lean {
        // Only what answering needs: the history is not read.
        true => serde_json::json!({"stream": true}),
        false => serde_json::from_slice(&raw).unwrap_or(Value::Null),
    };
    let wire = Wire::from_path(&path);
    let mut record = RecordedRequest {
        wire,
        method,
        path,
        headers,
        body,
        raw,
        status: 200,
        transformations: Vec::new(),
    };
    let (answer, timing, release) = {
        let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
        let answer = decide(&mut st, wire, &mut record);
        if let Answer::Error { status, .. } | Answer::Page { status, .. } = &answer {
            record.status = *status;
        }
        if let Some(log) = &st.request_log {
            use std::io::Write;
            // The tools offered: how many, and the bytes of the body's `tools` field.
            let tool_bytes = record.body.get("tools").map_or(0, |t| t.to_string().len());
            let line = serde_json::json!({
                "n": st.served + 1, "status": record.status, "bytes": record.raw.len(),
                "tools": record.transcript().tools.len(), "toolBytes": tool_bytes,
            });
            let mut file = log.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(file, "{line}");
        }
        let index = st.served;
        st.served += 1;
        if !st.forgets {
            st.requests.push(record);
        }
        let timing = st.timings.clone().map(|log| (log, index));
        let release = st.release.clone();
        if let Some((log, index)) = &timing {
            log.event("req", *index, arrived);
        }
        (answer, timing, release)
    };
    Ok(match answer {
        Answer::Error { status: 0, .. } => {
            return Err(std::io::Error::other("fake-llm: the connection is closed on purpose"));
        }
        Answer::Stream { turn, .. } if turn.hang => {
            // Never answered: the client gives up (and this future is dropped with it).
            std::future::pending::<()>().await;
            return Err(std::io::Error::other("unreachable"));
        }
        Answer::Error { status, body, retry_after, headers } => {
            let mut res = full(status, "application/json", body);
            if let Some(secs) = retry_after
                && let Ok(v) = secs.to_string().parse()
            {
                res.headers_mut().insert("retry-after", v);
            }
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                    hyper::header::HeaderValue::from_str(&value),
                ) {
                    res.headers_mut().insert(name, value);
                }
            }
            res
        }
        Answer::Page { status, content_type, body } => full(status, &content_type, body),
        Answer::Stream { wire, turn, frames } => stream(wire, *turn, frames, timing, release),
    })
}

/// A response body fed by a channel; an `Err` item aborts the connection mid-body.
struct ChannelBody(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<HttpFrame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|item| item.map(|r| r.map(HttpFrame::data)))
    }
}

fn stream(
    wire: Wire,
    turn: Turn,
    frames: Vec<Frame>,
    timing: Option<(Arc<TimingLog>, usize)>,
    release: Arc<tokio::sync::Notify>,
) -> Response<ResBody> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        if turn.held {
            release.notified().await;
        }
        let delay = turn.chunk_delay_ms.map(Duration::from_millis);
        for (sent, f) in frames.into_iter().enumerate() {
            if turn.disconnect_after == Some(sent) {
                // Let what was sent reach the client first, as with a real cut connection.
                tokio::time::sleep(Duration::from_millis(30)).await;
                let _ = tx.send(Err(std::io::Error::other("fake-llm: scripted disconnect"))).await;
                return;
            }
            if turn.malformed_after == Some(sent) {
                let _ = tx.send(Ok(Bytes::from(malformed_event(wire).bytes))).await;
                return;
            }
            if turn.stall_after == Some(sent) {
                // Nothing more, the connection held until the client gives up.
                tx.closed().await;
                return;
            }
            if turn.error_after == Some(sent) {
                let _ = tx.send(Ok(Bytes::from(error_event(wire).bytes))).await;
                return;
            }
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            let size = f.bytes.len().div_ceil(f.pieces.max(1)).max(1);
            for piece in f.bytes.chunks(size) {
                if tx.send(Ok(Bytes::copy_from_slice(piece))).await.is_err() {
                    return;
                }
                if f.pieces > 1 {
                    // Give the client a chance to read each piece separately.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
        }
        if let Some((log, index)) = timing {
            // The last bytes are handed to the connection (a few microseconds from the
            // socket); dropping the sender ends the body.
            drop(tx);
            log.event("end", index, std::time::Instant::now());
        }
    });
    let mut res = Response::new(ChannelBody(rx).boxed());
    let headers = res.headers_mut();
    headers.insert("content-type", hyper::header::HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", hyper::header::HeaderValue::from_static("no-cache"));
    res
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use crate::{FakeLlm, Script, Turn};

    #[test]
    fn the_timing_log_has_each_request_and_the_end_of_its_answer() {
        let script = Script { turns: vec![Turn::text("hello there")], ..Script::default() };
        let server = FakeLlm::try_start(script, "127.0.0.1:0").unwrap();
        let dir = std::env::temp_dir().join(format!("fake-llm-timings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("timings.log");
        server.log_timings(std::fs::File::create(&log).unwrap());
        let body = r#"{"model":"claude-x","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
        let answer = post(&server, body);
        assert!(answer.contains("message_stop"), "{answer}");
        let text = std::fs::read_to_string(&log).unwrap();
        let events: Vec<(String, u64, u128)> = text
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f[0].to_owned(), f[1].parse().unwrap(), f[2].parse().unwrap())
            })
            .collect();
        assert_eq!(events.len(), 2, "{text}");
        assert_eq!((events[0].0.as_str(), events[0].1), ("req", 0));
        assert_eq!((events[1].0.as_str(), events[1].1), ("end", 0));
        assert!(events[1].2 >= events[0].2, "{text}");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Posts `body` to `server` as an Anthropic request; the raw HTTP answer.
    fn post(server: &FakeLlm, body: &str) -> String {
        let addr = server.url().trim_start_matches("http://").to_owned();
        let mut conn = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            conn,
            "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             x-api-key: k\r\nanthropic-version: 2023-06-01\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        answer
    }

    /// A lean server answers from its script whatever the history (the checking one
    /// refuses a tool result that answers no call), and keeps nothing.
    #[test]
    fn a_lean_server_answers_without_reading_the_request() {
        let body = r#"{"model":"claude-x","max_tokens":64,"stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"nowhere","content":"x"}]}]}"#;
        let script = || Script { turns: vec![Turn::text("hello there")], ..Script::default() };
        let checking = FakeLlm::try_start(script(), "127.0.0.1:0").unwrap();
        let refused = post(&checking, body);
        assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
        let lean = FakeLlm::try_start(script(), "127.0.0.1:0").unwrap();
        lean.answer_unread();
        let answer = post(&lean, body);
        assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("message_stop"), "{answer}");
        assert!(lean.requests().is_empty());
    }
}
