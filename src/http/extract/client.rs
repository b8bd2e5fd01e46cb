//! The client's address as a rate-limit key, read through trusted proxies only.

use actix_web::HttpRequest;
use actix_web::http::header;

/// The client's address for rate limiting, as a key: the address as text, except that an
/// IPv6 address stands for its /64 (one subscriber's usual allocation, so a client cannot
/// take a fresh key per address) and an IPv4-mapped one for its IPv4 address.
///
/// Without a trusted proxy in front, the peer. Behind one (`LEEKHA_TRUST_PROXY`, or the
/// peer in `LEEKHA_TRUSTED_PROXIES`), the right-most forwarded hop that no trusted proxy
/// added: every proxy appends the address it saw, so the entries left of that hop are
/// whatever the client chose to send, and cannot be believed. Of the two headers,
/// `X-Forwarded-For` when there is one, else `Forwarded`: the proxies in use (nginx,
/// HAProxy, the cloud load balancers) append to `X-Forwarded-For` and pass a `Forwarded`
/// on as the client wrote it, so reading that one would let a client choose its key, or
/// name someone else's and spend their quota. (Behind a proxy that writes only `Forwarded`,
/// have it drop a client's `X-Forwarded-For`.)
pub fn client_key(req: &HttpRequest, config: &crate::config::Config) -> String {
    let Some(peer) = req.peer_addr().map(|a| a.ip()) else {
        return "unknown".to_owned();
    };
    if !(config.trust_proxy || config.trusted_proxies.contains(peer)) {
        return rate_key(peer);
    }
    // The header's presence decides, not whether it holds an address: a proxy that writes
    // `X-Forwarded-For: unknown` must not hand the choice to the client's `Forwarded`.
    let hops = if req.headers().contains_key("x-forwarded-for") {
        x_forwarded_hops(req.headers())
    } else {
        forwarded_hops(req.headers())
    };
    let client = hops
        .iter()
        .rev()
        .find(|hop| !config.trusted_proxies.contains(**hop))
        .or(hops.first())
        .copied()
        .unwrap_or(peer);
    rate_key(client)
}

/// The rate-limit key of one address (see [`client_key`]).
fn rate_key(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                format!("{net}/64")
            }
        },
    }
}

/// The values of header `name`, split at commas, trimmed.
fn header_list(headers: &header::HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .collect()
}

/// The client addresses that `Forwarded` (RFC 7239 `for=`) lists, first hop first; entries
/// that are not IP addresses (`unknown`, obfuscated names) are skipped.
fn forwarded_hops(headers: &header::HeaderMap) -> Vec<std::net::IpAddr> {
    header_list(headers, "forwarded")
        .into_iter()
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (key, value) = pair.trim().split_once('=')?;
                key.eq_ignore_ascii_case("for")
                    .then(|| value.trim().trim_matches('"').to_owned())
            })
        })
        .filter_map(|hop| parse_hop(&hop))
        .collect()
}

/// The addresses `X-Forwarded-For` lists, first hop first, as [`forwarded_hops`].
fn x_forwarded_hops(headers: &header::HeaderMap) -> Vec<std::net::IpAddr> {
    header_list(headers, "x-forwarded-for")
        .iter()
        .filter_map(|hop| parse_hop(hop))
        .collect()
}

