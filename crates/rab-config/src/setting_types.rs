//! Settings whose value has the wrong type, said in plain words with the key's path:
//! `maxTurns: expected a whole number (0 or more), got "five"` rather than serde's
//! `invalid type: string "five", expected u32`.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The first key of `map` whose value does not fit `T`, as `path: what is wrong`;
/// `None` when each key fits alone (the problem, if any, is in how they combine).
pub(crate) fn explain<T: DeserializeOwned>(map: &Map<String, Value>) -> Option<String> {
    for (key, value) in map {
        let path = vec![key.clone()];
        if let Err(e) = fits::<T>(&path, value) {
            return Some(narrow::<T>(path, value, e));
        }
    }
    None
}

/// Whether a settings object holding only `value` at `path` deserialises.
pub(crate) fn fits<T: DeserializeOwned>(
    path: &[String],
    value: &Value,
) -> Result<(), serde_json::Error> {
    let mut wrapped = value.clone();
    for key in path.iter().rev() {
        wrapped = Value::Object(Map::from_iter([(key.clone(), wrapped)]));
    }
    serde_json::from_value::<T>(wrapped).map(|_| ())
}

/// Goes down into objects while one child alone still fails.
fn narrow<T: DeserializeOwned>(path: Vec<String>, value: &Value, err: serde_json::Error) -> String {
    if let Value::Object(children) = value {
        for (key, child) in children {
            let mut deeper = path.clone();
            deeper.push(key.clone());
            if let Err(e) = fits::<T>(&deeper, child) {
                return narrow::<T>(deeper, child, e);
            }
        }
    }
    format!("{}: {}", path.join("."), plain(&err.to_string()))
}

/// serde's wording in the user's.
pub(crate) fn plain(message: &str) -> String {
    if let Some(rest) =
        message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "))
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        return format!("expected {}, got {}", expected_words(expected), got_words(got));
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        let got = got.trim_matches('`');
        let expected = expected.replace('`', "\"");
        return format!("unknown value \"{got}\"; expected {expected}");
    }
    if let Some(rest) = message.strip_prefix("unknown field ")
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        let got = got.trim_matches('`');
        return format!("unknown setting \"{got}\"; known: {}", expected.replace('`', "\""));
    }
    message.to_owned()
}

fn expected_words(expected: &str) -> String {
    let expected = expected.trim();
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)".to_owned(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a sequence" => "a list ([…])".to_owned(),
        "a string" => "a string (in quotes)".to_owned(),
        "a map" => "an object ({…})".to_owned(),
        e if e.starts_with("struct ") => "an object ({…})".to_owned(),
        e => e.replace('`', "\""),
    }
}

fn got_words(got: &str) -> String {
    let value = |kind: &str| got.strip_prefix(kind).map(|v| v.trim().trim_matches('`').to_owned());
    if let Some(s) = got.strip_prefix("string ") {
        return s.to_owned();
    }
    for kind in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = value(kind) {
            return v;
        }
    }
    match got {
        "sequence" => "a list".to_owned(),
        "map" => "an object".to_owned(),
        "null" | "unit value" => "null".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_wording_becomes_plain() {
        assert_eq!(
            plain(r#"invalid type: string "five", expected u32"#),
            r#"expected a whole number (0 or more), got "five""#
        );
        assert_eq!(
            plain("invalid type: integer `5`, expected a boolean"),
            "expected true or false, got 5"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u64"),
            "expected a whole number (0 or more), got -1"
        );
        assert_eq!(
            plain("invalid type: map, expected a sequence"),
            "expected a list ([…]), got an object"
        );
        assert_eq!(
            plain("unknown variant `loud`, expected `one-at-a-time` or `all`"),
            r#"unknown value "loud"; expected "one-at-a-time" or "all""#
        );
    }
}
