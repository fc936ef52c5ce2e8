//! Semantic prompt marks (OSC 133, FinalTerm's shell integration): they tell the
//! terminal where each prompt, its input and its output begin, so terminals that know
//! them (kitty, WezTerm, iTerm2, Ghostty, foot, Windows Terminal, VS Code's terminal,
//! tmux 3.4) can jump from prompt to prompt and select one answer whole. Terminals that
//! do not know them ignore them. They take no cells: `ansi::width` counts them as zero.

/// A prompt starts here (`OSC 133 ; A`).
pub const PROMPT_START: &str = "\x1b]133;A\x07";
/// The prompt ends and what was typed starts (`OSC 133 ; B`).
pub const INPUT_START: &str = "\x1b]133;B\x07";
/// What was typed ends and its output starts (`OSC 133 ; C`).
pub const OUTPUT_START: &str = "\x1b]133;C\x07";

/// The output ended, with an exit status (`OSC 133 ; D ; status`): 0 for an answer
/// given, non-zero for a run that failed or was interrupted.
pub fn finished(status: u8) -> String {
    format!("\x1b]133;D;{status}\x07")
}

/// Marks `lines` (a message the user sent, as committed) as a prompt and its input:
/// the prompt starts on the first line (after `done`, the end of the output before
/// it), the input on the second (the first of the text, after a blank spacer line),
/// and the output after the last.
pub fn mark_prompt(lines: &mut [String], done: Option<u8>) {
    let before = done.map(finished).unwrap_or_default();
    match lines {
        [] => return,
        [only] => only.insert_str(0, &format!("{before}{PROMPT_START}{INPUT_START}")),
        [first, second, ..] => {
            first.insert_str(0, &format!("{before}{PROMPT_START}"));
            second.insert_str(0, INPUT_START);
        }
    }
    if let Some(last) = lines.last_mut() {
        last.push_str(OUTPUT_START);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_marked_as_prompt_input_and_output_and_takes_no_cells() {
        let mut lines = vec![String::new(), "  fix the parser".to_owned(), "  please".to_owned()];
        mark_prompt(&mut lines, Some(0));
        assert_eq!(lines[0], "\x1b]133;D;0\x07\x1b]133;A\x07");
        assert_eq!(lines[1], "\x1b]133;B\x07  fix the parser");
        assert_eq!(lines[2], "  please\x1b]133;C\x07");
        assert_eq!(crate::ansi::width(&lines[1]), 16);
        let mut one = vec!["hi".to_owned()];
        mark_prompt(&mut one, None);
        assert_eq!(one[0], "\x1b]133;A\x07\x1b]133;B\x07hi\x1b]133;C\x07");
    }
}
