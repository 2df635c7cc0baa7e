//! OpenAI Responses streams: SSE events named by their data's `type`
//! (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
//! `response.function_call_arguments.delta`, `response.output_item.added` /
//! `.done`, `response.completed`, …).
//!
//! Invariants:
//! - Text and reasoning (summary or raw reasoning text) are emitted as their
//!   deltas arrive; a new summary part after the first is preceded by a
//!   blank line. A reasoning item is emitted whole as `Reasoning` at its
//!   `output_item.done`, with its id, its `encrypted_content` and exactly
//!   the text streamed for it (text the server gave only in the finished
//!   item is streamed first).
//! - A function call is emitted complete at its `output_item.done` (its
//!   `call_id` as the call's id); arguments are parsed only then (empty:
//!   `{}`; invalid JSON: `Value::String(raw)`).
//! - `response.completed` / `response.incomplete` give `Usage` (input,
//!   cached input, output) and `Done` (`length` for max_output_tokens,
//!   `tool_calls` when there were calls, else `stop`); a body that ends
//!   before them is `Disconnected`. `response.failed` and `error` are
//!   errors (rate limits and overload typed as such).
//! - Data that is not this protocol's (chat completions chunks, `[DONE]`)
//!   is `WrongProtocol`; unknown event types are ignored.
use crate::llm::decode::{DecodeStream, FrameDecoder};
use crate::llm::http::{MAX_SERVER_TEXT, one_line};
use crate::llm::{ChatChunk, LlmError, Thinking, ToolCall, Usage};
use eventsource_stream::Event;
use futures_util::Stream;
use serde_json::Value;
use std::collections::HashMap;

pub(crate) const BACKEND: &str = "OpenAI Responses API";

