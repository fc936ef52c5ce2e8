//! Keys and keybindings. A key id is a string such as `ctrl+c`, `shift+enter`,
//! `alt+b`, `pageup`, `f1` or a plain character; [`KeyId`] parses and prints them and is
//! built from crossterm's `KeyEvent`. [`Keybindings`] maps action ids (`submit`,
//! `newline`, `interrupt`, …) to one or more key ids, with defaults and overrides from
//! `~/.rab/keybindings.json`:
//!
//! ```json
//! {"submit": ["enter"], "newline": ["shift+enter", "ctrl+j"]}
//! ```
//!
//! Terminals without the kitty keyboard protocol send Shift+Enter as plain Enter, Ctrl+J
//! as Ctrl+J, Ctrl+_ as Ctrl+7 and Ctrl+Backspace as Ctrl+H; the defaults carry
//! fallbacks (Alt+Enter and Ctrl+J for a newline) and matching accepts these legacy
//! spellings (see [`KeyId::from_event`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// A named key (without modifiers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyName {
    /// A character key; letters are lowercase (Shift is a modifier).
    Char(char),
    /// Enter / Return.
    Enter,
    /// Escape.
    Escape,
    /// Tab (Shift+Tab is `shift+tab`).
    Tab,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// Insert.
    Insert,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// A function key, `f1`–`f24`.
    F(u8),
}

const NAMES: [(&str, KeyName); 15] = [
    ("enter", KeyName::Enter),
    ("escape", KeyName::Escape),
    ("tab", KeyName::Tab),
    ("backspace", KeyName::Backspace),
    ("delete", KeyName::Delete),
    ("insert", KeyName::Insert),
    ("home", KeyName::Home),
    ("end", KeyName::End),
    ("pageup", KeyName::PageUp),
    ("pagedown", KeyName::PageDown),
    ("up", KeyName::Up),
    ("down", KeyName::Down),
    ("left", KeyName::Left),
    ("right", KeyName::Right),
    ("space", KeyName::Char(' ')),
];

/// A key with modifiers, e.g. `ctrl+shift+p`. Displayed and parsed in one canonical
/// form: modifiers in the order ctrl, alt, shift, super, then the key name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId {
    /// The key.
    pub key: KeyName,
    /// Control held.
    pub ctrl: bool,
    /// Alt (Option, Meta) held.
    pub alt: bool,
    /// Shift held (for letters and named keys; a shifted symbol is its own character).
    pub shift: bool,
    /// Super (Cmd, Windows) held.
    pub sup: bool,
}

impl KeyId {
    /// A key without modifiers.
    pub const fn plain(key: KeyName) -> KeyId {
        KeyId { key, ctrl: false, alt: false, shift: false, sup: false }
    }

