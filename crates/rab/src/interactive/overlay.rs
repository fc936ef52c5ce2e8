//! Overlays shown above the editor: model selector, session picker, settings, help.

use std::path::PathBuf;

use rab_tui::keys::Keybindings;
use rab_tui::select::{SelectItem, SelectList, SelectOutcome};
use rab_tui::{Component, RenderCx, Role, Theme, ansi};

/// What the user picked.
pub enum Picked {
    /// A model, as `provider/id`.
    Model(String),
    /// A session file.
    Session(PathBuf),
    /// A setting to save.
    SaveSetting { key: String, value: serde_json::Value, scope: super::settings_editor::Scope },
    /// A message of the tree: continue before it (from its parent), its text back in
    /// the editor, summarising the branch left behind or not.
    Branch { parent: Option<String>, text: String, summarise: bool, files: Files },
    /// An API key typed for a provider.
    Secret { provider: String, key: String },
    /// An instruction file to open in the editor (`/memory`).
    Memory(rab_core::memory::MemoryFile),
}

/// What a branch from the tree does with the files the agent changed since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Files {
    /// Leave them.
    Keep,
    /// Give them their content at that point too.
    Restore,
    /// Only that: the conversation stays where it is.
    Only,
}

/// The overlay's kind and its data.
pub enum Overlay {
    /// Fuzzy list of models.
    Models { list: SelectList, ids: Vec<String> },
    /// Sessions of this directory.
    Sessions { list: SelectList, paths: Vec<PathBuf> },
    /// `/settings`: every setting, saved to the file chosen.
    Settings(Box<super::settings_editor::SettingsEditor>),
    /// Read-only text (help, hotkeys).
    Text {
        /// Its title.
        title: String,
        /// All its lines.
        lines: Vec<String>,
        /// The first line shown (it scrolls when taller than the screen).
        top: usize,
    },
    /// The session tree.
    Tree { list: SelectList, items: Vec<rab_core::TreeItem> },
    /// After a pick in the tree: summarise the branch left behind?
    BranchSummary { list: SelectList, parent: Option<String>, text: String },
    /// A masked prompt for a provider's API key (`/login`).
    Secret { provider: String, typed: String },
    /// `/memory`: the instruction files to open.
    Memory { list: SelectList, files: Vec<rab_core::memory::MemoryFile> },
}

/// What a key did to the overlay.
pub enum OverlayKey {
    /// Nothing to do for the app.
    Handled,
    /// Close it.
    Close,
    /// The user chose something (the overlay stays open only for settings).
    Picked(Picked),
    /// Show this overlay instead (a second step).
    Replace(Box<Overlay>),
}

const ROWS: usize = 10;

/// Lines PgUp and PgDn move a text overlay by.
const TEXT_PAGE: usize = 10;

impl Overlay {
    /// The model selector.
    pub fn models(registry: &rab_ai::Registry, current: &str) -> Overlay {
        let mut ids = Vec::new();
        let mut items = Vec::new();
        for m in registry.models() {
            let id = format!("{}/{}", m.provider, m.id);
            let window = if m.context_window >= 1_000_000 {
                format!("{:.1}M", m.context_window as f64 / 1e6)
            } else {
                format!("{}k", m.context_window / 1000)
            };
            items.push(SelectItem::new(id.clone()).with_description(format!(
                "{window} ctx · ${:.2}/${:.2}",
                m.cost.input, m.cost.output
            )));
            ids.push(id);
        }
        let mut list = SelectList::new(items, ROWS).with_typing(true);
        if let Some(i) = ids.iter().position(|i| i == current) {
            list.select_item(i);
        }
        Overlay::Models { list, ids }
    }

    /// The session picker.
    pub fn sessions(sessions: Vec<rab_session::SessionInfo>) -> Overlay {
        let items = sessions
            .iter()
            .map(|s| {
                let label = match (&s.name, s.first_message.is_empty()) {
                    (Some(n), _) => format!("{n} — {}", s.first_message),
                    (None, true) => s.id.clone(),
                    (None, false) => s.first_message.clone(),
                };
                SelectItem::new(label).with_description(format!(
                    "{} · {}",
                    &s.created.get(..16).unwrap_or(&s.created).replace('T', " "),
                    rab_tools::truncate::format_size(s.size as usize)
                ))
            })
            .collect();
        let paths = sessions.into_iter().map(|s| s.path).collect();
        Overlay::Sessions {
            list: SelectList::new(items, ROWS)
                .with_typing(true)
                .with_empty_text("no saved sessions in this directory"),
            paths,
        }
    }

