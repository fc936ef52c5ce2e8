//! Code of arbitrary text (a model's answer, a file the read tool shows) highlighted in
//! one of the common languages, whole and as a block growing in two steps, by one
//! highlighter kept across inputs (so languages come and go past its three-language cap
//! and the syntax set is reloaded). Oniguruma, C, runs over this text: lines come back,
//! one per line of code, with no control character but the colour sequences, never a
//! panic, a hang or a crash.

use rab_tui::ansi::strip;
use rab_tui::highlight::Highlighter;
use rab_tui::{ColorDepth, Theme};

const LANGUAGES: [&str; 12] =
    ["rust", "python", "ts", "js", "bash", "json", "yaml", "go", "c++", "html", "md", "diff"];

thread_local! {
    static HIGHLIGHTER: Highlighter = Highlighter::new();
}

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let [lang, depth, rest @ ..] = data else { return };
    let info = LANGUAGES[usize::from(*lang) % LANGUAGES.len()];
    let depth = match depth % 3 {
        0 => ColorDepth::TrueColor,
        1 => ColorDepth::Palette,
        _ => ColorDepth::Basic,
    };
    let theme = Theme::builtin(if lang & 0x80 == 0 { "dark" } else { "light" }, depth)
        .expect("built-in theme");
    let code = String::from_utf8_lossy(rest);
    HIGHLIGHTER.with(|h| {
        let cut = code.char_indices().nth(code.chars().count() / 2).map_or(0, |(i, _)| i);
        let _ = h.highlight(&code[..cut], info, &theme);
        let lines = h.highlight(&code, info, &theme);
        // (Empty code is one empty line in plain text and none highlighted; either is fine.)
        let expected = code.strip_suffix('\n').unwrap_or(&code).split('\n').count();
        assert!(code.is_empty() || lines.len() == expected, "one line per line of code");
        for line in &lines {
            let text = strip(line);
            assert!(!text.chars().any(char::is_control), "a control character: {text:?}");
        }
    });
}
