//! MCP server configuration: which servers to start and how to reach them.
//!
//! Files use Claude Code's shape, `{"mcpServers": {"name": {...}}}`, or VS Code's
//! top-level `"servers"`. The caller passes the files in precedence order
//! (`.rab/mcp.json`, `.mcp.json`, `$RAB_HOME/mcp.json`); the first file to define a
//! name wins and later duplicates become warnings. `${VAR}` and `${VAR:-default}` are
//! expanded in commands, arguments, env values, URLs and headers; a variable that is
//! unset with no default does not fail loading but marks the server, which then
//! reports itself as failed when started, so one broken entry never hides the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::Error;

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment (after rab's keys are removed).
        env: BTreeMap<String, String>,
        /// Its working directory; relative paths are taken from the session's directory.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, e.g. `https://example.com/mcp`.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
        /// Configured as legacy SSE (`"type": "sse"` or a URL ending in `/sse`). It is
        /// still tried over streamable HTTP; a failure explains that SSE is unsupported.
        is_legacy_sse: bool,
    },
}

impl Transport {
    /// A one-line summary for status displays: the command line or the URL.
    pub fn summary(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => {
                let mut line = format!("stdio: {command}");
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            Self::Http { url, is_legacy_sse: true, .. } => format!("sse: {url}"),
            Self::Http { url, is_legacy_sse: false, .. } => format!("http: {url}"),
        }
    }
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name from the configuration file; tool names are `mcp__<name>__<tool>`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// The file that defined it.
    pub source: PathBuf,
    /// How long it may take to start; `None` uses the manager's default.
    pub startup_timeout: Option<Duration>,
    /// How long one tool call may take (`toolTimeout`, ms); `None` uses the manager's
    /// default.
    pub tool_timeout: Option<Duration>,
    /// `"disabled": true`: listed but not started.
    pub disabled: bool,
    /// Why it cannot start (an unset `${VAR}`); reported as a failure when started.
    pub problem: Option<String>,
}

/// Reads `files` in precedence order and returns every server they define. A missing
/// file is skipped; a server defined again in a later file is ignored with a warning
/// pushed to `warnings`. `env` looks up variables for `${VAR}` expansion.
pub fn load(
    files: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<ServerConfig>, Error> {
    let mut servers: Vec<ServerConfig> = Vec::new();
    for path in files {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::Read { path: path.clone(), source }),
        };
        for server in parse(&text, path, env)? {
            let Some(key) = crate::tools::server_key(&server.name) else {
                warnings.push(format!(
                    "MCP server `{}` in {} is skipped: its tools' names would look like \
                     another server's to permission rules (mcp__SERVER__TOOL); rename it \
                     with letters, digits, '-' and single '_' inside",
                    server.name,
                    path.display()
                ));
                continue;
            };
            let same = |s: &&ServerConfig| {
                s.name == server.name || crate::tools::server_key(&s.name).as_deref() == Some(&key)
            };
            if let Some(first) = servers.iter().find(same) {
                let what = if first.name == server.name {
                    format!("MCP server `{}` is defined", server.name)
                } else {
                    format!(
                        "MCP servers `{}` and `{}` would give their tools the same names, \
                         defined",
                        first.name, server.name
                    )
                };
                warnings.push(format!(
                    "{what} in both {} and {}; using the one in {}",
                    first.source.display(),
                    path.display(),
                    first.source.display()
                ));
                continue;
            }
            servers.push(server);
        }
    }
    Ok(servers)
}

/// Parses one file's text; `path` is named in errors and recorded as the source.
pub fn parse(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, Error> {
    let root: Value = serde_json::from_str(text).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        // serde_json's message ends with the position, which the error gives already.
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
    })?;
    let Value::Object(root) = root else {
        return Err(Error::Shape {
            path: path.to_path_buf(),
            problem: "the file must hold a JSON object such as {\"mcpServers\": {}}".into(),
        });
    };
    let mut servers = Vec::new();
    for key in ["mcpServers", "servers"] {
        let Some(section) = root.get(key) else { continue };
        let named = match section {
            Value::Object(section) => {
                section.iter().map(|(name, entry)| (name.clone(), entry)).collect()
            }
            // The rab seed's form: `{"servers": [{"command": …}, {"url": …}]}`.
            Value::Array(list) if key == "servers" => array_names(list),
            _ => {
                return Err(Error::Shape {
                    path: path.to_path_buf(),
                    problem: format!(
                        "`{key}` must be an object mapping server names to their settings, \
                         e.g. {{\"{key}\": {{\"files\": {{\"command\": \"npx\"}}}}}}{}",
                        if key == "servers" { ", or a list of such settings" } else { "" }
                    ),
                });
            }
        };
        for (name, entry) in named {
            if servers.iter().any(|s: &ServerConfig| s.name == name) {
                continue;
            }
            servers.push(Entry { path, name: &name, env }.parse(entry)?);
        }
    }
    Ok(servers)
}

