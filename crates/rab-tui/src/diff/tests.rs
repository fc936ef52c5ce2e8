use super::*;
use crate::ansi::{strip, width as cells};
use pretty_assertions::assert_eq;

const OLD: &str = "fn greet(name: &str) {\n    println!(\"Hello, {name}!\");\n}\n\nfn main() {\n    greet(\"world\");\n}\n";
const NEW: &str = "fn greet(name: &str, excited: bool) {\n    let mark = if excited { \"!\" } else { \".\" };\n    println!(\"Hello, {name}{mark}\");\n}\n\nfn main() {\n    greet(\"world\", true);\n}\n";

fn theme(depth: ColorDepth) -> Theme {
    Theme::builtin("dark", depth).unwrap()
}

/// Plain text with changed words shown as `[[…]]` (reverse video in a no-colour theme).
fn readable(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| {
            let marked = l.replace("\x1b[7m", "[[").replace("\x1b[27m", "]]");
            // A wrapped line reopens every style it has seen; empty pairs are noise.
            strip(&marked).replace("[[]]", "")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn parses_hunks_with_line_numbers() {
    let diff =
        "--- a/x\n+++ b/x\n@@ -3,3 +3,3 @@ fn f\n a\n-b\n+B\n\n\\ No newline at end of file\n";
    assert_eq!(
        parse(diff),
        vec![
            DiffLine::Hunk("@@ -3,3 +3,3 @@ fn f".into()),
            DiffLine::Context { new: 3, text: "a".into() },
            DiffLine::Remove { old: 4, text: "b".into() },
            DiffLine::Add { new: 4, text: "B".into() },
            DiffLine::Context { new: 5, text: "".into() },
            DiffLine::Note("\\ No newline at end of file".into()),
        ]
    );
    assert_eq!(diff_stats(diff), (1, 1));
    assert_eq!(hunk_starts("@@ -1 +1 @@"), Some((1, 1)));
    assert_eq!(hunk_starts("@@ bogus"), None);
}

#[test]
fn changed_words_are_found_in_paired_lines() {
    let (a, b) = word_changes("    greet(\"world\");", "    greet(\"world\", true);").unwrap();
    assert_eq!(a, vec![]);
    assert_eq!(b, vec![(17, 23)]);
    // Lines with little in common get no word highlights.
    assert_eq!(word_changes("alpha beta gamma", "totally different words"), None);
    assert_eq!(tokens("a_b(c, d)"), vec!["a_b", "(", "c", ",", " ", "d", ")"]);
}

#[test]
fn text_diff_renders_signs_numbers_and_emphasis() {
    let lines = render_text_diff(OLD, NEW, 80, &theme(ColorDepth::None), &DiffOptions::default());
    let text = readable(&lines);
    assert!(text.contains("1 - fn greet(name: &str) {"), "{text}");
    assert!(text.contains("1 + fn greet(name: &str[[, excited: bool]]) {"), "{text}");
    assert!(text.contains("7 +     greet(\"world\"[[, true]]);"), "{text}");
    assert!(text.contains("3 +     println!(\"Hello, {name}[[{mark}]]\");"), "{text}");
    let colored =
        render_text_diff(OLD, NEW, 80, &theme(ColorDepth::TrueColor), &DiffOptions::default());
    let joined = colored.concat();
    assert!(joined.contains(&theme(ColorDepth::TrueColor).bg_code(Role::DiffAddStrong)));
    assert!(joined.contains(&theme(ColorDepth::TrueColor).fg_code(Role::DiffRemove)));
    assert!(colored.iter().filter(|l| l.contains('\x1b')).all(|l| l.ends_with(RESET)));
}

#[test]
fn long_lines_wrap_or_truncate_within_the_width() {
    let old = "short\n";
    let new = format!("short\n{}\n", "word ".repeat(40));
    for wrap_lines in [true, false] {
        let opts = DiffOptions { wrap: wrap_lines, ..DiffOptions::default() };
        let lines = render_text_diff(old, &new, 40, &theme(ColorDepth::TrueColor), &opts);
        assert!(lines.iter().all(|l| cells(l) <= 40), "{lines:?}");
        let expected = if wrap_lines { 1 + 1 + 6 } else { 1 + 1 + 1 };
        assert_eq!(lines.len(), expected, "{:?}", readable(&lines));
    }
    let tiny =
        render_text_diff(old, &new, 6, &theme(ColorDepth::TrueColor), &DiffOptions::default());
    assert!(tiny.iter().all(|l| cells(l) <= 6), "{tiny:?}");
}

#[test]
fn max_lines_counts_what_was_left_out() {
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 5\n", "line five\n").replace("line 25\n", "line 25b\n");
    let opts = DiffOptions { max_lines: Some(5), ..DiffOptions::default() };
    let lines = render_text_diff(&old, &new, 80, &theme(ColorDepth::None), &opts);
    assert_eq!(lines.len(), 5);
    assert_eq!(strip(&lines[4]), "… 14 more lines");
}

#[test]
fn unified_string_from_a_tool_renders_like_text_input() {
    let unified = TextDiff::from_lines(OLD, NEW)
        .unified_diff()
        .header("a/src/x.rs", "b/src/x.rs")
        .to_string();
    let t = theme(ColorDepth::Palette);
    let a = render_unified_diff(&unified, 100, &t, &DiffOptions::default());
    let b = render_text_diff(OLD, NEW, 100, &t, &DiffOptions::default());
    assert_eq!(a, b);
    assert_eq!(diff_stats(&unified), (4, 3));
}

#[test]
fn snapshot_diff_80_and_120() {
    let t = theme(ColorDepth::None);
    let long_old = format!("{OLD}// {}\n", "a fairly long comment line ".repeat(5));
    let long_new = format!("{NEW}// {}\n", "a fairly long comment text ".repeat(5));
    for width in [80, 120] {
        let lines = render_text_diff(&long_old, &long_new, width, &t, &DiffOptions::default());
        assert!(lines.iter().all(|l| cells(l) <= width));
        insta::assert_snapshot!(format!("diff_{width}"), readable(&lines));
    }
}
