use pretty_assertions::assert_eq;

use super::*;

/// An applied edit as the whole new text.
#[derive(Debug, PartialEq)]
struct Done {
    text: String,
    count: usize,
    kind: MatchKind,
    notes: Vec<String>,
}

/// `apply`, with the splices applied to `content`.
fn done(content: &str, old: &str, new: &str, replace_all: bool) -> Result<Done, Miss> {
    apply(content, old, new, replace_all).map(|a| Done {
        text: splice(content, &a.splices),
        count: a.count,
        kind: a.kind,
        notes: a.notes,
    })
}

/// The edit applied, its notes left out.
fn ok(content: &str, old: &str, new: &str) -> Done {
    quiet(done(content, old, new, false).unwrap())
}

fn quiet(applied: Done) -> Done {
    Done { notes: Vec::new(), ..applied }
}

fn exact(text: &str, count: usize) -> Done {
    Done { text: text.to_owned(), count, kind: MatchKind::Exact, notes: Vec::new() }
}

fn tolerant(text: &str, count: usize) -> Done {
    Done { text: text.to_owned(), count, kind: MatchKind::Tolerant, notes: Vec::new() }
}

#[test]
fn exact_unique_match_is_replaced() {
    assert_eq!(
        ok("let a = 1;\nlet b = 2;\n", "b = 2", "b = 3"),
        exact("let a = 1;\nlet b = 3;\n", 1)
    );
}

#[test]
fn exact_ambiguous_match_reports_every_line() {
    let content = "x = 1\ny = 2\nx = 1\n\nx = 1\n";
    assert_eq!(
        apply(content, "x = 1", "x = 9", false),
        Err(Miss::Ambiguous { lines: vec![1, 3, 5] })
    );
}

#[test]
fn overlapping_occurrences_are_ambiguous() {
    assert_eq!(apply("aaa", "aa", "b", false), Err(Miss::Ambiguous { lines: vec![1, 1] }));
}

#[test]
fn replace_all_replaces_every_exact_occurrence() {
    assert_eq!(quiet(done("a.b a.b\na.b", "a.b", "c", true).unwrap()), exact("c c\nc", 3));
}

#[test]
fn trailing_whitespace_differences_match_tolerantly() {
    let content = "fn a() {   \n    b();\t\n}\n";
    assert_eq!(
        ok(content, "fn a() {\n    b();\n}", "fn a() {\n    c();\n}"),
        // The file's trailing whitespace is the file's: kept on the lines kept.
        tolerant("fn a() {   \n    c();\t\n}\n", 1)
    );
}

#[test]
fn space_indented_old_text_matches_a_tab_file_and_new_text_gets_tabs() {
    let content = "fn main() {\n\tif x {\n\t\ty();\n\t}\n}\n";
    let old = "    if x {\n        y();\n    }";
    let new = "    if x {\n        y();\n        if z {\n            w();\n        }\n    }";
    assert_eq!(
        ok(content, old, new),
        tolerant("fn main() {\n\tif x {\n\t\ty();\n\t\tif z {\n\t\t\tw();\n\t\t}\n\t}\n}\n", 1)
    );
}

#[test]
fn four_space_model_text_is_rewritten_to_a_two_space_file() {
    let content = "a:\n  b:\n    c: 1\n  d: 2\n";
    let old = "    b:\n        c: 1";
    let new = "    b:\n        c: 1\n        e:\n            f: 3";
    assert_eq!(
        ok(content, old, new),
        tolerant("a:\n  b:\n    c: 1\n    e:\n      f: 3\n  d: 2\n", 1)
    );
}

#[test]
fn unindented_old_text_is_placed_at_the_regions_indentation() {
    let content = "class A:\n    def f(self):\n        return 1\n";
    let old = "def f(self):\n    return 1";
    let new = "def f(self):\n    x = 2\n    return x";
    assert_eq!(
        ok(content, old, new),
        tolerant("class A:\n    def f(self):\n        x = 2\n        return x\n", 1)
    );
}

