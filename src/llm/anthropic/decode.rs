//! Anthropic Messages streams: SSE events `message_start`,
//! `content_block_start` / `_delta` / `_stop`, `message_delta`,
//! `message_stop`, `ping` and `error`, dispatched on the data's `type`.
//!
//! Invariants:
//! - Text and thinking are emitted as their deltas arrive; a thinking block
//!   is emitted whole as `Reasoning` at its `content_block_stop`, with its
//!   signature (or, redacted, its payload) and exactly the text streamed.
//! - A `tool_use` block's `input_json_delta` pieces are joined and the call
//!   is emitted complete at its stop (empty input: `{}`; invalid JSON:
//!   `Value::String(raw)`).
//! - `Usage` (input + cache read + cache creation as the prompt) and `Done`
//!   (the stop reason as navi names it: `length`, `tool_calls`, `stop`)
//!   come at `message_stop`; a body that ends before it is `Disconnected`.
//! - `message_start` and `ping` emit nothing, so an `error` event that
//!   comes before any content is the first item (and retried when it is
//!   `overloaded_error` or `rate_limit_error`).
//! - Data that is not this protocol's (OpenAI `choices` chunks, `[DONE]`)
//!   is `WrongProtocol`; unknown event types are ignored.
use crate::llm::decode::{DecodeStream, FrameDecoder};
use crate::llm::http::{MAX_SERVER_TEXT, one_line};
use crate::llm::{ChatChunk, LlmError, Thinking, ToolCall, Usage};
use eventsource_stream::Event;
use futures_util::Stream;
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) const BACKEND: &str = "Anthropic Messages API";

enum Open {
    Text,
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Default)]
pub struct AnthropicDecoder {
    blocks: BTreeMap<u64, Open>,
    usage: Usage,
    /// `input_tokens`: the prompt after the last cache mark, without what
    /// was read from or written to the cache.
    uncached: u64,
    stop_reason: Option<String>,
    done: bool,
    /// Where the stream came from, for messages.
    url: String,
}

impl AnthropicDecoder {
    pub(crate) fn new(url: &str) -> Self {
        AnthropicDecoder {
            url: url.to_string(),
            ..Default::default()
        }
    }

