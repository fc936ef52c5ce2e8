//! Editing keys, the same wherever text is typed: the main editor and one-line inputs
//! (the settings editor's), as bound in keybindings.json.

use crossterm::event::KeyEvent;
use rab_tui::editor::Editor;
use rab_tui::keys::{Action, Keybindings};

/// A key for `e` under `b`: the main editor's editing (the same keys wherever text is
/// typed).
pub fn edit_key(e: &mut Editor, b: &Keybindings, key: &KeyEvent) {
    let actions = b.actions_for(key);
    let Some(action) = actions.first().copied() else {
        if let crossterm::event::KeyCode::Char(c) = key.code
            && !key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL)
            && !key.modifiers.contains(crossterm::event::KeyModifiers::ALT)
        {
            e.insert_char(c);
        }
        return;
    };
    match action {
        Action::Newline => e.newline(),
        Action::HistoryPrev | Action::CursorUp => e.up(),
        Action::HistoryNext | Action::CursorDown => e.down(),
        Action::CursorLeft => e.move_left(),
        Action::CursorRight => e.move_right(),
        Action::WordLeft => e.move_word_left(),
        Action::WordRight => e.move_word_right(),
        Action::LineStart => e.move_line_start(),
        Action::LineEnd => e.move_line_end(),
        Action::DeleteBackward => e.delete_back(),
        Action::DeleteForward => e.delete_forward(),
        Action::DeleteWordBackward => e.delete_word_back(),
        Action::DeleteWordForward => e.delete_word_forward(),
        Action::KillLine => e.kill_to_line_end(),
        Action::KillLineBackward => e.kill_to_line_start(),
        Action::Yank => e.yank(),
        Action::YankPop => e.yank_pop(),
        Action::Undo => {
            e.undo();
        }
        Action::PageUp => e.move_buffer_start(),
        Action::PageDown => e.move_buffer_end(),
        _ => {
            if let crossterm::event::KeyCode::Char(c) = key.code
                && key.modifiers.is_empty()
            {
                e.insert_char(c);
            }
        }
    }
}

/// A key for a one-line input: the main editor's editing keys, without new lines or
/// history.
pub fn edit_line(e: &mut Editor, b: &Keybindings, key: &KeyEvent) {
    let actions = b.actions_for(key);
    let multi_line = [
        Action::Newline,
        Action::HistoryPrev,
        Action::HistoryNext,
        Action::CursorUp,
        Action::CursorDown,
        Action::Submit,
    ];
    if actions.first().is_some_and(|a| multi_line.contains(a)) {
        return;
    }
    edit_key(e, b, key);
}
