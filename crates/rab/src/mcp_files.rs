//! `rab mcp add|list|get|remove`: the MCP configuration files edited from the command
//! line, as Claude Code's `claude mcp` does. The files keep Claude Code's shape
//! (`{"mcpServers": {"name": {...}}}`); whatever else a file holds is left as it is, and
//! a file is written whole and atomically (readable by you only: an entry's env and
//! headers may carry a token).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::cli::{McpAddArgs, McpScope};
use crate::{EXIT_OK, EXIT_USAGE, fail};

/// The file of `scope`: `~/.rab/mcp.json` (yours) or the project's `.mcp.json` (shared
/// with Claude Code and the team).
fn file_of(scope: McpScope, cwd: &Path, rab_home: &Path) -> PathBuf {
    match scope {
        McpScope::User => rab_home.join("mcp.json"),
        McpScope::Project => cwd.join(".mcp.json"),
    }
}

/// Every file servers are read from, in precedence order (the first to define a name
/// wins), with the scope `remove` would name it by.
fn files(cwd: &Path, rab_home: &Path) -> Vec<(PathBuf, &'static str)> {
    vec![
        (cwd.join(".rab/mcp.json"), "project (rab's own file)"),
        (cwd.join(".mcp.json"), "project"),
        (rab_home.join("mcp.json"), "user"),
    ]
}

fn read(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(format!("{}: not a JSON object", path.display())),
            Err(e) => Err(format!("{}: {e}", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The servers object of a file (`mcpServers`, or VS Code's `servers`).
fn servers(map: &Map<String, Value>) -> Option<&Map<String, Value>> {
    map.get("mcpServers").or_else(|| map.get("servers")).and_then(Value::as_object)
}

fn write(path: &Path, map: &Map<String, Value>) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(map).map_err(|e| e.to_string())?;
    text.push('\n');
    rab_tools::atomic_write::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    let private = std::fs::Permissions::from_mode(0o600);
    std::fs::set_permissions(path, private)
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))
}

/// `KEY=VALUE` (env) or `Name: value` (headers) pairs as an object.
fn pairs(list: &[String], sep: char, what: &str) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for item in list {
        let Some((k, v)) = item.split_once(sep) else {
            return Err(format!(
                "{what} {item:?} has no '{sep}': write it as {}",
                match sep {
                    '=' => "KEY=VALUE",
                    _ => "\"Name: value\"",
                }
            ));
        };
        out.insert(k.trim().to_owned(), Value::String(v.trim().to_owned()));
    }
    Ok(out)
}

/// The entry `add` writes.
fn entry(args: &McpAddArgs) -> Result<Value, String> {
    match args.transport.as_str() {
        "stdio" => {
            let (command, rest) = args.target.split_first().ok_or("give the server's command")?;
            let mut e = json!({"command": command, "args": rest});
            let env = pairs(&args.env, '=', "the variable")?;
            if !env.is_empty() {
                e["env"] = Value::Object(env);
            }
            Ok(e)
        }
        kind @ ("http" | "sse") => {
            let [url] = args.target.as_slice() else {
                return Err(format!(
                    "an {kind} server takes one URL: rab mcp add --transport {kind} NAME URL"
                ));
            };
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(format!("{url:?} is not an http(s) URL"));
            }
            let mut e = json!({"type": kind, "url": url});
            let headers = pairs(&args.header, ':', "the header")?;
            if !headers.is_empty() {
                e["headers"] = Value::Object(headers);
            }
            Ok(e)
        }
        other => Err(format!("unknown transport {other:?}: stdio, http or sse")),
    }
}

