//! The permission question in the terminal UI: the call (a diff for edits, the command
//! for bash), then allow once, always (saves the rule in the project settings), or
//! deny, optionally with a reason typed right there that goes to the model.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rab_core::{Approval, ApprovalKind, ApprovalRequest};
use rab_tui::keys::{Action, Keybindings};
use rab_tui::{Role, Theme, ansi};
use serde_json::Value;

/// The question on screen.
pub struct PermissionView {
    request: ApprovalRequest,
    selected: usize,
    reason: String,
}

/// The key that confirms the selected option (a number key answers through it).
fn confirm_key() -> KeyEvent {
    KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
}

/// Lines of the preview shown before it is cut.
const PREVIEW_LINES: usize = 30;
/// Rows a long preview line may wrap to before the rest is left out.
const WRAPPED_ROWS: usize = 6;

impl PermissionView {
    /// A view of `request`.
    pub fn new(request: ApprovalRequest) -> Self {
        Self { request, selected: 0, reason: String::new() }
    }

    /// The answers offered to a question (the model's options).
    fn choices(&self) -> Vec<String> {
        match &self.request.kind {
            ApprovalKind::Question { options, .. } => options.clone(),
            ApprovalKind::Permission | ApprovalKind::Plan { .. } => Vec::new(),
        }
    }

    fn is_question(&self) -> bool {
        matches!(self.request.kind, ApprovalKind::Question { .. })
    }

    fn options(&self) -> Vec<String> {
        if self.is_question() {
            let mut out = self.choices();
            out.push(if self.reason.is_empty() {
                "Type an answer".to_owned()
            } else {
                format!("Answer: {}", self.reason)
            });
            return out;
        }
        if matches!(self.request.kind, ApprovalKind::Plan { .. }) {
            let change = if self.reason.is_empty() {
                "No, keep planning (type what to change)".to_owned()
            } else {
                format!("No, change: {}", self.reason)
            };
            return vec![
                "Yes, start (ask before edits)".to_owned(),
                "Yes, and accept edits from now on".to_owned(),
                change,
            ];
        }
        let reason = if self.reason.is_empty() {
            "No, and tell the model why (type a reason)".to_owned()
        } else {
            format!("No: {}", self.reason)
        };
        if !self.has_always() {
            return vec!["Yes, this time".to_owned(), reason];
        }
        vec![
            "Yes, this time".to_owned(),
            format!("Yes, always allow {} in this project", self.request.rule),
            reason,
        ]
    }

    /// Whether "always" is offered: not for a protected path, asked about every time.
    fn has_always(&self) -> bool {
        !self.request.rule.is_empty()
    }

    /// Handles a key; `Some` is the answer.
    pub fn key(&mut self, key: &KeyEvent, bindings: &Keybindings) -> Option<Approval> {
        if bindings.matches(Action::SelectCancel, key) {
            return Some(Approval::Deny(None));
        }
        let last = self.options().len() - 1;
        if bindings.matches(Action::SelectConfirm, key) && self.is_question() {
            let typed = self.reason.trim().to_owned();
            return match self.choices().get(self.selected) {
                Some(choice) => Some(Approval::Answer(choice.clone())),
                None if typed.is_empty() => None,
                None => Some(Approval::Answer(typed)),
            };
        }
        if bindings.matches(Action::SelectConfirm, key) {
            return Some(match self.selected {
                0 => Approval::Once,
                1 if self.has_always() => Approval::Always,
                _ => Approval::Deny(Some(self.reason.trim().to_owned()).filter(|r| !r.is_empty())),
            });
        }
        // A number chooses its option, as in Claude Code (`1` is yes, this time): the
        // last option (a refusal with a reason, an answer of one's own) is moved to,
        // for typing. Once a reason is being typed, digits are part of it.
        if let KeyCode::Char(c @ '1'..='9') = key.code
            && self.reason.is_empty()
            && !key.modifiers.contains(KeyModifiers::CONTROL)
            && let Some(n) = c.to_digit(10).map(|n| n as usize - 1).filter(|n| *n <= last)
        {
            self.selected = n;
            if n < last {
                return self.key(&confirm_key(), bindings);
            }
            return None;
        }
        match key.code {
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(last),
            KeyCode::Backspace => {
                self.reason.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                // Typing is the reason for a refusal.
                self.reason.push(c);
                self.selected = last;
            }
            _ => {}
        }
        None
    }