#[derive(Default)]
struct Call {
    call_id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
pub struct ResponsesDecoder {
    /// Open function calls by item id.
    calls: HashMap<String, Call>,
    /// Reasoning text streamed so far, by item id.
    reasoning: HashMap<String, String>,
    any_call: bool,
    done: bool,
    url: String,
}

fn s(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

impl ResponsesDecoder {
    pub(crate) fn new(url: &str) -> Self {
        ResponsesDecoder {
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

    fn thinking(&mut self, item: &str, t: String, out: &mut Vec<ChatChunk>) {
        if t.is_empty() {
            return;
        }
        self.reasoning
            .entry(item.to_string())
            .or_default()
            .push_str(&t);
        out.push(ChatChunk::Thinking(t));
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
            return Err(self.wrong(if v.get("choices").is_some() {
                "its events are OpenAI chat completions chunks"
            } else {
                "its events have no \"type\""
            }));
        };
        let item_id = s(&v, "/item_id");
        match kind {
            "response.output_text.delta" => {
                let d = s(&v, "/delta");
                if !d.is_empty() {
                    out.push(ChatChunk::Text(d));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.thinking(&item_id, s(&v, "/delta"), out);
            }
            "response.reasoning_summary_part.added" => {
                let first = v.get("summary_index").and_then(Value::as_u64).unwrap_or(0) == 0;
                if !first && self.reasoning.get(&item_id).is_some_and(|t| !t.is_empty()) {
                    self.thinking(&item_id, "\n\n".into(), out);
                }
            }
            "response.output_item.added"
                if v.pointer("/item/type").and_then(Value::as_str) == Some("function_call") =>
            {
                self.calls.insert(
                    s(&v, "/item/id"),
                    Call {
                        call_id: s(&v, "/item/call_id"),
                        name: s(&v, "/item/name"),
                        arguments: s(&v, "/item/arguments"),
                    },
                );
            }
            "response.function_call_arguments.delta" => {
                if let Some(c) = self.calls.get_mut(&item_id) {
                    c.arguments.push_str(&s(&v, "/delta"));
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(c) = self.calls.get_mut(&item_id) {
                    c.arguments = s(&v, "/arguments");
                }
            }
            "response.output_item.done" => self.item_done(v.get("item").unwrap_or(&v), out),
            "response.completed" | "response.incomplete" => {
                let r = v.get("response").unwrap_or(&v);
                let n = |p: &str| r.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                out.push(ChatChunk::Usage(Usage {
                    prompt_tokens: n("/usage/input_tokens"),
                    completion_tokens: n("/usage/output_tokens"),
                    cache_read_tokens: n("/usage/input_tokens_details/cached_tokens"),
                    cache_write_tokens: 0,
                }));
                let reason = s(r, "/incomplete_details/reason");
                let finish =
                    if kind == "response.incomplete" && reason.contains("max_output_tokens") {
                        "length"
                    } else if kind == "response.incomplete" {
                        if reason.is_empty() {
                            "incomplete"
                        } else {
                            reason.as_str()
                        }
                    } else if self.any_call {
                        "tool_calls"
                    } else {
                        "stop"
                    };
                out.push(ChatChunk::Done {
                    finish_reason: Some(finish.to_string()),
                });
                self.done = true;
            }
            "response.failed" => {
                let e = v.pointer("/response/error").cloned().unwrap_or(Value::Null);
                return Err(stream_error(&e));
            }
            "error" => return Err(stream_error(v.get("error").unwrap_or(&v))),
            _ => {}
        }
        Ok(())
    }

    fn item_done(&mut self, item: &Value, out: &mut Vec<ChatChunk>) {
        let id = s(item, "/id");
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let open = self.calls.remove(&id).unwrap_or_default();
                let given = s(item, "/arguments");
                let raw = if given.is_empty() {
                    open.arguments
                } else {
                    given
                };
                let raw = raw.trim();
                let arguments = if raw.is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
                };
                let call_id = Some(s(item, "/call_id"))
                    .filter(|c| !c.is_empty())
                    .unwrap_or(open.call_id);
                let name = Some(s(item, "/name"))
                    .filter(|n| !n.is_empty())
                    .unwrap_or(open.name);
                self.any_call = true;
                out.push(ChatChunk::ToolCalls(vec![ToolCall {
                    id: call_id,
                    name,
                    arguments,
                }]));
            }
            Some("reasoning") => {
                if !self.reasoning.contains_key(&id) {
                    // Text the server gave only in the finished item.
                    let parts: Vec<String> = ["summary", "content"]
                        .iter()
                        .filter_map(|k| item.get(*k).and_then(Value::as_array))
                        .flatten()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .map(String::from)
                        .collect();
                    self.thinking(&id, parts.join("\n\n"), out);
                }
                let text = self.reasoning.remove(&id).unwrap_or_default();
                let encrypted = Some(s(item, "/encrypted_content")).filter(|e| !e.is_empty());
                out.push(ChatChunk::Reasoning(Thinking {
                    text,
                    encrypted,
                    id: Some(id).filter(|i| !i.is_empty()),
                    ..Thinking::default()
                }));
            }
            _ => {}
        }
    }
}

/// A failure the stream reported (`response.failed`'s error, `error`).
fn stream_error(e: &Value) -> LlmError {
    let code = e
        .get("code")
        .and_then(Value::as_str)
        .or_else(|| e.get("type").and_then(Value::as_str))
        .unwrap_or("");
    let message = one_line(
        &e.get("message")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| e.to_string()),
        MAX_SERVER_TEXT,
    );
    crate::llm::error::coded_stream_error(
        BACKEND,
        code,
        message,
        &["rate_limit_exceeded"],
        &["server_is_overloaded", "overloaded_error"],
    )
}

impl FrameDecoder<Event> for ResponsesDecoder {
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
            reason: "the stream ended before \"response.completed\"".into(),
        })
    }
}

/// Decodes a Responses SSE body into chunks.
pub fn decode_responses<S, B>(
    body: S,
    url: String,
) -> DecodeStream<impl Stream<Item = Result<Event, LlmError>>, ResponsesDecoder>
where
    S: Stream<Item = Result<B, LlmError>>,
    B: AsRef<[u8]>,
{
    DecodeStream::new(
        crate::llm::sse::events(body, BACKEND),
        ResponsesDecoder::new(&url),
    )
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
