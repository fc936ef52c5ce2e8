//! Settings profiles: `"profiles": {"review": {…settings keys…}}` in any settings file, a
//! named overlay applied over the files (and under the command line) when chosen with
//! `--profile NAME` or `/profile NAME`.
//!
//! Each file's part of a profile is checked like the file itself, and keeps the file's
//! scope: an untrusted project's profile widens nothing, as its file would not.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Error;
use crate::safety::Scope;

/// The profiles found while the files are read, and the chosen one's overlays.
pub(crate) struct Overlays<'a> {
    wanted: Option<&'a str>,
    names: Vec<String>,
    found: Vec<(Scope, PathBuf, Map<String, Value>)>,
}

impl<'a> Overlays<'a> {
    /// Looking for `wanted` (none: only the names are gathered).
    pub(crate) fn new(wanted: Option<&'a str>) -> Self {
        Self { wanted, names: Vec::new(), found: Vec::new() }
    }

    /// Takes `profiles` out of one file's `map`, checking each profile like a settings
    /// file, and keeps the wanted one's overlay.
    pub(crate) fn take(
        &mut self,
        scope: Scope,
        path: &Path,
        map: &mut Map<String, Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), Error> {
        let Some(value) = map.remove("profiles") else { return Ok(()) };
        let invalid = |message: String| Error::Invalid { path: path.to_owned(), message };
        let Value::Object(profiles) = value else {
            return Err(invalid(
                "\"profiles\" must be an object of named settings overlays, e.g. \
                 {\"review\": {\"defaultModel\": \"claude-opus-5-5\"}}"
                    .to_owned(),
            ));
        };
        for (name, overlay) in profiles {
            let Value::Object(mut overlay) = overlay else {
                return Err(invalid(format!(
                    "profiles.{name} must be an object of settings keys, e.g. \
                     {{\"defaultModel\": \"claude-opus-5-5\"}}"
                )));
            };
            if overlay.contains_key("profiles") {
                return Err(invalid(format!("profiles.{name}: a profile cannot hold profiles")));
            }
            let strictness = match scope {
                Scope::Global => crate::setting_check::Strictness::Own,
                _ => crate::setting_check::Strictness::Project,
            };
            let at = format!("profiles.{name}.");
            crate::setting_check::check_keys(path, &mut overlay, strictness, &at, warnings)?;
            if !self.names.contains(&name) {
                self.names.push(name.clone());
            }
            if self.wanted == Some(name.as_str()) {
                self.found.push((scope, path.to_owned(), overlay));
            }
        }
        Ok(())
    }

    /// The wanted profile's overlays in file order, and every profile's name; an error
    /// naming the known profiles when the wanted one is in no file.
    pub(crate) fn finish(self) -> Result<Chosen, Error> {
        if let Some(wanted) = self.wanted
            && self.found.is_empty()
        {
            let known = if self.names.is_empty() {
                "no profiles are defined (\"profiles\" in settings.json)".to_owned()
            } else {
                format!("the profiles are: {}", self.names.join(", "))
            };
            return Err(Error::UnknownProfile { name: wanted.to_owned(), known });
        }
        Ok(Chosen { overlays: self.found, names: self.names })
    }
}

/// What [`Overlays::finish`] found.
pub(crate) struct Chosen {
    /// The chosen profile's part in each file that has one: scope, file, overlay.
    pub overlays: Vec<(Scope, PathBuf, Map<String, Value>)>,
    /// Every profile's name, in the order first seen.
    pub names: Vec<String>,
}
