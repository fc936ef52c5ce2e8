//! The HTTP side: an accept loop on its own thread and runtime; each request's
//! parameters read from the query, a JSON, form or multipart body; faults applied; the
//! method answered as the Bot API would.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::html::{check_html, visible_len};
use crate::{BOT_USERNAME, Call, Document, Fault, Message, Shared, TOKEN};

/// The longest a `getUpdates` long poll is held.
const MAX_POLL: Duration = Duration::from_secs(50);

/// Runs the accept loop until `stop` fires.
pub(crate) fn run(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
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
            let shared = shared.clone();
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let service = hyper::service::service_fn(move |req| handle(req, shared.clone()));
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
}

type Res = Response<Full<Bytes>>;

fn reply(status: u16, body: Vec<u8>, content_type: &str) -> Res {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = content_type.parse() {
        res.headers_mut().insert("content-type", v);
    }
    res
}

fn ok(result: Value) -> (u16, Value) {
    (200, json!({"ok": true, "result": result}))
}

fn bad(code: u16, description: &str) -> (u16, Value) {
    (code, json!({"ok": false, "error_code": code, "description": description}))
}

async fn handle(req: Request<Incoming>, shared: Arc<Shared>) -> Result<Res, std::io::Error> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    if let Some(rest) = path.strip_prefix("/file/bot") {
        let (token, file_path) = rest.split_once('/').unwrap_or((rest, ""));
        let s = shared.lock();
        let found = s.files.values().find(|(p, _)| p == file_path).map(|(_, b)| b.clone());
        return Ok(match (token == TOKEN, found) {
            (true, Some(bytes)) => reply(200, bytes, "application/octet-stream"),
            _ => reply(404, b"Not Found".to_vec(), "text/plain"),
        });
    }
    let Some(rest) = path.strip_prefix("/bot") else {
        return Ok(reply(404, b"Not Found".to_vec(), "text/plain"));
    };
    let (token, method) = rest.split_once('/').unwrap_or((rest, ""));
    let (params, files) = params_of(&query, &content_type, &body);
    let fault = {
        let mut s = shared.lock();
        let at = s.faults.iter().position(|(m, _)| m == method || m == "*");
        at.map(|i| s.faults.remove(i).1)
    };
    let (status, answer) = match fault {
        Some(Fault::Drop) => {
            record(&shared, method, &params, 0);
            return Err(std::io::Error::other("dropped on purpose"));
        }
        Some(Fault::TooManyRequests { retry_after }) => (
            429,
            json!({"ok": false, "error_code": 429,
                   "description": format!("Too Many Requests: retry after {retry_after}"),
                   "parameters": {"retry_after": retry_after}}),
        ),
        Some(Fault::ServerError) => bad(500, "Internal Server Error"),
        None if token != TOKEN => bad(401, "Unauthorized"),
        None => answer(&shared, method, &params, files).await,
    };
    record(&shared, method, &params, status);
    Ok(reply(status, answer.to_string().into_bytes(), "application/json"))
}

fn record(shared: &Shared, method: &str, params: &Value, status: u16) {
    shared.lock().calls.push(Call {
        method: method.to_owned(),
        params: params.clone(),
        at: Instant::now(),
        status,
    });
    shared.changed.notify_all();
}

/// A multipart file part: its field, file name and bytes.
type FilePart = (String, String, Vec<u8>);

