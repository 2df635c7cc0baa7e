//! The web tools against a real HTTP server on 127.0.0.1: http_request,
//! web_view, web_search (DuckDuckGo HTML and SearXNG JSON) and image_view.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::tools::Tool;
use navi::tools::builtin::http_request::HttpRequestTool;
use navi::tools::builtin::image_view::ImageViewTool;
use navi::tools::builtin::web_search::WebSearchTool;
use navi::tools::builtin::web_view::WebViewTool;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tools_support::*;

fn harness(search_url: Option<String>, engine: &str) -> Harness {
    let engine = engine.to_string();
    Harness::new(move |c, _| {
        c.tools.output_limit_bytes = 3000;
        c.tools.fetch_max_bytes = 50_000;
        c.tools.http_timeout_secs = 5;
        c.tools.image_max_bytes = 10_000;
        // The test server is on loopback, which needs approval unless allowed.
        c.security.net_allowed_hosts = vec!["127.0.0.1".into()];
        if let Some(u) = search_url {
            c.tools.web_search_url = u;
        }
        c.tools.web_search_engine = engine;
    })
}

async fn api_server() -> TestServer {
    TestServer::start(|req| match req.path.as_str() {
        "/json" => Response::new(200, "application/json", r#"{"ok":true}"#),
        "/echo" => {
            let mut r = Response::new(201, "text/plain", req.body.clone());
            r.headers.push(("X-Method".into(), req.method.clone()));
            r
        }
        "/missing" => Response::new(404, "text/plain", "no such thing"),
        "/boom" => Response::new(500, "text/plain", "internal error"),
        "/big" => Response::new(200, "text/plain", "abcdefghij".repeat(20_000)),
        "/bin" => Response::new(200, "application/octet-stream", vec![0u8, 1, 2, 255, 0, 7]),
        "/png" => Response::new(200, "image/png", tiny_png()),
        "/lying-png" => Response::new(200, "image/png", "<html>not an image</html>"),
        "/slow" => Response::new(200, "text/plain", "late").delayed(Duration::from_secs(3)),
        "/page" => Response::new(
            200,
            "text/html; charset=utf-8",
            "<html><head><title>Rust &amp; Tools</title><style>p{color:red}</style></head>\
             <body><h1>Welcome</h1><p>Read the <a href=\"/docs\">docs</a> today.</p>\
             <ul><li>first item</li><li>second item</li></ul><script>var x=1;</script></body></html>",
        ),
        "/long" => Response::new(
            200,
            "text/html",
            format!("<html><body>{}</body></html>", "<p>paragraph text here</p>".repeat(2000)),
        ),
        _ => Response::new(404, "text/plain", "?"),
    })
    .await
}

#[tokio::test]
async fn http_get_post_headers_and_json_body() {
    let srv = api_server().await;
    let h = harness(None, "duckduckgo");
    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/json", srv.base)}),
        &h.ctx(),
    )
    .await;
    let out = ok_text(&r);
    assert!(out.starts_with("HTTP/1.1 200 OK\n"), "{out}");
    assert!(out.contains("content-type: application/json"), "{out}");
    assert!(out.ends_with("\n\n{\"ok\":true}"), "{out}");
    assert_eq!(r.metadata["status"], 200);

    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/echo", srv.base), "method": "post",
               "headers": {"X-Token": "abc", "X-Num": 5}, "body": {"name": "navi", "n": [1, 2]}}),
        &h.ctx(),
    )
    .await;
    let out = ok_text(&r);
    assert!(out.contains("201"), "{out}");
    assert!(out.contains("x-method: POST"), "{out}");
    let req = srv
        .requests()
        .into_iter()
        .find(|r| r.path == "/echo")
        .unwrap();
    assert_eq!(req.method, "POST");
    assert_eq!(req.header("x-token"), Some("abc"));
    assert_eq!(req.header("x-num"), Some("5"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    let sent: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(sent, json!({"name": "navi", "n": [1, 2]}));

    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/echo", srv.base), "method": "PUT", "body": "raw text"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).ends_with("raw text"));
    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/json", srv.base), "method": "HEAD"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("(HEAD: no body)"));
}

#[tokio::test]
async fn http_errors_caps_and_binary() {
    let srv = api_server().await;
    let h = harness(None, "duckduckgo");
    let ctx = h.ctx();
    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/missing", srv.base)}),
        &ctx,
    )
    .await;
    assert!(err_text(&r).contains("HTTP 404 Not Found"), "{:?}", r.error);
    assert!(
        r.output.contains("no such thing"),
        "the body is still shown"
    );
    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/boom", srv.base)}),
        &ctx,
    )
    .await;
    assert!(err_text(&r).contains("500"));

    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/big", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(out.len() < 3500, "{} bytes", out.len());
    assert!(out.contains("output truncated"), "shown part is capped");
    assert!(
        out.contains("body cut at 50.0 KB"),
        "download is capped: {}",
        &out[out.len() - 200..]
    );

    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/bin", srv.base)}),
        &ctx,
    )
    .await;
    assert!(
        ok_text(&r).contains("[binary body: application/octet-stream, 6 B"),
        "{}",
        r.output
    );

    let r = call(&HttpRequestTool, json!({"url": dead_url()}), &ctx).await;
    let e = err_text(&r);
    assert!(
        e.contains("could not connect") && e.contains("127.0.0.1"),
        "{e}"
    );

    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/slow", srv.base), "timeout_secs": 1}),
        &ctx,
    )
    .await;
    assert!(err_text(&r).contains("timed out"), "{:?}", r.error);

    for (args, want) in [
        (json!({}), "missing required argument 'url'"),
        (json!({"url": "ftp://x/y"}), "unsupported URL scheme 'ftp'"),
        (json!({"url": "not a url"}), "invalid URL"),
        (
            json!({"url": srv.base.clone(), "method": "TRACE"}),
            "http_request: unknown method 'TRACE'; use one of GET, POST, PUT, PATCH, DELETE, HEAD",
        ),
        (
            json!({"url": srv.base.clone(), "headers": "x"}),
            "'headers' must be an object",
        ),
        (
            json!({"url": srv.base.clone(), "headers": {"bad name": "v"}}),
            "invalid header name",
        ),
    ] {
        let r = call(&HttpRequestTool, args.clone(), &ctx).await;
        assert!(err_text(&r).contains(want), "{args}: {:?}", r.error);
    }
}

