//! A fake LLM server for tests and manual runs: a real TCP server on
//! 127.0.0.1 with a hand-written, minimal HTTP/1.1 that streams the exact
//! wire bytes of Ollama (`/api/chat` NDJSON, `/api/tags`, `/api/show`) and
//! of OpenAI-compatible servers (`…/chat/completions` SSE, `…/models`).
//!
//! Invariants:
//! - Chat requests of either protocol take the next scripted [`Reply`] from
//!   one FIFO; an empty FIFO answers "(fake: no scripted reply)".
//! - Streamed bodies use `Transfer-Encoding: chunked`; every protocol chunk
//!   (one NDJSON line, one SSE event) is its own HTTP chunk and its own write,
//!   with `chunk_delay_ms` between them. Every response says
//!   `Connection: close`, so each request has its own connection.
//! - Every request is recorded before it is answered. `client_disconnected`
//!   is set when the client closed the connection before the reply was done.
//! - Stalls sleep for an hour but end when the client disconnects or the
//!   `FakeLlm` is dropped; all tasks are tokio tasks of the caller's runtime.
//! - This file must not depend on the `navi` crate: it also builds into
//!   `examples/fake_llm.rs`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use wire::{Proto, error_body, render};

// Explicit path: resolves the same when this file is loaded as
// `support::fake_llm` and via `#[path]` from `examples/fake_llm.rs`.
#[path = "fake_llm/anthropic.rs"]
pub mod anthropic;
#[path = "fake_llm/count.rs"]
pub mod count;
#[path = "fake_llm/http.rs"]
mod http;
#[path = "fake_llm/read.rs"]
mod read;
#[path = "fake_llm/responses.rs"]
pub mod responses;
#[path = "fake_llm/settings.rs"]
mod settings;
#[path = "fake_llm/slots.rs"]
pub mod slots;
#[path = "fake_llm/strict.rs"]
pub mod strict;
#[path = "fake_llm/wire.rs"]
mod wire;
use http::{simple, write_chunk};
use read::read_request;

/// One piece of a scripted answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Part {
    Thinking(String),
    Text(String),
    /// `args` is sent as the arguments object (Ollama) or its JSON text
    /// (OpenAI); a `Value::String` is sent as raw text, e.g. invalid JSON.
    ToolCall {
        name: String,
        args: Value,
    },
    /// Reasoning the server keeps to itself: Anthropic `redacted_thinking`
    /// with this payload, a Responses reasoning item with no summary.
    Redacted(String),
}

/// A failure to inject instead of (or in the middle of) a normal answer.
/// "Connection refused" needs no fault: point the client at a closed port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Fault {
    /// Answer with this HTTP status. The text is wrapped in the protocol's
    /// error JSON unless it already is JSON. 429 also sends `Retry-After: 1`.
    Status(u16, String),
    /// Close the connection without sending anything.
    CloseBeforeHeaders,
    /// Send about half of the chunks, then close without ending the body.
    DisconnectMidStream,
    /// Send headers, then nothing.
    StallBeforeFirstChunk,
    /// Send about half of the chunks, then nothing.
    StallMidStream,
    /// Send about half of the chunks, then a line that is not JSON.
    GarbageLine,
    /// Send about half of the chunks, then the protocol's error line
    /// (Ollama `{"error":…}`, OpenAI `data: {"error":{…}}`), then end.
    ErrorLine(String),
}

/// A scripted answer to one chat request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reply {
    pub parts: Vec<Part>,
    /// Delay before the response headers (like a model's prefill).
    pub prefill_ms: u64,
    /// Delay between chunks.
    pub chunk_delay_ms: u64,
    pub fault: Option<Fault>,
    /// (prompt tokens, completion tokens); `None` = the server reports none.
    pub usage: Option<(u64, u64)>,
    /// OpenAI only: the delta field thinking goes in; `None` means
    /// `reasoning_content` (llama.cpp); vLLM uses `reasoning`.
    pub reasoning_field: Option<String>,
    /// `finish_reason` / `done_reason` to end with (e.g. "length"); `None`
    /// means the usual "stop" (or "tool_calls").
    pub finish_reason: Option<String>,
    /// Anthropic / Responses: (cache read, cache creation) prompt tokens.
    pub cache_tokens: Option<(u64, u64)>,
}