/// Names for the entries of the list form: an entry's own `name`, else one made from
/// what it runs (the package an `npx`/`uvx`-style runner starts, else the command's file
/// name) or the URL's host; a name already taken gets `-2`, `-3`, ….
fn array_names(list: &[Value]) -> Vec<(String, &Value)> {
    let mut out: Vec<(String, &Value)> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let base = entry
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| derived_name(entry))
            .unwrap_or_else(|| format!("server-{}", i + 1));
        let mut name = base.clone();
        let mut n = 1;
        while out.iter().any(|(taken, _)| *taken == name) {
            n += 1;
            name = format!("{base}-{n}");
        }
        out.push((name, entry));
    }
    out
}

/// `server-filesystem` for `npx -y @modelcontextprotocol/server-filesystem /tmp`,
/// `git-mcp` for `/usr/bin/git-mcp`, `mcp.example.com` for a URL.
fn derived_name(entry: &Value) -> Option<String> {
    const RUNNERS: [&str; 8] = ["npx", "bunx", "pnpx", "uvx", "pipx", "deno", "node", "python3"];
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return reqwest::Url::parse(url).ok()?.host_str().map(str::to_owned);
    }
    let command = entry.get("command").and_then(Value::as_str)?;
    let file = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or(s).to_owned();
    let program = file(command);
    if !RUNNERS.contains(&program.as_str()) {
        return Some(program);
    }
    let args = entry.get("args").and_then(Value::as_array)?;
    let package = args.iter().filter_map(Value::as_str).find(|a| !a.starts_with('-'))?;
    // `@scope/pkg@1.2` → `pkg`; `server.py` → `server`.
    let package =
        package.strip_prefix('@').map_or(package, |p| p.split_once('/').map_or(p, |x| x.1));
    let package = package.split('@').next().unwrap_or(package);
    let name = file(package);
    Some(name.strip_suffix(".py").or(name.strip_suffix(".js")).unwrap_or(&name).to_owned())
}

