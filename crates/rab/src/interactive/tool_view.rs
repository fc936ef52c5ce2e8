//! How a tool call looks: a header with the summary the tool gives of its call
//! (`AgentTool::summary`: `read` the path and range, `bash` `$ command`), streaming
//! output while it runs, then the result — collapsed to a few lines unless expanded
//! (Ctrl+O), edits as a coloured diff, file contents as a line count, failures in the
//! error colour. A tool may draw its call and its result itself
//! (`AgentTool::render_call`, `render_result`) and give a name for people
//! (`AgentTool::label`); what it draws is plain text (control characters removed), so a
//! plugin or MCP server cannot write escapes to the terminal. Nothing here looks at a
//! tool's name.

use std::sync::Arc;

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
    /// The tool's summary of the call, if it gives one.
    pub summary: Option<String>,
    /// The tool's name for people, if it gives one.
    pub label: Option<String>,
    /// The tool's own drawing of the call (the first line the header).
    pub call_lines: Option<Vec<String>>,
    /// The tool, for its own drawing of the result.
    pub tool: Option<Arc<dyn rab_agent::AgentTool>>,
    /// The tool runs shell commands (its header is the command, coloured as one).
    pub is_command: bool,
    /// Output streamed so far (bash).
    pub output: String,
    /// The result, once it arrived.
    pub result: Option<(ToolResultMessage, Option<Value>, u64)>,
    /// When it started.
    pub started: Instant,
    /// A question about it waits for the user: its time is not the tool's.
    pub waiting: bool,
    /// Draw images inline (set when the view is committed; the live region, redrawn
    /// every frame, shows a placeholder).
    pub show_images: bool,
}

impl ToolView {
    /// A view of a call that just started, with what its tool says of it.
    pub fn new(call: ToolCall, tool: Option<Arc<dyn rab_agent::AgentTool>>) -> Self {
        let summary = tool.as_ref().and_then(|t| t.summary(&call.arguments));
        let is_command =
            tool.as_ref().is_some_and(|t| t.facts().rule == rab_agent::RuleKind::Command);
        let label = tool.as_ref().and_then(|t| t.label()).map(|l| plain(&l));
        // Drawn once, at a generous width: the UI cuts each line to the screen's.
        let call_lines = tool
            .as_ref()
            .and_then(|t| t.render_call(&call.arguments, 200))
            .filter(|lines| !lines.is_empty())
            .map(|lines| lines.iter().map(|l| plain(l)).collect());
        Self {
            call,
            summary,
            label,
            call_lines,
            tool,
            is_command,
            output: String::new(),
            result: None,
            started: Instant::now(),
            waiting: false,
            show_images: false,
        }
    }

