//! The model's Markdown as Telegram HTML, in messages of at most 4,096 characters.
//!
//! Telegram parses only its own few tags and refuses a message with anything else, so
//! Markdown is never sent raw: it is converted (headings and bold as `<b>`, emphasis
//! `<i>`, strike `<s>`, code `<code>`, fenced code `<pre><code class="language-…">`,
//! links `<a href>`, quotes `<blockquote>`, lists with bullets, tables as preformatted
//! text) and every other `<`, `>`, `&` is escaped — the model's own HTML included.
//! Text is cut into messages between top-level blocks; a block longer than a message is
//! cut between lines, each piece with its tags closed and opened again. A code block
//! longer than [`LONG_CODE`] is sent as a file instead, with a line naming it.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The most a message may hold, in UTF-16 code units as Telegram counts them; kept a
/// little under the API's 4,096.
pub const LIMIT: usize = 4000;

/// A code block longer than this (visible characters) goes as a file.
pub const LONG_CODE: usize = 3000;

/// One top-level block, rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its HTML.
    pub html: String,
    /// Where it starts in the Markdown (bytes).
    pub start: usize,
    /// A code block sent as a file instead: its name and text.
    pub file: Option<(String, String)>,
}

/// `<`, `>`, `&` and `"` escaped for Telegram's HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// What the user sees of `html`, in UTF-16 code units: tags removed, entities as one.
pub fn visible_len(html: &str) -> usize {
    let mut n = 0;
    let mut in_tag = false;
    let mut in_entity = false;
    for c in html.chars() {
        match (c, in_tag, in_entity) {
            ('<', false, false) => in_tag = true,
            ('>', true, _) => in_tag = false,
            (_, true, _) => {}
            ('&', false, false) => {
                in_entity = true;
                n += 1;
            }
            (';', false, true) => in_entity = false,
            (_, false, true) => {}
            (c, false, false) => n += c.len_utf16(),
        }
    }
    n
}

/// The blocks of `markdown`, in order.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES;
    let mut out = Vec::new();
    let mut r = Renderer::default();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        let opens = matches!(event, Event::Start(_));
        let closes = matches!(event, Event::End(_));
        if depth == 0 {
            start = range.start;
        }
        if opens {
            depth += 1;
        }
        r.event(event);
        if closes {
            depth = depth.saturating_sub(1);
        }
        if depth == 0 {
            let html = std::mem::take(&mut r.out).trim_end().to_owned();
            let file = r.file.take();
            if !html.is_empty() || file.is_some() {
                out.push(Block { html, start, file });
            }
        }
    }
    out
}

/// Markdown rendered into Telegram HTML, one top-level block at a time.
#[derive(Default)]
struct Renderer {
    out: String,
    /// List numbering: `None` for bullets, the next number otherwise.
    lists: Vec<Option<u64>>,
    /// Inside a code block: its language and text so far.
    code: Option<(String, String)>,
    /// Inside a table: its rows of cells.
    table: Option<Vec<Vec<String>>>,
    cell: Option<String>,
    /// A long code block taken out as a file.
    file: Option<(String, String)>,
    files: usize,
}

