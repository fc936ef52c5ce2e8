use super::*;
use crate::ansi::strip;
use pretty_assertions::assert_eq;

const RUST: &str = "fn main() {\n\tlet x = \"hi\"; // greet\n    println!(\"{x}\");\n}\n";

fn theme(depth: ColorDepth) -> Theme {
    Theme::builtin("dark", depth).unwrap()
}

#[test]
fn nothing_is_loaded_until_code_needs_a_language() {
    let h = Highlighter::new();
    assert!(!h.is_loaded());
    let t = theme(ColorDepth::TrueColor);
    // Plain text and an unknown language need no syntaxes.
    let _ = h.highlight("x = 1\n", "text", &t);
    let _ = h.highlight("x = 1\n", "", &t);
    assert!(!h.is_loaded());
    let _ = h.highlight(RUST, "rust", &t);
    assert!(h.is_loaded());
}

#[test]
fn truecolor_output_keeps_the_text_and_adds_rgb() {
    let h = Highlighter::new();
    let lines = h.highlight(RUST, "rust", &theme(ColorDepth::TrueColor));
    let text: Vec<String> = lines.iter().map(|l| strip(l)).collect();
    assert_eq!(
        text,
        vec!["fn main() {", "    let x = \"hi\"; // greet", "    println!(\"{x}\");", "}"]
    );
    assert!(lines[0].contains("\x1b[38;2;"), "{:?}", lines[0]);
    assert!(lines.iter().all(|l| !l.contains('\n') && !l.contains('\t')));
    assert!(lines.iter().filter(|l| l.contains('\x1b')).all(|l| l.ends_with(RESET)));
}

#[test]
fn colours_follow_the_depth() {
    let h = Highlighter::new();
    let palette = h.highlight(RUST, "rs", &theme(ColorDepth::Palette)).concat();
    assert!(palette.contains("\x1b[38;5;") && !palette.contains("38;2;"), "{palette:?}");
    let basic = h.highlight(RUST, "rs", &theme(ColorDepth::Basic)).concat();
    assert!(!basic.contains("38;5;") && !basic.contains("38;2;"), "{basic:?}");
    assert!(basic.contains("\x1b[3") || basic.contains("\x1b[9"), "{basic:?}");
    let none = h.highlight(RUST, "rs", &theme(ColorDepth::None));
    assert!(none.iter().all(|l| !l.contains('\x1b')), "{none:?}");
    // No colour means no reason to load the syntaxes at all.
    assert!(!Highlighter::new().tap_none());
}

impl Highlighter {
    fn tap_none(&self) -> bool {
        let _ = self.highlight(RUST, "rust", &theme(ColorDepth::None));
        self.is_loaded()
    }
}

#[test]
fn unknown_or_empty_language_is_plain() {
    let h = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    assert_eq!(h.highlight("a\tb\n", "nosuchlang", &t), vec!["a   b"]);
    assert_eq!(h.highlight("x = 1", "", &t), vec!["x = 1"]);
    assert_eq!(h.highlight("x\n\ny", "text", &t), vec!["x", "", "y"]);
}

#[test]
fn fence_aliases_resolve() {
    let h = Highlighter::new();
    let cases = [
        ("rust", "Rust"),
        ("rs", "Rust"),
        ("rust,ignore", "Rust"),
        ("{.python}", "Python"),
        ("py", "Python"),
        ("js", "JavaScript (Babel)"),
        ("ts", "TypeScript"),
        ("sh", "Bourne Again Shell (bash)"),
        ("bash", "Bourne Again Shell (bash)"),
        ("shell", "Bourne Again Shell (bash)"),
        ("json", "JSON"),
        ("toml", "TOML"),
        ("yaml", "YAML"),
        ("yml", "YAML"),
        ("go", "Go"),
        ("c", "C"),
        ("cpp", "C++"),
        ("c++", "C++"),
        ("diff", "Diff"),
    ];
    for (info, want) in cases {
        assert_eq!(h.language_name(info).as_deref(), Some(want), "{info}");
    }
    assert_eq!(h.language_name("plaintext"), None);
}

