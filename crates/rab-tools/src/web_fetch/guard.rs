//! Which addresses `web_fetch` may reach. A model that can fetch any URL could read the
//! user's local services (an admin page on 127.0.0.1, a cloud metadata endpoint on
//! 169.254.169.254, a router on 192.168.0.1), so by default every URL is checked before
//! each request, redirects included: the host is resolved and every address it resolves
//! to must be public. The HTTP client's own resolver applies the same rule when it
//! connects, so a name that resolves to a public address for the check and to a private
//! one a moment later (DNS rebinding) is refused too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `ip` is loopback, private, link-local or otherwise not on the public internet
/// (the rule `web_fetch` and plugins' network grants share).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private_v4(v4),
            None => is_private_v6(v6),
        },
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        // 0.0.0.0/8 reaches the local host on Linux; 100.64.0.0/10 is carrier-grade NAT.
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        // 192.0.0.0/24 protocol assignments; 192.0.2.0/24, 198.51.100.0/24 and
        // 203.0.113.0/24 documentation; 198.18.0.0/15 benchmarking; 240.0.0.0/4 reserved.
        || (a == 192 && b == 0 && (c == 0 || c == 2))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let first = s[0];
    // IPv4 carried inside IPv6 reaches what that IPv4 address reaches: NAT64
    // (64:ff9b::/96), 6to4 (2002::/16) and the old IPv4-compatible form (::/96).
    let embedded =
        |hi: u16, lo: u16| is_private_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 the old site-local.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        // 64:ff9b:1::/48 local-use NAT64; 2001::/32 Teredo; 2001:db8::/32 documentation.
        || (first == 0x64 && s[1] == 0xff9b && s[2] == 1)
        || (first == 0x2001 && (s[1] == 0 || s[1] == 0xdb8))
        || (first == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] && embedded(s[6], s[7]))
        || (first == 0x2002 && embedded(s[1], s[2]))
        || (s[..6] == [0, 0, 0, 0, 0, 0] && embedded(s[6], s[7]))
}

/// What every refusal says (how a caller recognises one in an error's causes).
pub(crate) const REFUSED: &str = "a loopback, private or link-local address";

/// Why a URL may not be fetched.
fn refusal(host: &str, ip: IpAddr) -> String {
    format!(
        "refused to fetch {host}: it is at {ip}, {REFUSED}; web_fetch only reaches public \
         addresses"
    )
}

/// Checks a URL before it is requested: http or https, a host, and, unless private
/// addresses are allowed, only public addresses behind the host.
pub(crate) async fn check_url(url: &Url, is_private_allowed: bool) -> Result<(), String> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!("only http and https URLs can be fetched, not {scheme}: {url}"));
    }
    let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(format!("{url} has no host"));
    };
    if is_private_allowed {
        return Ok(());
    }
    // An IPv6 literal comes bracketed; an IP literal is never looked up.
    let literal = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>();
    let ips: Vec<IpAddr> = match literal {
        Ok(ip) => vec![ip],
        Err(_) => {
            let port = url.port_or_known_default().unwrap_or(80);
            tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?
                .map(|a| a.ip())
                .collect()
        }
    };
    match ips.into_iter().find(|ip| is_private(*ip)) {
        Some(ip) => Err(refusal(host, ip)),
        None => Ok(()),
    }
}

/// The HTTP client's resolver: the system's, refusing private addresses unless allowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GuardedResolver {
    pub(crate) is_private_allowed: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let is_private_allowed = self.is_private_allowed;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !is_private_allowed && let Some(bad) = addrs.iter().find(|a| is_private(a.ip())) {
                return Err(refusal(&host, bad.ip()).into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_private_and_link_local_addresses_are_private() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "::127.0.0.1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "198.18.0.1",
            "198.19.255.255",
            "240.0.0.1",
            "255.255.255.254",
            "224.0.0.1",
            "239.255.255.250",
            "ff02::1",
            "ff0e::1",
            "192.0.2.1",
            "192.0.0.8",
            "203.0.113.9",
            "198.51.100.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} should be private");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "198.20.0.1",
            "223.255.255.255",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} should be public");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_for_scheme_host_and_address() {
        let check = |u: &str| {
            let url = Url::parse(u).unwrap();
            async move { check_url(&url, false).await }
        };
        assert_eq!(
            check("file:///etc/passwd").await,
            Err("only http and https URLs can be fetched, not file: file:///etc/passwd".into())
        );
        assert_eq!(
            check("http://127.0.0.1:8080/").await,
            Err(refusal("127.0.0.1", "127.0.0.1".parse().unwrap()))
        );
        assert_eq!(check("http://[::1]/").await, Err(refusal("[::1]", "::1".parse().unwrap())));
        let err = check("http://localhost/").await.unwrap_err();
        assert!(err.starts_with("refused to fetch localhost: it is at "), "{err}");
        let url = Url::parse("http://127.0.0.1/").unwrap();
        assert_eq!(check_url(&url, true).await, Ok(()));
    }
}
