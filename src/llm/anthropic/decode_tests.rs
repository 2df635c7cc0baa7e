#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use futures_util::{FutureExt, StreamExt};
use serde_json::json;

fn ev(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn decode(pieces: &[String]) -> Vec<Result<ChatChunk, LlmError>> {
    let owned: Vec<Result<Vec<u8>, LlmError>> =
        pieces.iter().map(|p| Ok(p.as_bytes().to_vec())).collect();
    decode_messages(futures_util::stream::iter(owned), "http://h/v1".into())
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap()
}

fn start() -> String {
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "model": "claude-x", "stop_reason": null,
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100,
                      "cache_read_input_tokens": 2000, "output_tokens": 1}}}),
    )
}

#[test]
fn thinking_text_and_a_split_tool_call() {
    let pieces = vec![
        start(),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        ev("ping", json!({"type": "ping"})),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "look."}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "text_delta", "text": "Reading."}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2,
                   "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2,
                   "delta": {"type": "input_json_delta", "partial_json": ".txt\"}"}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                   "usage": {"output_tokens": 42}}),
        ),
        ev("message_stop", json!({"type": "message_stop"})),
    ];
    let got: Vec<ChatChunk> = decode(&pieces).into_iter().map(Result::unwrap).collect();
    assert_eq!(
        got,
        vec![
            ChatChunk::Thinking("Let me ".into()),
            ChatChunk::Thinking("look.".into()),
            ChatChunk::Reasoning(Thinking {
                text: "Let me look.".into(),
                signature: Some("EqQB".into()),
                ..Thinking::default()
            }),
            ChatChunk::Text("Reading.".into()),
            ChatChunk::ToolCalls(vec![ToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
            }]),
            ChatChunk::Usage(Usage {
                prompt_tokens: 2110,
                completion_tokens: 42,
                cache_read_tokens: 2000,
                cache_write_tokens: 100,
            }),
            ChatChunk::Done {
                finish_reason: Some("tool_calls".into())
            },
        ]
    );
}

#[test]
fn redacted_thinking_and_max_tokens() {
    let pieces = vec![
        start(),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "redacted_thinking", "data": "ENC=="}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 5}}),
        ),
        ev("message_stop", json!({"type": "message_stop"})),
    ];
    let got: Vec<ChatChunk> = decode(&pieces).into_iter().map(Result::unwrap).collect();
    assert_eq!(
        got[0],
        ChatChunk::Reasoning(Thinking {
            encrypted: Some("ENC==".into()),
            ..Thinking::default()
        })
    );
    assert_eq!(
        got.last(),
        Some(&ChatChunk::Done {
            finish_reason: Some("length".into())
        })
    );
}

#[test]
fn errors_are_typed_and_overload_is_retryable() {
    let overloaded = decode(&[
        start(),
        ev(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]);
    let e = overloaded[0].as_ref().unwrap_err();
    assert!(
        matches!(e, LlmError::Overloaded { .. }) && e.is_retryable(),
        "{e}"
    );
    let invalid = decode(&[ev(
        "error",
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad\nthing"}}),
    )]);
    let e = invalid[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("invalid_request_error: bad thing"), "{e}");
    // Cut before message_stop.
    let cut = decode(&[
        start(),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "Hi"}}),
        ),
    ]);
    assert_eq!(cut[0].as_ref().unwrap(), &ChatChunk::Text("Hi".into()));
    assert!(matches!(
        cut[1].as_ref().unwrap_err(),
        LlmError::Disconnected { .. }
    ));
}

#[test]
fn another_protocol_is_named_as_such() {
    let chat = decode(&["data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n".to_string()]);
    let e = chat[0].as_ref().unwrap_err().to_string();
    assert!(
        e.contains("Anthropic Messages API") && e.contains("OpenAI chat completions"),
        "{e}"
    );
    let done = decode(&["data: [DONE]\n\n".to_string()]);
    assert!(matches!(
        done[0].as_ref().unwrap_err(),
        LlmError::WrongProtocol { .. }
    ));
}