#[tokio::test]
async fn http_cancel_stops_the_request() {
    let srv = api_server().await;
    let h = harness(None, "duckduckgo");
    let cancel = CancellationToken::new();
    let ctx = h.ctx_with("s", cancel.clone());
    let url = format!("{}/slow", srv.base);
    let task =
        tokio::spawn(async move { HttpRequestTool.execute(&json!({"url": url}), &ctx).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(err_text(&r), "operation cancelled by user");
}

#[test]
fn http_approval_only_for_changes() {
    let t = HttpRequestTool;
    assert_eq!(t.approval_summary(&json!({"url": "https://x/"})), None);
    assert_eq!(
        t.approval_summary(&json!({"url": "https://x/", "method": "head"})),
        None
    );
    assert_eq!(
        t.approval_summary(&json!({"url": "https://x/a", "method": "DELETE"}))
            .unwrap(),
        "DELETE https://x/a"
    );
    let s = t
        .approval_summary(&json!({"url": "https://x/", "body": {"a": 1}}))
        .unwrap();
    assert!(s.starts_with("GET https://x/\nbody: {\"a\":1}"), "{s}");
    assert!(
        t.approval_summary(&json!({"url": "https://x/", "method": "POST"}))
            .is_some()
    );
}

#[tokio::test]
async fn web_view_renders_html_and_reports_other_types() {
    let srv = api_server().await;
    let h = harness(None, "duckduckgo");
    let ctx = h.ctx();
    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/page", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(out.starts_with("Title: Rust & Tools\nURL: "), "{out}");
    assert!(out.contains("Welcome"), "{out}");
    assert!(out.contains("Read the [docs]"), "{out}");
    assert!(
        out.contains("first item") && out.contains("second item"),
        "{out}"
    );
    assert!(
        !out.contains("<p>") && !out.contains("var x=1") && !out.contains("color:red"),
        "{out}"
    );
    assert_eq!(r.metadata["title"], "Rust & Tools");

    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/long", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(
        out.contains("[... truncated: showing bytes 0-"),
        "{}",
        &out[out.len() - 300..]
    );
    let next: usize = out
        .rsplit("offset=")
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/long", srv.base), "offset": next}),
        &ctx,
    )
    .await;
    assert!(ok_text(&r).contains(&format!("[... skipped the first {next} bytes ...]")));

    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/json", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(
        out.contains("Content-Type: application/json") && out.ends_with("{\"ok\":true}"),
        "{out}"
    );

    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/png", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(
        out.contains("binary content: image/png") && out.contains("use image_view"),
        "{out}"
    );
    assert!(!out.contains("PNG"));

    let r = call(
        &WebViewTool,
        json!({"url": format!("{}/missing", srv.base)}),
        &ctx,
    )
    .await;
    assert!(err_text(&r).contains("HTTP 404"));
    let r = call(&WebViewTool, json!({"url": dead_url()}), &ctx).await;
    assert!(err_text(&r).contains("could not connect"));
    let r = call(&WebViewTool, json!({"url": "javascript:alert(1)"}), &ctx).await;
    assert!(err_text(&r).contains("scheme"));
}