    /// The key id of a crossterm key event; `None` for releases and keys rab does not
    /// name (media keys, lone modifiers, caps lock, …). Uppercase letters become
    /// `shift+<letter>`, and Shift on other characters is dropped (it is in the
    /// character already).
    pub fn from_event(ev: &KeyEvent) -> Option<KeyId> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        let m = ev.modifiers;
        let mut id = KeyId {
            key: KeyName::Enter,
            ctrl: m.contains(KeyModifiers::CONTROL),
            alt: m.intersects(KeyModifiers::ALT | KeyModifiers::META),
            shift: m.contains(KeyModifiers::SHIFT),
            sup: m.contains(KeyModifiers::SUPER),
        };
        id.key = match ev.code {
            KeyCode::Char(c) => return Some(id.with_char(c)),
            KeyCode::BackTab => {
                id.shift = true;
                KeyName::Tab
            }
            KeyCode::Backspace => KeyName::Backspace,
            KeyCode::Enter => KeyName::Enter,
            KeyCode::Left => KeyName::Left,
            KeyCode::Right => KeyName::Right,
            KeyCode::Up => KeyName::Up,
            KeyCode::Down => KeyName::Down,
            KeyCode::Home => KeyName::Home,
            KeyCode::End => KeyName::End,
            KeyCode::PageUp => KeyName::PageUp,
            KeyCode::PageDown => KeyName::PageDown,
            KeyCode::Tab => KeyName::Tab,
            KeyCode::Delete => KeyName::Delete,
            KeyCode::Insert => KeyName::Insert,
            KeyCode::F(n) => KeyName::F(n),
            KeyCode::Esc => KeyName::Escape,
            KeyCode::Null => return Some(KeyId { ctrl: true, ..id.with_char(' ') }),
            KeyCode::CapsLock
            | KeyCode::ScrollLock
            | KeyCode::NumLock
            | KeyCode::PrintScreen
            | KeyCode::Pause
            | KeyCode::Menu
            | KeyCode::KeypadBegin
            | KeyCode::Media(_)
            | KeyCode::Modifier(_) => return None,
        };
        Some(id)
    }

    fn with_char(mut self, c: char) -> KeyId {
        if c.is_uppercase() && c.to_lowercase().count() == 1 {
            self.shift = true;
            self.key = KeyName::Char(c.to_lowercase().next().unwrap_or(c));
        } else {
            if !c.is_alphabetic() {
                self.shift = false;
            }
            self.key = KeyName::Char(c);
        }
        self
    }

    /// The other spelling a legacy terminal (no kitty protocol) produces for the same
    /// keys: Ctrl+_ arrives as Ctrl+7, Ctrl+\ as Ctrl+4, Ctrl+] as Ctrl+5, Ctrl+^ as
    /// Ctrl+6, Ctrl+Backspace as Ctrl+H, Ctrl+Space as Ctrl+@.
    fn legacy_alias(self) -> Option<KeyId> {
        if !self.ctrl {
            return None;
        }
        let alias = match self.key {
            KeyName::Char('7') => KeyName::Char('_'),
            KeyName::Char('4') => KeyName::Char('\\'),
            KeyName::Char('5') => KeyName::Char(']'),
            KeyName::Char('6') => KeyName::Char('^'),
            KeyName::Char('h') => KeyName::Backspace,
            KeyName::Char(' ') => KeyName::Char('@'),
            _ => return None,
        };
        Some(KeyId { key: alias, ..self })
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (on, name) in
            [(self.ctrl, "ctrl+"), (self.alt, "alt+"), (self.shift, "shift+"), (self.sup, "super+")]
        {
            if on {
                f.write_str(name)?;
            }
        }
        match self.key {
            KeyName::F(n) => write!(f, "f{n}"),
            KeyName::Char(c) => match NAMES.iter().find(|(_, k)| *k == self.key) {
                Some((name, _)) => f.write_str(name),
                None => write!(f, "{c}"),
            },
            key => {
                let name = NAMES.iter().find(|(_, k)| *k == key).map_or("?", |(n, _)| n);
                f.write_str(name)
            }
        }
    }
}

impl FromStr for KeyId {
    type Err = String;

    /// Parses `ctrl+alt+shift+super+<key>` (modifiers in any order, case-insensitive,
    /// aliases `control`, `meta`, `option`, `cmd`, `esc`, `return`, `pgup`, `del`, …).
    fn from_str(s: &str) -> Result<KeyId, String> {
        let s = s.trim();
        // The key itself may be '+': "+" or "ctrl++".
        let (mods, key) = if s == "+" {
            ("", "+")
        } else if let Some(m) = s.strip_suffix("++") {
            (m, "+")
        } else {
            s.rsplit_once('+').unwrap_or(("", s))
        };
        let mut id = KeyId::plain(KeyName::Enter);
        for m in mods.split('+').filter(|m| !m.is_empty()) {
            let flag = match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => &mut id.ctrl,
                "alt" | "meta" | "option" | "opt" => &mut id.alt,
                "shift" => &mut id.shift,
                "super" | "cmd" | "command" | "win" => &mut id.sup,
                other => return Err(format!("unknown modifier '{other}'")),
            };
            *flag = true;
        }
        let lower = key.to_ascii_lowercase();
        let named = match lower.as_str() {
            "esc" => Some(KeyName::Escape),
            "return" => Some(KeyName::Enter),
            "del" => Some(KeyName::Delete),
            "ins" => Some(KeyName::Insert),
            "pgup" | "page_up" => Some(KeyName::PageUp),
            "pgdn" | "pgdown" | "page_down" => Some(KeyName::PageDown),
            "bs" => Some(KeyName::Backspace),
            name => NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k),
        };
        if let Some(k) = named {
            id.key = k;
            return Ok(id);
        }
        if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok())
            && (1..=24).contains(&n)
        {
            id.key = KeyName::F(n);
            return Ok(id);
        }
        let mut chars = key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(id.with_char(c)),
            _ => Err(format!("unknown key '{key}'")),
        }
    }
}

