use super::*;

fn html(markdown: &str) -> String {
    blocks(markdown).into_iter().map(|b| b.html).collect::<Vec<_>>().join("\n\n")
}

#[test]
fn markdown_becomes_telegram_html_and_everything_else_is_escaped() {
    assert_eq!(
        html("# Title\n\nSome **bold**, *it*, ~~gone~~ and `x < y`."),
        "<b>Title</b>\n\nSome <b>bold</b>, <i>it</i>, <s>gone</s> and <code>x &lt; y</code>."
    );
    assert_eq!(
        html("a < b && c > d <script>alert(1)</script>"),
        "a &lt; b &amp;&amp; c &gt; d &lt;script&gt;alert(1)&lt;/script&gt;"
    );
    assert_eq!(
        html("```rust\nfn main() { a<b }\n```"),
        "<pre><code class=\"language-rust\">fn main() { a&lt;b }</code></pre>"
    );
    assert_eq!(
        html("[docs](https://x.y/?a=1&b=\"2\")"),
        "<a href=\"https://x.y/?a=1&amp;b=&quot;2&quot;\">docs</a>"
    );
    assert_eq!(html("- one\n- two\n  1. inner"), "• one\n• two\n  1. inner");
    assert_eq!(html("> quoted\n> text"), "<blockquote>quoted\ntext</blockquote>");
    let t = html("| a | bb |\n|---|---|\n| 1 | 2 |");
    assert!(t.starts_with("<pre>a │ bb\n") && t.ends_with("</pre>"), "{t}");
}

#[test]
fn blocks_know_where_they_start_and_long_code_becomes_a_file() {
    let md = "para one\n\n```\nx\n```\n\npara two";
    let b = blocks(md);
    assert_eq!(b.iter().map(|b| b.start).collect::<Vec<_>>(), [0, 10, 21]);
    let long = format!("before\n\n```python\n{}\n```", "print(1)\n".repeat(400));
    let b = blocks(&long);
    let (name, text) = b[1].file.clone().unwrap();
    assert_eq!(name, "code-1.py");
    assert!(text.starts_with("print(1)") && text.lines().count() == 400);
    assert!(b[1].html.contains("code-1.py (400 lines of code, sent as a file)"), "{}", b[1].html);
}

#[test]
fn a_long_block_is_cut_between_lines_with_its_tags_closed_and_reopened() {
    let code = (0..300).map(|i| format!("line {i} <&>")).collect::<Vec<_>>().join("\n");
    let html = format!("<pre><code class=\"language-sh\">{}</code></pre>", escape(&code));
    let pieces = split_block(&html, 1000);
    assert!(pieces.len() > 3, "{}", pieces.len());
    for p in &pieces {
        assert!(visible_len(p) <= 1000, "{}", visible_len(p));
        assert!(p.starts_with("<pre><code class=\"language-sh\">"), "{p}");
        assert!(p.ends_with("</code></pre>"), "{p}");
    }
    let joined: String = pieces
        .iter()
        .map(|p| {
            p.trim_start_matches("<pre><code class=\"language-sh\">")
                .trim_end_matches("</code></pre>")
        })
        .collect();
    assert_eq!(joined, escape(&code));
    // One endless line is cut too, never inside an entity.
    let line = "&lt;".repeat(3000);
    for p in split_block(&line, 1000) {
        assert!(visible_len(&p) <= 1000 && !p.ends_with('&') && p.ends_with(';'));
    }
}

#[test]
fn visible_length_counts_what_the_user_sees_in_utf16() {
    assert_eq!(visible_len("<b>ab</b> &amp; 😀"), 7);
}

/// An answer streamed in small deltas and packed after each: every line ends up in
/// exactly one message, in order, each message within the limit.
#[test]
fn packing_a_growing_answer_never_repeats_or_loses_a_line() {
    let answer: String =
        (1..=400).map(|i| format!("Line {i} of a long answer.\n")).collect::<String>()
            + "\n```\n"
            + &"code line\n".repeat(300)
            + "```\n\nThe end.";
    let mut messages: Vec<String> = vec![String::new()];
    let mut mark = Mark::default();
    let mut upto = 0;
    while upto < answer.len() {
        upto = (upto + 37).min(answer.len());
        while !answer.is_char_boundary(upto) {
            upto += 1;
        }
        let (full, current, next) = pack(&answer[..upto], mark, 1000);
        // The first complete one is the message being edited; each after it is new.
        for m in full {
            *messages.last_mut().unwrap() = m;
            messages.push(String::new());
        }
        *messages.last_mut().unwrap() = current;
        mark = next;
    }
    for m in &messages {
        assert!(visible_len(m) <= 1000, "{}", visible_len(m));
    }
    let all = messages.join("\n");
    let lines: Vec<&str> = all.lines().filter(|l| l.starts_with("Line ")).collect();
    assert_eq!(lines.len(), 400);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(*l, format!("Line {} of a long answer.", i + 1));
    }
    assert_eq!(all.matches("code line").count(), 300);
    assert_eq!(all.matches("The end.").count(), 1);
}