impl Reply {
    pub fn parts(parts: Vec<Part>) -> Reply {
        Reply {
            parts,
            ..Reply::default()
        }
    }
    pub fn text(s: impl Into<String>) -> Reply {
        Reply::parts(vec![Part::Text(s.into())])
    }
    pub fn thinking_text(thinking: impl Into<String>, s: impl Into<String>) -> Reply {
        Reply::parts(vec![Part::Thinking(thinking.into()), Part::Text(s.into())])
    }
    pub fn tool_call(name: impl Into<String>, args: Value) -> Reply {
        Reply::parts(vec![Part::ToolCall {
            name: name.into(),
            args,
        }])
    }
    /// A short text answer that `f` interrupts (or replaces).
    pub fn fault(f: Fault) -> Reply {
        Reply::text("partial answer before the fault").with_fault(f)
    }
    pub fn with_fault(mut self, f: Fault) -> Reply {
        self.fault = Some(f);
        self
    }
    pub fn with_part(mut self, p: Part) -> Reply {
        self.parts.push(p);
        self
    }
    pub fn with_prefill(mut self, ms: u64) -> Reply {
        self.prefill_ms = ms;
        self
    }
    pub fn with_delay(mut self, ms: u64) -> Reply {
        self.chunk_delay_ms = ms;
        self
    }
    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Reply {
        self.usage = Some((prompt, completion));
        self
    }
    pub fn with_finish_reason(mut self, reason: impl Into<String>) -> Reply {
        self.finish_reason = Some(reason.into());
        self
    }
    pub fn with_cache(mut self, read: u64, write: u64) -> Reply {
        self.cache_tokens = Some((read, write));
        self
    }
    pub fn with_reasoning_field(mut self, field: impl Into<String>) -> Reply {
        self.reasoning_field = Some(field.into());
        self
    }
}

/// Sleeps `n` ms; zero does not sleep at all (a zero-length tokio sleep still
/// waits for the next timer tick, about 1 ms, which would make every
/// undelayed chunk slow).
async fn pause(n: u64) {
    if n > 0 {
        tokio::time::sleep(Duration::from_millis(n)).await;
    }
}

/// A request the server received.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty, a string when not JSON.
    pub body: Value,
    /// The client closed the connection before the reply was complete.
    pub client_disconnected: bool,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn is_chat(&self) -> bool {
        ["/api/chat", "/chat/completions", "/messages", "/responses"]
            .iter()
            .any(|p| self.path.ends_with(p))
    }
}

struct State {
    replies: VecDeque<Reply>,
    models: Vec<(String, Option<u64>)>,
    requests: Vec<Recorded>,
    verbose: bool,
    /// The body of `GET /props` (llama-server); `None` answers 404.
    props: Option<Value>,
    /// `/api/show` capabilities; `None`: completion, tools, thinking.
    capabilities: Option<Vec<String>>,
    /// Extra fields for every entry of `GET …/models` (e.g. llama-server's
    /// `input_modalities`, LM Studio's `type`).
    model_fields: Option<Value>,
    /// Counts like llama-server (`/tokenize`, `/apply-template`, usage,
    /// the window refusal); see `count.rs`.
    counting: bool,
    /// The API key every request must carry (`x-api-key` for Anthropic,
    /// a bearer token otherwise); `None`: any or none.
    key: Option<String>,
    /// Refuse chat requests like Gemma 3's template (`strict.rs`).
    strict_template: bool,
    /// llama-server's slots and saved slot files (`slots.rs`).
    slots: Option<slots::Slots>,
}

/// The fake server; it stops when dropped.
pub struct FakeLlm {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    state: Arc<Mutex<State>>,
    shutdown: CancellationToken,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FakeLlm {
    /// Starts a server on a free port of 127.0.0.1.
    pub async fn start() -> FakeLlm {
        match FakeLlm::bind("127.0.0.1:0").await {
            Ok(f) => f,
            Err(e) => panic!("the fake LLM server cannot listen on 127.0.0.1: {e}"),
        }
    }

    /// Starts a server on `addr` (e.g. `127.0.0.1:11434`).
    pub async fn bind(addr: &str) -> std::io::Result<FakeLlm> {
        let listener = TcpListener::bind(addr).await?;
        let port = listener.local_addr()?.port();
        let state = Arc::new(Mutex::new(State {
            replies: VecDeque::new(),
            models: vec![("test-model".into(), Some(32768))],
            requests: Vec::new(),
            verbose: false,
            props: None,
            capabilities: None,
            model_fields: None,
            counting: false,
            key: None,
            strict_template: false,
            slots: None,
        }));
        let shutdown = CancellationToken::new();
        tokio::spawn(accept_loop(listener, state.clone(), shutdown.clone()));
        Ok(FakeLlm {
            base_url: format!("http://127.0.0.1:{port}"),
            state,
            shutdown,
        })
    }

    pub fn ollama_url(&self) -> String {
        self.base_url.clone()
    }
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.base_url)
    }
    /// Queues a reply for the next chat request (either protocol).
    pub fn push(&self, reply: Reply) {
        lock(&self.state).replies.push_back(reply);
    }
    /// Drops the scripted replies not used yet; returns how many.
    pub fn clear_replies(&self) -> usize {
        let mut st = lock(&self.state);
        let n = st.replies.len();
        st.replies.clear();
        n
    }
    /// The fake server's own count of a recorded chat body's prompt.
    pub fn prompt_tokens(&self, body: &Value) -> u64 {
        count::prompt_tokens(body)
    }
    /// Prints each request to stderr (for the example binary).
    pub fn set_verbose(&self, on: bool) {
        lock(&self.state).verbose = on;
    }
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }
    /// Bodies of the chat requests, in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.is_chat())
            .map(|r| r.body.clone())
            .collect()
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<Mutex<State>>, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            a = listener.accept() => a,
        };
        if let Ok((stream, _)) = accepted {
            let (state, shutdown) = (state.clone(), shutdown.clone());
            tokio::spawn(async move {
                tokio::select! {
                    _ = shutdown.cancelled() => {}
                    _ = serve(stream, state) => {}
                }
            });
        }
    }
}

