//! HTML from untrusted text: escaping, coloured unified diffs, and a small Markdown
//! renderer (fenced code, headings, paragraphs, lists, quotes, tables, inline code,
//! emphasis, http(s) links). It emits only its own fixed tags; every byte of the input
//! goes through [`escape_into`], so model output can never inject markup.

/// Nesting limit for quotes and emphasis: deeper input is shown literally rather than
/// recursing on a hostile string.
const MAX_DEPTH: usize = 8;

/// Appends `text` with `& < > " '` escaped (safe in text and in quoted attributes).
pub(super) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// `text` escaped.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

/// A unified diff as `<pre class="diff">`, one span per line classed by its kind.
pub(super) fn diff(out: &mut String, text: &str) {
    out.push_str("<pre class=\"diff\">");
    for line in text.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            "diff-file"
        } else if line.starts_with('+') {
            "diff-add"
        } else if line.starts_with('-') {
            "diff-del"
        } else if line.starts_with("@@") {
            "diff-hunk"
        } else if line.starts_with("diff ") || line.starts_with("index ") {
            "diff-file"
        } else {
            "diff-ctx"
        };
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        escape_into(out, line);
        // The line feed inside the (block) span: one line on screen, and copying the
        // text keeps its line breaks.
        out.push_str("\n</span>");
    }
    out.push_str("</pre>");
}

/// Preformatted text (tool output, JSON).
pub(super) fn pre(out: &mut String, class: &str, text: &str) {
    out.push_str("<pre class=\"");
    out.push_str(class);
    out.push_str("\">");
    escape_into(out, text);
    out.push_str("</pre>");
}

/// Markdown rendered as HTML inside `<div class="md">`.
pub(super) fn markdown(out: &mut String, text: &str) {
    out.push_str("<div class=\"md\">");
    let lines: Vec<&str> = text.lines().collect();
    blocks(out, &lines, 0);
    out.push_str("</div>");
}

fn blocks(out: &mut String, lines: &[&str], depth: usize) {
    let mut para: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        let is_block_start = t.is_empty()
            || fence_of(t).is_some()
            || heading(t).is_some()
            || is_rule(t)
            || (t.starts_with('>') && depth < MAX_DEPTH)
            || list_item(line).is_some()
            || is_table_start(lines, i);
        if !is_block_start {
            para.push(t);
            i += 1;
            continue;
        }
        paragraph(out, &mut para);
        if t.is_empty() {
            i += 1;
        } else if let Some(fence) = fence_of(t) {
            i = code_block(out, lines, i, fence);
        } else if let Some((level, title)) = heading(t) {
            out.push_str(&format!("<h{level}>"));
            inline(out, title, 0);
            out.push_str(&format!("</h{level}>"));
            i += 1;
        } else if is_rule(t) {
            out.push_str("<hr>");
            i += 1;
        } else if t.starts_with('>') && depth < MAX_DEPTH {
            let mut inner = Vec::new();
            while let Some(q) = lines.get(i).map(|l| l.trim_start()).filter(|l| l.starts_with('>'))
            {
                let q = &q[1..];
                inner.push(q.strip_prefix(' ').unwrap_or(q));
                i += 1;
            }
            out.push_str("<blockquote>");
            blocks(out, &inner, depth + 1);
            out.push_str("</blockquote>");
        } else if list_item(line).is_some() {
            i = list(out, lines, i);
        } else {
            i = table(out, lines, i);
        }
    }
    paragraph(out, &mut para);
}

fn paragraph(out: &mut String, para: &mut Vec<&str>) {
    if para.is_empty() {
        return;
    }
    out.push_str("<p>");
    inline(out, &para.join("\n"), 0);
    out.push_str("</p>");
    para.clear();
}

/// The fence (a run of three or more backticks or tildes) opening a code block.
fn fence_of(t: &str) -> Option<&str> {
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.len() - t.trim_start_matches(c).len();
    (n >= 3).then(|| &t[..n])
}