/// `rab mcp add`.
pub fn add(args: &McpAddArgs, cwd: &Path, rab_home: &Path) -> u8 {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if args.name.is_empty() || !args.name.chars().all(valid) || args.name.contains("__") {
        return fail(
            EXIT_USAGE,
            &format!(
                "{:?} cannot name a server: use letters, digits, '-' and '_' (no \"__\"), as its \
                 tools are named mcp__NAME__TOOL",
                args.name
            ),
        );
    }
    let path = file_of(args.scope, cwd, rab_home);
    let result = entry(args).and_then(|e| {
        let mut map = read(&path)?;
        let key = if map.contains_key("servers") && !map.contains_key("mcpServers") {
            "servers"
        } else {
            "mcpServers"
        };
        let list = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
        let Some(list) = list.as_object_mut() else {
            return Err(format!("{}: \"{key}\" is not an object", path.display()));
        };
        if list.contains_key(&args.name) {
            return Err(format!(
                "{} already has a server {:?}: `rab mcp remove {}` first to replace it",
                path.display(),
                args.name,
                args.name
            ));
        }
        list.insert(args.name.clone(), e);
        write(&path, &map)
    });
    match result {
        Ok(()) => {
            outln!("Added MCP server {} to {}", args.name, path.display());
            if args.scope == McpScope::Project {
                outln!("(a project's servers start once the folder is trusted: `rab trust`)");
            }
            EXIT_OK
        }
        Err(e) => fail(EXIT_USAGE, &e),
    }
}

/// `rab mcp list`.
pub fn list(cwd: &Path, rab_home: &Path) -> u8 {
    let mut seen: Vec<String> = Vec::new();
    for (path, scope) in files(cwd, rab_home) {
        let map = match read(&path) {
            Ok(m) => m,
            Err(e) => return fail(EXIT_USAGE, &e),
        };
        for (name, e) in servers(&map).into_iter().flatten() {
            let shadowed = if seen.contains(name) { " (not used: defined above)" } else { "" };
            outln!("{name}: {} [{scope}: {}]{shadowed}", summary(e), path.display());
            seen.push(name.clone());
        }
    }
    if seen.is_empty() {
        outln!("No MCP servers. Add one: rab mcp add NAME -- COMMAND [ARGS…]");
    }
    EXIT_OK
}

/// `rab mcp get NAME`.
pub fn get(name: &str, cwd: &Path, rab_home: &Path) -> u8 {
    for (path, scope) in files(cwd, rab_home) {
        let map = match read(&path) {
            Ok(m) => m,
            Err(e) => return fail(EXIT_USAGE, &e),
        };
        if let Some(e) = servers(&map).and_then(|s| s.get(name)) {
            outln!("{name} [{scope}: {}]", path.display());
            outln!("{}", serde_json::to_string_pretty(e).unwrap_or_default());
            return EXIT_OK;
        }
    }
    fail(EXIT_USAGE, &format!("no MCP server {name:?} here; `rab mcp list` shows them"))
}

/// `rab mcp remove NAME [--scope S]`.
pub fn remove(name: &str, scope: Option<McpScope>, cwd: &Path, rab_home: &Path) -> u8 {
    let mut holders = Vec::new();
    for (path, _) in files(cwd, rab_home) {
        if scope.is_some_and(|s| file_of(s, cwd, rab_home) != path) {
            continue;
        }
        match read(&path) {
            Ok(map) if servers(&map).is_some_and(|s| s.contains_key(name)) => {
                holders.push((path, map));
            }
            Ok(_) => {}
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    }
    let (path, mut map) = match holders.len() {
        0 => {
            return fail(
                EXIT_USAGE,
                &format!("no MCP server {name:?} here; `rab mcp list` shows them"),
            );
        }
        1 => holders.remove(0),
        _ => {
            let where_: Vec<String> =
                holders.iter().map(|(p, _)| p.display().to_string()).collect();
            return fail(
                EXIT_USAGE,
                &format!(
                    "{name:?} is in {}: say which with --scope user or --scope project",
                    where_.join(" and ")
                ),
            );
        }
    };
    for key in ["mcpServers", "servers"] {
        if let Some(list) = map.get_mut(key).and_then(Value::as_object_mut) {
            list.remove(name);
        }
    }
    match write(&path, &map) {
        Ok(()) => {
            outln!("Removed MCP server {name} from {}", path.display());
            EXIT_OK
        }
        Err(e) => fail(EXIT_USAGE, &e),
    }
}

/// The command line or URL of an entry.
fn summary(e: &Value) -> String {
    if let Some(url) = e.get("url").and_then(Value::as_str) {
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("http");
        return format!("{kind}: {url}");
    }
    let command = e.get("command").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<&str> = e
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let disabled =
        if e.get("disabled").and_then(Value::as_bool) == Some(true) { " (disabled)" } else { "" };
    format!("stdio: {command} {}{disabled}", args.join(" ")).trim_end().to_owned()
}
