//! What a simple command runs: its forms for the rules, seen through wrappers (`env`,
//! `sudo`, `xargs`, `timeout`, `flock`, …), and the text that shells, `eval`, `trap`,
//! `alias`, `mapfile -C` and `watch` run, read in turn.

use super::{Input, MAX_DEPTH, RESERVED, Scanner, Simple, WordText, basename};

/// How a wrapper's arguments are laid out before the command it runs.
struct Wrapper {
    /// Short options that take a value (written apart, or attached: `-n5`, `-vs KILL`).
    short: &'static str,
    /// Long options that take a value written apart (`--signal KILL`).
    long: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `flock FILE`).
    operands: usize,
}

const fn w(short: &'static str, long: &'static [&'static str], operands: usize) -> Wrapper {
    Wrapper { short, long, operands }
}

/// The wrappers rab sees through: each runs the command given after its options.
fn wrapper(base: &str) -> Option<Wrapper> {
    Some(match base {
        "env" => w("uCS", &["--unset", "--chdir", "--split-string"], 0),
        "command" | "builtin" | "nohup" | "setsid" | "fakeroot" | "chronic" => w("", &[], 0),
        "exec" => w("a", &[], 0),
        "nice" => w("n", &["--adjustment"], 0),
        "time" => w("fo", &["--format", "--output"], 0),
        "timeout" => w("sk", &["--signal", "--kill-after"], 1),
        "sudo" | "doas" => w(
            "ughpCDrtUT",
            &[
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--close-from",
                "--chdir",
                "--role",
                "--type",
                "--other-user",
                "--command-timeout",
            ],
            0,
        ),
        "xargs" => w(
            "InLPdEsa",
            &[
                "--max-args",
                "--max-lines",
                "--max-procs",
                "--delimiter",
                "--max-chars",
                "--arg-file",
                "--process-slot-var",
            ],
            0,
        ),
        "stdbuf" => w("ioe", &["--input", "--output", "--error"], 0),
        "ionice" => w("cnp", &["--class", "--classdata", "--pid"], 0),
        "flock" => w("wEc", &["--timeout", "--conflict-exit-code", "--command"], 1),
        "taskset" => w("", &[], 1),
        "chrt" => w("TPD", &["--sched-runtime", "--sched-period", "--sched-deadline"], 1),
        "setarch" | "linux32" | "linux64" => w("", &[], usize::from(base == "setarch")),
        "numactl" => w("mNCpP", &["--membind", "--cpunodebind", "--physcpubind"], 0),
        _ => return None,
    })
}

/// Skips leading options; returns the index of the first operand. A short-option cluster
/// whose letter takes a value takes the rest of the cluster, or the next word when the
/// letter ends it (`-vs KILL`, `-tn 1`, `-n5`).
fn skip_options(rest: &[WordText], short: &str, long: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        let t = word.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if let Some(name) = t.strip_prefix("--") {
            let takes = !name.contains('=') && long.contains(&t);
            i += if takes { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else { break };
        i += 1;
        // `nice -5`: a number is the option itself.
        for (k, c) in cluster.char_indices() {
            if short.contains(c) {
                if k + c.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
        }
    }
    i
}

/// The value of a short option `-X` (apart or attached) or a long one among `rest`'s
/// leading options.
fn option_value<'w>(rest: &'w [WordText], short: char, long: &str) -> Option<&'w WordText> {
    for (i, word) in rest.iter().enumerate() {
        let t = word.text.as_str();
        if t == "--" || !t.starts_with('-') {
            return None;
        }
        if t == long {
            return rest.get(i + 1);
        }
        if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some(at) = cluster.find(short)
        {
            // An attached value is not a separate word: the caller reads it itself.
            return if at + 1 == cluster.len() { rest.get(i + 1) } else { None };
        }
    }
    None
}

/// An attached value (`-S'rm f'`, `--split-string=rm f`) of `-X`/`--long=`.
fn attached_value(rest: &[WordText], short: char, long: &str) -> Option<WordText> {
    for word in rest {
        let t = word.text.as_str();
        if t == "--" || !t.starts_with('-') {
            return None;
        }
        if let Some(v) = t.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return Some(WordText { text: v.to_owned(), fixed: word.fixed });
        }
        if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some(at) = cluster.find(short)
            && at + 1 < cluster.len()
        {
            return Some(WordText { text: cluster[at + 1..].to_owned(), fixed: word.fixed });
        }
    }
    None
}

