//! The display data each built-in tool gives beside its text (issue 24
//! item 3), through the tools' own interface against real processes, files
//! and a real HTTP server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::protocol::{CommandDisplay, Stopped, ToolDisplay};
use navi::tools::builtin::filesystem::FilesystemTool;
use navi::tools::builtin::http_request::HttpRequestTool;
use navi::tools::builtin::image_view::ImageViewTool;
use navi::tools::builtin::terminal::TerminalTool;
use navi::tools::builtin::web_search::WebSearchTool;
use navi::tools::builtin::web_view::WebViewTool;
use serde_json::json;
use tools_support::*;

fn harness() -> Harness {
    Harness::new(|c, root| {
        c.tools.output_limit_bytes = 3000;
        c.tools.terminal_timeout_secs = 20;
        c.tools.image_max_bytes = 10_000;
        c.security.fs_allowed_paths = vec![root.join("work").display().to_string()];
        c.security.net_allowed_hosts = vec!["127.0.0.1".into()];
    })
}

fn command(r: &navi::tools::ToolResult) -> CommandDisplay {
    match &r.display {
        Some(ToolDisplay::Command(c)) => c.clone(),
        other => panic!("not a command display: {other:?}\n{}", r.output),
    }
}

#[tokio::test]
async fn terminal_reports_exit_code_streams_and_how_it_stopped() {
    let h = harness();
    let line = "echo partial; echo bad >&2; exit 3";
    let r = call(&TerminalTool, json!({"command": line}), &h.ctx()).await;
    assert!(!r.success);
    let c = command(&r);
    assert_eq!(c.command, line);
    assert_eq!(c.exit_code, Some(3));
    assert_eq!(c.stopped, None);
    assert_eq!(
        (c.stdout.as_str(), c.stderr.as_str()),
        ("partial\n", "bad\n")
    );
    assert!(!c.truncated && c.host.is_none());
    assert!(c.duration_ms.is_some());

    let r = call(
        &TerminalTool,
        json!({"command": "sleep 5", "timeout_secs": 1}),
        &h.ctx(),
    )
    .await;
    let c = command(&r);
    assert_eq!(c.exit_code, None);
    assert_eq!(c.stopped, Some(Stopped::Timeout { secs: 1 }));

    let r = call(
        &TerminalTool,
        json!({"command": "head -c 20000 /dev/zero | tr '\\0' x"}),
        &h.ctx(),
    )
    .await;
    let c = command(&r);
    assert_eq!(c.exit_code, Some(0));
    assert!(c.truncated, "{} bytes", c.stdout.len());

    // Refused before anything ran: no display data.
    let r = call(&TerminalTool, json!({"command": "  "}), &h.ctx()).await;
    assert_eq!(r.display, None);
}

