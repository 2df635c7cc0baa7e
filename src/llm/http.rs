//! HTTP plumbing shared by both backends: client construction, URL checks and
//! the mapping of transport failures and HTTP statuses onto [`LlmError`].
//!
//! Invariants:
//! - Every error produced here renders as one line that says what failed, on
//!   what, and what to do next. Server-provided text is collapsed to a single
//!   line and cut at [`MAX_SERVER_TEXT`] characters.
//! - The only retry here is [`send_retrying_once`]: a request that failed
//!   before any response byte on what may have been a stale pooled connection
//!   goes out once more on a fresh connection. Everything else (backoff for
//!   refused connections, 429, 5xx) is the stream guard's job.
//! - Idle pooled connections are dropped after [`POOL_IDLE_TIMEOUT`]: local
//!   servers (llama-server) close idle keep-alive connections on their side.
//! - Error bodies are read with a size cap, never unbounded.

use super::LlmError;
use super::descriptor::BackendDescriptor;
use futures_util::StreamExt;
use std::error::Error as StdError;
use std::time::Duration;

/// How much of a server's error text ends up in an error message.
pub(crate) const MAX_SERVER_TEXT: usize = 300;
/// How long establishing a TCP (and TLS) connection may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Bound for the small, non-streaming requests (model lists, model details).
pub(crate) const METADATA_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an idle keep-alive connection stays in the pool. Below the 5 s
/// after which llama-server (cpp-httplib) closes an idle connection itself,
/// so a pooled connection is dropped here before the server drops it.
pub(crate) const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(3);
/// Cap on how much of an error response body is read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What an error message needs to know about the server being talked to.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) backend: &'static BackendDescriptor,
    /// Normalised base URL (no trailing slash).
    pub(crate) base: String,
    /// How to point it elsewhere; empty: the descriptor's `[llm]` key.
    pub(crate) url_hint: String,
    /// How to give it a key; empty: the descriptor's words.
    pub(crate) key_hint: String,
    /// The key sent, only to take it out of what the server says back.
    pub(crate) key: Option<crate::config::Secret>,
}

impl Target {
    /// A target with the descriptor's own hints.
    pub(crate) fn new(backend: &'static BackendDescriptor, base: String) -> Self {
        Target {
            backend,
            base,
            url_hint: String::new(),
            key_hint: String::new(),
            key: None,
        }
    }

    /// A target with the hints of `endpoint` (its provider).
    pub(crate) fn of(
        backend: &'static BackendDescriptor,
        base: String,
        endpoint: &super::endpoint::Endpoint,
    ) -> Self {
        Target {
            url_hint: endpoint.url_hint.clone(),
            key_hint: endpoint.key_hint.clone(),
            key: endpoint.api_key.clone(),
            ..Target::new(backend, base)
        }
    }

    pub(crate) fn name(&self) -> String {
        self.backend.display_name.to_string()
    }

    fn unreachable_hint(&self) -> String {
        if self.url_hint.is_empty() {
            return self.backend.unreachable_hint();
        }
        format!("{} {}", self.backend.unreachable_check, self.url_hint)
    }

    fn not_an_api_hint(&self) -> String {
        if self.url_hint.is_empty() {
            return self.backend.not_an_api_hint();
        }
        format!("{} to {}", self.url_hint, self.backend.url_target)
    }

    fn model_hint(&self, model: &str) -> String {
        (self.backend.missing_model_hint)(model)
    }

    /// Error for a failure while receiving the body of a 200 response.
    pub(crate) fn disconnected(&self, reason: impl Into<String>) -> LlmError {
        LlmError::Disconnected {
            backend: self.name(),
            reason: reason.into(),
        }
    }

    pub(crate) fn protocol(&self, message: impl Into<String>) -> LlmError {
        LlmError::Protocol {
            backend: self.name(),
            message: message.into(),
        }
    }
}

