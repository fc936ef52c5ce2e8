//! Matching a call against a rule's pattern: hosts as a fetch reaches them, command
//! words against globs and prefixes.

/// The host a fetch of `url` reaches, parsed as the fetch parses it (WHATWG rules:
/// `\\` is `/`, userinfo is dropped, IDN hosts in punycode, lowercase, IPv4 in any of
/// its spellings as dotted decimal), in one canonical form ([`canonical`]).
pub(super) fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    parsed.host().map(canonical)
}

/// A rule's `domain:HOST` in the form [`host_of`] gives.
pub(super) fn rule_host(domain: &str) -> Result<String, String> {
    let host = url::Host::parse(domain).map_err(|e| format!("domain:{domain}: {e}"))?;
    Ok(canonical(match &host {
        url::Host::Domain(d) => url::Host::Domain(d.as_str()),
        url::Host::Ipv4(ip) => url::Host::Ipv4(*ip),
        url::Host::Ipv6(ip) => url::Host::Ipv6(*ip),
    }))
}

/// One form for every spelling of a host: domains lowercase without a final dot, an
/// IPv4 address mapped into IPv6 (`[::ffff:1.2.3.4]`, which connects to 1.2.3.4) as
/// the IPv4 address, other IPv6 addresses bracketed.
fn canonical(host: url::Host<&str>) -> String {
    match host {
        url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        },
    }
}

/// Whether one command's text matches a rule's glob, or its prefix (`cmd:*`: the
/// words themselves or followed by more).
pub(super) fn command_matches(text: &str, glob: &str, is_prefix: bool) -> bool {
    if is_prefix {
        text == glob || text.strip_prefix(glob).is_some_and(|r| r.starts_with(char::is_whitespace))
    } else {
        wildcard(glob, text)
    }
}

/// `*` matches any run of characters; everything else literally.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let pieces: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = pieces.as_slice() else { return pattern == text };
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    for piece in middle {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}