const DDG_PAGE: &str = r#"<!DOCTYPE html><html><body>
<div class="result results_links results_links_deep result--ad">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_provider=bing&amp;u3=x">Buy Rust Now</a></h2>
  <a class="result__snippet" href="https://duckduckgo.com/y.js?x">An advert.</a>
</div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust%2Dlang.org%2Flearn%3Fa%3D1%26b%3D2&amp;rut=abc123">Learn <b>Rust</b> - Rust Programming Language</a>
    </h2>
    <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=x">www.rust-lang.org/learn</a></div></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">Get started with <b>Rust</b> &amp; read &quot;the book&quot;.</a>
  </div>
</div>
<div class="result results_links results_links_deep web-result ">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://doc.rust-lang.org/std/">std - Rust</a></h2>
</div>
</body></html>"#;

#[tokio::test]
async fn web_search_parses_duckduckgo_html() {
    let srv = TestServer::start(|req| {
        if req.method == "POST" && String::from_utf8_lossy(&req.body).contains("q=rust+book") {
            Response::new(200, "text/html", DDG_PAGE)
        } else {
            Response::new(200, "text/html", "<html><body>No results.</body></html>")
        }
    })
    .await;
    let h = harness(Some(format!("{}/html/", srv.base)), "duckduckgo");
    let r = call(&WebSearchTool, json!({"query": "rust book"}), &h.ctx()).await;
    let out = ok_text(&r);
    assert_eq!(
        out,
        "Results for \"rust book\":\n\n\
         1. Learn Rust - Rust Programming Language\n   https://www.rust-lang.org/learn?a=1&b=2\n   Get started with Rust & read \"the book\".\n\n\
         2. std - Rust\n   https://doc.rust-lang.org/std/\n"
    );
    assert_eq!(
        r.metadata["results"][0]["url"],
        "https://www.rust-lang.org/learn?a=1&b=2"
    );
    let req = &srv.requests()[0];
    assert_eq!(req.path, "/html/");
    assert_eq!(
        req.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );

    let r = call(
        &WebSearchTool,
        json!({"query": "rust book", "max_results": 1}),
        &h.ctx(),
    )
    .await;
    assert!(!ok_text(&r).contains("2. std"));
    let r = call(&WebSearchTool, json!({"query": "zzqx"}), &h.ctx()).await;
    assert_eq!(ok_text(&r), "No results for \"zzqx\".");
    let r = call(&WebSearchTool, json!({"query": " "}), &h.ctx()).await;
    assert_eq!(err_text(&r), "web_search: argument 'query' is empty");
}

#[tokio::test]
async fn web_search_reports_bot_checks_and_dead_endpoints() {
    let srv = TestServer::start(|_| {
        Response::new(
            202,
            "text/html",
            "<form id=\"challenge-form\">anomaly detected</form>",
        )
    })
    .await;
    let h = harness(Some(srv.base.clone()), "duckduckgo");
    let r = call(&WebSearchTool, json!({"query": "x"}), &h.ctx()).await;
    assert!(err_text(&r).contains("bot check"), "{:?}", r.error);
    let h = harness(Some(dead_url()), "duckduckgo");
    let r = call(&WebSearchTool, json!({"query": "x"}), &h.ctx()).await;
    assert!(
        err_text(&r).starts_with("search failed: could not connect"),
        "{:?}",
        r.error
    );
}

