//! `/settings` in the terminal UI: every user-facing setting in a list you can filter by
//! typing, a submenu for each choice, a line editor for numbers and text, and the file
//! it is saved to — global, the project's shared file, or the project's local one (Tab
//! switches). Saving goes through `rab_config::set_setting`, which writes atomically
//! and refuses a value the settings would not load. Values are checked before anything
//! is written: the theme is picked from the built-in ones and `~/.rab/themes`, and a
//! project's file is never offered (nor given) `yolo`. The line editor takes the main
//! editor's editing keys (Ctrl+A/E/K/U/W, arrows, Alt+B/F …).

use rab_tui::keys::Keybindings;
use rab_tui::select::{SelectItem, SelectList, SelectOutcome};
use rab_tui::{Component, RenderCx, Role, Theme, ansi};
use serde_json::Value;

/// What a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `true` / `false`: Enter toggles.
    Bool,
    /// One of these.
    Choice(&'static [&'static str]),
    /// A theme: one of the editor's theme names.
    Theme,
    /// A whole number.
    Int,
    /// A number.
    Number,
    /// Text.
    Text,
    /// A list, typed comma-separated.
    List,
}

/// A setting the editor offers.
pub struct Spec {
    /// Its dotted key, as in settings.json.
    pub key: &'static str,
    /// What it takes.
    pub kind: Kind,
    /// What it does, in a few words.
    pub about: &'static str,
}

const LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high"];
const QUEUE: &[&str] = &["one-at-a-time", "all"];

/// Every setting `/settings` edits (hooks, rule lists and channels are edited in the
/// files: they are lists of structures, and rules deserve a diff).
pub const SPECS: &[Spec] = &[
    Spec {
        key: "theme",
        kind: Kind::Theme,
        about: "terminal UI theme (dark, light, or ~/.rab/themes/NAME.json)",
    },
    Spec {
        key: "defaultThinkingLevel",
        kind: Kind::Choice(LEVELS),
        about: "thinking level at start",
    },
    Spec { key: "defaultProvider", kind: Kind::Text, about: "provider when none is given" },
    Spec { key: "defaultModel", kind: Kind::Text, about: "model when none is given" },
    Spec { key: "fallbackModels", kind: Kind::List, about: "models to fail over to, in order" },
    Spec {
        key: "editTool",
        kind: Kind::Choice(&["edit", "apply_patch"]),
        about: "how every model changes files",
    },
    Spec { key: "maxTurns", kind: Kind::Int, about: "stop a run after this many requests" },
    Spec {
        key: "maxBudgetUsd",
        kind: Kind::Number,
        about: "stop before spending past this many dollars",
    },
    Spec {
        key: "steeringMode",
        kind: Kind::Choice(QUEUE),
        about: "how queued steering messages are taken",
    },
    Spec {
        key: "followUpMode",
        kind: Kind::Choice(QUEUE),
        about: "how queued follow-ups are taken",
    },
    Spec { key: "toolSearch", kind: Kind::Bool, about: "send many tools as stubs until needed" },
    Spec { key: "skillsAsTools", kind: Kind::Bool, about: "each skill as its own tool" },
    Spec {
        key: "routeAssistantCommands",
        kind: Kind::Bool,
        about: "run ,cmd lines of the model's answers",
    },
    Spec {
        key: "permissions.defaultMode",
        kind: Kind::Choice(&["default", "accept-edits", "plan", "yolo"]),
        about: "permission mode at start",
    },
    Spec {
        key: "sandbox.mode",
        kind: Kind::Choice(&["read-only", "workspace-write", "off"]),
        about: "what commands may write",
    },
    Spec { key: "sandbox.network", kind: Kind::Bool, about: "commands may use the network" },
    Spec { key: "secretFirewall.enabled", kind: Kind::Bool, about: "mask secrets in tool results" },
    Spec {
        key: "compaction.enabled",
        kind: Kind::Bool,
        about: "compact before the context overflows",
    },
    Spec {
        key: "compaction.reserveTokens",
        kind: Kind::Int,
        about: "tokens kept free for the reply",
    },
    Spec {
        key: "compaction.keepRecentTokens",
        kind: Kind::Int,
        about: "recent tokens kept verbatim",
    },
    Spec {
        key: "compaction.strategy",
        kind: Kind::Choice(&["summary", "window"]),
        about: "summarise old messages, or drop them",
    },
    Spec {
        key: "compaction.windowMessages",
        kind: Kind::Int,
        about: "messages kept by the window strategy",
    },
    Spec {
        key: "checkpoints.enabled",
        kind: Kind::Bool,
        about: "keep file contents to rewind with",
    },
    Spec { key: "retry.maxRetries", kind: Kind::Int, about: "retries of a failed request" },
    Spec { key: "retry.baseDelayMs", kind: Kind::Int, about: "first backoff delay" },
    Spec { key: "timeouts.connectSecs", kind: Kind::Int, about: "to open a connection" },
    Spec { key: "timeouts.firstByteSecs", kind: Kind::Int, about: "to the response's first byte" },
    Spec { key: "timeouts.idleSecs", kind: Kind::Int, about: "between two stream events" },
    Spec { key: "timeouts.retryBudgetSecs", kind: Kind::Int, about: "no retry starts after this" },
    Spec { key: "loopDetection.enabled", kind: Kind::Bool, about: "stop a model repeating itself" },
    Spec {
        key: "loopDetection.callRepeats",
        kind: Kind::Int,
        about: "same calls this many replies in a row",
    },
    Spec {
        key: "loopDetection.textRepeats",
        kind: Kind::Int,
        about: "same text this many times in a reply",
    },
];