/// Checks and normalises a base URL: adds `http://` when no scheme is given,
/// strips trailing slashes, and insists on http(s) with a host.
/// The base URL to use: a scheme added when missing, the trailing `/`
/// dropped, and credentials written into it removed (they travel as an
/// `Authorization` header, see [`super::url_auth::url_credentials`], and so never appear in
/// a message, a log line or a session row).
pub(crate) fn normalise_base(raw: &str) -> Result<String, LlmError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let bad = |reason: &str| LlmError::BadUrl {
        url: super::url_auth::redact_userinfo(raw),
        reason: super::url_auth::redact_userinfo(reason),
    };
    if trimmed.is_empty() {
        return Err(bad("the URL is empty"));
    }
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_string()
    } else {
        format!("http://{trimmed}")
    };
    let url = reqwest::Url::parse(&with_scheme).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("only http:// and https:// are supported"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("the URL has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Ok(super::url_auth::without_credentials(&with_scheme));
    }
    Ok(with_scheme)
}

/// The clients of one backend for the base URL `raw`: the normalised base
/// (credentials written into it taken out), a pooled client and a fresh
/// one (see [`build_client`]), both sending `headers` and the URL's
/// credentials with every request.
pub(crate) fn clients(
    raw: &str,
    headers: reqwest::header::HeaderMap,
) -> Result<(String, reqwest::Client, reqwest::Client), LlmError> {
    let auth = super::url_auth::url_credentials(raw);
    let base = normalise_base(raw)?;
    let mut headers = headers;
    if let Some(a) = auth {
        headers.insert(reqwest::header::AUTHORIZATION, a);
    }
    let pooled = client_builder(&base, true, &headers)?;
    let fresh = client_builder(&base, false, &headers)?;
    Ok((base, pooled, fresh))
}

/// A client per backend: connection pooling (or, `pooled` false, a new
/// connection per request, for the one retry after a failure on a pooled
/// connection), a connect timeout, and no proxy for loopback hosts (like
/// Go's `ProxyFromEnvironment`, which Ollama's own CLI uses), so
/// `HTTP_PROXY` does not hijack a local server.
fn client_builder(
    base: &str,
    pooled: bool,
    headers: &reqwest::header::HeaderMap,
) -> Result<reqwest::Client, LlmError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT);
    if !pooled {
        builder = builder.pool_max_idle_per_host(0);
    }
    if is_loopback(base) {
        builder = builder.no_proxy();
    }
    if !headers.is_empty() {
        builder = builder.default_headers(headers.clone());
    }
    builder.build().map_err(|e| LlmError::BadUrl {
        url: base.to_string(),
        reason: format!("cannot set up the HTTP client: {}", chain(&e)),
    })
}

fn is_loopback(base: &str) -> bool {
    reqwest::Url::parse(base)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| {
            h == "localhost" || h.starts_with("127.") || h == "[::1]" || h == "0.0.0.0"
        })
}

/// The error chain of `e` as one line ("a: b: c"), without repeats.
pub(crate) fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !s.is_empty() && !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    one_line(&parts.join(": "), MAX_SERVER_TEXT)
}

/// The innermost error's message: for hyper errors the one that says what
/// actually happened ("connection closed before message completed").
pub(crate) fn root_cause(e: &(dyn StdError + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    one_line(&cur.to_string(), MAX_SERVER_TEXT)
}

/// A short reason for a failed connection attempt.
fn connect_reason(e: &reqwest::Error) -> String {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            return match io.kind() {
                K::ConnectionRefused => "connection refused".into(),
                K::ConnectionReset => "connection reset".into(),
                K::TimedOut => "connection timed out".into(),
                _ => one_line(&io.to_string(), MAX_SERVER_TEXT),
            };
        }
        cur = err.source();
    }
    if e.is_timeout() {
        return format!("no connection within {}s", CONNECT_TIMEOUT.as_secs().max(1));
    }
    chain(e)
}

