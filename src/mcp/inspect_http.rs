//! [`super::inspect`] for streamable HTTP servers: the HTTP client rmcp
//! talks through, with the answers to `tools/list` looked at on the way.
//!
//! An answer that comes as an SSE stream is watched event by event (the raw
//! `data` is still there). A plain JSON answer reaches us already typed, and
//! rmcp's `Tool` has no field for `execution`, so the same request is sent
//! once more, with its own id, and the raw answer read (bounded); that costs
//! one request per listing, only for servers that answer in plain JSON.
//!
//! Invariant: what rmcp receives is exactly what the inner client returns.
use super::inspect::TaskOnly;
use futures_util::StreamExt;
use reqwest_mcp::header::{ACCEPT, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Longest raw answer read when a listing is asked again.
const RAW_MAX: usize = 4 * 1024 * 1024;
/// Redirects followed (same origin, 307/308 only), as rmcp's own client.
const MAX_REDIRECTS: usize = 10;

type Error = StreamableHttpError<reqwest_mcp::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// rmcp's reqwest client, plus the [`TaskOnly`] it notes listings into.
#[derive(Clone)]
pub(crate) struct InspectHttp {
    inner: reqwest_mcp::Client,
    found: TaskOnly,
}

impl InspectHttp {
    /// A client set up as rmcp's default one: no idle pooling, and only
    /// same-origin 307/308 redirects followed.
    pub(crate) fn new(found: TaskOnly) -> Result<Self, String> {
        let policy = reqwest_mcp::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        let inner = reqwest_mcp::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(InspectHttp { inner, found })
    }

    /// Looks at the answer to `message` when it is a `tools/list`.
    async fn inspect(
        &self,
        message: &ClientJsonRpcMessage,
        response: StreamableHttpPostResponse,
        request: RawRequest<'_>,
    ) -> StreamableHttpPostResponse {
        if !is_tools_list(message) {
            return response;
        }
        match response {
            StreamableHttpPostResponse::Sse(stream, sid) => {
                let found = self.found.clone();
                let watched = stream.map(move |item| {
                    if let Ok(ev) = &item
                        && let Some(data) = &ev.data
                        && data.contains("taskSupport")
                    {
                        found.note_line(data.as_bytes());
                    }
                    item
                });
                StreamableHttpPostResponse::Sse(watched.boxed(), sid)
            }
            json @ StreamableHttpPostResponse::Json(..) => {
                self.ask_raw(message, request).await;
                json
            }
            other => other,
        }
    }

    /// Sends `message` again under its own id and notes the raw answer.
    /// Any failure only means nothing is noted.
    async fn ask_raw(&self, message: &ClientJsonRpcMessage, r: RawRequest<'_>) {
        let Ok(mut body) = serde_json::to_value(message) else {
            return;
        };
        body["id"] = serde_json::Value::from("navi-task-support-check");
        let mut req = self
            .inner
            .post(r.uri)
            .header(ACCEPT, "application/json, text/event-stream")
            .json(&body);
        if let Some(token) = r.auth {
            req = req.bearer_auth(token);
        }
        for (k, v) in r.headers {
            req = req.header(k, v);
        }
        if let Some(sid) = r.session {
            req = req.header("Mcp-Session-Id", sid);
        }
        let Ok(mut resp) = req.send().await else {
            return;
        };
        let mut raw = Vec::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            if raw.len() + chunk.len() > RAW_MAX {
                return;
            }
            raw.extend_from_slice(&chunk);
        }
        note_raw(&self.found, &raw);
    }
}

/// Where a request went, to send it again.
struct RawRequest<'a> {
    uri: &'a str,
    session: Option<&'a str>,
    auth: Option<&'a str>,
    headers: &'a Headers,
}

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_))
    )
}

/// Notes a raw answer: one JSON message, or SSE events with JSON data.
pub(crate) fn note_raw(found: &TaskOnly, raw: &[u8]) {
    let text = String::from_utf8_lossy(raw);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        found.note_line(trimmed.as_bytes());
        return;
    }
    // SSE: an event's data lines, joined by newlines, end at a blank line.
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        } else if line.is_empty() && !data.is_empty() {
            found.note_line(data.as_bytes());
            data.clear();
        }
    }
}

/// What is kept of a `tools/list` request to look at its answer.
struct Kept {
    message: ClientJsonRpcMessage,
    uri: Arc<str>,
    session: Option<Arc<str>>,
    auth: Option<String>,
    headers: Headers,
}

impl Kept {
    fn of(
        uri: &Arc<str>,
        message: &ClientJsonRpcMessage,
        session: &Option<Arc<str>>,
        auth: &Option<String>,
        headers: &Headers,
    ) -> Option<Kept> {
        is_tools_list(message).then(|| Kept {
            message: message.clone(),
            uri: uri.clone(),
            session: session.clone(),
            auth: auth.clone(),
            headers: headers.clone(),
        })
    }
}

impl InspectHttp {
    async fn after(
        &self,
        kept: Option<Kept>,
        response: Result<StreamableHttpPostResponse, Error>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let Some(k) = kept else {
            return response;
        };
        let response = response?;
        let request = RawRequest {
            uri: &k.uri,
            session: k.session.as_deref(),
            auth: k.auth.as_deref(),
            headers: &k.headers,
        };
        Ok(self.inspect(&k.message, response, request).await)
    }
}

impl StreamableHttpClient for InspectHttp {
    type Error = reqwest_mcp::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let kept = Kept::of(&uri, &message, &session_id, &auth_header, &custom_headers);
        let r = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.after(kept, r).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let kept = Kept::of(&uri, &message, &session_id, &auth_header, &custom_headers);
        let r = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after(kept, r).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let kept = Kept::of(&uri, &message, &session_id, &auth_header, &custom_headers);
        let r = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.after(kept, r).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), Error> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<BoxedSseResponse, Error> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, Error> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_task_only_tools_in_json_and_sse_answers() {
        let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b","execution":{"taskSupport":"required"}}]}}"#;
        let json = TaskOnly::default();
        note_raw(&json, list.as_bytes());
        assert!(json.contains("b") && !json.contains("a"));

        let sse = TaskOnly::default();
        let stream = format!("event: message\nid: 7\ndata: {list}\n\n");
        note_raw(&sse, stream.as_bytes());
        assert!(sse.contains("b") && !sse.contains("a"));

        // Data split over lines, and no final blank line.
        let split = TaskOnly::default();
        let at = list.find("{\"tools\"").unwrap_or(0);
        let (head, tail) = list.split_at(at);
        note_raw(&split, format!("data: {head}\ndata:{tail}").as_bytes());
        assert!(split.contains("b"));

        let nothing = TaskOnly::default();
        note_raw(&nothing, b"event: ping\n\n");
        note_raw(&nothing, b"not json");
        assert!(!nothing.contains("b"));
    }
}
