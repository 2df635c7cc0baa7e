//! MCP failures in words. The SDK's errors print the transport's Rust type
//! (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`), a
//! `Debug` dump of what arrived and the step they wrapped ("when send
//! initialize request"); a user needs what failed and what to change.
//!
//! Invariants: every error navi shows about an MCP server's start or call
//! goes through [`explain`] (or is navi's own sentence); what comes out is one
//! line without a Rust path (`a::b`), a generic type or an OS error number,
//! and names the `mcp_servers.<name>.*` key to change where one would help.
use crate::config::McpServerConfig;
use crate::config::mcp::McpTransport;

/// Why talking to server `name` failed, from the SDK's error text `raw` (all
/// of its chain, see [`chain`]).
pub(crate) fn explain(name: &str, cfg: &McpServerConfig, raw: &str) -> String {
    let lower = raw.to_lowercase();
    let key = |k: &str| format!("mcp_servers.{name}.{k}");
    let http = cfg.transport_kind() == McpTransport::Http;
    if lower.contains("session expired") {
        return "the server no longer knows navi's session (HTTP 404: was it restarted?); \
                navi connects again on the next call"
            .into();
    }
    if let Some(code) = http_status(raw) {
        return status_words(code, &key);
    }
    if lower.contains("auth required") || lower.contains("authorization required") {
        return status_words(401, &key);
    }
    if lower.contains("insufficient scope") {
        return status_words(403, &key);
    }
    if let Some(rest) = after(raw, "unexpected content type:") {
        let kind: String = rest
            .trim()
            .trim_start_matches("Some(")
            .trim_start_matches('"')
            .chars()
            .take_while(|c| !matches!(c, '"' | ')' | ',' | ';'))
            .collect();
        let kind = if kind.is_empty() || kind == "None" {
            "no content type".to_string()
        } else {
            kind
        };
        return format!(
            "the server answered with {kind}, not MCP (JSON or an event stream); is it an MCP endpoint? check {}",
            key("url")
        );
    }
    if [
        "could not parse json",
        "unrecognized json-rpc",
        "deserialize error",
        "expect initialized",
        "unexpected response type",
    ]
    .iter()
    .any(|s| lower.contains(s))
    {
        return if http {
            format!(
                "its answer is not MCP (JSON-RPC); is it an MCP endpoint? check {}",
                key("url")
            )
        } else {
            format!(
                "what it wrote on stdout is not MCP (JSON-RPC); is it an MCP server speaking stdio? check {} and {}",
                key("command"),
                key("args")
            )
        };
    }
    if lower.contains("exceeded the maximum size") {
        return "its answer is larger than navi accepts (64 MB)".into();
    }
    if [
        "broken pipe",
        "connection closed",
        "transport closed",
        "channel closed",
        "unexpected end of stream",
        "connection reset",
    ]
    .iter()
    .any(|s| lower.contains(s))
    {
        return if http {
            "the server closed the connection before answering".into()
        } else {
            "the server exited (or closed its output) before answering".into()
        };
    }
    if let Some(why) = super::connect::known_http_reason(&lower) {
        return why;
    }
    for marker in ["json-rpc error:", "mcp error:"] {
        if let Some(rest) = after(raw, marker) {
            return format!("the server answered with an error: {}", scrub(rest));
        }
    }
    if lower.contains("request timeout") || lower.contains("timed out") {
        return "no answer in time".into();
    }
    scrub(raw)
}

/// An error and every error below it, as one text for [`explain`]
/// (transport errors keep the useful part, "Connection refused", in their
/// sources).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        next = s.source();
    }
    text
}

/// `raw` after `marker` (matched without case), if it is there.
fn after<'a>(raw: &'a str, marker: &str) -> Option<&'a str> {
    let at = raw.to_lowercase().find(marker)?;
    // Lower-casing keeps ASCII byte offsets; anything else: give up.
    raw.get(at + marker.len()..)
}

/// The status of an HTTP answer named in the text (`HTTP 404 Not Found`).
fn http_status(raw: &str) -> Option<u16> {
    raw.match_indices("HTTP ").find_map(|(i, _)| {
        let digits: String = raw[i + 5..].chars().take(4).collect();
        let code = digits.get(..3)?;
        let next = digits[3..].chars().next();
        if next.is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        code.parse::<u16>().ok().filter(|c| (100..600).contains(c))
    })
}

