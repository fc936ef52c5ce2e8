//! A filterable list to pick one item from: the model selector, the session picker and
//! the completion popup. Items have a label and an optional description; a typed query
//! filters them with [`crate::fuzzy`] (label matches first, then description-only
//! matches) and highlights the matched characters. The selected row is painted with
//! [`Role::SelectedBg`] (reverse video without colours), and at most `max_rows` rows are
//! shown, scrolled to keep the selection visible, with a position line when there are
//! more.

use crossterm::event::KeyEvent;

use crate::ansi::{self, RESET};
use crate::component::{Component, RenderCx};
use crate::fuzzy;
use crate::keys::{Action, KeyId, KeyName, Keybindings};
use crate::theme::Role;

/// One entry of a [`SelectList`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectItem {
    /// Main text, matched by the query.
    pub label: String,
    /// Secondary text shown dimmed after the label (also matched, ranked lower).
    pub description: Option<String>,
}

impl SelectItem {
    /// An item with only a label.
    pub fn new(label: impl Into<String>) -> SelectItem {
        SelectItem { label: label.into(), description: None }
    }

    /// Adds a description.
    pub fn with_description(mut self, description: impl Into<String>) -> SelectItem {
        self.description = Some(description.into());
        self
    }
}

/// What a key did to a [`SelectList`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectOutcome {
    /// The list does not use this key.
    Ignored,
    /// The selection or the query changed.
    Changed,
    /// The user chose this item (index into the items as given).
    Confirmed(usize),
    /// The user closed the list.
    Cancelled,
}

/// A visible match: item index and matched label character indices.
#[derive(Clone, Debug)]
struct Match {
    item: usize,
    positions: Vec<usize>,
}

/// Added to the score of description-only matches so label matches rank first.
const DESCRIPTION_PENALTY: i64 = 1_000_000;

/// A list with fuzzy filter, keyboard navigation and a scroll window.
#[derive(Clone, Debug)]
pub struct SelectList {
    items: Vec<SelectItem>,
    query: String,
    matches: Vec<Match>,
    selected: usize,
    scroll: usize,
    max_rows: usize,
    is_typing_enabled: bool,
    empty_text: String,
}

impl SelectList {
    /// A list showing at most `max_rows` items at a time (at least one).
    pub fn new(items: Vec<SelectItem>, max_rows: usize) -> SelectList {
        let mut list = SelectList {
            items,
            query: String::new(),
            matches: Vec::new(),
            selected: 0,
            scroll: 0,
            max_rows: max_rows.max(1),
            is_typing_enabled: true,
            empty_text: "no matches".to_owned(),
        };
        list.refilter();
        list
    }

    /// Whether typed characters and Backspace edit the query in [`SelectList::handle_key`]
    /// (on by default; off for the completion popup, whose query is the editor's text).
    pub fn with_typing(mut self, enabled: bool) -> SelectList {
        self.is_typing_enabled = enabled;
        self
    }

    /// The line shown when nothing matches (default "no matches").
    pub fn with_empty_text(mut self, text: impl Into<String>) -> SelectList {
        self.empty_text = text.into();
        self
    }

