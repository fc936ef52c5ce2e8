//! `rab telegram`: the agent in a Telegram chat. Long polling with `getUpdates`; only
//! the users the settings allow (ids or `@usernames`) are served — anyone else gets one
//! refusal and nothing runs; each chat is one session in the normal session store,
//! continued after a restart, on a runtime of its own in the default permission mode
//! with its questions asked in the chat. The token comes from the environment (the
//! variable `tokenEnv` names) or auth.json, never from a project file. See
//! docs/telegram.md.

mod api;
mod chat;
mod questions;
mod render;
mod store;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rab_config::{Env, Paths, TelegramSettings};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::channels::Channel;
use api::{ApiError, Bot};
use chat::{Chat, Input};
use store::Store;

/// How long one long poll waits for updates.
const POLL: Duration = Duration::from_secs(50);
/// The largest file taken from a chat (the Bot API serves at most 20 MB).
const MAX_FILE: usize = 20 * 1024 * 1024;
/// The largest text file passed to the model as text.
const MAX_TEXT_FILE: usize = 256 * 1024;

/// Who may use the bot.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Allowed {
    Id(i64),
    Name(String),
}

/// The bot's configuration, resolved.
pub struct Config {
    token: String,
    api_base: String,
    allowed: Vec<Allowed>,
    question_timeout: Duration,
}

impl Config {
    /// The bot's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// From the settings and the environment (or auth.json); a clear error for what
    /// is missing or malformed.
    pub fn resolve(
        settings: Option<&TelegramSettings>,
        env: &Env,
        paths: &Paths,
    ) -> Result<Self, String> {
        let default = TelegramSettings::default();
        let s = settings.unwrap_or(&default);
        let var = s.token_env.clone().unwrap_or_else(|| "TELEGRAM_BOT_TOKEN".into());
        let from_auth = || {
            rab_config::Auth::load(&paths.auth_file())
                .ok()
                .and_then(|a| a.key("telegram").map(str::to_owned))
        };
        let token = env
            .get(&var)
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .or_else(from_auth)
            .ok_or_else(|| {
                format!(
                    "no Telegram bot token: set {var} (or store it in {} as \"telegram\"); \
                     @BotFather gives one",
                    paths.auth_file().display()
                )
            })?;
        let well_formed = token.split_once(':').is_some_and(|(id, rest)| {
            id.parse::<u64>().is_ok()
                && !rest.is_empty()
                && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if !well_formed {
            return Err(format!(
                "the Telegram bot token in {var} does not look like one (DIGITS:LETTERS)"
            ));
        }
        let mut allowed = Vec::new();
        for u in &s.allowed_users {
            allowed.push(match u {
                Value::Number(n) => Allowed::Id(n.as_i64().ok_or("channels.telegram.allowedUsers: a user id must be an integer")?),
                Value::String(name) if name.starts_with('@') && name.len() > 1 => {
                    Allowed::Name(name[1..].to_ascii_lowercase())
                }
                other => {
                    return Err(format!(
                        "channels.telegram.allowedUsers: {other} is neither a user id nor an @username"
                    ));
                }
            });
        }
        if allowed.is_empty() {
            return Err(
                "channels.telegram.allowedUsers is empty: nobody could use the bot. Add your \
                        user id or @username in ~/.rab/agent/settings.json (see docs/telegram.md)"
                    .into(),
            );
        }
        let api_base = s.api_base.clone().unwrap_or_else(|| "https://api.telegram.org".into());
        let question_timeout = Duration::from_secs(s.question_timeout_secs.unwrap_or(300).max(5));
        Ok(Self { token, api_base, allowed, question_timeout })
    }

    fn allows(&self, user: &Value) -> bool {
        let id = user["id"].as_i64();
        let name = user["username"].as_str().map(str::to_ascii_lowercase);
        self.allowed.iter().any(|a| match a {
            Allowed::Id(i) => Some(*i) == id,
            Allowed::Name(n) => name.as_deref() == Some(n.as_str()),
        })
    }

    /// The bot's id (the token's number part, not secret).
    fn bot_id(&self) -> &str {
        self.token.split(':').next().unwrap_or("bot")
    }
}

/// Makes the set-up of a new chat's session (the usual model flags apply), with the
/// chat's durable scheduler.
pub type MakeSetup = Arc<
    dyn Fn(Arc<rab_core::cron::Scheduler>) -> Result<rab_core::setup::Setup, String> + Send + Sync,
>;

/// The Telegram channel.
pub struct Telegram {
    config: Config,
    paths: Paths,
    make_setup: MakeSetup,
}

impl Telegram {
    /// A channel with `config`, making each chat's set-up with `make_setup`.
    pub fn new(config: Config, paths: Paths, make_setup: MakeSetup) -> Self {
        Self { config, paths, make_setup }
    }
}

impl Channel for Telegram {
    fn name(&self) -> &str {
        "telegram"
    }

    fn run(&self, stop: CancellationToken) -> rab_agent::BoxFuture<'_, Result<(), String>> {
        Box::pin(async move { Poller::start(self, stop).await?.run().await })
    }
}

/// The poll loop and the chats it feeds.
struct Poller<'a> {
    channel: &'a Telegram,
    bot: Arc<Bot>,
    store: Arc<Store>,
    chats: HashMap<i64, UnboundedSender<Input>>,
    tasks: tokio::task::JoinSet<()>,
    refused: HashSet<i64>,
}

