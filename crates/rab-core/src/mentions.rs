//! `@file` in a typed prompt: the file's content (numbered lines, as `read` gives them;
//! an image as an image), `@file:10-40` a range of lines, `@dir/` a listing, attached
//! to the prompt, as Claude Code does. They go through the same rules as the model's
//! `read` and `ls`: the sandbox's read access, read deny rules, the secret firewall.
//!
//! Only a word that starts with `@` and names something that exists is attached; an
//! `@name` that looks like a path but is missing is reported and sent as typed, and an
//! `@handle` that does not look like a path (a chat mention) is left alone.

use std::path::{Path, PathBuf};

use rab_agent::{AgentTool, ToolContext};
use rab_ai::Content;
use serde_json::json;

use crate::setup::Setup;

/// At most this many mentions of one prompt are attached.
const MAX_MENTIONS: usize = 20;

/// First line and, if given, last line (1-based, inclusive).
pub type LineRange = (usize, Option<usize>);

/// A mention as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The path as written (`~/` kept).
    pub path: String,
    /// The lines asked for, if not all.
    pub lines: Option<LineRange>,
}

/// What a prompt's mentions bring.
#[derive(Debug, Default)]
pub struct Attached {
    /// Content to send after the prompt's text.
    pub content: Vec<Content>,
    /// One line per attachment (`src/main.rs (120 lines)`).
    pub attached: Vec<String>,
    /// Mentions that could not be attached, and why.
    pub problems: Vec<String>,
}

/// The `@` mentions of `text`: words that start with `@` (`@"a b.txt"` for a path with
/// spaces), with trailing punctuation dropped and a `:N` or `:N-M` line range split off.
pub fn find(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut at_word_start = true;
    while let Some(c) = rest.chars().next() {
        if c == '@' && at_word_start {
            let after = &rest[1..];
            let (word, used) = if let Some(quoted) = after.strip_prefix('"') {
                match quoted.find('"') {
                    Some(end) => (&quoted[..end], end + 2),
                    None => (after, after.len()),
                }
            } else {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                let word = after[..end].trim_end_matches([',', ';', '!', '?', ')', ']', '\'', '"']);
                // A sentence's full stop, not a file's extension.
                let word = word.strip_suffix('.').filter(|w| !w.ends_with('.')).unwrap_or(word);
                (word, end)
            };
            if !word.is_empty() {
                out.push(split_range(word));
            }
            rest = &after[used.min(after.len())..];
            at_word_start = false;
            continue;
        }
        at_word_start = c.is_whitespace() || c == '(' || c == '[';
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `path:10-40` → (`path`, 10..=40); `path:10` → from 10; anything else is all path.
fn split_range(word: &str) -> Mention {
    if let Some((path, range)) = word.rsplit_once(':')
        && !path.is_empty()
    {
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (range, None),
        };
        if let Ok(first) = a.parse::<usize>() {
            let last = match b {
                None => Some(None),
                Some(b) => b.parse::<usize>().ok().map(Some),
            };
            if let Some(last) = last {
                return Mention { path: path.to_owned(), lines: Some((first.max(1), last)) };
            }
        }
    }
    Mention { path: word.to_owned(), lines: None }
}

/// Whether a missing `@word` was meant as a path (worth a note) rather than a handle.
fn looks_like_path(m: &Mention) -> bool {
    m.lines.is_some() || m.path.contains('/') || m.path.contains('.') || m.path.starts_with('~')
}

fn absolute(path: &str, cwd: &Path, home: Option<&str>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => Path::new(home).join(rest),
        _ => cwd.join(path),
    }
}

