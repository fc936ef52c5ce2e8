//! Themes: a colour per role (text, accent, error, diff lines, markdown parts, …), loaded
//! from JSON (`dark` and `light` built in, custom files from `~/.rab/themes/`), and
//! painted for the terminal's colour depth: truecolor, 256 colours, 16 colours, or none
//! (`NO_COLOR`, `TERM=dumb`).
//!
//! ```json
//! {"name": "mine", "base": "dark", "colors": {"accent": "#ff8800", "error": "196"}}
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::ansi::RESET;

/// What a colour is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// Ordinary text.
    Text,
    /// Secondary text: hints, timestamps, footers.
    Dim,
    /// Highlights: the prompt marker, selected items, the model name.
    Accent,
    /// Errors.
    Error,
    /// Warnings.
    Warning,
    /// Success marks.
    Success,
    /// Editor and box borders.
    Border,
    /// Background of user messages.
    UserBg,
    /// Background of a running tool call.
    ToolPendingBg,
    /// Background of a finished tool call.
    ToolSuccessBg,
    /// Background of a failed tool call.
    ToolErrorBg,
    /// Added diff lines.
    DiffAdd,
    /// Removed diff lines.
    DiffRemove,
    /// The changed part within an added line.
    DiffAddStrong,
    /// The changed part within a removed line.
    DiffRemoveStrong,
    /// Diff context and hunk headers.
    DiffContext,
    /// Thinking text.
    Thinking,
    /// Markdown headings.
    Heading,
    /// Links.
    Link,
    /// Inline code.
    Code,
    /// Block quotes.
    Quote,
    /// List bullets and numbers.
    Bullet,
    /// Background of the selected row in lists.
    SelectedBg,
    /// Bash mode (`!cmd`) accents.
    Bash,
}

/// A colour as written in a theme file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// 24-bit.
    Rgb(u8, u8, u8),
    /// The 256-colour palette.
    Indexed(u8),
}

impl Color {
    /// Parses `#rrggbb`, `#rgb` or a palette index `0`–`255`.
    pub fn parse(s: &str) -> Option<Color> {
        let s = s.trim();
        if let Some(hex) = s.strip_prefix('#') {
            let v = |i: usize, n: usize| u8::from_str_radix(hex.get(i..i + n)?, 16).ok();
            return match hex.len() {
                6 => Some(Color::Rgb(v(0, 2)?, v(2, 2)?, v(4, 2)?)),
                3 => Some(Color::Rgb(v(0, 1)? * 17, v(1, 1)? * 17, v(2, 1)? * 17)),
                _ => None,
            };
        }
        s.parse::<u8>().ok().map(Color::Indexed)
    }
}

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ColorDepth {
    /// No colour at all (`NO_COLOR`): bold/dim/reverse only.
    None,
    /// The 16 basic colours.
    Basic,
    /// The 256-colour palette.
    Palette,
    /// 24-bit colour.
    TrueColor,
}

impl ColorDepth {
    /// Decides from the environment values rab read: `NO_COLOR`, `COLORTERM`, `TERM`.
    pub fn detect(no_color: bool, colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
        if no_color || term == Some("dumb") {
            return ColorDepth::None;
        }
        if colorterm.is_some_and(|c| c.contains("truecolor") || c.contains("24bit")) {
            return ColorDepth::TrueColor;
        }
        if term.is_some_and(|t| t.contains("256")) {
            return ColorDepth::Palette;
        }
        ColorDepth::Basic
    }
}

/// A theme file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThemeFile {
    /// Name shown in the settings.
    pub name: String,
    /// Built-in theme the file starts from (`dark` or `light`).
    #[serde(default)]
    pub base: Option<String>,
    /// Colours by role.
    #[serde(default)]
    pub colors: BTreeMap<Role, String>,
}