fn status_words(code: u16, key: &dyn Fn(&str) -> String) -> String {
    let reason = reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let head = format!("the server answered HTTP {code}{reason}");
    match code {
        401 => format!(
            "{head}: it wants credentials; set them in {} (e.g. Authorization = \"Bearer …\")",
            key("headers")
        ),
        403 => format!(
            "{head}: the credentials in {} are not allowed this",
            key("headers")
        ),
        404 | 405 | 410 => format!(
            "{head}: no MCP endpoint at this address; check the path in {} (often /mcp)",
            key("url")
        ),
        500..=599 => format!("{head} (a fault on the server's side; see its log)"),
        _ => format!("{head}; check {}", key("url")),
    }
}

/// Best effort for a text no rule above knows: the SDK's wrappers, Rust
/// paths and OS error numbers out, on one line.
pub(crate) fn scrub(raw: &str) -> String {
    let mut s = raw.replace('\n', " ");
    // `Transport [<a Rust type>] error: ` around the real cause.
    while let Some(start) = s.find("Transport [") {
        let Some(end) = closing_bracket(&s, start + "Transport ".len()) else {
            break;
        };
        let tail = s[end + 1..]
            .trim_start()
            .trim_start_matches("error:")
            .to_string();
        s = format!("{}{}", &s[..start], tail.trim_start());
    }
    for wrapper in ["Send message error ", "Transport fatal "] {
        s = s.replace(wrapper, "");
    }
    s = s.replace(", when send ", " (sending ");
    if s.contains(" (sending ") && !s.ends_with(')') {
        s.push(')');
    }
    let words: Vec<&str> = s.split_whitespace().filter(|w| !w.contains("::")).collect();
    let mut out = words.join(" ");
    while let Some(at) = out.find(" (os error ") {
        match out[at..].find(')') {
            Some(end) => out.replace_range(at..at + end + 1, ""),
            None => break,
        }
    }
    if out.trim().is_empty() {
        "an error in the MCP connection (see navi's log)".into()
    } else {
        out
    }
}

/// The index of the `]` closing the `[` at `open`.
fn closing_bracket(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// What programs print when a write or a socket is refused: Landlock gives
/// EACCES, a read-only carve-out EROFS, the network filter EPERM; npm says
/// it could not write its logs.
const DENIAL_SIGNS: [&str; 10] = [
    "eacces",
    "erofs",
    "eperm",
    "permission denied",
    "read-only file system",
    "operation not permitted",
    "log files were not written",
    "[errno 1]",
    "[errno 13]",
    "[errno 30]",
];

pub(crate) fn looks_denied(text: &str) -> bool {
    let lower = text.to_lowercase();
    DENIAL_SIGNS.iter().any(|s| lower.contains(s))
}

/// For a server navi sandboxed whose failure (`texts`: the error, its
/// stderr, a tool's error result) looks like a refused write or socket: a
/// sentence saying so, naming the keys to change. `None` otherwise.
pub(crate) fn denial_hint(name: &str, cfg: &McpServerConfig, texts: &[&str]) -> Option<String> {
    let denied: Vec<&str> = texts
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| looks_denied(l) || l.contains(" path /"))
        .collect();
    if !denied.iter().any(|l| looks_denied(l)) {
        return None;
    }
    let path = denied.iter().find_map(|l| {
        l.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ','))
            .find(|w| w.starts_with('/') && w.len() > 1)
    });
    let what = match path {
        Some(p) => format!(" (it could not write {p})"),
        None => String::new(),
    };
    let network = if cfg.network {
        String::new()
    } else {
        format!(", {} = true if it needs the network", key(name, "network"))
    };
    Some(format!(
        "this looks like navi's sandbox refusing it{what}: the server runs sandboxed ({}); \
         add the directories it writes to {}{network}, or set {} = false to run it as you would \
         start it yourself",
        if cfg.sandbox == Some(true) {
            format!("{} = true", key(name, "sandbox"))
        } else {
            format!(
                "because {} or network = false is set",
                key(name, "writable")
            )
        },
        key(name, "writable"),
        key(name, "sandbox"),
    ))
}

fn key(name: &str, k: &str) -> String {
    format!("mcp_servers.{name}.{k}")
}

#[cfg(test)]
#[path = "wording_tests.rs"]
mod tests;
