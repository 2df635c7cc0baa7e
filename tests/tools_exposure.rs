//! Network exposure of the web tools against a real server on 127.0.0.1:
//! loopback, link-local, private and unspecified destinations are refused
//! unless approved (through the real registry and approval gate) or listed
//! in `[security].net_allowed_hosts`; redirects are re-checked. Also: very
//! long output lines of process tools are cut with a note.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::config::SecurityConfig;
use navi::llm::ToolCall;
use navi::protocol::Decision;
use navi::protocol::{AgentEvent, EventSink};
use navi::tools::builtin::http_request::HttpRequestTool;
use navi::tools::builtin::image_view::ImageViewTool;
use navi::tools::builtin::terminal::TerminalTool;
use navi::tools::builtin::web_view::WebViewTool;
use navi::tools::user::{Manifest, UserTool};
use navi::tools::{ApprovalGate, Tool, ToolContext, ToolRegistry, builtin};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tools_support::*;

async fn server() -> TestServer {
    TestServer::start(|req| match req.path.as_str() {
        "/json" => Response::new(200, "application/json", r#"{"ok":true}"#),
        "/to-metadata" => {
            let mut r = Response::new(302, "text/plain", "moved");
            r.headers.push((
                "Location".into(),
                "http://169.254.169.254/latest/meta-data/".into(),
            ));
            r
        }
        "/to-v6-loopback" => {
            let mut r = Response::new(302, "text/plain", "moved");
            r.headers
                .push(("Location".into(), "http://[::1]:9/secret".into()));
            r
        }
        _ => Response::new(404, "text/plain", "?"),
    })
    .await
}

fn port_of(base: &str) -> u16 {
    base.rsplit(':').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn non_public_destinations_are_refused_without_approval() {
    let srv = server().await;
    let port = port_of(&srv.base);
    let h = Harness::new(|_, _| {});
    let ctx = h.ctx();
    let cases = [
        (format!("{}/json", srv.base), "loopback"),
        (format!("http://localhost:{port}/json"), "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{port}/json"), "loopback"),
        (format!("http://0.0.0.0:{port}/json"), "unspecified"),
        (
            "http://169.254.169.254/latest/meta-data/".into(),
            "link-local",
        ),
        ("http://10.20.30.40/".into(), "private"),
        ("http://192.168.1.1/".into(), "private"),
        ("http://100.64.1.1/".into(), "CGNAT"),
        ("http://[fd00::1]/".into(), "unique local"),
        ("http://[fe80::1]/".into(), "link-local"),
    ];
    for (url, why) in &cases {
        let r = call(&HttpRequestTool, json!({"url": url}), &ctx).await;
        let e = err_text(&r);
        assert!(
            e.contains(why) && e.contains("net_allowed_hosts") && e.contains("approval"),
            "{url}: {e}"
        );
    }
    let r = call(&WebViewTool, json!({"url": cases[1].0}), &ctx).await;
    assert!(err_text(&r).contains("loopback"), "{:?}", r.error);
    let r = call(&ImageViewTool, json!({"url": cases[4].0}), &ctx).await;
    assert!(err_text(&r).contains("link-local"), "{:?}", r.error);
    assert!(srv.requests().is_empty(), "nothing reached the server");
}

#[tokio::test]
async fn the_allow_list_admits_listed_hosts_only() {
    let srv = server().await;
    let h = Harness::new(|c, _| c.security.net_allowed_hosts = vec!["127.0.0.0/8".into()]);
    let r = call(
        &HttpRequestTool,
        json!({"url": format!("{}/json", srv.base)}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).ends_with("{\"ok\":true}"), "{}", r.output);
    let r = call(
        &HttpRequestTool,
        json!({"url": "http://192.168.0.1/"}),
        &h.ctx(),
    )
    .await;
    assert!(err_text(&r).contains("private"), "{:?}", r.error);
    assert_eq!(srv.requests().len(), 1);
}

#[tokio::test]
async fn each_redirect_hop_is_checked_again() {
    let srv = server().await;
    let h = Harness::new(|c, _| c.security.net_allowed_hosts = vec!["127.0.0.1".into()]);
    for (path, shown) in [
        ("/to-metadata", "169.254.169.254"),
        ("/to-v6-loopback", "::1"),
    ] {
        let r = call(
            &HttpRequestTool,
            json!({"url": format!("{}{path}", srv.base)}),
            &h.ctx(),
        )
        .await;
        let e = err_text(&r);
        assert!(
            e.contains("redirect") && e.contains(shown) && e.contains("net_allowed_hosts"),
            "{path}: {e}"
        );
    }
    assert_eq!(srv.requests().len(), 2, "only the first hops were made");
}

fn ctx_with_events(h: &Harness) -> (ToolContext, tokio::sync::mpsc::Receiver<AgentEvent>) {
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let (events, rx) = EventSink::channel(64);
    let ctx = ToolContext {
        session_id: "s1".into(),
        parent_session_id: None,
        call_id: "call-net".into(),
        env: h.env.clone(),
        cancel: CancellationToken::new(),
        events,
        origin: None,
        tool_list: Arc::new(reg.schemas_for(&reg.names())),
        step_validation: false,
        session: h.session("s1"),
        owner: None,
        call_info: None,
    };
    (ctx, rx)
}

#[tokio::test]
async fn the_approval_gate_asks_with_a_reason_and_an_approved_call_goes_through() {
    let srv = server().await;
    let h = Harness::new(|_, _| {});
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let call = ToolCall {
        id: "call-net".into(),
        name: "http_request".into(),
        arguments: json!({"url": format!("{}/json", srv.base)}),
    };

    // No terminal to ask on: refused, with the reason.
    let (ctx, _rx) = ctx_with_events(&h);
    let gate = ApprovalGate::new(&SecurityConfig::default(), false);
    let r = reg.execute(&call, &ctx, &gate).await;
    let e = err_text(&r);
    assert!(e.contains("denied") && e.contains("loopback"), "{e}");
    assert!(srv.requests().is_empty());

    // Asked interactively: the question says why; approving lets it through.
    let (ctx, mut rx) = ctx_with_events(&h);
    let gate = Arc::new(ApprovalGate::new(&SecurityConfig::default(), true));
    let (reg2, gate2, call2, ctx2) = (reg.clone(), gate.clone(), call.clone(), ctx.clone());
    let job = tokio::spawn(async move { reg2.execute(&call2, &ctx2, &gate2).await });
    let summary = loop {
        match rx.recv().await.unwrap() {
            AgentEvent::ApprovalRequest { id, summary, .. } => {
                assert_eq!(id, "call-net");
                break summary;
            }
            _ => continue,
        }
    };
    assert!(
        summary.contains("GET http://127.0.0.1")
            && summary.contains("127.0.0.1 (loopback address)")
            && summary.contains("net_allowed_hosts"),
        "{summary}"
    );
    assert!(h.session("s1").answer("call-net", Decision::Once));
    let r = job.await.unwrap();
    assert!(ok_text(&r).ends_with("{\"ok\":true}"), "{}", r.output);
    assert_eq!(srv.requests().len(), 1);

    // Denied: nothing is sent.
    let (ctx, mut rx) = ctx_with_events(&h);
    let (reg3, gate3, call3) = (reg.clone(), gate.clone(), call.clone());
    let job = tokio::spawn(async move { reg3.execute(&call3, &ctx, &gate3).await });
    while !matches!(rx.recv().await.unwrap(), AgentEvent::ApprovalRequest { .. }) {}
    assert!(h.session("s1").answer("call-net", Decision::Deny));
    assert!(err_text(&job.await.unwrap()).contains("denied"));
    assert_eq!(srv.requests().len(), 1);

    // Changes to public hosts are still asked about; public reads are not.
    let (ctx, _rx) = ctx_with_events(&h);
    let t = HttpRequestTool;
    let post = json!({"url": "http://8.8.8.8/x", "method": "POST"});
    assert_eq!(
        t.approval_request(&post, &ctx).await.as_deref(),
        Some("POST http://8.8.8.8/x")
    );
    let get = json!({"url": "http://8.8.8.8/x"});
    assert_eq!(t.approval_request(&get, &ctx).await, None);
    let local = json!({"url": format!("{}/json", srv.base), "method": "DELETE"});
    let asked = t.approval_request(&local, &ctx).await.unwrap();
    assert!(
        asked.starts_with("DELETE http://127.0.0.1") && asked.contains("loopback"),
        "{asked}"
    );

    // A public-looking call that is not approved cannot reach loopback
    // later (no approval on record for it).
    let r = tools_support::call(&HttpRequestTool, call.arguments.clone(), &h.ctx()).await;
    assert!(err_text(&r).contains("loopback"));
}

#[tokio::test]
async fn very_long_output_lines_are_cut_for_commands_and_user_tools() {
    let h = Harness::new(|c, _| c.tools.max_line_bytes = 1000);
    let r = call(
        &TerminalTool,
        json!({"command": "head -c 5000 /dev/zero | tr '\\0' x; echo; echo after"}),
        &h.ctx(),
    )
    .await;
    let out = ok_text(&r);
    assert!(out.contains("line cut: 4000 more bytes not shown"), "{out}");
    assert!(out.contains("\nafter"), "{out}");
    assert!(!out.contains(&"x".repeat(1001)));

    let manifest = Manifest {
        name: "shout".into(),
        description: "prints a long line".into(),
        parameters: json!({"type": "object", "properties": {}}),
        command: vec![
            "sh".into(),
            "-c".into(),
            "head -c 3000 /dev/zero | tr '\\0' y; echo; echo done".into(),
        ],
        timeout_secs: Some(30),
    };
    let tool = UserTool {
        manifest,
        dir: h.work.clone(),
    };
    let r = call(&tool, json!({}), &h.ctx()).await;
    let out = ok_text(&r);
    assert!(
        out.contains("line cut: 2000 more bytes not shown") && out.ends_with("done"),
        "{out}"
    );
}
