use super::*;
use crate::{Env, Settings, load_settings};
use pretty_assertions::assert_eq;

/// The settings an untrusted project with `project` gets over a user's `global`, and
/// what was ignored.
fn load(global: &str, project: &str) -> (Settings, String) {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("settings.json");
    std::fs::write(&g, global).unwrap();
    let p = dir.path().join("proj");
    std::fs::create_dir_all(p.join(".rab")).unwrap();
    std::fs::write(p.join(".rab/settings.json"), project).unwrap();
    let loaded = load_settings(&g, &p, &Env::default(), false).unwrap();
    (loaded.settings, loaded.ignored.join("\n"))
}

#[test]
fn every_key_of_the_settings_has_a_row() {
    let defaults = serde_json::to_value(Settings::default()).unwrap();
    let rows: Vec<&str> = TABLE.iter().map(|(k, _)| *k).collect();
    for (key, value) in defaults.as_object().unwrap() {
        if key == "channels" {
            continue; // never from a project, trusted or not
        }
        let covered = rows.contains(&key.as_str())
            || value.as_object().is_some_and(|inner| {
                inner.keys().all(|k| rows.contains(&format!("{key}.{k}").as_str()))
            });
        let partly = rows.iter().any(|r| r.starts_with(&format!("{key}.")));
        assert!(
            covered || (partly && key == "permissions") || (partly && key == "sandbox"),
            "{key} has no row"
        );
    }
}

#[test]
fn limits_are_only_lowered_and_guards_only_turned_on() {
    let global = r#"{"maxTurns": 30, "maxBudgetUsd": 2.0, "loopDetection": {"callRepeats": 3}}"#;
    let (s, ignored) = load(
        global,
        r#"{"maxTurns": 500, "maxBudgetUsd": 50, "loopDetection": {"enabled": false, "callRepeats": 50}, "checkpoints": {"enabled": false}}"#,
    );
    assert_eq!((s.max_turns, s.max_budget_usd), (Some(30), Some(2.0)));
    assert!(s.loop_detection.enabled && s.loop_detection.call_repeats == 3);
    assert!(s.checkpoints.enabled);
    for what in [
        "maxTurns 500: above yours (30)",
        "maxBudgetUsd 50",
        "loopDetection.enabled false",
        "loopDetection.callRepeats 50",
        "checkpoints.enabled false",
    ] {
        assert!(ignored.contains(what), "{what} missing from {ignored}");
    }
    let (s, ignored) = load(
        global,
        r#"{"maxTurns": 10, "maxBudgetUsd": 0.5, "loopDetection": {"callRepeats": 2}}"#,
    );
    assert_eq!(
        (s.max_turns, s.max_budget_usd, s.loop_detection.call_repeats),
        (Some(10), Some(0.5), 2)
    );
    assert_eq!(ignored, "");
    // No limit of the user's: any limit is lower.
    let (s, _) = load("{}", r#"{"maxTurns": 500}"#);
    assert_eq!(s.max_turns, Some(500));
}

#[test]
fn tool_lists_only_narrow_and_exclusions_only_add() {
    let (s, ignored) = load(r#"{"excludeTools": ["bash"]}"#, r#"{"excludeTools": []}"#);
    assert_eq!(s.exclude_tools, ["bash"], "the user's exclusion stays");
    assert_eq!(ignored, "");
    let (s, _) = load(r#"{"excludeTools": ["bash"]}"#, r#"{"excludeTools": ["web_fetch"]}"#);
    assert_eq!(s.exclude_tools, ["bash", "web_fetch"]);
    let (s, ignored) = load(r#"{"tools": ["read", "grep"]}"#, r#"{"tools": ["read", "bash"]}"#);
    assert_eq!(s.tools, Some(vec!["read".to_owned(), "grep".to_owned()]));
    assert!(ignored.contains("tools [\"read\",\"bash\"]"), "{ignored}");
    let (s, _) = load(r#"{"tools": ["read", "grep"]}"#, r#"{"tools": ["read"]}"#);
    assert_eq!(s.tools, Some(vec!["read".to_owned()]));
}

#[test]
fn modes_are_only_made_stricter_and_where_prompts_go_waits_for_trust() {
    let (s, ignored) = load(
        r#"{"defaultThinkingLevel": "low", "defaultModel": "claude-x"}"#,
        r#"{"defaultThinkingLevel": "high", "defaultModel": "gpt-y", "defaultProvider": "openai", "fallbackModels": ["z"]}"#,
    );
    assert_eq!(s.default_model.as_deref(), Some("claude-x"));
    assert!(s.default_provider.is_none() && s.fallback_models.is_empty());
    assert_eq!(format!("{:?}", s.default_thinking_level), "Some(Low)");
    for what in
        ["defaultThinkingLevel \"high\"", "defaultModel", "defaultProvider", "fallbackModels"]
    {
        assert!(ignored.contains(what), "{what} missing from {ignored}");
    }
    let (s, _) = load(r#"{"defaultThinkingLevel": "high"}"#, r#"{"defaultThinkingLevel": "off"}"#);
    assert_eq!(format!("{:?}", s.default_thinking_level), "Some(Off)");
    let (s, ignored) = load(
        r#"{"permissions": {"defaultMode": "plan"}}"#,
        r#"{"permissions": {"defaultMode": "default"}}"#,
    );
    assert_eq!(s.permissions.default_mode.as_deref(), Some("plan"));
    assert!(
        ignored.contains("permission mode \"default\" (looser than yours (\"plan\"))"),
        "{ignored}"
    );
}

#[test]
fn what_only_describes_the_work_is_taken() {
    let (s, ignored) = load(
        "{}",
        r#"{"editTool": "apply_patch", "temperature": 0.2, "theme": "light", "toolSearch": true, "compaction": {"enabled": false}}"#,
    );
    assert_eq!(ignored, "");
    assert_eq!(s.theme.as_deref(), Some("light"));
    assert_eq!(s.temperature, Some(0.2));
}