/// Something a key can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Send the editor's text.
    Submit,
    /// Insert a newline in the editor.
    Newline,
    /// Stop the running turn.
    Interrupt,
    /// Clear the editor.
    Clear,
    /// Leave rab (Ctrl+C on an empty editor, Ctrl+D).
    Quit,
    /// Previous history entry (at the editor's first line).
    HistoryPrev,
    /// Next history entry (at the editor's last line).
    HistoryNext,
    /// Cursor one character left.
    CursorLeft,
    /// Cursor one character right.
    CursorRight,
    /// Cursor one line up.
    CursorUp,
    /// Cursor one line down.
    CursorDown,
    /// Cursor one word left.
    WordLeft,
    /// Cursor one word right.
    WordRight,
    /// Cursor to the start of the line.
    LineStart,
    /// Cursor to the end of the line.
    LineEnd,
    /// Delete the character before the cursor.
    DeleteBackward,
    /// Delete the character under the cursor.
    DeleteForward,
    /// Delete the word before the cursor.
    DeleteWordBackward,
    /// Delete the word after the cursor.
    DeleteWordForward,
    /// Cut to the end of the line (into the kill ring).
    KillLine,
    /// Cut to the start of the line (into the kill ring).
    KillLineBackward,
    /// Paste the last cut text.
    Yank,
    /// Replace the yanked text with the previous kill.
    YankPop,
    /// Undo the last edit.
    Undo,
    /// Suspend rab to the shell (`fg` brings it back), as Ctrl+Z does in a shell.
    Suspend,
    /// Scroll or move a page up (lists, overlays).
    PageUp,
    /// Scroll or move a page down.
    PageDown,
    /// Show or hide thinking blocks.
    ToggleThinking,
    /// Expand or collapse tool output.
    ExpandTools,
    /// Open the model selector.
    ModelSelector,
    /// Clear the screen (the conversation goes on; `/clear` starts a new one).
    ClearScreen,
    /// Switch to the next model in the cycle list.
    CycleModel,
    /// Switch to the previous model in the cycle list.
    CycleModelBackward,
    /// Cycle the permission mode.
    CyclePermissionMode,
    /// Queue the editor's text as a follow-up (sent when the agent would stop).
    FollowUp,
    /// Complete `@file` / `/command`.
    Autocomplete,
    /// Open the external editor (`$VISUAL`/`$EDITOR`).
    ExternalEditor,
    /// Attach the image on the clipboard to the prompt.
    PasteImage,
    /// Choose the highlighted item in a list.
    SelectConfirm,
    /// Close a list or overlay.
    SelectCancel,
}

impl Action {
    /// Every action, in display order.
    pub const ALL: [Action; 40] = [
        Action::Submit,
        Action::Newline,
        Action::Interrupt,
        Action::Clear,
        Action::Quit,
        Action::HistoryPrev,
        Action::HistoryNext,
        Action::CursorLeft,
        Action::CursorRight,
        Action::CursorUp,
        Action::CursorDown,
        Action::WordLeft,
        Action::WordRight,
        Action::LineStart,
        Action::LineEnd,
        Action::DeleteBackward,
        Action::DeleteForward,
        Action::DeleteWordBackward,
        Action::DeleteWordForward,
        Action::KillLine,
        Action::KillLineBackward,
        Action::Yank,
        Action::YankPop,
        Action::Undo,
        Action::Suspend,
        Action::PageUp,
        Action::PageDown,
        Action::ToggleThinking,
        Action::ExpandTools,
        Action::ModelSelector,
        Action::ClearScreen,
        Action::CycleModel,
        Action::CycleModelBackward,
        Action::CyclePermissionMode,
        Action::FollowUp,
        Action::Autocomplete,
        Action::ExternalEditor,
        Action::PasteImage,
        Action::SelectConfirm,
        Action::SelectCancel,
    ];

