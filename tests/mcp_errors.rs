//! MCP failures reach the user as one line of words — which server, what
//! failed, which key to change — never as the SDK's Rust type names, `Debug`
//! dumps or OS error numbers. Real `navi mcp check` against HTTP endpoints
//! that answer wrongly (a canned HTTP server on 127.0.0.1) and stdio
//! programs that are not MCP servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support::env::Env;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves every request with `status`, `content_type` and `body`; returns
/// its port.
async fn canned(status: &'static str, content_type: &'static str, body: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // The request: headers, then content-length bytes of body.
                loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    port
}

fn assert_words(line: &str) {
    for bad in ["::", "<", "os error", "Some(", "Transport [", "Object {"] {
        assert!(!line.contains(bad), "{bad:?} in: {line}");
    }
}

#[tokio::test]
async fn failed_servers_are_reported_in_words_with_the_key_to_change() {
    let http = [
        (
            "notfound",
            canned("404 Not Found", "text/plain", "no").await,
        ),
        (
            "auth",
            canned("401 Unauthorized", "text/plain", "who?").await,
        ),
        (
            "forbidden",
            canned("403 Forbidden", "text/plain", "no").await,
        ),
        (
            "broken",
            canned("500 Internal Server Error", "text/plain", "x").await,
        ),
        ("html", canned("200 OK", "text/html", "<html></html>").await),
        (
            "notmcp",
            canned("200 OK", "application/json", "{\"hello\":1}").await,
        ),
    ];
    let mut config = String::new();
    for (name, port) in &http {
        config.push_str(&format!(
            "[mcp_servers.{name}]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
        ));
    }
    config.push_str(
        "[mcp_servers.exits]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'cannot load plugin' >&2; exit 3\"]\n\
         [mcp_servers.chatty]\ncommand = \"sh\"\nargs = [\"-c\", \"echo '{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":0,\\\"result\\\":{\\\"x\\\":1}}'; sleep 30\"]\n\
         [mcp_servers.missing]\ncommand = \"navi-test-no-such-program\"\n",
    );
    let env = Env::new(&config, &[]);
    let (code, out, err) = env.navi(None, &["mcp", "check"]).await;
    assert_eq!(code, 1, "{out}\n{err}");
    let line = |name: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"))
            .to_string()
    };
    for l in out.lines().filter(|l| !l.starts_with(' ')) {
        assert_words(l);
    }
    let expect = [
        (
            "notfound",
            ["HTTP 404 Not Found", "mcp_servers.notfound.url"],
        ),
        ("auth", ["HTTP 401", "mcp_servers.auth.headers"]),
        ("forbidden", ["HTTP 403", "mcp_servers.forbidden.headers"]),
        ("broken", ["HTTP 500", "server's side"]),
        ("html", ["text/html", "mcp_servers.html.url"]),
        ("notmcp", ["not MCP", "mcp_servers.notmcp.url"]),
        ("exits", ["exited with code 3", "cannot load plugin"]),
        ("chatty", ["not MCP", "mcp_servers.chatty.command"]),
        ("missing", ["not found", "mcp_servers.missing.command"]),
    ];
    for (name, wants) in expect {
        let l = line(name);
        for w in wants {
            assert!(l.contains(w), "{name}: {w:?} missing in: {l}");
        }
    }
    // The same words where a front end shows them: the start-up warning of
    // `navi mcp tools --json` and `/mcp` come from the same state.
    let (_, out, _) = env.navi(None, &["mcp", "tools", "--json"]).await;
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    for row in rows.as_array().unwrap() {
        let state = row["state"].as_str().unwrap();
        assert!(state.starts_with("failed: "), "{state}");
        assert_words(state);
    }
}