/// Variables whose value bash runs or sources later: setting one hides a command.
pub(super) fn is_hook_variable(name: &str) -> bool {
    matches!(name, "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "PROMPT_COMMAND" | "BASH_ENV" | "ENV")
        || name.starts_with("BASH_FUNC_")
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
            // `coproc NAME { …; }`: the name is no command.
            let rest = if first.text == "coproc" && rest.len() > 1 { &rest[1..] } else { rest };
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
                let at = skip_options(rest, "nd", &["--interval"]);
                match joined(&rest[at..]) {
                    Some(text) => self.program(&text, depth + 1),
                    None => {
                        self.unknown("watch runs text that is only known when the command runs")
                    }
                }
            }
            "trap" => {
                let at = skip_options(rest, "", &[]);
                let listing = rest.iter().any(|w| matches!(w.text.as_str(), "-p" | "-l" | "-P"));
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
            "mapfile" | "readarray" => {
                if let Some(callback) = option_value(rest, 'C', "--callback")
                    .cloned()
                    .or_else(|| attached_value(rest, 'C', "--callback"))
                {
                    let call =
                        WordText { text: format!("{} …", callback.text), fixed: callback.fixed };
                    self.text_program(&call, "mapfile -C", depth);
                }
            }
            "script" | "su" | "runuser" => {
                let command = option_value(rest, 'c', "--command")
                    .cloned()
                    .or_else(|| attached_value(rest, 'c', "--command"));
                match command {
                    Some(c) => self.text_program(&c, base, depth),
                    None if base != "script" => {
                        self.unknown(format!("{base} without -c runs a shell reading its input"));
                    }
                    None => {}
                }
            }
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
        let Some(spec) = wrapper(base) else { return };
        if base == "env"
            && let Some(split) = option_value(rest, 'S', "--split-string")
                .cloned()
                .or_else(|| attached_value(rest, 'S', "--split-string"))
        {
            // env -S splits its argument, `\_` being a space.
            let text = split.text.replace("\\_", " ");
            self.text_program(&WordText { text, fixed: split.fixed }, "env -S", depth);
        }
        // `flock FILE -c CMD`: the option may follow the file.
        if base == "flock"
            && let Some(at) = rest.iter().position(|w| w.text == "-c" || w.text == "--command")
        {
            if let Some(c) = rest.get(at + 1) {
                self.text_program(c, "flock -c", depth);
            }
            return;
        }
        let mut i = skip_options(rest, spec.short, spec.long);
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
                i += 1;
            }
        }
        if matches!(base, "taskset" | "chrt") && rest.iter().any(|w| w.text == "-p") {
            return; // an existing process, no command
        }
        i += spec.operands;
        // flock's options may also follow its file: `flock FILE -c CMD` is handled above.
        // Nothing after the options: no command (xargs alone runs echo).
        let Some(inner) = rest.get(i..).filter(|r| !r.is_empty()) else { return };
        if base == "xargs" {
            // xargs adds the words it reads to the command: `xargs rm` is `rm …`.
            let mut with_input: Vec<WordText> =
                inner.iter().map(|w| WordText { text: w.text.clone(), fixed: w.fixed }).collect();
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
            i += 1;
            for c in cluster.chars() {
                match c {
                    'c' => from_c = true,
                    's' => from_stdin = true,
                    // `-o errexit`, `-O extglob`: each takes the next word.
                    'o' | 'O' => i += 1,
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
        let script = rest.get(i).map(|w| w.text.as_str());
        let reads_input = from_stdin
            || matches!(script, None | Some("/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"));
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