/// Reads what `text` mentions, under `setup`'s rules.
pub async fn attach(text: &str, setup: &Setup) -> Attached {
    let mut done = Attached::default();
    let mut seen: Vec<(PathBuf, Option<LineRange>)> = Vec::new();
    for m in find(text) {
        let abs = absolute(&m.path, &setup.cwd, setup.env.get("HOME"));
        if seen.iter().any(|(p, l)| *p == abs && *l == m.lines) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&abs) else {
            if looks_like_path(&m) {
                done.problems
                    .push(format!("@{}: no such file or directory (sent as typed)", m.path));
            }
            continue;
        };
        if seen.len() == MAX_MENTIONS {
            done.problems.push(format!(
                "@{}: not attached; at most {MAX_MENTIONS} files per prompt",
                m.path
            ));
            continue;
        }
        seen.push((abs.clone(), m.lines));
        if setup.gate.read_denied(&abs) {
            done.problems.push(format!("@{}: not attached: a read deny rule covers it", m.path));
            continue;
        }
        let shown = m.path.clone();
        let result = if meta.is_dir() {
            let ls = rab_tools::ls::Ls::new(setup.workspace.clone());
            ls.execute(json!({"path": abs}), ToolContext::detached("mention")).await
        } else {
            let (offset, limit) = match m.lines {
                Some((first, Some(last))) if last >= first => (Some(first), Some(last - first + 1)),
                Some((first, _)) => (Some(first), None),
                None => (None, None),
            };
            let read = rab_tools::read::Read::new(setup.workspace.clone());
            let args = json!({"path": abs, "offset": offset, "limit": limit});
            read.execute(args, ToolContext::detached("mention")).await
        };
        let output = match result {
            Ok(output) => output,
            Err(e) => {
                done.problems.push(format!("@{shown}: not attached: {e}"));
                continue;
            }
        };
        let tag = if meta.is_dir() { "directory" } else { "file" };
        let range = match m.lines {
            Some((a, Some(b))) => format!(" lines=\"{a}-{b}\""),
            Some((a, None)) => format!(" lines=\"{a}-\""),
            None => String::new(),
        };
        let mut images = 0;
        let mut text = String::new();
        for block in output.content {
            match block {
                Content::Text { text: t } => text.push_str(&t),
                image @ Content::Image { .. } => {
                    images += 1;
                    done.content.push(Content::text(format!("<image path=\"{shown}\"/>")));
                    done.content.push(image);
                }
            }
        }
        if !text.is_empty() {
            if let Some(r) = setup.gate.redactor() {
                text = r.redact(&text).0;
            }
            // Numbered lines (`N<tab>text`), not the notes after them; a listing's rows.
            let count = if meta.is_dir() {
                text.lines().filter(|l| !l.trim().is_empty()).count()
            } else {
                text.lines()
                    .filter(|l| l.split('\t').next().is_some_and(|n| n.parse::<usize>().is_ok()))
                    .count()
            };
            done.content
                .push(Content::text(format!("<{tag} path=\"{shown}\"{range}>\n{text}\n</{tag}>")));
            let unit = match (meta.is_dir(), count) {
                (true, 1) => "entry",
                (true, _) => "entries",
                (false, 1) => "line",
                (false, _) => "lines",
            };
            let label = match m.lines {
                Some((a, Some(b))) => format!("{shown}:{a}-{b}"),
                Some((a, None)) => format!("{shown}:{a}-"),
                None => shown.clone(),
            };
            done.attached.push(format!("{label} ({count} {unit})"));
        } else if images > 0 {
            done.attached.push(format!("{shown} (image)"));
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(path: &str, lines: Option<(usize, Option<usize>)>) -> Mention {
        Mention { path: path.to_owned(), lines }
    }

    #[test]
    fn mentions_are_words_that_start_with_an_at() {
        assert_eq!(
            find("explain @src/main.rs and @lib.rs, then @\"my notes.md\"."),
            [m("src/main.rs", None), m("lib.rs", None), m("my notes.md", None)]
        );
        assert_eq!(find("mail me at me@example.com"), []);
        assert_eq!(find("see (@docs/a.md)"), [m("docs/a.md", None)]);
        assert_eq!(find("@src/"), [m("src/", None)]);
        assert_eq!(find("just @"), []);
    }

    #[test]
    fn a_line_range_is_split_off() {
        assert_eq!(find("@a.rs:10-40"), [m("a.rs", Some((10, Some(40))))]);
        assert_eq!(find("@a.rs:7"), [m("a.rs", Some((7, None)))]);
        assert_eq!(find("@a.rs:0-3"), [m("a.rs", Some((1, Some(3))))]);
        assert_eq!(find("@c:/x"), [m("c:/x", None)]);
        assert_eq!(find("@a.rs:x-3"), [m("a.rs:x-3", None)]);
    }

    #[test]
    fn only_path_like_words_are_worth_a_note_when_missing() {
        assert!(looks_like_path(&m("src/x.rs", None)));
        assert!(looks_like_path(&m("x", Some((1, None)))));
        assert!(!looks_like_path(&m("alice", None)));
    }
}
