//! What a hook printed, arbitrary bytes read as rab reads a hook's pipes (lossy UTF-8),
//! taken as its stdout after exit 0 (JSON answer or plain context) and as its stderr
//! after exit 2 or a failure, for every hook event; an `updatedInput` it gives becomes
//! tool arguments. A decision or nothing, never a panic.

use rab_core::hooks::{HookEvent, args_from_hook, read_output};

const EVENTS: [HookEvent; 9] = [
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::UserPromptSubmit,
    HookEvent::Stop,
    HookEvent::SubagentStop,
    HookEvent::SessionStart,
    HookEvent::SessionEnd,
    HookEvent::PreCompact,
    HookEvent::Notification,
];

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for event in EVENTS {
        let out = read_output(event, Some(0), &text, "");
        if let Some(updated) = out.updated_input {
            let _ = args_from_hook(updated);
        }
    }
    for code in [Some(2), Some(1), None] {
        let _ = read_output(HookEvent::PreToolUse, code, "", &text);
    }
}
