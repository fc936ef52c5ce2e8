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
