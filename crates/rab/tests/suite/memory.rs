//! Memory as files (issue 38): `/memory` opens the instruction files in effect — yours,
//! the project's, your local one — in `$EDITOR`; a `# note` line shows where it will
//! go before Enter adds it; `AGENTS.local.md` / `CLAUDE.local.md` are read; links out
//! of the folder are neither read nor written through.

use rab_fake_llm::{FakeLlm, Turn};

use super::harness::{Home, stderr, stdout};
use super::pty::Pty;
use super::tui::{T, envs};

/// An "editor" that appends `line` to the file it is given.
fn appending_editor(home: &Home, line: &str) -> String {
    let editor = home.dir.path().join("fake-editor.sh");
    std::fs::write(&editor, format!("#!/bin/sh\nprintf '%s\\n' '{line}' >> \"$1\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    editor.display().to_string()
}

/// The terminal UI in `repo` with an editor that appends `line`, ready for input.
fn ui_with_editor(home: &Home, repo: &std::path::Path, line: &str) -> Pty {
    let llm = FakeLlm::start();
    let mut e = envs(home, &llm);
    e.push(("EDITOR".into(), appending_editor(home, line)));
    let pty = Pty::spawn(repo, &["--provider", "anthropic"], &e, 110, 30);
    pty.wait_for("the editor", T, |s| s.contains("/help for commands"));
    pty
}

fn repo(home: &Home) -> std::path::PathBuf {
    let repo = home.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    repo
}

#[test]
fn memory_opens_the_chosen_instruction_file_in_the_editor_and_saves_it() {
    let home = Home::new();
    let repo = repo(&home);
    std::fs::write(repo.join("CLAUDE.md"), "# Rules\n- be kind\n").unwrap();
    let mut pty = ui_with_editor(&home, &repo, "- added in the editor");
    // The picker: yours, the project's (CLAUDE.md, as only that exists), your local one.
    pty.send("/memory\r");
    pty.wait_for_screen("the picker", T, |s| {
        s.contains("Instruction files")
            && s.contains("rab/AGENTS.md (new)")
            && s.contains("repo/CLAUDE.md")
            && s.contains("repo/AGENTS.local.md (new)")
    });
    pty.send("\x1b[B\r");
    pty.wait_for("the saved note", T, |s| s.contains("Saved") && s.contains("CLAUDE.md"));
    assert_eq!(
        std::fs::read_to_string(repo.join("CLAUDE.md")).unwrap(),
        "# Rules\n- be kind\n- added in the editor\n"
    );
    // Straight to one by name; a new file is created.
    pty.send("/memory local\r");
    pty.wait_for("the saved note", T, |s| s.contains("AGENTS.local.md; /reload"));
    assert_eq!(
        std::fs::read_to_string(repo.join("AGENTS.local.md")).unwrap(),
        "- added in the editor\n"
    );
    // A `# note` line says where Enter will put it before anything is written.
    pty.send("# use tabs");
    pty.wait_for_screen("the hint", T, |s| {
        s.contains("Enter adds \"- use tabs\" to") && s.contains("repo/CLAUDE.md")
    });
    assert!(!std::fs::read_to_string(repo.join("CLAUDE.md")).unwrap().contains("use tabs"));
    pty.send("\r");
    pty.wait_for("the note", T, |s| s.contains("Remembered in"));
    assert!(std::fs::read_to_string(repo.join("CLAUDE.md")).unwrap().ends_with("- use tabs\n"));
    pty.send("/memory nine\r");
    pty.wait_for("the error", T, |s| s.contains("/memory takes user, project, local or a number"));
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// A checkout whose AGENTS.md links to a file outside it: `/memory project` neither
/// shows that file in the editor nor writes through the link.
#[test]
fn memory_does_not_follow_a_link_out_of_the_project() {
    let home = Home::new();
    let repo = repo(&home);
    let outside = home.dir.path().join("bashrc");
    std::fs::write(&outside, "secret=1\n").unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("AGENTS.md")).unwrap();
    let mut pty = ui_with_editor(&home, &repo, "planted");
    pty.send("/memory project\r");
    pty.wait_for("the refusal", T, |s| s.contains("rab neither reads nor writes instruction"));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret=1\n");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(T), Some(0));
}

/// Print mode lists the files; a local instruction file is read into the system prompt
/// after the project's.
#[test]
fn memory_lists_the_files_headless_and_local_files_are_read() {
    let home = Home::new();
    let repo = repo(&home);
    std::fs::write(repo.join("AGENTS.md"), "project rule: use pnpm\n").unwrap();
    std::fs::write(repo.join("CLAUDE.local.md"), "my rule: answer briefly\n").unwrap();
    let llm = FakeLlm::start();
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&repo)
        .args(["-p", "/memory"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("1. ") && text.contains("rab/AGENTS.md (not written yet) — user"),
        "{text}"
    );
    assert!(text.contains("repo/AGENTS.md — project"), "{text}");
    assert!(text.contains("repo/CLAUDE.local.md — local"), "{text}");
    llm.script([Turn::text("ok")]);
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&repo)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    let system = llm.requests()[0].system();
    let (project, local) =
        (system.find("project rule: use pnpm").unwrap(), system.find("my rule: answer briefly"));
    assert!(local.is_some_and(|l| l > project), "{system}");
    // `/memory local` needs an editor and a terminal: headless it says so.
    let out = home
        .rab_for("anthropic-messages", &llm, Some("k"))
        .current_dir(&repo)
        .args(["-p", "/memory local"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs the interactive UI or the REPL"));
}

/// The REPL lists the files and opens one in the editor, as the terminal UI does.
#[test]
fn memory_in_the_repl_lists_and_opens_the_editor() {
    let home = Home::new();
    let repo = repo(&home);
    let llm = FakeLlm::start();
    let editor = appending_editor(&home, "- from the repl");
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.current_dir(&repo).arg("--repl").env("EDITOR", editor);
    let out = super::harness::with_stdin(cmd, "/memory\n/memory project\n/quit\n");
    let text = stdout(&out);
    assert!(text.contains("repo/AGENTS.md (not written yet) — project"), "{text}");
    assert!(text.contains("Saved") && text.contains("repo/AGENTS.md"), "{text}\n{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(repo.join("AGENTS.md")).unwrap(), "- from the repl\n");
}
