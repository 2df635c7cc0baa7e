//! Network addresses and ranges as written in the config (`[security].net_allowed_hosts`).
use std::net::IpAddr;

/// An IP or a CIDR (`10.0.0.0/8`, `[fd00::]/8`) as `(address, prefix length)`.
pub(crate) fn parse_cidr(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = match s.split_once('/') {
        Some((ip, bits)) => (ip, Some(bits)),
        None => (s, None),
    };
    let ip: IpAddr = ip.trim_matches(|c| c == '[' || c == ']').parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits = match bits {
        Some(b) => b.parse::<u8>().ok().filter(|b| *b <= max)?,
        None => max,
    };
    Some((ip, bits))
}

/// Whether a `net_allowed_hosts` entry makes sense: `"*"`, an IP, a CIDR
/// with a valid prefix length, or something that can be a host name.
pub(crate) fn valid_entry(e: &str) -> bool {
    let e = e.trim();
    if e == "*" || parse_cidr(e).is_some() {
        return true;
    }
    !e.is_empty()
        && !e.contains('/')
        && e.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}
