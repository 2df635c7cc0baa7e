//! Helpers for the built-in tool tests (`mod tools_support;`): a ToolContext
//! over temp dirs, and a tiny real HTTP/1.1 server on 127.0.0.1 that records
//! requests and answers from a route function.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use navi::config::{Config, Paths};
use navi::protocol::EventSink;
use navi::tools::{SessionTools, Tool, ToolContext, ToolEnv, ToolRegistry, ToolResult, builtin};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Temp dirs + a ToolEnv built like the app builds it.
pub struct Harness {
    pub tmp: TempDir,
    pub work: PathBuf,
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub env: Arc<ToolEnv>,
    /// What each session (by name) keeps for its tools: one value per
    /// session, shared by its calls, as an open session does.
    sessions: Mutex<HashMap<String, Arc<SessionTools>>>,
}

impl Harness {
    pub fn new(configure: impl FnOnce(&mut Config, &Path)) -> Harness {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let work = root.join("work");
        let config_dir = root.join("config");
        let data_dir = root.join("data");
        for d in [&work, &config_dir, &data_dir] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut config = Config::default();
        configure(&mut config, &root);
        let paths = Paths {
            config_file: None,
            config_dir: config_dir.clone(),
            data_dir: data_dir.clone(),
            db_path: data_dir.join("navi.db"),
            log_dir: data_dir.join("logs"),
        };
        let env = Arc::new(ToolEnv::new(Arc::new(config), paths));
        Harness {
            tmp,
            work,
            config_dir,
            data_dir,
            env,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.work.parent().unwrap().to_path_buf()
    }

    /// The tool state of session `name` (working in `work`).
    pub fn session(&self, name: &str) -> Arc<SessionTools> {
        self.sessions
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(SessionTools::new(name, self.work.clone(), None)))
            .clone()
    }

    pub fn ctx(&self) -> ToolContext {
        self.ctx_with("test-session", CancellationToken::new())
    }

    pub fn ctx_with(&self, session: &str, cancel: CancellationToken) -> ToolContext {
        let mut reg = ToolRegistry::new();
        builtin::register_all(&mut reg);
        let (events, _rx) = EventSink::channel(64);
        ToolContext {
            session_id: session.into(),
            parent_session_id: None,
            call_id: "call-1".into(),
            env: self.env.clone(),
            cancel,
            events,
            origin: None,
            tool_list: Arc::new(reg.schemas_for(&reg.names())),
            step_validation: false,
            session: self.session(session),
            owner: None,
            call_info: None,
        }
    }
}

/// Runs one tool call directly (no registry, no approval).
pub async fn call(tool: &dyn Tool, args: Value, ctx: &ToolContext) -> ToolResult {
    tool.execute(&args, ctx).await
}

/// The error text, or a panic showing the unexpected success.
pub fn err_text(r: &ToolResult) -> String {
    assert!(!r.success, "expected failure, got success: {}", r.output);
    r.error.clone().unwrap_or_default()
}

/// Asserts success and returns the output.
pub fn ok_text(r: &ToolResult) -> String {
    assert!(
        r.success,
        "expected success, got error: {:?}\noutput: {}",
        r.error, r.output
    );
    r.output.clone()
}

/// Whether a pid is gone (or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    !navi::tools::process::is_alive(pid)
}

/// Waits until `path` exists and holds a number; returns it.
pub async fn wait_for_pid_file(path: &Path) -> u32 {
    for _ in 0..200 {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never appeared", path.display());
}

/// Polls until `pred` holds (processes take a moment to be reaped).
pub async fn eventually(mut pred: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if pred() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A request the test server received.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A canned response.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Wait this long (asynchronously) before answering.
    pub delay: Option<Duration>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: None,
        }
    }

    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = Some(d);
        self
    }
}

type Route = dyn Fn(&Request) -> Response + Send + Sync;

/// A real HTTP server on 127.0.0.1 (one request per connection).
pub struct TestServer {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl TestServer {
    pub async fn start(route: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let reqs = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let route = route.clone();
                let reqs = reqs.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 8192];
                    let head_end = loop {
                        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break p + 4;
                        }
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let mut lines = head.split("\r\n");
                    let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
                    let headers: Vec<(String, String)> = lines
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .collect();
                    let len: usize = headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + len {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let req = Request {
                        method: first.first().unwrap_or(&"").to_string(),
                        path: first.get(1).unwrap_or(&"").to_string(),
                        headers,
                        body: buf[head_end..].to_vec(),
                    };
                    reqs.lock().unwrap().push(req.clone());
                    let resp = route(&req);
                    if let Some(d) = resp.delay {
                        tokio::time::sleep(d).await;
                    }
                    let mut out = format!("HTTP/1.1 {} X\r\n", resp.status);
                    for (k, v) in &resp.headers {
                        out.push_str(&format!("{k}: {v}\r\n"));
                    }
                    out.push_str(&format!(
                        "Content-Length: {}\r\nConnection: close\r\n\r\n",
                        resp.body.len()
                    ));
                    let _ = sock.write_all(out.as_bytes()).await;
                    if req.method != "HEAD" {
                        let _ = sock.write_all(&resp.body).await;
                    }
                    let _ = sock.shutdown().await;
                });
            }
        });
        TestServer { base, requests }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// A URL on 127.0.0.1 where nothing listens.
pub fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/")
}

/// A 1x1 PNG (valid IHDR: width 3, height 2 claimed).
pub fn tiny_png() -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    v.extend_from_slice(&3u32.to_be_bytes());
    v.extend_from_slice(&2u32.to_be_bytes());
    v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    v.extend_from_slice(b"\x00\x00\x00\x00IEND\xaeB`\x82");
    v
}
