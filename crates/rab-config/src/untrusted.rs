//! What an untrusted project's settings may do: key by key, the one table
//! ([`TABLE`], shown in docs/permissions.md) of how a value from `.rab/settings.json`,
//! `.rab/settings.local.json` or `.claude/settings.json` is taken while the folder is
//! not trusted. It may only make rab safer or cheaper than the user's own settings:
//! lower a limit, add an exclusion or a deny rule, turn a guard on, choose a stricter
//! mode. What would widen access, run code, send prompts elsewhere or spend more waits
//! for trust, and is named in [`crate::LoadedSettings::ignored`]. A trusted project's
//! settings are taken as they are (except `channels`, which no project sets).

use serde_json::{Map, Value};

/// How an untrusted project's value for a key is taken.
#[derive(Clone, Copy, Debug)]
pub enum Untrusted {
    /// It changes nothing about what rab may do or spend: taken.
    Taken,
    /// It widens what rab may do, runs code, or sends prompts elsewhere: ignored.
    Ignored,
    /// A limit: taken when lower than the user's.
    Lower,
    /// A list of exclusions or deny rules: added to the user's, never replacing them.
    Added,
    /// A list of what may be used: only the names the user's list has too.
    Narrowed,
    /// A guard: taken when it turns it on, never off.
    OnlyOn,
    /// A permission: taken when it turns it off, never on.
    OnlyOff,
    /// A mode: taken when it is at least as strict as the user's (or, when the user
    /// chose none, as the default given).
    Stricter(fn(&str) -> u8, &'static str),
}

/// Every settings key an untrusted project may write, with how it is taken. A nested
/// key (`sandbox.mode`) is taken on its own; the others of its object as their
/// parent's row says (none is left out: a test walks every key).
pub const TABLE: [(&str, Untrusted); 37] = [
    ("defaultProvider", Untrusted::Ignored),
    ("defaultModel", Untrusted::Ignored),
    ("fallbackModels", Untrusted::Ignored),
    ("defaultThinkingLevel", Untrusted::Stricter(thinking_rank, "off")),
    ("tools", Untrusted::Narrowed),
    ("excludeTools", Untrusted::Added),
    ("editTool", Untrusted::Taken),
    ("maxTurns", Untrusted::Lower),
    ("maxBudgetUsd", Untrusted::Lower),
    ("temperature", Untrusted::Taken),
    ("steeringMode", Untrusted::Taken),
    ("followUpMode", Untrusted::Taken),
    ("theme", Untrusted::Taken),
    ("questionTimeoutSecs", Untrusted::Taken),
    ("retry", Untrusted::Taken),
    ("timeouts", Untrusted::Taken),
    ("compaction", Untrusted::Taken),
    ("loopDetection.enabled", Untrusted::OnlyOn),
    ("loopDetection.callRepeats", Untrusted::Lower),
    ("loopDetection.textRepeats", Untrusted::Lower),
    ("checkpoints.enabled", Untrusted::OnlyOn),
    ("checkpoints.maxAgeDays", Untrusted::Taken),
    ("checkpoints.maxSizeMb", Untrusted::Taken),
    ("permissions.allow", Untrusted::Ignored),
    ("permissions.ask", Untrusted::Added),
    ("permissions.deny", Untrusted::Added),
    ("permissions.defaultMode", Untrusted::Stricter(mode_rank, "default")),
    ("permissions.additionalDirectories", Untrusted::Ignored),
    ("hooks", Untrusted::Ignored),
    ("sandbox.mode", Untrusted::Stricter(sandbox_rank, "workspace-write")),
    ("sandbox.network", Untrusted::OnlyOff),
    ("sandbox.allowPrivateNetwork", Untrusted::OnlyOff),
    ("sandbox.allowEnv", Untrusted::Ignored),
    ("secretFirewall.enabled", Untrusted::OnlyOn),
    ("toolSearch", Untrusted::Taken),
    ("skillsAsTools", Untrusted::Taken),
    ("routeAssistantCommands", Untrusted::OnlyOff),
];

// Unknown names rank as the strictest: they are kept, and rejected with a clear error
// where the value is read.

/// Less thinking is cheaper.
fn thinking_rank(level: &str) -> u8 {
    match level {
        "minimal" => 1,
        "low" => 2,
        "medium" => 3,
        "high" | "xhigh" => 4,
        _ => 0,
    }
}

/// Permission modes from the strictest.
fn mode_rank(mode: &str) -> u8 {
    match mode {
        "default" => 1,
        "accept-edits" | "acceptEdits" => 2,
        "yolo" | "bypass" | "bypassPermissions" => 3,
        _ => 0,
    }
}

/// Sandbox modes from the strictest.
fn sandbox_rank(mode: &str) -> u8 {
    match mode {
        "workspace-write" => 1,
        "off" => 2,
        _ => 0,
    }
}

/// Takes out of an untrusted project's settings `map` what [`TABLE`] does not let it
/// change, and names it in `ignored` (prefixed with `file`). `before`: the settings as
/// they stand without this file (the user's, and defaults).
pub(crate) fn restrict(
    file: &str,
    map: &mut Map<String, Value>,
    before: &Map<String, Value>,
    ignored: &mut Vec<String>,
) {
    for (key, how) in TABLE {
        let Some(value) = take(map, key) else { continue };
        let user = get(before, key);
        match decide(how, &value, user) {
            Ok(taken) => put(map, key, taken),
            Err(why) => ignored.push(format!("{file}: {}", describe(key, &value, &why))),
        }
    }
}

/// The value taken, or why not.
fn decide(how: Untrusted, value: &Value, user: Option<&Value>) -> Result<Value, String> {
    let is_empty = matches!(value, Value::Null)
        || value.as_array().is_some_and(Vec::is_empty)
        || value.as_object().is_some_and(Map::is_empty);
    match how {
        Untrusted::Taken => Ok(value.clone()),
        Untrusted::Ignored if is_empty || value == &Value::Bool(false) => Ok(value.clone()),
        Untrusted::Ignored => Err("not until the folder is trusted".into()),
        Untrusted::Lower => match (value.as_f64(), user.and_then(Value::as_f64)) {
            (Some(v), Some(u)) if v > u => Err(format!("above yours ({u})")),
            _ => Ok(value.clone()),
        },
        Untrusted::Added => {
            let mut all: Vec<Value> = user.and_then(Value::as_array).cloned().unwrap_or_default();
            for v in value.as_array().into_iter().flatten() {
                if !all.contains(v) {
                    all.push(v.clone());
                }
            }
            Ok(Value::Array(all))
        }
        Untrusted::Narrowed => match user.and_then(Value::as_array) {
            None => Ok(value.clone()),
            Some(allowed) => {
                let kept: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|v| allowed.contains(v))
                    .cloned()
                    .collect();
                if kept.len() == value.as_array().map_or(0, Vec::len) {
                    Ok(Value::Array(kept))
                } else {
                    Err(format!(
                        "names tools your own list does not ({})",
                        shown(&Value::Array(allowed.clone()))
                    ))
                }
            }
        },
        Untrusted::OnlyOn if value == &Value::Bool(true) => Ok(value.clone()),
        Untrusted::OnlyOff if value == &Value::Bool(false) => Ok(value.clone()),
        Untrusted::OnlyOn => Err("only turning it on is taken until the folder is trusted".into()),
        Untrusted::OnlyOff => {
            Err("only turning it off is taken until the folder is trusted".into())
        }
        Untrusted::Stricter(rank, default) => {
            let v = value.as_str().unwrap_or_default();
            let u = user.and_then(Value::as_str).unwrap_or(default);
            if rank(v) > rank(u) {
                Err(format!("looser than yours (\"{u}\")"))
            } else {
                Ok(value.clone())
            }
        }
    }
}

