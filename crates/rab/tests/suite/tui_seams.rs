//! Issue 36 in the terminal UI: resuming draws the conversation, interrupts and
//! quitting, /settings checks before writing, /help scrolls, no key sends nothing,
//! /copy.

use std::time::Duration;

use rab_fake_llm::{FakeLlm, Turn};
use serde_json::json;

use super::harness::Home;
use super::pty::Pty;
use super::tui::{T, envs, start, start_with};

#[test]
fn issue_36_continuing_a_session_draws_the_conversation_as_it_looked_live() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("notes.txt"), "alpha\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "notes.txt"}))
            .with_thinking("Look at the notes first."),
        Turn::tool_call("bash", json!({"command": "echo counted-3-lines"})),
        Turn::text("## Summary\n\nThe notes say **alpha**."),
    ]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&repo)
        .args(["-p", "--yolo", "what do the notes say"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for how in [&["-c"][..], &["--resume"][..]] {
        let mut pty = start_with(&home, &llm, &repo, 100, 40, how);
        if how == ["--resume"] {
            pty.wait_for("the session list", T, |s| s.contains("Resume a session"));
            pty.send("\r");
        }
        pty.wait_for("the conversation", T, |s| {
            s.contains("what do the notes say")
                && s.contains("read notes.txt")
                && s.contains("$ echo counted-3-lines")
                && s.contains("counted-3-lines\n")
                && s.contains("The notes say alpha.")
        });
        let h = pty.history();
        let prompt = h.find("what do the notes say").unwrap();
        let read = h.find("read notes.txt").unwrap();
        let answer = h.find("The notes say alpha.").unwrap();
        assert!(prompt < read && read < answer, "in order: {h}");
        assert!(!h.contains("Look at the notes first."), "thinking stays folded: {h}");
        assert!(!h.contains("earlier message"), "a short session is drawn whole: {h}");
        pty.send("\x03\x03");
        pty.wait_exit(T);
    }
}

#[test]
fn issue_36_settings_checks_before_writing_and_its_line_editor_edits() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    // A theme file that does not load: offered (it is in the folder), refused on saving.
    let themes = home.dir.path().join("rab/themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("broken.json"), "{not json").unwrap();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, &repo, 110, 40);
    pty.send("/settings\r");
    pty.wait_for_screen("the settings editor", T, |s| s.contains("saving to: global"));
    pty.send("theme");
    pty.wait_for_screen("the filtered list", T, |s| !s.contains("maxTurns"));
    pty.send("\r");
    pty.wait_for_screen("the themes", T, |s| s.contains("broken") && s.contains("light"));
    pty.send("\x1b[B\x1b[B\r");
    pty.wait_for_screen("the refusal", T, |s| s.contains("not saved, the theme does not load"));
    let global = home.dir.path().join("rab/agent/settings.json");
    assert!(!global.exists(), "nothing written for a theme that does not load");
    // The line editor: Ctrl+A, Ctrl+E, Ctrl+U and Ctrl+K edit, they do not type letters.
    pty.send("\x15\x7f\x7f\x7f\x7f\x7f");
    pty.send("maxTurns");
    pty.wait_for_screen("the maxTurns row", T, |s| s.contains("› maxTurns"));
    pty.send("\r");
    pty.wait_for_screen("the line editor", T, |s| s.contains("maxTurns — stop"));
    pty.send("45\x01"); // 45, then to the start
    pty.send("1\x05"); // 145, then to the end
    pty.send("9\x01\x06\x0b"); // 1459; start, one right, kill to the end: 1
    pty.send("2\r");
    pty.wait_for_screen("the saved note", T, |s| s.contains("maxTurns = 12 saved"));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(saved["maxTurns"], 12, "{saved}");
    // A project's file is never offered yolo.
    pty.send(&"\x7f".repeat(10));
    pty.send("\t");
    pty.wait_for_screen("the project file", T, |s| s.contains("saving to: project"));
    pty.send("permissions.defaultMode");
    pty.wait_for_screen("the mode row", T, |s| s.contains("› permissions.defaultMode"));
    pty.send("\r");
    pty.wait_for_screen("the modes", T, |s| s.contains("accept-edits") && s.contains("plan"));
    assert!(!pty.screen().contains("yolo"), "{}", pty.screen());
    pty.send("\x1b");
    pty.wait_for_screen("the list again", T, |s| s.contains("Enter change · Tab file"));
    pty.send("\x1b");
    pty.send("/quit\r");
    pty.wait_exit(T);
    assert!(!repo.join(".rab/settings.json").exists());
    // And the UI starts with what was saved.
    let pty = start(&home, &llm, &repo, 110, 40);
    drop(pty);
}

#[test]
fn issue_36_ctrl_c_interrupts_a_run_and_quitting_mid_run_keeps_the_screen() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "echo started-one; sleep 30"})),
        Turn::text("stopped as asked"),
        Turn::tool_call("bash", json!({"command": "echo started-two; sleep 30"})),
    ]);
    let mut pty = start_with(&home, &llm, &repo, 100, 30, &["--yolo"]);
    pty.send("run the long thing\r");
    pty.wait_for("the command's output", T, |s| s.contains("started-one"));
    pty.send("\x03");
    pty.wait_for("the run to stop", T, |s| s.contains("Interrupted") || s.contains("interrupted"));
    // The editor works, and the model hears of the interruption with the next prompt.
    pty.send("what happened?\r");
    pty.wait_for("the answer", T, |s| s.contains("stopped as asked"));
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("interrupted"), "{results:?}");
    // Quitting in the middle of a run (Ctrl+D) leaves the tool's output on screen.
    pty.send("again\r");
    pty.wait_for("the second command's output", T, |s| s.contains("started-two"));
    pty.send("\x04");
    assert_eq!(pty.wait_exit(T), Some(0));
    let h = pty.history();
    assert!(h.contains("$ echo started-two; sleep 30") && h.contains("started-two"), "{h}");
}

