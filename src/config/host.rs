//! `OLLAMA_HOST` read the way the ollama CLI reads it, so the variable that
//! already works for `ollama run` works for Navi too.
//!
//! Accepted: `host`, `host:port`, `:port`, `[v6]:port`, a bare IPv6 address,
//! each with or without `http://` / `https://`, optionally with a path (a
//! reverse proxy). No port means 11434, except that an explicit `https://`
//! without a port means 443. `0.0.0.0` and `::` are the addresses a server
//! listens on, not ones to connect to: they become the loopback address.

pub(crate) const DEFAULT_PORT: u16 = 11434;

/// The base URL for an `OLLAMA_HOST` value, or why it cannot be one.
pub(crate) fn ollama_host_url(raw: &str) -> Result<String, String> {
    let s = raw.trim();
    let (scheme, rest) = match s.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_string(), s),
    };
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "unsupported scheme {scheme}://; use http:// or https://"
        ));
    }
    let default_port = if scheme == "https" { 443 } else { DEFAULT_PORT };
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = split_host_port(hostport)?;
    let host = match host.as_str() {
        "" | "0.0.0.0" => "127.0.0.1".to_string(),
        "::" | "::0" => "[::1]".to_string(),
        h if h.contains(':') => format!("[{h}]"),
        h => h.to_string(),
    };
    let port = port.unwrap_or(default_port);
    Ok(format!("{scheme}://{host}:{port}{path}"))
}

/// `host:port`, `[v6]:port`, `[v6]`, bare `v6`, `host`, `:port`.
fn split_host_port(hp: &str) -> Result<(String, Option<u16>), String> {
    let parse_port = |p: &str| -> Result<Option<u16>, String> {
        if p.is_empty() {
            return Ok(None);
        }
        p.parse::<u16>()
            .map(Some)
            .map_err(|_| format!("bad port {p:?}: expected a number from 1 to 65535"))
    };
    if let Some(inner) = hp.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| format!("unclosed '[' in {hp:?}"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => parse_port(p)?,
            None if after.is_empty() => None,
            None => return Err(format!("unexpected {after:?} after the IPv6 address")),
        };
        return Ok((host.to_string(), port));
    }
    match hp.matches(':').count() {
        0 => Ok((hp.to_string(), None)),
        1 => {
            let (h, p) = hp.split_once(':').unwrap_or((hp, ""));
            Ok((h.to_string(), parse_port(p)?))
        }
        // A bare IPv6 address (no brackets, so no port).
        _ => Ok((hp.to_string(), None)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn forms_the_ollama_cli_accepts() {
        let cases = [
            ("", "http://127.0.0.1:11434"),
            ("0.0.0.0", "http://127.0.0.1:11434"),
            ("0.0.0.0:8080", "http://127.0.0.1:8080"),
            ("127.0.0.1", "http://127.0.0.1:11434"),
            ("localhost", "http://localhost:11434"),
            ("example.com:1234", "http://example.com:1234"),
            ("http://example.com", "http://example.com:11434"),
            ("https://example.com", "https://example.com:443"),
            ("https://example.com:8443/", "https://example.com:8443"),
            ("http://box:11434/ollama/", "http://box:11434/ollama"),
            ("[::1]:9999", "http://[::1]:9999"),
            ("[::1]", "http://[::1]:11434"),
            ("::1", "http://[::1]:11434"),
            (":7000", "http://127.0.0.1:7000"),
            ("  HTTP://Host:1  ", "http://Host:1"),
        ];
        for (raw, want) in cases {
            assert_eq!(ollama_host_url(raw).unwrap(), want, "{raw:?}");
        }
        assert!(ollama_host_url("ftp://h").is_err());
        assert!(ollama_host_url("h:notaport").is_err());
        assert!(ollama_host_url("h:99999").is_err());
        assert!(ollama_host_url("[::1").is_err());
    }
}
