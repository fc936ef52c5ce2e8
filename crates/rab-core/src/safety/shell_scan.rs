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
    "select", "function", "in", "{", "}", "!", "[[", "]]", "coproc",
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

mod commands;
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
        // Bash joins backslash-newline before it reads `$(`, `<(`, `${`: a substitution
        // split over two lines is one the parser may not see.
        if source.contains("\\\n") {
            let joined = source.replace("\\\n", "");
            let split = ["$(", "<(", ">(", "${", "$["]
                .iter()
                .find(|op| joined.matches(*op).count() > source.matches(*op).count());
            if let Some(op) = split {
                self.unknown(format!("a `{op}` split over two lines"));
            }
        }
        // Variables whose values bash runs later can be set in more ways than an
        // assignment (`printf -v`, `read`, `declare -n`, `${PS4=…}`): any mention is
        // enough.
        if let Some(name) = commands::hook_variable_named(source) {
            self.unknown(format!("it names {name}, whose value bash runs later"));
        }
        let root = tree.root_node();
        if root.has_error() {
            let at = first_error(root).map_or(0, |n| n.start_byte());
            let near: String = source.get(at..).unwrap_or_default().chars().take(20).collect();
            self.unknown(format!("rab's shell parser could not read it (near \"{near}\")"));
        }
        // Walk with an explicit stack: nesting depth costs heap, not the call stack.
        // Each node comes with its parent and grandparent (tree-sitter's own parent
        // lookup walks down from the root, which is quadratic in the depth).
        let mut stack = vec![Visit { node: root, parent: None, grandparent: None, in_expr: false }];
        // Commands (by node id) that take the redirections of a statement around a list.
        let mut adopted: Vec<(usize, Node<'_>)> = Vec::new();
        while let Some(visit) = stack.pop() {
            let node = visit.node;
            self.check_node(&visit, src, depth);
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
            let in_expr = visit.in_expr || is_expression(node);
            stack.extend(node.named_children(&mut cursor).map(|child| Visit {
                node: child,
                parent: Some(node),
                grandparent: visit.parent,
                in_expr,
            }));
            stack[first..].reverse();
        }
    }

    /// What the parser may have read differently from bash, or what bash runs from
    /// text later: each makes the command unknown.
    fn check_node(&mut self, visit: &Visit<'_>, src: &[u8], depth: usize) {
        let node = visit.node;
        let raw = text(node, src);
        let kind = node.kind();
        match kind {
            // `$'\\'` ends after the escaped backslash; a parser that reads on hides
            // the rest of the line in the string.
            "ansi_c_string" if !words::ansi_c_is_sound(raw) => {
                self.unknown("a $'…' string rab's parser reads differently from bash");
            }
            // `${x@P}` expands the value as a prompt, running its substitutions.
            "expansion" if raw.ends_with("@P}") => {
                self.unknown(format!("{raw} runs the substitutions in a variable's value"));
            }
            "variable_assignment" => {
                let name = node.child_by_field_name("name").map(|n| text(n, src)).unwrap_or("");
                let name = name.split('[').next().unwrap_or(name);
                if commands::is_hook_variable(name) {
                    self.unknown(format!("setting {name}, whose value bash runs later"));
                }
            }
            // Quotes do not stop bash from running a substitution in an arithmetic
            // expression, an array subscript or a `${…}` inside double quotes.
            "raw_string" | "ansi_c_string"
                if (visit.in_expr || visit.parent.is_some_and(is_arithmetic_command))
                    && words::has_live_substitution(raw, false) =>
            {
                self.unknown(format!("a quoted substitution bash runs in an expression ({raw})"));
            }
            // Bash removes `\\`, `\$` and `` \` `` inside backticks before it parses
            // them, which can make a command (`r\\m`) or a nested substitution: read
            // the text as bash does too.
            "command_substitution" if raw.starts_with('`') && raw.contains('\\') => {
                let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
                self.program(&words::unescape_backquoted(inner), depth + 1);
            }
            _ => {}
        }
        // A word whose text names an array element with a substitution in its subscript
        // runs it when bash evaluates the name (`let 'a[$(…)]'`, `x='a[ $(…)]'; $((x))`,
        // `read "a[\$(…)]"`), however the word is quoted or pieced together.
        if matches!(kind, "word" | "string" | "raw_string" | "ansi_c_string" | "concatenation")
            && visit.parent.is_none_or(|p| !matches!(p.kind(), "concatenation" | "string"))
            && (raw.contains('[') || raw.contains("$'"))
        {
            let plain = words::plain_text(node, src);
            if plain.contains('[') && words::has_live_substitution(&plain, false) {
                self.unknown(format!("an array subscript holding a substitution ({raw})"));
            }
        }
        // A substitution the parser left inside a leaf (a pattern, a regex, a default
        // value) is run by bash all the same.
        if node.named_child_count() == 0 {
            let hidden = match kind {
                "raw_string"
                | "ansi_c_string"
                | "comment"
                | "heredoc_start"
                | "heredoc_end"
                | "heredoc_content"
                | "heredoc_body"
                | "command_substitution" => false,
                "string_content" => words::has_live_substitution(raw, false),
                _ => words::has_live_substitution(raw, true),
            };
            if hidden {
                self.unknown(format!("a substitution rab's parser did not read ({raw})"));
            }
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
                let mut cursor = node.walk();
                let body = node.named_children(&mut cursor).find(|c| c.kind() != "file_descriptor");
                if let Some(body) = body {
                    let t = word_text(body, src);
                    if !t.fixed {
                        input.unknown = true;
                    } else if on_stdin(node, src) {
                        input.stdin.push(t.text);
                    } else {
                        input.other.push(t.text);
                    }
                }
            }
            "heredoc_redirect" => self.heredoc(node, src, writes, input),
            _ => {}
        }
    }

    /// A heredoc: checked against where bash ends it, its body kept for a shell it
    /// feeds (unescaped as bash does for an unquoted delimiter).
    fn heredoc(&mut self, node: Node<'_>, src: &[u8], writes: &mut Vec<String>, input: &mut Input) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let start = children.iter().find(|c| c.kind() == "heredoc_start");
        let end = children.iter().find(|c| c.kind() == "heredoc_end");
        let strip_tabs = {
            let mut cursor = node.walk();
            node.children(&mut cursor).any(|c| c.kind() == "<<-")
        };
        let (delimiter, quoted) =
            words::heredoc_delimiter(start.map(|s| text(*s, src)).unwrap_or_default());
        // The body is read from the source, from the line after the operator to the
        // delimiter; the parser's own body node misses some (a line starting with `\`).
        let body = match (start, end) {
            (Some(s), Some(e)) => src
                .get(s.end_byte()..)
                .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
                .and_then(|nl| src.get(s.end_byte() + nl + 1..e.start_byte()))
                .and_then(|b| std::str::from_utf8(b).ok()),
            _ => None,
        };
        let end_line = end.and_then(|e| {
            let rest = src.get(e.start_byte()..)?;
            let len = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            std::str::from_utf8(&rest[..len]).ok()
        });
        let Some((body, end_line)) = body.zip(end_line) else {
            input.unknown = true;
            self.unknown("a heredoc rab cannot read");
            return;
        };
        // Bash ends the heredoc at the first line that is the delimiter (quotes removed,
        // backslash-newlines joined when unquoted): the parser must agree.
        if !words::heredoc_agrees(body, end_line, &delimiter, quoted, strip_tabs) {
            input.unknown = true;
            self.unknown(format!(
                "a heredoc whose end (\"{delimiter}\") rab's parser places differently from bash"
            ));
            return;
        }
        if !quoted && body.contains("\\\n") && words::has_live_substitution(body, true) {
            input.unknown = true;
            self.unknown("a heredoc with substitutions and joined lines");
        } else if !quoted && words::has_live_substitution(body, true) {
            // Substitutions in an unquoted heredoc run in the shell that reads the line;
            // the parser does not always read them (backticks): every one must be
            // inside a substitution it read.
            let mut read: Vec<std::ops::Range<usize>> = Vec::new();
            for b in children.iter().filter(|c| c.kind() == "heredoc_body") {
                let mut cursor = b.walk();
                read.extend(
                    b.named_children(&mut cursor)
                        .filter(|c| c.kind() == "command_substitution")
                        .map(|c| c.byte_range()),
                );
            }
            let base = start.map_or(0, |s| s.end_byte());
            let offset = src
                .get(base..)
                .and_then(|r| r.iter().position(|b| *b == b'\n'))
                .map_or(base, |nl| base + nl + 1);
            let unread = words::substitution_starts(body)
                .into_iter()
                .any(|at| !read.iter().any(|r| r.contains(&(offset + at))));
            if unread {
                self.unknown("a heredoc with substitutions rab's parser does not read");
            }
        }
        let expands = !quoted && (body.contains('$') || body.contains('`'));
        let text = if quoted { body.to_owned() } else { words::heredoc_unescape(body) };
        if expands {
            input.unknown = true;
        } else if on_stdin(node, src) {
            input.stdin.push(text);
        } else {
            input.other.push(text);
        }
        for child in children {
            if matches!(child.kind(), "file_redirect" | "herestring_redirect") {
                self.redirect(child, src, writes, input);
            }
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
        // Two pieces of a command with nothing between them are one word to bash
        // (`x='a['\\$'…'`): the parser read it differently.
        let mut piece_end: Option<usize> = None;
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() && !child.kind().ends_with("redirect") {
                    if piece_end == Some(child.start_byte()) {
                        self.unknown("words rab's parser splits where bash does not");
                    }
                    piece_end = Some(child.end_byte());
                } else {
                    piece_end = None;
                }
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
}

/// A node to walk, with where it sits.
struct Visit<'t> {
    node: Node<'t>,
    parent: Option<Node<'t>>,
    grandparent: Option<Node<'t>>,
    /// Inside an arithmetic expression, a subscript or a `${…}`.
    in_expr: bool,
}

