//! Reading a bash command the way bash will, for the permission rules: every simple
//! command it runs — inside `$(…)`, backticks, subshells, pipelines, functions, loops,
//! `sh -c '…'` strings, heredoc-fed shells and `eval` of literal text — with its command
//! word normalised (quotes and `\` removed, path stripped, assignments skipped) and
//! wrappers (`env`, `sudo`, `xargs`, `timeout`, …) seen through.
//!
//! The parser is tree-sitter-bash: it parses in linear time without recursing on the
//! stack, so a hostile command cannot stall or crash the check. What cannot be known
//! before the command runs (a variable or substitution as the command word, `eval` of a
//! variable, `source`, a shell reading a pipe, text the parser cannot read) is reported as
//! [`Scan::unknown`]; the policy refuses such commands when deny rules for bash exist.

use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser};

/// How deep `sh -c`, `eval` and wrappers may nest before rab stops reading.
const MAX_DEPTH: usize = 12;

/// Commands longer than this are not parsed (a deny rule then refuses them).
const MAX_LEN: usize = 64 * 1024;

/// Bash's reserved words.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "function", "in", "{", "}", "!", "[[", "]]", "time", "coproc",
];

/// How long one check may spend parsing, all nested commands together.
const PARSE_BUDGET: Duration = Duration::from_millis(250);

/// Every simple command of a command line.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The simple commands, in the order they appear.
    pub commands: Vec<Simple>,
    /// Why some command cannot be known before it runs, if one cannot.
    pub unknown: Option<String>,
    /// A compound command (`{ …; } > f`, a loop, a function) writes its output to a file.
    pub compound_writes: bool,
}

/// One simple command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Simple {
    /// The words as written, unquoted, joined by single spaces.
    pub written: String,
    /// Further forms deny and ask rules are tested against: the command word without
    /// its directory, and each command a wrapper runs (`env X=1 rm f` also gives
    /// `rm f`).
    pub forms: Vec<String>,
    /// Output redirections to files (`> out.txt`), as written after the words.
    pub writes: Vec<String>,
}

impl Simple {
    /// Every form, the written one first.
    pub fn all_forms(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.written.as_str()).chain(self.forms.iter().map(String::as_str))
    }
}

/// Reads `cmd`. Never fails: what cannot be read is [`Scan::unknown`].
pub(crate) fn scan(cmd: &str) -> Scan {
    let mut out = Scan::default();
    if cmd.len() > MAX_LEN {
        out.unknown = Some(format!("the command is longer than {MAX_LEN} bytes"));
        return out;
    }
    // A parser per thread, kept between checks.
    let cached = PARSER.with(|p| p.borrow_mut().take());
    let parser = match cached {
        Some(parser) => parser,
        None => {
            let mut parser = Parser::new();
            if let Err(e) = parser.set_language(&tree_sitter_bash::LANGUAGE.into()) {
                out.unknown = Some(format!("rab's shell parser is unusable ({e})"));
                return out;
            }
            parser
        }
    };
    let deadline = Instant::now() + PARSE_BUDGET;
    let mut scanner = Scanner { out: &mut out, parser, deadline };
    scanner.program(cmd, 0);
    let parser = scanner.parser;
    PARSER.with(|p| *p.borrow_mut() = Some(parser));
    out
}

#[path = "shell_words.rs"]
mod words;
use words::{WordText, text, word_text};

thread_local! {
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

struct Scanner<'a> {
    out: &'a mut Scan,
    parser: Parser,
    deadline: Instant,
}

