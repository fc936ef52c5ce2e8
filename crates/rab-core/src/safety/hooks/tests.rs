use super::*;
use pretty_assertions::assert_eq;
use rab_config::{HookCommand, HookGroup};

fn runner(event: &str, matcher: &str, command: &str) -> (tempfile::TempDir, HookRunner) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = HookSettings::new();
    settings.insert(
        event.into(),
        vec![HookGroup {
            matcher: matcher.into(),
            hooks: vec![HookCommand {
                kind: "command".into(),
                command: command.into(),
                timeout: Some(5),
                is_own: false,
            }],
        }],
    );
    let r = HookRunner::new(&settings, dir.path().to_path_buf(), Sandbox::default(), &mut vec![])
        .unwrap();
    (dir, r)
}

fn catalog() -> crate::ToolCatalog {
    crate::tool_catalog::builtin(std::path::Path::new("."))
}

fn pre(tool: &str, args: Value) -> Value {
    tool_event("s1", "/t.jsonl", "default", tool, catalog().claude_name(tool), "c1", &args)
}

/// The names hooks may match `tool` by.
fn names(tool: &str) -> Vec<&'static str> {
    let catalog: &'static crate::ToolCatalog = Box::leak(Box::new(catalog()));
    let tool: &'static str = Box::leak(tool.to_owned().into_boxed_str());
    catalog.hook_names(tool)
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_as_the_reason() {
    let (_d, r) = runner("PreToolUse", "Bash", "echo 'no rm here' >&2; exit 2");
    let cancel = CancellationToken::new();
    let out = r
        .run(
            HookEvent::PreToolUse,
            Some(&names("bash")),
            pre("bash", json!({"command": "rm x"})),
            &cancel,
        )
        .await;
    assert_eq!(out.block.as_deref(), Some("no rm here"));
    let out = r
        .run(
            HookEvent::PreToolUse,
            Some(&names("read")),
            pre("read", json!({"path": "a"})),
            &cancel,
        )
        .await;
    assert_eq!(out, HookOutcome::default(), "the matcher does not match read");
}

#[tokio::test]
async fn json_output_rewrites_input_and_reads_the_event_from_stdin() {
    let script = r#"python3 -c 'import json,sys; e=json.load(sys.stdin); i=e["tool_input"]; print(json.dumps({"hookSpecificOutput": {"hookEventName": e["hook_event_name"], "permissionDecision": "allow", "updatedInput": {"file_path": i["file_path"] + ".bak"}, "additionalContext": e["cwd"]}}))'"#;
    let (d, r) = runner("PreToolUse", "Edit|Write", script);
    let out = r
        .run(
            HookEvent::PreToolUse,
            Some(&names("write")),
            pre("write", json!({"path": "a.txt"})),
            &CancellationToken::new(),
        )
        .await;
    assert!(out.allow);
    assert_eq!(out.updated_input.map(args_from_hook), Some(json!({"path": "a.txt.bak"})));
    assert_eq!(out.context, [d.path().display().to_string()]);
}

#[tokio::test]
async fn other_exit_codes_and_timeouts_are_warnings_only() {
    let (_d, r) = runner("PostToolUse", "", "echo oops >&2; exit 1");
    let out = r
        .run(
            HookEvent::PostToolUse,
            Some(&names("ls")),
            pre("ls", json!({})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!((out.block, out.warnings.len()), (None, 1));
    assert!(out.warnings[0].contains("exit code 1: oops"), "{:?}", out.warnings);
}

#[test]
fn unknown_events_and_bad_matchers_fail_at_load() {
    let mut s = HookSettings::new();
    s.insert("PreToolUze".into(), vec![]);
    let err = HookRunner::new(&s, PathBuf::new(), Sandbox::default(), &mut vec![]).unwrap_err();
    assert!(err.to_string().contains("unknown event \"PreToolUze\""), "{err}");
    assert!(parse_matcher("Bash(").is_err());
    assert!(matches_tool(&parse_matcher("mcp__mem.*").unwrap(), &names("mcp__memory__put")));
    assert!(matches_tool(&parse_matcher("Write|Edit").unwrap(), &names("edit")));
    assert!(!matches_tool(&parse_matcher("Write|Edit").unwrap(), &names("bash")));
    // apply_patch is how some models edit: edit hooks see it.
    assert!(matches_tool(&parse_matcher("Write|Edit").unwrap(), &names("apply_patch")));
    assert!(matches_tool(&parse_matcher("edit").unwrap(), &names("apply_patch")));
    assert!(!matches_tool(&parse_matcher("Bash").unwrap(), &names("apply_patch")));
}

#[test]
fn hook_input_names_tools_as_claude_code_does_with_rabs_name_alongside() {
    let v = pre("bash", serde_json::json!({"command": "ls"}));
    assert_eq!(v["tool_name"], "Bash");
    assert_eq!(v["rab_tool_name"], "bash");
    let v = pre("edit", serde_json::json!({"path": "a"}));
    assert_eq!(v["tool_name"], "Edit");
    let v = pre("mcp__gh__x", serde_json::json!({}));
    assert_eq!(v["tool_name"], "mcp__gh__x");
}

/// Issue 53: a failing hook is never silent: its failure waits for the front end, once,
/// with the reason when the sandbox refused it what a project's hook may not do.
#[tokio::test]
async fn a_failure_is_kept_for_the_user_with_the_sandbox_named_as_its_reason() {
    let (_d, r) = runner("Stop", "", "echo 'touch: /etc/x: Read-only file system' >&2; exit 1");
    let cancel = CancellationToken::new();
    let out = r.run(HookEvent::Stop, None, json!({}), &cancel).await;
    assert_eq!(out.warnings.len(), 1);
    let notices = r.take_notices();
    assert_eq!(notices, out.warnings);
    assert!(notices[0].contains("Stop hook"), "{notices:?}");
    assert!(notices[0].contains("hooks from this project run in the sandbox"), "{notices:?}");
    assert!(r.take_notices().is_empty(), "told once");
    let (_d, r) = runner("Stop", "", "echo 'no such thing' >&2; exit 1");
    r.run(HookEvent::Stop, None, json!({}), &cancel).await;
    let notices = r.take_notices();
    assert!(notices[0].contains("no such thing") && !notices[0].contains("sandbox"), "{notices:?}");
}