/// One server's entry being parsed, for errors that name the file and server.
struct Entry<'a> {
    path: &'a Path,
    name: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Entry<'_> {
    fn error(&self, field: &str, problem: impl Into<String>) -> Error {
        Error::Field {
            path: self.path.to_path_buf(),
            server: self.name.to_owned(),
            field: field.to_owned(),
            problem: problem.into(),
        }
    }

    fn parse(&self, entry: &Value) -> Result<ServerConfig, Error> {
        let Value::Object(map) = entry else {
            return Err(self.error(
                "(entry)",
                "must be an object such as {\"command\": \"npx\", \"args\": [\"-y\", \"pkg\"]} \
                 or {\"url\": \"https://host/mcp\"}",
            ));
        };
        let mut problems = Vec::new();
        let transport = self.transport(map, &mut problems)?;
        let disabled = match map.get("disabled") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(self.error("disabled", "must be true or false")),
        };
        let startup_timeout = match map.get("timeout") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Duration::from_millis(v.as_u64().ok_or_else(|| {
                self.error("timeout", "must be a whole number of milliseconds, e.g. 30000")
            })?)),
        };
        let tool_timeout = match map.get("toolTimeout") {
            None | Some(Value::Null) => None,
            Some(v) => {
                Some(Duration::from_millis(v.as_u64().filter(|ms| *ms > 0).ok_or_else(|| {
                    self.error("toolTimeout", "must be a whole number of milliseconds, e.g. 600000")
                })?))
            }
        };
        Ok(ServerConfig {
            name: self.name.to_owned(),
            transport,
            source: self.path.to_path_buf(),
            startup_timeout,
            tool_timeout,
            disabled,
            problem: (!problems.is_empty()).then(|| problems.join("; ")),
        })
    }

    /// The transport: a `command` (stdio) or a `url` (HTTP), never both, agreeing with `type`.
    fn transport(
        &self,
        map: &Map<String, Value>,
        problems: &mut Vec<String>,
    ) -> Result<Transport, Error> {
        let kind = self.string(map, "type")?;
        let command = self.string(map, "command")?;
        let url = self.string(map, "url")?;
        let transport = match (kind.as_deref(), command, url) {
            (Some(other), _, _)
                if !["stdio", "http", "streamable-http", "sse"].contains(&other) =>
            {
                return Err(self.error(
                    "type",
                    format!(
                        "is `{other}`; use `stdio` (with `command`), `http` or \
                         `streamable-http` (with `url`), or `sse`"
                    ),
                ));
            }
            (_, Some(_), Some(_)) => {
                return Err(self.error(
                    "command",
                    "and `url` are both set; keep `command` for a local server or `url` for \
                     a remote one",
                ));
            }
            (_, None, None) => {
                return Err(self.error(
                    "command",
                    "is missing: set `command` (a program to run) or `url` (an HTTP endpoint)",
                ));
            }
            (Some("stdio") | None, Some(command), None) => {
                let command = self.expand(&command, "command", problems);
                let args = self
                    .strings(map, "args")?
                    .iter()
                    .map(|a| self.expand(a, "args", problems))
                    .collect();
                let env = self.expand_map(map, "env", problems)?;
                let cwd = self.string(map, "cwd")?.map(PathBuf::from);
                Transport::Stdio { command, args, env, cwd }
            }
            (Some(kind), Some(_), None) => {
                return Err(self.error(
                    "type",
                    format!(
                        "is `{kind}` but the server has a `command`; use `\"type\": \"stdio\"`"
                    ),
                ));
            }
            (Some("stdio"), None, Some(_)) => {
                return Err(self.error(
                    "type",
                    "is `stdio` but the server has a `url`; use `\"type\": \"http\"` or set \
                     `command`",
                ));
            }
            (kind, None, Some(url)) => {
                let url = self.expand(&url, "url", problems);
                let headers = self.expand_map(map, "headers", problems)?;
                let is_legacy_sse =
                    kind == Some("sse") || url.trim_end_matches('/').ends_with("/sse");
                Transport::Http { url, headers, is_legacy_sse }
            }
        };
        Ok(transport)
    }

    fn string(&self, map: &Map<String, Value>, field: &str) -> Result<Option<String>, Error> {
        match map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.error(field, "must be a string")),
        }
    }

    fn strings(&self, map: &Map<String, Value>, field: &str) -> Result<Vec<String>, Error> {
        let bad = || self.error(field, "must be an array of strings, e.g. [\"-y\", \"pkg\"]");
        match map.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().map(str::to_owned).ok_or_else(bad)).collect()
            }
            Some(_) => Err(bad()),
        }
    }

    fn expand_map(
        &self,
        map: &Map<String, Value>,
        field: &str,
        problems: &mut Vec<String>,
    ) -> Result<BTreeMap<String, String>, Error> {
        let bad = || self.error(field, "must be an object of strings, e.g. {\"KEY\": \"value\"}");
        match map.get(field) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(items)) => items
                .iter()
                .map(|(k, v)| {
                    let v = v.as_str().ok_or_else(bad)?;
                    Ok((k.clone(), self.expand(v, &format!("{field}.{k}"), problems)))
                })
                .collect(),
            Some(_) => Err(bad()),
        }
    }

    /// Expands `${VAR}` and `${VAR:-default}`; an unset variable without a default is
    /// left empty and recorded in `problems`.
    fn expand(&self, text: &str, field: &str, problems: &mut Vec<String>) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                // An unterminated `${` is literal text.
                out.push_str(&rest[start..]);
                return out;
            };
            let inner = &after[..end];
            let (var, default) = match inner.split_once(":-") {
                Some((var, default)) => (var, Some(default)),
                None => (inner, None),
            };
            match ((self.env)(var), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => problems.push(format!(
                    "environment variable `{var}` (used in `{field}` in {}) is not set; set \
                     it or write ${{{var}:-default}}",
                    self.path.display()
                )),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
}
