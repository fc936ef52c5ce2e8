//! Checking one settings file before it is layered. An unknown key, at any depth, is a
//! warning naming the file, the key and the nearest known key, and the key is left
//! out: a teammate's newer rab, the seeds' example settings or a pi settings file with
//! pi-only keys must not stop anyone's rab from starting. A known key with a value of the
//! wrong kind is an error in the user's own file (they can fix it, and running without
//! it could loosen what they meant) and, in a project's file, a warning with the key
//! left out.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Error;
use crate::setting_types::{explain, fits, plain};
use crate::settings::{KNOWN_KEYS, Settings};

/// Settings of pi's (`@mariozechner/pi-coding-agent`) that rab has no use for: a pi
/// settings file copied over loads with one warning naming them, not one each.
const PI_ONLY_KEYS: &[&str] = &[
    "lastChangelogVersion",
    "transport",
    "branchSummary",
    "hideThinkingBlock",
    "shellPath",
    "quietStartup",
    "shellCommandPrefix",
    "npmCommand",
    "collapseChangelog",
    "enableInstallTelemetry",
    "packages",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "enableSkillCommands",
    "terminal",
    "images",
    "enabledModels",
    "doubleEscapeAction",
    "treeFilterMode",
    "thinkingBudgets",
    "editorPaddingX",
    "autocompleteMaxVisible",
    "showHardwareCursor",
    "markdown",
    "warnings",
    "sessionDir",
];

/// Whose file is checked, which decides what a bad value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// The user's own file: a bad value is an error.
    Own,
    /// A project's file: a bad value is a warning and the key is left out.
    Project,
}

/// Leaves unknown keys (a warning each) and, for a project's file, keys with bad values
/// (a warning each) out of `map`; an error for a bad value in the user's own file. `at`
/// prefixes the key paths named (`profiles.ci.` for a profile's overlay).
pub(crate) fn check_keys(
    path: &Path,
    map: &mut Map<String, Value>,
    strictness: Strictness,
    at: &str,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    let file = path.display();
    // pi's highest thinking level, above rab's.
    if map.get("defaultThinkingLevel").and_then(Value::as_str) == Some("xhigh") {
        map.insert("defaultThinkingLevel".into(), Value::from("high"));
        warnings.push(format!(
            "{file}: {at}defaultThinkingLevel \"xhigh\" (pi's) is read as \"high\", rab's highest"
        ));
    }
    let pi_only: Vec<String> = map
        .keys()
        .filter(|k| !KNOWN_KEYS.contains(&k.as_str()) && PI_ONLY_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    if !pi_only.is_empty() {
        for key in &pi_only {
            map.remove(key);
        }
        warnings.push(format!(
            "{file}: pi's settings rab does not use, ignored: {}",
            pi_only.iter().map(|k| format!("{at}{k}")).collect::<Vec<_>>().join(", ")
        ));
    }
    let unknown: Vec<String> =
        map.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())).cloned().collect();
    for key in unknown {
        map.remove(&key);
        warnings.push(format!(
            "{file}: unknown setting \"{at}{key}\"{}; ignored (docs/settings.md lists the \
             known ones)",
            hint(&key, KNOWN_KEYS.iter().copied())
        ));
    }
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let Some(value) = map.get_mut(&key) else { continue };
        let mut notes = Vec::new();
        let bad = prune(std::slice::from_ref(&key), value, strictness, &mut notes);
        warnings.extend(notes.into_iter().map(|n| format!("{file}: {at}{n}")));
        if let Err(message) = bad {
            if strictness == Strictness::Own {
                return Err(invalid(path, &format!("{at}{message}; see docs/settings.md")));
            }
            map.remove(&key);
            warnings.push(format!("{file}: {at}{message}; ignored (see docs/settings.md)"));
        }
    }
    // Each key fits alone; what is left is how they combine.
    if let Err(e) = serde_json::from_value::<Settings>(Value::Object(map.clone())) {
        let what = explain::<Settings>(map).unwrap_or_else(|| plain(&e.to_string()));
        return Err(invalid(path, &format!("{at}{what}; see docs/settings.md")));
    }
    Ok(())
}

fn invalid(path: &Path, message: &str) -> Error {
    Error::Invalid { path: path.to_owned(), message: message.to_owned() }
}

/// Makes `value` at `path` fit by leaving out unknown keys under it and, in a project's
/// file, bad values under it (a note each, in `notes`); the path and what is wrong when
/// `value` itself does not fit, so the caller leaves out the least it can.
fn prune(
    path: &[String],
    value: &mut Value,
    strictness: Strictness,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Err(first) = fits::<Settings>(path, value) else { return Ok(()) };
    if let Value::Object(children) = value {
        let keys: Vec<String> = children.keys().cloned().collect();
        for key in keys {
            let mut deeper = path.to_vec();
            deeper.push(key.clone());
            let Some(child) = children.get_mut(&key) else { continue };
            let Err(e) = fits::<Settings>(&deeper, child) else { continue };
            if let Some((field, expected)) = unknown_field(&e.to_string())
                && field == key
            {
                children.remove(&key);
                notes.push(format!(
                    "unknown setting \"{}\"{}; ignored (docs/settings.md lists the known ones)",
                    deeper.join("."),
                    hint(&key, expected.iter().map(String::as_str))
                ));
                continue;
            }
            if let Err(message) = prune(&deeper, child, strictness, notes) {
                if strictness == Strictness::Own {
                    return Err(message);
                }
                children.remove(&key);
                notes.push(format!("{message}; ignored (see docs/settings.md)"));
            }
        }
        return match fits::<Settings>(path, value) {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("{}: {}", path.join("."), plain(&e.to_string()))),
        };
    }
    Err(format!("{}: {}", path.join("."), plain(&first.to_string())))
}

