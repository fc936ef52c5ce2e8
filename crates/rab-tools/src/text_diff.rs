//! Unified diffs of a file change, for `edit`'s result and `write`'s details. Capped,
//! because a diff goes into the model's context or the session tape, and time-boxed,
//! because a pathological diff must not stall a tool call.

use std::time::Duration;

use similar::TextDiff;

/// Most diff lines kept.
pub(crate) const MAX_DIFF_LINES: usize = 200;
/// Most diff bytes kept.
const MAX_DIFF_BYTES: usize = 16 * 1024;

/// A unified diff from `old` to `new` with `context` lines around each change, headed
/// `--- a/{path}` / `+++ b/{path}`, cut after 200 lines or 16 KB with a
/// note of how much was left out. Empty when the texts are equal.
pub fn unified(old: &str, new: &str, path: &str, context: usize) -> String {
    let diff = TextDiff::configure().timeout(Duration::from_millis(500)).diff_lines(old, new);
    let full = diff
        .unified_diff()
        .context_radius(context)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    cap(&full)
}

fn cap(full: &str) -> String {
    let total = full.lines().count();
    let mut out = String::new();
    for (kept, line) in full.lines().enumerate() {
        if kept == MAX_DIFF_LINES || out.len() + line.len() + 1 > MAX_DIFF_BYTES {
            out.push_str(&format!("… {} more diff lines not shown\n", total - kept));
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn diffs_with_header_and_context() {
        let d = unified("a\nb\nc\nd\n", "a\nB\nc\nd\n", "x.rs", 1);
        assert_eq!(d, "--- a/x.rs\n+++ b/x.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        assert_eq!(unified("same\n", "same\n", "x", 3), "");
    }

    #[test]
    fn long_diffs_are_capped_with_a_note() {
        let old: String = (0..500).map(|i| format!("{i}\n")).collect();
        let d = unified(&old, "", "x", 3);
        assert_eq!(d.lines().count(), MAX_DIFF_LINES + 1);
        assert!(d.ends_with("… 303 more diff lines not shown\n"), "{d}");
    }
}
