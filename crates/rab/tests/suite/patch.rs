//! apply_patch for the models trained on it: offered as a custom tool to OpenAI's
//! GPT models on the Responses API, in place of edit and write; a patch applies to
//! every file or to none; path rules apply to each file; other models keep edit.

use std::path::{Path, PathBuf};
use std::process::Output;

use rab_fake_llm::{FakeLlm, ScriptedCall, Turn};
use serde_json::Value;

use super::harness::{Home, offered, stderr, stdout};

fn project(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.py"), "def a():\n\treturn “one”\n").unwrap();
    std::fs::write(dir.join("b.py"), "def b():\n    return 2\n").unwrap();
    dir
}

fn patch_turn(input: &str) -> Turn {
    let call = ScriptedCall {
        id: Some("call_p".into()),
        name: "apply_patch".into(),
        input: Some(input.into()),
        ..ScriptedCall::default()
    };
    Turn { tool_calls: vec![call], ..Turn::default() }
}

fn run_gpt(home: &Home, llm: &FakeLlm, cwd: &Path) -> Output {
    home.rab_for("openai-responses", llm, Some("k"))
        .current_dir(cwd)
        .args(["--model", "gpt-6.1-sol", "-p", "--yolo", "change both"])
        .output()
        .unwrap()
}

const TWO_FILES: &str = "*** Begin Patch\n*** Update File: a.py\n def a():\n-    return \"one\"\n\
                         +    return \"uno\"\n*** Update File: b.py\n def b():\n-    return 2\n\
                         +    return 20\n*** End Patch\n";

#[test]
fn gpt_models_get_apply_patch_as_a_custom_tool_and_a_two_file_patch_applies() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([patch_turn(TWO_FILES), Turn::text("done")]);
    let out = run_gpt(&home, &llm, &dir);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let requests = llm.requests();
    let tools = requests[0].body["tools"].as_array().unwrap().clone();
    let patch = tools.iter().find(|t| t["name"] == "apply_patch").expect("apply_patch offered");
    assert_eq!(patch["type"], "custom");
    assert_eq!(patch["format"]["type"], "grammar");
    assert_eq!(patch["format"]["syntax"], "lark");
    assert!(patch["format"]["definition"].as_str().unwrap().starts_with("start: begin_patch"));
    let names = offered(&llm, 0);
    assert!(!names.iter().any(|n| n == "edit" || n == "write"), "{names:?}");
    // The file's tab and curly quotes are kept where the model typed spaces and ASCII.
    assert_eq!(std::fs::read_to_string(dir.join("a.py")).unwrap(), "def a():\n\treturn “uno”\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.py")).unwrap(), "def b():\n    return 20\n");
    // The call and its result went back as custom tool items (the fake server refuses a
    // mismatched pair).
    let input = requests[1].body["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input.iter().filter_map(|i| i["type"].as_str()).collect();
    assert!(kinds.contains(&"custom_tool_call"), "{kinds:?}");
    assert!(kinds.contains(&"custom_tool_call_output"), "{kinds:?}");
    let result = &requests[1].tool_results()[0].1;
    assert!(result.starts_with("Success. Updated the following files:\nM a.py"), "{result}");
}

#[test]
fn a_patch_whose_second_file_fails_changes_neither() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    let bad = TWO_FILES.replace("-    return 2\n", "-    return 3\n");
    llm.script([patch_turn(&bad), Turn::text("ok")]);
    let out = run_gpt(&home, &llm, &dir);
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(
        result.contains("operation 2 of 2") && result.contains("Nothing was changed"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("a.py")).unwrap(), "def a():\n\treturn “one”\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.py")).unwrap(), "def b():\n    return 2\n");
}

#[test]
fn an_edit_deny_rule_covers_every_file_of_a_patch() {
    let home = Home::new();
    let dir = project(&home);
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(global.join("settings.json"), r#"{"permissions": {"deny": ["edit(b.py)"]}}"#)
        .unwrap();
    let llm = FakeLlm::start();
    llm.script([patch_turn(TWO_FILES), Turn::text("ok")]);
    let out = run_gpt(&home, &llm, &dir);
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let result = &llm.requests()[1].tool_results()[0].1;
    assert!(result.contains("permission denied"), "{result}");
    assert_eq!(std::fs::read_to_string(dir.join("a.py")).unwrap(), "def a():\n\treturn “one”\n");
}

#[test]
fn other_models_keep_edit_and_settings_choose_the_tool() {
    let home = Home::new();
    let dir = project(&home);
    let llm = FakeLlm::start();
    llm.script([Turn::text("a"), Turn::text("b")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&dir)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let names = offered(&llm, 0);
    assert!(names.iter().any(|n| n == "edit") && names.iter().any(|n| n == "write"), "{names:?}");
    assert!(!names.iter().any(|n| n == "apply_patch"), "{names:?}");
    let tools: &Value = &llm.requests()[0].body["tools"];
    assert!(tools.to_string().len() > 100);
    // `editTool: "edit"` gives a GPT model edit.
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(global.join("settings.json"), r#"{"editTool": "edit"}"#).unwrap();
    let out = home
        .rab_for("openai-responses", &llm, Some("k"))
        .current_dir(&dir)
        .args(["--model", "gpt-6.1-sol", "-p", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let names = offered(&llm, 1);
    assert!(names.iter().any(|n| n == "edit") && !names.iter().any(|n| n == "apply_patch"));
}