    /// Shows paths under `cwd` (the workspace) relative to it in the call's line: a
    /// model that writes `/home/me/project/src/main.rs` is shown `src/main.rs`.
    pub fn relative_to(&mut self, cwd: &std::path::Path) {
        let root = cwd.display().to_string();
        if root.len() <= 1 {
            return;
        }
        let prefix = format!("{}/", root.trim_end_matches('/'));
        // Only where a path starts (not inside a longer one: `/x/home/me/proj/…`).
        let strip = |s: &String| {
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            while let Some(at) = rest.find(&prefix) {
                let before = rest[..at].chars().last().or_else(|| out.chars().last());
                out.push_str(&rest[..at]);
                let starts = before.is_none_or(|c| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | '(' | '=' | ':' | ',')
                });
                if !starts {
                    out.push_str(&prefix);
                }
                rest = &rest[at + prefix.len()..];
            }
            out.push_str(rest);
            out
        };
        self.summary = self.summary.as_ref().map(strip);
        if let Some(lines) = &mut self.call_lines {
            for line in lines.iter_mut() {
                *line = strip(line);
            }
        }
    }

    fn header(&self, theme: &Theme) -> String {
        let c = &self.call;
        let (marker_role, marker) = match &self.result {
            None => (Role::Accent, "●"),
            Some((r, _, _)) if r.is_error => (Role::Error, "●"),
            Some(_) => (Role::Success, "●"),
        };
        let marker = theme.fg(marker_role, marker);
        if let Some(first) = self.call_lines.as_ref().and_then(|l| l.first()) {
            return format!("{marker} {}", theme.bold(first));
        }
        let name = theme.bold(self.label.as_deref().unwrap_or(&c.name));
        if let (true, Some(command)) = (self.is_command, &self.summary) {
            return format!("{marker} {}", theme.fg(Role::Bash, command));
        }
        let detail = match &self.summary {
            Some(summary) => summary.clone(),
            None => {
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
        for line in self.call_lines.iter().flatten().skip(1) {
            out.push(gutter(theme.fg(Role::Text, line)));
        }
        match &self.result {
            None => {
                let elapsed = self.started.elapsed().as_secs_f64();
                let tail: Vec<&str> = self.output.lines().rev().take(COLLAPSED_LINES).collect();
                for line in tail.into_iter().rev() {
                    out.push(gutter(ansi::truncate(&theme.dim(line), inner, "…")));
                }
                let state = if self.waiting {
                    "waiting for your answer".to_owned()
                } else {
                    format!("running {elapsed:.1}s")
                };
                out.push(gutter(theme.dim(&state)));
            }
            Some((result, details, ms)) => {
                let own = self
                    .tool
                    .as_ref()
                    .and_then(|t| t.render_result(result, details.as_ref(), inner))
                    .map(|lines| lines.iter().map(|l| theme.fg(Role::Text, &plain(l))).collect());
                let body = own.unwrap_or_else(|| {
                    self.result_lines(result, details.as_ref(), inner, theme, expanded)
                });
                out.extend(body.into_iter().map(gutter));
                for c in &result.content {
                    if let rab_ai::Content::Image { mime_type, data } = c {
                        let shown = if self.show_images {
                            super::images::lines(mime_type, data, inner, theme)
                        } else {
                            vec![super::images::placeholder(mime_type, data, theme)]
                        };
                        out.extend(shown.into_iter().map(gutter));
                    }
                }
                // A resumed session's results have no duration (0): none is shown.
                if (self.is_command && *ms > 0) || *ms >= 1000 {
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
        // A message with attachments (brief).
        if let Some(d) = details.filter(|d| d.get("attachments").is_some_and(Value::is_array)) {
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
        // File contents (numbered lines, as read returns them) collapse to a count.
        let numbered =
            |l: &str| l.split('\t').next().is_some_and(|n| n.trim().parse::<u64>().is_ok());
        let lines_of_file =
            !text.is_empty() && text.lines().all(|l| numbered(l) || l.starts_with('['));
        if lines_of_file {
            let n = text.lines().filter(|l| numbered(l)).count();
            return if expanded {
                text.lines().flat_map(|l| wrap::wrap(l, width)).map(|l| theme.dim(&l)).collect()
            } else {
                vec![theme.dim(&format!("{n} lines"))]
            };
        }
        let lines: Vec<String> =
            text.lines().flat_map(|l| wrap::wrap(l, width)).map(|l| theme.dim(&l)).collect();
        if lines.is_empty() {
            return vec![theme.dim("(no output)")];
        }
        collapse_tail(lines, expanded, theme)
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

/// A tool's own text with control characters (escapes among them) removed: what an
/// extension, plugin or MCP server draws is text, never terminal commands.
fn plain(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rab_agent::{BoxFuture, ToolContext, ToolError, ToolOutput};
    use rab_tui::ColorDepth;

    /// Issue 53: paths in the workspace are shown relative to it.
    #[test]
    fn paths_under_the_workspace_are_shown_relative_to_it() {
        let call = ToolCall {
            id: "c1".into(),
            name: "x".into(),
            arguments: serde_json::json!({}),
            invalid_arguments: None,
            item_id: None,
            signature: None,
        };
        let mut view = ToolView::new(call, None);
        view.summary =
            Some("/home/me/proj/src/main.rs:1-20 and /home/me/projx/a /x/home/me/proj/b".into());
        view.relative_to(std::path::Path::new("/home/me/proj"));
        assert_eq!(
            view.summary.as_deref(),
            Some("src/main.rs:1-20 and /home/me/projx/a /x/home/me/proj/b")
        );
    }

    /// A hostile tool (a plugin or MCP server could be one): its label and drawings carry
    /// terminal escapes (set the title, move the cursor).
    struct Hostile;

    impl rab_agent::AgentTool for Hostile {
        fn spec(&self) -> rab_ai::ToolSpec {
            rab_ai::ToolSpec {
                name: "hostile".into(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object"}),
                grammar: None,
                server: None,
            }
        }
        fn label(&self) -> Option<String> {
            Some("Nice\x1b]0;pwned\x07 tool".into())
        }
        fn render_result(
            &self,
            _result: &ToolResultMessage,
            _details: Option<&Value>,
            _width: usize,
        ) -> Option<Vec<String>> {
            Some(vec!["done\x1b[2J\x1b[H".into()])
        }
        fn execute(
            &self,
            _: Value,
            _: ToolContext,
        ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::text("x")) })
        }
    }

    #[test]
    fn a_tools_own_text_reaches_the_screen_without_its_escapes() {
        let theme = Theme::builtin("dark", ColorDepth::None).unwrap();
        let call = ToolCall {
            id: "c".into(),
            name: "hostile".into(),
            arguments: serde_json::json!({}),
            invalid_arguments: None,
            item_id: None,
            signature: None,
        };
        let mut view = ToolView::new(call, Some(std::sync::Arc::new(Hostile)));
        let result = ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "hostile".into(),
            content: vec![rab_ai::Content::Text { text: "x".into() }],
            is_error: false,
        };
        view.result = Some((result, None, 5));
        let lines = view.render(80, &theme, false).join("\n");
        assert!(lines.contains("Nice]0;pwned tool") && lines.contains("done[2J[H"), "{lines:?}");
        // Only the UI's own styling escapes remain (bold, reset).
        for bad in ["\x1b]", "\x07", "\x1b[2J", "\x1b[H"] {
            assert!(!lines.contains(bad), "{bad:?} in {lines:?}");
        }
    }
}
