//! Runs the real binary with a clean environment pointed at a fake server.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use rab_fake_llm::FakeLlm;

pub const WIRES: [&str; 4] =
    ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"];

/// A temp RAB_HOME (and HOME) that is removed at the end of the test.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    /// `rab` with only PATH, HOME and RAB_HOME set.
    pub fn rab(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rab"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("RAB_HOME", self.dir.path().join("rab"))
            // `rab update` asks GitHub for the latest release: never from a test.
            .env("RAB_UPDATE_URL", "off")
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        cmd
    }

    /// `node SCRIPT` for a client of rab written in JavaScript (pi's RpcClient, the ACP
    /// SDK): this home, an Anthropic key and `llm` in its environment, the binary in
    /// `RAB_BIN`.
    pub fn node(&self, script: &std::path::Path, llm: &FakeLlm) -> Command {
        let mut cmd = Command::new("node");
        cmd.arg(script)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("RAB_HOME", self.dir.path().join("rab"))
            .env("ANTHROPIC_BASE_URL", llm.url())
            .env("ANTHROPIC_API_KEY", "k")
            .env("RAB_BIN", env!("CARGO_BIN_EXE_rab"));
        cmd
    }

    /// `rab` configured for one wire format against `llm`, with key `key`.
    pub fn rab_for(&self, wire: &str, llm: &FakeLlm, key: Option<&str>) -> Command {
        let mut cmd = self.rab();
        let (provider, key_var, base_var, base) = match wire {
            "anthropic-messages" => {
                ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", llm.url())
            }
            "openai-responses" => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url()),
            "openai-completions" => {
                ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", llm.openai_url())
            }
            "google-generative-ai" => ("google", "GEMINI_API_KEY", "GEMINI_BASE_URL", llm.url()),
            other => panic!("unknown wire {other}"),
        };
        cmd.args(["--provider", provider, "--api", wire]).env(base_var, base);
        if let Some(key) = key {
            cmd.env(key_var, key);
        }
        cmd
    }
}

/// Every file under `dir`, in no order.
pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

/// Writes `text` to `path`, creating its folders.
pub fn put(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `cmd` with `input` on its stdin (then closed), capturing stdout and stderr.
pub fn with_stdin(mut cmd: Command, input: &str) -> Output {
    use std::io::Write;
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The tools request `i` offers: sent with their schemas, or deferred (named in
/// `tool_search`'s description, or in a later system update).
pub fn offered(llm: &FakeLlm, i: usize) -> Vec<String> {
    let req = &llm.requests()[i];
    let body = &req.body;
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        names.push(tool["name"].as_str().unwrap_or_default().to_owned());
        let description = tool["description"].as_str().unwrap_or_default();
        if let Some((_, deferred)) = description.split_once("\nDeferred: ") {
            names.extend(deferred.split(", ").map(str::to_owned));
        }
    }
    let text = String::from_utf8_lossy(&req.raw);
    for (_, rest) in
        text.match_indices("before calling them: ").map(|(at, m)| text.split_at(at + m.len()))
    {
        let end = rest.find(['\\', '"']).unwrap_or(rest.len());
        names.extend(rest[..end].split(", ").map(str::to_owned));
    }
    names
}

/// Reads a child's stdout as JSON lines on a thread of its own (a line that is not JSON
/// comes as `{"unparsed": line}`).
pub fn json_lines(
    stdout: std::process::ChildStdout,
) -> std::sync::mpsc::Receiver<serde_json::Value> {
    use std::io::BufRead;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let value = serde_json::from_str(&line)
                .unwrap_or_else(|_| serde_json::json!({"unparsed": line}));
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    lines
}

/// How long a test waits for a line.
pub const T: Duration = Duration::from_secs(20);

/// A child speaking JSON lines on its stdin and stdout (RPC, ACP), and the lines it
/// wrote.
pub struct Piped {
    pub child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    pub seen: Vec<Value>,
}

impl Piped {
    /// Starts `cmd` with its stdin and stdout piped (stderr dropped).
    pub fn spawn(mut cmd: Command) -> Self {
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = json_lines(child.stdout.take().unwrap());
        Self { child, stdin, lines, seen: Vec::new() }
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Writes raw bytes (a line that is not UTF-8, say).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits for a line matching `pred` (every line read is kept in `seen`).
    pub fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + T;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!("no {what}; saw {:#?}", self.seen),
            }
        }
    }

    /// Closes stdin and checks the child exits 0.
    pub fn end(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

/// A running `rab --mode rpc`.
pub struct Rpc(pub Piped);

impl std::ops::Deref for Rpc {
    type Target = Piped;
    fn deref(&self) -> &Piped {
        &self.0
    }
}

impl std::ops::DerefMut for Rpc {
    fn deref_mut(&mut self) -> &mut Piped {
        &mut self.0
    }
}

impl Rpc {
    pub fn start(home: &Home, llm: &FakeLlm, args: &[&str]) -> Self {
        Self::start_in(home, llm, home.dir.path(), args)
    }

    pub fn start_in(home: &Home, llm: &FakeLlm, cwd: &std::path::Path, args: &[&str]) -> Self {
        let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
        cmd.current_dir(cwd).args(["--mode", "rpc"]).args(args);
        Self(Piped::spawn(cmd))
    }

    pub fn response(&mut self, command: &str) -> Value {
        let c = command.to_owned();
        self.wait(&format!("{command} response"), move |v| {
            v["type"] == "response" && v["command"] == c.as_str()
        })
    }

    pub fn event(&mut self, kind: &str) -> Value {
        let k = kind.to_owned();
        self.wait(kind, move |v| v["type"] == k.as_str())
    }

    /// A `message_update` whose assistant event is `kind` (`text_delta`, …).
    pub fn update(&mut self, kind: &str) -> Value {
        let k = kind.to_owned();
        self.wait(kind, move |v| {
            v["type"] == "message_update" && v["assistantMessageEvent"]["type"] == k.as_str()
        })
    }

    pub fn end(self) {
        self.0.end();
    }
}
