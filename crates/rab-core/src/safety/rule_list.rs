//! One reader for lists of tool names and rules wherever they are written as text: the
//! command line (`--allowed-tools`), and the frontmatter of skills, prompt commands and
//! sub-agents (`allowed-tools: Bash(git status:*), Read`, `tools: [read, grep]`).

/// Splits a list of rules at commas and whitespace outside parentheses, so a rule's
/// pattern keeps its spaces and commas (`Bash(git status:*)`, `bash(ls a,b)`); a list
/// in brackets and quoted items are unwrapped.
pub fn split_rule_list(text: &str) -> Vec<String> {
    let text = text.trim();
    let text = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => inner,
        None => text,
    };
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '"' | '\'' if depth == 0 && quote.is_none() && current.trim().is_empty() => {
                quote = Some(c);
                continue;
            }
            c if quote == Some(c) && depth == 0 => {
                quote = None;
                continue;
            }
            '(' => depth += 1,
            ')' => depth = (depth - 1).max(0),
            ',' if depth == 0 && quote.is_none() => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            c if c.is_whitespace() && depth == 0 && quote.is_none() => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_parentheses_only() {
        assert_eq!(split_rule_list("Bash(git status:*), Read"), ["Bash(git status:*)", "Read"]);
        assert_eq!(
            split_rule_list("Bash(git add:*) Bash(git commit:*)"),
            ["Bash(git add:*)", "Bash(git commit:*)"]
        );
        assert_eq!(split_rule_list("[read, \"bash\", 'grep']"), ["read", "bash", "grep"]);
        assert_eq!(split_rule_list("bash(ls a,b),edit(src/**)"), ["bash(ls a,b)", "edit(src/**)"]);
        assert_eq!(split_rule_list("  "), Vec::<String>::new());
        assert_eq!(split_rule_list("\"Bash(git log:*)\""), ["Bash(git log:*)"]);
    }
}
