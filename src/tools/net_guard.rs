//! Network exposure of the web tools (`http_request`, `web_view`,
//! `image_view` with a URL): which addresses they may reach without asking.
//!
//! Invariants:
//! - an address is "not public" when it is unspecified, loopback, link-local
//!   (169.254.0.0/16 — cloud metadata — and fe80::/10), private (10/8,
//!   172.16/12, 192.168/16, fc00::/7), CGNAT (100.64/10), "this network"
//!   (0/8), broadcast or multicast; IPv4-mapped/compatible IPv6 addresses are
//!   judged by the IPv4 address inside;
//! - a host is checked by EVERY address it resolves to: one non-public
//!   address makes the whole host non-public;
//! - connections go only to addresses that were checked: the client's
//!   resolver is [`GuardedResolver`] (so every new connection, redirect hops
//!   included, is re-checked at connect time), an approved host is pinned to
//!   the exact addresses the user approved, and a redirect to a non-public
//!   IP literal is refused by [`redirect_policy`];
//! - `[security].net_allowed_hosts` (names, IPs or CIDRs; `"*"` = all) lets
//!   listed destinations through without asking.

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::util::net::parse_cidr;

/// The marker every refusal carries (also lets errors be recognised).
pub(crate) const CONFIG_HINT: &str = "[security].net_allowed_hosts";

/// Most redirects followed.
const MAX_REDIRECTS: usize = 10;

/// Why `ip` is not a public internet address, or `None` when it is.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return non_public_v4(v4);
            }
            let seg = v6.segments();
            // ::a.b.c.d (deprecated IPv4-compatible), but not :: and ::1.
            if seg[..6].iter().all(|&s| s == 0) && !v6.is_unspecified() && !v6.is_loopback() {
                let [a, b] = seg[6].to_be_bytes();
                let [c, d] = seg[7].to_be_bytes();
                return non_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            non_public_v6(v6)
        }
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("unspecified / this-network address")
    } else if ip.is_loopback() {
        Some("loopback address")
    } else if ip.is_link_local() {
        Some("link-local address (cloud metadata lives here)")
    } else if ip.is_private() {
        Some("private network address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("CGNAT shared address")
    } else if ip.is_broadcast() || ip.is_multicast() {
        Some("broadcast/multicast address")
    } else {
        None
    }
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_unspecified() {
        Some("unspecified address")
    } else if ip.is_loopback() {
        Some("loopback address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local address (cloud metadata lives here)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("private (unique local) address")
    } else if first & 0xffc0 == 0xfec0 {
        Some("site-local address")
    } else if ip.is_multicast() {
        Some("multicast address")
    } else {
        None
    }
}

/// The configured allow-list.
#[derive(Clone, Debug, Default)]
pub(crate) struct NetPolicy {
    all: bool,
    hosts: Vec<String>,
    nets: Vec<(IpAddr, u8)>,
}

fn in_net(ip: IpAddr, (net, bits): (IpAddr, u8)) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V4(_)) => a
            .to_ipv4_mapped()
            .is_some_and(|v4| in_net(IpAddr::V4(v4), (net, bits))),
        _ => false,
    }
}

impl NetPolicy {
    /// Entries: `"*"`, an IP, a CIDR (`10.0.0.0/8`), or a host name.
    pub(crate) fn from_config(list: &[String]) -> Self {
        let mut p = NetPolicy::default();
        for e in list.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            if e == "*" {
                p.all = true;
            } else if let Some(net) = parse_cidr(e) {
                p.nets.push(net);
            } else {
                p.hosts.push(e.trim_end_matches('.').to_ascii_lowercase());
            }
        }
        p
    }

    /// Why connecting to `ip` (named `host`) needs approval, or `None`.
    pub(crate) fn blocked(&self, host: &str, ip: IpAddr) -> Option<&'static str> {
        if self.all {
            return None;
        }
        let host = host
            .trim_matches(|c| c == '[' || c == ']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        if self.hosts.contains(&host) || self.nets.iter().any(|n| in_net(ip, *n)) {
            return None;
        }
        non_public(ip)
    }
}

/// The refusal for a host/address pair.
pub(crate) fn refusal(host: &str, ip: IpAddr, why: &str) -> String {
    format!(
        "refused: {host} is {ip}, a {why}, not a public internet address; the tool may reach it only with the user's approval or when it is listed in {CONFIG_HINT}"
    )
}

/// What a URL's host resolved to, and which of those addresses are not public.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Vetted {
    pub(crate) host: String,
    pub(crate) addrs: Vec<SocketAddr>,
    pub(crate) blocked: Vec<(IpAddr, &'static str)>,
}