#[test]
fn typographic_quotes_dashes_and_nbsp_match_their_ascii_forms() {
    // What the model kept keeps the file's typography; what it typed takes it too.
    let content = "say(“hi” – it’s…\u{a0}fine)\nnext\n";
    assert_eq!(
        ok(content, "say(\"hi\" - it's... fine)", "say(\"bye\" - it's... fine)"),
        tolerant("say(“bye” – it’s…\u{a0}fine)\nnext\n", 1)
    );
    // The model's curly quotes do not land in a file that uses ASCII ones.
    let content = "say(\"hi\")\n";
    assert_eq!(ok(content, "say(“hi”)", "say(“yo”)"), tolerant("say(\"yo\")\n", 1));
}

#[test]
fn tolerant_ambiguity_is_reported_and_replace_all_takes_every_region() {
    let content = "if a {\n\tb()\n}\nif a {\n\tb()\n}\n";
    let old = "if a {\n    b()\n}";
    assert_eq!(apply(content, old, "x", false), Err(Miss::Ambiguous { lines: vec![1, 4] }));
    assert_eq!(quiet(done(content, old, "x", true).unwrap()), tolerant("x\nx\n", 2));
}

#[test]
fn deleting_lines_takes_their_newline() {
    let content = "a\n  b  \nc\n";
    assert_eq!(ok(content, "b\n", ""), tolerant("a\nc\n", 1));
    // At the end of a file without a final newline, the newline before goes instead.
    assert_eq!(ok("a\n b ", "b\n", ""), tolerant("a", 1));
}

#[test]
fn tolerant_replacement_keeps_the_missing_final_newline() {
    assert_eq!(ok("a\n  b  ", "b\n", "c\n"), tolerant("a\n  c", 1));
}

#[test]
fn pasted_read_line_numbers_are_ignored() {
    let content = "one\ntwo\nthree\n";
    let applied = done(content, "2\ttwo\n3\tthree", "2\tTWO\n3\tthree", false).unwrap();
    assert_eq!(applied.notes, ["removed the line numbers copied from read output"]);
    assert_eq!(quiet(applied), exact("one\nTWO\nthree\n", 1));
}

#[test]
fn blank_only_old_text_never_matches_tolerantly() {
    assert_eq!(apply("a\n\nb\n", "  \n \n", "x", false), Err(Miss::NotFound { closest: None }));
}

#[test]
fn a_miss_reports_the_closest_region_with_line_numbers() {
    let content = "fn one() {}\n\nfn compute(x: i32) -> i32 {\n    x * 2\n}\n\nfn three() {}\n";
    let Err(Miss::NotFound { closest: Some(c) }) =
        apply(content, "fn compute(x: u32) -> u32 {\n    x * 3\n}", "", false)
    else {
        panic!("expected a candidate");
    };
    assert_eq!((c.first_line, c.last_line), (3, 5));
    assert_eq!(c.numbered, "3\tfn compute(x: i32) -> i32 {\n4\t    x * 2\n5\t}");
    assert!(c.similarity > 0.8, "{}", c.similarity);
}

#[test]
fn a_miss_with_nothing_similar_has_no_candidate() {
    assert_eq!(
        apply("alpha\nbeta\n", "zzzz qqqq xxxx", "", false),
        Err(Miss::NotFound { closest: None })
    );
}

#[test]
fn closest_scan_samples_big_inputs_and_still_finds_the_region() {
    let mut lines: Vec<String> = (0..20_000).map(|i| format!("let v{i} = {i};")).collect();
    lines[15_000] = "fn needle(a: &str) -> bool {".to_owned();
    lines[15_001] = "    a.is_empty()".to_owned();
    let content = lines.join("\n");
    let old = "fn needle(a: &String) -> bool {\n    a.len() == 0";
    let Err(Miss::NotFound { closest: Some(c) }) = apply(&content, old, "", false) else {
        panic!("expected a candidate");
    };
    assert_eq!(c.first_line, 15_001);
}

#[test]
fn candidates_are_capped() {
    let content: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let old: String = (0..40).map(|i| format!("line {i}!\n")).collect();
    let Err(Miss::NotFound { closest: Some(c) }) = apply(&content, &old, "", false) else {
        panic!("expected a candidate");
    };
    assert_eq!(c.numbered.lines().count(), MAX_CANDIDATE_LINES + 1);
    assert!(c.numbered.ends_with("… 10 more lines"));
}

