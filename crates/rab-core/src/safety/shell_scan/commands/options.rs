//! Reading a wrapper's options as getopt does: short clusters whose letter takes a value
//! (`-vs KILL`, `-n5`), long options and their unambiguous abbreviations (`--sig KILL`,
//! `--sp='…'`), `--`. What is read says where the operands start and what value each
//! option got.

use super::WordText;

/// A program's options: short letters that take a value, and long names with the short
/// letter they equal (`'\0'` when none).
pub(super) struct Spec {
    pub short: &'static str,
    pub long: &'static [(&'static str, char)],
}

/// The options read.
#[derive(Default)]
pub(super) struct Parsed {
    /// Index of the first operand.
    pub end: usize,
    /// Each value-taking option met, by its short letter (or `'\0'`), with its value.
    pub values: Vec<(char, WordText)>,
    /// Every letter met, value-taking or not (`-p` of taskset).
    pub flags: Vec<char>,
    /// A skipped word is only known when it runs: a brace or an expansion there could
    /// make more or fewer words, moving the command.
    pub unsure: bool,
}

impl Parsed {
    /// The value of the option `c`, if given.
    pub fn value(&self, c: char) -> Option<&WordText> {
        self.values.iter().rev().find(|(k, _)| *k == c).map(|(_, v)| v)
    }
}

/// The long option `name` (without `--`) stands for: an exact name or the one name it
/// abbreviates.
fn long_option<'s>(spec: &'s Spec, name: &str) -> Option<&'s (&'static str, char)> {
    if let Some(exact) = spec.long.iter().find(|(l, _)| l.strip_prefix("--") == Some(name)) {
        return Some(exact);
    }
    let mut matches =
        spec.long.iter().filter(|(l, _)| l.strip_prefix("--").is_some_and(|l| l.starts_with(name)));
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
}

/// Reads the options at the start of `rest`.
pub(super) fn parse(rest: &[WordText], spec: &Spec) -> Parsed {
    let mut out = Parsed::default();
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        let t = word.text.as_str();
        if t == "--" {
            out.unsure |= !word.fixed;
            i += 1;
            break;
        }
        if let Some(body) = t.strip_prefix("--") {
            out.unsure |= !word.fixed;
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            i += 1;
            if let Some(&(_, short)) = long_option(spec, name) {
                let value = match attached {
                    Some(v) => WordText { text: v.to_owned(), fixed: word.fixed },
                    None => {
                        let Some(v) = rest.get(i) else { break };
                        i += 1;
                        out.unsure |= !v.fixed;
                        v.clone()
                    }
                };
                out.values.push((short, value));
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
            // An operand; an expansion here may be options all the same.
            out.unsure |= !word.fixed && t.starts_with(['$', '{']);
            break;
        };
        out.unsure |= !word.fixed;
        i += 1;
        for (k, c) in cluster.char_indices() {
            out.flags.push(c);
            if spec.short.contains(c) {
                let after = &cluster[k + c.len_utf8()..];
                let value = if after.is_empty() {
                    let Some(v) = rest.get(i) else { break };
                    i += 1;
                    out.unsure |= !v.fixed;
                    v.clone()
                } else {
                    WordText { text: after.to_owned(), fixed: word.fixed }
                };
                out.values.push((c, value));
                break;
            }
        }
    }
    out.end = i;
    out
}

/// Finds a value-taking option anywhere in `rest` (programs whose getopt permutes, like
/// `script FILE -c CMD` or `su USER -c CMD`).
pub(super) fn anywhere(rest: &[WordText], spec: &Spec, c: char) -> Option<WordText> {
    (0..rest.len()).find_map(|i| {
        let word = &rest[i];
        if !word.text.starts_with('-') {
            return None;
        }
        parse(&rest[i..], spec).value(c).cloned()
    })
}
