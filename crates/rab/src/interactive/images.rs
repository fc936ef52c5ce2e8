//! Images in the terminal: shown inline where the terminal says it can — the kitty
//! graphics protocol (kitty, Ghostty, WezTerm) or iTerm2's inline images (iTerm2) —
//! and as `[image WxH]` everywhere else. Detected from the environment, never guessed:
//! an image escape a terminal does not know would print as garbage.
//!
//! An inline image is drawn without moving the cursor, then the rows it covers are
//! left blank, so the renderer's count of lines stays true. Only committed lines carry
//! the image (the live region is redrawn every frame and shows the placeholder).

use std::sync::OnceLock;

use base64::Engine as _;
use rab_tui::{Role, Theme};

/// What the terminal can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Graphics {
    /// The kitty graphics protocol (`ESC _ G … ESC \`), PNG data.
    Kitty,
    /// iTerm2's inline images (`ESC ] 1337 ; File=… BEL`).
    Iterm,
    /// Text only.
    None,
}

static GRAPHICS: OnceLock<Graphics> = OnceLock::new();

/// Most rows an inline image takes.
const MAX_ROWS: u32 = 12;
/// Most columns an inline image takes.
const MAX_COLS: u32 = 60;
/// Base64 characters per kitty chunk (the protocol's limit).
const CHUNK: usize = 4096;

/// Decides once, from the environment, what this terminal shows.
pub fn init(env: &rab_config::Env) {
    let _ = GRAPHICS.set(detect(env));
}

/// What the terminal of `env` can show.
pub fn detect(env: &rab_config::Env) -> Graphics {
    let program = env.get("TERM_PROGRAM").unwrap_or_default().to_ascii_lowercase();
    let term = env.get("TERM").unwrap_or_default();
    // Inside tmux or screen the escapes would need passthrough: text only.
    if env.get("TMUX").is_some() || term.starts_with("screen") || term.starts_with("tmux") {
        return Graphics::None;
    }
    if term == "xterm-kitty" || env.get("KITTY_WINDOW_ID").is_some() {
        return Graphics::Kitty;
    }
    match program.as_str() {
        "ghostty" | "wezterm" => Graphics::Kitty,
        "iterm.app" => Graphics::Iterm,
        _ if env.get("LC_TERMINAL") == Some("iTerm2") => Graphics::Iterm,
        _ => Graphics::None,
    }
}

fn graphics() -> Graphics {
    GRAPHICS.get().copied().unwrap_or(Graphics::None)
}

/// The placeholder: `[image 1200x800 image/png]`.
pub fn placeholder(mime: &str, data: &str, theme: &Theme) -> String {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
    let size = rab_tools::image_fit::dimensions(&bytes)
        .map_or_else(String::new, |(w, h)| format!("{w}x{h} "));
    theme.fg(Role::Dim, &format!("[image {size}{mime}]"))
}

/// Lines showing the image (base64 `data` of type `mime`) within `width` columns: the
/// inline image where the terminal shows one, else the placeholder.
pub fn lines(mime: &str, data: &str, width: usize, theme: &Theme) -> Vec<String> {
    let shown = match graphics() {
        Graphics::None => None,
        g => inline(g, data, width),
    };
    shown.unwrap_or_else(|| vec![placeholder(mime, data, theme)])
}

/// Columns and rows for an image of `w`x`h` pixels (cells about twice as tall as wide).
fn cells(w: u32, h: u32, width: usize) -> (u32, u32) {
    let cols =
        u32::try_from(width).unwrap_or(MAX_COLS).clamp(1, MAX_COLS).min(w.max(1).div_ceil(8));
    let rows = (u64::from(h) * u64::from(cols)).div_ceil(u64::from(w.max(1)) * 2);
    let rows = u32::try_from(rows).unwrap_or(MAX_ROWS).clamp(1, MAX_ROWS);
    // Fewer rows than the aspect asks: narrow the columns to keep the shape.
    let cols = if rows == MAX_ROWS {
        u32::try_from((u64::from(w) * u64::from(rows) * 2).div_ceil(u64::from(h.max(1))))
            .unwrap_or(cols)
            .clamp(1, cols)
    } else {
        cols
    };
    (cols, rows)
}

fn inline(g: Graphics, data: &str, width: usize) -> Option<Vec<String>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).ok()?;
    let (w, h) = rab_tools::image_fit::dimensions(&bytes)?;
    let (cols, rows) = cells(w, h, width.saturating_sub(2));
    let first = match g {
        Graphics::Kitty => {
            // kitty decodes PNG only; a small PNG also keeps the escape short.
            let (png, _, _) = rab_tools::image_fit::thumbnail_png(&bytes, 800).ok()?;
            let b64 = base64::engine::general_purpose::STANDARD.encode(png);
            let chunks: Vec<&str> = b64
                .as_bytes()
                .chunks(CHUNK)
                .map(|c| std::str::from_utf8(c).unwrap_or_default())
                .collect();
            let mut out = String::new();
            for (i, chunk) in chunks.iter().enumerate() {
                let more = u8::from(i + 1 < chunks.len());
                if i == 0 {
                    out.push_str(&format!(
                        "\x1b_Ga=T,f=100,c={cols},r={rows},C=1,q=2,m={more};{chunk}\x1b\\"
                    ));
                } else {
                    out.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
                }
            }
            out
        }
        Graphics::Iterm => format!(
            "\x1b]1337;File=inline=1;size={};width={cols};height={rows};preserveAspectRatio=1;doNotMoveCursor=1:{data}\x07",
            bytes.len()
        ),
        Graphics::None => return None,
    };
    let mut out = vec![first];
    out.extend((1..rows).map(|_| String::new()));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> rab_config::Env {
        rab_config::Env::from_pairs(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
    }

    #[test]
    fn terminals_are_detected_not_guessed() {
        assert_eq!(detect(&env(&[("TERM", "xterm-kitty")])), Graphics::Kitty);
        assert_eq!(detect(&env(&[("TERM_PROGRAM", "ghostty")])), Graphics::Kitty);
        assert_eq!(detect(&env(&[("TERM_PROGRAM", "iTerm.app")])), Graphics::Iterm);
        assert_eq!(detect(&env(&[("TERM", "xterm-256color")])), Graphics::None);
        assert_eq!(
            detect(&env(&[("TERM", "xterm-kitty"), ("TMUX", "/tmp/tmux-0/default,1,0")])),
            Graphics::None
        );
    }

    #[test]
    fn an_image_keeps_its_shape_within_the_limits() {
        assert_eq!(cells(800, 400, 200), (48, 12));
        let (c, r) = cells(100, 1000, 200);
        assert!(r == MAX_ROWS && c <= 3, "{c}x{r}");
        assert_eq!(cells(16, 16, 200), (2, 1));
    }
}
