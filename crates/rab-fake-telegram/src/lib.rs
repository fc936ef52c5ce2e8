//! rab-fake-telegram: a Telegram Bot API server on loopback for rab's tests, speaking
//! the methods `rab telegram` uses — `getMe`, `getUpdates` (long polling, updates
//! confirmed by `offset`), `sendMessage`, `editMessageText`, `editMessageReplyMarkup`,
//! `sendDocument` (multipart),
//! `answerCallbackQuery`, `getFile` and file downloads, `sendChatAction` — and holding
//! them to the API's rules: the token, 4,096 characters, HTML that Telegram would parse,
//! and "message is not modified". A test plays the users (text, photos, documents,
//! button presses), injects faults (429 with `retry_after`, 500, a dropped connection)
//! and reads back what the bot sent, as each message stands after its edits.
//!
//! ```no_run
//! use rab_fake_telegram::{FakeTelegram, User};
//! let tg = FakeTelegram::start();
//! let alice = User::new(1001, "alice");
//! tg.send_text(&alice, "hello");
//! // … run `rab telegram` with apiBase = tg.api_base() and the token TOKEN …
//! tg.wait_until("a reply", std::time::Duration::from_secs(10), |t| !t.messages(1001).is_empty());
//! ```

mod html;
mod server;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use html::{check_html, visible_len};

/// The bot token the server accepts.
pub const TOKEN: &str = "123456:TEST-token_for-rab";

/// The bot's own user name (`getMe`).
pub const BOT_USERNAME: &str = "rab_test_bot";

/// A user talking to the bot (in a private chat, whose id is the user's).
#[derive(Clone, Debug)]
pub struct User {
    /// Telegram's user id (and the private chat's).
    pub id: i64,
    /// `@username`, without the `@`.
    pub username: Option<String>,
}

impl User {
    /// A user with an id and a user name.
    pub fn new(id: i64, username: &str) -> Self {
        Self { id, username: Some(username.to_owned()) }
    }

    fn json(&self) -> Value {
        let mut v =
            json!({"id": self.id, "is_bot": false, "first_name": format!("User{}", self.id)});
        if let Some(u) = &self.username {
            v["username"] = json!(u);
        }
        v
    }
}

/// What the next call of a method gets instead of its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 429 Too Many Requests with `parameters.retry_after`.
    TooManyRequests {
        /// Seconds to wait.
        retry_after: u64,
    },
    /// 500 Internal Server Error.
    ServerError,
    /// The connection is closed without an answer.
    Drop,
}

/// A message the bot sent, as it stands after its edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its id in the chat.
    pub message_id: i64,
    /// The chat.
    pub chat_id: i64,
    /// Its text now (HTML when `parse_mode` is HTML).
    pub text: String,
    /// `HTML`, or none.
    pub parse_mode: Option<String>,
    /// Inline keyboard buttons, row by row: (label, callback data).
    pub buttons: Vec<Vec<(String, String)>>,
    /// How many times it was edited.
    pub edits: u32,
}

/// A document the bot sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// The chat.
    pub chat_id: i64,
    /// Its file name.
    pub file_name: String,
    /// Its bytes.
    pub content: Vec<u8>,
    /// Its caption.
    pub caption: Option<String>,
}

/// One call the bot made.
#[derive(Clone, Debug)]
pub struct Call {
    /// The method (`sendMessage`, …).
    pub method: String,
    /// Its parameters (a multipart file part as its file name).
    pub params: Value,
    /// When it came.
    pub at: Instant,
    /// What it got: 200, or the error code.
    pub status: u16,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) updates: VecDeque<Value>,
    pub(crate) next_update: i64,
    pub(crate) confirmed: i64,
    pub(crate) messages: Vec<Message>,
    pub(crate) next_message: HashMap<i64, i64>,
    pub(crate) documents: Vec<Document>,
    pub(crate) calls: Vec<Call>,
    pub(crate) faults: Vec<(String, Fault)>,
    pub(crate) files: HashMap<String, (String, Vec<u8>)>,
    pub(crate) answered_callbacks: Vec<String>,
}

