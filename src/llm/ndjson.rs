//! Ollama's `/api/chat` stream: one JSON object per line (NDJSON).
//!
//! Invariants:
//! - Lines may be split across network pieces and a piece may hold many
//!   lines; the decoder carries the unfinished tail between pieces.
//! - Every line is either decoded, or the stream fails with
//!   `LlmError::Protocol` (malformed) or `LlmError::StreamError` (an
//!   `{"error": …}` line). Nothing is skipped silently except blank lines.
//! - `done: true` yields `Usage` (when counts are present) and then `Done`;
//!   anything after it is ignored. A body that ends before `done: true`
//!   yields `LlmError::Disconnected`.
//! - Tool calls arrive whole (arguments are a JSON object) and are emitted as
//!   they arrive, possibly over several `ToolCalls` chunks; a call without an
//!   `id` gets a generated `call_<n>` id.

use super::decode::{FrameDecoder, generated_call_id};
use super::http::{MAX_SERVER_TEXT, json_error_message, one_line};
use super::{ChatChunk, LlmError, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

const BACKEND: &str = "Ollama";

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Arguments as Ollama sends them (an object). A string is parsed as JSON;
/// if that fails the raw text is kept so the agent can report it.
fn normalise_arguments(v: Value) -> Value {
    match v {
        Value::Null => Value::Object(Default::default()),
        Value::String(raw) if raw.trim().is_empty() => Value::Object(Default::default()),
        Value::String(raw) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
        other => other,
    }
}

/// Push decoder for Ollama NDJSON. See the module docs.
#[derive(Debug, Default)]
pub struct NdjsonDecoder {
    /// The unfinished last line of the previous piece(s).
    tail: Vec<u8>,
    done: bool,
}

impl NdjsonDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decodes a piece of the body, appending chunks to `out`.
    pub(crate) fn push(
        &mut self,
        mut bytes: &[u8],
        out: &mut Vec<ChatChunk>,
    ) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if !self.tail.is_empty() {
            match bytes.iter().position(|&b| b == b'\n') {
                None => {
                    self.tail.extend_from_slice(bytes);
                    return Ok(());
                }
                Some(nl) => {
                    self.tail.extend_from_slice(&bytes[..nl]);
                    bytes = &bytes[nl + 1..];
                    let line = std::mem::take(&mut self.tail);
                    self.line(&line, out)?;
                    if self.done {
                        return Ok(());
                    }
                }
            }
        }
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            self.line(&bytes[..nl], out)?;
            if self.done {
                return Ok(());
            }
            bytes = &bytes[nl + 1..];
        }
        self.tail.extend_from_slice(bytes);
        Ok(())
    }

    /// The body ended. A final line without a newline is still decoded.
    pub(crate) fn finish(&mut self, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        let tail = std::mem::take(&mut self.tail);
        if !tail.iter().all(u8::is_ascii_whitespace) && self.line(&tail, out).is_err() {
            return Err(disconnected("the connection ended in the middle of a line"));
        }
        if self.done {
            Ok(())
        } else {
            Err(disconnected(
                "the stream ended without the final \"done\": true message",
            ))
        }
    }

    fn line(&mut self, raw: &[u8], out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        let trimmed = raw.trim_ascii();
        if trimmed.is_empty() {
            return Ok(());
        }
        let line: Line = serde_json::from_slice(trimmed).map_err(|e| LlmError::Protocol {
            backend: BACKEND.into(),
            message: format!(
                "invalid NDJSON line ({e}): {}",
                one_line(&String::from_utf8_lossy(trimmed), 120)
            ),
        })?;
        if let Some(err) = line.error.as_ref().filter(|e| !e.is_null()) {
            let message = json_error_message(&serde_json::json!({ "error": err }))
                .unwrap_or_else(|| err.to_string());
            return Err(LlmError::StreamError {
                backend: BACKEND.into(),
                message: one_line(&message, MAX_SERVER_TEXT),
            });
        }
        if let Some(msg) = line.message {
            if let Some(t) = msg.thinking.filter(|t| !t.is_empty()) {
                out.push(ChatChunk::Thinking(t));
            }
            if let Some(c) = msg.content.filter(|c| !c.is_empty()) {
                out.push(ChatChunk::Text(c));
            }
            if let Some(calls) = msg.tool_calls.filter(|c| !c.is_empty()) {
                let calls = calls
                    .into_iter()
                    .map(|c| ToolCall {
                        id: c
                            .id
                            .filter(|id| !id.is_empty())
                            .unwrap_or_else(generated_call_id),
                        name: c.function.name,
                        arguments: normalise_arguments(c.function.arguments),
                    })
                    .collect();
                out.push(ChatChunk::ToolCalls(calls));
            }
        }
        if line.done {
            self.done = true;
            if line.prompt_eval_count.is_some() || line.eval_count.is_some() {
                out.push(ChatChunk::Usage(Usage {
                    prompt_tokens: line.prompt_eval_count.unwrap_or(0),
                    completion_tokens: line.eval_count.unwrap_or(0),
                    ..Usage::default()
                }));
            }
            out.push(ChatChunk::Done {
                finish_reason: line.done_reason,
            });
        }
        Ok(())
    }
}

