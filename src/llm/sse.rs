//! OpenAI-compatible `/chat/completions` streams: Server-Sent Events framed by
//! the `eventsource-stream` crate, each `data:` holding one JSON chunk.
//!
//! Invariants:
//! - Only choice 0 is read. `delta.content` may be `null` (llama.cpp);
//!   `delta.reasoning_content` and `delta.reasoning` (vLLM) are thinking.
//! - Tool-call fragments are grouped by `index` (id and name first, then
//!   argument string pieces) and emitted once, complete, when the choice
//!   finishes or the stream ends. Arguments are parsed only then: empty means
//!   `{}`, invalid JSON is kept as `Value::String(raw)`.
//! - `Usage` (the last one reported) is emitted right before `Done`, and
//!   `Done` comes at `data: [DONE]` — or at the end of the body if a
//!   `finish_reason` was seen. A body that ends before either is
//!   `LlmError::Disconnected`.
//! - `data: {"error": …}` (llama.cpp, on an HTTP 200 stream) or an `event:
//!   error` is `LlmError::StreamError`; data that is not JSON is
//!   `LlmError::Protocol`.

use super::decode::{DecodeStream, FrameDecoder, generated_call_id};
use super::http::{MAX_SERVER_TEXT, json_error_message, one_line};
use super::{ChatChunk, LlmError, ToolCall, Usage};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::Value;

const BACKEND: &str = "OpenAI-compatible API";

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<DeltaCall>>,
}

#[derive(Deserialize)]
struct DeltaCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<DeltaFunction>,
}

#[derive(Deserialize)]
struct DeltaFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string piece per the spec; some servers send the whole object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    /// Of the prompt, what the server's prompt cache held (OpenAI and
    /// llama-server: `prompt_tokens_details.cached_tokens`).
    #[serde(default)]
    prompt_tokens_details: Option<WireDetails>,
}

#[derive(Deserialize)]
struct WireDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    fn complete(self) -> ToolCall {
        let raw = self.arguments;
        let arguments = if raw.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(&raw).unwrap_or(Value::String(raw))
        };
        ToolCall {
            id: if self.id.is_empty() {
                generated_call_id()
            } else {
                self.id
            },
            name: self.name,
            arguments,
        }
    }
}

/// Decoder for the `data` of OpenAI stream events. See the module docs.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Tool calls being assembled, in `index` order.
    calls: Vec<(usize, PartialCall)>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl SseDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decodes one event (`event` is the SSE event type, `message` if unset).
    pub(crate) fn event(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<ChatChunk>,
    ) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        let data = data.trim();
        if event == "error" {
            let message = serde_json::from_str::<Value>(data)
                .ok()
                .and_then(|v| json_error_message(&v))
                .unwrap_or_else(|| data.to_string());
            return Err(stream_error(&message));
        }
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.finish_answer(out);
            return Ok(());
        }
        let chunk: WireChunk = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            backend: BACKEND.into(),
            message: format!("invalid JSON in event ({e}): {}", one_line(data, 120)),
        })?;
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            let message = json_error_message(&serde_json::json!({ "error": err }))
                .unwrap_or_else(|| "unknown error".into());
            return Err(stream_error(&message));
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(Usage {
                prompt_tokens: u.prompt_tokens.unwrap_or(0),
                completion_tokens: u.completion_tokens.unwrap_or(0),
                cache_read_tokens: u
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
                ..Usage::default()
            });
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.flush_calls(out);
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<ChatChunk>) {
        let thinking = delta
            .reasoning_content
            .filter(|t| !t.is_empty())
            .or(delta.reasoning.filter(|t| !t.is_empty()));
        if let Some(t) = thinking {
            out.push(ChatChunk::Thinking(t));
        }
        if let Some(c) = delta.content.filter(|c| !c.is_empty()) {
            out.push(ChatChunk::Text(c));
        }
        for frag in delta.tool_calls.into_iter().flatten() {
            self.fragment(frag);
        }
    }

    fn fragment(&mut self, frag: DeltaCall) {
        let id = frag.id.filter(|s| !s.is_empty());
        // Servers that omit `index` start a new call with each new id.
        let index = frag.index.unwrap_or_else(|| {
            let last = self.calls.last();
            match (&id, last) {
                (Some(id), Some((i, c))) if c.id == *id || c.id.is_empty() => *i,
                (Some(_), Some((i, _))) => i + 1,
                (None, Some((i, _))) => *i,
                (_, None) => 0,
            }
        });
        let pos = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                let p = self.calls.partition_point(|(i, _)| *i < index);
                self.calls.insert(p, (index, PartialCall::default()));
                p
            }
        };
        let call = &mut self.calls[pos].1;
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id;
        }
        let Some(f) = frag.function else { return };
        if let Some(name) = f.name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name;
        }
        match f.arguments {
            Some(Value::String(piece)) => call.arguments.push_str(&piece),
            Some(Value::Null) | None => {}
            Some(other) => call.arguments.push_str(&other.to_string()),
        }
    }

    fn flush_calls(&mut self, out: &mut Vec<ChatChunk>) {
        if !self.calls.is_empty() {
            let calls = std::mem::take(&mut self.calls)
                .into_iter()
                .map(|(_, c)| c.complete())
                .collect();
            out.push(ChatChunk::ToolCalls(calls));
        }
    }

    fn finish_answer(&mut self, out: &mut Vec<ChatChunk>) {
        self.flush_calls(out);
        if let Some(u) = self.usage.take() {
            out.push(ChatChunk::Usage(u));
        }
        out.push(ChatChunk::Done {
            finish_reason: self.finish_reason.take(),
        });
        self.done = true;
    }

    /// The body ended: complete if a `finish_reason` was seen, else truncated.
    pub(crate) fn end(&mut self, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if self.finish_reason.is_some() {
            self.finish_answer(out);
            return Ok(());
        }
        Err(LlmError::Disconnected {
            backend: BACKEND.into(),
            reason: "the stream ended before \"data: [DONE]\"".into(),
        })
    }
}

