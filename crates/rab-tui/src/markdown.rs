//! Markdown to styled, wrapped lines (pulldown-cmark events → lines). Headings, emphasis,
//! inline code, links (text, then the URL dimmed), block quotes with a `│ ` gutter,
//! nested lists with hanging indents and task boxes, rules, tables, fenced code with
//! syntax highlighting between dim fence lines (unindented, so copied code pastes
//! cleanly), and HTML shown as text.
//!
//! Assistant messages stream in and are re-rendered often, so rendering is one pass over
//! the events, and incomplete input renders as what it is so far (an unclosed fence is
//! code to the end). [`stable_prefix_len`] tells which leading blocks can no longer
//! change, so the app can commit their lines to scrollback and re-render only the tail.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::ansi::{self, RESET};
use crate::component::{Component, RenderCx};
use crate::highlight::{Highlighter, plain_lines, sanitize_line};
use crate::markdown_table::render_table;
use crate::theme::{ColorDepth, Role, Theme};
use crate::wrap::wrap_text;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A markdown document as a component.
#[derive(Clone, Copy, Debug)]
pub struct Markdown<'a> {
    /// The source.
    pub text: &'a str,
    /// Highlighter for fenced code; `None` renders code plain.
    pub highlighter: Option<&'a Highlighter>,
}

impl Component for Markdown<'_> {
    fn render(&self, cx: &RenderCx<'_>) -> Vec<String> {
        render_markdown(self.text, cx.width, cx.theme, self.highlighter)
    }
}

/// Renders markdown to lines of at most `width` cells.
pub fn render_markdown(
    text: &str,
    width: usize,
    theme: &Theme,
    highlighter: Option<&Highlighter>,
) -> Vec<String> {
    let mut r = Renderer::new(width.max(1), theme, highlighter);
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        r.event(event, &text[range]);
    }
    r.flush_inline();
    r.out
}

/// Byte offset up to which `text` consists of complete top-level blocks (0 when none is
/// known to be complete). The last block may still grow or change kind as text arrives
/// (a paragraph becoming a setext heading, a fence closing, a table gaining rows), and a
/// block not followed by a blank line may still absorb the next line (a table row that
/// is only `|` so far), so the cut is at the start of a line that follows a blank line
/// and begins a later top-level block. Render `text[..n]` once, commit it, and keep
/// re-rendering `text[n..]`; separate the two with one blank line, as the renderer
/// separates blocks.
pub fn stable_prefix_len(text: &str) -> usize {
    let mut depth = 0usize;
    let mut starts = Vec::new();
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    starts.push(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ if depth == 0 => starts.push(range.start),
            _ => {}
        }
    }
    starts
        .iter()
        .skip(1)
        // Cut at the line start so an indented block keeps its indentation in the tail.
        .map(|&s| text[..s].rfind('\n').map_or(0, |i| i + 1))
        .rfind(|&s| s > 0 && after_blank_line(text, s))
        .unwrap_or(0)
}

/// Whether the line before the one starting at `at` is blank.
fn after_blank_line(text: &str, at: usize) -> bool {
    let Some(before) = text[..at].strip_suffix('\n') else { return false };
    before.rsplit('\n').next().is_some_and(|l| l.trim().is_empty())
}

/// Something that indents the lines inside it.
enum Container {
    Quote,
    Item {
        /// Bullet or number, styled, shown on the item's first line.
        marker: String,
        width: usize,
        pending: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Span {
    Emphasis,
    Strong,
    Strike,
    Link,
    Heading(HeadingLevel),
}

struct CodeBlock {
    info: String,
    text: String,
    closed: bool,
}

struct Table {
    aligns: Vec<pulldown_cmark::Alignment>,
    head: Vec<String>,
    body: Vec<Vec<String>>,
    row: Vec<String>,
}

struct Renderer<'a> {
    theme: &'a Theme,
    hl: Option<&'a Highlighter>,
    width: usize,
    out: Vec<String>,
    containers: Vec<Container>,
    /// Next number of each open list (`None` for bullets).
    lists: Vec<Option<u64>>,
    inline: String,
    spans: Vec<Span>,
    /// Start of the current link text in `inline`, and its URL.
    links: Vec<(usize, String)>,
    /// A block ended; the next one starts after a blank line.
    gap: bool,
    code: Option<CodeBlock>,
    table: Option<Table>,
    in_html: bool,
}

impl<'a> Renderer<'a> {
    fn new(width: usize, theme: &'a Theme, hl: Option<&'a Highlighter>) -> Renderer<'a> {
        Renderer {
            theme,
            hl,
            width,
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            inline: String::new(),
            spans: Vec::new(),
            links: Vec::new(),
            gap: false,
            code: None,
            table: None,
            in_html: false,
        }
    }