fn disconnected(reason: &str) -> LlmError {
    LlmError::Disconnected {
        backend: BACKEND.into(),
        reason: reason.into(),
    }
}

impl<B: AsRef<[u8]>> FrameDecoder<B> for NdjsonDecoder {
    fn feed(&mut self, frame: B, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        self.push(frame.as_ref(), out)
    }
    fn finish(&mut self, out: &mut Vec<ChatChunk>) -> Result<(), LlmError> {
        NdjsonDecoder::finish(self, out)
    }
}

/// Decodes an NDJSON body (pieces of bytes, transport errors already mapped)
/// into chunks. Used by the backend on the HTTP body and by the benchmark on
/// bytes in memory.
pub fn decode_ndjson<S, B>(body: S) -> super::decode::DecodeStream<S, NdjsonDecoder>
where
    S: futures_util::Stream<Item = Result<B, LlmError>>,
    B: AsRef<[u8]>,
{
    super::decode::DecodeStream::new(body, NdjsonDecoder::new())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode_pieces(pieces: &[&[u8]]) -> (Vec<ChatChunk>, Result<(), LlmError>) {
        let mut d = NdjsonDecoder::new();
        let mut out = Vec::new();
        for p in pieces {
            if let Err(e) = d.push(p, &mut out) {
                return (out, Err(e));
            }
        }
        let r = d.finish(&mut out);
        (out, r)
    }

    const STREAM: &str = concat!(
        r#"{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
        "\n",
        r#"{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}"#,
        "\n",
        r#"{"model":"m","message":{"role":"assistant","content":"lo ünïcode"},"done":false}"#,
        "\n",
        r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":12,"eval_count":3}"#,
        "\n"
    );

    fn expected() -> Vec<ChatChunk> {
        vec![
            ChatChunk::Thinking("hmm".into()),
            ChatChunk::Text("Hel".into()),
            ChatChunk::Text("lo ünïcode".into()),
            ChatChunk::Usage(Usage {
                prompt_tokens: 12,
                completion_tokens: 3,
                ..Usage::default()
            }),
            ChatChunk::Done {
                finish_reason: Some("stop".into()),
            },
        ]
    }

    #[test]
    fn whole_stream_in_one_piece() {
        let (out, r) = decode_pieces(&[STREAM.as_bytes()]);
        r.unwrap();
        assert_eq!(out, expected());
    }

    #[test]
    fn every_split_point_gives_the_same_chunks() {
        let bytes = STREAM.as_bytes();
        for cut in 0..bytes.len() {
            let (out, r) = decode_pieces(&[&bytes[..cut], &bytes[cut..]]);
            r.unwrap();
            assert_eq!(out, expected(), "cut at {cut}");
        }
        // byte by byte (splits inside multi-byte UTF-8 too)
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        let (out, r) = decode_pieces(&singles);
        r.unwrap();
        assert_eq!(out, expected());
    }

    #[test]
    fn crlf_and_blank_lines_are_tolerated() {
        let s = STREAM.replace('\n', "\r\n\r\n");
        let (out, r) = decode_pieces(&[s.as_bytes()]);
        r.unwrap();
        assert_eq!(out, expected());
    }

    #[test]
    fn tool_calls_with_and_without_ids() {
        let line = json!({"message":{"role":"assistant","content":"","tool_calls":[
            {"id":"abc","function":{"index":0,"name":"read","arguments":{"path":"/x"}}},
            {"function":{"name":"list","arguments":{}}},
            {"function":{"name":"bad","arguments":"{not json"}},
            {"function":{"name":"strjson","arguments":"{\"a\":1}"}}
        ]},"done":false});
        let s = format!("{line}\n{}\n", json!({"done":true}));
        let (out, r) = decode_pieces(&[s.as_bytes()]);
        r.unwrap();
        let ChatChunk::ToolCalls(calls) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(calls[0].id, "abc");
        assert_eq!(calls[0].arguments, json!({"path":"/x"}));
        assert!(calls[1].id.starts_with("call_"));
        assert_ne!(calls[1].id, calls[2].id);
        assert_eq!(calls[2].arguments, Value::String("{not json".into()));
        assert_eq!(calls[3].arguments, json!({"a":1}));
        assert_eq!(
            out[1],
            ChatChunk::Done {
                finish_reason: None
            }
        );
    }

    #[test]
    fn error_line_is_a_stream_error() {
        let s = concat!(
            r#"{"message":{"content":"a"},"done":false}"#,
            "\n",
            r#"{"error":"out of memory"}"#,
            "\n"
        );
        let (out, r) = decode_pieces(&[s.as_bytes()]);
        assert_eq!(out, vec![ChatChunk::Text("a".into())]);
        let e = r.unwrap_err();
        assert!(matches!(e, LlmError::StreamError { .. }));
        assert!(e.to_string().contains("out of memory"), "{e}");
    }

    #[test]
    fn garbage_is_a_protocol_error_and_truncation_a_disconnect() {
        let (_, r) = decode_pieces(&[b"{\"message\":{\"content\":\"a\"}}\nnot json\n"]);
        let e = r.unwrap_err();
        assert!(matches!(e, LlmError::Protocol { .. }), "{e}");
        assert!(e.to_string().contains("not json"), "{e}");

        let (_, r) = decode_pieces(&[b"{\"message\":{\"content\":1}}\n"]);
        assert!(matches!(r, Err(LlmError::Protocol { .. })));

        let (out, r) = decode_pieces(&[b"{\"message\":{\"content\":\"a\"}}\n{\"message\":{\"con"]);
        assert_eq!(out, vec![ChatChunk::Text("a".into())]);
        let e = r.unwrap_err();
        assert!(matches!(e, LlmError::Disconnected { .. }), "{e}");

        let (_, r) = decode_pieces(&[b"{\"message\":{\"content\":\"a\"}}\n"]);
        let e = r.unwrap_err();
        assert!(e.to_string().contains("without the final"), "{e}");
    }

    #[test]
    fn final_line_without_newline_and_trailing_data_after_done() {
        let (out, r) = decode_pieces(&[b"{\"done\":true,\"done_reason\":\"length\"}"]);
        r.unwrap();
        assert_eq!(
            out,
            vec![ChatChunk::Done {
                finish_reason: Some("length".into())
            }]
        );
        let (out, r) = decode_pieces(&[b"{\"done\":true}\ngarbage after\n"]);
        r.unwrap();
        assert_eq!(out.len(), 1);
    }
}
