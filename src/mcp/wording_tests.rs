#![allow(clippy::unwrap_used)]
use super::*;

fn http(name: &str) -> McpServerConfig {
    McpServerConfig {
        url: format!("http://127.0.0.1:9/{name}"),
        ..McpServerConfig::default()
    }
}

fn stdio() -> McpServerConfig {
    McpServerConfig {
        command: "npx".into(),
        ..McpServerConfig::default()
    }
}

/// No Rust path, no generic type, no OS error number, one line.
fn assert_plain(s: &str) {
    assert!(!s.contains("::"), "{s}");
    assert!(!s.contains('<') && !s.contains('>'), "{s}");
    assert!(!s.contains("os error"), "{s}");
    assert!(!s.contains('\n'), "{s}");
}

const WORKER: &str = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<navi::mcp::inspect_http::InspectHttp>>] error: ";

#[test]
fn http_statuses_are_words_with_the_key_to_change() {
    let cases = [
        (
            "unexpected server response: HTTP 404 Not Found: nope",
            "404 Not Found",
            "mcp_servers.w.url",
        ),
        (
            "unexpected server response: HTTP 401 Unauthorized: x",
            "401",
            "mcp_servers.w.headers",
        ),
        ("HTTP 403 Forbidden", "403", "mcp_servers.w.headers"),
        ("HTTP 500", "500 Internal Server Error", "server's side"),
        ("HTTP 405 Method Not Allowed", "405", "mcp_servers.w.url"),
        ("Auth required", "401", "mcp_servers.w.headers"),
    ];
    for (raw, want, key) in cases {
        let raw = format!("{WORKER}{raw}, when send initialize request");
        let s = explain("w", &http("w"), &raw);
        assert_plain(&s);
        assert!(s.contains(want) && s.contains(key), "{raw} -> {s}");
    }
}

#[test]
fn answers_that_are_not_mcp_say_so() {
    let raw = format!(
        "{WORKER}Unexpected content type: Some(\"text/html\"), when send initialize request"
    );
    let s = explain("w", &http("w"), &raw);
    assert_plain(&s);
    assert!(
        s.contains("text/html") && s.contains("mcp_servers.w.url"),
        "{s}"
    );
    let raw = format!(
        "{WORKER}unexpected server response: could not parse JSON response as ServerJsonRpcMessage: unrecognized JSON-RPC message: {{\"a\":1}}"
    );
    let s = explain("w", &http("w"), &raw);
    assert_plain(&s);
    assert!(s.contains("not MCP"), "{s}");
    let raw = "expect initialized result, but received: Some(CustomResult(CustomResult(Object {\"x\": Number(1)})))";
    let s = explain("s", &stdio(), raw);
    assert_plain(&s);
    assert!(
        s.contains("stdout") && s.contains("mcp_servers.s.command"),
        "{s}"
    );
}

#[test]
fn a_closed_stdio_server_and_unknown_texts_lose_the_type_names() {
    let raw = "Send message error Transport [rmcp::transport::async_rw::AsyncRwTransport<rmcp::service::client::RoleClient, navi::mcp::inspect::Inspect<tokio::process::ChildStdout>, tokio::process::ChildStdin>] error: Broken pipe (os error 32), when send initialize request";
    let s = explain("s", &stdio(), raw);
    assert_plain(&s);
    assert!(s.contains("exited"), "{s}");
    let raw = "Send message error Transport [a::B<c::D>] error: something new (os error 99), when send initialize request";
    let s = explain("s", &stdio(), raw);
    assert_plain(&s);
    assert_eq!(s, "something new (sending initialize request)");
    assert_eq!(
        scrub("a::b"),
        "an error in the MCP connection (see navi's log)"
    );
}

#[test]
fn status_is_found_only_as_a_status() {
    assert_eq!(http_status("HTTP 404 Not Found"), Some(404));
    assert_eq!(http_status("Session expired (HTTP 404)"), Some(404));
    assert_eq!(http_status("HTTP 5000"), None);
    assert_eq!(http_status("HTTP/1.1"), None);
    assert_eq!(http_status("no status"), None);
}

#[test]
fn denials_of_a_sandboxed_server_name_the_keys() {
    let cfg = McpServerConfig {
        sandbox: Some(true),
        ..stdio()
    };
    let stderr = [
        "npm error code EACCES",
        "npm error syscall mkdir",
        "npm error path /home/me/.npm/_cacache",
        "npm error Log files were not written due to an error writing to the directory: /home/me/.npm/_logs",
    ];
    let hint = denial_hint("fs", &cfg, &stderr).unwrap();
    assert!(hint.contains("sandbox"), "{hint}");
    assert!(hint.contains("mcp_servers.fs.writable"), "{hint}");
    assert!(hint.contains("mcp_servers.fs.sandbox = false"), "{hint}");
    assert!(hint.contains("/home/me/.npm/_cacache"), "{hint}");
    for sign in [
        "EROFS: read-only file system, open '/x'",
        "PermissionError: [Errno 13] Permission denied: '/x'",
        "socket: Operation not permitted",
    ] {
        assert!(denial_hint("t", &cfg, &[sign]).is_some(), "{sign}");
    }
    assert!(denial_hint("t", &cfg, &["ENOENT: no such file"]).is_none());
    let implied = McpServerConfig {
        network: false,
        ..stdio()
    };
    let hint = denial_hint("t", &implied, &["EPERM"]).unwrap();
    assert!(hint.contains("mcp_servers.t.network = true"), "{hint}");
    assert!(hint.contains("network = false is set"), "{hint}");
}
