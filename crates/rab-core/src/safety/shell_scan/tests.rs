use super::*;

/// Every form of every simple command.
fn forms(cmd: &str) -> Vec<String> {
    let s = scan(cmd);
    assert!(s.unknown.is_none(), "{cmd}: {:?}", s.unknown);
    s.commands.iter().flat_map(|c| c.all_forms().map(str::to_owned).collect::<Vec<_>>()).collect()
}

fn has_rm(cmd: &str) -> bool {
    scan(cmd).commands.iter().any(|c| c.all_forms().any(|f| f == "rm" || f.starts_with("rm ")))
}

#[test]
fn every_spelling_of_rm_is_seen() {
    for cmd in [
        "rm f",
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
        "timeout 5 rm f",
        "nice rm f",
        "nice -n 5 rm f",
        "sudo -u root rm f",
        "nohup rm f &",
        "time rm f",
        "stdbuf -oL rm f",
        "exec rm f",
        "builtin rm f",
        "'r'm f",
        "\"rm\" f",
        "(rm f)",
        "{ rm f; }",
        "true && rm f",
        "false || rm f",
        "if true; then rm f; fi",
        "for x in 1; do rm f; done",
        "while false; do rm f; done",
        "f() { rm f; }; f",
        "case x in x) rm f;; esac",
        "cat <(rm f)",
        "X=$(rm f) true",
        "echo \"$(rm f)\"",
        "sh <<EOF\nrm f\nEOF",
        "bash <<< 'rm f'",
        "cat <<EOF\n$(rm f)\nEOF",
        "bash -lc 'rm f'",
        "env -i PATH=/bin rm f",
        "env -S 'rm f'",
        "find . -exec rm f {} \\;",
        "sh -c 'sh -c \"rm f\"'",
        "echo $(echo $(rm f))",
        "timeout -s KILL 5 env X=1 nice rm f",
        "sudo sh -c 'rm f'",
        "[[ $(rm f) ]]",
        "echo ok > $(rm f)",
        "busybox sh -c 'rm f'",
        "watch -n 1 rm f",
        "echo ${X:-$(rm f)}",
        "echo $(( $(rm f) + 1 ))",
        "$'\\x72m' f",
        "$'\\162m' f",
        "r\\\nm f",
        "echo f | rm -rf -- f # rm",
    ] {
        assert!(has_rm(cmd), "{cmd}: {:#?}", scan(cmd));
    }
}

#[test]
fn commands_known_only_when_they_run_are_unknown() {
    for cmd in [
        "$(printf rm) f",
        "`printf rm` f",
        "$X f",
        "eval \"$X\"",
        "source ./x.sh",
        ". ./x.sh",
        "echo 'rm f' | sh",
        "sh -c \"$X\"",
        "/bin/r? f",
        "/bin/r[m] f",
        "{rm,f}",
        "env $X f",
        "sh <<EOF\n$X\nEOF",
        "if ; then",
        "echo 'unterminated",
    ] {
        assert!(scan(cmd).unknown.is_some(), "{cmd}: {:#?}", scan(cmd));
    }
}

#[test]
fn words_that_only_mention_rm_are_not_commands() {
    for cmd in ["echo rm", "git rm --cached x", "echo 'a; rm f'", "grep rm f", "cat rm"] {
        assert!(!has_rm(cmd), "{cmd}: {:#?}", scan(cmd));
        assert!(scan(cmd).unknown.is_none(), "{cmd}");
    }
}

#[test]
fn forms_are_unquoted_and_joined() {
    assert_eq!(forms("git commit -m \"a b\""), ["git commit -m a b"]);
    assert_eq!(forms("/usr/bin/git status"), ["/usr/bin/git status", "git status"]);
    assert_eq!(forms("env X=1 git status"), ["env X=1 git status", "git status"]);
    assert_eq!(forms("ls -la; pwd"), ["ls -la", "pwd"]);
}

#[test]
fn file_output_is_a_write_and_dev_null_is_not() {
    let s = scan("git status > out.txt 2>/dev/null");
    assert_eq!(s.commands[0].writes, ["> out.txt"]);
    assert!(scan("ls 2>&1 >/dev/null").commands[0].writes.is_empty());
    assert_eq!(scan("ls &> log").commands[0].writes, ["&> log"]);
    assert_eq!(scan("ls >> ~/.bashrc").commands[0].writes, [">> ~/.bashrc"]);
    assert!(scan("{ ls; } > f").compound_writes);
    assert!(!scan("{ ls; } 2>/dev/null").compound_writes);
}