/// Whether bash evaluates what is inside `node` as an expression (where quotes do not
/// keep a substitution from running).
fn is_expression(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "expansion"
            | "arithmetic_expansion"
            | "subscript"
            | "binary_expression"
            | "unary_expression"
            | "ternary_expression"
            | "postfix_expression"
            | "parenthesized_expression"
    ) || is_arithmetic_command(node)
}

/// `(( … ))` (the parser's compound statement, which `{ …; }` also is).
fn is_arithmetic_command(node: Node<'_>) -> bool {
    node.kind() == "compound_statement" && node.child(0).is_some_and(|c| c.kind() == "((")
}

/// What feeds a command's standard input.
#[derive(Clone, Default)]
pub(crate) struct Input {
    /// The texts of its heredocs and here-strings on standard input.
    stdin: Vec<String>,
    /// The texts of its heredocs and here-strings on other descriptors (`3<<EOF`).
    other: Vec<String>,
    /// A heredoc or here-string whose text is only known when it runs.
    unknown: bool,
    /// It is fed by a pipe.
    piped: bool,
}

/// Whether a heredoc or here-string feeds standard input (no descriptor, or 0).
fn on_stdin(node: Node<'_>, src: &[u8]) -> bool {
    node.child_by_field_name("descriptor").is_none_or(|d| text(d, src) == "0")
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
mod tests;