async fn serve(stream: TcpStream, state: Arc<Mutex<State>>) {
    let _ = stream.set_nodelay(true);
    let (mut rd, mut wr) = stream.into_split();
    let Some(req) = read_request(&mut rd).await else {
        return;
    };
    let body = if req.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&req.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()))
    };
    let index = {
        let mut st = lock(&state);
        if st.verbose {
            eprintln!("fake_llm: {} {} {}", req.method, req.path, body);
        }
        st.requests.push(Recorded {
            method: req.method.clone(),
            path: req.path.clone(),
            headers: req.headers,
            body: body.clone(),
            client_disconnected: false,
        });
        st.requests.len() - 1
    };
    let client_gone = async {
        let mut b = [0u8; 256];
        loop {
            match rd.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    let header = |n: &str| {
        req_headers(&state, index)
            .into_iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v)
    };
    let auth = Auth {
        anthropic: header("anthropic-version").is_some(),
        key: header("x-api-key").or_else(|| {
            header("authorization").map(|v| v.trim_start_matches("Bearer ").to_string())
        }),
    };
    let disconnected = tokio::select! {
        _ = client_gone => true,
        r = respond(&mut wr, &req.method, &req.path, &body, &state, &auth) => r.is_err(),
    };
    if disconnected {
        lock(&state).requests[index].client_disconnected = true;
    }
}

type Io = std::io::Result<()>;

fn req_headers(state: &Mutex<State>, index: usize) -> Vec<(String, String)> {
    lock(state).requests[index].headers.clone()
}

/// What a request says about who sends it.
struct Auth {
    /// It names an `anthropic-version`.
    anthropic: bool,
    key: Option<String>,
}