/// Why a theme file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// Not valid JSON or unknown fields/roles.
    #[error("theme {name}: {message}")]
    Invalid {
        /// File or theme name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// Colours by role for one colour depth.
#[derive(Clone, Debug)]
pub struct Theme {
    /// Name.
    pub name: String,
    /// Depth colours are painted for.
    pub depth: ColorDepth,
    colors: BTreeMap<Role, Color>,
}

const DARK: &str = include_str!("themes/dark.json");
const LIGHT: &str = include_str!("themes/light.json");

impl Theme {
    /// A built-in theme: `dark` or `light`.
    pub fn builtin(name: &str, depth: ColorDepth) -> Option<Theme> {
        let json = match name {
            "dark" => DARK,
            "light" => LIGHT,
            _ => return None,
        };
        Theme::from_json(name, json, depth).ok()
    }

    /// Parses a theme file; roles it does not set come from its `base` (default dark).
    pub fn from_json(name: &str, json: &str, depth: ColorDepth) -> Result<Theme, ThemeError> {
        let invalid = |message: String| ThemeError::Invalid { name: name.to_owned(), message };
        let file: ThemeFile = serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
        let mut colors = BTreeMap::new();
        if let Some(base) =
            file.base.as_deref().or(if name == "dark" { None } else { Some("dark") })
        {
            let base = Theme::builtin(base, depth)
                .ok_or_else(|| invalid(format!("unknown base theme '{base}'")))?;
            colors = base.colors;
        }
        for (role, value) in &file.colors {
            let c = Color::parse(value)
                .ok_or_else(|| invalid(format!("{role:?}: '{value}' is not #rrggbb or 0-255")))?;
            colors.insert(*role, c);
        }
        Ok(Theme { name: file.name, depth, colors })
    }

    /// The colour of a role (`None` when the theme leaves it unset).
    pub fn color(&self, role: Role) -> Option<Color> {
        self.colors.get(&role).copied()
    }

    fn sgr(&self, role: Role, background: bool) -> String {
        let Some(c) = self.color(role) else { return String::new() };
        let base = if background { 48 } else { 38 };
        match (self.depth, c) {
            (ColorDepth::None, _) => String::new(),
            (ColorDepth::TrueColor, Color::Rgb(r, g, b)) => format!("\x1b[{base};2;{r};{g};{b}m"),
            (ColorDepth::TrueColor | ColorDepth::Palette, Color::Indexed(i)) => {
                format!("\x1b[{base};5;{i}m")
            }
            (ColorDepth::Palette, Color::Rgb(r, g, b)) => {
                format!("\x1b[{base};5;{}m", rgb_to_256(r, g, b))
            }
            (ColorDepth::Basic, c) => {
                let idx = match c {
                    Color::Rgb(r, g, b) => rgb_to_16(r, g, b),
                    Color::Indexed(i) if i < 16 => i,
                    Color::Indexed(i) => {
                        let (r, g, b) = palette_rgb(i);
                        rgb_to_16(r, g, b)
                    }
                };
                let code = match (background, idx < 8) {
                    (false, true) => 30 + idx,
                    (false, false) => 90 + idx - 8,
                    (true, true) => 40 + idx,
                    (true, false) => 100 + idx - 8,
                };
                format!("\x1b[{code}m")
            }
        }
    }

    /// `text` in the role's foreground colour.
    pub fn fg(&self, role: Role, text: &str) -> String {
        let sgr = self.sgr(role, false);
        if sgr.is_empty() { text.to_owned() } else { format!("{sgr}{text}{RESET}") }
    }

    /// The escape that sets the role's foreground (empty without colour).
    pub fn fg_code(&self, role: Role) -> String {
        self.sgr(role, false)
    }

    /// The escape that sets the role's background (empty without colour).
    pub fn bg_code(&self, role: Role) -> String {
        self.sgr(role, true)
    }

    /// Bold text.
    pub fn bold(&self, text: &str) -> String {
        format!("\x1b[1m{text}{RESET}")
    }

    /// Dim text (kept without colour: dim is an attribute, not a colour).
    pub fn dim(&self, text: &str) -> String {
        match self.depth {
            ColorDepth::None => format!("\x1b[2m{text}{RESET}"),
            _ => self.fg(Role::Dim, text),
        }
    }
}

/// The nearest xterm 256-colour index of an RGB colour.
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let to6 = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    let (cr, cg, cb) = (to6(r), to6(g), to6(b));
    let cube = 16 + 36 * cr + 6 * cg + cb;
    let avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let gray = if avg > 238 { 23 } else { (avg.saturating_sub(3) / 10) as u8 };
    let gray_idx = 232 + gray;
    let dist = |(a, b2, c): (u8, u8, u8)| {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a, r) + d(b2, g) + d(c, b)
    };
    if dist(palette_rgb(gray_idx)) < dist(palette_rgb(cube)) { gray_idx } else { cube }
}

