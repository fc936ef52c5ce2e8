//! Tool names every provider accepts.
//!
//! Anthropic and OpenAI take `^[a-zA-Z0-9_-]{1,64}$`; Gemini also allows `.` and `:`.
//! One session's history moves between providers (`/model`, fallback models), so names
//! made here follow the strictest rule.

/// The longest tool name every provider accepts.
pub const MAX_TOOL_NAME: usize = 64;

/// `name` with characters outside `[A-Za-z0-9_-]` replaced by `_`, cut to
/// [`MAX_TOOL_NAME`] with a stable hash of `key` when longer.
pub fn portable_tool_name(name: &str, key: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if name.len() <= MAX_TOOL_NAME { name } else { with_hash(&name, key) }
}

/// `name` (ASCII) cut to leave room for `_` and eight hex digits of a hash of `key`.
pub fn with_hash(name: &str, key: &str) -> String {
    let hash = format!("{:08x}", fnv1a(key) as u32);
    let keep = MAX_TOOL_NAME - hash.len() - 1;
    let mut end = name.len().min(keep);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}_{hash}", &name[..end])
}

/// FNV-1a: stable across runs and Rust versions, unlike `DefaultHasher`.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_and_long_ones_cut_with_a_stable_hash() {
        assert_eq!(portable_tool_name("skill.a b", "k"), "skill_a_b");
        let long = format!("skill_{}", "x".repeat(64));
        let fitted = portable_tool_name(&long, "x");
        assert_eq!(fitted.len(), MAX_TOOL_NAME);
        assert!(fitted.starts_with("skill_xxx"), "{fitted}");
        assert_eq!(fitted, portable_tool_name(&long, "x"), "stable");
        assert_ne!(fitted, portable_tool_name(&long, "y"), "the key decides the hash");
        assert_eq!(with_hash("é".repeat(40).as_str(), "k").len(), 54 + 9);
    }
}
