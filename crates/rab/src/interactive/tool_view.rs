//! How a tool call looks: a header per tool (`read` shows the path and range, `bash`
//! shows `$ command`), streaming output while it runs, then the result — collapsed to a
//! few lines unless expanded (Ctrl+O), edits as a coloured diff, failures in the error
//! colour.

use std::time::Instant;

use rab_ai::{ToolCall, ToolResultMessage};
use rab_tui::ansi;
use rab_tui::{Role, Theme, wrap};
use serde_json::Value;

/// Lines of output shown while collapsed.
const COLLAPSED_LINES: usize = 6;
/// Lines of a diff shown while collapsed.
const COLLAPSED_DIFF_LINES: usize = 24;

/// One tool call on screen.
pub struct ToolView {
    /// The call.
    pub call: ToolCall,
    /// Output streamed so far (bash).
    pub output: String,
    /// The result, once it arrived.
    pub result: Option<(ToolResultMessage, Option<Value>, u64)>,
    /// When it started.
    pub started: Instant,
}

fn arg<'a>(call: &'a ToolCall, key: &str) -> &'a str {
    call.arguments.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl ToolView {
    /// A view of a call that just started.
    pub fn new(call: ToolCall) -> Self {
        Self { call, output: String::new(), result: None, started: Instant::now() }
    }

    fn header(&self, theme: &Theme) -> String {
        let c = &self.call;
        let (marker_role, marker) = match &self.result {
            None => (Role::Accent, "●"),
            Some((r, _, _)) if r.is_error => (Role::Error, "●"),
            Some(_) => (Role::Success, "●"),
        };
        let marker = theme.fg(marker_role, marker);
        let name = theme.bold(&c.name);
        let detail = match c.name.as_str() {
            "bash" => {
                return format!(
                    "{marker} {}",
                    theme.fg(Role::Bash, &format!("$ {}", arg(c, "command")))
                );
            }
            "read" => {
                let offset = c.arguments.get("offset").and_then(Value::as_u64);
                let limit = c.arguments.get("limit").and_then(Value::as_u64);
                match (offset, limit) {
                    (Some(o), Some(l)) => {
                        format!("{}:{o}-{}", arg(c, "path"), o + l.saturating_sub(1))
                    }
                    (Some(o), None) => format!("{}:{o}-", arg(c, "path")),
                    (None, Some(l)) => format!("{}:1-{l}", arg(c, "path")),
                    (None, None) => arg(c, "path").to_owned(),
                }
            }
            "write" | "edit" | "ls" => arg(c, "path").to_owned(),
            "grep" => {
                let path = arg(c, "path");
                let glob = arg(c, "glob");
                format!(
                    "\"{}\"{}{}",
                    arg(c, "pattern"),
                    if path.is_empty() { String::new() } else { format!(" in {path}") },
                    if glob.is_empty() { String::new() } else { format!(" ({glob})") }
                )
            }
            "glob" => arg(c, "pattern").to_owned(),
            "brief" => c.arguments.get("status").and_then(Value::as_str).unwrap_or("").to_owned(),
            "todo_write" => {
                let n = c.arguments.get("todos").and_then(Value::as_array).map_or(0, Vec::len);
                format!("{n} tasks")
            }
            "task" => {
                let agent = arg(c, "subagent_type");
                let agent = if agent.is_empty() { "general-purpose" } else { agent };
                format!("{} ({agent})", arg(c, "description"))
            }
            _ => {
                let s = c.arguments.to_string();
                if s == "{}" { String::new() } else { s }
            }
        };
        format!("{marker} {name} {}", theme.fg(Role::Text, &detail))
    }

    /// Renders the call for `width`, collapsed or expanded.
    pub fn render(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<String> {
        let mut out = vec![String::new()];
        out.extend(wrap::wrap(&self.header(theme), width));
        let inner = width.saturating_sub(4).max(10);
        let gutter = |line: String| format!("  {line}");
        match &self.result {
            None => {
                let elapsed = self.started.elapsed().as_secs_f64();
                let tail: Vec<&str> = self.output.lines().rev().take(COLLAPSED_LINES).collect();
                for line in tail.into_iter().rev() {
                    out.push(gutter(ansi::truncate(&theme.dim(line), inner, "…")));
                }
                out.push(gutter(theme.dim(&format!("running {elapsed:.1}s"))));
            }
            Some((result, details, ms)) => {
                let body = self.result_lines(result, details.as_ref(), inner, theme, expanded);
                out.extend(body.into_iter().map(gutter));
                if self.call.name == "bash" || *ms >= 1000 {
                    let code =
                        details.as_ref().and_then(|d| d.get("exitCode")).and_then(Value::as_i64);
                    let status = match code {
                        Some(c) if c != 0 => format!("exit {c} · "),
                        _ => String::new(),
                    };
                    out.push(gutter(theme.dim(&format!("{status}{:.1}s", *ms as f64 / 1000.0))));
                }
            }
        }
        out.into_iter().map(|l| ansi::truncate(&l, width, "…")).collect()
    }

    fn result_lines(
        &self,
        result: &ToolResultMessage,
        details: Option<&Value>,
        width: usize,
        theme: &Theme,
        expanded: bool,
    ) -> Vec<String> {
        let text = result.text();
        if result.is_error {
            let lines: Vec<String> = text.lines().flat_map(|l| wrap::wrap(l, width)).collect();
            return collapse(lines, expanded, COLLAPSED_LINES, theme)
                .into_iter()
                .map(|l| theme.fg(Role::Error, &l))
                .collect();
        }
        if let Some(diff) = details.and_then(|d| d.get("diff")).and_then(Value::as_str) {
            let lines = super::render_diff(diff, width, theme);
            return collapse(lines, expanded, COLLAPSED_DIFF_LINES, theme);
        }
        if let Some(todos) = details.and_then(|d| d.get("todos")).and_then(Value::as_array) {
            return todo_lines(todos, width, theme);
        }
        if self.call.name == "brief"
            && let Some(d) = details
        {
            let mut out: Vec<String> = d["message"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .flat_map(|l| wrap::wrap(l, width))
                .collect();
            for a in d["attachments"].as_array().into_iter().flatten() {
                let size = a["size"].as_u64().unwrap_or(0);
                out.push(
                    theme.dim(&format!("📎 {} ({size} bytes)", a["path"].as_str().unwrap_or(""))),
                );
            }
            return out;
        }
        match self.call.name.as_str() {
            "read" => {
                let n = text
                    .lines()
                    .filter(|l| {
                        l.split('\t').next().is_some_and(|n| n.trim().parse::<u64>().is_ok())
                    })
                    .count();
                if expanded {
                    text.lines().flat_map(|l| wrap::wrap(l, width)).map(|l| theme.dim(&l)).collect()
                } else {
                    vec![theme.dim(&format!("{n} lines"))]
                }
            }
            _ => {
                let lines: Vec<String> = text
                    .lines()
                    .flat_map(|l| wrap::wrap(l, width))
                    .map(|l| theme.dim(&l))
                    .collect();
                if lines.is_empty() {
                    return vec![theme.dim("(no output)")];
                }
                collapse_tail(lines, expanded, theme)
            }
        }
    }
}

/// The task list: done struck through and dim, the one in progress highlighted (by its
/// `activeForm` when given), the rest plain. Never collapsed: it is short and is the
/// plan the user follows.
fn todo_lines(todos: &[Value], width: usize, theme: &Theme) -> Vec<String> {
    todos
        .iter()
        .map(|t| {
            let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
            let line = match s("status") {
                "completed" => theme.dim(&format!("☒ {}", s("content"))),
                "in_progress" => {
                    let text =
                        if s("activeForm").is_empty() { s("content") } else { s("activeForm") };
                    theme.fg(Role::Accent, &theme.bold(&format!("▶ {text}")))
                }
                _ => format!("☐ {}", s("content")),
            };
            ansi::truncate(&line, width, "…")
        })
        .collect()
}

/// The first `keep` lines, with a note of how many are hidden.
fn collapse(mut lines: Vec<String>, expanded: bool, keep: usize, theme: &Theme) -> Vec<String> {
    if expanded || lines.len() <= keep + 1 {
        return lines;
    }
    let hidden = lines.len() - keep;
    lines.truncate(keep);
    lines.push(theme.dim(&format!("… {hidden} more lines (Ctrl+O to expand)")));
    lines
}

/// The last lines (command output: the end is what matters), with a note.
fn collapse_tail(lines: Vec<String>, expanded: bool, theme: &Theme) -> Vec<String> {
    if expanded || lines.len() <= COLLAPSED_LINES + 1 {
        return lines;
    }
    let hidden = lines.len() - COLLAPSED_LINES;
    let mut out = vec![theme.dim(&format!("… {hidden} earlier lines (Ctrl+O to expand)"))];
    out.extend(lines.into_iter().skip(hidden));
    out
}
