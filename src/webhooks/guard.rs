//! The address guard of webhook deliveries. A webhook's URL is chosen by a user, and the
//! server is the one that connects: without this guard a webhook would reach into the
//! server's own network (its loopback, its cloud metadata service, its neighbours). Only
//! addresses on the public internet pass.
//!
//! IPv6 has several forms that carry an IPv4 address (mapped, translated, compatible,
//! NAT64, 6to4, Teredo); a host's stack or its network may route them to that IPv4
//! address, so they are judged by the address they carry, not as IPv6.
//!
//! A name is judged where it is resolved for the connection ([`GuardedResolver`]), so the
//! addresses judged are the ones dialled: a name that resolves to a public address when
//! checked and to a private one a moment later (DNS rebinding) gains nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// IPv4 ranges that are not the public internet, and what they are (RFC 6890 and its
/// updates).
const V4_REFUSED: &[(&str, &str)] = &[
    ("0.0.0.0/8", "\"this network\""),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared address space"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved, broadcast included"),
];

/// IPv6 ranges that are not the public internet, and what they are (RFC 6890 and its
/// updates). Checked after the forms that carry IPv4, which some of them contain.
const V6_REFUSED: &[(&str, &str)] = &[
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("2001:2::/48", "benchmarking"),
    ("2001:10::/28", "ORCHID"),
    ("2001:20::/28", "ORCHIDv2"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("fc00::/7", "unique-local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
];

/// Whether `ip` is in the range written `cidr` (a constant of this module).
fn within(ip: IpAddr, cidr: &str) -> bool {
    cidr.parse::<IpNet>()
        .expect("the ranges of this module are valid")
        .contains(&ip)
}

/// The name and the range of the first of `ranges` that holds `ip`.
fn first_holding(ip: IpAddr, ranges: &[(&str, &str)]) -> Option<String> {
    ranges
        .iter()
        .find(|(cidr, _)| within(ip, cidr))
        .map(|(cidr, name)| match name.split_once(", ") {
            // "reserved, broadcast included" reads "reserved (240.0.0.0/4, broadcast included)".
            Some((name, note)) => format!("{name} ({cidr}, {note})"),
            None => format!("{name} ({cidr})"),
        })
}

/// The IPv4 addresses an IPv6 address carries, with the name of its form: where a packet
/// to it may really go. Teredo carries two (the server, and the client obfuscated by
/// inverting its bits); the others one.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<(&'static str, Vec<Ipv4Addr>)> {
    let bits = u128::from(v6);
    let low32 = Ipv4Addr::from(bits as u32);
    let s = v6.segments();
    let pair = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let ip = IpAddr::V6(v6);
    if within(ip, "::ffff:0:0/96") {
        Some(("IPv4-mapped", vec![low32]))
    } else if within(ip, "::ffff:0:0:0/96") {
        Some(("IPv4-translated", vec![low32]))
    } else if within(ip, "64:ff9b::/96") {
        Some(("NAT64", vec![low32]))
    } else if within(ip, "2002::/16") {
        Some(("6to4", vec![pair(s[1], s[2])]))
    } else if within(ip, "2001::/32") {
        Some(("Teredo", vec![pair(s[2], s[3]), !low32]))
    } else if within(ip, "::/96") && bits > 1 {
        // `::` and `::1` are IPv6's own unspecified and loopback, named as such below.
        Some(("IPv4-compatible", vec![low32]))
    } else {
        None
    }
}

/// Why `ip` is not an address a delivery may connect to, or `None` when it is on the
/// public internet. The reason names the range (and, for IPv6 carrying IPv4, the form and
/// the address it carries).
pub fn refusal(ip: IpAddr) -> Option<String> {
    let IpAddr::V6(v6) = ip else {
        return first_holding(ip, V4_REFUSED);
    };
    if let Some((form, carried)) = embedded_ipv4(v6) {
        return carried.into_iter().find_map(|v4| {
            first_holding(IpAddr::V4(v4), V4_REFUSED)
                .map(|why| format!("{form} form of {v4}, {why}"))
        });
    }
    // Only 2000::/3 is allocated as global unicast; the rest is reserved.
    first_holding(ip, V6_REFUSED).or_else(|| {
        (!within(ip, "2000::/3")).then(|| "reserved (outside global unicast 2000::/3)".to_owned())
    })
}

/// Whether an address is on the public internet (see [`refusal`]).
pub fn is_public(ip: IpAddr) -> bool {
    refusal(ip).is_none()
}

/// The resolver of the delivery agent: resolves once per connection, and refuses the
/// connection when any address is not public (unless private addresses are allowed), so the
/// connection goes to an address that was judged.
#[derive(Debug)]
pub struct GuardedResolver {
    inner: Box<dyn Resolver>,
    allow_private: bool,
}

impl GuardedResolver {
    /// The system's resolver, guarded; `allow_private` lets every address through (local
    /// receivers in development and tests).
    pub fn new(allow_private: bool) -> Self {
        Self::over(DefaultResolver::default(), allow_private)
    }

    /// Guards another resolver.
    pub fn over(inner: impl Resolver, allow_private: bool) -> Self {
        Self {
            inner: Box::new(inner),
            allow_private,
        }
    }
}

impl Resolver for GuardedResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        if !self.allow_private {
            for addr in addrs.iter() {
                if let Some(why) = refusal(addr.ip()) {
                    let host = uri.host().unwrap_or_default();
                    return Err(ureq::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        // The address and its range stay unsaid (see `check_url`); the
                        // log of the refusal says `why`.
                        {
                            tracing::debug!(%host, ip = %addr.ip(), %why, "address refused");
                            format!(
                                "{host} resolves to an address that is not public: only \
                                 public addresses are allowed"
                            )
                        },
                    )));
                }
            }
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_reserved_and_embedded_private_addresses_are_refused() {
        for (ip, why) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "shared address space"),
            ("0.0.0.0", "this network"),
            ("0.1.2.3", "this network"),
            ("192.0.0.1", "IETF protocol assignments"),
            ("192.0.2.1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("198.51.100.1", "documentation"),
            ("203.0.113.1", "documentation"),
            ("224.0.0.1", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"),
            ("::ffff:7f00:1", "IPv4-mapped form of 127.0.0.1"),
            ("::ffff:0:7f00:1", "IPv4-translated form of 127.0.0.1"),
            ("::127.0.0.1", "IPv4-compatible form of 127.0.0.1"),
            ("::a9fe:a9fe", "IPv4-compatible form of 169.254.169.254"),
            ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"),
            ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
            ("64:ff9b:1::1.1.1.1", "local-use NAT64"),
            ("2002:7f00:1::", "6to4 form of 127.0.0.1"),
            ("2002:a00:1::1", "6to4 form of 10.0.0.1"),
            // Teredo: server 65.54.227.120, client 127.0.0.1 with its bits inverted.
            (
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                "Teredo form of 127.0.0.1",
            ),
            ("2001:0:a00:1::", "Teredo form of 10.0.0.1"),
            ("fec0::1", "site-local"),
            ("fd00::1", "unique-local"),
            ("fc00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "benchmarking"),
            ("2001:20::1", "ORCHIDv2"),
            ("2001:100::1", "IETF protocol assignments"),
            ("100::1", "discard-only"),
            ("5f00::1", "reserved"),
            ("::1:2:3:4:5", "reserved"),
        ] {
            let addr: IpAddr = ip.parse().unwrap();
            let reason = refusal(addr).unwrap_or_else(|| panic!("{ip} passed"));
            assert!(reason.contains(why), "{ip}: {reason}");
            assert!(!is_public(addr), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass_in_every_form() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.128.0.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001:82a::200e",
            "::ffff:1.1.1.1",
            "64:ff9b::101:101",
            "2002:101:101::1",
            // Teredo: server 65.54.227.120, client 8.8.8.8.
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
        ] {
            assert_eq!(refusal(ip.parse().unwrap()), None, "{ip}");
        }
    }
}
