//! Key ids, crossterm events and keybindings files.

use super::*;
use crossterm::event::KeyEventState;
use pretty_assertions::assert_eq;

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn id(s: &str) -> KeyId {
    s.parse().unwrap()
}

#[test]
fn key_ids_parse_and_print_canonically() {
    for s in [
        "ctrl+c",
        "shift+enter",
        "alt+enter",
        "escape",
        "up",
        "ctrl+k",
        "pageup",
        "tab",
        "shift+tab",
        "f1",
        "f12",
        "a",
        "?",
        "ctrl+_",
        "ctrl+alt+shift+super+x",
        "space",
        "ctrl++",
        "+",
    ] {
        assert_eq!(id(s).to_string(), s);
    }
    assert_eq!(id("Shift+Ctrl+P").to_string(), "ctrl+shift+p");
    assert_eq!(id("esc").to_string(), "escape");
    assert_eq!(id("A").to_string(), "shift+a");
    assert_eq!(id("meta+b").to_string(), "alt+b");
    assert_eq!(id("shift+?").to_string(), "?");
    assert_eq!("hyper+x".parse::<KeyId>().unwrap_err(), "unknown modifier 'hyper'");
    assert_eq!("ctrl+enterr".parse::<KeyId>().unwrap_err(), "unknown key 'enterr'");
    assert!("f25".parse::<KeyId>().is_err());
    assert!("".parse::<KeyId>().is_err());
}

#[test]
fn crossterm_events_become_key_ids() {
    let cases = [
        (ev(KeyCode::Char('c'), KeyModifiers::CONTROL), "ctrl+c"),
        (ev(KeyCode::Enter, KeyModifiers::SHIFT), "shift+enter"),
        (ev(KeyCode::Enter, KeyModifiers::ALT), "alt+enter"),
        (ev(KeyCode::BackTab, KeyModifiers::SHIFT), "shift+tab"),
        (ev(KeyCode::BackTab, KeyModifiers::NONE), "shift+tab"),
        (ev(KeyCode::Char('A'), KeyModifiers::SHIFT), "shift+a"),
        (ev(KeyCode::Char('?'), KeyModifiers::SHIFT), "?"),
        (ev(KeyCode::Char('é'), KeyModifiers::NONE), "é"),
        (ev(KeyCode::F(5), KeyModifiers::NONE), "f5"),
        (ev(KeyCode::Esc, KeyModifiers::NONE), "escape"),
        (ev(KeyCode::PageDown, KeyModifiers::NONE), "pagedown"),
        (ev(KeyCode::Left, KeyModifiers::CONTROL), "ctrl+left"),
        (ev(KeyCode::Char(' '), KeyModifiers::CONTROL), "ctrl+space"),
    ];
    for (e, want) in cases {
        assert_eq!(KeyId::from_event(&e).map(|k| k.to_string()).as_deref(), Some(want));
    }
    let release = KeyEvent {
        code: KeyCode::Enter,
        modifiers: KeyModifiers::NONE,
        kind: KeyEventKind::Release,
        state: KeyEventState::empty(),
    };
    assert_eq!(KeyId::from_event(&release), None);
    assert_eq!(KeyId::from_event(&ev(KeyCode::CapsLock, KeyModifiers::NONE)), None);
}