    /// The id used in keybindings.json, and its default keys.
    pub fn spec(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Action::Submit => ("submit", &["enter"]),
            Action::Newline => ("newline", &["shift+enter", "alt+enter", "ctrl+j"]),
            Action::Interrupt => ("interrupt", &["escape"]),
            Action::Clear => ("clear", &["ctrl+c"]),
            Action::Quit => ("quit", &["ctrl+c", "ctrl+d"]),
            Action::HistoryPrev => ("history_prev", &["up"]),
            Action::HistoryNext => ("history_next", &["down"]),
            Action::CursorLeft => ("cursor_left", &["left", "ctrl+b"]),
            Action::CursorRight => ("cursor_right", &["right", "ctrl+f"]),
            Action::CursorUp => ("cursor_up", &["up"]),
            Action::CursorDown => ("cursor_down", &["down"]),
            Action::WordLeft => ("word_left", &["alt+b", "alt+left", "ctrl+left"]),
            Action::WordRight => ("word_right", &["alt+f", "alt+right", "ctrl+right"]),
            Action::LineStart => ("line_start", &["ctrl+a", "home"]),
            Action::LineEnd => ("line_end", &["ctrl+e", "end"]),
            Action::DeleteBackward => ("delete_backward", &["backspace"]),
            Action::DeleteForward => ("delete_forward", &["delete"]),
            Action::DeleteWordBackward => {
                ("delete_word_backward", &["ctrl+w", "alt+backspace", "ctrl+backspace"])
            }
            Action::DeleteWordForward => ("delete_word_forward", &["alt+d", "alt+delete"]),
            Action::KillLine => ("kill_line", &["ctrl+k"]),
            Action::KillLineBackward => ("kill_line_backward", &["ctrl+u"]),
            Action::Yank => ("yank", &["ctrl+y"]),
            Action::YankPop => ("yank_pop", &["alt+y"]),
            // Ctrl+Z suspends, as in a shell and in Claude Code; Ctrl+_ (Ctrl+/ in
            // most terminals) undoes, as in readline and Emacs.
            Action::Undo => ("undo", &["ctrl+_"]),
            Action::Suspend => ("suspend", &["ctrl+z"]),
            Action::PageUp => ("page_up", &["pageup"]),
            Action::PageDown => ("page_down", &["pagedown"]),
            Action::ToggleThinking => ("toggle_thinking", &["ctrl+t"]),
            Action::ExpandTools => ("expand_tools", &["ctrl+o"]),
            Action::ModelSelector => ("model_selector", &["ctrl+l"]),
            Action::ClearScreen => ("clear_screen", &["alt+l"]),
            Action::CycleModel => ("cycle_model", &["ctrl+p"]),
            Action::CycleModelBackward => ("cycle_model_backward", &["ctrl+shift+p"]),
            Action::CyclePermissionMode => ("cycle_permission_mode", &["shift+tab"]),
            Action::FollowUp => ("follow_up", &["ctrl+q"]),
            Action::Autocomplete => ("autocomplete", &["tab"]),
            Action::ExternalEditor => ("external_editor", &["ctrl+g"]),
            Action::PasteImage => ("paste_image", &["ctrl+v"]),
            Action::SelectConfirm => ("select_confirm", &["enter"]),
            Action::SelectCancel => ("select_cancel", &["escape", "ctrl+c"]),
        }
    }

    /// The id used in keybindings.json, e.g. `history_prev`.
    pub fn id(self) -> &'static str {
        self.spec().0
    }

    /// The action with this id.
    pub fn from_id(id: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.id() == id)
    }
}

/// Why keybindings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum KeybindingsError {
    /// The file is not a JSON object of action ids to key ids.
    #[error("keybindings {source_name}: {message}; expected {{\"action_id\": [\"key+id\", …]}}")]
    Invalid {
        /// File name or other source.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// An action id that does not exist.
    #[error("keybindings {source_name}: unknown action '{action}' (known: {known})")]
    UnknownAction {
        /// File name or other source.
        source_name: String,
        /// The id as written.
        action: String,
        /// The valid ids, comma-separated.
        known: String,
    },
    /// A key id that cannot be parsed.
    #[error("keybindings {source_name}: action '{action}': {message}")]
    BadKey {
        /// File name or other source.
        source_name: String,
        /// The action it was bound to.
        action: String,
        /// What is wrong with the key id.
        message: String,
    },
    /// The file exists but could not be read.
    #[error("keybindings {source_name}: {err}")]
    Io {
        /// The file.
        source_name: String,
        /// The read error.
        #[source]
        err: std::io::Error,
    },
}