    /// Replaces the items, keeping the query and, when it is still there, the selected
    /// label.
    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        let keep = self.selected_item().map(|i| i.label.clone());
        self.items = items;
        self.refilter();
        if let Some(pos) =
            keep.and_then(|l| self.matches.iter().position(|m| self.items[m.item].label == l))
        {
            self.selected = pos;
            self.keep_visible();
        }
    }

    /// Sets the filter query; the best match becomes selected.
    pub fn set_query(&mut self, query: &str) {
        if query != self.query {
            query.clone_into(&mut self.query);
            self.refilter();
        }
    }

    /// The filter query.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Number of items matching the query.
    pub fn match_count(&self) -> usize {
        self.matches.len()
    }

    /// Indices (into the items as given) of the matching items, best first.
    pub fn matching_items(&self) -> impl Iterator<Item = usize> + '_ {
        self.matches.iter().map(|m| m.item)
    }

    /// Index (into the items as given) of the selected item.
    pub fn selected(&self) -> Option<usize> {
        self.matches.get(self.selected).map(|m| m.item)
    }

    /// The selected item.
    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.selected().and_then(|i| self.items.get(i))
    }

    /// Selects the item at `index` (into the items as given) if it matches the query.
    pub fn select_item(&mut self, index: usize) {
        if let Some(pos) = self.matches.iter().position(|m| m.item == index) {
            self.selected = pos;
            self.keep_visible();
        }
    }

    /// Moves the selection up one row, wrapping to the bottom.
    pub fn move_up(&mut self) {
        let n = self.matches.len();
        if n > 0 {
            self.selected = (self.selected + n - 1) % n;
            self.keep_visible();
        }
    }

    /// Moves the selection down one row, wrapping to the top.
    pub fn move_down(&mut self) {
        let n = self.matches.len();
        if n > 0 {
            self.selected = (self.selected + 1) % n;
            self.keep_visible();
        }
    }

    /// Moves the selection up one page, stopping at the top.
    pub fn page_up(&mut self) {
        self.selected = self.selected.saturating_sub(self.max_rows);
        self.keep_visible();
    }

    /// Moves the selection down one page, stopping at the bottom.
    pub fn page_down(&mut self) {
        self.selected = (self.selected + self.max_rows).min(self.matches.len().saturating_sub(1));
        self.keep_visible();
    }

    /// Handles a key: Up/Down move (wrapping), PageUp/PageDown page, `select_confirm`
    /// confirms, `select_cancel` cancels, and with typing enabled characters and
    /// Backspace edit the query.
    pub fn handle_key(&mut self, ev: &KeyEvent, keys: &Keybindings) -> SelectOutcome {
        if keys.matches(Action::SelectConfirm, ev) {
            return self.selected().map_or(SelectOutcome::Ignored, SelectOutcome::Confirmed);
        }
        if keys.matches(Action::SelectCancel, ev) {
            return SelectOutcome::Cancelled;
        }
        if keys.matches(Action::CursorUp, ev) {
            self.move_up();
        } else if keys.matches(Action::CursorDown, ev) {
            self.move_down();
        } else if keys.matches(Action::PageUp, ev) {
            self.page_up();
        } else if keys.matches(Action::PageDown, ev) {
            self.page_down();
        } else if !self.is_typing_enabled {
            return SelectOutcome::Ignored;
        } else {
            let Some(id) = KeyId::from_event(ev) else { return SelectOutcome::Ignored };
            let mut query = self.query.clone();
            match id.key {
                KeyName::Char(c) if !id.ctrl && !id.alt && !id.sup => {
                    if id.shift {
                        query.extend(c.to_uppercase());
                    } else {
                        query.push(c);
                    }
                }
                KeyName::Backspace if !id.ctrl && !id.alt => {
                    if query.pop().is_none() {
                        return SelectOutcome::Ignored;
                    }
                }
                _ => return SelectOutcome::Ignored,
            }
            self.set_query(&query);
        }
        SelectOutcome::Changed
    }

    fn refilter(&mut self) {
        let q = self.query.as_str();
        let mut scored: Vec<(i64, Match)> = Vec::with_capacity(self.items.len());
        for (i, item) in self.items.iter().enumerate() {
            if let Some((score, positions)) = fuzzy::match_positions(q, &item.label) {
                scored.push((score, Match { item: i, positions }));
            } else if let Some(d) = &item.description
                && let Some(score) = fuzzy::score(q, &format!("{} {d}", item.label))
            {
                let m = Match { item: i, positions: Vec::new() };
                scored.push((score - DESCRIPTION_PENALTY, m));
            }
        }
        // Stable: ties (and every item for an empty query) keep the given order.
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        self.matches = scored.into_iter().map(|(_, m)| m).collect();
        self.selected = 0;
        self.scroll = 0;
    }

    fn keep_visible(&mut self) {
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + self.max_rows {
            self.scroll = self.selected + 1 - self.max_rows;
        }
    }

    /// One row: marker, label with matched characters accented, padded to `label_w`, and
    /// the description dimmed in the rest of the width.
    fn render_row(
        &self,
        cx: &RenderCx<'_>,
        m: &Match,
        is_selected: bool,
        label_w: usize,
    ) -> String {
        let theme = cx.theme;
        let item = &self.items[m.item];
        let bg = if is_selected {
            let code = theme.bg_code(Role::SelectedBg);
            if code.is_empty() { "\x1b[7m".to_owned() } else { code }
        } else {
            String::new()
        };
        // Every segment sets its own foreground and nothing resets in between, so the
        // selected row's background runs the full width.
        let text_fg = if is_selected { theme.fg_code(Role::Accent) } else { String::new() };
        let accent = theme.fg_code(Role::Accent);
        let hl = if accent.is_empty() || is_selected { "\x1b[1m".to_owned() } else { accent };
        let mut out = format!("{bg}{text_fg}{}", if is_selected { "› " } else { "  " });
        let room = label_w.min(cx.width.saturating_sub(2));
        let label = fit(&item.label, room);
        let ellipsis_at = (label != item.label).then(|| label.chars().count() - 1);
        for (ci, ch) in label.chars().enumerate() {
            if m.positions.contains(&ci) && Some(ci) != ellipsis_at {
                out.push_str(&format!("{hl}{ch}\x1b[22;39m{text_fg}"));
            } else {
                out.push(ch);
            }
        }
        let mut used = ansi::width(&label);
        let rest = cx.width.saturating_sub(2 + used);
        if let Some(desc) = item.description.as_deref().filter(|_| rest > 4) {
            let pad = label_w.saturating_sub(used) + 2;
            let desc = fit(desc, rest.saturating_sub(pad));
            if !desc.is_empty() {
                out.push_str(&" ".repeat(pad));
                // Dim can equal the selection background on 16-colour terminals.
                out.push_str(&if is_selected {
                    "\x1b[39m".into()
                } else {
                    theme.fg_code(Role::Dim)
                });
                out.push_str(&desc);
                used += pad + ansi::width(&desc);
            }
        }
        if is_selected {
            out.push_str(&" ".repeat(cx.width.saturating_sub(2 + used)));
        }
        out.push_str(RESET);
        out
    }
}

