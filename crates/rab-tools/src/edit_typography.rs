//! The characters of what the model changed in a tolerant edit, in the file's
//! typography: its quotes, dashes, spaces, ellipses and Unicode form. What the model
//! demonstrably mistyped (learned from the text it kept) is corrected; an ASCII quote or
//! dash becomes typographic only on a line that was already there or in prose, so a
//! comment's curly quotes never leak into new code; a typographic character the region
//! does not use at all becomes ASCII. When the file's spelling cannot be told, the edit
//! is refused.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::edit_faithful::{Differences, Unclear};
use crate::edit_tokens::{Kind, Token, fold};

/// Where a token stands: what is around it, and on what kind of line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ctx {
    /// The character before it on its line (`None` at the start).
    pub prev: Option<char>,
    /// The character after it on its line (`None` at the end).
    pub next: Option<char>,
    /// A word token before / after it.
    pub around: (bool, bool),
    /// The line was in the model's old text (changed), not added.
    pub modified: bool,
    /// The file is prose (Markdown, plain text), not code.
    pub prose: bool,
}

/// The classes of characters a model mistypes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Double,
    Single,
    Dash,
    Space,
}

fn class_of(c: char) -> Option<Class> {
    match c {
        '"' | '“' | '”' | '„' | '‟' | '″' => Some(Class::Double),
        '\'' | '‘' | '’' | '‚' | '‛' | '′' => Some(Class::Single),
        '-' | '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => Some(Class::Dash),
        c if c != '\n' && c.is_whitespace() => Some(Class::Space),
        _ => None,
    }
}

fn is_prime(c: char) -> bool {
    matches!(c, '′' | '″')
}

/// A quote that opens (`“`, `‘`, `„`, `‚`).
fn is_opening(c: char) -> bool {
    matches!(c, '“' | '‘' | '„' | '‚' | '‟' | '‛')
}

/// The other quote of a pair.
fn counterpart(c: char) -> Option<char> {
    Some(match c {
        '“' => '”',
        '”' => '“',
        '‘' => '’',
        '’' => '‘',
        _ => return None,
    })
}

