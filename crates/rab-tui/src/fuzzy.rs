//! A small fuzzy matcher for completion: the query's characters must appear in order in
//! the candidate (case-insensitively); the score rewards consecutive runs, matches at word
//! starts (after `/`, `_`, `-`, `.`, space, or a lower→upper case change) and a match at
//! the very start, and penalises gaps and long candidates. Good enough to rank a few
//! thousand paths per keystroke without an index.

/// Scores `candidate` against `query`; `None` when the query is not a subsequence.
/// Higher is better; an empty query matches everything with score 0.
pub fn score(query: &str, candidate: &str) -> Option<i64> {
    match_positions(query, candidate).map(|(s, _)| s)
}

/// Like [`score`], also returning the char indices of the matched characters (for
/// highlighting them in a list).
pub fn match_positions(query: &str, candidate: &str) -> Option<(i64, Vec<usize>)> {
    if query.is_empty() {
        return Some((0, Vec::new()));
    }
    let cand: Vec<char> = candidate.chars().collect();
    let q: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    // Greedy left-to-right matching, but each query char prefers a word-start occurrence
    // within the remaining candidate when one exists before the next query char is needed.
    // This keeps the matcher linear while ranking "src/main.rs" above "scratch/mains" for
    // "sm".
    let mut positions = Vec::with_capacity(q.len());
    let mut ci = 0;
    for (qi, &qc) in q.iter().enumerate() {
        let first = (ci..cand.len()).find(|&i| lower_eq(cand[i], qc))?;
        let mut pick = first;
        let prev_matched = positions.last().is_some_and(|&p: &usize| p + 1 == first);
        if !prev_matched && !is_word_start(&cand, first) {
            // Look ahead for a word-start occurrence that still leaves room for the rest.
            let rest = q.len() - qi - 1;
            if let Some(ws) = (first + 1..cand.len().saturating_sub(rest))
                .find(|&i| lower_eq(cand[i], qc) && is_word_start(&cand, i))
            {
                pick = ws;
            }
        }
        positions.push(pick);
        ci = pick + 1;
    }
    // Verify the lookahead did not strand later query chars; fall back to plain greedy.
    if !is_subsequence_at(&q, &cand, &positions) {
        positions.clear();
        let mut ci = 0;
        for &qc in &q {
            let i = (ci..cand.len()).find(|&i| lower_eq(cand[i], qc))?;
            positions.push(i);
            ci = i + 1;
        }
    }
    Some((rank(&q, &cand, &positions), positions))
}

fn is_subsequence_at(q: &[char], cand: &[char], positions: &[usize]) -> bool {
    positions.len() == q.len()
        && positions.windows(2).all(|w| w[0] < w[1])
        && positions.iter().zip(q).all(|(&p, &c)| cand.get(p).is_some_and(|&x| lower_eq(x, c)))
}

fn rank(q: &[char], cand: &[char], positions: &[usize]) -> i64 {
    let mut s: i64 = 0;
    for (k, &p) in positions.iter().enumerate() {
        s += 10;
        if is_word_start(cand, p) {
            s += 15;
        }
        if p == 0 {
            s += 20;
        }
        if k > 0 && positions[k - 1] + 1 == p {
            s += 20;
        } else if k > 0 {
            s -= (p - positions[k - 1] - 1).min(10) as i64;
        }
        // Exact case is a small tiebreak.
        if cand[p] == q[k] {
            s += 1;
        }
    }
    // Matches within the last path component count more: "main" should rank
    // "src/main.rs" above "main/deep/other.rs".
    let base_start = cand.iter().rposition(|&c| c == '/').map_or(0, |i| i + 1);
    let in_base = positions.iter().filter(|&&p| p >= base_start).count() as i64;
    s += in_base * 5;
    // Unmatched characters cost a little: "mode" beats "model" for "mod".
    s - (cand.len() - positions.len()) as i64 / 2
}

fn lower_eq(c: char, lower: char) -> bool {
    c == lower || c.to_lowercase().eq(std::iter::once(lower))
}

fn is_word_start(cand: &[char], i: usize) -> bool {
    let Some(&c) = cand.get(i) else { return false };
    let Some(&prev) = i.checked_sub(1).and_then(|j| cand.get(j)) else { return true };
    matches!(prev, '/' | '\\' | '_' | '-' | '.' | ' ' | ':')
        || (prev.is_lowercase() && c.is_uppercase())
        || (!prev.is_alphanumeric() && c.is_alphanumeric())
}

/// Filters and sorts `items` by the score of `key(item)` against `query`, best first;
/// ties keep the input order.
pub fn filter_sorted<T, F>(query: &str, items: impl IntoIterator<Item = T>, key: F) -> Vec<T>
where
    F: Fn(&T) -> &str,
{
    let mut scored: Vec<(i64, usize, T)> = items
        .into_iter()
        .enumerate()
        .filter_map(|(i, it)| score(query, key(&it)).map(|s| (s, i, it)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, it)| it).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requires_subsequence_case_insensitively() {
        assert!(score("mdl", "model").is_some());
        assert!(score("MOD", "model").is_some());
        assert!(score("xyz", "model").is_none());
        assert!(score("ledom", "model").is_none());
        assert_eq!(score("", "anything"), Some(0));
    }

    #[test]
    fn prefers_prefixes_word_starts_and_short_names() {
        assert!(score("mo", "model").unwrap() > score("mo", "xxmoxx").unwrap());
        assert!(score("sm", "src/main.rs").unwrap() > score("sm", "scratch/plasma").unwrap());
        assert!(
            score("main", "src/main.rs").unwrap() > score("main", "main/deep/other.rs").unwrap()
        );
        assert!(score("abc", "abc").unwrap() > score("abc", "abcdefghijklmnop").unwrap());
    }

    #[test]
    fn positions_point_at_matched_chars() {
        let (_, pos) = match_positions("sm", "src/main.rs").unwrap();
        assert_eq!(pos, vec![0, 4]);
        let (_, pos) = match_positions("ab", "xaxb").unwrap();
        assert_eq!(pos, vec![1, 3]);
    }

    #[test]
    fn filter_sorted_orders_best_first() {
        let items = ["resume", "model", "compact", "mode"];
        let got = filter_sorted("mod", items, |s| s);
        assert_eq!(got, vec!["mode", "model"]);
    }
}