/// Which file a change is saved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `~/.rab/agent/settings.json`.
    Global,
    /// `.rab/settings.json` (shared in git).
    Project,
    /// `.rab/settings.local.json` (yours, git-ignored).
    Local,
}

impl Scope {
    fn next(self) -> Scope {
        match self {
            Scope::Global => Scope::Project,
            Scope::Project => Scope::Local,
            Scope::Local => Scope::Global,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Scope::Global => "global (~/.rab/agent/settings.json)",
            Scope::Project => "project (.rab/settings.json, shared)",
            Scope::Local => "project, yours (.rab/settings.local.json)",
        }
    }
}

enum Step {
    List,
    Choose { spec: usize, list: SelectList, options: Vec<String> },
    Input { spec: usize, typed: Box<rab_tui::editor::Editor> },
}

/// Values a project's file may not hold: a repository must not switch off every
/// question by itself (the settings loader ignores it there too).
pub fn refused_for_project(key: &str, value: &Value) -> bool {
    key == "permissions.defaultMode"
        && value.as_str().is_some_and(|m| m == "yolo" || m == "bypassPermissions")
}

/// The editor's state.
pub struct SettingsEditor {
    list: SelectList,
    /// The settings in effect, as JSON (updated as changes are saved).
    current: Value,
    scope: Scope,
    step: Step,
    /// The themes there are: built-in, then `~/.rab/themes/*.json`.
    themes: Vec<String>,
    /// The last save's outcome, or what was wrong with a value typed.
    pub message: Option<(bool, String)>,
}

/// What a key did.
pub enum EditorKey {
    /// Nothing for the app.
    Handled,
    /// Close the editor.
    Close,
    /// Save `key` = `value` to the file of `scope`.
    Save { key: String, value: Value, scope: Scope },
}

const ROWS: usize = 12;

impl SettingsEditor {
    /// The editor over `current` (the settings in effect), offering `themes`.
    pub fn new(current: Value, themes: Vec<String>) -> SettingsEditor {
        let list = SelectList::new(items(&current), ROWS).with_typing(true);
        SettingsEditor {
            list,
            current,
            scope: Scope::Global,
            step: Step::List,
            themes,
            message: None,
        }
    }

    /// Records a saved value (shown from now on).
    pub fn saved(&mut self, key: &str, value: Value) {
        set_dotted(&mut self.current, key, value);
        self.list.set_items(items(&self.current));
    }