/// Maps an error from `send()` (no response headers yet).
pub(crate) fn send_error(t: &Target, e: &reqwest::Error) -> LlmError {
    if e.is_builder() {
        return LlmError::BadUrl {
            url: t.base.clone(),
            reason: chain(e),
        };
    }
    if e.is_connect() || (e.is_timeout() && !e.is_body()) {
        return LlmError::Unreachable {
            backend: t.name(),
            url: t.base.clone(),
            reason: connect_reason(e),
            hint: t.unreachable_hint(),
        };
    }
    LlmError::Disconnected {
        backend: t.name(),
        reason: format!(
            "no response at all ({}); check the server's log",
            root_cause(e)
        ),
    }
}

/// True for a send failure after the connection was made but before any
/// response byte: the classic stale keep-alive connection (reset, closed,
/// EOF before headers). Connect failures and timeouts are not this.
pub(crate) fn failed_before_response(e: &reqwest::Error) -> bool {
    !e.is_builder() && !e.is_connect() && !e.is_timeout() && !e.is_status()
}

/// Sends the request built by `build` on `pooled`; when that fails before
/// any response byte (see [`failed_before_response`]) it is sent once more
/// on `fresh`, which opens a new connection. The second failure is reported.
pub(crate) async fn send_retrying_once(
    t: &Target,
    pooled: &reqwest::Client,
    fresh: &reqwest::Client,
    build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, LlmError> {
    match build(pooled).send().await {
        Ok(resp) => Ok(resp),
        Err(e) if failed_before_response(&e) => {
            tracing::warn!(
                "{} at {}: no response ({}); retrying once on a fresh connection",
                t.name(),
                t.base,
                root_cause(&e)
            );
            build(fresh).send().await.map_err(|e| send_error(t, &e))
        }
        Err(e) => Err(send_error(t, &e)),
    }
}

/// Maps an error while reading a response body (the stream broke).
pub(crate) fn body_error(t: &Target, e: &reqwest::Error) -> LlmError {
    t.disconnected(format!("the stream broke off ({})", root_cause(e)))
}

/// Maps a failure of `Response::json()` on the endpoint `what`.
pub(crate) fn json_error(t: &Target, what: &str, e: &reqwest::Error) -> LlmError {
    if e.is_decode() {
        t.protocol(format!(
            "{what} did not answer the expected JSON ({})",
            root_cause(e)
        ))
    } else {
        body_error(t, e)
    }
}

/// Collapses whitespace to single spaces and cuts at `max` characters.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 4));
    let mut count = 0;
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
            count += 1;
        }
        for ch in word.chars() {
            if count >= max {
                out.push('…');
                return out;
            }
            out.push(ch);
            count += 1;
        }
    }
    out
}

/// The human message inside an error body: `{"error":"…"}` (Ollama),
/// `{"error":{"message":"…"}}` (OpenAI, llama.cpp), `{"message":"…"}` (vLLM),
/// `{"detail":"…"}` (FastAPI servers); otherwise the text itself.
pub(crate) fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| json_error_message(&v));
    let text = from_json.unwrap_or_else(|| body.to_string());
    let line = one_line(&text, MAX_SERVER_TEXT);
    if line.is_empty() {
        "(empty response body)".into()
    } else {
        line
    }
}

/// The message of a JSON error value, if it looks like one.
pub(crate) fn json_error_message(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let pick = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| Some(v.to_string())),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let obj = v.as_object()?;
    obj.get("error")
        .and_then(pick)
        .or_else(|| obj.get("message").and_then(Value::as_str).map(String::from))
        .or_else(|| obj.get("detail").and_then(pick))
}