/// Renders the code block opened at `start`; returns the index after it. An unclosed
/// fence runs to the end, as in CommonMark.
fn code_block(out: &mut String, lines: &[&str], start: usize, fence: &str) -> usize {
    let lang = lines[start].trim_start()[fence.len()..].trim();
    let lang = lang.split_whitespace().next().unwrap_or("");
    let mut end = start + 1;
    while end < lines.len() {
        let t = lines[end].trim();
        if t.starts_with(fence) && t.trim_start_matches(&fence[..1]).is_empty() {
            break;
        }
        end += 1;
    }
    let body = lines[start + 1..end].join("\n");
    if matches!(lang, "diff" | "patch" | "udiff") {
        diff(out, &body);
    } else {
        out.push_str("<pre class=\"code\"><code");
        if !lang.is_empty() {
            out.push_str(" data-lang=\"");
            escape_into(out, lang);
            out.push('"');
        }
        out.push('>');
        escape_into(out, &body);
        out.push_str("</code></pre>");
    }
    end + 1
}

/// `# Title` → (level, title). Levels start at 3: the page already uses h1 and h2.
fn heading(t: &str) -> Option<(usize, &str)> {
    let n = t.len() - t.trim_start_matches('#').len();
    let rest = &t[n..];
    ((1..=6).contains(&n) && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| ((n + 2).min(6), rest.trim().trim_end_matches('#').trim_end()))
}

fn is_rule(t: &str) -> bool {
    let marks: Vec<char> = t.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3 && ['-', '*', '_'].iter().any(|m| marks.iter().all(|c| c == m))
}

/// A list item: (indent, ordered start number, content).
fn list_item(line: &str) -> Option<(usize, Option<u64>, &str)> {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(marker) {
            return Some((indent, None, rest));
        }
    }
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if (1..=9).contains(&digits) {
        let rest = &t[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some((indent, t[..digits].parse().ok(), rest));
        }
    }
    None
}

/// Renders the list starting at `start` (nesting by indentation); returns the index
/// after it.
fn list(out: &mut String, lines: &[&str], start: usize) -> usize {
    // Open lists: (indent of their items, closing tag).
    let mut stack: Vec<(usize, &str)> = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if let Some((indent, number, content)) = list_item(line) {
            while stack.len() > 1 && stack.last().is_some_and(|(top, _)| indent < *top) {
                if let Some((_, close)) = stack.pop() {
                    out.push_str("</li>");
                    out.push_str(close);
                }
            }
            match stack.last() {
                Some((top, _)) if indent < top + 2 => out.push_str("</li>"),
                Some(_) | None => {
                    let (open, close) = match number {
                        Some(1) => ("<ol>".to_owned(), "</ol>"),
                        Some(n) => (format!("<ol start=\"{n}\">"), "</ol>"),
                        None => ("<ul>".to_owned(), "</ul>"),
                    };
                    out.push_str(&open);
                    stack.push((indent, close));
                }
            }
            out.push_str("<li>");
            inline(out, content, 0);
        } else if line.trim().is_empty() {
            // A blank line ends the list unless an item or an indented line follows.
            let next = lines.get(i + 1).copied().unwrap_or("");
            let is_indented = next.starts_with("  ") && !next.trim().is_empty();
            if list_item(next).is_none() && !is_indented {
                break;
            }
        } else if line.starts_with(' ') && fence_of(line.trim_start()).is_none() {
            out.push('\n');
            inline(out, line.trim(), 0);
        } else {
            break;
        }
        i += 1;
    }
    while let Some((_, close)) = stack.pop() {
        out.push_str("</li>");
        out.push_str(close);
    }
    i
}

fn is_table_start(lines: &[&str], i: usize) -> bool {
    let is_separator = |l: &str| {
        let l = l.trim();
        l.contains('-') && l.contains('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
    };
    lines[i].contains('|') && lines.get(i + 1).is_some_and(|l| is_separator(l))
}

fn cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    row.split('|').map(str::trim).collect()
}

