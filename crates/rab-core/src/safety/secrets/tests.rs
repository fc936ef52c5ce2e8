use super::*;
use pretty_assertions::assert_eq;

#[test]
fn known_values_are_replaced_by_their_name() {
    let r = Redactor::new([("ANTHROPIC_API_KEY".to_owned(), "abc123-secret-value".to_owned())]);
    let (text, found) = r.redact("key is abc123-secret-value.");
    assert_eq!(text, "key is [REDACTED: ANTHROPIC_API_KEY].");
    assert_eq!(found, ["ANTHROPIC_API_KEY"]);
}

#[test]
fn key_shapes_are_recognised_at_word_boundaries_only() {
    let r = Redactor::default();
    let input = "a sk-proj-abcdefghijklmnopqrstuvwx b ghp_abcdefghijklmnopqrstuvwxyz0123456789 \
                 c AKIAIOSFODNN7EXAMPLE d task-manager sk-short";
    let (text, _) = r.redact(input);
    assert_eq!(
        text,
        "a [REDACTED: API key (sk-…)] b [REDACTED: GitHub token] c [REDACTED: AWS access key id] \
         d task-manager sk-short"
    );
}

#[test]
fn pem_private_keys_go_whole_and_certificates_stay() {
    let r = Redactor::default();
    let input = "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\nBBBB\n-----END OPENSSH PRIVATE KEY-----\ny\n\
                 -----BEGIN CERTIFICATE-----\nCCCC\n-----END CERTIFICATE-----\n";
    let (text, found) = r.redact(input);
    assert_eq!(
        text,
        "x\n[REDACTED: private key]\ny\n-----BEGIN CERTIFICATE-----\nCCCC\n-----END CERTIFICATE-----\n"
    );
    assert_eq!(found, ["private key"]);
}

#[test]
fn env_files_teach_their_values_and_secret_assignments_are_hidden() {
    let r = Redactor::default();
    r.learn_env_file(
        "1\tDATABASE_URL=postgres://u:hunter2hunter2@db/x\n2\t# c\n3\texport PORT=8080\n",
    );
    let (text, _) = r.redact("connecting to postgres://u:hunter2hunter2@db/x on 8080");
    assert_eq!(text, "connecting to [REDACTED: value of DATABASE_URL from a .env file] on 8080");
    let (text, _) = r.redact("  7\tSTRIPE_SECRET=whsec_0123456789\nNAME=plain-value-here\n");
    assert_eq!(
        text,
        "  7\tSTRIPE_SECRET=[REDACTED: value of STRIPE_SECRET]\nNAME=plain-value-here\n"
    );
}

#[test]
fn a_known_secret_reversed_hex_or_base64_at_any_offset_is_redacted_too() {
    use base64::Engine;
    let key = "sk-stored-0123456789abcdef";
    let r = Redactor::new([("OPENAI_API_KEY".to_owned(), key.to_owned())]);
    let reversed: String = key.chars().rev().collect();
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    for (what, text) in [("reversed", reversed), ("hex", hex.clone()), ("hex", hex.to_uppercase())]
    {
        let (out, found) = r.redact(&format!("x {text} y"));
        assert!(!out.contains(&text), "{what}: {out}");
        assert_eq!(found, [format!("OPENAI_API_KEY, {what}")]);
    }
    // Base64 of a file holding the key, wherever the key sits: `base64 auth.json`.
    for pad in ["", "a", "ab", "abc"] {
        for engine in
            [base64::engine::general_purpose::STANDARD, base64::engine::general_purpose::URL_SAFE]
        {
            let file = format!("{{\"openai\":{{\"key\":\"{pad}{key}\"}}}}");
            let encoded = engine.encode(file.as_bytes());
            let (out, found) = r.redact(&encoded);
            assert!(found.iter().any(|f| f.ends_with("base64")), "{pad:?}: {out}");
            let back = engine.decode(out.replace("[REDACTED: OPENAI_API_KEY, base64]", "AAAA"));
            let back = back.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
            assert!(!back.contains(key), "{pad:?}: what is left decodes to the key: {back}");
        }
    }
}

/// Class 3 of the third containment audit: a known secret printed spaced out, dashed,
/// quoted in pieces or split across lines is still found; short values and ordinary
/// text are left alone.
#[test]
fn known_secrets_are_found_with_separators_inserted_and_split_across_lines() {
    let token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
    let r = Redactor::new([("the Telegram bot token".to_owned(), token.to_owned())]);
    let spaced: String = token.chars().flat_map(|c| [c, ' ']).collect();
    let dashed: String = token.chars().map(String::from).collect::<Vec<_>>().join("-");
    let (half, rest) = token.split_at(20);
    for printed in [
        spaced.clone(),
        dashed,
        format!("{half}\n{rest}"),
        format!("'{half}' '{rest}'"),
        format!("{half}\r\n  | {rest}"),
    ] {
        let (text, found) = r.redact(&format!("before {printed} after"));
        assert!(text.contains("[REDACTED: the Telegram bot token]"), "{printed:?}: {text}");
        assert!(text.starts_with("before ") && text.ends_with(" after"), "{printed:?}: {text}");
        assert!(!text.contains("AAHdq") && !text.contains("LDsaw"), "{text}");
        assert_eq!(found, ["the Telegram bot token"]);
    }
    // Ordinary text, and a value too short to look for loosely, stay.
    let r = Redactor::new([("short".to_owned(), "abcd-efgh".to_owned())]);
    let (text, found) = r.redact("a b c d e f g h, and ab-cd-ef-gh");
    assert_eq!(text, "a b c d e f g h, and ab-cd-ef-gh");
    assert!(found.is_empty());
    // Non-ASCII text around a match keeps its characters whole.
    let r = Redactor::new([("k".to_owned(), "sk-ant-0123456789abcdef".to_owned())]);
    let (text, _) = r.redact("ключ: sk-ant-01234 56789abcdef — готово");
    assert_eq!(text, "ключ: [REDACTED: k] — готово");
}

/// A diff's `+`/`-` marker does not hide a secret assignment (`git log -p`), and what a
/// read-denied file holds is learned: its values and its longer lines.
#[test]
fn diff_lines_and_read_denied_files_are_masked() {
    let r = Redactor::default();
    let (text, _) = r.redact("+DB_PASSWORD=hunter2hunter2\n-API_TOKEN=abcdefgh1234\n same=1\n");
    assert_eq!(
        text,
        "+DB_PASSWORD=[REDACTED: value of DB_PASSWORD]\n-API_TOKEN=[REDACTED: value of \
         API_TOKEN]\n same=1\n"
    );
    let learned = r.learn_denied_file(
        "secret.txt",
        "the launch code is 4417-0932-8861-2205\nshort\nNAME=plain-value-here\n",
        10,
    );
    assert_eq!(learned, 2, "two lines of 20 characters or more");
    let (text, _) =
        r.redact("git show: the launch code is 4417-0932-8861-2205 (and plain-value-here)");
    assert!(!text.contains("4417") && !text.contains("plain-value-here"), "{text}");
    assert_eq!(r.learn_denied_file("big", &"x".repeat(30), 0), 0, "no budget left");
}