/// The parameters, from the query string and a JSON, form or multipart body.
fn params_of(query: &str, content_type: &str, body: &[u8]) -> (Value, Vec<FilePart>) {
    let mut map = Map::new();
    let mut files = Vec::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        map.insert(k.into_owned(), Value::String(v.into_owned()));
    }
    if content_type.starts_with("application/json") {
        if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(body) {
            map.extend(m);
        }
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        for (k, v) in url::form_urlencoded::parse(body) {
            map.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    } else if let Some(boundary) = content_type.split("boundary=").nth(1) {
        let boundary = format!("--{}", boundary.trim_matches('"'));
        for part in split(body, boundary.as_bytes()).into_iter().skip(1) {
            let Some(head_end) = find(part, b"\r\n\r\n") else { continue };
            let head = String::from_utf8_lossy(&part[..head_end]);
            let mut content = &part[head_end + 4..];
            if content.ends_with(b"\r\n") {
                content = &content[..content.len() - 2];
            }
            let attr = |name: &str| {
                let key = format!("{name}=\"");
                head.split(&key).nth(1).and_then(|r| r.split('"').next()).map(str::to_owned)
            };
            let Some(name) = attr("name") else { continue };
            match attr("filename") {
                Some(file) => {
                    map.insert(name.clone(), Value::String(format!("file:{file}")));
                    files.push((name, file, content.to_vec()));
                }
                None => {
                    map.insert(name, Value::String(String::from_utf8_lossy(content).into_owned()));
                }
            }
        }
    }
    (Value::Object(map), files)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn split<'a>(mut hay: &'a [u8], sep: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    while let Some(at) = find(hay, sep) {
        out.push(&hay[..at]);
        hay = &hay[at + sep.len()..];
    }
    out.push(hay);
    out
}