fn stream_error(message: &str) -> LlmError {
    LlmError::StreamError {
        backend: BACKEND.into(),
        message: one_line(message, MAX_SERVER_TEXT),
    }
}

impl FrameDecoder<Event> for SseDecoder {
    fn feed(&mut self, frame: Event, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        self.event(&frame.event, &frame.data, out)
    }
    fn finish(&mut self, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        self.end(out)
    }
}

/// Decodes an SSE body (pieces of bytes; transport errors already mapped to
/// `LlmError`) into chunks. Used by the backend on the HTTP body and by the
/// benchmark on bytes in memory.
pub fn decode_sse<S, B>(
    body: S,
) -> DecodeStream<impl Stream<Item = Result<Event, LlmError>>, SseDecoder>
where
    S: Stream<Item = Result<B, LlmError>>,
    B: AsRef<[u8]>,
{
    DecodeStream::new(events(body, BACKEND), SseDecoder::new())
}

/// The events of an SSE body; framing failures are `LlmError::Protocol`
/// naming `backend`. Every SSE protocol's decoder reads these.
pub(crate) fn events<S, B>(
    body: S,
    backend: &'static str,
) -> impl Stream<Item = Result<Event, LlmError>>
where
    S: Stream<Item = Result<B, LlmError>>,
    B: AsRef<[u8]>,
{
    body.eventsource().map(move |r| {
        r.map_err(|e| match e {
            EventStreamError::Transport(e) => e,
            EventStreamError::Utf8(e) => LlmError::Protocol {
                backend: backend.into(),
                message: format!("the event stream is not valid UTF-8 ({e})"),
            },
            EventStreamError::Parser(e) => LlmError::Protocol {
                backend: backend.into(),
                message: format!(
                    "the event stream is not valid SSE (at {:?})",
                    e.input.chars().take(60).collect::<String>()
                ),
            },
        })
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use serde_json::json;

    /// Runs the full byte-level path on in-memory pieces.
    fn decode(pieces: &[&str]) -> Vec<Result<ChatChunk, LlmError>> {
        let owned: Vec<Result<Vec<u8>, LlmError>> =
            pieces.iter().map(|p| Ok(p.as_bytes().to_vec())).collect();
        let mut s = decode_sse(futures_util::stream::iter(owned));
        let mut out = Vec::new();
        while let Some(Some(item)) = s.next().now_or_never() {
            out.push(item);
        }
        out
    }

    fn ev(v: Value) -> String {
        format!("data: {v}\n\n")
    }

    fn delta(d: Value) -> String {
        ev(json!({"choices":[{"index":0,"delta":d,"finish_reason":null}]}))
    }

    fn finish(reason: &str) -> String {
        ev(json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}))
    }

    fn ok(items: Vec<Result<ChatChunk, LlmError>>) -> Vec<ChatChunk> {
        items.into_iter().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn cached_prompt_tokens_are_read_from_the_usage_details() {
        let body = [
            delta(json!({"content":"ok"})),
            finish("stop"),
            ev(
                json!({"choices":[],"usage":{"prompt_tokens":90,"completion_tokens":3,
                "prompt_tokens_details":{"cached_tokens":64}}}),
            ),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let usage = ok(decode(&[&body])).into_iter().find_map(|c| match c {
            ChatChunk::Usage(u) => Some(u),
            _ => None,
        });
        assert_eq!(
            usage,
            Some(Usage {
                prompt_tokens: 90,
                completion_tokens: 3,
                cache_read_tokens: 64,
                ..Usage::default()
            })
        );
    }

    #[test]
    fn content_reasoning_usage_and_done_in_order() {
        let body = [
            delta(json!({"role":"assistant","content":null})),
            delta(json!({"reasoning_content":"think "})),
            delta(json!({"reasoning":"more"})),
            delta(json!({"content":"Hi"})),
            delta(json!({"content":" there"})),
            finish("stop"),
            ev(json!({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let expected = vec![
            ChatChunk::Thinking("think ".into()),
            ChatChunk::Thinking("more".into()),
            ChatChunk::Text("Hi".into()),
            ChatChunk::Text(" there".into()),
            ChatChunk::Usage(Usage {
                prompt_tokens: 5,
                completion_tokens: 2,
                ..Usage::default()
            }),
            ChatChunk::Done {
                finish_reason: Some("stop".into()),
            },
        ];
        assert_eq!(ok(decode(&[&body])), expected);
        // Any split point (inside events, inside multi-byte chars) decodes alike.
        for cut in (0..body.len()).filter(|c| body.is_char_boundary(*c)) {
            assert_eq!(
                ok(decode(&[&body[..cut], &body[cut..]])),
                expected,
                "cut {cut}"
            );
        }
    }

    #[test]
    fn tool_call_fragments_are_assembled_by_index() {
        let body = [
            delta(json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":""}}]})),
            delta(json!({"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"bad","arguments":"{oops"}}]})),
            delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]})),
            delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"th\":\"/x\"}"}}]})),
            delta(json!({"tool_calls":[{"index":2,"id":"c3","function":{"name":"noargs"}}]})),
            finish("tool_calls"),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let out = ok(decode(&[&body]));
        let ChatChunk::ToolCalls(calls) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(calls.len(), 3);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("c1", "read")
        );
        assert_eq!(calls[0].arguments, json!({"path":"/x"}));
        assert_eq!(calls[1].arguments, Value::String("{oops".into()));
        assert_eq!(calls[2].arguments, json!({}));
        assert_eq!(
            out[1],
            ChatChunk::Done {
                finish_reason: Some("tool_calls".into())
            }
        );
    }

    #[test]
    fn calls_without_index_or_id_still_assemble() {
        let body = [
            delta(json!({"tool_calls":[{"function":{"name":"a","arguments":"{\"x\":"}}]})),
            delta(json!({"tool_calls":[{"function":{"arguments":"1}"}}]})),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let out = ok(decode(&[&body]));
        let ChatChunk::ToolCalls(calls) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(calls[0].arguments, json!({"x":1}));
        assert!(calls[0].id.starts_with("call_"));
        assert_eq!(
            out[1],
            ChatChunk::Done {
                finish_reason: None
            }
        );
    }

    #[test]
    fn errors_garbage_and_truncation() {
        let out = decode(&[
            &delta(json!({"content":"a"})),
            "data: {\"error\":{\"message\":\"context full\",\"code\":500}}\n\n",
        ]);
        assert_eq!(out[0].as_ref().unwrap(), &ChatChunk::Text("a".into()));
        let e = out[1].as_ref().unwrap_err();
        assert!(
            matches!(e, LlmError::StreamError { .. }) && e.to_string().contains("context full"),
            "{e}"
        );
        assert_eq!(out.len(), 2);

        let out = decode(&["data: {not json\n\n"]);
        assert!(matches!(out[0], Err(LlmError::Protocol { .. })), "{out:?}");

        let out = decode(&["event: error\ndata: {\"message\":\"boom\"}\n\n"]);
        assert!(out[0].as_ref().unwrap_err().to_string().contains("boom"));

        let out = decode(&[&delta(json!({"content":"a"}))]);
        assert!(
            matches!(out[1], Err(LlmError::Disconnected { .. })),
            "{out:?}"
        );

        // finish_reason seen but no [DONE]: complete anyway.
        let out = ok(decode(&[&delta(json!({"content":"a"})), &finish("length")]));
        assert_eq!(
            out[1],
            ChatChunk::Done {
                finish_reason: Some("length".into())
            }
        );
    }

    #[test]
    fn comments_and_crlf_are_ignored() {
        let body = ": keep-alive\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n";
        assert_eq!(
            ok(decode(&[body])),
            vec![
                ChatChunk::Text("x".into()),
                ChatChunk::Done {
                    finish_reason: None
                }
            ]
        );
    }
}