impl Renderer {
    fn push(&mut self, html: &str) {
        if let Some(cell) = &mut self.cell {
            cell.push_str(html);
        } else {
            self.out.push_str(html);
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
        } else if let Some(cell) = &mut self.cell {
            cell.push_str(text);
        } else {
            let escaped = escape(text);
            self.out.push_str(&escaped);
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let html = format!("<code>{}</code>", escape(&t));
                self.push(&html);
            }
            // The model's own HTML is shown, never obeyed.
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::SoftBreak => self.push("\n"),
            Event::HardBreak => self.push("\n"),
            Event::Rule => self.push("———\n\n"),
            Event::TaskListMarker(done) => self.push(if done { "☑ " } else { "☐ " }),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => {}
            Tag::Heading { .. } | Tag::Strong => self.push("<b>"),
            Tag::Emphasis => self.push("<i>"),
            Tag::Strikethrough => self.push("<s>"),
            Tag::BlockQuote(_) => self.push("<blockquote>"),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => l
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .next()
                        .unwrap_or("")
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                if !self.lists.is_empty() {
                    self.push("\n");
                }
                self.lists.push(first);
            }
            Tag::Item => {
                let indent = "  ".repeat(self.lists.len().saturating_sub(1));
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    Some(None) | None => "• ".to_owned(),
                };
                self.push(&format!("{indent}{marker}"));
            }
            Tag::Link { dest_url, .. } => {
                let html = format!("<a href=\"{}\">", escape(&dest_url));
                self.push(&html);
            }
            Tag::Image { dest_url, .. } => {
                let html = format!("<a href=\"{}\">🖼 ", escape(&dest_url));
                self.push(&html);
            }
            Tag::Table(_) => self.table = Some(Vec::new()),
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.push(Vec::new());
                }
            }
            Tag::TableCell => self.cell = Some(String::new()),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.push(if self.lists.is_empty() { "\n\n" } else { "" }),
            TagEnd::Heading(level) => {
                self.push("</b>");
                self.push(if level == HeadingLevel::H1 { "\n\n" } else { "\n" });
            }
            TagEnd::Strong => self.push("</b>"),
            TagEnd::Emphasis => self.push("</i>"),
            TagEnd::Strikethrough => self.push("</s>"),
            TagEnd::BlockQuote(_) => {
                let trimmed = self.out.trim_end().len();
                self.out.truncate(trimmed);
                self.push("</blockquote>\n\n");
            }
            TagEnd::CodeBlock => {
                let Some((lang, code)) = self.code.take() else { return };
                let code = code.trim_end_matches('\n').to_owned();
                if code.chars().count() > LONG_CODE {
                    self.files += 1;
                    let ext = extension(&lang);
                    let name = format!("code-{}.{ext}", self.files);
                    let lines = code.lines().count();
                    let note =
                        format!("📎 {} ({lines} lines of code, sent as a file)\n\n", escape(&name));
                    self.push(&note);
                    self.file = Some((name, code));
                } else {
                    let class = if lang.is_empty() {
                        String::new()
                    } else {
                        format!(" class=\"language-{}\"", escape(&lang))
                    };
                    let html = format!("<pre><code{class}>{}</code></pre>\n\n", escape(&code));
                    self.push(&html);
                }
            }
            TagEnd::List(_) => {
                self.lists.pop();
                if self.lists.is_empty() {
                    self.push("\n");
                }
            }
            TagEnd::Item => self.push("\n"),
            TagEnd::Link | TagEnd::Image => self.push("</a>"),
            TagEnd::TableCell => {
                if let (Some(cell), Some(t)) = (self.cell.take(), &mut self.table)
                    && let Some(row) = t.last_mut()
                {
                    row.push(cell);
                }
            }
            TagEnd::Table => {
                let rows = self.table.take().unwrap_or_default();
                self.push(&table(&rows));
            }
            TagEnd::TableHead
            | TagEnd::TableRow
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
        }
    }
}

/// A table as aligned preformatted text.
fn table(rows: &[Vec<String>]) -> String {
    let width = |i: usize| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns).map(|i| width(i).unwrap_or(0)).collect();
    let mut text = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..columns)
            .map(|i| {
                let c = row.get(i).map(String::as_str).unwrap_or("");
                format!("{c:<w$}", w = widths[i])
            })
            .collect();
        text.push_str(cells.join(" │ ").trim_end());
        text.push('\n');
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            text.push_str(&rule.join("─┼─"));
            text.push('\n');
        }
    }
    format!("<pre>{}</pre>\n\n", escape(text.trim_end()))
}