/// Whether a quote after `prev` opens: at the start, after a space, a bracket, a dash,
/// an emphasis mark or another opening quote.
fn opens_after(prev: Option<char>) -> bool {
    prev.is_none_or(|p| p.is_whitespace() || "([{<«*_/—–-".contains(p) || is_opening(p) || p == '"')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// How the file spells what the model typed in the text it kept: per model spelling,
/// the file's, with the word tokens around it (before, after).
pub(crate) type Learned<'a> = HashMap<&'a str, Vec<(&'a str, (bool, bool))>>;

/// The typography of a region.
pub(crate) struct Typography<'a> {
    /// Characters of each class the region uses.
    used: Vec<(Class, char)>,
    /// The file's spellings of each model spelling in the kept text, with the word
    /// tokens around it there.
    learned: &'a Learned<'a>,
    /// The form of the region's non-ASCII words: NFD, NFC, or mixed/none (`None`).
    nfd: Option<bool>,
    /// Whether the region writes ellipses as three dots, and as `…`.
    ellipses: (bool, bool),
}

impl<'a> Typography<'a> {
    pub fn of(region: &[&str], learned: &'a Learned<'a>) -> Self {
        let mut used: Vec<(Class, char)> = Vec::new();
        let (mut decomposed, mut composed) = (false, false);
        for line in region {
            for c in line.chars() {
                if let Some(k) = class_of(c)
                    && !used.contains(&(k, c))
                {
                    used.push((k, c));
                }
            }
            if !line.is_ascii() {
                // A letter and its accent apart: NFD. A letter NFD would take apart:
                // NFC (a singleton like the ohm sign is neither).
                decomposed |= line.chars().any(is_combining_mark) && !line.chars().eq(line.nfc());
                composed |= line.chars().any(|c| !is_combining_mark(c))
                    && !line.chars().eq(line.nfd())
                    && line.chars().eq(line.nfc());
            }
        }
        let nfd = match (decomposed, composed) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        };
        let ellipses =
            (region.iter().any(|l| l.contains("...")), region.iter().any(|l| l.contains('…')));
        Self { used, learned, nfd, ellipses }
    }

    /// How the file spells `raw` where the model typed it with the same words around;
    /// else anywhere, when `anywhere`.
    fn seen(&self, raw: &str, around: (bool, bool), anywhere: bool) -> Vec<&'a str> {
        let all = self.learned.get(raw).map(Vec::as_slice).unwrap_or_default();
        let here: Vec<&str> = all.iter().filter(|(_, a)| *a == around).map(|(f, _)| *f).collect();
        if here.is_empty() && anywhere { all.iter().map(|(f, _)| *f).collect() } else { here }
    }

    /// A token of the model's new text, in the region's typography.
    pub fn convert(
        &self,
        t: &Token<'_>,
        ctx: &Ctx,
        diffs: &mut Differences,
    ) -> Result<String, Unclear> {
        let out = match t.kind {
            Kind::Word if !t.raw.is_ascii() => match self.nfd {
                Some(true) => t.raw.nfd().collect(),
                Some(false) => t.raw.nfc().collect(),
                None => t.raw.to_owned(),
            },
            Kind::Space => self.space(t.raw, ctx)?,
            Kind::Punct if matches!(t.raw, "..." | "…") => self.ellipsis(t.raw, ctx),
            Kind::Punct => {
                let mut chars = t.raw.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if class_of(c).is_some() => self.char(c, ctx)?.to_string(),
                    _ => t.raw.to_owned(),
                }
            }
            _ => t.raw.to_owned(),
        };
        if out != t.raw && t.kind != Kind::Word {
            diffs.converted.push((t.raw.to_owned(), out.clone()));
        }
        Ok(out)
    }

    /// A whitespace run. A single space stays one unless the model typed one where
    /// the file has another (a no-break space before `!`, a tab between TSV cells) with
    /// the same words around, on a line that was there; on an added line that is a
    /// guess, so it is refused. Longer runs take the file's spelling wherever learned.
    /// Odd spaces the region does not use become plain ones.
    fn space(&self, raw: &str, ctx: &Ctx) -> Result<String, Unclear> {
        let single = raw == " ";
        let seen = self.seen(raw, ctx.around, !single);
        if !seen.is_empty() && !seen.contains(&raw) {
            let first = seen[0];
            if !seen.iter().all(|s| *s == first) {
                return Err(Unclear(format!(
                    "whitespace you typed as {raw:?} is spelled several ways in the file"
                )));
            }
            if single && !ctx.modified {
                return Err(Unclear(format!(
                    "a space on an added line could be {first:?}, as where you typed spaces in \
                     the lines you kept"
                )));
            }
            return Ok(first.to_owned());
        }
        Ok(raw
            .chars()
            .map(|c| match c {
                ' ' | '\t' => c,
                c if self.used.contains(&(Class::Space, c)) => c,
                _ => ' ',
            })
            .collect())
    }

    /// An ellipsis: three dots become `…` only in prose-like places (after a word, not
    /// before one) of a changed line or a prose file, where the file has `…` for them.
    fn ellipsis(&self, raw: &str, ctx: &Ctx) -> String {
        let seen = self.seen(raw, ctx.around, true);
        let consistent = seen.first().filter(|f| seen.iter().all(|s| s == *f)).copied();
        if raw == "..." {
            let prose_place =
                ctx.prev.is_some_and(is_word_char) && !ctx.next.is_some_and(is_word_char);
            if (ctx.modified || ctx.prose) && prose_place && consistent == Some("…") {
                return "…".to_owned();
            }
            return raw.to_owned();
        }
        match (consistent, self.ellipses) {
            (Some(f), _) => f.to_owned(),
            (None, (true, false)) => "...".to_owned(),
            _ => raw.to_owned(),
        }
    }

    /// A quote or dash.
    fn char(&self, c: char, ctx: &Ctx) -> Result<char, Unclear> {
        let Some(class) = class_of(c) else { return Ok(c) };
        let mut buf = [0u8; 4];
        let spelled: &str = c.encode_utf8(&mut buf);
        let mut learned: Vec<char> = Vec::new();
        for s in self.seen(spelled, ctx.around, true) {
            if let Some(l) = s.chars().next()
                && !learned.contains(&l)
            {
                learned.push(l);
            }
        }
        if fold(c).is_none() {
            return self.ascii(c, class, &learned, ctx);
        }
        if learned.contains(&c) {
            return Ok(c);
        }
        if let [one] = learned.as_slice() {
            return Ok(*one);
        }
        let used: Vec<char> =
            self.used.iter().filter(|(k, _)| *k == class).map(|(_, c)| *c).collect();
        if used.is_empty() || used.contains(&c) || used.iter().any(|u| fold(*u).is_some()) {
            return Ok(c);
        }
        // The region uses only the ASCII form: a typed quote becomes it; a dash too,
        // unless it stands between spaces (a prose dash, not a minus or an option).
        let spaced =
            ctx.prev.is_none_or(char::is_whitespace) && ctx.next.is_none_or(char::is_whitespace);
        Ok(match class {
            Class::Dash if spaced => c,
            Class::Dash => '-',
            Class::Double => '"',
            Class::Single => '\'',
            Class::Space => c,
        })
    }

    /// An ASCII quote or hyphen the model typed: typographic only where it mistyped
    /// that in the kept text, on a changed line or in prose.
    fn ascii(&self, c: char, class: Class, learned: &[char], ctx: &Ctx) -> Result<char, Unclear> {
        if learned.is_empty() || learned.contains(&c) || !(ctx.modified || ctx.prose) {
            return Ok(c);
        }
        if class == Class::Dash {
            // A hyphen inside a word (`well-known`) stays one.
            let compound = ctx.prev.is_some_and(is_word_char) && ctx.next.is_some_and(is_word_char);
            return Ok(match learned {
                [one] if !compound => *one,
                _ => c,
            });
        }
        // Where the model typed the same quote between the same kinds of tokens, the
        // file's spelling there (German „…“ closes with “).
        let mut buf = [0u8; 4];
        let here = self.seen(c.encode_utf8(&mut buf), ctx.around, false);
        if let Some(first) = here.first()
            && here.iter().all(|h| h == first)
            && let Some(q) = first.chars().next()
            && (!is_prime(q) || ctx.prev.is_some_and(|p| p.is_ascii_digit()))
        {
            return Ok(q);
        }
        // Primes after a digit; quotes by position.
        if ctx.prev.is_some_and(|p| p.is_ascii_digit())
            && let Some(prime) = learned.iter().find(|l| is_prime(**l))
        {
            return Ok(*prime);
        }
        let quotes: Vec<char> = learned.iter().copied().filter(|l| !is_prime(*l)).collect();
        let inside_word = ctx.prev.is_some_and(is_word_char) && ctx.next.is_some_and(is_word_char);
        let opening = !inside_word && opens_after(ctx.prev);
        let fits: Vec<char> =
            quotes.iter().copied().filter(|q| is_opening(*q) == opening).collect();
        match fits.as_slice() {
            [one] => Ok(*one),
            [] => Ok(quotes.iter().find_map(|q| counterpart(*q)).unwrap_or(c)),
            _ => Err(Unclear(format!(
                "\"{c}\" in the new text could be any of {}",
                fits.iter().map(|o| format!("\"{o}\"")).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}