/// Renders the pipe table starting at `start`; returns the index after it.
fn table(out: &mut String, lines: &[&str], start: usize) -> usize {
    out.push_str("<table><thead><tr>");
    for cell in cells(lines[start]) {
        out.push_str("<th>");
        inline(out, cell, 0);
        out.push_str("</th>");
    }
    out.push_str("</tr></thead><tbody>");
    let mut i = start + 2;
    while let Some(row) = lines.get(i).filter(|l| l.contains('|') && !l.trim().is_empty()) {
        out.push_str("<tr>");
        for cell in cells(row) {
            out.push_str("<td>");
            inline(out, cell, 0);
            out.push_str("</td>");
        }
        out.push_str("</tr>");
        i += 1;
    }
    out.push_str("</tbody></table>");
    i
}

/// Inline Markdown: code spans, strong, emphasis, strikethrough, http(s) links.
/// Unmatched markers are shown as typed.
fn inline(out: &mut String, text: &str, depth: usize) {
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        if let Some(used) = span(out, rest, prev, depth) {
            prev = rest[..used].chars().last();
            rest = &rest[used..];
            continue;
        }
        let n = c.len_utf8();
        escape_into(out, &rest[..n]);
        prev = Some(c);
        rest = &rest[n..];
    }
}

/// Renders one inline span at the start of `rest`; returns the bytes it used.
fn span(out: &mut String, rest: &str, prev: Option<char>, depth: usize) -> Option<usize> {
    let c = rest.chars().next()?;
    match c {
        '`' => {
            let ticks = &rest[..rest.len() - rest.trim_start_matches('`').len()];
            let after = &rest[ticks.len()..];
            let Some(end) = closing_ticks(after, ticks.len()) else {
                // Shown as typed, the whole run at once so no shorter run pairs up.
                escape_into(out, ticks);
                return Some(ticks.len());
            };
            let code = &after[..end];
            out.push_str("<code>");
            let trimmed = code.strip_prefix(' ').and_then(|c| c.strip_suffix(' '));
            escape_into(out, trimmed.filter(|t| !t.trim().is_empty()).unwrap_or(code));
            out.push_str("</code>");
            Some(ticks.len() * 2 + end)
        }
        '*' | '_' | '~' if depth < MAX_DEPTH => {
            // `_` inside a word is part of an identifier (snake_case), not emphasis.
            if c == '_' && prev.is_some_and(char::is_alphanumeric) {
                return None;
            }
            // `rest` starts with the ASCII marker; the next character may be wider.
            let double =
                if rest.as_bytes().get(1) == Some(&(c as u8)) { &rest[..2] } else { &rest[..1] };
            let (marker, tag) = match (c, double.len() == 2 && double.chars().all(|d| d == c)) {
                ('~', true) => ("~~", "del"),
                ('~', false) => return None,
                (_, true) => (double, "strong"),
                (_, false) => (&rest[..1], "em"),
            };
            let body = &rest[marker.len()..];
            let end = body.find(marker)?;
            let inner = &body[..end];
            let after = body[end + marker.len()..].chars().next();
            if inner.is_empty()
                || inner.starts_with(char::is_whitespace)
                || inner.ends_with(char::is_whitespace)
                || (c == '_' && after.is_some_and(char::is_alphanumeric))
            {
                return None;
            }
            out.push_str(&format!("<{tag}>"));
            inline(out, inner, depth + 1);
            out.push_str(&format!("</{tag}>"));
            Some(marker.len() * 2 + end)
        }
        '[' if depth < MAX_DEPTH => {
            let close = rest.find("](")?;
            let label = &rest[1..close];
            let tail = &rest[close + 2..];
            let end = tail.find(')')?;
            let url = tail[..end].trim();
            let is_web = url.starts_with("https://") || url.starts_with("http://");
            if label.is_empty()
                || label.contains('\n')
                || !is_web
                || url.contains(char::is_whitespace)
            {
                return None;
            }
            out.push_str("<a href=\"");
            escape_into(out, url);
            out.push_str("\" rel=\"noopener noreferrer\">");
            inline(out, label, depth + 1);
            out.push_str("</a>");
            Some(close + 2 + end + 1)
        }
        _ => None,
    }
}

/// Byte offset in `text` of the next run of exactly `n` backticks.
fn closing_ticks(text: &str, n: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == n {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}
