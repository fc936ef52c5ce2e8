//! Settings files of arbitrary text, layered as rab loads them: the input split at NUL
//! bytes into the global `settings.json`, the project's `.rab/settings.json` and its
//! `.claude/settings.json` (a missing part: no such file), loaded for a trusted and an
//! untrusted folder, then the permission rules and hooks they hold read as a session
//! reads them. Each step succeeds or fails with an error, never a panic.

use std::path::Path;
use std::sync::LazyLock;

use rab_config::{Env, load_settings};
use rab_core::hooks::HookRunner;
use rab_core::permissions::{Policy, PolicyContext};
use rab_core::tool_catalog::{ToolCatalog, builtin};

/// The tools rules may name (made once: it builds every tool).
static TOOLS: LazyLock<ToolCatalog> = LazyLock::new(|| builtin(Path::new("/p")));

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let dir = tempfile::tempdir().expect("a temporary directory");
    let global = dir.path().join("global.json");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".rab")).expect("dirs");
    std::fs::create_dir_all(project.join(".claude")).expect("dirs");
    let files =
        [global.clone(), project.join(".rab/settings.json"), project.join(".claude/settings.json")];
    for file in &files {
        if let Some(part) = parts.next() {
            std::fs::write(file, part).expect("a settings file is written");
        }
    }
    let env = Env::from_pairs([("RAB_THINKING", "high")]);
    for trusted in [true, false] {
        let Ok(loaded) = load_settings(&global, &project, &env, trusted) else { continue };
        let cx = PolicyContext { tools: &TOOLS, root: &project, home: Some(Path::new("/home/u")) };
        let _ = Policy::load(&loaded.safety, &[], &[], &cx);
        let mut warnings = Vec::new();
        let _ = HookRunner::new(
            &loaded.settings.hooks,
            project.clone(),
            Default::default(),
            &mut warnings,
        );
    }
}
