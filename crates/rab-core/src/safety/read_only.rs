//! Commands plan mode lets run without a question: ones that only read. A review in
//! plan mode needs `git diff main...HEAD`, `rg TODO`, `ls`, `cat README.md`; it must
//! not get a way to write, run a program of its choosing or reach the network.
//!
//! A command line qualifies when rab can read all of it (no variable as a command, no
//! `eval` of a variable), nothing in it writes to a file (`>`, `>>`, a compound with a
//! redirection; `/dev/null` aside), and every simple command in it — pipelines and
//! `&&` chains included — is on [`READERS`] or is a read-only `git` subcommand, with none
//! of the options that write or run something (`find -exec`, `rg --pre`, `git diff
//! --output`, `git -c`, `--ext-diff`). Wrappers (`env`, `xargs`, `timeout`, `sudo`) are
//! not on the list, so what they would run is never allowed this way. The files such a
//! command names are checked against the read deny rules by the caller.

use super::shell_scan::{Scan, Simple};

/// Programs that only read what they are given and write to stdout.
const READERS: [&str; 33] = [
    "ls", "cat", "head", "tail", "wc", "pwd", "rg", "grep", "egrep", "fgrep", "file", "stat",
    "tree", "du", "df", "echo", "printf", "true", "false", "which", "basename", "dirname",
    "realpath", "readlink", "sort", "uniq", "cut", "tr", "diff", "cmp", "nl", "find", "date",
];

/// `git` subcommands that only read the repository.
const GIT_READERS: [&str; 15] = [
    "diff",
    "log",
    "show",
    "status",
    "blame",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "grep",
    "shortlog",
    "describe",
    "merge-base",
    "cat-file",
    "rev-list",
    "branch",
];

/// Options of the listed programs that write files or run programs.
const REFUSED_OPTIONS: [(&str, &[&str]); 4] = [
    (
        "find",
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
    ),
    ("rg", &["--pre", "--pre-glob", "--search-zip", "-z"]),
    ("sort", &["-o", "--output", "--compress-program"]),
    (
        "git",
        &[
            "--output",
            "--ext-diff",
            "-c",
            "--exec-path",
            "--git-dir",
            "--work-tree",
            "--config-env",
            "-C",
            "--textconv",
            "--open-files-in-pager",
            "-O",
        ],
    ),
];

/// The words of the command line naming files it reads (the arguments, not options, of
/// the listed programs other than `git`); why not, when it is not read-only.
pub(crate) fn read_only(scan: &Scan) -> Result<Vec<String>, String> {
    if let Some(why) = &scan.unknown {
        return Err(format!("rab cannot tell what it runs ({why})"));
    }
    if scan.compound_writes {
        return Err("it writes output to a file".to_owned());
    }
    if scan.commands.is_empty() {
        return Err("it runs nothing rab can name".to_owned());
    }
    let mut files = Vec::new();
    for simple in &scan.commands {
        files.extend(simple_reads(simple)?);
    }
    Ok(files)
}

fn simple_reads(simple: &Simple) -> Result<Vec<String>, String> {
    if let Some(w) = simple.writes.first() {
        return Err(format!("it writes to a file ({w})"));
    }
    // Every form (a wrapper's inner command too) must be a reader.
    for form in simple.all_forms() {
        let mut words = form.split(' ').filter(|w| !w.is_empty());
        let Some(first) = words.next() else { continue };
        let name = first.rsplit('/').next().unwrap_or(first);
        let args: Vec<&str> = words.collect();
        if name == "git" {
            git_reads(&args)?;
        } else if !READERS.contains(&name) {
            return Err(format!("{name} is not a read-only command"));
        }
        if let Some((_, refused)) = REFUSED_OPTIONS.iter().find(|(p, _)| *p == name)
            && let Some(opt) = args.iter().find(|a| {
                refused
                    .iter()
                    .any(|r| *a == r || a.strip_prefix(r).is_some_and(|t| t.starts_with('=')))
            })
        {
            return Err(format!("{name} {opt} writes a file or runs a program"));
        }
    }
    let words: Vec<&str> = simple.written.split(' ').filter(|w| !w.is_empty()).collect();
    if words.first().is_some_and(|w| w.rsplit('/').next() == Some("git")) {
        return Ok(Vec::new());
    }
    Ok(words.iter().skip(1).filter(|w| !w.starts_with('-')).map(|w| (*w).to_owned()).collect())
}

/// A `git` command line that only reads: a subcommand on [`GIT_READERS`] (`branch`
/// only listing), no global option before it.
fn git_reads(args: &[&str]) -> Result<(), String> {
    let Some(sub) = args.first() else { return Err("git without a subcommand".to_owned()) };
    if sub.starts_with('-') {
        return Err(format!(
            "git {sub}: options before the subcommand are not allowed in plan mode"
        ));
    }
    if !GIT_READERS.contains(sub) {
        return Err(format!("git {sub} is not a read-only git command"));
    }
    if *sub == "branch"
        && args[1..].iter().any(|a| {
            !matches!(
                *a,
                "-a" | "-r" | "-v" | "-vv" | "--list" | "--show-current" | "--all" | "--remotes"
            )
        })
    {
        return Err("git branch only lists in plan mode".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::shell_scan::scan;

    #[test]
    fn reading_commands_pass_and_what_writes_or_runs_is_named() {
        for ok in [
            "git diff origin/main...HEAD",
            "git log --oneline -20 && git status",
            "rg -n TODO src | head -20",
            "ls -la; cat README.md",
            "find . -name '*.rs' | wc -l",
            "git show HEAD:src/lib.rs 2>/dev/null",
            "git branch --show-current",
        ] {
            assert!(read_only(&scan(ok)).is_ok(), "{ok}: {:?}", read_only(&scan(ok)));
        }
        for (bad, why) in [
            ("git diff --output=/tmp/x", "--output"),
            ("git -c core.pager=sh diff", "options before the subcommand"),
            ("git diff --ext-diff", "--ext-diff"),
            ("git commit -m x", "not a read-only git command"),
            ("git branch evil", "only lists"),
            ("find . -exec rm {} ;", "-exec"),
            ("find . -delete", "-delete"),
            ("rg --pre ./x foo", "--pre"),
            ("rg --pre=./x foo", "--pre"),
            ("cat a > b", "writes to a file (> b)"),
            ("echo x >> ~/.bashrc", "writes to a file"),
            ("ls && rm -rf x", "rm is not"),
            ("xargs rm < list", "xargs is not"),
            ("env rm x", "not a read-only"),
            ("sort -o out in", "-o"),
            ("$CMD x", "cannot tell"),
            ("cat $(curl evil)", "curl is not"),
            ("{ ls; } > out", "writes"),
            ("python3 -c 'print(1)'", "python3 is not"),
            ("sed -i s/a/b/ f", "sed is not"),
        ] {
            let err = read_only(&scan(bad)).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(read_only(&scan("cat -n a.txt b/c.md")).unwrap(), ["a.txt", "b/c.md"]);
    }
}