    /// Handles a key.
    pub fn key(&mut self, key: &crossterm::event::KeyEvent, bindings: &Keybindings) -> EditorKey {
        use crossterm::event::{KeyCode, KeyModifiers};
        match &mut self.step {
            Step::List => {
                if key.code == KeyCode::Tab {
                    self.scope = self.scope.next();
                    return EditorKey::Handled;
                }
                match self.list.handle_key(key, bindings) {
                    SelectOutcome::Cancelled => EditorKey::Close,
                    SelectOutcome::Confirmed(i) => self.open(i),
                    SelectOutcome::Ignored | SelectOutcome::Changed => EditorKey::Handled,
                }
            }
            Step::Choose { spec, list, options } => match list.handle_key(key, bindings) {
                SelectOutcome::Cancelled => {
                    self.step = Step::List;
                    EditorKey::Handled
                }
                SelectOutcome::Confirmed(i) => {
                    let spec = &SPECS[*spec];
                    let value = Value::String(options.get(i).cloned().unwrap_or_default());
                    self.step = Step::List;
                    EditorKey::Save { key: spec.key.into(), value, scope: self.scope }
                }
                SelectOutcome::Ignored | SelectOutcome::Changed => EditorKey::Handled,
            },
            Step::Input { spec, typed } => match key.code {
                KeyCode::Esc => {
                    self.step = Step::List;
                    EditorKey::Handled
                }
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.step = Step::List;
                    EditorKey::Handled
                }
                KeyCode::Enter if key.modifiers.is_empty() => {
                    let spec = &SPECS[*spec];
                    match parse(spec.kind, &typed.text()) {
                        Ok(value) => {
                            self.step = Step::List;
                            EditorKey::Save { key: spec.key.into(), value, scope: self.scope }
                        }
                        Err(e) => {
                            self.message = Some((false, format!("{}: {e}", spec.key)));
                            EditorKey::Handled
                        }
                    }
                }
                _ => {
                    super::line_edit::edit_line(typed, bindings, key);
                    EditorKey::Handled
                }
            },
        }
    }

    /// Enter on a row: a toggle saves at once, a choice opens its list, the rest the
    /// line editor (with the current value to change).
    fn open(&mut self, i: usize) -> EditorKey {
        let Some(spec) = SPECS.get(i) else { return EditorKey::Handled };
        let now = get_dotted(&self.current, spec.key);
        match spec.kind {
            Kind::Bool => {
                let value = Value::Bool(!now.and_then(Value::as_bool).unwrap_or(false));
                EditorKey::Save { key: spec.key.into(), value, scope: self.scope }
            }
            Kind::Choice(_) | Kind::Theme => {
                let options: Vec<String> = match spec.kind {
                    Kind::Choice(options) => options
                        .iter()
                        .filter(|o| {
                            self.scope == Scope::Global
                                || !refused_for_project(spec.key, &Value::from(**o))
                        })
                        .map(|o| (*o).to_owned())
                        .collect(),
                    _ => self.themes.clone(),
                };
                let rows = options.iter().map(|o| SelectItem::new(o.as_str())).collect();
                let mut list = SelectList::new(rows, ROWS);
                if let Some(p) = options.iter().position(|o| now.and_then(Value::as_str) == Some(o))
                {
                    list.select_item(p);
                }
                self.step = Step::Choose { spec: i, list, options };
                EditorKey::Handled
            }
            Kind::Int | Kind::Number | Kind::Text | Kind::List => {
                let mut typed = Box::new(rab_tui::editor::Editor::new());
                typed.set_text(&now.map(shown).unwrap_or_default());
                self.step = Step::Input { spec: i, typed };
                EditorKey::Handled
            }
        }
    }

    /// The editor's lines.
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<String> {
        let cx = RenderCx { width, theme };
        let mut out = vec![String::new(), theme.fg(Role::Accent, &theme.bold("Settings"))];
        out.push(theme.dim(&format!("saving to: {} — Tab changes", self.scope.label())));
        let hint = match &self.step {
            Step::List => {
                out.extend(self.list.render(&cx));
                "type to filter · ↑↓ move · Enter change · Tab file · Esc close"
            }
            Step::Choose { spec, list, .. } => {
                out.push(theme.bold(SPECS[*spec].key));
                out.extend(list.render(&cx));
                "↑↓ move · Enter choose · Esc back"
            }
            Step::Input { spec, typed } => {
                let s = &SPECS[*spec];
                out.push(format!("{} — {}", theme.bold(s.key), s.about));
                let text = typed.text();
                let before = typed.text_before_cursor().to_owned();
                let rest = &text[before.len().min(text.len())..];
                let mut chars = rest.chars();
                let at = chars.next().map_or_else(|| " ".to_owned(), String::from);
                out.push(format!("> {before}\x1b[7m{at}\x1b[27m{}", chars.as_str()));
                match s.kind {
                    Kind::List => "comma-separated · empty clears · Enter save · Esc back",
                    _ => "empty clears · Enter save · Esc back",
                }
            }
        };
        if let Some((ok, text)) = &self.message {
            out.push(theme.fg(if *ok { Role::Success } else { Role::Error }, text));
        }
        out.push(theme.dim(hint));
        out.into_iter().map(|l| ansi::truncate(&l, width, "…")).collect()
    }
}

