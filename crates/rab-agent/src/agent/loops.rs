//! Runaway loops: a weak or confused model can repeat itself until a time limit — the
//! same tool call with the same arguments reply after reply, or the same sentence
//! over and over inside one reply. Both are caught (as Gemini CLI does) and end the
//! run with a notice saying what repeated: [`StopCause::Loop`](crate::StopCause).
//!
//! - **Calls.** A reply whose tool calls (names and arguments) are the same as the
//!   previous reply's counts one more repeat; at `call_repeats` in a row its calls are
//!   not run.
//! - **Text.** While a reply streams, the tail of its text is checked for a period: a
//!   stretch of at least `text_repeats` copies of the same piece of 30–1000 characters
//!   (at least 600 in all) cuts the reply off. Text inside a code block never counts
//!   (generated data may well repeat).

use rab_ai::ToolCall;

/// When a run counts as looping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopDetection {
    /// Off: never stop a run for repeating itself.
    pub enabled: bool,
    /// Replies in a row with the same tool calls.
    pub call_repeats: u32,
    /// Copies in a row of the same piece of text in one reply.
    pub text_repeats: u32,
}

impl Default for LoopDetection {
    fn default() -> Self {
        Self { enabled: true, call_repeats: 5, text_repeats: 10 }
    }
}

/// The shortest and longest repeating piece of text looked for.
const MIN_PERIOD: usize = 30;
const MAX_PERIOD: usize = 1000;
/// The least repeated text that counts.
const MIN_LOOP: usize = 600;
/// How much new text comes between two checks.
const CHECK_EVERY: usize = 256;

/// Watches one run's replies.
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    config: LoopDetection,
    last_calls: Option<String>,
    call_streak: u32,
    /// The reply streaming now, and how far it was checked.
    text: String,
    checked: usize,
}

impl LoopGuard {
    pub(crate) fn new(config: LoopDetection) -> Self {
        Self { config, ..Self::default() }
    }

    /// A new run: nothing repeated yet.
    pub(crate) fn reset(&mut self) {
        self.last_calls = None;
        self.call_streak = 0;
        self.start_reply();
    }

    /// A reply starts streaming.
    pub(crate) fn start_reply(&mut self) {
        self.text.clear();
        self.checked = 0;
    }

    /// More text of the reply streaming: what repeats when it loops.
    pub(crate) fn text(&mut self, delta: &str) -> Option<String> {
        if !self.config.enabled {
            return None;
        }
        self.text.push_str(delta);
        if self.text.len() < self.checked + CHECK_EVERY {
            return None;
        }
        self.checked = self.text.len();
        // Inside a fenced code block: generated data, not a stuck model.
        if self.text.matches("```").count() % 2 == 1 {
            return None;
        }
        let repeats = usize::try_from(self.config.text_repeats.max(2)).unwrap_or(10);
        let piece = repeated_tail(&self.text, repeats)?;
        // Shown from a sentence's start where the piece has one.
        let piece = match piece.find(['.', '\n']).map(|i| i + 1) {
            Some(at) if at < piece.len() => format!("{}{}", &piece[at..], &piece[..at]),
            _ => piece,
        };
        let shown: String = piece.trim().chars().take(80).collect();
        Some(format!("the same text {repeats} times in a row in one reply (\"{shown}…\")"))
    }

    /// A reply is complete, with these tool calls: what repeats when they are the
    /// previous replies' once too often.
    pub(crate) fn reply(&mut self, calls: &[ToolCall]) -> Option<String> {
        if !self.config.enabled {
            return None;
        }
        let calls: Vec<String> =
            calls.iter().map(|c| format!("{}({})", c.name, c.arguments)).collect();
        if calls.is_empty() {
            self.last_calls = None;
            self.call_streak = 0;
            return None;
        }
        let key = calls.join("; ");
        if self.last_calls.as_ref() == Some(&key) {
            self.call_streak += 1;
        } else {
            self.last_calls = Some(key.clone());
            self.call_streak = 1;
        }
        if self.call_streak < self.config.call_repeats.max(2) {
            return None;
        }
        let shown: String = key.chars().take(160).collect();
        Some(format!("the same tool call {} times in a row: {shown}", self.call_streak))
    }
}

/// The piece the end of `text` repeats `repeats` times or more, if it does: found with
/// the prefix function of the reversed tail (the smallest period of each suffix).
fn repeated_tail(text: &str, repeats: usize) -> Option<String> {
    let tail: Vec<char> = text.chars().rev().take(MAX_PERIOD * repeats.min(20)).collect();
    let n = tail.len();
    if n < MIN_LOOP {
        return None;
    }
    let mut pi = vec![0usize; n];
    for i in 1..n {
        let mut k = pi[i - 1];
        while k > 0 && tail[i] != tail[k] {
            k = pi[k - 1];
        }
        if tail[i] == tail[k] {
            k += 1;
        }
        pi[i] = k;
    }
    // The longest suffix of the text that is a repetition of a short piece.
    (MIN_LOOP..=n).rev().find_map(|len| {
        let period = len - pi[len - 1];
        let whole = len / period;
        let ok = (MIN_PERIOD..=MAX_PERIOD).contains(&period) && whole >= repeats;
        ok.then(|| tail[..period].iter().rev().collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(guard: &mut LoopGuard, text: &str) -> Option<String> {
        text.as_bytes()
            .chunks(40)
            .find_map(|c| guard.text(std::str::from_utf8(c).unwrap_or_default()))
    }

    #[test]
    fn a_sentence_repeated_over_and_over_is_caught_and_ordinary_text_is_not() {
        let mut g = LoopGuard::new(LoopDetection::default());
        let stuck = "I will read the file src/main.rs to see what it does. ".repeat(20);
        let found = feed(&mut g, &format!("Let me look.\n{stuck}")).unwrap();
        assert!(
            found.contains("the same text 10 times") && found.contains("I will read the file"),
            "{found}"
        );
        // Prose, a long list, a markdown rule and repeated code are not loops.
        g.start_reply();
        let prose: String = (0..200).map(|i| format!("Step {i}: do thing number {i}. ")).collect();
        assert_eq!(feed(&mut g, &prose), None);
        g.start_reply();
        assert_eq!(feed(&mut g, &format!("{}\n", "-".repeat(2000))), None, "period 1 is too short");
        g.start_reply();
        let code =
            format!("```\n{}```\n", "assert_eq!(parse(\"x\"), Ok(Value::Null));\n".repeat(40));
        assert_eq!(feed(&mut g, &code), None, "inside a code block");
    }

    #[test]
    fn the_same_calls_in_a_row_are_caught_at_the_limit() {
        let reply = |cmd: &str| -> Vec<ToolCall> {
            let call =
                serde_json::json!({"id": "c", "name": "bash", "arguments": {"command": cmd}});
            vec![serde_json::from_value(call).unwrap()]
        };
        let mut g = LoopGuard::new(LoopDetection { call_repeats: 3, ..LoopDetection::default() });
        assert_eq!(g.reply(&reply("ls")), None);
        assert_eq!(g.reply(&reply("ls")), None);
        assert_eq!(g.reply(&reply("pwd")), None, "another call starts over");
        assert_eq!(g.reply(&reply("pwd")), None);
        let found = g.reply(&reply("pwd")).unwrap();
        assert!(found.contains("3 times in a row") && found.contains("pwd"), "{found}");
        let mut off = LoopGuard::new(LoopDetection { enabled: false, ..LoopDetection::default() });
        for _ in 0..10 {
            assert_eq!(off.reply(&reply("ls")), None);
        }
    }
}