    /// `/memory`: the instruction files, yours, the project's and your local one first.
    pub fn memory(files: Vec<rab_core::memory::MemoryFile>) -> Overlay {
        let items = files
            .iter()
            .map(|f| {
                let new = if f.exists { "" } else { " (new)" };
                SelectItem::new(format!("{}{new}", f.path.display())).with_description(f.label())
            })
            .collect();
        Overlay::Memory { list: SelectList::new(items, ROWS), files }
    }

    /// The session tree: user messages of every branch.
    pub fn tree(items: Vec<rab_core::TreeItem>) -> Overlay {
        let rows = items
            .iter()
            .map(|t| {
                let mark = if t.is_active { "● " } else { "  " };
                SelectItem::new(format!("{mark}{}{}", "  ".repeat(t.depth), t.text))
            })
            .collect();
        let mut list =
            SelectList::new(rows, ROWS).with_typing(true).with_empty_text("no messages yet");
        if !items.is_empty() {
            list.select_item(items.len() - 1);
        }
        Overlay::Tree { list, items }
    }

    /// The settings editor over the settings in effect, offering `themes`.
    pub fn settings(current: serde_json::Value, themes: Vec<String>) -> Overlay {
        Overlay::Settings(Box::new(super::settings_editor::SettingsEditor::new(current, themes)))
    }

