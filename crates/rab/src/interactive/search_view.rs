//! A web search the provider ran for the model, and the pages an answer cites, as
//! lines: a header with what was searched for, the pages found (title, then address),
//! and after the answer the sources it cites. Titles and addresses come from the web:
//! control characters are removed before they reach the terminal.

use rab_ai::{AssistantBlock, AssistantMessage, WebSearch};
use rab_tui::ansi;
use rab_tui::{Role, Theme, wrap};

use crate::term::safe;

/// Pages listed under a search.
const SHOWN_PAGES: usize = 8;

/// A completed search.
pub fn search_lines(search: &WebSearch, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(4).max(10);
    let gutter = |line: String| format!("  {line}");
    let role = if search.error.is_some() { Role::Error } else { Role::Success };
    let query = search.queries.join("; ");
    let header = format!(
        "{} {} {}",
        theme.fg(role, "●"),
        theme.bold("web_search"),
        theme.fg(Role::Text, &safe(&query))
    );
    let mut out = vec![String::new()];
    out.extend(wrap::wrap(&header, width));
    if let Some(e) = &search.error {
        out.push(gutter(theme.fg(Role::Error, &format!("failed: {}", safe(e)))));
        return out;
    }
    let n = search.results.len();
    out.push(gutter(theme.dim(&format!("{n} result{}", if n == 1 { "" } else { "s" }))));
    for r in search.results.iter().take(SHOWN_PAGES) {
        let line =
            format!("{} {}", theme.fg(Role::Text, &safe(&r.title)), theme.dim(&safe(&r.url)));
        out.push(gutter(ansi::truncate(&line, inner, "…")));
    }
    if n > SHOWN_PAGES {
        out.push(gutter(theme.dim(&format!("… {} more", n - SHOWN_PAGES))));
    }
    out
}

/// The pages `message`'s text cites, each once, numbered; none when it cites none.
pub fn source_lines(message: &AssistantMessage, width: usize, theme: &Theme) -> Vec<String> {
    let mut pages: Vec<(&str, &str)> = Vec::new();
    for b in &message.content {
        if let AssistantBlock::Text { citations, .. } = b {
            for c in citations {
                if !pages.iter().any(|(url, _)| *url == c.url) {
                    pages.push((&c.url, &c.title));
                }
            }
        }
    }
    if pages.is_empty() {
        return Vec::new();
    }
    let inner = width.saturating_sub(4).max(10);
    let mut out = vec![String::new(), theme.dim("Sources:")];
    for (k, (url, title)) in pages.iter().enumerate() {
        let title = if title.is_empty() { *url } else { *title };
        let line =
            format!("[{}] {} {}", k + 1, theme.fg(Role::Text, &safe(title)), theme.dim(&safe(url)));
        out.push(format!("  {}", ansi::truncate(&line, inner, "…")));
    }
    out
}