#[tokio::test]
async fn filesystem_reads_give_the_line_range_and_writes_a_diff() {
    let h = harness();
    let ctx = h.ctx();
    let r = call(
        &FilesystemTool,
        json!({"action": "write", "path": "a.txt", "content": "one\ntwo\nthree\n"}),
        &ctx,
    )
    .await;
    let path = h.work.join("a.txt").display().to_string();
    match &r.display {
        Some(ToolDisplay::FileWrite(w)) => {
            assert_eq!(w.path, path);
            assert!(w.created && !w.appended);
            assert_eq!((w.added, w.removed, w.bytes), (3, 0, 14));
            assert!(w.diff.as_deref().unwrap().contains("+one\n+two\n+three\n"));
        }
        other => panic!("{other:?}"),
    }
    let r = call(
        &FilesystemTool,
        json!({"action": "write", "path": "a.txt", "content": "one\n2\nthree\n"}),
        &ctx,
    )
    .await;
    match &r.display {
        Some(ToolDisplay::FileWrite(w)) => {
            assert!(!w.created);
            assert_eq!((w.added, w.removed), (1, 1));
            assert!(w.diff.as_deref().unwrap().contains("-two\n+2\n"), "{w:?}");
        }
        other => panic!("{other:?}"),
    }
    let r = call(
        &FilesystemTool,
        json!({"action": "append", "path": "a.txt", "content": "four\n"}),
        &ctx,
    )
    .await;
    match &r.display {
        Some(ToolDisplay::FileWrite(w)) => {
            assert!(w.appended && !w.created);
            assert_eq!((w.added, w.removed, w.bytes), (1, 0, 17));
        }
        other => panic!("{other:?}"),
    }
    let r = call(
        &FilesystemTool,
        json!({"action": "read", "path": "a.txt", "offset": 2, "limit": 2}),
        &ctx,
    )
    .await;
    assert_eq!(
        r.display,
        Some(ToolDisplay::FileRead {
            path,
            first_line: 2,
            last_line: 3,
            total_lines: Some(4),
        })
    );
    // Nothing shown, nothing to draw: a read past the end, a listing, a failure.
    let r = call(
        &FilesystemTool,
        json!({"action": "read", "path": "a.txt", "offset": 50}),
        &ctx,
    )
    .await;
    assert_eq!(r.display, None, "{}", r.output);
    let r = call(
        &FilesystemTool,
        json!({"action": "list", "path": "."}),
        &ctx,
    )
    .await;
    assert_eq!(r.display, None);
    let r = call(
        &FilesystemTool,
        json!({"action": "read", "path": "missing.txt"}),
        &ctx,
    )
    .await;
    assert!(!r.success && r.display.is_none());
}

#[tokio::test]
async fn web_tools_give_url_title_status_and_hits() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/page" => Response::new(
            200,
            "text/html",
            "<html><head><title>Hello Page</title></head><body><p>hi</p></body></html>",
        ),
        "/missing" => Response::new(404, "text/plain", "gone"),
        "/png" => Response::new(200, "image/png", tiny_png()),
        p if p.starts_with("/search?") => Response::new(
            200,
            "application/json",
            json!({"results": [
                {"title": "A", "url": "https://a.example/"},
                {"title": "B", "url": "https://b.example/"}
            ]})
            .to_string(),
        ),
        _ => Response::new(404, "text/plain", "?"),
    })
    .await;
    let h = Harness::new({
        let base = srv.base.clone();
        move |c, _| {
            c.security.net_allowed_hosts = vec!["127.0.0.1".into()];
            c.tools.image_max_bytes = 10_000;
            c.tools.web_search_url = base;
            c.tools.web_search_engine = "searxng".into();
        }
    });
    let ctx = h.ctx();
    let page = format!("{}/page", srv.base);
    let r = call(&WebViewTool, json!({"url": page}), &ctx).await;
    assert_eq!(
        r.display,
        Some(ToolDisplay::Web {
            url: page.clone(),
            title: Some("Hello Page".into()),
            status: Some(200),
            content_type: Some("text/html".into()),
        })
    );
    let missing = format!("{}/missing", srv.base);
    let r = call(&WebViewTool, json!({"url": missing}), &ctx).await;
    assert!(!r.success);
    match &r.display {
        Some(ToolDisplay::Web { status, title, .. }) => {
            assert_eq!((*status, title.as_deref()), (Some(404), None));
        }
        other => panic!("{other:?}"),
    }
    let r = call(&HttpRequestTool, json!({"url": missing}), &ctx).await;
    assert!(!r.success);
    match &r.display {
        Some(ToolDisplay::Web { url, status, .. }) => {
            assert_eq!((url.as_str(), *status), (missing.as_str(), Some(404)));
        }
        other => panic!("{other:?}"),
    }
    let r = call(&WebSearchTool, json!({"query": "two hits"}), &ctx).await;
    assert_eq!(
        r.display,
        Some(ToolDisplay::Search {
            query: "two hits".into(),
            hits: 2,
        })
    );
    let r = call(
        &ImageViewTool,
        json!({"url": format!("{}/png", srv.base)}),
        &ctx,
    )
    .await;
    assert_eq!(
        r.display,
        Some(ToolDisplay::Images {
            count: 1,
            mime: vec!["image/png".into()],
        })
    );
}