    fn event(&mut self, event: Event<'_>, source: &str) {
        match event {
            Event::Start(tag) => self.start(tag, source),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => self.inline_code(&t),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => {
                if self.in_html {
                    for line in t.trim_end_matches('\n').split('\n') {
                        let line = sanitize_line(line).into_owned();
                        self.emit_wrapped(&line);
                    }
                } else {
                    self.text(&t);
                }
            }
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                let codes = self.codes();
                self.inline.push_str(RESET);
                self.inline.push('\n');
                self.inline.push_str(&codes);
            }
            Event::Rule => {
                self.start_block();
                let w = self.width.saturating_sub(self.prefix_width());
                let rule = self.theme.fg(Role::Dim, &"─".repeat(w));
                self.emit(&rule);
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                if let Some(Container::Item { marker, width, pending: true }) =
                    self.containers.last_mut()
                {
                    *marker = self.theme.fg(Role::Bullet, mark);
                    *width = mark.len();
                } else {
                    self.text(mark);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>, source: &str) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.push_span(Span::Heading(level));
                if level >= HeadingLevel::H3 {
                    let hashes = "#".repeat(level as usize);
                    self.inline.push_str(&format!("{hashes} "));
                }
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code =
                    Some(CodeBlock { info, text: String::new(), closed: is_closed(source) });
            }
            Tag::HtmlBlock => {
                self.start_block();
                self.in_html = true;
            }
            Tag::List(first) => {
                // A nested list directly follows its item's text, without a blank line.
                self.flush_inline();
                if self.lists.is_empty() {
                    self.start_block();
                }
                self.lists.push(first);
            }
            Tag::Item => self.start_item(),
            Tag::Table(aligns) => {
                self.start_block();
                self.table =
                    Some(Table { aligns, head: Vec::new(), body: Vec::new(), row: Vec::new() });
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.push_span(Span::Emphasis),
            Tag::Strong => self.push_span(Span::Strong),
            Tag::Strikethrough => self.push_span(Span::Strike),
            Tag::Link { dest_url, .. } => {
                self.links.push((self.inline.len(), dest_url.to_string()));
                self.push_span(Span::Link);
            }
            Tag::Image { .. } => self.text("[image: "),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.start_block(),
            // Not enabled in the parser options; their text still shows.
            Tag::Superscript | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::FootnoteDefinition | TagEnd::DefinitionListTitle => {
                self.end_block()
            }
            TagEnd::DefinitionListDefinition
            | TagEnd::DefinitionList
            | TagEnd::MetadataBlock(_) => self.end_block(),
            TagEnd::Heading(_) => {
                self.pop_span();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::HtmlBlock => {
                self.in_html = false;
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.gap = true;
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item { pending: true, .. }) = self.containers.last() {
                    // An empty item still shows its bullet.
                    self.emit("");
                }
                self.containers.pop();
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.head = std::mem::take(&mut t.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = self.table.as_mut() {
                    let row = std::mem::take(&mut t.row);
                    t.body.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline).replace('\n', " ");
                if let Some(t) = self.table.as_mut() {
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_span(),
            TagEnd::Link => self.end_link(),
            TagEnd::Image => self.text("]"),
            TagEnd::Superscript | TagEnd::Subscript => {}
        }
    }

    fn start_item(&mut self) {
        self.flush_inline();
        let depth = self.lists.len();
        let marker = match self.lists.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => format!("{} ", ["•", "◦", "▪"][(depth.max(1) - 1) % 3]),
        };
        let width = ansi::width(&marker);
        let marker = self.theme.fg(Role::Bullet, &marker);
        self.containers.push(Container::Item { marker, width, pending: true });
    }

    fn end_link(&mut self) {
        self.pop_span();
        let Some((start, url)) = self.links.pop() else { return };
        let shown = ansi::strip(self.inline.get(start..).unwrap_or(""));
        let same = shown == url || url.strip_prefix("mailto:") == Some(shown.as_str());
        if !same && !url.starts_with('#') && !url.is_empty() {
            let codes = self.codes();
            let dim = self.theme.dim(&format!("({url})"));
            self.inline.push_str(&format!(" {dim}{codes}"));
        }
    }

    fn end_code(&mut self) {
        let Some(code) = self.code.take() else { return };
        let lines = match self.hl {
            Some(hl) => hl.highlight(&code.text, &code.info, self.theme),
            None => plain_lines(&code.text),
        };
        let lang = code.info.split([' ', ',']).next().unwrap_or("");
        self.emit(&self.theme.dim(&format!("```{lang}")));
        if !code.text.is_empty() {
            for line in lines {
                self.emit_wrapped(&line);
            }
        }
        if code.closed {
            self.emit(&self.theme.dim("```"));
        }
        self.gap = true;
    }

    fn end_table(&mut self) {
        let Some(t) = self.table.take() else { return };
        let w = self.width.saturating_sub(self.prefix_width());
        for line in render_table(&t.head, &t.body, &t.aligns, w, self.theme) {
            self.emit(&line);
        }
        self.inline.clear();
        self.gap = true;
    }

    // ---- inline text ----------------------------------------------------------------

    fn text(&mut self, t: &str) {
        if let Some(code) = self.code.as_mut() {
            code.text.push_str(t);
            return;
        }
        if t.contains(['\t', '\x1b']) || t.chars().any(char::is_control) {
            let clean: Vec<String> = t.split('\n').map(|l| sanitize_line(l).into_owned()).collect();
            self.inline.push_str(&clean.join(" "));
        } else {
            self.inline.push_str(t);
        }
    }

    fn inline_code(&mut self, t: &str) {
        let codes = self.codes();
        let t = sanitize_line(t);
        let body = if self.theme.depth == ColorDepth::None {
            format!("`{t}`")
        } else {
            format!("{}{t}", self.theme.fg_code(Role::Code))
        };
        self.inline.push_str(&format!("{RESET}{body}{RESET}{codes}"));
    }

    fn push_span(&mut self, s: Span) {
        self.spans.push(s);
        let codes = self.codes();
        self.inline.push_str(&codes);
    }

    fn pop_span(&mut self) {
        self.spans.pop();
        let codes = self.codes();
        self.inline.push_str(RESET);
        self.inline.push_str(&codes);
    }

    /// Escapes for everything currently open: the quote colour, then each span.
    fn codes(&self) -> String {
        let mut s = String::new();
        if self.containers.iter().any(|c| matches!(c, Container::Quote)) {
            s.push_str(&self.theme.fg_code(Role::Quote));
        }
        for span in &self.spans {
            match span {
                Span::Emphasis => s.push_str("\x1b[3m"),
                Span::Strong => s.push_str("\x1b[1m"),
                Span::Strike => s.push_str("\x1b[9m"),
                Span::Link => {
                    s.push_str(&self.theme.fg_code(Role::Link));
                    s.push_str("\x1b[4m");
                }
                Span::Heading(level) => {
                    s.push_str(&self.theme.fg_code(Role::Heading));
                    s.push_str("\x1b[1m");
                    if *level == HeadingLevel::H1 {
                        s.push_str("\x1b[4m");
                    }
                }
            }
        }
        s
    }

    // ---- blocks and lines -----------------------------------------------------------

    fn start_block(&mut self) {
        self.flush_inline();
        if self.gap && !self.out.is_empty() {
            let gutter = self.gap_prefix();
            self.out.push(gutter);
        }
        self.gap = false;
    }

    fn end_block(&mut self) {
        self.flush_inline();
        self.gap = true;
    }

    fn flush_inline(&mut self) {
        if self.table.is_some() {
            return;
        }
        let text = std::mem::take(&mut self.inline);
        if ansi::strip(&text).trim().is_empty() {
            return;
        }
        let text = if text.contains('\x1b') { format!("{text}{RESET}") } else { text };
        let room = self.width.saturating_sub(self.prefix_width()).max(1);
        for line in wrap_text(&text, room) {
            self.emit(&line);
        }
    }

    fn emit_wrapped(&mut self, line: &str) {
        let room = self.width.saturating_sub(self.prefix_width()).max(1);
        for part in wrap_text(line, room) {
            self.emit(&part);
        }
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::Item { width, .. } => *width,
            })
            .sum()
    }