/// The field and the expected ones of serde's "unknown field `x`, expected `a` or `b`".
fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let expected = rest.split('`').skip(1).step_by(2).map(str::to_owned).collect();
    Some((field.to_owned(), expected))
}

/// `; did you mean "x"?` for the known key nearest to `key`, if one is near (else
/// nothing): for any name the user may have mistyped (a key, a tool in a rule).
pub fn hint<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> String {
    match known.min_by_key(|k| edit_distance(key, k)) {
        Some(c) if edit_distance(key, c) <= key.len().max(3) / 2 => {
            format!("; did you mean \"{c}\"?")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance, for suggesting the key meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str, strictness: Strictness) -> (Result<Map<String, Value>, String>, String) {
        let Value::Object(mut map) = serde_json::from_str(json).unwrap() else { panic!() };
        let mut warnings = Vec::new();
        let r = check_keys(Path::new("f.json"), &mut map, strictness, "", &mut warnings)
            .map(|()| map)
            .map_err(|e| e.to_string());
        (r, warnings.join("\n"))
    }

    #[test]
    fn unknown_keys_anywhere_are_warnings_with_the_nearest_key_and_left_out() {
        let json = r#"{"verbose": false, "maxTurns": 5, "permisions": {},
            "retry": {"maxRetries": 2, "maxRetrys": 9}, "sandbox": {"mode": "read-only", "netwrk": true}}"#;
        for strictness in [Strictness::Own, Strictness::Project] {
            let (map, warnings) = check(json, strictness);
            let map = map.unwrap();
            assert_eq!(map["maxTurns"], 5);
            assert_eq!(map["retry"], serde_json::json!({"maxRetries": 2}));
            assert_eq!(map["sandbox"], serde_json::json!({"mode": "read-only"}));
            for line in [
                "f.json: unknown setting \"verbose\"; ignored",
                "f.json: unknown setting \"permisions\"; did you mean \"permissions\"?",
                "f.json: unknown setting \"retry.maxRetrys\"; did you mean \"maxRetries\"?",
                "f.json: unknown setting \"sandbox.netwrk\"; did you mean \"network\"?",
            ] {
                assert!(warnings.contains(line), "{line} not in {warnings}");
            }
        }
    }

    #[test]
    fn issue_38_the_seeds_example_and_a_pi_settings_file_load() {
        // The rab seed's own example settings.json.
        let seed = r#"{"defaultModel": "deepseek-v4-flash", "defaultThinkingLevel": "high",
            "defaultProvider": "opencode_go", "tools": ["read", "write", "edit", "bash"],
            "excludeTools": [], "theme": "dark", "verbose": false}"#;
        let (map, warnings) = check(seed, Strictness::Own);
        let map = map.unwrap();
        assert_eq!(map["tools"], serde_json::json!(["read", "write", "edit", "bash"]));
        assert!(warnings.contains("unknown setting \"verbose\""), "{warnings}");
        // A pi settings file (pi 0.73): its own keys in one line, xhigh read as high.
        let pi = r#"{"lastChangelogVersion": "0.73.1", "defaultProvider": "anthropic",
            "defaultThinkingLevel": "xhigh", "steeringMode": "all", "theme": "light",
            "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000},
            "hideThinkingBlock": false, "quietStartup": true, "packages": ["npm:@a/b"],
            "enabledModels": ["claude-*"], "sessionDir": "/tmp/x"}"#;
        let (map, warnings) = check(pi, Strictness::Own);
        let map = map.unwrap();
        assert_eq!(map["defaultThinkingLevel"], "high");
        assert_eq!(map["compaction"]["reserveTokens"], 16384);
        assert!(!map.contains_key("packages"));
        let lines: Vec<&str> = warnings.lines().collect();
        assert_eq!(lines.len(), 2, "{warnings}");
        assert!(
            lines[1].ends_with(
                "pi's settings rab does not use, ignored: lastChangelogVersion, \
                 hideThinkingBlock, quietStartup, packages, enabledModels, sessionDir"
            ),
            "{warnings}"
        );
    }

    #[test]
    fn a_bad_value_is_an_error_in_the_users_file_and_left_out_of_a_projects() {
        let json = r#"{"maxTurns": "five", "retry": {"maxRetries": -1}, "theme": "dark"}"#;
        let (own, _) = check(json, Strictness::Own);
        let err = own.unwrap_err();
        assert!(
            err.contains("f.json") && err.contains("maxTurns: expected a whole number"),
            "{err}"
        );
        let (project, warnings) = check(json, Strictness::Project);
        let map = project.unwrap();
        assert!(!map.contains_key("maxTurns") && map["theme"] == "dark", "{map:?}");
        assert_eq!(map["retry"], serde_json::json!({}), "only the bad key goes: {map:?}");
        assert!(warnings.contains("f.json: maxTurns: expected a whole number"), "{warnings}");
        assert!(warnings.contains("retry.maxRetries: expected a whole number"), "{warnings}");
    }
}