#[test]
fn defaults_cover_the_documented_keys() {
    let kb = Keybindings::default();
    let is = |a: Action, e: KeyEvent| kb.matches(a, &e);
    assert!(is(Action::Submit, ev(KeyCode::Enter, KeyModifiers::NONE)));
    assert!(!is(Action::Submit, ev(KeyCode::Enter, KeyModifiers::SHIFT)));
    assert!(is(Action::Newline, ev(KeyCode::Enter, KeyModifiers::SHIFT)));
    assert!(is(Action::Newline, ev(KeyCode::Enter, KeyModifiers::ALT)));
    assert!(is(Action::Newline, ev(KeyCode::Char('j'), KeyModifiers::CONTROL)));
    assert!(is(Action::Interrupt, ev(KeyCode::Esc, KeyModifiers::NONE)));
    assert!(is(Action::Clear, ev(KeyCode::Char('c'), KeyModifiers::CONTROL)));
    assert!(is(Action::ToggleThinking, ev(KeyCode::Char('t'), KeyModifiers::CONTROL)));
    assert!(is(Action::ExpandTools, ev(KeyCode::Char('o'), KeyModifiers::CONTROL)));
    assert!(is(Action::ModelSelector, ev(KeyCode::Char('l'), KeyModifiers::CONTROL)));
    assert!(is(Action::CycleModel, ev(KeyCode::Char('p'), KeyModifiers::CONTROL)));
    assert!(is(Action::CyclePermissionMode, ev(KeyCode::BackTab, KeyModifiers::SHIFT)));
    assert!(is(Action::KillLine, ev(KeyCode::Char('k'), KeyModifiers::CONTROL)));
    assert!(is(Action::Yank, ev(KeyCode::Char('y'), KeyModifiers::CONTROL)));
    // Ctrl+Z suspends, as in a shell and in Claude Code (issue 53); undo is Ctrl+_.
    assert!(is(Action::Suspend, ev(KeyCode::Char('z'), KeyModifiers::CONTROL)));
    assert!(!is(Action::Undo, ev(KeyCode::Char('z'), KeyModifiers::CONTROL)));
    // Legacy terminals send Ctrl+_ as 0x1f, which crossterm reports as Ctrl+7.
    assert!(is(Action::Undo, ev(KeyCode::Char('7'), KeyModifiers::CONTROL)));
    assert!(is(Action::Undo, ev(KeyCode::Char('_'), KeyModifiers::CONTROL)));
    assert!(is(Action::LineStart, ev(KeyCode::Char('a'), KeyModifiers::CONTROL)));
    assert!(is(Action::LineEnd, ev(KeyCode::Char('e'), KeyModifiers::CONTROL)));
    assert!(is(Action::WordLeft, ev(KeyCode::Char('b'), KeyModifiers::ALT)));
    assert!(is(Action::WordRight, ev(KeyCode::Char('f'), KeyModifiers::ALT)));
    assert!(is(Action::DeleteWordBackward, ev(KeyCode::Char('w'), KeyModifiers::CONTROL)));
    // Ctrl+Backspace arrives as Ctrl+H on many terminals.
    assert!(is(Action::DeleteWordBackward, ev(KeyCode::Char('h'), KeyModifiers::CONTROL)));
    assert_eq!(
        kb.actions_for(&ev(KeyCode::Up, KeyModifiers::NONE)),
        [Action::HistoryPrev, Action::CursorUp]
    );
    assert_eq!(kb.label(Action::ToggleThinking).as_deref(), Some("ctrl+t"));
    // Every default parses, and every action has an id that maps back to it.
    for a in Action::ALL {
        assert_eq!(kb.keys(a).len(), a.spec().1.len(), "{}", a.id());
        assert_eq!(Action::from_id(a.id()), Some(a));
    }
}

#[test]
fn overrides_replace_an_actions_keys() {
    let kb = Keybindings::from_json(
        "kb.json",
        r#"{"submit": ["ctrl+enter"], "newline": "enter", "toggle_thinking": []}"#,
    )
    .unwrap();
    assert_eq!(kb.keys(Action::Submit), [id("ctrl+enter")]);
    assert!(kb.matches(Action::Newline, &ev(KeyCode::Enter, KeyModifiers::NONE)));
    assert!(kb.keys(Action::ToggleThinking).is_empty());
    assert_eq!(kb.keys(Action::Yank), [id("ctrl+y")]);
}

#[test]
fn bad_keybindings_are_errors_naming_the_culprit() {
    let err = Keybindings::from_json("kb.json", r#"{"submitt": ["enter"]}"#).unwrap_err();
    assert!(matches!(&err, KeybindingsError::UnknownAction { action, .. } if action == "submitt"));
    assert!(err.to_string().contains("unknown action 'submitt'"), "{err}");
    let err = Keybindings::from_json("kb.json", r#"{"submit": ["ctrl+entr"]}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "keybindings kb.json: action 'submit': key 'ctrl+entr': unknown key 'entr'"
    );
    let err = Keybindings::from_json("kb.json", r#"{"submit": [1]}"#).unwrap_err();
    assert!(err.to_string().contains("1 is not a key id string"), "{err}");
    let err = Keybindings::from_json("kb.json", "[]").unwrap_err();
    assert!(err.to_string().contains("not a JSON object"), "{err}");
    let err = Keybindings::from_json("kb.json", "{").unwrap_err();
    assert!(matches!(err, KeybindingsError::Invalid { .. }));
}

#[test]
fn load_reads_a_file_and_treats_a_missing_one_as_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keybindings.json");
    assert_eq!(Keybindings::load(&path).unwrap(), Keybindings::default());
    std::fs::write(&path, r#"{"quit": ["ctrl+q"]}"#).unwrap();
    let kb = Keybindings::load(&path).unwrap();
    assert_eq!(kb.keys(Action::Quit), [id("ctrl+q")]);
    std::fs::write(&path, r#"{"quit": ["ctrl+"]}"#).unwrap();
    let err = Keybindings::load(&path).unwrap_err();
    assert!(err.to_string().contains("keybindings.json: action 'quit'"), "{err}");
}
