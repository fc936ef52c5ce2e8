//! The parts of the screen around the chat: user messages, the working indicator,
//! queued messages, status and info lines, and the footer.

use std::time::Duration;

use rab_tui::ansi::{self, RESET};
use rab_tui::{Role, Theme, wrap};

/// A user message: wrapped, on the user background, with a blank line before.
pub fn user_message(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(4).max(10);
    let bg = theme.bg_code(Role::UserBg);
    let mut out = vec![String::new()];
    for line in text.lines().flat_map(|l| wrap::wrap(l, inner)) {
        let padded = ansi::pad(&format!("  {line}"), width.saturating_sub(1));
        out.push(format!("{bg}{padded}{RESET}"));
    }
    out
}

/// An info line (command output), dimmed, wrapped.
pub fn info(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    text.lines().flat_map(|l| wrap::wrap(l, width.max(10))).map(|l| theme.dim(&l)).collect()
}

/// An error line in the theme's error colour.
pub fn error(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    text.lines()
        .flat_map(|l| wrap::wrap(l, width.max(10)))
        .map(|l| theme.fg(Role::Error, &l))
        .collect()
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// `⠋ Working… 12s (Esc to interrupt)`.
pub fn working(frame: usize, elapsed: Duration, label: &str, theme: &Theme) -> String {
    let spin = theme.fg(Role::Accent, SPINNER[frame % SPINNER.len()]);
    let secs = elapsed.as_secs();
    theme.dim(&format!("{spin} {label}… {secs}s (Esc to interrupt)"))
}

/// Messages waiting to be delivered while the agent works.
pub fn queued(items: &[(String, bool)], width: usize, theme: &Theme) -> Vec<String> {
    items
        .iter()
        .map(|(text, follow_up)| {
            let kind = if *follow_up { "follow-up" } else { "queued" };
            let first = text.lines().next().unwrap_or_default();
            ansi::truncate(&theme.dim(&format!("◷ {kind}: {first}")), width, "…")
        })
        .collect()
}

/// What the footer shows.
#[derive(Clone, Debug, Default)]
pub struct FooterInfo {
    /// Working directory, `~`-shortened.
    pub cwd: String,
    /// Git branch, when in a repository.
    pub branch: Option<String>,
    /// Model id.
    pub model: String,
    /// Thinking level.
    pub thinking: String,
    /// Input tokens so far (all of them, cached included).
    pub input: u64,
    /// Output tokens so far.
    pub output: u64,
    /// Of the input, how much was read from the cache.
    pub cache_read: u64,
    /// Dollars so far.
    pub cost: f64,
    /// Tokens in the last request, against the model's window.
    pub context: u64,
    /// The model's context window.
    pub window: u64,
    /// The permission mode.
    pub mode: String,
}

fn short(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// Two dim lines: where (cwd, branch), and what (model, tokens, cost, context).
pub fn footer(info: &FooterInfo, width: usize, theme: &Theme) -> Vec<String> {
    let mut place = match &info.branch {
        Some(b) => format!("{} ({b})", info.cwd),
        None => info.cwd.clone(),
    };
    if !info.mode.is_empty() && info.mode != "default" {
        place.push_str(&format!(" · {} mode (shift+tab to change)", info.mode));
    }
    let cache = (info.cache_read * 100).checked_div(info.input).unwrap_or(0);
    let ctx = (info.context * 100).checked_div(info.window).unwrap_or(0);
    // The cost and the context share always stay; on a narrow terminal the cache share,
    // the thinking level and the token counts go first, then the model's name is cut.
    let money = format!("${:.3} · ", info.cost);
    let ctx_text = format!("ctx {ctx}%");
    let parts = [
        format!("thinking {} · ", info.thinking),
        format!("↑{} ↓{} · ", short(info.input), short(info.output)),
        format!("cache {cache}% · "),
    ];
    let room = width.saturating_sub(ansi::width(&money) + ansi::width(&ctx_text));
    let mut kept = parts.len();
    let line = |kept: usize| -> String {
        let mut s = format!("{} · ", info.model);
        for p in &parts[..kept] {
            s.push_str(p);
        }
        s
    };
    while kept > 0 && ansi::width(&line(kept)) > room {
        kept -= 1;
    }
    let mut stats = line(kept);
    if ansi::width(&stats) > room {
        // Only the model's name is left to cut.
        let model = room.saturating_sub(3);
        stats = if model == 0 {
            String::new()
        } else {
            format!("{} · ", ansi::truncate(&info.model, model, "…"))
        };
    }
    let stats = format!("{stats}{money}");
    // The context share warns as it nears the window (compaction runs at the reserve).
    let ctx_text = match ctx {
        0..80 => theme.dim(&ctx_text),
        80..90 => theme.fg(rab_tui::Role::Warning, &ctx_text),
        _ => theme.fg(rab_tui::Role::Error, &ctx_text),
    };
    vec![
        ansi::truncate(&theme.dim(&place), width, "…"),
        ansi::truncate(&format!("{}{ctx_text}", theme.dim(&stats)), width, "…"),
    ]
}

/// The current git branch, read from `.git/HEAD` of `dir` or an ancestor.
pub fn git_branch(dir: &std::path::Path) -> Option<String> {
    for d in dir.ancestors() {
        let git = d.join(".git");
        let head = if git.is_file() {
            // A worktree: `.git` is a file pointing at the real git dir.
            let text = std::fs::read_to_string(&git).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            std::fs::read_to_string(std::path::Path::new(target).join("HEAD")).ok()?
        } else if git.is_dir() {
            std::fs::read_to_string(git.join("HEAD")).ok()?
        } else {
            continue;
        };
        let head = head.trim();
        return Some(match head.strip_prefix("ref: refs/heads/") {
            Some(branch) => branch.to_owned(),
            None => head.chars().take(8).collect(),
        });
    }
    None
}

/// `dir` with the home directory shown as `~`.
pub fn tilde(dir: &std::path::Path, home: Option<&str>) -> String {
    let s = dir.display().to_string();
    match home {
        Some(h) if !h.is_empty() && s.starts_with(h) => format!("~{}", &s[h.len()..]),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rab_tui::ColorDepth;

    #[test]
    fn footer_fits_the_width_and_shows_the_numbers() {
        let theme = Theme::builtin("dark", ColorDepth::None).unwrap();
        let info = FooterInfo {
            cwd: "~/p".into(),
            branch: Some("main".into()),
            model: "claude-sonnet-5-5".into(),
            thinking: "off".into(),
            input: 12_345,
            output: 987,
            cache_read: 10_000,
            cost: 0.0123,
            context: 50_000,
            window: 200_000,
            mode: "plan".into(),
        };
        let lines = footer(&info, 80, &theme);
        assert_eq!(ansi::strip(&lines[0]), "~/p (main) · plan mode (shift+tab to change)");
        assert_eq!(
            ansi::strip(&lines[1]),
            "claude-sonnet-5-5 · thinking off · ↑12.3k ↓987 · cache 81% · $0.012 · ctx 25%"
        );
        assert!(footer(&info, 30, &theme).iter().all(|l| ansi::width(l) <= 30));
    }

    /// Issue 53: the cost and the context share stay on a narrow terminal.
    #[test]
    fn a_narrow_footer_keeps_the_cost_and_the_context() {
        let theme = Theme::builtin("dark", ColorDepth::None).unwrap();
        let info = FooterInfo {
            cwd: "~/p".into(),
            model: "claude-sonnet-5-5-with-a-long-name".into(),
            thinking: "medium".into(),
            input: 12_345,
            output: 678,
            cost: 0.125,
            context: 50,
            window: 100,
            ..FooterInfo::default()
        };
        for width in [120, 60, 40, 30, 20] {
            let lines = footer(&info, width, &theme);
            assert!(lines.iter().all(|l| ansi::width(l) <= width), "{width}: {lines:?}");
            assert!(
                lines[1].contains("$0.125") && lines[1].contains("ctx 50%"),
                "{width}: {lines:?}"
            );
        }
        assert!(footer(&info, 120, &theme)[1].contains("cache 0%"), "all of it when it fits");
    }

    #[test]
    fn the_context_share_warns_near_the_window() {
        let theme = Theme::builtin("dark", ColorDepth::TrueColor).unwrap();
        let info = |context| FooterInfo {
            cwd: "~/p".into(),
            branch: None,
            model: "m".into(),
            thinking: "off".into(),
            input: 0,
            output: 0,
            cache_read: 0,
            cost: 0.0,
            context,
            window: 100,
            mode: String::new(),
        };
        let ctx = |context| {
            let line = footer(&info(context), 120, &theme).remove(1);
            let at = line.rfind("ctx").unwrap();
            line[..at].rsplit('\x1b').next().unwrap_or_default().to_owned()
        };
        let (calm, near, full) = (ctx(50), ctx(85), ctx(95));
        assert_ne!(calm, near, "a warning colour from 80 %");
        assert_ne!(near, full, "an error colour from 90 %");
        assert_eq!(
            theme.fg(rab_tui::Role::Warning, "x").split('x').next(),
            Some(&*format!("\x1b{near}"))
        );
    }

    #[test]
    fn user_messages_wrap_inside_the_width() {
        let theme = Theme::builtin("dark", ColorDepth::TrueColor).unwrap();
        let lines = user_message(&"word ".repeat(40), 40, &theme);
        assert!(lines.len() > 3);
        assert!(lines.iter().all(|l| ansi::width(l) <= 40));
    }
}