#[tokio::test]
async fn web_search_searxng_json() {
    let srv = TestServer::start(|req| {
        if req.path.starts_with("/search?") && req.path.contains("format=json") && req.path.contains("q=tokio+runtime") {
            Response::new(
                200,
                "application/json",
                json!({"results": [
                    {"title": "Tokio", "url": "https://tokio.rs/", "content": "An <b>async</b> runtime"},
                    {"title": "docs.rs tokio", "url": "https://docs.rs/tokio"}
                ]})
                .to_string(),
            )
        } else {
            Response::new(403, "text/plain", "forbidden")
        }
    })
    .await;
    let h = harness(Some(srv.base.clone()), "searxng");
    let r = call(&WebSearchTool, json!({"query": "tokio runtime"}), &h.ctx()).await;
    let out = ok_text(&r);
    assert!(
        out.contains("1. Tokio\n   https://tokio.rs/\n   An async runtime\n"),
        "{out}"
    );
    assert!(
        out.contains("2. docs.rs tokio\n   https://docs.rs/tokio\n"),
        "{out}"
    );
    let r = call(&WebSearchTool, json!({"query": "other"}), &h.ctx()).await;
    assert!(err_text(&r).contains("search.formats"), "{:?}", r.error);
    let h = harness(None, "searxng");
    let r = call(&WebSearchTool, json!({"query": "x"}), &h.ctx()).await;
    assert!(err_text(&r).contains("web_search_url"), "{:?}", r.error);
}

#[tokio::test]
async fn image_view_from_url_and_path() {
    let srv = api_server().await;
    let h = Harness::new(|c, root| {
        c.tools.image_max_bytes = 10_000;
        c.security.fs_allowed_paths = vec![root.join("work").display().to_string()];
        c.security.net_allowed_hosts = vec!["127.0.0.1".into()];
    });
    let ctx = h.ctx();
    let r = call(
        &ImageViewTool,
        json!({"url": format!("{}/png", srv.base)}),
        &ctx,
    )
    .await;
    let out = ok_text(&r);
    assert!(out.contains("image/png") && out.contains("3x2 px"), "{out}");
    let img = r.image.as_ref().expect("a typed image");
    assert_eq!(img.mime, "image/png");
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&img.base64)
        .unwrap();
    assert_eq!(decoded, tiny_png());

    std::fs::write(h.work.join("pic.png"), tiny_png()).unwrap();
    let r = call(&ImageViewTool, json!({"path": "pic.png"}), &ctx).await;
    assert_eq!(r.image.as_ref().map(|i| i.mime.as_str()), Some("image/png"));
    assert!(ok_text(&r).contains(&h.work.join("pic.png").display().to_string()));

    let gif = b"GIF89a\x10\x00\x08\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    std::fs::write(h.work.join("anim.gif"), gif).unwrap();
    let r = call(&ImageViewTool, json!({"path": "anim.gif"}), &ctx).await;
    assert!(
        ok_text(&r).contains("image/gif") && r.output.contains("16x8 px"),
        "{}",
        r.output
    );

    std::fs::write(h.work.join("fake.png"), "just text").unwrap();
    std::fs::write(h.work.join("huge.png"), vec![0u8; 20_000]).unwrap();
    std::fs::write(h.root().join("outside.png"), tiny_png()).unwrap();
    for (args, want) in [
        (
            json!({"path": "fake.png"}),
            "not a PNG, JPEG, GIF or WebP image (it looks like text)",
        ),
        (json!({"path": "huge.png"}), "larger than the image limit"),
        (json!({"path": "../outside.png"}), "access denied"),
        (json!({"path": "nope.png"}), "No such file"),
        (
            json!({"url": format!("{}/lying-png", srv.base)}),
            "not a PNG",
        ),
        (
            json!({"url": format!("{}/big", srv.base)}),
            "larger than the limit",
        ),
        (json!({"url": format!("{}/missing", srv.base)}), "HTTP 404"),
        (json!({"url": dead_url()}), "could not connect"),
        (json!({}), "give 'path'"),
        (json!({"path": "a", "url": "http://x/"}), "not both"),
    ] {
        let r = call(&ImageViewTool, args.clone(), &ctx).await;
        assert!(err_text(&r).contains(want), "{args}: {:?}", r.error);
        assert!(r.metadata.get("base64").is_none());
    }
}