#[test]
fn deep_or_broken_nesting_is_read_or_refused_quickly() {
    for n in [10, 30, 200, 1000, 5000] {
        for cmd in [
            format!("{}rm f{}", "(".repeat(n), ")".repeat(n)),
            format!("{}rm f{}", "{ ".repeat(n), "; }".repeat(n)),
            format!("{}rm f{}", "echo $(".repeat(n), ")".repeat(n)),
            format!("{}rm f{}", "if true; then ".repeat(n), "; fi".repeat(n)),
            format!("{}rm f", "(".repeat(n)),
            format!("{}rm f", "$(".repeat(n)),
            format!("rm f; {}", "`".repeat(n)),
        ] {
            let t = std::time::Instant::now();
            let s = scan(&cmd);
            eprintln!("{n} {} {:?}", &cmd[..12.min(cmd.len())], t.elapsed());
            // Either rm is seen or the command is unknown: never a silent miss.
            assert!(
                s.unknown.is_some() || s.commands.iter().any(|c| c.written == "rm f"),
                "{}",
                &cmd[..cmd.len().min(60)]
            );
        }
    }
}

#[test]
#[ignore]
/// Prints the parse tree and the scan of `$CMD`: a debugging aid.
fn sexp() {
    let cmd = std::env::var("CMD").unwrap();
    let mut p = Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    let t = p.parse(&cmd, None).unwrap();
    eprintln!("{}", t.root_node().to_sexp());
    eprintln!("{:#?}", scan(&cmd));
}

#[test]
fn everyday_commands_are_read_in_full() {
    for cmd in [
        "cargo test 2>&1 | tail -20",
        "git log --oneline -5",
        "cat > src/main.rs <<'EOF'\nfn main() { println!(\"hi\"); }\nEOF",
        "python3 - <<'EOF'\nimport os\nprint(os.getcwd())\nEOF",
        "cat <<EOF > config.toml\nname = \"$USER\"\nEOF",
        "find . -name '*.rs' | xargs grep -n 'TODO'",
        "for f in *.rs; do echo \"$f\"; done",
        "echo \"Result: $(date +%s)\"",
        "sed -i 's/foo/bar/g' file.txt",
        "awk '{print $1}' file",
        "export PATH=\"$HOME/.cargo/bin:$PATH\" && cargo build",
        "cd crates/x && cargo test",
        "[ -f Cargo.toml ] && echo yes",
        "if [[ -d target ]]; then du -sh target; fi",
        "echo 'it'\\''s'",
        "jq '.items[] | .name' data.json",
        "python -c 'import sys; print(sys.argv)'",
        "echo $((1+2))",
        "time cargo build",
        "timeout 60 cargo test",
        "env RUST_LOG=debug cargo run",
        "sudo apt-get install -y jq",
        "make -j4 2>&1 | tee build.log",
        "git commit -m \"Fix: handle \\`foo\\` case\"",
        "echo \"price: \\$5\"",
        "bash scripts/test.sh",
        "sh -c 'echo hi'",
        "git log --format='%H %s' | head",
        "grep -E '^\\s*fn\\s+\\w+\\(' src/*.rs",
        "echo \"$(git rev-parse HEAD)\"",
        "awk 'BEGIN{x[$1]++}' f",
        "npm test -- --watch=false",
        "ls -la && pwd",
        "cat <<-EOF\n\tindented\n\tEOF",
        "docker run --rm alpine echo hi",
        "git diff HEAD~1 -- src/lib.rs",
        "echo \"[$(date +%T)] starting\"",
        "find . -name '*.rs' -exec grep -l foo {} \\;",
        "ls *.txt | xargs -I {} cp {} backup/",
        "arr=(a b); echo \"${arr[0]}\" \"${arr[@]:-none}\"",
        "git log --format='[%h] %s' -3",
        "cargo build 2>&1 | grep -E 'error\\[E[0-9]+\\]'",
        "echo $(( x[1] + 2 ))",
        "docker run \\\n  --rm \\\n  -v \"$(pwd):/w\" \\\n  alpine ls /w",
        "x=1 y=2 make -j2",
        "echo \"${HOME:-/tmp}\"",
        "mkdir -p {src,tests}/unit",
        "PS_FORMAT=x ps aux | head",
    ] {
        let s = scan(cmd);
        assert!(s.unknown.is_none(), "{cmd}: {:?}", s.unknown);
    }
}