#[test]
fn issue_36_help_taller_than_the_screen_scrolls() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 100, 40);
    pty.send("/help\r");
    pty.wait_for_screen("the help", T, |s| s.contains("Help") && s.contains("scroll"));
    let first = pty.screen();
    assert!(first.contains("/help"), "the first commands show first: {first}");
    assert!(first.lines().count() <= 40);
    // The keys, at the end of the help, come into view by paging down.
    for _ in 0..10 {
        pty.send("\x1b[6~");
    }
    pty.wait_for_screen("the end of the help", T, |s| s.contains("Keys:"));
    pty.send("\x1b");
    pty.wait_for_screen("the editor again", T, |s| !s.contains("scroll"));
}

#[test]
fn issue_36_without_a_key_the_ui_sends_nothing_and_says_how_to_log_in() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("should never be asked")]);
    let e: Vec<(String, String)> =
        envs(&home, &llm).into_iter().filter(|(k, _)| k != "ANTHROPIC_API_KEY").collect();
    let mut pty = Pty::spawn(home.dir.path(), &["--provider", "anthropic"], &e, 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty.send("hello there\r");
    pty.wait_for("the refusal", T, |s| {
        s.contains("No API key for anthropic, so nothing was sent")
            && s.contains("/login anthropic")
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(llm.requests().is_empty(), "no unauthenticated request");
    pty.send("/quit\r");
    pty.wait_exit(T);
}

#[test]
fn issue_36_copy_puts_the_last_answer_on_the_clipboard_with_osc_52() {
    use base64::Engine as _;
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("the answer to copy")]);
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.send("/copy\r");
    pty.wait_for("nothing to copy", T, |s| s.contains("No answer to copy yet."));
    pty.send("a question\r");
    pty.wait_for("the answer", T, |s| s.contains("the answer to copy"));
    pty.send("/copy\r");
    pty.wait_for("the note", T, |s| s.contains("Copied the last answer (18 characters)"));
    let encoded = base64::engine::general_purpose::STANDARD.encode("the answer to copy");
    pty.wait_for_raw("the OSC 52 sequence", T, |r| r.contains(&format!("\x1b]52;c;{encoded}\x07")));
    pty.send("/quit\r");
    pty.wait_exit(T);
}

#[test]
fn issue_36_init_explores_read_only_and_writes_agents_md_only_when_allowed() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("README.md"), "Build with make.\n").unwrap();
    let proposal = "```markdown\n# Agents guide\n\n- build: `make`\n```";
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "README.md"}))
            .and_tool_call("write", json!({"path": "AGENTS.md", "content": "sneaky"})),
        Turn::text(format!("Here is the file:\n\n{proposal}")),
    ]);
    let mut pty = start_with(&home, &llm, &repo, 100, 40, &["--permission-mode", "accept-edits"]);
    pty.send("/init\r");
    pty.wait_for("the proposal to approve", T, |s| {
        s.contains("Allow write?") && s.contains("# Agents guide") && s.contains("/init proposes")
    });
    // The run was read-only: its own write was refused, even in accept-edits.
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("Build with make."), "{results:?}");
    assert!(results[1].1.contains("plan mode"), "{results:?}");
    assert!(!repo.join("AGENTS.md").exists(), "nothing before the answer");
    assert!(llm.requests()[0].last_user_text().unwrap().contains("AGENTS.md"));
    pty.send("\r"); // Yes, this time
    pty.wait_for("the file written", T, |s| s.contains("/init wrote"));
    let written = std::fs::read_to_string(repo.join("AGENTS.md")).unwrap();
    assert_eq!(written, "# Agents guide\n\n- build: `make`\n");
    // The mode is what it was.
    pty.wait_for_screen("the footer", T, |s| s.contains("accept-edits"));
    pty.send("/quit\r");
    pty.wait_exit(T);
}