impl<'a> Poller<'a> {
    async fn start(channel: &'a Telegram, stop: CancellationToken) -> Result<Poller<'a>, String> {
        let c = &channel.config;
        let bot = Arc::new(Bot::new(&c.api_base, &c.token, stop.clone())?);
        let me = match bot.call("getMe", json!({})).await {
            Ok(me) => me,
            Err(ApiError::Stopped) => return Err("stopped".into()),
            Err(e) => return Err(format!("getMe: {e} (is the token right?)")),
        };
        let name = me["username"].as_str().unwrap_or("?");
        eprintln!("rab: telegram: @{name} polling for updates");
        let path = channel.paths.home().join("telegram").join(format!("{}.json", c.bot_id()));
        let store = Arc::new(Store::open(&path)?);
        Ok(Poller {
            channel,
            bot,
            store,
            chats: HashMap::new(),
            tasks: tokio::task::JoinSet::new(),
            refused: HashSet::new(),
        })
    }

    /// The file a chat's scheduled prompts are kept in.
    fn cron_file(&self, chat: i64) -> PathBuf {
        cron_dir(&self.channel.paths, &self.channel.config).join(format!("{chat}.json"))
    }

    async fn run(mut self) -> Result<(), String> {
        // Chats with scheduled prompts start now, so their prompts run without waiting
        // for a message.
        for chat in chats_with_jobs(&cron_dir(&self.channel.paths, &self.channel.config)) {
            let _ = self.chat(chat).await;
        }
        // Messages taken before a restart: handled now if they had not started, else
        // their chat is told the turn was cut off.
        for pending in self.store.saved().pending {
            if pending.started {
                let chat = pending.update["message"]["chat"]["id"].as_i64().unwrap_or(0);
                if let Some(tx) = self.chat(chat).await {
                    let _ = tx.send(Input::CutOff);
                }
                let _ = self.store.finish(pending.id());
            } else {
                self.update(pending.update).await;
            }
        }
        let result = self.poll().await;
        // Shutting down: each chat ends its run (the tape stays whole) and its last edits.
        self.chats.clear();
        while self.tasks.join_next().await.is_some() {}
        result
    }

    async fn poll(&mut self) -> Result<(), String> {
        loop {
            let offset = self.store.saved().offset;
            let params = json!({"offset": offset, "timeout": POLL.as_secs(),
                                "allowed_updates": ["message", "callback_query"]});
            let updates = match self
                .bot
                .call_timed("getUpdates", params, POLL + Duration::from_secs(15))
                .await
            {
                Ok(Value::Array(u)) => u,
                Ok(_) => Vec::new(),
                Err(ApiError::Stopped) => return Ok(()),
                Err(e) => return Err(format!("getUpdates: {e}")),
            };
            if updates.is_empty() {
                continue;
            }
            // Kept before anything acts on them: a restart neither loses nor repeats one.
            self.store.take(&updates)?;
            for u in updates {
                self.update(u).await;
            }
        }
    }

    async fn update(&mut self, u: Value) {
        let id = u["update_id"].as_i64().unwrap_or(0);
        if let Some(q) = u.get("callback_query") {
            let _ =
                self.bot.call("answerCallbackQuery", json!({"callback_query_id": q["id"]})).await;
            let chat = q["message"]["chat"]["id"].as_i64().unwrap_or(0);
            if !self.channel.config.allows(&q["from"]) {
                return;
            }
            let message_id = q["message"]["message_id"].as_i64().unwrap_or(0);
            let data = q["data"].as_str().unwrap_or_default().to_owned();
            if let Some(tx) = self.chat(chat).await {
                let _ = tx.send(Input::Press { message_id, data });
            }
            return;
        }
        let Some(m) = u.get("message") else { return };
        let chat = m["chat"]["id"].as_i64().unwrap_or(0);
        if !self.channel.config.allows(&m["from"]) {
            let user = m["from"]["id"].as_i64().unwrap_or(0);
            tracing::warn!(user, chat, "a message from a user not allowed");
            if self.refused.insert(user) {
                let text = "This bot is private: you are not on its list of users.";
                let _ = self.bot.send("sendMessage", json!({"chat_id": chat, "text": text})).await;
            }
            let _ = self.store.finish(id);
            return;
        }
        let input = match self.message_input(id, m).await {
            Ok(input) => input,
            Err(why) => {
                let _ = self
                    .bot
                    .send("sendMessage", json!({"chat_id": chat, "text": format!("⚠️ {why}")}))
                    .await;
                let _ = self.store.finish(id);
                return;
            }
        };
        match self.chat(chat).await {
            Some(tx) => {
                let _ = tx.send(input);
            }
            None => {
                let _ = self.store.finish(id);
            }
        }
    }

    /// A message as the chat's input: its text (or caption), a photo as an image, a
    /// document as an image or as text.
    async fn message_input(&self, id: i64, m: &Value) -> Result<Input, String> {
        let mut text = m["text"].as_str().or(m["caption"].as_str()).unwrap_or_default().to_owned();
        let mut images = Vec::new();
        if let Some(photo) = m["photo"].as_array().and_then(|p| p.last()) {
            let bytes = self.file(photo["file_id"].as_str().unwrap_or_default()).await?;
            images.push(image(&bytes, "image/jpeg"));
        } else if let Some(doc) = m.get("document") {
            let name = doc["file_name"].as_str().unwrap_or("file");
            let mime = doc["mime_type"].as_str().unwrap_or("application/octet-stream");
            let bytes = self.file(doc["file_id"].as_str().unwrap_or_default()).await?;
            if mime.starts_with("image/") {
                images.push(image(&bytes, mime));
            } else if bytes.len() <= MAX_TEXT_FILE
                && let Ok(content) = String::from_utf8(bytes)
            {
                let safe: String = name.chars().filter(|c| !matches!(c, '"' | '<' | '>')).collect();
                text = format!("{text}\n\n<file name=\"{safe}\">\n{content}\n</file>")
                    .trim()
                    .to_owned();
            } else {
                return Err(format!(
                    "{name} was not passed on: only images and text files (up to {} KB) reach the model",
                    MAX_TEXT_FILE / 1024
                ));
            }
        }
        if text.trim().is_empty() && images.is_empty() {
            return Err("only text, photos and documents are understood".into());
        }
        Ok(Input::Message { update_id: id, text, images })
    }

    async fn file(&self, file_id: &str) -> Result<Vec<u8>, String> {
        let f = self
            .bot
            .call("getFile", json!({"file_id": file_id}))
            .await
            .map_err(|e| format!("getFile: {e}"))?;
        let path =
            f["file_path"].as_str().ok_or("the file has no path (too large for the Bot API?)")?;
        self.bot.download(path, MAX_FILE).await
    }

    /// The chat's input channel, its session started on first use.
    async fn chat(&mut self, chat: i64) -> Option<UnboundedSender<Input>> {
        if let Some(tx) = self.chats.get(&chat) {
            return Some(tx.clone());
        }
        match self.open_chat(chat).await {
            Ok(tx) => {
                self.chats.insert(chat, tx.clone());
                Some(tx)
            }
            Err(e) => {
                eprintln!("rab: telegram: chat {chat}: {e}");
                let text = format!("⚠️ rab cannot start a session: {e}");
                let _ = self.bot.send("sendMessage", json!({"chat_id": chat, "text": text})).await;
                None
            }
        }
    }

    async fn open_chat(&mut self, chat: i64) -> Result<UnboundedSender<Input>, String> {
        let (scheduler, missed) = rab_core::cron::Scheduler::durable(
            &self.cron_file(chat),
            rab_session::time::now_millis(),
        )?;
        let setup = (self.channel.make_setup)(scheduler)?;
        let known = self.store.session(chat).filter(|p| p.exists());
        let tape = match &known {
            Some(path) => {
                let choice = rab_core::setup::TapeChoice {
                    session: Some(path.clone()),
                    ..Default::default()
                };
                setup.tape(&choice).map_err(|e| e.message)?.0
            }
            None => setup.new_tape(),
        };
        let path: Option<PathBuf> = tape.path().map(|p| p.to_path_buf());
        let (mut session, _) = setup.session(tape).map_err(|e| e.message)?;
        let source = if known.is_some() { "resume" } else { "startup" };
        for w in session.session_start(source).await {
            tracing::warn!(chat, "{w}");
        }
        if let Some(path) = &path {
            self.store.set_session(chat, path)?;
        }
        let timeout = self.channel.config.question_timeout;
        let setup = Arc::new(setup);
        let handle = rab_core::runtime::start_with(setup.clone(), session);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let chat = Chat::new(chat, self.bot.clone(), self.store.clone(), setup, handle, timeout);
        eprintln!(
            "rab: telegram: chat {} {}",
            chat.id,
            if known.is_some() { "resumed" } else { "started" }
        );
        for note in missed {
            let text = format!("⏰ {note}");
            let _ = self.bot.send("sendMessage", json!({"chat_id": chat.id, "text": text})).await;
        }
        self.tasks.spawn(chat.run(rx));
        Ok(tx)
    }
}

/// Where this bot's chats keep their scheduled prompts: `~/.rab/cron/telegram/BOT/`.
fn cron_dir(paths: &Paths, config: &Config) -> PathBuf {
    paths.home().join("cron").join("telegram").join(config.bot_id())
}

/// The chats that have a file of scheduled prompts in `dir` with a job in it.
fn chats_with_jobs(dir: &std::path::Path) -> Vec<i64> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let chat = path.file_stem()?.to_str()?.parse::<i64>().ok()?;
            let text = std::fs::read_to_string(&path).ok()?;
            let saved: serde_json::Value = serde_json::from_str(&text).ok()?;
            saved["jobs"].as_array().is_some_and(|j| !j.is_empty()).then_some(chat)
        })
        .collect()
}

fn image(bytes: &[u8], mime: &str) -> rab_ai::Content {
    rab_ai::Content::Image {
        mime_type: mime.to_owned(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}