/// Keys bound to each action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keybindings {
    map: BTreeMap<Action, Vec<KeyId>>,
}

impl Default for Keybindings {
    fn default() -> Keybindings {
        let map = Action::ALL
            .into_iter()
            .map(|a| (a, a.spec().1.iter().filter_map(|k| k.parse().ok()).collect()))
            .collect();
        Keybindings { map }
    }
}

impl Keybindings {
    /// The defaults with the overrides of a keybindings.json text applied. Each action in
    /// the file replaces that action's keys (an empty list unbinds it); a value may be one
    /// string or a list. `source_name` names the file in errors.
    pub fn from_json(source_name: &str, json: &str) -> Result<Keybindings, KeybindingsError> {
        let invalid = |message: String| KeybindingsError::Invalid {
            source_name: source_name.to_owned(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
        let serde_json::Value::Object(obj) = value else {
            return Err(invalid("not a JSON object".into()));
        };
        let mut bindings = Keybindings::default();
        for (name, keys) in obj {
            let Some(action) = Action::from_id(&name) else {
                let known: Vec<&str> = Action::ALL.iter().map(|a| a.id()).collect();
                return Err(KeybindingsError::UnknownAction {
                    source_name: source_name.to_owned(),
                    action: name,
                    known: known.join(", "),
                });
            };
            let bad = |message: String| KeybindingsError::BadKey {
                source_name: source_name.to_owned(),
                action: name.clone(),
                message,
            };
            let list = match keys {
                serde_json::Value::String(s) => vec![s],
                serde_json::Value::Array(items) => items
                    .into_iter()
                    .map(|v| match v {
                        serde_json::Value::String(s) => Ok(s),
                        other => Err(bad(format!("{other} is not a key id string"))),
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(bad(format!("{other} is not a key id or a list of them"))),
            };
            let parsed = list
                .iter()
                .map(|k| k.parse::<KeyId>().map_err(|e| bad(format!("key '{k}': {e}"))))
                .collect::<Result<Vec<_>, _>>()?;
            bindings.map.insert(action, parsed);
        }
        Ok(bindings)
    }

    /// Loads overrides from a file; a missing file means the defaults.
    pub fn load(path: &Path) -> Result<Keybindings, KeybindingsError> {
        let name = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Keybindings::from_json(&name, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Keybindings::default()),
            Err(err) => Err(KeybindingsError::Io { source_name: name, err }),
        }
    }

    /// The keys bound to `action`.
    pub fn keys(&self, action: Action) -> &[KeyId] {
        self.map.get(&action).map_or(&[], Vec::as_slice)
    }

    /// Binds `action` to `keys`, replacing its keys.
    pub fn set(&mut self, action: Action, keys: Vec<KeyId>) {
        self.map.insert(action, keys);
    }

    /// Whether `ev` is one of the keys bound to `action`.
    pub fn matches(&self, action: Action, ev: &KeyEvent) -> bool {
        let Some(id) = KeyId::from_event(ev) else { return false };
        let alias = id.legacy_alias();
        self.keys(action).iter().any(|k| *k == id || Some(*k) == alias)
    }

    /// Every action `ev` is bound to, in [`Action::ALL`] order (one key can serve several
    /// actions, e.g. Up for history and cursor movement; the caller picks by context).
    pub fn actions_for(&self, ev: &KeyEvent) -> Vec<Action> {
        Action::ALL.into_iter().filter(|a| self.matches(*a, ev)).collect()
    }

    /// A short label of the first key bound to `action`, for hints (`ctrl+t`).
    pub fn label(&self, action: Action) -> Option<String> {
        self.keys(action).first().map(KeyId::to_string)
    }
}

#[cfg(test)]
mod tests;