    /// The question's lines.
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<String> {
        let r = &self.request;
        let mut out = vec![
            String::new(),
            theme.fg(
                Role::Warning,
                &theme.bold(&match &r.kind {
                    ApprovalKind::Plan { .. } => "Start with this plan?".to_owned(),
                    ApprovalKind::Question { .. } => "The agent asks:".to_owned(),
                    ApprovalKind::Permission => format!("Allow {}?", r.tool),
                }),
            ),
            theme.dim(&format!("{} ({})", r.reason, r.level.as_str())),
        ];
        let body = match (&r.preview, r.arguments.get("command").and_then(Value::as_str)) {
            (Some(preview), _) => preview.clone(),
            (None, Some(cmd)) => format!("$ {cmd}"),
            (None, None) => serde_json::to_string_pretty(&r.arguments).unwrap_or_default(),
        };
        let lines: Vec<&str> = body.lines().collect();
        // Long lines are wrapped, not cut: the end of a changed line is often what matters
        // (a flag at the end of a command, the value of an assignment).
        let mut shown = 0;
        for line in lines.iter().take(PREVIEW_LINES) {
            let role = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => Some(Role::DiffAdd),
                Some('-') if !line.starts_with("---") => Some(Role::DiffRemove),
                _ => None,
            };
            let rows = rab_tui::wrap::wrap(line, width.saturating_sub(2).max(10));
            let total = rows.len();
            for (i, row) in rows.into_iter().take(WRAPPED_ROWS).enumerate() {
                let row = if i + 1 == WRAPPED_ROWS && total > WRAPPED_ROWS {
                    format!("{row}…")
                } else {
                    row
                };
                out.push(format!("  {}", role.map_or_else(|| row.clone(), |r| theme.fg(r, &row))));
            }
            shown += 1;
        }
        if lines.len() > shown {
            out.push(theme.dim(&format!("  … {} more lines", lines.len() - shown)));
        }
        for (i, option) in self.options().iter().enumerate() {
            let line = if i == self.selected {
                theme.fg(Role::Accent, &format!("❯ {}. {option}", i + 1))
            } else {
                format!("  {}. {option}", i + 1)
            };
            out.push(line);
        }
        out.push(theme.dim(if self.is_question() {
            "1-9 or ↑↓ Enter answer · type your own answer · Esc decline"
        } else {
            "1-9 or ↑↓ Enter choose · type a reason to refuse · Esc deny"
        }));
        out.into_iter().map(|l| ansi::truncate(&l, width, "…")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    fn request(kind: ApprovalKind) -> ApprovalRequest {
        ApprovalRequest {
            kind,
            tool: "any_name".into(),
            call_id: "call_1".into(),
            level: rab_agent::ToolLevel::ReadOnly,
            arguments: serde_json::json!({}),
            preview: None,
            reason: "why".into(),
            rule: "rule".into(),
            advice: None,
        }
    }

    fn enter() -> KeyEvent {
        KeyEvent {
            code: KeyCode::Enter,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: crossterm::event::KeyEventState::NONE,
        }
    }

    #[test]
    fn the_kind_not_the_tool_name_decides_how_to_ask() {
        let keys = Keybindings::default();
        let q = ApprovalKind::Question {
            question: "Which?".into(),
            options: vec!["a".into(), "b".into()],
        };
        let mut view = PermissionView::new(request(q));
        assert_eq!(view.options(), ["a", "b", "Type an answer"]);
        assert_eq!(view.key(&enter(), &keys), Some(Approval::Answer("a".into())));
        let view = PermissionView::new(request(ApprovalKind::Plan { plan: "do it".into() }));
        assert_eq!(view.options()[1], "Yes, and accept edits from now on");
        let mut view = PermissionView::new(request(ApprovalKind::Permission));
        assert_eq!(view.options()[1], "Yes, always allow rule in this project");
        assert_eq!(view.key(&enter(), &keys), Some(Approval::Once));
    }

    fn char_key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    /// What was found: a long diff line in the question was cut at the screen's edge,
    /// hiding what changed at its end. It wraps.
    #[test]
    fn issue_53_long_preview_lines_wrap_instead_of_being_cut() {
        let mut r = request(ApprovalKind::Permission);
        let long = format!("+let url = \"{}/the-end\";", "x".repeat(60));
        r.preview = Some(format!("--- a/f.rs\n+++ b/f.rs\n{long}\n"));
        let theme = Theme::builtin("dark", rab_tui::ColorDepth::TrueColor).unwrap();
        let lines: Vec<String> = PermissionView::new(r)
            .render(40, &theme)
            .iter()
            .map(|l| rab_tui::ansi::strip(l))
            .collect();
        let joined = lines.join("\n");
        assert!(joined.contains("the-end\";"), "{joined}");
        assert!(lines.iter().all(|l| rab_tui::ansi::width(l) <= 40), "{joined}");
    }

    /// What was found: pressing `1` on "Allow edit?" started typing a refusal reason
    /// ("No: 1"), so a Claude Code user's yes became a no. Numbers choose the options;
    /// in a reason being typed, they are part of it.
    #[test]
    fn issue_53_number_keys_choose_the_options() {
        let keys = Keybindings::default();
        let permission = || PermissionView::new(request(ApprovalKind::Permission));
        assert_eq!(permission().key(&char_key('1'), &keys), Some(Approval::Once));
        assert_eq!(permission().key(&char_key('2'), &keys), Some(Approval::Always));
        let mut view = permission();
        assert_eq!(view.key(&char_key('3'), &keys), None, "the refusal waits for a reason");
        for c in "use 8080".chars() {
            assert_eq!(view.key(&char_key(c), &keys), None);
        }
        assert_eq!(view.key(&enter(), &keys), Some(Approval::Deny(Some("use 8080".into()))));
        assert_eq!(permission().key(&char_key('9'), &keys), None, "no ninth option");
        let q = ApprovalKind::Question {
            question: "Which?".into(),
            options: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            PermissionView::new(request(q)).key(&char_key('2'), &keys),
            Some(Approval::Answer("b".into()))
        );
        let plan = || PermissionView::new(request(ApprovalKind::Plan { plan: "p".into() }));
        assert!(plan().key(&char_key('1'), &keys).is_some());
    }
}
