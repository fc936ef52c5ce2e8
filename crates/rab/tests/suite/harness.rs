//! Runs the real binary with a clean environment pointed at a fake server.

use std::process::{Command, Output, Stdio};

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
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
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
