//! Select list: filtering, navigation, scrolling and its rendered lines (snapshots show
//! escapes as `␛` so the highlighting is visible).

use super::*;
use crate::theme::{ColorDepth, Theme};
use crossterm::event::{KeyCode, KeyModifiers};
use pretty_assertions::assert_eq;

fn models() -> Vec<SelectItem> {
    [
        ("claude-sonnet-4-5", "anthropic · 200k context"),
        ("claude-opus-4-1", "anthropic · 200k context"),
        ("gpt-5", "openai · 400k context"),
        ("gpt-5-mini", "openai · 400k context"),
        ("gemini-2.5-pro", "google · 1M context"),
        ("gemini-2.5-flash", "google · 1M context"),
        ("o3", "openai · reasoning"),
    ]
    .into_iter()
    .map(|(l, d)| SelectItem::new(l).with_description(d))
    .collect()
}

fn models_label(i: usize) -> &'static str {
    [
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "gpt-5",
        "gpt-5-mini",
        "gemini-2.5-pro",
        "gemini-2.5-flash",
        "o3",
    ][i]
}

fn render(list: &SelectList, width: usize, depth: ColorDepth) -> Vec<String> {
    let theme = Theme::builtin("dark", depth).unwrap();
    list.render(&RenderCx { width, theme: &theme })
}

fn visible(lines: &[String]) -> String {
    lines.iter().map(|l| l.replace('\x1b', "␛")).collect::<Vec<_>>().join("\n")
}

fn plain(lines: &[String]) -> Vec<String> {
    lines.iter().map(|l| ansi::strip(l).trim_end().to_owned()).collect()
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn query_filters_and_ranks_label_matches_first() {
    let mut list = SelectList::new(models(), 10);
    list.set_query("gem");
    let labels: Vec<&str> = list.matching_items().map(models_label).collect();
    assert_eq!(labels, ["gemini-2.5-pro", "gemini-2.5-flash"]);
    // Description-only matches come after label matches.
    list.set_query("openai");
    assert_eq!(list.match_count(), 3);
    list.set_query("zzz");
    assert_eq!((list.match_count(), list.selected()), (0, None));
    assert_eq!(plain(&render(&list, 80, ColorDepth::None)), ["  no matches"]);
}

#[test]
fn navigation_wraps_pages_and_scrolls() {
    let items: Vec<SelectItem> = (0..20).map(|i| SelectItem::new(format!("item {i}"))).collect();
    let mut list = SelectList::new(items, 5);
    list.move_up();
    assert_eq!(list.selected(), Some(19));
    assert_eq!(plain(&render(&list, 40, ColorDepth::None))[4], "› item 19");
    list.move_down();
    assert_eq!(list.selected(), Some(0));
    list.page_down();
    list.page_down();
    assert_eq!(list.selected(), Some(10));
    let lines = plain(&render(&list, 40, ColorDepth::None));
    assert_eq!(lines, ["  item 6", "  item 7", "  item 8", "  item 9", "› item 10", "  (11/20)"]);
    list.page_up();
    assert_eq!(list.selected(), Some(5));
    assert_eq!(plain(&render(&list, 40, ColorDepth::None))[0], "› item 5");
}

#[test]
fn keys_navigate_type_confirm_and_cancel() {
    let kb = Keybindings::default();
    let mut list = SelectList::new(models(), 5);
    assert_eq!(list.handle_key(&key(KeyCode::Down), &kb), SelectOutcome::Changed);
    assert_eq!(list.handle_key(&key(KeyCode::Enter), &kb), SelectOutcome::Confirmed(1));
    for c in "flash".chars() {
        assert_eq!(list.handle_key(&key(KeyCode::Char(c)), &kb), SelectOutcome::Changed);
    }
    assert_eq!(list.query(), "flash");
    assert_eq!(list.handle_key(&key(KeyCode::Enter), &kb), SelectOutcome::Confirmed(5));
    assert_eq!(list.handle_key(&key(KeyCode::Backspace), &kb), SelectOutcome::Changed);
    assert_eq!(list.query(), "flas");
    assert_eq!(list.handle_key(&key(KeyCode::Esc), &kb), SelectOutcome::Cancelled);
    let mut popup = SelectList::new(models(), 5).with_typing(false);
    assert_eq!(popup.handle_key(&key(KeyCode::Char('x')), &kb), SelectOutcome::Ignored);
}

#[test]
fn set_items_keeps_the_selected_label() {
    let mut list = SelectList::new(models(), 5);
    list.select_item(4);
    let mut items = models();
    items.insert(0, SelectItem::new("new-model"));
    list.set_items(items);
    assert_eq!(list.selected_item().unwrap().label, "gemini-2.5-pro");
}

#[test]
fn rows_fit_the_width_and_the_selection_spans_it() {
    let mut list = SelectList::new(models(), 5);
    list.move_down();
    for width in [20, 40, 80, 120] {
        let lines = render(&list, width, ColorDepth::TrueColor);
        for l in &lines {
            assert!(ansi::width(l) <= width, "{width}: {l:?}");
        }
        assert_eq!(ansi::width(&lines[1]), width, "selected row is padded");
        let bg = Theme::builtin("dark", ColorDepth::TrueColor).unwrap().bg_code(Role::SelectedBg);
        assert!(lines[1].starts_with(&bg), "{:?}", lines[1]);
    }
    // Without colours the selection is reverse video.
    assert!(render(&list, 80, ColorDepth::None)[1].starts_with("\x1b[7m"));
}

#[test]
fn snapshot_models_filtered_at_80_and_120_columns() {
    let mut list = SelectList::new(models(), 5);
    list.set_query("g5");
    list.move_down();
    insta::assert_snapshot!("select_filtered_80", visible(&render(&list, 80, ColorDepth::Basic)));
    insta::assert_snapshot!("select_filtered_120", visible(&render(&list, 120, ColorDepth::Basic)));
}

#[test]
fn snapshot_scrolled_list_with_long_labels_at_80_and_120_columns() {
    let items: Vec<SelectItem> = (0..12)
        .map(|i| {
            SelectItem::new(format!(
                "session {i}: refactor the renderer to diff lines {}",
                "and more ".repeat(i % 4)
            ))
            .with_description(format!("{i} h ago · {} messages", i * 7))
        })
        .collect();
    let mut list = SelectList::new(items, 4);
    for _ in 0..5 {
        list.move_down();
    }
    insta::assert_snapshot!("select_scrolled_80", visible(&render(&list, 80, ColorDepth::Basic)));
    insta::assert_snapshot!("select_scrolled_120", visible(&render(&list, 120, ColorDepth::Basic)));
}
