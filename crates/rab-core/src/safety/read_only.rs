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

/// Options of the listed programs that write files or run programs, as each program
/// reads them: a one-letter option also inside a cluster or with its value attached
/// (`-uo FILE`, `-oFILE`, `-O./x`), a long one also abbreviated (`--outp=FILE`: GNU
/// programs and git take any unambiguous prefix).
const REFUSED_OPTIONS: [(&str, &[&str]); 7] = [
    (
        "find",
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
    ),
    ("rg", &["--pre", "--pre-glob", "--search-zip", "-z"]),
    ("sort", &["-o", "--output", "--compress-program", "-T", "--temporary-directory"]),
    ("tree", &["-o", "--output"]),
    ("file", &["-C", "--compile"]),
    ("date", &["-s", "--set", "-f", "--file"]),
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

/// Every option `sort` and `uniq` have (GNU coreutils 9): these two are read with no
/// guessing, and an option not here is refused. `(name, takes a value)`.
const SORT_OPTIONS: [(&str, bool); 36] = [
    ("-b", false),
    ("-d", false),
    ("-f", false),
    ("-g", false),
    ("-i", false),
    ("-M", false),
    ("-h", false),
    ("-n", false),
    ("-R", false),
    ("-r", false),
    ("-V", false),
    ("-c", false),
    ("-C", false),
    ("-m", false),
    ("-s", false),
    ("-u", false),
    ("-z", false),
    ("-k", true),
    ("-t", true),
    ("-S", true),
    ("--ignore-leading-blanks", false),
    ("--dictionary-order", false),
    ("--ignore-case", false),
    ("--general-numeric-sort", false),
    ("--ignore-nonprinting", false),
    ("--month-sort", false),
    ("--human-numeric-sort", false),
    ("--numeric-sort", false),
    ("--random-sort", false),
    ("--reverse", false),
    ("--version-sort", false),
    ("--check", false),
    ("--merge", false),
    ("--stable", false),
    ("--unique", false),
    ("--key", true),
];
/// See [`SORT_OPTIONS`].
const SORT_MORE_OPTIONS: [(&str, bool); 8] = [
    ("--field-separator", true),
    ("--buffer-size", true),
    ("--zero-terminated", false),
    ("--sort", true),
    ("--parallel", true),
    ("--debug", false),
    ("--files0-from", true),
    ("--random-source", true),
];
/// See [`SORT_OPTIONS`]; `uniq` writes its second operand, which is refused apart.
const UNIQ_OPTIONS: [(&str, bool); 19] = [
    ("-c", false),
    ("-d", false),
    ("-D", false),
    ("-f", true),
    ("-i", false),
    ("-s", true),
    ("-u", false),
    ("-z", false),
    ("-w", true),
    ("--count", false),
    ("--repeated", false),
    ("--all-repeated", false),
    ("--skip-fields", true),
    ("--group", false),
    ("--ignore-case", false),
    ("--skip-chars", true),
    ("--unique", false),
    ("--zero-terminated", false),
    ("--check-chars", true),
];

/// Why `args` of `name` write or run something, read as the program reads them.
fn refused_option(name: &str, args: &[&str]) -> Option<String> {
    let known: Option<Vec<(&str, bool)>> = match name {
        "sort" => Some(SORT_OPTIONS.iter().chain(&SORT_MORE_OPTIONS).copied().collect()),
        "uniq" => Some(UNIQ_OPTIONS.to_vec()),
        _ => None,
    };
    let refused = REFUSED_OPTIONS.iter().find(|(p, _)| *p == name).map_or(&[][..], |(_, r)| *r);
    let is_refused = |opt: &str| refused.contains(&opt);
    let takes_value =
        |opt: &str| known.as_ref().and_then(|k| k.iter().find(|(o, _)| *o == opt).map(|(_, v)| *v));
    let mut operands = 0;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if arg == "--" {
            operands += args.len() - i;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let given = long.split('=').next().unwrap_or(long);
            let full = format!("--{given}");
            // Every option the given name may stand for: itself, or those it begins.
            let mut names: Vec<&str> =
                refused.iter().copied().filter(|r| r.starts_with("--")).collect();
            if let Some(k) = &known {
                names.extend(k.iter().map(|(o, _)| *o).filter(|o| o.starts_with("--")));
            }
            let exact = names.iter().any(|n| *n == full);
            let meant: Vec<&str> = names
                .into_iter()
                .filter(
                    |n| if exact { *n == full } else { n.starts_with(&full) && given.len() >= 2 },
                )
                .collect();
            if let Some(r) = meant.iter().find(|n| is_refused(n)) {
                return Some(format!("{name} {arg} ({r}) writes a file or runs a program"));
            }
            if known.is_some() {
                let [one] = meant.as_slice() else {
                    return Some(format!("{name} {arg}: rab does not know this option of {name}"));
                };
                if takes_value(one) == Some(true) && !long.contains('=') {
                    i += 1;
                }
            }
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            operands += 1;
            continue;
        };
        // Single-dash words of their own (`find -exec`, `-fprint`).
        if is_refused(arg) {
            return Some(format!("{name} {arg} writes a file or runs a program"));
        }
        if name == "find" || cluster.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        for (at, letter) in cluster.char_indices() {
            let opt = format!("-{letter}");
            if is_refused(&opt) {
                return Some(format!("{name} {arg} ({opt}) writes a file or runs a program"));
            }
            if known.is_some() {
                match takes_value(&opt) {
                    None => {
                        return Some(format!("{name} {arg}: rab does not know {opt} of {name}"));
                    }
                    Some(true) => {
                        // The rest of the word is its value, else the next word.
                        if at + letter.len_utf8() == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                    Some(false) => {}
                }
            }
        }
    }
    (name == "uniq" && operands > 1).then(|| "uniq writes its second file (its output)".to_owned())
}

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
        if let Some(why) = refused_option(name, &args) {
            return Err(why);
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
            "sort -u -k2,2 -t, data.csv",
            "sort -nrk 2 x | uniq -c",
            "sort --key=2 --field-sep=, --rev in",
            "uniq -c in",
            "sort -S 10M in",
            "tail -n 5 log",
            "git log -p -- src",
            "git grep -n foo",
            "rg -n --glob '*.rs' TODO",
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
            // Class 5 of the third containment audit: options as each program reads
            // them (clusters, attached values, abbreviations), output operands, and
            // anything sort or uniq have that the table does not know.
            ("uniq in out", "second file"),
            ("uniq -c in out", "second file"),
            ("sort -oFILE in", "-o"),
            ("sort -uo FILE in", "-o"),
            ("sort --outp=FILE in", "--output"),
            ("sort --output FILE in", "--output"),
            ("sort --compress-prog=./evil.sh in", "--compress-program"),
            ("sort -T /tmp in", "-T"),
            ("sort --bogus in", "does not know"),
            ("sort -Q in", "does not know"),
            ("git grep -O./evil.sh foo", "-O"),
            ("git grep -nO./evil.sh foo", "-O"),
            ("git grep --open-files=./evil.sh foo", "--open-files-in-pager"),
            ("git diff --out=/tmp/x", "--output"),
            ("git log --ext", "--ext-diff"),
            ("rg -nz foo", "-z"),
            ("rg --pre-g '*' foo", "--pre"),
            ("tree -o out", "-o"),
            ("file -C -m x", "-C"),
            ("date -s now", "-s"),
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