/// What was found: `/init` on an existing AGENTS.md showed "this new AGENTS.md" with
/// no diff and overwrote the user's notes, and a reply that was not a file would have
/// been taken as one. Now the question shows a diff, the sections the proposal
/// dropped are kept, and a reply that is not the file writes nothing.
#[test]
fn issue_53_init_on_an_existing_agents_md_shows_a_diff_and_keeps_the_users_notes() {
    let home = Home::new();
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mine = "# Build\n\nmake\n\n## Team notes\n\nAsk Ada before touching the parser.\n";
    std::fs::write(repo.join("AGENTS.md"), mine).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::text("```markdown\n# Build\n\ncargo build --locked\n```"),
        Turn::text("Done! I updated AGENTS.md with the build commands."),
    ]);
    let mut pty = start_with(&home, &llm, &repo, 100, 40, &[]);
    pty.send("/init\r");
    pty.wait_for("the diff to approve", T, |s| {
        s.contains("Allow write?")
            && s.contains("/init proposes changes to your AGENTS.md")
            && s.contains("kept the sections it dropped: ## Team notes")
            && s.contains("+cargo build --locked")
            && s.contains("-make")
    });
    pty.send("\r"); // Yes, this time
    pty.wait_for("the file written", T, |s| s.contains("/init wrote"));
    let written = std::fs::read_to_string(repo.join("AGENTS.md")).unwrap();
    assert_eq!(
        written,
        "# Build\n\ncargo build --locked\n\n## Team notes\n\nAsk Ada before touching the parser.\n"
    );
    pty.send("/init\r");
    pty.wait_for("the refusal", T, |s| s.contains("/init: the answer is not an AGENTS.md"));
    assert_eq!(std::fs::read_to_string(repo.join("AGENTS.md")).unwrap(), written);
    pty.send("/quit\r");
    pty.wait_exit(T);
}

/// The pi-tui niceties: prompt marks (OSC 133) around each message and its answer, so
/// terminals can jump from prompt to prompt; the header's key hints, expanded to every
/// key by the first Ctrl+O (before any tool output there is nothing else to expand).
#[test]
fn prompts_are_marked_for_the_terminal_and_the_header_hints_expand() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("first answer"), Turn::text("second answer")]);
    let mut pty = start(&home, &llm, home.dir.path(), 110, 40);
    pty.wait_for("the header hints", T, |s| {
        s.contains("escape interrupt") && s.contains("/ commands") && s.contains("ctrl+o all keys")
    });
    pty.send("\x0f");
    pty.wait_for("every key", T, |s| s.contains("Kill to end of line") && s.contains("Yank"));
    pty.send("fix the parser\r");
    pty.wait_for("the answer", T, |s| s.contains("first answer"));
    pty.send("and the lexer\r");
    pty.wait_for("the second answer", T, |s| s.contains("second answer"));
    let raw = pty.raw();
    let at = |what: &str| raw.find(what).unwrap_or_else(|| panic!("{what:?} in {raw:?}"));
    let prompt = at("\x1b]133;A\x07");
    let input = at("\x1b]133;B\x07");
    let text = at("  fix the parser");
    let output = at("\x1b]133;C\x07");
    let answer = at("first answer");
    let done = at("\x1b]133;D;0\x07");
    assert!(
        prompt < input && input < text && text < output && output < answer && answer < done,
        "{raw:?}"
    );
    let second = raw[done..].find("\x1b]133;A\x07").map(|i| i + done);
    assert!(second.is_some_and(|s| s < at("and the lexer")), "the next prompt is marked: {raw:?}");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// Light/dark switching while rab runs: rab asks for colour-scheme reports (mode
/// 2031); a report switches the theme and the keys typed after it still arrive (the
/// reader crossterm gave swallowed them); coming back into focus asks for the
/// background again (OSC 11), and its answer switches back.
#[test]
fn the_theme_follows_the_terminal_switching_between_light_and_dark() {
    use rab_tui::{ColorDepth, Role, Theme};
    let depth = ColorDepth::detect(false, None, Some("xterm-256color"));
    // The border's colour code, as each theme paints it.
    let paint = |name: &str| {
        let t = Theme::builtin(name, depth).unwrap().fg(Role::Border, "─");
        format!("{}─", t.split('─').next().unwrap())
    };
    let (light, dark) = (paint("light"), paint("dark"));
    assert_ne!(light, dark);
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut pty = start(&home, &llm, home.dir.path(), 100, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    assert!(pty.raw().contains("\x1b[?2031h"), "reports asked for: {:?}", pty.raw());
    let before = pty.raw().len();
    pty.send("\x1b[?997;2nabc");
    pty.wait_for_screen("the keys after the report", T, |s| s.contains("abc"));
    pty.wait_for_raw("the light theme", T, |r| r[before..].contains(&light));
    let before = pty.raw().len();
    pty.send("\x1b[O\x1b[I");
    pty.wait_for_raw("the background query", T, |r| r[before..].contains("\x1b]11;?\x07"));
    let before = pty.raw().len();
    pty.send("\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\d");
    pty.wait_for_screen("the next key", T, |s| s.contains("abcd"));
    pty.wait_for_raw("the dark theme", T, |r| r[before..].contains(&dark));
    pty.send("\x15/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
    assert!(pty.raw().contains("\x1b[?2031l"), "reports turned off at exit");
}
