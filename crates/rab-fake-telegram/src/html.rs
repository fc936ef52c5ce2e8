//! The Bot API's HTML parse mode, as strictly as Telegram documents it: only its tags,
//! properly nested; `<`, `>` and `&` outside tags and entities escaped; only the named
//! entities `&lt; &gt; &amp; &quot;` and numeric ones. Lengths are what the user sees
//! (tags removed, entities decoded), in UTF-16 code units as Telegram counts them.

const TAGS: [&str; 15] = [
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "span",
    "tg-spoiler",
    "a",
    "code",
    "pre",
    "blockquote",
];

/// Why Telegram would refuse `text` in HTML mode ("can't parse entities"), if it would.
pub fn check_html(text: &str) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                let end = rest.find('>').ok_or("a '<' that starts no tag (escape it as &lt;)")?;
                let tag = &rest[1..end];
                if let Some(name) = tag.strip_prefix('/') {
                    match open.pop() {
                        Some(o) if o == name.trim() => {}
                        Some(o) => return Err(format!("</{name}> closes <{o}>")),
                        None => return Err(format!("</{name}> closes nothing")),
                    }
                } else {
                    let name = tag.split_whitespace().next().unwrap_or_default();
                    if !TAGS.contains(&name) {
                        return Err(format!("unsupported tag <{name}>"));
                    }
                    if name == "a" && !tag.contains("href=\"") {
                        return Err("<a> without href".into());
                    }
                    open.push(name.to_owned());
                }
                rest = &rest[end + 1..];
            }
            '>' => return Err("a bare '>' (escape it as &gt;)".into()),
            '&' => {
                let end =
                    rest.find(';').filter(|e| *e <= 10).ok_or("a bare '&' (escape it as &amp;)")?;
                let entity = &rest[1..end];
                let known = ["lt", "gt", "amp", "quot"].contains(&entity)
                    || entity.strip_prefix('#').is_some_and(|n| {
                        n.parse::<u32>().is_ok()
                            || n.strip_prefix('x')
                                .is_some_and(|h| u32::from_str_radix(h, 16).is_ok())
                    });
                if !known {
                    return Err(format!("unsupported entity &{entity};"));
                }
                rest = &rest[end + 1..];
            }
            _ => rest = &rest[c.len_utf8()..],
        }
    }
    match open.pop() {
        Some(o) => Err(format!("<{o}> is never closed")),
        None => Ok(()),
    }
}

/// The length the user sees: tags removed, entities decoded, in UTF-16 code units.
pub fn visible_len(text: &str) -> usize {
    let mut n = 0;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' if rest.contains('>') => {
                let end = rest.find('>').unwrap_or(rest.len() - 1);
                rest = &rest[end + 1..];
            }
            '&' if rest.find(';').is_some_and(|e| e <= 10) => {
                n += 1;
                let end = rest.find(';').unwrap_or(0);
                rest = &rest[end + 1..];
            }
            _ => {
                n += c.len_utf16();
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telegram_html_is_checked_as_documented() {
        assert!(check_html("<b>bold</b> &lt;x&gt; &amp; <a href=\"https://x.y\">l</a>").is_ok());
        assert!(check_html("<pre><code class=\"language-rust\">fn</code></pre>").is_ok());
        for bad in
            ["a < b", "a > b", "x & y", "<b>open", "<div>x</div>", "<b><i>x</b></i>", "&nbsp;"]
        {
            assert!(check_html(bad).is_err(), "{bad}");
        }
        assert_eq!(visible_len("<b>ab</b>&amp;😀"), 5);
    }
}
