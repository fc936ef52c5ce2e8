//! The user's own "always" answers: the rules they allowed for good in a project, kept in
//! rab's home (`~/.rab/agent/answers.json`), keyed by the project's real path. They are
//! the user's, not the repository's: honoured whether or not the folder is trusted,
//! never listed as something the folder brings, and out of the repository's reach (a
//! checkout cannot plant an answer; rab's home is a protected path, hidden from
//! commands).

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::Error;
use crate::safety::{PermissionSettings, SafetyLayer, Scope};

/// The rules answered "always" in `project` (a real path), as a layer of their own.
pub fn answers_layer(file: &Path, project: &Path) -> Result<Option<SafetyLayer>, Error> {
    let root = read(file)?;
    let key = project.display().to_string();
    let Some(rules) = root.get("projects").and_then(|p| p.get(&key)).and_then(|p| p.get("allow"))
    else {
        return Ok(None);
    };
    let allow: Vec<String> = serde_json::from_value(rules.clone()).map_err(|e| Error::Invalid {
        path: file.to_owned(),
        message: format!("projects.{key}.allow: {e}"),
    })?;
    Ok(Some(SafetyLayer {
        scope: Scope::Answers,
        source: file.to_owned(),
        permissions: PermissionSettings { allow, ..PermissionSettings::default() },
        hooks: crate::HookSettings::new(),
    }))
}

/// Remembers `rule` as answered "always" in `project` (a real path); written atomically
/// and readable by the user only.
pub fn add_answer(file: &Path, project: &Path, rule: &str) -> Result<(), Error> {
    let mut root = read(file)?;
    let projects = root.entry("projects").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(projects) = projects else {
        return Err(Error::Invalid {
            path: file.to_owned(),
            message: "\"projects\" must be an object".into(),
        });
    };
    let entry = projects
        .entry(project.display().to_string())
        .or_insert_with(|| serde_json::json!({"allow": []}));
    let Some(allow) = entry.get_mut("allow").and_then(Value::as_array_mut) else {
        return Err(Error::Invalid {
            path: file.to_owned(),
            message: "an answer's \"allow\" must be a list".into(),
        });
    };
    if !allow.iter().any(|r| r == rule) {
        allow.push(Value::String(rule.to_owned()));
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io { path: dir.to_owned(), source: e })?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    crate::safety::write_file_atomic(file, format!("{text}\n").as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600));
    }
    Ok(())
}

fn read(file: &Path) -> Result<Map<String, Value>, Error> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(Error::Io { path: file.to_owned(), source: e }),
    };
    match serde_json::from_str(&text).map_err(|e| Error::parse(file, &e))? {
        Value::Object(map) => Ok(map),
        _ => Err(Error::Invalid {
            path: file.to_owned(),
            message: "answers must be a JSON object".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_project_and_read_back_as_a_layer_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent/answers.json");
        let (a, b) = (Path::new("/w/a"), Path::new("/w/b"));
        assert_eq!(answers_layer(&file, a).unwrap(), None);
        add_answer(&file, a, "bash(make:*)").unwrap();
        add_answer(&file, a, "bash(make:*)").unwrap();
        add_answer(&file, b, "edit(src/**)").unwrap();
        let layer = answers_layer(&file, a).unwrap().unwrap();
        assert_eq!(layer.scope, Scope::Answers);
        assert_eq!(layer.permissions.allow, ["bash(make:*)"]);
        assert_eq!(answers_layer(&file, b).unwrap().unwrap().permissions.allow, ["edit(src/**)"]);
        std::fs::write(&file, "[1]").unwrap();
        assert!(answers_layer(&file, a).is_err());
    }
}
