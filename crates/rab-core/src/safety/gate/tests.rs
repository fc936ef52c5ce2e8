use std::path::Path;
use std::sync::Mutex as StdMutex;

use rab_config::{PermissionSettings, SafetyLayer, Scope};
use serde_json::json;

use super::*;
use crate::hooks::HookRunner;
use crate::permissions::PolicyContext;

/// Answers every question with `answer` and keeps the questions.
struct Scripted {
    answer: Approval,
    asked: StdMutex<Vec<ApprovalRequest>>,
}

impl Approver for Scripted {
    fn approve<'a>(
        &'a self,
        request: ApprovalRequest,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Approval> {
        self.asked.lock().unwrap().push(request);
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

fn gate(
    dir: &Path,
    mode: PermissionMode,
    deny: &[&str],
    answer: Approval,
) -> (Gate, Arc<Scripted>) {
    let layer = SafetyLayer {
        scope: Scope::Global,
        source: dir.join("settings.json"),
        permissions: PermissionSettings {
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ..PermissionSettings::default()
        },
        hooks: rab_config::HookSettings::new(),
    };
    let tools = crate::tool_catalog::builtin(dir);
    let cx = PolicyContext { tools: &tools, root: dir, home: None };
    let mut policy = Policy::load(&[layer], &[], &[], &cx).unwrap();
    policy.set_protected(&[dir.to_path_buf()], None, None);
    let hooks = HookRunner::new(
        &rab_config::HookSettings::new(),
        dir.to_path_buf(),
        rab_tools::Sandbox::default(),
        &mut Vec::new(),
    )
    .unwrap();
    let approver = Arc::new(Scripted { answer, asked: StdMutex::new(Vec::new()) });
    let gate = Gate::new(
        policy,
        Arc::new(ModeSwitch::new(mode)),
        Arc::new(hooks),
        approver.clone(),
        None,
        (dir.join("answers.json"), dir.to_path_buf()),
    );
    (gate, approver)
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments,
        invalid_arguments: None,
        signature: None,
        item_id: None,
    }
}

const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** Update File: secret.txt\n-x\n+y\n*** End Patch";

#[tokio::test]
async fn a_patch_is_checked_on_every_file_and_the_strictest_answer_stands() {
    let dir = tempfile::tempdir().unwrap();
    let ws = rab_tools::Workspace::new(dir.path());
    let tool = rab_tools::apply_patch::ApplyPatch::new(ws);
    let (g, asked) = gate(dir.path(), PermissionMode::Yolo, &["edit(secret.txt)"], Approval::Once);
    let c = call("apply_patch", json!({"input": PATCH}));
    let d = g.before(&c, &tool, &CancellationToken::new()).await;
    assert!(matches!(&d, HookDecision::Block(r) if r.contains("permission denied")), "{d:?}");
    assert!(asked.asked.lock().unwrap().is_empty(), "a denial is not a question");
    assert_eq!(g.denials().1, 1);
    // Without the deny rule, yolo lets it through.
    let (g, _) = gate(dir.path(), PermissionMode::Yolo, &[], Approval::Once);
    assert_eq!(g.before(&c, &tool, &CancellationToken::new()).await, HookDecision::Continue);
}

#[tokio::test]
async fn questions_go_to_the_approver_with_their_kind_and_its_answer_decides() {
    let dir = tempfile::tempdir().unwrap();
    let bash = rab_tools::bash::Bash::new(rab_tools::Workspace::new(dir.path()));
    let c = call("bash", json!({"command": "touch x"}));
    let (g, asked) = gate(dir.path(), PermissionMode::Default, &[], Approval::Once);
    assert_eq!(g.before(&c, &bash, &CancellationToken::new()).await, HookDecision::Continue);
    let request = asked.asked.lock().unwrap()[0].clone();
    assert_eq!(request.kind, ApprovalKind::Permission);
    assert_eq!(request.rule, "bash(touch x:*)");
    let (g, _) = gate(dir.path(), PermissionMode::Default, &[], Approval::Deny(Some("no".into())));
    let d = g.before(&c, &bash, &CancellationToken::new()).await;
    assert!(matches!(&d, HookDecision::Block(r) if r.contains("no")), "{d:?}");
    // Headless: nobody answers; the refusal says how to allow it.
    let (g, _) = gate(dir.path(), PermissionMode::Default, &[], Approval::Unavailable);
    let d = g.before(&c, &bash, &CancellationToken::new()).await;
    assert!(matches!(&d, HookDecision::Block(r) if r.contains("--allowed-tools")), "{d:?}");
    assert_eq!(g.denials().0[0].input, "touch x");
}

/// A writer whose file argument is not called `path` (a plugin's).
struct FileWriter;

impl AgentTool for FileWriter {
    fn spec(&self) -> rab_ai::ToolSpec {
        rab_ai::ToolSpec {
            name: "write_file".into(),
            description: "writes".into(),
            parameters: json!({"type": "object"}),
            grammar: None,
            server: None,
        }
    }
    fn level(&self) -> ToolLevel {
        ToolLevel::Edit
    }
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        rab_agent::string_arguments(arguments)
    }
    fn execute(
        &self,
        _: Value,
        _: rab_agent::ToolContext,
    ) -> BoxFuture<'_, Result<rab_agent::ToolOutput, rab_agent::ToolError>> {
        Box::pin(async { Ok(rab_agent::ToolOutput::text("written")) })
    }
}

/// Class 11 of the third containment audit: a writer plugin called with
/// `{"file": ".git/config"}` wrote it in accept-edits mode with no question, because
/// protected paths were checked only in an argument named `path`. Every string of a
/// writer's arguments is checked as a path it writes, a `path` of its own too.
#[tokio::test]
async fn a_protected_path_under_any_argument_name_still_asks() {
    let dir = tempfile::tempdir().unwrap();
    let (g, asked) = gate(dir.path(), PermissionMode::AcceptEdits, &[], Approval::Unavailable);
    for args in [
        json!({"file": ".git/config", "text": "[core]\n\tfsmonitor = ./x"}),
        json!({"target": {"name": ".rab/settings.json"}}),
        json!({"files": ["notes.md", "AGENTS.md"]}),
        json!({"path": "notes.md", "also": ".git/hooks/pre-commit"}),
    ] {
        let d = g
            .before(&call("write_file", args.clone()), &FileWriter, &CancellationToken::new())
            .await;
        assert!(matches!(&d, HookDecision::Block(_)), "{args}: {d:?}");
    }
    // Each was a question (protected paths ask in every mode), refused with nobody there.
    assert_eq!(asked.asked.lock().unwrap().len(), 4);
    // An ordinary file in the workspace is an edit accept-edits allows.
    let d = g
        .before(
            &call("write_file", json!({"file": "notes.md", "text": "hi"})),
            &FileWriter,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(d, HookDecision::Continue);
}