#[test]
fn normalize_folds_whitespace_and_punctuation() {
    assert_eq!(normalize("\t  a   b\u{a0}c  \r"), "a b c");
    assert_eq!(normalize("“q” ‘s’ a–b—c … \u{feff}"), "\"q\" 's' a-b-c ...");
}

#[test]
fn detects_indentation_style() {
    use crate::edit_indent::Style;
    let style = |unit, width| Some(Style { unit, width });
    assert_eq!(detect_style(["a", "\tb", "\t\tc"].into_iter()), style('\t', 4));
    assert_eq!(detect_style(["a", "  b", "    c", "  d"].into_iter()), style(' ', 2));
    assert_eq!(detect_style(["a", "    b", "        c"].into_iter()), style(' ', 4));
    assert_eq!(
        detect_style(["a", "\u{3000}b", "\u{3000}\u{3000}c"].into_iter()),
        style('\u{3000}', 2)
    );
    assert_eq!(detect_style(["a", "b"].into_iter()), None);
}

#[test]
fn identical_indentation_is_left_alone() {
    // Only a trailing space differs, so odd indentation in new_text is the model's intent.
    let content = "   odd \n";
    assert_eq!(ok(content, "   odd  ", "     odder"), tolerant("     odder\n", 1));
}

#[test]
fn crlf_regions_of_a_mixed_file_stay_crlf() {
    let content = "a\r\nb\r\nc\nd\n";
    assert_eq!(ok(content, "a\nb", "A\nB\nX"), tolerant("A\r\nB\r\nX\r\nc\nd\n", 1));
    assert_eq!(ok(content, "c", "C"), exact("a\r\nb\r\nC\nd\n", 1));
}

#[test]
fn a_line_sent_without_its_indentation_gives_its_indentation_to_added_lines() {
    let content = "def f():\n\tif a:\n\t\treturn 1\n";
    // Relative to the line: the file's tabs, nested as typed.
    assert_eq!(
        ok(content, "return 1", "if b:\n    return 2\nreturn 1").text,
        "def f():\n\tif a:\n\t\tif b:\n\t\t\treturn 2\n\t\treturn 1\n"
    );
    // New lines already at the line's indentation are written as typed.
    assert_eq!(
        ok(content, "return 1", "log()\n\t\treturn 1").text,
        "def f():\n\tif a:\n\t\tlog()\n\t\treturn 1\n"
    );
    // Several lines whose later lines matched with their indentation: as typed.
    let content = "    a = 1\n    b = 2\n";
    assert_eq!(ok(content, "a = 1\n    b = 2", "a = 1\n    b = 3").text, "    a = 1\n    b = 3\n");
}

#[test]
fn a_match_only_inside_longer_tokens_is_refused() {
    let Err(Miss::Partial { lines, numbered }) = apply("X = 30\nY = 1\n", "X = 3", "X = 5", false)
    else {
        panic!("expected a partial-match refusal");
    };
    assert_eq!((lines, numbered.as_str()), (vec![1], "1\tX = 30"));
    // Beside a whole-word match, the partial one does not count.
    assert_eq!(ok("X = 30\nX = 3\n", "X = 3", "X = 5").text, "X = 30\nX = 5\n");
}

#[test]
fn added_lines_indented_neither_from_column_0_nor_from_the_line_are_refused() {
    // `else:` dedented on purpose: re-indenting it would break the block.
    let content = "    if a:\n        do()\n";
    let miss = apply(content, "do()", "do()\n    else:\n        other()", false).unwrap_err();
    let Miss::Unclear { region, why } = miss else { panic!("{miss:?}") };
    assert_eq!((region.first_line, region.numbered.as_str()), (2, "2\t        do()"));
    assert!(why.contains("neither from column 0 nor from the line"), "{why}");
}

#[test]
fn replace_all_deleting_adjacent_last_lines_takes_each_newline_once() {
    assert_eq!(quiet(done("x\nx", "  x", "", true).unwrap()).text, "");
}

#[test]
fn a_fragment_of_a_line_in_a_script_without_spaces_is_a_word_of_its_own() {
    assert_eq!(ok("今日は晴れです。\n", "晴れ", "雨").text, "今日は雨です。\n");
}