/// A parameter as an integer (Telegram accepts numbers as strings too).
fn int(params: &Value, key: &str) -> Option<i64> {
    match &params[key] {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn text_param(params: &Value, key: &str) -> Option<String> {
    params[key].as_str().map(str::to_owned)
}

/// Inline keyboard buttons from `reply_markup` (an object or JSON text).
fn buttons(params: &Value) -> Vec<Vec<(String, String)>> {
    let markup = match &params["reply_markup"] {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    markup["inline_keyboard"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    row.as_array()
                        .map(|b| {
                            b.iter()
                                .map(|b| {
                                    let s = |k: &str| b[k].as_str().unwrap_or_default().to_owned();
                                    (s("text"), s("callback_data"))
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Checks a text the way Telegram does before sending or editing it.
fn check_text(text: &str, parse_mode: Option<&str>) -> Result<(), (u16, Value)> {
    if text.trim().is_empty() {
        return Err(bad(400, "Bad Request: message text is empty"));
    }
    let html = parse_mode.is_some_and(|m| m.eq_ignore_ascii_case("html"));
    if html && let Err(why) = check_html(text) {
        return Err(bad(400, &format!("Bad Request: can't parse entities: {why}")));
    }
    let len = if html { visible_len(text) } else { text.encode_utf16().count() };
    if len > 4096 {
        return Err(bad(400, "Bad Request: message is too long"));
    }
    Ok(())
}

fn message_json(m: &Message) -> Value {
    json!({"message_id": m.message_id, "chat": {"id": m.chat_id, "type": "private"},
           "date": 1_790_000_000, "text": m.text})
}

async fn answer(
    shared: &Shared,
    method: &str,
    params: &Value,
    files: Vec<FilePart>,
) -> (u16, Value) {
    match method {
        "getMe" => ok(json!({"id": 123456, "is_bot": true, "first_name": "rab",
                               "username": BOT_USERNAME})),
        "getUpdates" => get_updates(shared, params).await,
        "sendMessage" => {
            let (Some(chat), Some(text)) = (int(params, "chat_id"), text_param(params, "text"))
            else {
                return bad(400, "Bad Request: chat_id and text are required");
            };
            let parse_mode = text_param(params, "parse_mode");
            if let Err(e) = check_text(&text, parse_mode.as_deref()) {
                return e;
            }
            let mut s = shared.lock();
            let next = s.next_message.entry(chat).or_insert(1);
            let message_id = *next;
            *next += 1;
            let m = Message {
                message_id,
                chat_id: chat,
                text,
                parse_mode,
                buttons: buttons(params),
                edits: 0,
            };
            let out = message_json(&m);
            s.messages.push(m);
            ok(out)
        }
        "editMessageText" => {
            let (Some(chat), Some(id), Some(text)) =
                (int(params, "chat_id"), int(params, "message_id"), text_param(params, "text"))
            else {
                return bad(400, "Bad Request: chat_id, message_id and text are required");
            };
            let parse_mode = text_param(params, "parse_mode");
            if let Err(e) = check_text(&text, parse_mode.as_deref()) {
                return e;
            }
            let new_buttons = buttons(params);
            let mut s = shared.lock();
            let Some(m) = s.messages.iter_mut().find(|m| m.chat_id == chat && m.message_id == id)
            else {
                return bad(400, "Bad Request: message to edit not found");
            };
            if m.text == text && m.buttons == new_buttons {
                return bad(
                    400,
                    "Bad Request: message is not modified: specified new message content and \
                     reply markup are exactly the same as a current content and reply markup \
                     of the message",
                );
            }
            m.text = text;
            m.parse_mode = parse_mode;
            m.buttons = new_buttons;
            m.edits += 1;
            ok(message_json(m))
        }
        "sendDocument" => {
            let Some(chat) = int(params, "chat_id") else {
                return bad(400, "Bad Request: chat_id is required");
            };
            let Some((_, file_name, content)) = files.into_iter().find(|(f, _, _)| f == "document")
            else {
                return bad(400, "Bad Request: there is no document in the request");
            };
            let caption = text_param(params, "caption");
            if let Some(c) = &caption
                && let Err(e) = check_text(c, text_param(params, "parse_mode").as_deref())
            {
                return e;
            }
            let mut s = shared.lock();
            let next = s.next_message.entry(chat).or_insert(1);
            let message_id = *next;
            *next += 1;
            s.documents.push(Document {
                chat_id: chat,
                file_name: file_name.clone(),
                content,
                caption,
            });
            ok(json!({"message_id": message_id, "chat": {"id": chat, "type": "private"},
                      "date": 1_790_000_000, "document": {"file_name": file_name}}))
        }
        "editMessageReplyMarkup" => {
            let (Some(chat), Some(id)) = (int(params, "chat_id"), int(params, "message_id")) else {
                return bad(400, "Bad Request: chat_id and message_id are required");
            };
            let new_buttons = buttons(params);
            let mut s = shared.lock();
            let Some(m) = s.messages.iter_mut().find(|m| m.chat_id == chat && m.message_id == id)
            else {
                return bad(400, "Bad Request: message to edit not found");
            };
            if m.buttons == new_buttons {
                return bad(400, "Bad Request: message is not modified");
            }
            m.buttons = new_buttons;
            m.edits += 1;
            ok(message_json(m))
        }
        "answerCallbackQuery" => {
            let Some(id) = text_param(params, "callback_query_id") else {
                return bad(400, "Bad Request: callback_query_id is required");
            };
            shared.lock().answered_callbacks.push(id);
            ok(json!(true))
        }
        "getFile" => {
            let Some(id) = text_param(params, "file_id") else {
                return bad(400, "Bad Request: file_id is required");
            };
            let s = shared.lock();
            match s.files.get(&id) {
                Some((path, bytes)) => ok(json!({"file_id": id, "file_unique_id": "u",
                                                 "file_size": bytes.len(), "file_path": path})),
                None => bad(400, "Bad Request: invalid file_id"),
            }
        }
        "sendChatAction" => ok(json!(true)),
        other => bad(404, &format!("Not Found: method {other}")),
    }
}

/// Long polling: updates from `offset` (those before it are confirmed and dropped),
/// waiting up to `timeout` seconds for one to arrive.
async fn get_updates(shared: &Shared, params: &Value) -> (u16, Value) {
    let offset = int(params, "offset").unwrap_or(0);
    let timeout = Duration::from_secs(int(params, "timeout").unwrap_or(0).max(0).unsigned_abs())
        .min(MAX_POLL);
    let limit = usize::try_from(int(params, "limit").unwrap_or(100).clamp(1, 100)).unwrap_or(100);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let notified = shared.updates.notified();
        {
            let mut s = shared.lock();
            if offset > s.confirmed {
                s.confirmed = offset;
            }
            let confirmed = s.confirmed;
            s.updates.retain(|u| u["update_id"].as_i64().unwrap_or(0) >= confirmed);
            if !s.updates.is_empty() {
                let out: Vec<Value> = s.updates.iter().take(limit).cloned().collect();
                drop(s);
                shared.changed.notify_all();
                return ok(Value::Array(out));
            }
        }
        shared.changed.notify_all();
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return ok(json!([]));
        }
    }
}