impl Vetted {
    /// A sentence for the approval question.
    pub(crate) fn reason(&self) -> String {
        let list: Vec<String> = self
            .blocked
            .iter()
            .map(|(ip, why)| format!("{ip} ({why})"))
            .collect();
        format!(
            "{} is not on the public internet: it resolves to {}. Approve only if you trust this call to reach it (add it to {CONFIG_HINT} to stop asking).",
            self.host,
            list.join(", ")
        )
    }
}

/// Resolves the host of `url` and checks every address.
pub(crate) async fn vet(url: &Url, policy: &NetPolicy) -> Result<Vetted, String> {
    let host = url
        .host_str()
        .ok_or_else(|| format!("URL {url} has no host"))?
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_matches(|c| c == '[' || c == ']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| format!("cannot resolve host {host}: {e}; check the URL"))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(format!("host {host} resolved to no address; check the URL"));
    }
    let mut blocked = Vec::new();
    for a in &addrs {
        if let Some(why) = policy.blocked(&host, a.ip())
            && !blocked.iter().any(|(ip, _)| *ip == a.ip())
        {
            blocked.push((a.ip(), why));
        }
    }
    Ok(Vetted {
        host,
        addrs,
        blocked,
    })
}

/// A DNS resolver that refuses hosts with any non-public address.
pub(crate) struct GuardedResolver {
    policy: Arc<NetPolicy>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            for a in &addrs {
                if let Some(why) = policy.blocked(&host, a.ip()) {
                    let err: Box<dyn std::error::Error + Send + Sync> =
                        refusal(&host, a.ip(), why).into();
                    return Err(err);
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Follows at most 10 redirects; refuses a hop to a non-public IP literal
/// unless it is one of `approved`. Hops to names are checked by the resolver.
pub(crate) fn redirect_policy(
    policy: Arc<NetPolicy>,
    approved: Vec<IpAddr>,
) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("stopped after {MAX_REDIRECTS} redirects"));
        }
        let ip = attempt.url().host_str().and_then(|h| {
            h.trim_matches(|c| c == '[' || c == ']')
                .parse::<IpAddr>()
                .ok()
        });
        if let Some(ip) = ip
            && !approved.contains(&ip)
            && let Some(why) = policy.blocked(&ip.to_string(), ip)
        {
            let msg = format!(
                "redirect to {}: {}",
                attempt.url(),
                refusal(&ip.to_string(), ip, why)
            );
            return attempt.error(msg);
        }
        attempt.follow()
    })
}

/// A client for the web tools: guarded resolver and redirect policy; when
/// `pinned` is given (an approved host), that host connects only to the
/// approved addresses.
pub(crate) fn client(
    policy: &NetPolicy,
    pinned: Option<&Vetted>,
) -> Result<reqwest::Client, String> {
    let policy = Arc::new(policy.clone());
    let approved: Vec<IpAddr> = pinned
        .map(|v| v.addrs.iter().map(|a| a.ip()).collect())
        .unwrap_or_default();
    let mut b = reqwest::Client::builder()
        .user_agent(concat!("navi/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(10))
        .dns_resolver(Arc::new(GuardedResolver {
            policy: policy.clone(),
        }))
        .redirect(redirect_policy(policy, approved));
    if let Some(v) = pinned {
        let bare = v.host.trim_matches(|c| c == '[' || c == ']');
        if bare.parse::<IpAddr>().is_err() {
            b = b.resolve_to_addrs(bare, &v.addrs);
        }
    }
    b.build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn classifies_ranges() {
        for s in [
            "127.0.0.1",
            "127.9.9.9",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "fc00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
        ] {
            assert!(non_public(ip(s)).is_some(), "{s}");
        }
        for s in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "1.1.1.1",
        ] {
            assert!(non_public(ip(s)).is_none(), "{s}");
        }
    }

    #[test]
    fn allow_list_by_host_ip_and_cidr() {
        let p =
            NetPolicy::from_config(&["127.0.0.1".into(), "LocalHost".into(), "10.0.0.0/8".into()]);
        assert!(p.blocked("127.0.0.1", ip("127.0.0.1")).is_none());
        assert!(p.blocked("localhost", ip("::1")).is_none());
        assert!(p.blocked("x", ip("10.200.0.1")).is_none());
        assert!(p.blocked("x", ip("::ffff:10.0.0.1")).is_none());
        assert!(p.blocked("x", ip("127.0.0.2")).is_some());
        assert!(p.blocked("x", ip("192.168.0.1")).is_some());
        assert!(
            NetPolicy::from_config(&["*".into()])
                .blocked("x", ip("127.0.0.1"))
                .is_none()
        );
        for ok in [
            "*",
            "localhost",
            "nas.lan",
            "10.0.0.0/8",
            "::1",
            "[::1]",
            "fd00::/8",
        ] {
            assert!(crate::util::net::valid_entry(ok), "{ok}");
        }
        for bad in ["10.0.0.0/99", "", "http://x/", "a b"] {
            assert!(!crate::util::net::valid_entry(bad), "{bad}");
        }
    }
}