/// `text` on one line, cut to `w` cells with an ellipsis.
fn fit(text: &str, w: usize) -> String {
    let one_line = text.replace(['\n', '\r', '\t'], " ");
    ansi::truncate(&one_line, w, "…").replace(RESET, "")
}

impl Component for SelectList {
    fn render(&self, cx: &RenderCx<'_>) -> Vec<String> {
        if self.matches.is_empty() {
            return vec![cx.theme.dim(&fit(&format!("  {}", self.empty_text), cx.width))];
        }
        let end = (self.scroll + self.max_rows).min(self.matches.len());
        let visible = &self.matches[self.scroll..end];
        let has_desc = visible.iter().any(|m| self.items[m.item].description.is_some());
        let longest = visible.iter().map(|m| ansi::width(&self.items[m.item].label)).max();
        let label_w = match (has_desc, longest) {
            // Labels get up to 60% of the width; descriptions the rest.
            (true, Some(l)) => l.min(cx.width.saturating_sub(2) * 3 / 5),
            _ => cx.width.saturating_sub(2),
        };
        let mut lines: Vec<String> = visible
            .iter()
            .enumerate()
            .map(|(i, m)| self.render_row(cx, m, self.scroll + i == self.selected, label_w))
            .collect();
        if self.matches.len() > self.max_rows {
            let pos = format!("  ({}/{})", self.selected + 1, self.matches.len());
            lines.push(cx.theme.dim(&fit(&pos, cx.width)));
        }
        lines
    }
}

#[cfg(test)]
mod tests;
