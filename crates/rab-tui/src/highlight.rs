//! Syntax highlighting of code for markdown fences and tool output, with two-face's
//! syntect definitions over Oniguruma regexes. Nothing is loaded until a code block or
//! file needs a language: the first use loads the syntax set (about 2.4 MB resident,
//! 1.5 ms), and each language deserialises its own grammar and compiles only the regexes
//! the text reaches (0.1–5 MB and 1–15 ms per language, TypeScript the largest;
//! `cargo bench -p rab-tui --bench highlight`); at most three languages stay compiled.
//! The app owns one [`Highlighter`] and passes it down, there is no global.
//! (fancy-regex, the pure-Rust alternative, needs ten times the memory and time per
//! language: 70 MB and 300 ms for TypeScript alone; see docs/tui.md.)
//!
//! Output lines carry syntect's foreground colours painted for the theme's colour depth
//! (RGB, nearest 256/16-colour index, or none), never a background, so code sits on the
//! terminal's own background. A streaming code block grows a line at a time; the
//! highlighter remembers the parser state after the last complete line of the previous
//! call and resumes from it when the new code extends the old, so re-rendering a growing
//! block costs only the new lines.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;

use two_face::re_exports::syntect;
use two_face::theme::{EmbeddedLazyThemeSet, EmbeddedThemeName};

use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter as SynHighlighter, Style,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use crate::ansi::RESET;
use crate::theme::{Color, ColorDepth, Role, Theme, palette_rgb, rgb_to_16, rgb_to_256};

/// Lazily loaded syntax definitions and colour schemes. Not `Send`: Oniguruma's parser
/// state holds raw pointers, and the UI highlights on its own thread anyway.
#[derive(Default)]
pub struct Highlighter {
    syntaxes: RefCell<Option<Rc<SyntaxSet>>>,
    /// Languages compiled in the loaded set, least recently used first.
    compiled: RefCell<Vec<String>>,
    themes: OnceCell<EmbeddedLazyThemeSet>,
    resume: RefCell<Vec<Checkpoint>>,
    /// Languages that may stay compiled for a while (drawing a resumed conversation at
    /// once); 0: [`COMPILED_LANGUAGES`].
    burst: std::cell::Cell<usize>,
}

/// How many languages stay compiled at once. syntect cannot unload one grammar, so a
/// fourth language reloads the syntax set (1.5 ms) and compiles afresh: memory stays at
/// the set plus three grammars (at most about 10 MB, TypeScript, HTML and C++ being the
/// largest), and a block in a language compiled earlier pays its first-use cost again
/// (2–15 ms). Sessions mostly use one to three languages, which never reload.
const COMPILED_LANGUAGES: usize = 3;

/// How many code blocks' parser states are remembered: a re-rendered message may hold a
/// few blocks, and each must find its own state.
const CHECKPOINTS: usize = 8;

/// Parser state after the complete lines of the last highlighted block.
struct Checkpoint {
    syntax: String,
    dark: bool,
    depth: ColorDepth,
    /// The code the state was reached with (complete lines only).
    code: String,
    parse: ParseState,
    highlight: HighlightState,
    lines: Vec<String>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter").field("loaded", &self.is_loaded()).finish()
    }
}

impl Highlighter {
    /// A highlighter that has loaded nothing yet.
    pub fn new() -> Highlighter {
        Highlighter::default()
    }

    /// Whether the syntax set has been loaded.
    pub fn is_loaded(&self) -> bool {
        self.syntaxes.borrow().is_some()
    }

    /// The languages whose grammars are compiled now, least recently used first.
    pub fn compiled_languages(&self) -> Vec<String> {
        self.compiled.borrow().clone()
    }

    fn syntaxes(&self) -> Rc<SyntaxSet> {
        self.syntaxes
            .borrow_mut()
            .get_or_insert_with(|| Rc::new(two_face::syntax::extra_newlines()))
            .clone()
    }

    /// The set to highlight `language` with: the loaded one, or a fresh one when
    /// `language` would be one compiled language too many.
    fn set_for(&self, language: &str) -> Rc<SyntaxSet> {
        let mut compiled = self.compiled.borrow_mut();
        if let Some(i) = compiled.iter().position(|l| l == language) {
            let name = compiled.remove(i);
            compiled.push(name);
        } else {
            if compiled.len() >= COMPILED_LANGUAGES.max(self.burst.get()) {
                tracing::debug!(dropped = ?compiled, "highlighter: syntax set reloaded");
                compiled.clear();
                self.resume.borrow_mut().clear();
                *self.syntaxes.borrow_mut() = None;
            }
            compiled.push(language.to_owned());
        }
        drop(compiled);
        self.syntaxes()
    }

