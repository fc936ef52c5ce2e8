//! What a simple command runs: its forms for the rules, seen through wrappers (`env`,
//! `sudo`, `xargs`, `timeout`, `flock`, …), and the text that shells, `eval`, `trap`,
//! `alias`, `mapfile -C` and `watch` run, read in turn.

use super::{Input, MAX_DEPTH, RESERVED, Scanner, Simple, WordText, basename};

mod options;

use options::Spec;

/// A wrapper: its options, and the operands before the command it runs.
struct Wrapper {
    spec: Spec,
    /// Operands before the command (`timeout DURATION`, `flock FILE`).
    operands: usize,
}

const fn w(short: &'static str, long: &'static [(&'static str, char)], operands: usize) -> Wrapper {
    Wrapper { spec: Spec { short, long }, operands }
}

/// The wrappers rab sees through: each runs the command given after its options.
fn wrapper(base: &str) -> Option<Wrapper> {
    Some(match base {
        "env" => w("uCS", &[("--unset", 'u'), ("--chdir", 'C'), ("--split-string", 'S')], 0),
        "command" | "builtin" | "nohup" | "setsid" | "chronic" => w("", &[], 0),
        "fakeroot" => w("sil", &[("--lib", 'l'), ("--faked", '\0')], 0),
        "exec" => w("a", &[], 0),
        "nice" => w("n", &[("--adjustment", 'n')], 0),
        "time" => w("fo", &[("--format", 'f'), ("--output", 'o')], 0),
        "timeout" => w("sk", &[("--signal", 's'), ("--kill-after", 'k')], 1),
        "sudo" | "doas" => w(
            "ughpCDrtUT",
            &[
                ("--user", 'u'),
                ("--group", 'g'),
                ("--host", 'h'),
                ("--prompt", 'p'),
                ("--close-from", 'C'),
                ("--chdir", 'D'),
                ("--role", 'r'),
                ("--type", 't'),
                ("--other-user", 'U'),
                ("--command-timeout", 'T'),
            ],
            0,
        ),
        "xargs" => w(
            "InLPdEsa",
            &[
                ("--max-args", 'n'),
                ("--max-lines", 'L'),
                ("--max-procs", 'P'),
                ("--delimiter", 'd'),
                ("--max-chars", 's'),
                ("--arg-file", 'a'),
                ("--process-slot-var", '\0'),
            ],
            0,
        ),
        "stdbuf" => w("ioe", &[("--input", 'i'), ("--output", 'o'), ("--error", 'e')], 0),
        "ionice" => w("cnp", &[("--class", 'c'), ("--classdata", 'n'), ("--pid", 'p')], 0),
        "flock" => w(
            "wEc",
            &[
                ("--timeout", 'w'),
                ("--wait", 'w'),
                ("--conflict-exit-code", 'E'),
                ("--command", 'c'),
            ],
            1,
        ),
        "taskset" => w("", &[], 1),
        "chrt" => w(
            "TPD",
            &[("--sched-runtime", 'T'), ("--sched-period", 'P'), ("--sched-deadline", 'D')],
            1,
        ),
        "setarch" => w("", &[], 1),
        "linux32" | "linux64" | "x86_64" | "i386" | "i686" | "aarch64" | "arm64" => w("", &[], 0),
        "numactl" => w(
            "mNCpP",
            &[
                ("--membind", 'm'),
                ("--cpunodebind", 'N'),
                ("--physcpubind", 'C'),
                ("--preferred", 'p'),
            ],
            0,
        ),
        "prlimit" => w("po", &[("--pid", 'p'), ("--output", 'o')], 0),
        "setpriv" => w(
            "",
            &[
                ("--reuid", '\0'),
                ("--regid", '\0'),
                ("--ruid", '\0'),
                ("--euid", '\0'),
                ("--rgid", '\0'),
                ("--egid", '\0'),
                ("--groups", '\0'),
                ("--inh-caps", '\0'),
                ("--ambient-caps", '\0'),
                ("--bounding-set", '\0'),
                ("--securebits", '\0'),
                ("--pdeathsig", '\0'),
                ("--selinux-label", '\0'),
                ("--apparmor-profile", '\0'),
                ("--landlock-access", '\0'),
                ("--landlock-rule", '\0'),
            ],
            0,
        ),
        "unshare" => {
            w("SGRw", &[("--setuid", 'S'), ("--setgid", 'G'), ("--root", 'R'), ("--wd", 'w')], 0)
        }
        // chroot NEWROOT COMMAND…
        "chroot" => w("", &[("--userspec", '\0'), ("--groups", '\0')], 1),
        // The dynamic loader run as a program: `ld.so [OPTIONS] PROGRAM ARGS…`.
        "ld.so" => w(
            "",
            &[
                ("--library-path", '\0'),
                ("--inhibit-rpath", '\0'),
                ("--audit", '\0'),
                ("--preload", '\0'),
                ("--argv0", '\0'),
                ("--glibc-hwcaps-prepend", '\0'),
                ("--glibc-hwcaps-mask", '\0'),
            ],
            0,
        ),
        // `-m[FILE]` and the like take a value only attached to them.
        "nsenter" => w("tSG", &[("--target", 't'), ("--setuid", 'S'), ("--setgid", 'G')], 0),
        "strace" | "ltrace" => w(
            "abeEoOpPsSuXI",
            &[("--output", 'o'), ("--attach", 'p'), ("--user", 'u'), ("--env", 'E')],
            0,
        ),
        _ => return None,
    })
}

/// Words that start a compound command (`coproc NAME { …; }`).
const COMPOUND_START: [&str; 10] =
    ["{", "(", "((", "[[", "if", "for", "while", "until", "case", "select"];

/// Whether `base` is the dynamic loader (`ld-linux-x86-64.so.2`, `ld.so`, `ld-musl-*`).
fn is_loader(base: &str) -> bool {
    base == "ld.so"
        || (base.starts_with("ld-linux")
            || base.starts_with("ld64.so")
            || base.starts_with("ld-musl"))
            && base.contains(".so")
}

/// `watch`'s options.
const WATCH: Spec = Spec { short: "nq", long: &[("--interval", 'n'), ("--equexit", 'q')] };
/// The options of programs that run `-c TEXT`: script, su, runuser.
const DASH_C: Spec = Spec {
    short: "cEIOBTmo",
    long: &[("--command", 'c'), ("--echo", 'E'), ("--log-in", 'I'), ("--log-out", 'O')],
};
/// `mapfile`'s and `compgen`'s options that take a value.
const CALLBACK: Spec = Spec { short: "dnOscCuAGWFPSX", long: &[] };

/// Variables whose value bash runs or sources later: setting one hides a command.
pub(super) fn is_hook_variable(name: &str) -> bool {
    name == "ENV" || is_bash_hook_variable(name)
}

/// The variables bash itself runs or follows (prompts, the startup file, exported
/// functions, the alias and command hash tables).
fn is_bash_hook_variable(name: &str) -> bool {
    matches!(
        name,
        "PS0"
            | "PS1"
            | "PS2"
            | "PS3"
            | "PS4"
            | "PROMPT_COMMAND"
            | "BASH_ENV"
            | "BASH_ALIASES"
            | "BASH_CMDS"
    ) || name.starts_with("BASH_FUNC_")
}

/// The first name in `source` of a variable bash runs or follows (`ENV`, read only by
/// interactive `sh`, is left to assignments: it is a common word).
pub(super) fn hook_variable_named(source: &str) -> Option<&str> {
    source
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|word| is_bash_hook_variable(word))
}

fn joined(words: &[WordText]) -> Option<String> {
    words
        .iter()
        .all(|w| w.fixed)
        .then(|| words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
}

impl Scanner<'_> {
    /// Adds the forms of the command `words` runs, seeing through wrappers, and walks
    /// what shells and `eval` run.
    pub(super) fn resolve(
        &mut self,
        words: &[WordText],
        simple: &mut Simple,
        input: &Input,
        depth: usize,
    ) {
        let Some(first) = words.first() else { return };
        if depth > MAX_DEPTH {
            self.unknown(format!("wrappers nest more than {MAX_DEPTH} levels deep"));
            return;
        }
        // A reserved word as a command word: the parser read the line differently from
        // bash (`! if …`, `! { …; }`). What follows it is what bash runs.
        if RESERVED.contains(&first.text.as_str()) {
            let rest = &words[1..];
            // `coproc NAME { …; }`: the name is no command; `coproc rm f` has none.
            let is_named = rest.get(1).is_some_and(|w| COMPOUND_START.contains(&w.text.as_str()));
            let rest = if first.text == "coproc" && is_named { &rest[1..] } else { rest };
            if !rest.is_empty() {
                self.resolve(rest, simple, input, depth + 1);
            }
            return;
        }
        if !first.fixed {
            self.unknown(format!(
                "the command word {} is only known when the command runs",
                first.text
            ));
            return;
        }
        let base = basename(&first.text);
        // The dynamic loader runs the program named after its options.
        let base = if is_loader(base) { "ld.so" } else { base };
        let rest = &words[1..];
        let mut form = base.to_owned();
        for w in rest {
            form.push(' ');
            form.push_str(&w.text);
        }
        simple.forms.push(form);
        match base {
            "eval" => {
                let args =
                    if rest.first().is_some_and(|w| w.text == "--") { &rest[1..] } else { rest };
                match joined(args) {
                    Some(text) => self.program(&text, depth + 1),
                    None => self.unknown("eval runs text that is only known when the command runs"),
                }
            }
            "source" | "." => {
                self.unknown(format!("{base} runs the commands of a file rab cannot see"));
            }
            "sh" | "bash" | "rbash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "posh"
            | "busybox" => {
                self.shell(base, rest, input, depth);
            }
            "find" => self.find(rest, simple, depth),
            "watch" => {
                let parsed = options::parse(rest, &WATCH);
                match joined(&rest[parsed.end..]).filter(|_| !parsed.unsure) {
                    Some(text) => self.program(&text, depth + 1),
                    None => {
                        self.unknown("watch runs text that is only known when the command runs")
                    }
                }
            }
            "trap" => {
                // `trap -p`, `trap -l`: a listing; otherwise the first operand is the
                // action, whatever options follow it.
                let listing =
                    rest.first().is_some_and(|w| matches!(w.text.as_str(), "-p" | "-l" | "-P"));
                let at = usize::from(rest.first().is_some_and(|w| w.text == "--"));
                if let Some(action) = rest.get(at).filter(|_| !listing && rest.len() > at + 1) {
                    self.text_program(action, "trap", depth);
                }
            }
            "alias" => {
                for def in rest {
                    if let Some((_, value)) = def.text.split_once('=') {
                        // An alias is a command prefix: its arguments come later.
                        let value = WordText { text: format!("{value} …"), fixed: def.fixed };
                        self.text_program(&value, "alias", depth);
                    }
                }
            }
            "mapfile" | "readarray" | "compgen" | "complete" => {
                if let Some(callback) = options::anywhere(rest, &CALLBACK, 'C') {
                    let call =
                        WordText { text: format!("{} …", callback.text), fixed: callback.fixed };
                    self.text_program(&call, &format!("{base} -C"), depth);
                }
            }
            // Commands that run what the history, the hash table or a loaded builtin
            // says: nothing rab can see.
            "fc" | "hash" | "enable" if rest.iter().any(|w| w.text.starts_with('-')) => {
                self.unknown(format!("{base} with options runs commands rab cannot see"));
            }
            // capsh hands what follows `--` to bash, after options that change which
            // shell and how: not read, refused.
            "capsh" => self.unknown("capsh runs a shell rab does not read"),
            "script" | "su" | "runuser" | "sg" => match options::anywhere(rest, &DASH_C, 'c') {
                Some(c) => self.text_program(&c, base, depth),
                None => {
                    self.unknown(format!("{base} without -c runs a shell reading its input"));
                }
            },
            _ => self.wrapped(base, rest, simple, depth),
        }
    }

    /// Reads `word` as a program (`sh -c` text, a trap action), or says it cannot.
    fn text_program(&mut self, word: &WordText, what: &str, depth: usize) {
        if word.fixed {
            self.program(&word.text, depth + 1);
        } else {
            self.unknown(format!("{what} runs text that is only known when the command runs"));
        }
    }

    /// `find … -exec CMD {} ;` and its kin.
    fn find(&mut self, rest: &[WordText], simple: &mut Simple, depth: usize) {
        // A word only known when it runs may be `-exec` itself.
        let terminated = rest.iter().any(|w| w.text == ";" || w.text == "+");
        if terminated && rest.iter().any(|w| !w.fixed) {
            self.unknown("find's arguments are only known when it runs, so what it runs is too");
            return;
        }
        let mut i = 0;
        while i < rest.len() {
            if matches!(rest[i].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let end = rest[start..]
                    .iter()
                    .position(|w| w.text == ";" || w.text == "+")
                    .map_or(rest.len(), |p| start + p);
                if start < end {
                    self.resolve(&rest[start..end], simple, &Input::default(), depth + 1);
                }
                i = end;
            }
            i += 1;
        }
    }

    /// A wrapper's command, resolved in turn.
    fn wrapped(&mut self, base: &str, rest: &[WordText], simple: &mut Simple, depth: usize) {
        let Some(wrapper) = wrapper(base) else { return };
        let mut parsed = options::parse(rest, &wrapper.spec);
        if base == "env"
            && let Some(split) = parsed.value('S')
        {
            // env -S splits its argument, `\_` being a space.
            let text = split.text.replace("\\_", " ");
            self.text_program(&WordText { text, fixed: split.fixed }, "env -S", depth);
        }
        let mut i = parsed.end;
        if base == "env" {
            // env takes NAME=VALUE for any NAME, and `-` for -i.
            while let Some(word) = rest.get(i) {
                if word.text == "-" {
                    i += 1;
                    continue;
                }
                let Some((name, _)) = word.text.split_once('=').filter(|(n, _)| !n.is_empty())
                else {
                    break;
                };
                if is_hook_variable(name) {
                    self.unknown(format!("env sets {name}, whose value bash runs later"));
                }
                parsed.unsure |= !word.fixed;
                i += 1;
            }
        }
        if matches!(base, "taskset" | "chrt") && parsed.flags.contains(&'p') {
            return; // an existing process, no command
        }
        // Operands (a duration, a lock file, an architecture), then, for the programs
        // whose options may follow them, options again.
        // setarch takes its architecture only when options do not come first.
        let operands = if base == "setarch" && parsed.end > 0 { 0 } else { wrapper.operands };
        for _ in 0..operands {
            parsed.unsure |= rest.get(i).is_some_and(|w| !w.fixed);
            i += 1;
        }
        if operands > 0 && i < rest.len() {
            let again = options::parse(&rest[i..], &wrapper.spec);
            parsed.unsure |= again.unsure;
            parsed.values.extend(again.values);
            i += again.end;
        }
        if base == "flock"
            && let Some(c) = parsed.value('c').cloned()
        {
            self.text_program(&c, "flock -c", depth);
            return;
        }
        if parsed.unsure {
            self.unknown(format!(
                "{base}'s arguments are only known when it runs, so its command is too"
            ));
            return;
        }
        // Nothing after the options: no command (xargs alone runs echo), but chroot and
        // nsenter then start a shell reading its input.
        let Some(inner) = rest.get(i..).filter(|r| !r.is_empty()) else {
            if matches!(base, "chroot" | "nsenter") {
                self.unknown(format!("{base} without a command starts a shell"));
            }
            return;
        };
        if base == "xargs" {
            // xargs adds the words it reads to the command (`xargs rm` is `rm …`), and
            // with -I puts them in place of the replacement string.
            let replace = parsed
                .value('I')
                .map(|r| r.text.clone())
                .or_else(|| parsed.flags.contains(&'i').then(|| "{}".to_owned()));
            let mut with_input: Vec<WordText> = inner
                .iter()
                .map(|w| WordText {
                    text: w.text.clone(),
                    fixed: w.fixed && replace.as_ref().is_none_or(|r| !w.text.contains(r.as_str())),
                })
                .collect();
            with_input.push(WordText { text: "…".into(), fixed: false });
            self.resolve(&with_input, simple, &Input::default(), depth + 1);
        } else {
            self.resolve(inner, simple, &Input::default(), depth + 1);
        }
    }

    /// `sh -c '…'`, `sh <<EOF`, `echo … | sh`, `sh -s`, `sh script`.
    fn shell(&mut self, base: &str, rest: &[WordText], input: &Input, depth: usize) {
        let rest = if base == "busybox" {
            match rest.first().map(|w| basename(&w.text)) {
                Some("sh" | "ash" | "bash" | "hush") => &rest[1..],
                _ => return,
            }
        } else {
            rest
        };
        let mut i = 0;
        let (mut from_c, mut from_stdin) = (false, false);
        while let Some(word) = rest.get(i) {
            let t = word.text.as_str();
            if t == "--" || t == "-" {
                i += 1;
                from_stdin |= t == "-";
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                let takes = matches!(long, "rcfile" | "init-file");
                i += if takes { 2 } else { 1 };
                continue;
            }
            let Some(cluster) = t.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else {
                break;
            };
            if !word.fixed {
                self.unknown(format!("{base}'s options are only known when it runs"));
                return;
            }
            i += 1;
            for c in cluster.chars() {
                match c {
                    'c' => from_c = true,
                    's' => from_stdin = true,
                    // `-o errexit`, `-O extglob`: each takes the next word.
                    'o' | 'O' => {
                        if rest.get(i).is_some_and(|v| !v.fixed) {
                            self.unknown(format!("{base}'s options are only known when it runs"));
                            return;
                        }
                        i += 1;
                    }
                    _ => {}
                }
            }
        }
        if from_c {
            if let Some(script) = rest.get(i) {
                self.text_program(script, &format!("{base} -c"), depth);
            }
            return;
        }
        // `sh 0<<<'…'`: the parser reads the descriptor as a script named `0`. A shell
        // given a number is read as reading its input.
        if rest
            .get(i)
            .is_some_and(|w| !w.text.is_empty() && w.text.bytes().all(|b| b.is_ascii_digit()))
        {
            let input = Input {
                stdin: input.stdin.iter().chain(&input.other).cloned().collect(),
                other: Vec::new(),
                ..input.clone()
            };
            return self.shell(base, &rest[..i], &input, depth);
        }
        // `//dev/stdin`, `/dev/./fd/0`: the path as the kernel reads it.
        let script = rest
            .get(i)
            .map(|w| std::path::Path::new(&w.text).components().collect::<std::path::PathBuf>());
        let script = script.as_ref().and_then(|p| p.to_str());
        let reads_fd = script.is_some_and(|p| {
            p.starts_with("/dev/fd/") || p.starts_with("/proc/") || p == "/dev/stdin"
        });
        if reads_fd && script.is_some_and(|p| !matches!(p, "/dev/stdin" | "/dev/fd/0")) {
            // Another descriptor: whatever feeds it, read it too, or refuse.
            if input.other.is_empty() {
                self.unknown(format!("{base} runs a script from a file descriptor"));
            }
            for text in input.other.clone() {
                self.program(&text, depth + 1);
            }
            return;
        }
        let reads_input = from_stdin || script.is_none() || reads_fd;
        if !reads_input {
            if rest.get(i).is_some_and(|w| !w.fixed) {
                self.unknown(format!("{base} runs a script that is only known when it runs"));
            }
            // A script file: like ./script, its commands are the sandbox's business.
            return;
        }
        if input.unknown {
            self.unknown(format!("{base} reads commands from text only known when it runs"));
        } else if !input.stdin.is_empty() {
            for text in input.stdin.clone() {
                self.program(&text, depth + 1);
            }
        } else if input.piped {
            self.unknown(format!("{base} reads commands from a pipe"));
        } else {
            self.unknown(format!("{base} reads commands from its input"));
        }
    }
}
