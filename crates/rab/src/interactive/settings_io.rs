//! The settings editor's side of the UI: opening it over the settings in effect (with
//! the themes there are), checking and saving a value before anything is written, and
//! applying what was saved.

use rab_core::runtime::Op;

use super::overlay::Overlay;
use super::{Ui, load_named_theme, settings_editor};

impl Ui {
    /// After the settings editor closes: a reload applies what was saved, when no run
    /// goes on (else the user is told to /reload).
    pub(super) fn settings_closed(&mut self) {
        if !std::mem::take(&mut self.settings_changed) {
            return;
        }
        if self.app.running.is_some() {
            self.app.info("Saved; /reload applies the changes once the agent is done.");
        } else {
            self.line("/reload");
        }
    }

    pub(super) fn open_settings(&mut self) {
        // The settings in effect: the files as loaded, with what was saved since.
        let current = serde_json::to_value(&self.app.launch.settings).unwrap_or_default();
        let mut themes = vec!["dark".to_owned(), "light".to_owned()];
        let dir = self.app.launch.paths.home().join("themes");
        let mut own: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
            .filter(|name| !themes.contains(name))
            .collect();
        own.sort();
        themes.extend(own);
        self.app.overlay = Some(Overlay::settings(current, themes));
    }

    /// Saves a setting from `/settings` and applies what can apply at once (theme,
    /// thinking level); the rest takes effect with a reload when the editor closes.
    pub(super) fn save_setting(
        &mut self,
        key: &str,
        value: serde_json::Value,
        scope: settings_editor::Scope,
    ) {
        use settings_editor::Scope;
        let launch = &self.app.launch;
        let path = match scope {
            Scope::Global => launch.paths.settings_file(),
            Scope::Project => rab_config::Paths::project_settings_file(&launch.cwd),
            Scope::Local => rab_config::Paths::project_local_settings_file(&launch.cwd),
        };
        // Checked before anything is written: the UI must start with what is saved.
        let refused = if scope != Scope::Global && settings_editor::refused_for_project(key, &value)
        {
            Some(format!(
                "{key} = {value} is not allowed in a project's file: a repository must not \
                 switch off every question by itself; save it to your global file (Tab)"
            ))
        } else if key == "theme" && !value.is_null() {
            load_named_theme(launch, value.as_str().unwrap_or_default())
                .err()
                .map(|e| format!("not saved, the theme does not load: {e}"))
        } else {
            None
        };
        let outcome = match refused {
            Some(message) => Err(rab_config::Error::Invalid { path: path.clone(), message }),
            None => rab_config::set_setting(&path, key, value.clone()),
        };
        let message = match &outcome {
            Ok(()) => {
                let shown =
                    if value.is_null() { "(default)".to_owned() } else { value.to_string() };
                (true, format!("{key} = {shown} saved to {}", path.display()))
            }
            Err(e) => (false, e.to_string()),
        };
        if let Some(Overlay::Settings(editor)) = &mut self.app.overlay {
            if outcome.is_ok() {
                editor.saved(key, value.clone());
            }
            editor.message = Some(message);
        }
        if outcome.is_err() {
            return;
        }
        match key {
            "theme" => {
                let name = value.as_str().unwrap_or("dark");
                match load_named_theme(&self.app.launch, name) {
                    Ok(t) => self.app.theme = t,
                    Err(e) => self.app.error(&e),
                }
            }
            "defaultThinkingLevel" => {
                if let Some(level) = value.as_str().and_then(rab_ai::ThinkingLevel::parse) {
                    self.state.thinking_level = level;
                    self.submit(Op::SetThinking(level));
                    self.app.update_footer(&self.state);
                }
            }
            _ => self.settings_changed = true,
        }
    }
}