    /// Lets up to `languages` grammars stay compiled until [`Highlighter::end_burst`]:
    /// drawing many blocks in many languages at once (a resumed conversation) then
    /// compiles each language once instead of reloading the set for every fourth one.
    pub fn begin_burst(&self, languages: usize) {
        self.burst.set(languages);
    }

    /// Back to the usual three languages: with more compiled, the set is dropped (the next
    /// block loads it again), so memory returns to the usual bound.
    pub fn end_burst(&self) {
        self.burst.set(0);
        let mut compiled = self.compiled.borrow_mut();
        if compiled.len() > COMPILED_LANGUAGES {
            compiled.clear();
            self.resume.borrow_mut().clear();
            *self.syntaxes.borrow_mut() = None;
        }
    }

    fn themes(&self) -> &EmbeddedLazyThemeSet {
        self.themes.get_or_init(two_face::theme::extra)
    }

    /// The syntax name a fence info string (`rust`, `rs`, `py`, `sh`, `c++`, `rust,ignore`,
    /// `{.python}`) resolves to, if any.
    pub fn language_name(&self, info: &str) -> Option<String> {
        lang_token(info)?;
        resolve(&self.syntaxes(), info).map(|s| s.name.clone())
    }

    /// Highlights `code` written in the language named by a fence info string. Returns
    /// one line per line of code (a trailing newline adds no line), tabs expanded and
    /// control characters made visible; plain when the language is unknown or the theme
    /// has no colour. Lines are not wrapped.
    pub fn highlight(&self, code: &str, info: &str, theme: &Theme) -> Vec<String> {
        if theme.depth == ColorDepth::None || lang_token(info).is_none() {
            return plain_lines(code);
        }
        let Some(name) = resolve(&self.syntaxes(), info).map(|s| s.name.clone()) else {
            return plain_lines(code);
        };
        self.highlight_named(code, &name, theme)
    }

    /// Highlights a file's content, choosing the language by the path's file name or
    /// extension (`Makefile`, `main.rs`); plain when unknown.
    pub fn highlight_file(&self, code: &str, path: &str, theme: &Theme) -> Vec<String> {
        if theme.depth == ColorDepth::None {
            return plain_lines(code);
        }
        let set = self.syntaxes();
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e);
        let syntax = set
            .find_syntax_by_extension(name)
            .or_else(|| ext.and_then(|e| set.find_syntax_by_extension(e)))
            .map(|s| s.name.clone());
        drop(set);
        match syntax {
            Some(syntax) => self.highlight_named(code, &syntax, theme),
            None => plain_lines(code),
        }
    }

    /// Highlights with the syntax called `name` (which the set has).
    fn highlight_named(&self, code: &str, name: &str, theme: &Theme) -> Vec<String> {
        let set = self.set_for(name);
        match set.find_syntax_by_name(name) {
            Some(syntax) => self.highlight_with(code, &set, syntax, theme),
            None => plain_lines(code),
        }
    }

    fn highlight_with(
        &self,
        code: &str,
        set: &SyntaxSet,
        syntax: &SyntaxReference,
        theme: &Theme,
    ) -> Vec<String> {
        let dark = is_dark(theme);
        let scheme = self.themes().get(if dark {
            EmbeddedThemeName::OneHalfDark
        } else {
            EmbeddedThemeName::OneHalfLight
        });
        let hl = SynHighlighter::new(scheme);
        let mut guard = self.resume.borrow_mut();
        let found = guard
            .iter()
            .enumerate()
            .filter(|(_, cp)| {
                cp.syntax == syntax.name
                    && cp.dark == dark
                    && cp.depth == theme.depth
                    && code.starts_with(&cp.code)
            })
            .max_by_key(|(_, cp)| cp.code.len())
            .map(|(i, _)| i);
        let resumable = found.map(|i| guard.remove(i));
        let mut cp = resumable.unwrap_or_else(|| Checkpoint {
            syntax: syntax.name.clone(),
            dark,
            depth: theme.depth,
            code: String::new(),
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&hl, ScopeStack::new()),
            lines: Vec::new(),
        });
        let start = cp.code.len();
        let rest = &code[start..];
        let complete = rest.rfind('\n').map_or(0, |i| i + 1);
        for line in rest[..complete].split_inclusive('\n') {
            let painted = paint_line(line, &mut cp.parse, &mut cp.highlight, &hl, set, theme.depth);
            cp.lines.push(painted);
        }
        cp.code.push_str(&rest[..complete]);
        let mut out = cp.lines.clone();
        let tail = &rest[complete..];
        if !tail.is_empty() {
            // The unfinished last line is highlighted on copies so the checkpoint stays at
            // a line boundary.
            let (mut parse, mut state) = (cp.parse.clone(), cp.highlight.clone());
            out.push(paint_line(tail, &mut parse, &mut state, &hl, set, theme.depth));
        }
        if guard.len() >= CHECKPOINTS {
            guard.remove(0);
        }
        guard.push(cp);
        out
    }
}