impl Scanner<'_> {
    fn unknown(&mut self, why: impl Into<String>) {
        if self.out.unknown.is_none() {
            self.out.unknown = Some(why.into());
        }
    }

    /// Parses and walks a whole program (a command line, an `sh -c` string, a heredoc).
    fn program(&mut self, source: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.unknown(format!("commands nest more than {MAX_DEPTH} levels deep"));
            return;
        }
        let src = source.as_bytes();
        let deadline = self.deadline;
        let mut late = |_: &ParseState| Instant::now() > deadline;
        let options = ParseOptions::new().progress_callback(&mut late);
        let mut read = |i: usize, _| src.get(i..).unwrap_or_default();
        let Some(tree) = self.parser.parse_with_options(&mut read, None, Some(options)) else {
            self.parser.reset();
            self.unknown(format!("parsing it took longer than {PARSE_BUDGET:?}"));
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            let at = first_error(root).map_or(0, |n| n.start_byte());
            let near: String = source.get(at..).unwrap_or_default().chars().take(20).collect();
            self.unknown(format!("rab's shell parser could not read it (near \"{near}\")"));
        }
        // Walk with an explicit stack: nesting depth costs heap, not the call stack.
        // Each node comes with its parent and grandparent (tree-sitter's own parent
        // lookup walks down from the root, which is quadratic in the depth).
        let mut stack = vec![Visit { node: root, parent: None, grandparent: None }];
        // Commands (by node id) that take the redirections of a statement around a list.
        let mut adopted: Vec<(usize, Node<'_>)> = Vec::new();
        while let Some(visit) = stack.pop() {
            let node = visit.node;
            match node.kind() {
                "command" => self.command(&visit, &adopted, src, depth),
                "declaration_command" | "unset_command" => {
                    let written = text(node, src).split_whitespace().collect::<Vec<_>>();
                    self.out
                        .commands
                        .push(Simple { written: written.join(" "), ..Simple::default() });
                }
                "redirected_statement" | "function_definition" => {
                    let mut body = node.child_by_field_name("body");
                    // The parser hangs `a && b <<EOF` on the list; bash gives the
                    // redirections to the last command, `b`.
                    if node.kind() == "redirected_statement" {
                        let last = body.map(last_command);
                        if last.is_some_and(|l| l.kind() == "command") && last != body {
                            adopted.extend(last.map(|l| (l.id(), node)));
                            body = last;
                        }
                    }
                    if body.is_none_or(|b| b.kind() != "command") {
                        let mut writes = Vec::new();
                        let mut input = Input::default();
                        self.redirects_of(node, src, &mut writes, &mut input);
                        self.out.compound_writes |= !writes.is_empty();
                    }
                }
                _ => {}
            }
            let mut cursor = node.walk();
            let first = stack.len();
            stack.extend(node.named_children(&mut cursor).map(|child| Visit {
                node: child,
                parent: Some(node),
                grandparent: visit.parent,
            }));
            stack[first..].reverse();
        }
    }

    /// The redirections written on `node` itself (a command or a redirected statement).
    fn redirects_of(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        writes: &mut Vec<String>,
        input: &mut Input,
    ) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if matches!(child.kind(), "file_redirect" | "heredoc_redirect" | "herestring_redirect")
            {
                self.redirect(child, src, writes, input);
            }
        }
    }

    /// Reads a redirection: the file it writes (into `writes`) and what it feeds the
    /// command's input (into `input`, for heredoc-fed shells).
    fn redirect(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        writes: &mut Vec<String>,
        input: &mut Input,
    ) {
        match node.kind() {
            "file_redirect" => {
                let mut cursor = node.walk();
                let op = node
                    .children(&mut cursor)
                    .find(|c| !c.is_named())
                    .map(|c| c.kind())
                    .unwrap_or_default();
                let Some(dest) = node.child_by_field_name("destination") else { return };
                let target = word_text(dest, src);
                let fd = node
                    .child_by_field_name("descriptor")
                    .map(|d| text(d, src))
                    .unwrap_or_default();
                let to_fd =
                    target.text == "-" || target.text.trim_end_matches('-').parse::<u32>().is_ok();
                let writing = match op {
                    ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => true,
                    ">&" => !to_fd,
                    _ => false,
                };
                if writing && !harmless_target(&target.text) {
                    writes.push(format!("{fd}{op} {}", target.text));
                }
            }
            "herestring_redirect" => {
                input.fed = true;
                let mut cursor = node.walk();
                let body = node.named_children(&mut cursor).find(|c| c.kind() != "file_descriptor");
                if let Some(body) = body {
                    let t = word_text(body, src);
                    input.stdin = t.fixed.then_some(t.text);
                }
            }
            "heredoc_redirect" => {
                input.fed = true;
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let start = children.iter().find(|c| c.kind() == "heredoc_start");
                let end = children.iter().find(|c| c.kind() == "heredoc_end");
                let quoted = start.is_some_and(|s| text(*s, src).contains(['\'', '"', '\\']));
                // The body is read from the source, from the line after the operator to
                // the delimiter: the parser's body node misses some (a body line that
                // starts with `\`).
                let body = match (start, end) {
                    (Some(s), Some(e)) => src
                        .get(s.end_byte()..)
                        .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
                        .and_then(|nl| src.get(s.end_byte() + nl + 1..e.start_byte()))
                        .and_then(|b| std::str::from_utf8(b).ok()),
                    _ => None,
                };
                let Some(body) = body else {
                    input.stdin = None;
                    self.unknown("a heredoc rab cannot read");
                    return;
                };
                let substitutes = !quoted && (body.contains("$(") || body.contains('`'));
                let seen = children.iter().filter(|c| c.kind() == "heredoc_body").any(|b| {
                    let mut cursor = b.walk();
                    b.named_children(&mut cursor).any(|c| c.kind() == "command_substitution")
                });
                if substitutes && !seen {
                    self.unknown("a heredoc whose substitutions rab cannot read");
                }
                let expands = !quoted && (body.contains('$') || body.contains('`'));
                input.stdin = (!expands).then(|| body.to_owned());
                for child in children {
                    if child.kind() == "file_redirect" {
                        self.redirect(child, src, writes, input);
                    }
                }
            }
            _ => {}
        }
    }

    fn command(
        &mut self,
        visit: &Visit<'_>,
        adopted: &[(usize, Node<'_>)],
        src: &[u8],
        depth: usize,
    ) {
        let node = visit.node;
        let mut words: Vec<WordText> = Vec::new();
        let mut writes = Vec::new();
        let mut input = Input::default();
        let mut cursor = node.walk();
        let mut last_end = None;
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                match cursor.field_name() {
                    Some("name" | "argument") => {
                        let word = word_text(child, src);
                        // `r\<newline>m` is one word to bash; the parser splits it.
                        let continued = last_end.is_some_and(|end: usize| {
                            src.get(end..child.start_byte()).is_some_and(|gap| {
                                !gap.is_empty() && gap.chunks(2).all(|c| c == b"\\\n")
                            })
                        });
                        match words.last_mut() {
                            Some(last) if continued => {
                                last.text.push_str(&word.text);
                                last.fixed &= word.fixed;
                            }
                            _ => words.push(word),
                        }
                        last_end = Some(child.end_byte());
                    }
                    Some("redirect") => self.redirect(child, src, &mut writes, &mut input),
                    _ => {}
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if let Some(&(_, statement)) = adopted.iter().find(|(id, _)| *id == node.id()) {
            self.redirects_of(statement, src, &mut writes, &mut input);
        }
        // `cmd > f` and `cmd <<EOF` put the redirections on a statement around it.
        let mut outer = (node, visit.parent);
        if let Some(parent) = visit.parent
            && parent.kind() == "redirected_statement"
            && parent.child_by_field_name("body") == Some(node)
        {
            self.redirects_of(parent, src, &mut writes, &mut input);
            outer = (parent, visit.grandparent);
        }
        if let (outer, Some(pipeline)) = outer
            && pipeline.kind() == "pipeline"
        {
            let mut cursor = pipeline.walk();
            let first = pipeline.named_children(&mut cursor).find(|c| c.kind() != "comment");
            input.piped = first != Some(outer);
        }
        if words.is_empty() {
            return;
        }
        let mut simple = Simple { written: join(&words), forms: Vec::new(), writes };
        self.resolve(&words, &mut simple, &input, depth);
        let written = simple.written.clone();
        simple.forms.retain(|f| *f != written);
        simple.forms.dedup();
        self.out.commands.push(simple);
    }

    /// Adds the forms of the command `words` runs, seeing through wrappers, and walks
    /// what shells and `eval` run.
    fn resolve(&mut self, words: &[WordText], simple: &mut Simple, input: &Input, depth: usize) {
        let Some(first) = words.first() else { return };
        // A reserved word as a command word: the parser read the line differently from
        // bash (`! if …`, `! { …; }`). What follows it is what bash runs.
        if RESERVED.contains(&first.text.as_str()) {
            if words.len() > 1 {
                self.resolve(&words[1..], simple, input, depth + 1);
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
        if depth > MAX_DEPTH {
            self.unknown(format!("wrappers nest more than {MAX_DEPTH} levels deep"));
            return;
        }
        match base {
            "eval" => {
                if rest.iter().all(|w| w.fixed) {
                    let text = rest.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
                    self.program(&text, depth + 1);
                } else {
                    self.unknown("eval runs text that is only known when the command runs");
                }
            }
            "source" | "." => {
                self.unknown(format!("{base} runs the commands of a file rab cannot see"));
            }

            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox" => {
                self.shell(base, rest, input, depth);
            }
            "find" => {
                let mut i = 0;
                while i < rest.len() {
                    if matches!(rest[i].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                        let start = i + 1;
                        let end = rest[start..]
                            .iter()
                            .position(|w| w.text == ";" || w.text == "+")
                            .map_or(rest.len(), |p| start + p);
                        let inner = &rest[start..end];
                        if !inner.is_empty() {
                            self.resolve(inner, simple, &Input::default(), depth + 1);
                        }
                        i = end;
                    }
                    i += 1;
                }
            }
            "watch" => {
                let skip = skip_options(rest, &["-n", "--interval"]);
                let inner = &rest[skip..];
                if inner.iter().all(|w| w.fixed) {
                    let text = inner.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
                    self.program(&text, depth + 1);
                } else {
                    self.unknown("watch runs text that is only known when the command runs");
                }
            }
            _ => {
                if let Some(start) = wrapped_command(base, rest, self, depth) {
                    let inner = &rest[start..];
                    if base == "xargs" {
                        // xargs adds the words it reads to the command: `xargs rm` is
                        // `rm …`.
                        let mut with_input: Vec<WordText> = inner
                            .iter()
                            .map(|w| WordText { text: w.text.clone(), fixed: w.fixed })
                            .collect();
                        if with_input.is_empty() {
                            with_input.push(WordText::literal("echo"));
                        }
                        with_input.push(WordText { text: "…".into(), fixed: false });
                        self.resolve(&with_input, simple, &Input::default(), depth + 1);
                    } else if !inner.is_empty() {
                        self.resolve(inner, simple, &Input::default(), depth + 1);
                    }
                }
            }
        }
    }

    /// `sh -c '…'`, `sh <<EOF`, `echo … | sh`, `sh script`.
    fn shell(&mut self, base: &str, rest: &[WordText], input: &Input, depth: usize) {
        let rest = if base == "busybox" {
            match rest.first().map(|w| basename(&w.text)) {
                Some("sh" | "ash" | "bash") => &rest[1..],
                _ => return,
            }
        } else {
            rest
        };
        let mut i = 0;
        let mut script_from_c = false;
        while i < rest.len() {
            let t = rest[i].text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if t.starts_with("--") {
                i += 1;
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                if t[1..].contains('c') {
                    script_from_c = true;
                }
                // `-o opt` / `-O opt` take a value.
                let takes = t.ends_with('o') || t.ends_with('O');
                i += if takes { 2 } else { 1 };
                continue;
            }
            break;
        }
        if script_from_c {
            match rest.get(i) {
                Some(w) if w.fixed => self.program(&w.text, depth + 1),
                Some(w) => self.unknown(format!(
                    "{base} -c runs {} which is only known when the command runs",
                    w.text
                )),
                None => {}
            }
            return;
        }
        if i < rest.len() {
            // A script file: like ./script, its commands are the sandbox's business.
            return;
        }
        match &input.stdin {
            Some(text) => self.program(text, depth + 1),
            None if input.fed => {
                self.unknown(format!("{base} reads commands from text only known when it runs"));
            }
            None if input.piped => {
                self.unknown(format!("{base} reads commands from a pipe"));
            }
            None => self.unknown(format!("{base} reads commands from its input")),
        }
    }
}

/// A node to walk, with where it sits.
struct Visit<'t> {
    node: Node<'t>,
    parent: Option<Node<'t>>,
    grandparent: Option<Node<'t>>,
}

/// What feeds a command's standard input.
#[derive(Default)]
struct Input {
    /// The text of a heredoc or here-string.
    stdin: Option<String>,
    /// It is fed by a pipe.
    piped: bool,
    /// A heredoc or here-string feeds it (its text is in `stdin` when it can be known).
    fed: bool,
}

/// Where the wrapped command of a wrapper starts (`env X=1 rm` → the index of `rm` in
/// `rest`), or `None` when `base` is no wrapper.
fn wrapped_command(
    base: &str,
    rest: &[WordText],
    sc: &mut Scanner<'_>,
    depth: usize,
) -> Option<usize> {
    let valued: &[&str] = match base {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "command" | "builtin" | "nohup" | "setsid" => &[],
        "exec" => &["-a"],
        "nice" => &["-n", "--adjustment"],
        "time" => &["-f", "--format", "-o", "--output"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "sudo" | "doas" => &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-C",
            "--close-from",
            "-D",
            "--chdir",
            "-r",
            "--role",
            "-t",
            "--type",
            "-U",
            "--other-user",
            "-T",
            "--command-timeout",
        ],
        "xargs" => &[
            "-I",
            "-n",
            "--max-args",
            "-L",
            "--max-lines",
            "-P",
            "--max-procs",
            "-d",
            "--delimiter",
            "-E",
            "-s",
            "--max-chars",
            "-a",
            "--arg-file",
            "--process-slot-var",
        ],
        "stdbuf" => &["-i", "--input", "-o", "--output", "-e", "--error"],
        "ionice" => &["-c", "--class", "-n", "--classdata", "-p", "--pid"],
        _ => return None,
    };
    // `env -S 'rm f'` splits its argument into a command.
    if base == "env"
        && let Some(pos) = rest.iter().position(|w| w.text == "-S" || w.text == "--split-string")
        && let Some(s) = rest.get(pos + 1)
    {
        if s.fixed {
            sc.program(&s.text, depth + 1);
        } else {
            sc.unknown("env -S runs text that is only known when the command runs");
        }
    }
    let mut i = skip_options(rest, valued);
    if base == "env" {
        while rest.get(i).is_some_and(|w| is_assignment(&w.text)) {
            i += 1;
        }
    }
    if base == "timeout" && i < rest.len() {
        i += 1; // the duration
    }
    Some(i)
}

/// Skips leading options (`-x`, `--long`, `--long=v`, and the value of those in
/// `valued` written apart); returns the index of the first operand.
fn skip_options(rest: &[WordText], valued: &[&str]) -> usize {
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        // `nice -5`: a number is the option itself.
        i += if valued.contains(&t) { 2 } else { 1 };
    }
    i
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The command word without its directory.
fn basename(word: &str) -> &str {
    word.rsplit('/').find(|s| !s.is_empty()).unwrap_or(word)
}

fn join(words: &[WordText]) -> String {
    words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// Output that goes nowhere a file lives.
fn harmless_target(t: &str) -> bool {
    matches!(t, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty")
        || t.strip_prefix("/dev/fd/").is_some_and(|n| n.parse::<u32>().is_ok())
}

/// The command a list or pipeline ends with (or the node itself).
fn last_command(node: Node<'_>) -> Node<'_> {
    let mut node = node;
    while matches!(node.kind(), "list" | "pipeline" | "negated_command") {
        let mut cursor = node.walk();
        let last = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").last();
        match last {
            Some(last) => node = last,
            None => break,
        }
    }
    node
}

/// The first node of a tree that did not parse.
fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        if node.has_error() {
            let mut cursor = node.walk();
            let first = stack.len();
            stack.extend(node.children(&mut cursor));
            stack[first..].reverse();
        }
    }
    None
}

#[cfg(test)]
#[path = "shell_scan_tests.rs"]
mod tests;
