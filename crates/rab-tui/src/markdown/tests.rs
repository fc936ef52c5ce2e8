use super::*;
use crate::ansi::{strip, width as cells};
use pretty_assertions::assert_eq;

const DOC: &str = r#"# Release notes

Rab renders **bold**, *italic*, ~~struck~~, `inline code`, and a [link](https://example.com/docs) in one paragraph that is long enough to wrap at eighty columns for sure.

## Lists

- first item
- second item with a long line of text that has to wrap under its own bullet with a hanging indent
  - nested item
    1. numbered one
    2. numbered two
- [ ] open task
- [x] done task

3. three
4. four

### Quotes and rules

> A quote with *emphasis*.
>
> > And a nested quote.

---

| Name | Count | Notes |
|:-----|------:|:-----:|
| alpha | 1 | short |
| beta | 22 | a much longer note that will need to wrap inside its cell when narrow |

```rust
fn main() {
    println!("hi");
}
```

<div>raw html</div>

Line one\
line two after a hard break. Visit <https://rab.dev>.
"#;

fn theme(depth: ColorDepth) -> Theme {
    Theme::builtin("dark", depth).unwrap()
}

fn render(text: &str, width: usize) -> Vec<String> {
    render_markdown(text, width, &theme(ColorDepth::TrueColor), None)
}

fn plain(text: &str, width: usize) -> Vec<String> {
    render(text, width).iter().map(|l| strip(l)).collect()
}

fn assert_well_formed(lines: &[String], width: usize) {
    for l in lines {
        assert!(cells(l) <= width, "{width}: {l:?}");
        assert!(!l.contains('\n'), "{l:?}");
        if l.contains('\x1b') {
            assert!(l.ends_with(RESET), "{l:?}");
        }
    }
}

#[test]
fn snapshot_document_80_and_120() {
    let hl = Highlighter::new();
    for width in [80, 120] {
        let lines = render_markdown(DOC, width, &theme(ColorDepth::TrueColor), Some(&hl));
        assert_well_formed(&lines, width);
        let text: Vec<String> = lines.iter().map(|l| strip(l)).collect();
        insta::assert_snapshot!(format!("markdown_{width}"), text.join("\n"));
    }
}

#[test]
fn every_width_keeps_lines_within_bounds() {
    for width in [1, 2, 5, 10, 20, 33, 40, 60] {
        assert_well_formed(&render(DOC, width), width);
    }
}

#[test]
fn inline_styles_use_theme_roles() {
    let t = theme(ColorDepth::TrueColor);
    let lines = render_markdown("# Title\n\nsee `x` and [docs](https://d.io)", 80, &t, None);
    assert!(lines[0].contains(&t.fg_code(Role::Heading)) && lines[0].contains("\x1b[1m"));
    assert!(lines[2].contains(&t.fg_code(Role::Code)), "{:?}", lines[2]);
    assert!(lines[2].contains(&t.fg_code(Role::Link)), "{:?}", lines[2]);
    assert_eq!(strip(&lines[2]), "see x and docs (https://d.io)");
}

#[test]
fn no_color_keeps_code_visible_with_backticks() {
    let t = theme(ColorDepth::None);
    let lines = render_markdown("run `cargo test` now", 80, &t, None);
    assert_eq!(strip(&lines[0]), "run `cargo test` now");
    assert!(!lines[0].contains("38;"), "{:?}", lines[0]);
}

#[test]
fn headings_are_distinguishable_by_level() {
    let lines = plain("# One\n\n## Two\n\n### Three\n\n#### Four", 40);
    assert_eq!(lines, vec!["One", "", "Two", "", "### Three", "", "#### Four"]);
    let styled = render("# One\n\n## Two", 40);
    assert!(styled[0].contains("\x1b[4m") && !styled[2].contains("\x1b[4m"));
}

#[test]
fn lists_hang_and_nest() {
    let lines = plain("- aaa bbb ccc ddd\n  - nested eee fff\n1. x\n", 12);
    assert_eq!(lines, vec!["• aaa bbb", "  ccc ddd", "  ◦ nested", "    eee fff", "", "1. x"]);
    let tasks = plain("- [ ] todo\n- [x] done", 40);
    assert_eq!(tasks, vec!["[ ] todo", "[x] done"]);
    let loose = plain("- a\n\n- b", 40);
    assert_eq!(loose, vec!["• a", "", "• b"]);
}

#[test]
fn quotes_nest_with_gutters() {
    let lines = plain("> outer\n>\n> > inner text here", 14);
    assert_eq!(lines, vec!["│ outer", "│", "│ │ inner text", "│ │ here"]);
}

#[test]
fn tables_fit_wrap_and_align() {
    let md = "| a | b |\n|---|--:|\n| x | 10 |\n| long cell text | 2 |";
    let lines = plain(md, 80);
    assert_eq!(
        lines,
        vec![
            "┌────────────────┬────┐",
            "│ a              │  b │",
            "├────────────────┼────┤",
            "│ x              │ 10 │",
            "│ long cell text │  2 │",
            "└────────────────┴────┘",
        ]
    );
    let narrow = plain(md, 16);
    assert!(narrow.iter().all(|l| cells(l) <= 16), "{narrow:?}");
    assert!(narrow.len() > lines.len(), "{narrow:?}");
    let tiny = plain(md, 8);
    assert_eq!(tiny[0], "a │ b");
}

#[test]
fn unclosed_fence_renders_as_code_so_far() {
    let hl = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    let lines = render_markdown("text\n\n```rust\nlet x = 1;\nlet y", 80, &t, Some(&hl));
    let text: Vec<String> = lines.iter().map(|l| strip(l)).collect();
    assert_eq!(text, vec!["text", "", "```rust", "let x = 1;", "let y"]);
    assert!(lines[3].contains("\x1b[38;2;"), "{:?}", lines[3]);
    let closed = plain("```\nplain\n```\nafter", 80);
    assert_eq!(closed, vec!["```", "plain", "```", "", "after"]);
    assert_eq!(plain("```py\n", 80), vec!["```py"]);
}

#[test]
fn html_and_rules_pass_through() {
    assert_eq!(plain("<b>hi</b> there", 40), vec!["<b>hi</b> there"]);
    assert_eq!(plain("<div>\nx\n</div>", 40), vec!["<div>", "x", "</div>"]);
    assert_eq!(plain("a\n\n---\n\nb", 5), vec!["a", "", "─────", "", "b"]);
}

#[test]
fn control_characters_in_text_are_neutralised() {
    let lines = render("evil \x1b[2J text\tend", 40);
    assert!(!lines[0].contains("\x1b[2J"), "{:?}", lines[0]);
}

#[test]
fn stable_prefix_stops_before_the_last_block() {
    assert_eq!(stable_prefix_len(""), 0);
    assert_eq!(stable_prefix_len("one paragraph"), 0);
    assert_eq!(stable_prefix_len("one\n\ntwo"), 5);
    assert_eq!(stable_prefix_len("one\n\ntwo\n\n```rust\nfn x"), 10);
    assert_eq!(stable_prefix_len("# h\n\n- a\n- b\n\n  more"), 5);
    // Without a blank line the next line could still join the block before it.
    assert_eq!(stable_prefix_len("# h\n- a"), 0);
    assert_eq!(stable_prefix_len("| a |\n|---|\n|"), 0);
    assert_eq!(stable_prefix_len("para\n\n    indented code"), 6);
    // An unclosed fence swallows the rest, so nothing after its start is stable.
    assert_eq!(stable_prefix_len("a\n\n```\ncode\n\nmore\n"), 3);
}

#[test]
fn committed_blocks_never_change_while_streaming() {
    let hl = Highlighter::new();
    let t = theme(ColorDepth::TrueColor);
    let full = render_markdown(DOC, 80, &t, Some(&hl));
    let mut committed = 0;
    for end in (0..=DOC.len()).filter(|&i| DOC.is_char_boundary(i)) {
        let n = stable_prefix_len(&DOC[..end]);
        assert!(n >= committed, "stable prefix went back at {end}");
        committed = n;
        let stable = render_markdown(&DOC[..n], 80, &t, Some(&hl));
        assert_eq!(full[..stable.len()], stable[..], "at {end}: {:?}", &DOC[..n]);
        if !stable.is_empty() {
            assert_eq!(full[stable.len()], "", "a blank line follows committed blocks");
        }
    }
}

#[test]
fn large_documents_render_quickly() {
    let doc: String = (0..500)
        .map(|i| format!("Paragraph {i} with **bold** and `code`.\n\n- item\n- item\n\n"))
        .collect();
    let start = std::time::Instant::now();
    let lines = render(&doc, 100);
    assert!(lines.len() > 2000);
    // A guard against quadratic work, not a benchmark: loose enough for a busy machine.
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn snapshot_highlighted_code_block_80_and_120() {
    let hl = Highlighter::new();
    let md = "```python\ndef greet(name: str) -> str:\n    # say hello to someone, politely, with a comment long enough to wrap at eighty\n    return f\"Hello, {name}!\"\n```\n";
    for width in [80, 120] {
        let lines = render_markdown(md, width, &theme(ColorDepth::Palette), Some(&hl));
        assert_well_formed(&lines, width);
        assert!(lines[1].contains("\x1b[38;5;"), "{:?}", lines[1]);
        let readable: Vec<String> = lines.iter().map(|l| l.replace('\x1b', "␛")).collect();
        insta::assert_snapshot!(format!("code_block_{width}"), readable.join("\n"));
    }
}