/// Seconds from a `Retry-After` header (the HTTP-date form is ignored).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a response body as text.
pub(crate) async fn read_capped(resp: reqwest::Response) -> String {
    let mut buf = Vec::new();
    let mut body = resp.bytes_stream();
    while let Some(Ok(piece)) = body.next().await {
        let room = MAX_ERROR_BODY.saturating_sub(buf.len());
        buf.extend_from_slice(&piece[..piece.len().min(room)]);
        if buf.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Sends a metadata request (`/api/tags`, `/api/show`, `/models`) and
/// parses its JSON body; every failure becomes the backend's typed error.
/// `model` names the model for a 404.
pub(crate) async fn metadata_json(
    t: &Target,
    req: reqwest::RequestBuilder,
    what: &str,
    model: Option<&str>,
) -> Result<serde_json::Value, LlmError> {
    let resp = req
        .timeout(METADATA_TIMEOUT)
        .send()
        .await
        .map_err(|e| send_error(t, &e))?;
    if !resp.status().is_success() {
        return Err(HttpFailure::read(resp).await.into_error(t, model));
    }
    resp.json().await.map_err(|e| json_error(t, what, &e))
}

/// A non-2xx response, read and classified.
#[derive(Clone, Debug)]
pub(crate) struct HttpFailure {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
    /// The response's media type (`text/html`), empty when not given.
    pub(crate) content_type: String,
}

impl HttpFailure {
    pub(crate) async fn read(resp: reqwest::Response) -> HttpFailure {
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let body = read_capped(resp).await;
        let html = content_type == "text/html" || body.trim_start().starts_with('<');
        let message = error_message(&body);
        HttpFailure {
            status,
            message,
            retry_after,
            content_type: if html && content_type.is_empty() {
                "text/html".into()
            } else {
                content_type
            },
        }
    }

    /// A web page, not an API answer: the address points at the wrong server.
    pub(crate) fn is_web_page(&self) -> bool {
        self.content_type == "text/html"
    }

    fn mentions_missing_model(&self) -> bool {
        let m = self.message.to_ascii_lowercase();
        m.contains("model")
            && (m.contains("not found") || m.contains("does not exist") || m.contains("no such"))
    }

    /// The typed error for this failure. `model` is the model the request was
    /// about, if any (turns a "model not found" 404 into `ModelNotFound`).
    pub(crate) fn into_error(mut self, t: &Target, model: Option<&str>) -> LlmError {
        let backend = t.name();
        // A server may quote the key it refused: it never reaches a message.
        if let Some(k) = t.key.as_ref().map(|k| k.expose()).filter(|k| k.len() >= 4) {
            self.message = self.message.replace(k, "***");
        }
        if self.is_web_page() && self.status != 429 {
            return LlmError::NotAnApi {
                backend,
                url: t.base.clone(),
                status: self.status,
                content_type: self.content_type,
                hint: t.not_an_api_hint(),
            };
        }
        match self.status {
            401 | 403 => LlmError::Unauthorized {
                backend,
                url: t.base.clone(),
                status: self.status,
                hint: t.key_hint.clone(),
            },
            429 => LlmError::RateLimited {
                backend,
                retry_after: self.retry_after,
            },
            400 | 404 if model.is_some() && self.mentions_missing_model() => {
                let model = model.unwrap_or_default().to_string();
                LlmError::ModelNotFound {
                    backend,
                    hint: t.model_hint(&model),
                    model,
                }
            }
            404 => LlmError::Rejected {
                backend,
                status: 404,
                message: format!(
                    "{} (is {} the right base URL?{})",
                    self.message,
                    t.base,
                    match t.backend.usual_base_suffix {
                        Some((suffix, note)) if !t.base.ends_with(suffix) => note,
                        _ => "",
                    }
                ),
            },
            529 => LlmError::Overloaded {
                backend,
                retry_after: self.retry_after,
            },
            s if s >= 500 => LlmError::Server {
                backend,
                status: s,
                body: self.message,
            },
            s => LlmError::Rejected {
                backend,
                status: s,
                message: self.message,
            },
        }
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;

/// The response when it is an event stream; otherwise the error saying what
/// `POST {path}` answered instead (`expected`: the protocol navi spoke).
pub(crate) async fn event_stream(
    resp: reqwest::Response,
    base: &str,
    expected: &str,
    path: &str,
) -> Result<reqwest::Response, LlmError> {
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.contains("event-stream") {
        return Ok(resp);
    }
    let text = read_capped(resp).await;
    Err(LlmError::WrongProtocol {
        url: base.to_string(),
        expected: expected.into(),
        detail: format!(
            "POST {path} answered {} instead of an event stream: {}",
            if content_type.is_empty() {
                "no content type"
            } else {
                &content_type
            },
            one_line(&text, 120)
        ),
    })
}