/// What was ignored, in the words the trust question uses for the common ones.
fn describe(key: &str, value: &Value, why: &str) -> String {
    let words = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
            .collect()
    };
    let text = value.as_str().unwrap_or_default();
    match key {
        "permissions.allow" => format!("allow rules {}", words(value).join(", ")),
        "permissions.defaultMode" => format!("permission mode \"{text}\" ({why})"),
        "permissions.additionalDirectories" => format!("additional directories {value}"),
        "hooks" => {
            let events: Vec<&String> =
                value.as_object().map(|o| o.keys().collect()).unwrap_or_default();
            let names: Vec<&str> = events.iter().map(|e| e.as_str()).collect();
            // Each with the command it would run.
            let runs: Vec<String> = events
                .iter()
                .flat_map(|event| {
                    let groups = value[event.as_str()].as_array().cloned().unwrap_or_default();
                    groups.into_iter().flat_map(move |g| {
                        let matcher = g["matcher"].as_str().unwrap_or_default().to_owned();
                        let event = event.to_string();
                        g["hooks"].as_array().cloned().unwrap_or_default().into_iter().map(
                            move |h| {
                                let what = h["command"]
                                    .as_str()
                                    .map(|c| format!("runs `{c}`"))
                                    .or_else(|| h["url"].as_str().map(|u| format!("calls {u}")))
                                    .unwrap_or_else(|| format!("is {}", shown(&h)));
                                match matcher.as_str() {
                                    "" | "*" => format!("{event} {what}"),
                                    m => format!("{event}({m}) {what}"),
                                }
                            },
                        )
                    })
                })
                .collect();
            format!("hooks ({}): {}", names.join(", "), runs.join("; "))
        }
        "sandbox.mode" => format!("sandbox mode \"{text}\" ({why})"),
        "sandbox.network"
        | "sandbox.allowPrivateNetwork"
        | "secretFirewall.enabled"
        | "routeAssistantCommands" => format!("{key}: {value}"),
        _ => format!("{key} {}: {why}", shown(value)),
    }
}

/// A value as written, shortened.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

/// The value at a dotted key.
fn get<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    match key.split_once('.') {
        Some((head, rest)) => get(map.get(head)?.as_object()?, rest),
        None => map.get(key),
    }
}

/// Removes and returns the value at a dotted key.
fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    match key.split_once('.') {
        Some((head, rest)) => take(map.get_mut(head)?.as_object_mut()?, rest),
        None => map.remove(key),
    }
}

/// Puts `value` at a dotted key.
fn put(map: &mut Map<String, Value>, key: &str, value: Value) {
    match key.split_once('.') {
        Some((head, rest)) => {
            let inner = map.entry(head).or_insert_with(|| Value::Object(Map::new()));
            if let Some(inner) = inner.as_object_mut() {
                put(inner, rest, value);
            }
        }
        None => {
            map.insert(key.to_owned(), value);
        }
    }
}

#[cfg(test)]
#[path = "untrusted_tests.rs"]
mod tests;