fn items(current: &Value) -> Vec<SelectItem> {
    SPECS
        .iter()
        .map(|s| {
            let value = get_dotted(current, s.key).map_or_else(|| "(default)".to_owned(), shown);
            SelectItem::new(s.key).with_description(format!("{value} · {}", s.about))
        })
        .collect()
}

/// A value as the user types it back.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What was typed as the setting's JSON (`Null` removes it: the default applies).
fn parse(kind: Kind, typed: &str) -> Result<Value, String> {
    let t = typed.trim();
    if t.is_empty() {
        return Ok(Value::Null);
    }
    match kind {
        Kind::Int => t
            .parse::<u64>()
            .map(Value::from)
            .map_err(|_| format!("expected a whole number, got {t:?}")),
        Kind::Number => match t.trim_start_matches('$').parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 0.0 => Ok(Value::from(n)),
            _ => Err(format!("expected a number, got {t:?}")),
        },
        Kind::List => Ok(Value::Array(
            t.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Value::from).collect(),
        )),
        Kind::Text | Kind::Bool | Kind::Choice(_) | Kind::Theme => Ok(Value::String(t.to_owned())),
    }
}

fn get_dotted<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(v, |v, part| v.get(part)).filter(|v| !v.is_null())
}

fn set_dotted(v: &mut Value, key: &str, value: Value) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut at = v;
    for part in parts {
        if !at.get(part).is_some_and(Value::is_object) {
            at[part] = Value::Object(serde_json::Map::new());
        }
        at = &mut at[part];
    }
    at[last] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_a_real_setting_of_its_kind() {
        // Each spec's value (a sample of its kind) must load as settings.
        for s in SPECS {
            let sample = match s.kind {
                Kind::Bool => Value::Bool(true),
                Kind::Choice(options) => Value::String(options[0].into()),
                Kind::Int => Value::from(3u64),
                Kind::Number => Value::from(1.5),
                Kind::Text | Kind::Theme => Value::String("dark".into()),
                Kind::List => Value::Array(vec![Value::from("openai/gpt-6.1-sol")]),
            };
            let mut v = serde_json::json!({});
            set_dotted(&mut v, s.key, sample);
            let loaded: Result<rab_config::Settings, _> = serde_json::from_value(v.clone());
            assert!(loaded.is_ok(), "{}: {v} does not load: {:?}", s.key, loaded.err());
            // And it is not silently dropped: it comes back out.
            let back = serde_json::to_value(loaded.unwrap()).unwrap();
            assert!(get_dotted(&back, s.key).is_some(), "{} is not kept: {back}", s.key);
        }
    }

    #[test]
    fn typed_values_parse_by_kind() {
        assert_eq!(parse(Kind::Int, " 12 "), Ok(Value::from(12u64)));
        assert!(parse(Kind::Int, "five").unwrap_err().contains("whole number"));
        assert_eq!(parse(Kind::Number, "$0.50"), Ok(Value::from(0.5)));
        assert_eq!(parse(Kind::List, "a/b, c ,"), Ok(serde_json::json!(["a/b", "c"])));
        assert_eq!(parse(Kind::Text, ""), Ok(Value::Null));
    }
}