fn paint_line(
    line: &str,
    parse: &mut ParseState,
    state: &mut HighlightState,
    hl: &SynHighlighter<'_>,
    set: &SyntaxSet,
    depth: ColorDepth,
) -> String {
    // syntect's newline syntaxes expect the line ending; a parse error (a bad grammar)
    // degrades to plain text rather than failing the render.
    let with_nl: Cow<'_, str> =
        if line.ends_with('\n') { Cow::Borrowed(line) } else { Cow::Owned(format!("{line}\n")) };
    let Ok(ops) = parse.parse_line(&with_nl, set) else {
        return sanitize_line(line.trim_end_matches('\n')).into_owned();
    };
    let mut out = String::with_capacity(line.len() * 2);
    let mut last: Option<String> = None;
    for (style, text) in HighlightIterator::new(state, &ops, &with_nl, hl) {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            continue;
        }
        let sgr = style_sgr(style, depth);
        if last.as_deref() != Some(sgr.as_str()) {
            if last.is_some() {
                out.push_str(RESET);
            }
            out.push_str(&sgr);
            last = Some(sgr);
        }
        out.push_str(&sanitize_line(text));
    }
    if last.is_some_and(|s| !s.is_empty()) {
        out.push_str(RESET);
    }
    out
}

fn style_sgr(style: Style, depth: ColorDepth) -> String {
    let c = style.foreground;
    let mut sgr = match depth {
        ColorDepth::None => String::new(),
        ColorDepth::TrueColor => format!("\x1b[38;2;{};{};{}m", c.r, c.g, c.b),
        ColorDepth::Palette => format!("\x1b[38;5;{}m", rgb_to_256(c.r, c.g, c.b)),
        ColorDepth::Basic => {
            let i = rgb_to_16(c.r, c.g, c.b);
            let code = if i < 8 { 30 + i } else { 90 + i - 8 };
            format!("\x1b[{code}m")
        }
    };
    if style.font_style.contains(FontStyle::BOLD) {
        sgr.push_str("\x1b[1m");
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        sgr.push_str("\x1b[3m");
    }
    sgr
}

/// Whether the theme is for a dark background, judged by its text colour being light.
pub fn is_dark(theme: &Theme) -> bool {
    let (r, g, b) = match theme.color(Role::Text) {
        Some(Color::Rgb(r, g, b)) => (r, g, b),
        Some(Color::Indexed(i)) => palette_rgb(i),
        None => return !theme.name.contains("light"),
    };
    let luma = 299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b);
    luma >= 128_000
}

/// The first word of a fence info string, lowercased and with aliases mapped to tokens
/// syntect knows; `None` for plain text.
fn lang_token(info: &str) -> Option<String> {
    let word = info
        .trim()
        .trim_start_matches('{')
        .trim_start_matches('.')
        .split([' ', ',', '}', '\t'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let mapped = match word.as_str() {
        "" | "text" | "txt" | "plain" | "plaintext" | "output" => return None,
        "shell" | "console" | "terminal" | "shellsession" | "zsh" | "ksh" => "sh",
        "c++" => "cpp",
        "c#" | "csharp" => "cs",
        "f#" | "fsharp" => "fs",
        "golang" => "go",
        "python3" | "py3" => "py",
        "jsonc" | "json5" => "json",
        "docker" => "dockerfile",
        "make" => "makefile",
        "patch" | "udiff" => "diff",
        "powershell" | "pwsh" => "ps1",
        "objective-c" | "objc" => "m",
        "terraform" | "hcl" => "tf",
        "vue" | "svelte" => "html",
        other => other,
    };
    Some(mapped.to_owned())
}

fn resolve<'s>(set: &'s SyntaxSet, info: &str) -> Option<&'s SyntaxReference> {
    let token = lang_token(info)?;
    set.find_syntax_by_token(&token)
}

/// Code split into display lines without colour (tabs expanded, controls visible).
pub fn plain_lines(code: &str) -> Vec<String> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    code.split('\n').map(|l| sanitize_line(l).into_owned()).collect()
}

/// Makes one line of untrusted text safe to print: tabs become spaces to the next
/// multiple of 4 (a tab's width is unknown to the wrapper), a trailing `\r` is dropped,
/// and other control characters (including ESC, which could restyle the terminal) become
/// `�`.
pub fn sanitize_line(line: &str) -> Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if !line.chars().any(char::is_control) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut col = 0usize;
    for c in line.chars() {
        match c {
            '\t' => {
                let n = 4 - col % 4;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            c if c.is_control() => {
                out.push('\u{fffd}');
                col += 1;
            }
            c => {
                out.push(c);
                col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
