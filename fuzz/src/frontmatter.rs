//! A skill, prompt command or agent file of arbitrary text: its frontmatter split off
//! and read into fields and rule lists, and the file loaded as `SKILL.md`, as a
//! `/command` and as a sub-agent definition, then expanded with arguments. A definition
//! or a warning, never a panic.

use rab_core::prompt_commands::load_commands;
use rab_core::rule_list::split_rule_list;
use rab_core::skills::{frontmatter_fields, load_skills, split_frontmatter, substitute};
use rab_core::task::load_agents;

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some((front, body)) = split_frontmatter(&text) {
        for (_, value) in frontmatter_fields(front) {
            let _ = split_rule_list(&value);
        }
        let _ = substitute(body, "one two");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let skills = dir.path().join("skills");
    let commands = dir.path().join("commands");
    let agents = dir.path().join("agents");
    for d in [skills.join("fuzz"), commands.clone(), agents.clone()] {
        std::fs::create_dir_all(d).expect("dirs");
    }
    for file in [skills.join("fuzz/SKILL.md"), commands.join("fuzz.md"), agents.join("fuzz.md")] {
        std::fs::write(file, data).expect("a definition file is written");
    }
    let mut warnings = Vec::new();
    for skill in load_skills(&[skills], &Default::default(), &mut warnings) {
        let _ = skill.invoke("$1 $ARGUMENTS");
    }
    for command in load_commands(&[commands], &[], &Default::default(), &mut warnings) {
        let _ = command.expand("a b c");
        let _ = command.expand("");
    }
    let _ = load_agents(&[agents.as_path()], &Default::default(), &mut warnings);
}