async fn respond(
    wr: &mut OwnedWriteHalf,
    method: &str,
    path: &str,
    body: &Value,
    state: &Mutex<State>,
    auth: &Auth,
) -> Io {
    let (models, props, caps, fields) = {
        let st = lock(state);
        (
            st.models.clone(),
            st.props.clone(),
            st.capabilities.clone(),
            st.model_fields.clone(),
        )
    };
    let (counting, wanted_key, strict_template) = {
        let st = lock(state);
        (st.counting, st.key.clone(), st.strict_template)
    };
    let is_chat = method == "POST" && (path == "/api/chat" || path.ends_with("/chat/completions"));
    if strict_template
        && is_chat
        && let Some(why) = strict::refusal(body)
    {
        return simple(wr, 400, &[], &strict::error_body(&why)).await;
    }
    let proto = match (method, path) {
        ("POST", p) if p.ends_with("/messages") => Some(Proto::Anthropic),
        ("POST", p) if p.ends_with("/responses") => Some(Proto::Responses),
        ("POST", p) if p.ends_with("/chat/completions") => Some(Proto::OpenAi),
        _ => None,
    };
    if let Some(k) = wanted_key
        && auth.key.as_deref() != Some(k.as_str())
    {
        let p = proto.unwrap_or(if auth.anthropic {
            Proto::Anthropic
        } else {
            Proto::OpenAi
        });
        // Like OpenAI's "Incorrect API key provided: …", it quotes the key.
        let text = format!(
            "invalid x-api-key: {}",
            auth.key.as_deref().unwrap_or("(none)")
        );
        return simple(wr, 401, &[], &error_body(p, 401, &text)).await;
    }
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    let known = models.iter().any(|(n, _)| n == model);
    let refused = match proto {
        Some(Proto::Anthropic) if !known => Some((404, format!("model: {model}"))),
        Some(Proto::Responses) if !known => Some((
            404,
            format!("The model `{model}` does not exist or you do not have access to it."),
        )),
        Some(Proto::Anthropic) => anthropic::refusal(body),
        Some(Proto::Responses) => responses::refusal(body),
        _ => None,
    };
    if let (Some(p), Some((code, text))) = (proto, refused) {
        return simple(wr, code, &[], &error_body(p, code, &text)).await;
    }
    if counting && let Some(done) = count::respond(wr, method, path, body, state, &props).await {
        return done;
    }
    match (method, path) {
        ("GET", "/props") if props.is_some() => {
            simple(wr, 200, &[], &props.unwrap_or_default()).await
        }
        ("POST", "/api/chat") => chat(wr, Proto::Ollama, body, next_reply(state)).await,
        ("POST", p) if proto.is_some() && !p.ends_with("/api/chat") => {
            chat(wr, proto.unwrap_or(Proto::OpenAi), body, next_reply(state)).await
        }
        ("GET", "/api/tags") => simple(wr, 200, &[], &wire::tags(&models)).await,
        ("POST", "/api/show") => {
            let wanted = body.get("model").and_then(Value::as_str).unwrap_or("");
            match models.iter().find(|(n, _)| n == wanted) {
                None => {
                    let err = json!({"error": format!("model '{wanted}' not found")});
                    simple(wr, 404, &[], &err).await
                }
                Some((_, ctx)) => simple(wr, 200, &[], &wire::show(*ctx, caps.as_deref())).await,
            }
        }
        ("GET", p) if p.ends_with("/models") && auth.anthropic => {
            simple(wr, 200, &[], &anthropic::models(&models)).await
        }
        ("GET", p) if p.ends_with("/models") => {
            let mut list = wire::openai_models(&models);
            if let (Some(Value::Object(extra)), Some(data)) =
                (fields, list.get_mut("data").and_then(Value::as_array_mut))
            {
                for entry in data.iter_mut().filter_map(Value::as_object_mut) {
                    entry.extend(extra.clone());
                }
            }
            simple(wr, 200, &[], &list).await
        }
        _ => {
            let head = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 18\r\nConnection: close\r\n\r\n404 page not found";
            wr.write_all(head.as_bytes()).await
        }
    }
}

fn next_reply(state: &Mutex<State>) -> Reply {
    lock(state)
        .replies
        .pop_front()
        .unwrap_or_else(|| Reply::text("(fake: no scripted reply)"))
}

const FOREVER: Duration = Duration::from_secs(3600);

async fn chat(wr: &mut OwnedWriteHalf, proto: Proto, req: &Value, reply: Reply) -> Io {
    pause(reply.prefill_ms).await;
    match &reply.fault {
        Some(Fault::CloseBeforeHeaders) => return Ok(()),
        Some(Fault::Status(code, text)) => {
            let body = error_body(proto, *code, text);
            let extra: &[(&str, &str)] = if matches!(*code, 429 | 529) {
                &[("Retry-After", "1")]
            } else {
                &[]
            };
            return simple(wr, *code, extra, &body).await;
        }
        _ => {}
    }
    let content_type = proto.content_type();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    wr.write_all(head.as_bytes()).await?;
    if reply.fault == Some(Fault::StallBeforeFirstChunk) {
        tokio::time::sleep(FOREVER).await;
        return Ok(());
    }
    let wire = render(proto, req, &reply);
    let mid_fault = matches!(
        reply.fault,
        Some(
            Fault::DisconnectMidStream
                | Fault::StallMidStream
                | Fault::GarbageLine
                | Fault::ErrorLine(_)
        )
    );
    let cut = if mid_fault {
        (wire.content.len() / 2).max(1).min(wire.content.len())
    } else {
        wire.content.len()
    };
    let mut first = true;
    let pieces = wire.head.iter().chain(&wire.content[..cut]);
    for piece in pieces {
        if !first {
            pause(reply.chunk_delay_ms).await;
        }
        first = false;
        write_chunk(wr, piece).await?;
    }
    let error_text = |m: &str| proto.error_line(m);
    match &reply.fault {
        Some(Fault::DisconnectMidStream) => return Ok(()),
        Some(Fault::StallMidStream) => {
            tokio::time::sleep(FOREVER).await;
            return Ok(());
        }
        Some(Fault::GarbageLine) => write_chunk(wr, proto.garbage()).await?,
        Some(Fault::ErrorLine(m)) => write_chunk(wr, &error_text(m)).await?,
        _ => {
            for piece in &wire.tail {
                pause(reply.chunk_delay_ms).await;
                write_chunk(wr, piece).await?;
            }
        }
    }
    wr.write_all(b"0\r\n\r\n").await?;
    wr.flush().await
}