#[test]
fn growing_code_resumes_with_the_same_result() {
    let h = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    // Feed the block a few bytes at a time, as a stream would, interleaved with another
    // block, and compare every step with a from-scratch highlight.
    for end in (1..=RUST.len()).filter(|&e| RUST.is_char_boundary(e)).step_by(5) {
        let got = h.highlight(&RUST[..end], "rust", &t);
        assert_eq!(got, Highlighter::new().highlight(&RUST[..end], "rust", &t), "{end}");
        let other = h.highlight("print('x')\n", "py", &t);
        assert_eq!(strip(&other.concat()), "print('x')");
    }
    assert_eq!(h.highlight(RUST, "rust", &t), Highlighter::new().highlight(RUST, "rust", &t));
}

#[test]
fn files_pick_the_language_from_the_path() {
    let h = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    let lines = h.highlight_file("[package]\nname = \"x\"\n", "crates/a/Cargo.toml", &t);
    assert!(lines[0].contains("\x1b[38;2;"), "{lines:?}");
    assert_eq!(h.highlight_file("hello", "notes.unknownext", &t), vec!["hello"]);
}

#[test]
fn light_themes_are_detected() {
    assert!(is_dark(&theme(ColorDepth::TrueColor)));
    assert!(!is_dark(&Theme::builtin("light", ColorDepth::TrueColor).unwrap()));
}

#[test]
fn sanitize_expands_tabs_and_hides_controls() {
    assert_eq!(sanitize_line("a\tb"), "a   b");
    assert_eq!(sanitize_line("ab\tc"), "ab  c");
    assert_eq!(sanitize_line("x\x1b[31my\r"), "x\u{fffd}[31my");
    assert!(matches!(sanitize_line("plain"), Cow::Borrowed(_)));
}

#[test]
fn snapshot_highlighted_rust_truecolor() {
    let h = Highlighter::new();
    let lines = h.highlight(RUST, "rust", &theme(ColorDepth::TrueColor));
    let readable: Vec<String> = lines.iter().map(|l| l.replace('\x1b', "␛")).collect();
    insta::assert_snapshot!(readable.join("\n"));
}

#[test]
fn a_fourth_language_reloads_the_set_and_every_language_still_highlights() {
    let h = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    let blocks = [
        ("rust", "fn a() -> u8 { 1 }\n"),
        ("python", "def a():\n    return 1\n"),
        ("go", "func a() int { return 1 }\n"),
        ("typescript", "const a = (): number => 1;\n"),
        ("rust", "fn b() -> u8 { 2 }\n"),
    ];
    let fresh = |lang: &str, code: &str| Highlighter::new().highlight(code, lang, &t);
    for (i, (lang, code)) in blocks.iter().enumerate() {
        let lines = h.highlight(code, lang, &t);
        assert_eq!(lines, fresh(lang, code), "{lang} after a reload");
        assert!(lines[0].contains("\x1b[38;2;"), "{lang}: {lines:?}");
        let compiled = h.compiled_languages();
        assert!(compiled.len() <= COMPILED_LANGUAGES, "{compiled:?}");
        match i {
            2 => assert_eq!(compiled, ["Rust", "Python", "Go"]),
            3 => assert_eq!(compiled, ["TypeScript"]),
            4 => assert_eq!(compiled, ["TypeScript", "Rust"]),
            _ => {}
        }
    }
    // Using a compiled language again makes it the most recent, not a reload.
    let _ = h.highlight("x = 1\n", "python", &t);
    let _ = h.highlight("fn c() {}\n", "rust", &t);
    assert_eq!(h.compiled_languages(), ["TypeScript", "Python", "Rust"]);
}

#[test]
fn a_growing_block_resumes_across_a_reload_of_other_languages() {
    let h = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    let first = h.highlight("fn main() {\n", "rust", &t);
    for lang in ["python", "go", "typescript"] {
        let _ = h.highlight("x\n", lang, &t);
    }
    let grown = h.highlight("fn main() {\n    let s = \"x\";\n}\n", "rust", &t);
    assert_eq!(grown[0], first[0]);
    assert_eq!(
        grown,
        Highlighter::new().highlight("fn main() {\n    let s = \"x\";\n}\n", "rust", &t)
    );
}