/// A file extension for a fenced block's language.
fn extension(lang: &str) -> String {
    let known = [
        ("rust", "rs"),
        ("python", "py"),
        ("javascript", "js"),
        ("typescript", "ts"),
        ("shell", "sh"),
        ("bash", "sh"),
        ("sh", "sh"),
        ("json", "json"),
        ("yaml", "yaml"),
        ("toml", "toml"),
        ("go", "go"),
        ("c", "c"),
        ("cpp", "cpp"),
        ("java", "java"),
        ("diff", "diff"),
        ("html", "html"),
        ("css", "css"),
        ("sql", "sql"),
        ("markdown", "md"),
    ];
    let lang = lang.to_ascii_lowercase();
    known
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, e)| (*e).to_owned())
        .or_else(|| {
            (!lang.is_empty() && lang.chars().all(|c| c.is_ascii_alphanumeric()) && lang.len() <= 6)
                .then_some(lang)
        })
        .unwrap_or_else(|| "txt".to_owned())
}

/// Where the message being edited starts: a block of the answer (its byte offset) and
/// how many pieces of that block earlier messages hold already (a block longer than a
/// message is cut into pieces, and cutting a growing block keeps its earlier pieces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// Where the block starts in the answer.
    pub start: usize,
    /// Its pieces already in earlier messages.
    pub pieces: usize,
}

/// The answer from `mark` on, in messages: those now complete (the first goes in the
/// message being edited, the rest are new), what the message being edited shows next,
/// and where that message starts from now on. Rendering the same answer again from the
/// returned mark never repeats what the complete messages hold.
pub fn pack(answer: &str, mark: Mark, limit: usize) -> (Vec<String>, String, Mark) {
    let mut full = Vec::new();
    let mut html = String::new();
    let mut next = mark;
    for (i, block) in blocks(&answer[mark.start..]).into_iter().enumerate() {
        let at = mark.start + block.start;
        let skip = if i == 0 { mark.pieces } else { 0 };
        for (k, piece) in split_block(&block.html, limit).into_iter().enumerate().skip(skip) {
            let joined = if html.is_empty() { piece.clone() } else { format!("{html}\n\n{piece}") };
            if visible_len(&joined) <= limit {
                html = joined;
                continue;
            }
            full.push(std::mem::take(&mut html));
            next = Mark { start: at, pieces: k };
            html = piece;
        }
    }
    (full, html, next)
}

/// `html` cut into pieces of at most `limit` visible units, between lines; tags open
/// at a cut are closed at its end and opened again at the next piece's start.
pub fn split_block(html: &str, limit: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut open: Vec<String> = Vec::new();
    for line in html.split_inclusive('\n') {
        for chunk in cut_line(line, limit / 2) {
            let reopen: String = open.iter().map(|t| format!("<{t}>")).collect();
            if visible_len(&current) + visible_len(&chunk) > limit && !current.trim().is_empty() {
                let close: String =
                    open.iter().rev().map(|t| format!("</{}>", tag_name(t))).collect();
                pieces.push(format!("{current}{close}"));
                current = reopen;
            }
            current.push_str(&chunk);
            track(&chunk, &mut open);
        }
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces
}

/// A line longer than `max` visible units, cut outside tags and entities.
fn cut_line(line: &str, max: usize) -> Vec<String> {
    if visible_len(line) <= max {
        return vec![line.to_owned()];
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut n = 0;
    let (mut in_tag, mut in_entity) = (false, false);
    for c in line.chars() {
        current.push(c);
        match (c, in_tag, in_entity) {
            ('<', false, false) => in_tag = true,
            ('>', true, _) => in_tag = false,
            ('&', false, false) => {
                in_entity = true;
                n += 1;
            }
            (';', false, true) => in_entity = false,
            (_, false, false) => n += c.len_utf16(),
            _ => {}
        }
        if n >= max && !in_tag && !in_entity {
            out.push(std::mem::take(&mut current));
            n = 0;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The tags still open after `html`, kept whole (attributes too) to be opened again.
fn track(html: &str, open: &mut Vec<String>) {
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        let Some(end) = rest[at..].find('>') else { break };
        let tag = &rest[at + 1..at + end];
        if let Some(name) = tag.strip_prefix('/') {
            if let Some(i) = open.iter().rposition(|t| tag_name(t) == name) {
                open.remove(i);
            }
        } else {
            open.push(tag.to_owned());
        }
        rest = &rest[at + end + 1..];
    }
}

fn tag_name(tag: &str) -> &str {
    tag.split_whitespace().next().unwrap_or(tag)
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
