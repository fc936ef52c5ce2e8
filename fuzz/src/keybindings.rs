//! A `keybindings.json` of arbitrary text read as the UI reads it: overrides or an
//! error, never a panic. Every key it binds prints in a form that parses back to the
//! same key.

use rab_tui::keys::{Action, KeyId, Keybindings};

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // One key id alone, as a file's list item is read.
    if let Ok(key) = text.parse::<KeyId>() {
        let shown = key.to_string();
        assert_eq!(shown.parse::<KeyId>(), Ok(key), "{text:?} prints as {shown:?}");
    }
    let Ok(bindings) = Keybindings::from_json("keybindings.json", &text) else { return };
    for action in Action::ALL {
        let _ = bindings.label(action);
        for key in bindings.keys(action) {
            let shown = key.to_string();
            assert_eq!(shown.parse::<KeyId>(), Ok(*key), "{shown:?} does not parse back");
        }
    }
}