    fn wrong(&self, detail: &str) -> LlmError {
        LlmError::WrongProtocol {
            url: self.url.clone(),
            expected: BACKEND.into(),
            detail: detail.into(),
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(v) = n("input_tokens") {
            self.uncached = v;
        }
        if let Some(v) = n("cache_read_input_tokens") {
            self.usage.cache_read_tokens = v;
        }
        if let Some(v) = n("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = v;
        }
        if let Some(v) = n("output_tokens") {
            self.usage.completion_tokens = v;
        }
        // Usage::prompt_tokens is the whole prompt; Anthropic counts the
        // cached parts apart from `input_tokens`.
        self.usage.prompt_tokens =
            self.uncached + self.usage.cache_read_tokens + self.usage.cache_write_tokens;
    }

    fn event(&mut self, data: &str, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            return Err(self.wrong("it sent \"data: [DONE]\", an OpenAI chat completions stream"));
        }
        let v: Value = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            backend: BACKEND.into(),
            message: format!("an event is not JSON ({e}): {}", one_line(data, 120)),
        })?;
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            let what = if v.get("choices").is_some() {
                "its events are OpenAI chat completions chunks"
            } else {
                "its events have no \"type\""
            };
            return Err(self.wrong(what));
        };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let b = v.get("content_block").cloned().unwrap_or(Value::Null);
                let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let open = match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let t = s("text");
                        if !t.is_empty() {
                            out.push(ChatChunk::Text(t));
                        }
                        Open::Text
                    }
                    Some("thinking") => {
                        let t = s("thinking");
                        if !t.is_empty() {
                            out.push(ChatChunk::Thinking(t.clone()));
                        }
                        Open::Thinking {
                            text: t,
                            signature: s("signature"),
                        }
                    }
                    Some("redacted_thinking") => Open::Redacted(s("data")),
                    Some("tool_use") => {
                        let input = b
                            .get("input")
                            .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()));
                        Open::Tool {
                            id: s("id"),
                            name: s("name"),
                            json: input.map(Value::to_string).unwrap_or_default(),
                        }
                    }
                    _ => Open::Other,
                };
                self.blocks.insert(index, open);
            }
            "content_block_delta" => self.delta(index, &v, out),
            "content_block_stop" => self.stop(index, out),
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => {
                for i in self.blocks.keys().copied().collect::<Vec<_>>() {
                    self.stop(i, out);
                }
                out.push(ChatChunk::Usage(self.usage));
                out.push(ChatChunk::Done {
                    finish_reason: Some(finish_reason(self.stop_reason.as_deref())),
                });
                self.done = true;
            }
            "error" => return Err(stream_error(v.get("error").unwrap_or(&v))),
            _ => {}
        }
        Ok(())
    }

    fn delta(&mut self, index: u64, v: &Value, out: &mut Vec<ChatChunk>) {
        let d = v.get("delta").cloned().unwrap_or(Value::Null);
        let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let open = self.blocks.entry(index).or_insert(Open::Other);
        match (d.get("type").and_then(Value::as_str), open) {
            (Some("text_delta"), _) => {
                let t = s("text");
                if !t.is_empty() {
                    out.push(ChatChunk::Text(t));
                }
            }
            (Some("thinking_delta"), Open::Thinking { text, .. }) => {
                let t = s("thinking");
                text.push_str(&t);
                if !t.is_empty() {
                    out.push(ChatChunk::Thinking(t));
                }
            }
            (Some("signature_delta"), Open::Thinking { signature, .. }) => {
                signature.push_str(&s("signature"));
            }
            (Some("input_json_delta"), Open::Tool { json, .. }) => {
                json.push_str(&s("partial_json"));
            }
            _ => {}
        }
    }

    fn stop(&mut self, index: u64, out: &mut Vec<ChatChunk>) {
        match self.blocks.remove(&index) {
            Some(Open::Thinking { text, signature }) => {
                out.push(ChatChunk::Reasoning(Thinking {
                    text,
                    signature: Some(signature).filter(|s| !s.is_empty()),
                    ..Thinking::default()
                }));
            }
            Some(Open::Redacted(data)) if !data.is_empty() => {
                out.push(ChatChunk::Reasoning(Thinking {
                    encrypted: Some(data),
                    ..Thinking::default()
                }));
            }
            Some(Open::Tool { id, name, json }) => {
                let raw = json.trim();
                let arguments = if raw.is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
                };
                out.push(ChatChunk::ToolCalls(vec![ToolCall {
                    id,
                    name,
                    arguments,
                }]));
            }
            _ => {}
        }
    }
}

/// A stop reason as navi names it (the agent looks for `length`).
fn finish_reason(r: Option<&str>) -> String {
    match r {
        Some("max_tokens") => "length",
        Some("tool_use") => "tool_calls",
        Some("end_turn" | "stop_sequence") | None => "stop",
        Some(other) => other,
    }
    .to_string()
}

/// An `error` event: overloaded and rate-limited are retryable like their
/// HTTP statuses (when nothing came before them); anything else is the
/// server's word, as an OpenAI-compatible stream's error is.
pub(crate) fn stream_error(e: &Value) -> LlmError {
    let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| e.to_string());
    let message = one_line(&message, MAX_SERVER_TEXT);
    crate::llm::error::coded_stream_error(
        BACKEND,
        kind,
        message,
        &["rate_limit_error"],
        &["overloaded_error"],
    )
}

impl FrameDecoder<Event> for AnthropicDecoder {
    fn feed(&mut self, frame: Event, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        if frame.data.is_empty() {
            return Ok(());
        }
        self.event(&frame.data, out)
    }

    fn finish(&mut self, _out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        Err(LlmError::Disconnected {
            backend: BACKEND.into(),
            reason: "the stream ended before \"message_stop\"".into(),
        })
    }
}

/// Decodes an Anthropic SSE body into chunks.
pub fn decode_messages<S, B>(
    body: S,
    url: String,
) -> DecodeStream<impl Stream<Item = Result<Event, LlmError>>, AnthropicDecoder>
where
    S: Stream<Item = Result<B, LlmError>>,
    B: AsRef<[u8]>,
{
    DecodeStream::new(
        crate::llm::sse::events(body, BACKEND),
        AnthropicDecoder::new(&url),
    )
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