    /// Pushes one line with the containers' prefixes (bullets on an item's first line).
    fn emit(&mut self, content: &str) {
        let mut line = String::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => line.push_str(&self.theme.fg(Role::Quote, "│ ")),
                Container::Item { marker, width, pending } => {
                    if *pending {
                        line.push_str(marker);
                        *pending = false;
                    } else {
                        line.push_str(&" ".repeat(*width));
                    }
                }
            }
        }
        line.push_str(content);
        let mut line = ansi::truncate(&line, self.width, "…");
        if line.contains('\x1b') && !line.ends_with(RESET) {
            line.push_str(RESET);
        }
        self.out.push(line);
    }

    /// The blank line between blocks: quote gutters stay, indentation does not.
    fn gap_prefix(&self) -> String {
        let mut plain = String::new();
        for c in &self.containers {
            match c {
                Container::Quote => plain.push_str("│ "),
                Container::Item { width, .. } => plain.push_str(&" ".repeat(*width)),
            }
        }
        let plain = plain.trim_end();
        if plain.is_empty() { String::new() } else { self.theme.fg(Role::Quote, plain) }
    }
}

/// Whether a fenced code block's source ends with its closing fence.
fn is_closed(source: &str) -> bool {
    let trimmed = source.trim_end();
    let first = trimmed.trim_start();
    let fence: String = first.chars().take_while(|&c| c == '`' || c == '~').collect();
    if fence.len() < 3 {
        // Indented code has no fence to close.
        return true;
    }
    let Some((_, last)) = trimmed.rsplit_once('\n') else { return false };
    let last = last.trim();
    let closing: String = last.chars().take_while(|&c| c == '`' || c == '~').collect();
    closing.len() >= fence.len() && closing.starts_with(&fence[..1]) && closing.len() == last.len()
}

#[cfg(test)]
mod tests;