/// The RGB value of a 256-colour palette index.
pub fn palette_rgb(i: u8) -> (u8, u8, u8) {
    const BASIC: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match i {
        0..=15 => BASIC[usize::from(i)],
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

/// The nearest of the 16 basic colours.
pub fn rgb_to_16(r: u8, g: u8, b: u8) -> u8 {
    (0..16u8)
        .min_by_key(|&i| {
            let (pr, pg, pb) = palette_rgb(i);
            let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
            d(pr, r) + d(pg, g) + d(pb, b)
        })
        .unwrap_or(7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn builtins_parse_and_paint_per_depth() {
        let t = Theme::builtin("dark", ColorDepth::TrueColor).unwrap();
        assert!(t.fg(Role::Error, "x").starts_with("\x1b[38;2;"));
        let t = Theme::builtin("light", ColorDepth::Palette).unwrap();
        assert!(t.fg(Role::Error, "x").starts_with("\x1b[38;5;"));
        let t = Theme::builtin("dark", ColorDepth::Basic).unwrap();
        let painted = t.fg(Role::Error, "x");
        assert!(painted.starts_with("\x1b[3") || painted.starts_with("\x1b[9"), "{painted:?}");
        let t = Theme::builtin("dark", ColorDepth::None).unwrap();
        assert_eq!(t.fg(Role::Error, "x"), "x");
    }

    #[test]
    fn custom_themes_override_a_base_and_reject_bad_colours() {
        let t = Theme::from_json(
            "mine",
            r##"{"name": "mine", "base": "light", "colors": {"accent": "#ff8800"}}"##,
            ColorDepth::TrueColor,
        )
        .unwrap();
        assert_eq!(t.color(Role::Accent), Some(Color::Rgb(255, 136, 0)));
        assert_eq!(
            t.color(Role::Error),
            Theme::builtin("light", ColorDepth::TrueColor).unwrap().color(Role::Error)
        );
        let err = Theme::from_json(
            "bad",
            r#"{"name": "bad", "colors": {"accent": "orange"}}"#,
            ColorDepth::TrueColor,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not #rrggbb"), "{err}");
        let err = Theme::from_json(
            "bad",
            r##"{"name": "bad", "colors": {"acent": "#fff"}}"##,
            ColorDepth::TrueColor,
        )
        .unwrap_err();
        assert!(err.to_string().contains("acent"), "{err}");
    }

    #[test]
    fn colour_depth_follows_no_color_and_term() {
        assert_eq!(ColorDepth::detect(true, Some("truecolor"), Some("xterm")), ColorDepth::None);
        assert_eq!(
            ColorDepth::detect(false, Some("truecolor"), Some("xterm")),
            ColorDepth::TrueColor
        );
        assert_eq!(ColorDepth::detect(false, None, Some("xterm-256color")), ColorDepth::Palette);
        assert_eq!(ColorDepth::detect(false, None, Some("xterm")), ColorDepth::Basic);
        assert_eq!(ColorDepth::detect(false, None, Some("dumb")), ColorDepth::None);
        assert_eq!(rgb_to_256(255, 0, 0), 196);
    }
}