/// Shared between the server and the test.
pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Signalled on every change (the test's waits).
    pub(crate) changed: Condvar,
    /// Wakes long polls when an update arrives.
    pub(crate) updates: tokio::sync::Notify,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running fake Bot API server; stopped when dropped.
pub struct FakeTelegram {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeTelegram {
    /// Starts a server on 127.0.0.1 and a free port.
    #[allow(clippy::expect_used)]
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("fake-telegram: bind");
        listener.set_nonblocking(true).expect("fake-telegram: nonblocking");
        let addr = listener.local_addr().expect("fake-telegram: address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State { next_update: 1000, ..State::default() }),
            changed: Condvar::new(),
            updates: tokio::sync::Notify::new(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fake-telegram".into())
            .spawn(move || server::run(listener, thread_shared, stopped))
            .expect("fake-telegram: thread");
        Self { addr, shared, stop: Some(stop), thread: Some(thread) }
    }

    /// The API base (`http://127.0.0.1:PORT`), for the bot's `apiBase`.
    pub fn api_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn push(&self, update: impl FnOnce(i64) -> Value) -> i64 {
        let id = {
            let mut s = self.shared.lock();
            let id = s.next_update;
            s.next_update += 1;
            s.updates.push_back(update(id));
            id
        };
        self.shared.updates.notify_waiters();
        self.shared.changed.notify_all();
        id
    }

    fn message(from: &User, id: i64, extra: Value) -> Value {
        let mut m = json!({
            "message_id": id,
            "from": from.json(),
            "chat": {"id": from.id, "type": "private"},
            "date": 1_790_000_000,
        });
        if let (Value::Object(m), Value::Object(extra)) = (&mut m, extra) {
            m.extend(extra);
        }
        m
    }

    /// `from` sends `text` in their private chat; the update's id.
    pub fn send_text(&self, from: &User, text: &str) -> i64 {
        self.push(|id| json!({"update_id": id, "message": Self::message(from, id, json!({"text": text}))}))
    }

    fn file(&self, name: &str, bytes: Vec<u8>) -> String {
        let mut s = self.shared.lock();
        let file_id = format!("file-{}", s.files.len() + 1);
        s.files.insert(file_id.clone(), (format!("documents/{name}"), bytes));
        file_id
    }

    /// `from` sends a photo (JPEG or PNG bytes), with a caption or not.
    pub fn send_photo(&self, from: &User, bytes: Vec<u8>, caption: Option<&str>) -> i64 {
        let size = bytes.len();
        let file_id = self.file("photo.jpg", bytes);
        let mut extra = json!({"photo": [
            {"file_id": format!("{file_id}-small"), "file_unique_id": "s", "width": 90, "height": 90},
            {"file_id": file_id, "file_unique_id": "u", "width": 800, "height": 600, "file_size": size},
        ]});
        if let Some(c) = caption {
            extra["caption"] = json!(c);
        }
        self.push(|id| json!({"update_id": id, "message": Self::message(from, id, extra)}))
    }

    /// `from` sends a document.
    pub fn send_document(
        &self,
        from: &User,
        name: &str,
        mime: &str,
        bytes: Vec<u8>,
        caption: Option<&str>,
    ) -> i64 {
        let size = bytes.len();
        let file_id = self.file(name, bytes);
        let mut extra = json!({"document": {
            "file_id": file_id, "file_unique_id": "d", "file_name": name,
            "mime_type": mime, "file_size": size,
        }});
        if let Some(c) = caption {
            extra["caption"] = json!(c);
        }
        self.push(|id| json!({"update_id": id, "message": Self::message(from, id, extra)}))
    }

    /// `from` presses the inline button with `data` under the bot's message
    /// `message_id` in their chat.
    pub fn press(&self, from: &User, message_id: i64, data: &str) -> i64 {
        self.push(|id| {
            json!({"update_id": id, "callback_query": {
                "id": format!("cb-{id}"),
                "from": from.json(),
                "message": {"message_id": message_id, "chat": {"id": from.id, "type": "private"},
                            "date": 1_790_000_000},
                "chat_instance": "1",
                "data": data,
            }})
        })
    }

    /// Updates sent that no `getUpdates` offset has confirmed yet.
    pub fn unconfirmed(&self) -> usize {
        let s = self.shared.lock();
        s.updates.iter().filter(|u| u["update_id"].as_i64().unwrap_or(0) >= s.confirmed).count()
    }

    /// Every call the bot made, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.lock().calls.clone()
    }

    /// The calls of one method.
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        self.calls().into_iter().filter(|c| c.method == method).collect()
    }

    /// The messages the bot sent in `chat`, as they stand now.
    pub fn messages(&self, chat: i64) -> Vec<Message> {
        self.shared.lock().messages.iter().filter(|m| m.chat_id == chat).cloned().collect()
    }

    /// The documents the bot sent in `chat`.
    pub fn documents(&self, chat: i64) -> Vec<Document> {
        self.shared.lock().documents.iter().filter(|d| d.chat_id == chat).cloned().collect()
    }

    /// Callback queries the bot answered.
    pub fn answered_callbacks(&self) -> Vec<String> {
        self.shared.lock().answered_callbacks.clone()
    }

    /// The next call of `method` (`*` for any) gets `fault` instead of its answer.
    pub fn fail(&self, method: &str, fault: Fault) {
        self.shared.lock().faults.push((method.to_owned(), fault));
    }

    /// Waits (at most `limit`) until `done` holds, re-checking on every change; panics
    /// naming `what` and the calls so far when it does not.
    pub fn wait_until(&self, what: &str, limit: Duration, done: impl Fn(&FakeTelegram) -> bool) {
        let deadline = Instant::now() + limit;
        loop {
            if done(self) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "fake-telegram: no {what} within {limit:?}; calls: {:#?}", {
                self.calls()
                    .iter()
                    .map(|c| (c.method.clone(), c.params.clone()))
                    .collect::<Vec<_>>()
            });
            let guard = self.shared.lock();
            let _ = self.shared.changed.wait_timeout(guard, left.min(Duration::from_millis(200)));
        }
    }
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