    /// Handles a key.
    pub fn key(&mut self, key: &crossterm::event::KeyEvent, bindings: &Keybindings) -> OverlayKey {
        use crossterm::event::{KeyCode, KeyModifiers};
        let (list, kind) = match self {
            Overlay::Secret { provider, typed } => {
                return match key.code {
                    KeyCode::Esc => OverlayKey::Close,
                    KeyCode::Enter => OverlayKey::Picked(Picked::Secret {
                        provider: provider.clone(),
                        key: std::mem::take(typed),
                    }),
                    KeyCode::Backspace => {
                        typed.pop();
                        OverlayKey::Handled
                    }
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        OverlayKey::Close
                    }
                    KeyCode::Char(c) => {
                        typed.push(c);
                        OverlayKey::Handled
                    }
                    _ => OverlayKey::Handled,
                };
            }
            Overlay::Settings(editor) => {
                use super::settings_editor::EditorKey;
                return match editor.key(key, bindings) {
                    EditorKey::Handled => OverlayKey::Handled,
                    EditorKey::Close => OverlayKey::Close,
                    EditorKey::Save { key, value, scope } => {
                        OverlayKey::Picked(Picked::SaveSetting { key, value, scope })
                    }
                };
            }
            Overlay::Models { list, .. } => (list, 0),
            Overlay::Sessions { list, .. } => (list, 1),
            Overlay::Memory { list, .. } => (list, 5),
            Overlay::Tree { list, .. } => (list, 3),
            Overlay::BranchSummary { list, .. } => (list, 4),
            Overlay::Text { lines, top, .. } => {
                use rab_tui::keys::Action;
                let is = |a: Action| bindings.matches(a, key);
                if is(Action::SelectCancel) || is(Action::SelectConfirm) {
                    return OverlayKey::Close;
                }
                let last = lines.len().saturating_sub(1);
                *top = if is(Action::CursorUp) {
                    top.saturating_sub(1)
                } else if is(Action::CursorDown) {
                    (*top + 1).min(last)
                } else if is(Action::PageUp) {
                    top.saturating_sub(TEXT_PAGE)
                } else if is(Action::PageDown) {
                    (*top + TEXT_PAGE).min(last)
                } else {
                    *top
                };
                return OverlayKey::Handled;
            }
        };
        match list.handle_key(key, bindings) {
            SelectOutcome::Ignored | SelectOutcome::Changed => OverlayKey::Handled,
            SelectOutcome::Cancelled => OverlayKey::Close,
            SelectOutcome::Confirmed(i) => match (self, kind) {
                (Overlay::Models { ids, .. }, _) => ids
                    .get(i)
                    .map_or(OverlayKey::Close, |id| OverlayKey::Picked(Picked::Model(id.clone()))),
                (Overlay::Memory { files, .. }, _) => files
                    .get(i)
                    .map_or(OverlayKey::Close, |f| OverlayKey::Picked(Picked::Memory(f.clone()))),
                (Overlay::Sessions { paths, .. }, _) => paths
                    .get(i)
                    .map_or(OverlayKey::Close, |p| OverlayKey::Picked(Picked::Session(p.clone()))),
                (Overlay::Tree { items, .. }, _) => {
                    let Some(t) = items.get(i) else { return OverlayKey::Close };
                    let (parent, text) = (t.parent_id.clone(), t.full_text.clone());
                    let options = vec![
                        SelectItem::new("Continue without a summary"),
                        SelectItem::new("Summarise the branch left behind, then continue")
                            .with_description("one model request"),
                        SelectItem::new("Continue, and restore the files to that point")
                            .with_description("files changed since by someone else stay"),
                        SelectItem::new("Restore the files only")
                            .with_description("the conversation stays where it is"),
                    ];
                    let list = SelectList::new(options, ROWS);
                    OverlayKey::Replace(Box::new(Overlay::BranchSummary { list, parent, text }))
                }
                (Overlay::BranchSummary { parent, text, .. }, _) => {
                    OverlayKey::Picked(Picked::Branch {
                        parent: parent.clone(),
                        text: text.clone(),
                        summarise: i == 1,
                        files: match i {
                            2 => Files::Restore,
                            3 => Files::Only,
                            _ => Files::Keep,
                        },
                    })
                }
                (Overlay::Text { .. } | Overlay::Secret { .. } | Overlay::Settings(_), _) => {
                    OverlayKey::Close
                }
            },
        }
    }

    /// The overlay's lines, for a screen `height` rows tall (a text taller than fits
    /// shows a window of it, scrolled with the arrows and PgUp/PgDn).
    pub fn render(&self, width: usize, height: usize, theme: &Theme) -> Vec<String> {
        let cx = RenderCx { width, theme };
        let scrolled: String;
        let (title, mut body, hint) = match self {
            Overlay::Models { list, .. } => {
                ("Model (type to filter)", list.render(&cx), "↑↓ move · Enter switch · Esc close")
            }
            Overlay::Sessions { list, .. } => {
                ("Resume a session", list.render(&cx), "↑↓ move · Enter resume · Esc close")
            }
            Overlay::Memory { list, .. } => (
                "Instruction files",
                list.render(&cx),
                "↑↓ move · Enter open in $EDITOR · Esc close",
            ),
            Overlay::Settings(editor) => return editor.render(width, theme),
            Overlay::Text { title, lines, top } => {
                // Title, blank line, hint and the footer (3 lines) stay on screen.
                let fits = height.saturating_sub(7).max(3);
                if lines.len() <= fits {
                    (title.as_str(), lines.clone(), "Esc or Enter to close")
                } else {
                    let top = (*top).min(lines.len() - fits);
                    let shown = lines[top..top + fits].to_vec();
                    scrolled = format!(
                        "lines {}–{} of {} · ↑↓ PgUp PgDn scroll · Esc or Enter to close",
                        top + 1,
                        top + fits,
                        lines.len()
                    );
                    (title.as_str(), shown, scrolled.as_str())
                }
            }
            Overlay::Tree { list, .. } => (
                "Session tree (● active branch)",
                list.render(&cx),
                "Enter: continue before this message (its text returns to the editor) · Esc close",
            ),
            Overlay::BranchSummary { list, .. } => (
                "Go back here",
                list.render(&cx),
                "The branch left behind stays in the session file · Esc cancel",
            ),
            Overlay::Secret { provider, typed } => (
                "API key",
                vec![
                    format!("Paste the {provider} API key (it is not shown):"),
                    format!("> {}", "•".repeat(typed.chars().count().min(40))),
                ],
                "Enter store it in auth.json · Esc cancel",
            ),
        };
        let mut out = vec![String::new(), theme.fg(Role::Accent, &theme.bold(title))];
        out.append(&mut body);
        out.push(theme.dim(hint));
        out.into_iter().map(|l| ansi::truncate(&l, width, "…")).collect()
    }
}