/// `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`.
fn parse_hop(hop: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = hop.parse() {
        return Some(ip);
    }
    if let Ok(addr) = hop.parse::<std::net::SocketAddr>() {
        return Some(addr.ip());
    }
    hop.strip_prefix('[')?.split(']').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;
    use crate::config::Config;

    fn config(vars: &[(&str, &str)]) -> Config {
        Config::from_lookup(|k| {
            vars.iter()
                .find(|(v, _)| *v == k)
                .map(|(_, x)| x.to_string())
        })
        .unwrap()
    }

    fn ip_of(config: &Config, peer: &str, headers: &[(&str, &str)]) -> String {
        let mut req = TestRequest::default().peer_addr(peer.parse().unwrap());
        for (name, value) in headers {
            req = req.insert_header((*name, *value));
        }
        client_key(&req.to_http_request(), config)
    }

    #[test]
    fn forwarded_headers_count_only_behind_a_trusted_proxy() {
        let spoofed = [("x-forwarded-for", "6.6.6.6")];
        assert_eq!(
            ip_of(&config(&[]), "203.0.113.9:5000", &spoofed),
            "203.0.113.9"
        );
        let behind = config(&[("LEEKHA_TRUSTED_PROXIES", "10.0.0.0/8")]);
        assert_eq!(ip_of(&behind, "203.0.113.9:5000", &spoofed), "203.0.113.9");
        assert_eq!(ip_of(&behind, "10.1.2.3:5000", &spoofed), "6.6.6.6");
    }

    #[test]
    fn the_client_is_the_right_most_hop_no_trusted_proxy_added() {
        // The client sent a forged first entry; its real address was appended by our proxy.
        let chain = [("x-forwarded-for", "1.2.3.4, 198.51.100.7, 10.0.0.2")];
        let behind = config(&[("LEEKHA_TRUSTED_PROXIES", "10.0.0.0/8")]);
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &chain), "198.51.100.7");
        // With only the peer trusted, the hop it appended is the client.
        let one_hop = config(&[("LEEKHA_TRUST_PROXY", "1")]);
        assert_eq!(
            ip_of(
                &one_hop,
                "10.0.0.1:80",
                &[("x-forwarded-for", "1.2.3.4, 198.51.100.7")]
            ),
            "198.51.100.7"
        );
        // RFC 7239, with ports and brackets; an IPv6 client stands for its /64.
        let forwarded = [(
            "forwarded",
            "for=1.2.3.4, for=\"[2001:db8::7]:4711\";proto=https",
        )];
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &forwarded), "2001:db8::/64");
        // Both headers: X-Forwarded-For, which the proxy appended to; the Forwarded the
        // client wrote neither chooses its key nor names someone else's.
        let both = [
            ("forwarded", "for=1.1.12.7"),
            ("x-forwarded-for", "9.9.9.12"),
        ];
        assert_eq!(ip_of(&one_hop, "10.0.0.1:80", &both), "9.9.9.12");
        // An X-Forwarded-For without an address leaves the peer, not the client's Forwarded.
        let unknown = [
            ("forwarded", "for=1.1.12.7"),
            ("x-forwarded-for", "unknown"),
        ];
        assert_eq!(ip_of(&one_hop, "10.0.0.1:80", &unknown), "10.0.0.1");
        // Every hop trusted: the first one.
        let inner = [("x-forwarded-for", "10.9.9.9, 10.0.0.2")];
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &inner), "10.9.9.9");
    }

    #[test]
    fn an_ipv6_client_is_counted_by_its_slash_64_and_a_mapped_ipv4_as_ipv4() {
        let one_hop = config(&[("LEEKHA_TRUST_PROXY", "1")]);
        let a = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:2::1")],
        );
        let b = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:2:ffff::6")],
        );
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(a, b);
        let other = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:3::1")],
        );
        assert_ne!(a, other);
        assert_eq!(
            ip_of(
                &one_hop,
                "10.0.0.1:80",
                &[("x-forwarded-for", "::ffff:9.9.9.7")]
            ),
            "9.9.9.7"
        );
        assert_eq!(ip_of(&config(&[]), "[::ffff:9.9.9.7]:80", &[]), "9.9.9.7");
    }

    #[test]
    fn a_bad_trusted_proxy_list_is_refused() {
        assert!(crate::config::TrustedProxies::parse("10.0.0.0/8, nonsense").is_err());
        assert!(crate::config::TrustedProxies::parse("").unwrap() == Default::default());
    }
}
