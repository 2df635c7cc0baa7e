#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use futures_util::{FutureExt, StreamExt};
use serde_json::json;

fn ev(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}

fn decode(pieces: &[String]) -> Vec<Result<ChatChunk, LlmError>> {
    let owned: Vec<Result<Vec<u8>, LlmError>> =
        pieces.iter().map(|p| Ok(p.as_bytes().to_vec())).collect();
    decode_responses(futures_util::stream::iter(owned), "http://h/v1".into())
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap()
}

#[test]
fn reasoning_text_and_a_split_function_call() {
    let pieces = vec![
        ev(
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
                  "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "summary_index": 0}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "First."}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "summary_index": 1}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "Second."}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": 0,
                  "item": {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA",
                           "summary": [{"type": "summary_text", "text": "First."},
                                       {"type": "summary_text", "text": "Second."}]}}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 1,
                  "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        ),
        ev(
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Let me read."}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 2,
                  "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9",
                           "name": "read", "arguments": ""}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\":"}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"a\"}"}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": 2,
                  "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9",
                           "name": "read", "arguments": "{\"path\":\"a\"}"}}),
        ),
        ev(
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                  "usage": {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 800},
                            "output_tokens": 30}}}),
        ),
    ];
    let got: Vec<ChatChunk> = decode(&pieces).into_iter().map(Result::unwrap).collect();
    assert_eq!(
        got,
        vec![
            ChatChunk::Thinking("First.".into()),
            ChatChunk::Thinking("\n\n".into()),
            ChatChunk::Thinking("Second.".into()),
            ChatChunk::Reasoning(Thinking {
                text: "First.\n\nSecond.".into(),
                encrypted: Some("gAAAA".into()),
                id: Some("rs_1".into()),
                ..Thinking::default()
            }),
            ChatChunk::Text("Let me read.".into()),
            ChatChunk::ToolCalls(vec![ToolCall {
                id: "call_9".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
            }]),
            ChatChunk::Usage(Usage {
                prompt_tokens: 900,
                completion_tokens: 30,
                cache_read_tokens: 800,
                cache_write_tokens: 0,
            }),
            ChatChunk::Done {
                finish_reason: Some("tool_calls".into())
            },
        ]
    );
}

#[test]
fn reasoning_given_only_whole_is_streamed_then_kept() {
    let got: Vec<ChatChunk> = decode(&[
        ev(json!({"type": "response.output_item.done",
                  "item": {"id": "rs_2", "type": "reasoning", "encrypted_content": "E",
                           "summary": [{"type": "summary_text", "text": "Quick."}]}})),
        ev(json!({"type": "response.incomplete", "response": {"status": "incomplete",
                  "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 5, "output_tokens": 9}}})),
    ])
    .into_iter()
    .map(Result::unwrap)
    .collect();
    assert_eq!(got[0], ChatChunk::Thinking("Quick.".into()));
    assert!(
        matches!(&got[1], ChatChunk::Reasoning(t) if t.text == "Quick." && t.id.as_deref() == Some("rs_2"))
    );
    assert_eq!(
        got.last(),
        Some(&ChatChunk::Done {
            finish_reason: Some("length".into())
        })
    );
}

#[test]
fn failures_and_other_protocols() {
    let failed = decode(&[ev(
        json!({"type": "response.failed", "response": {"status": "failed",
        "error": {"code": "server_error", "message": "boom"}}}),
    )]);
    let e = failed[0].as_ref().unwrap_err();
    assert!(
        matches!(e, LlmError::StreamError { .. }) && e.to_string().contains("server_error: boom"),
        "{e}"
    );
    let limited = decode(&[ev(
        json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}),
    )]);
    assert!(limited[0].as_ref().unwrap_err().is_retryable());
    let cut = decode(&[ev(
        json!({"type": "response.output_text.delta", "item_id": "m", "delta": "Hi"}),
    )]);
    assert!(matches!(
        cut[1].as_ref().unwrap_err(),
        LlmError::Disconnected { .. }
    ));
    let chat = decode(&["data: {\"choices\":[]}\n\n".to_string()]);
    let e = chat[0].as_ref().unwrap_err().to_string();
    assert!(
        e.contains("OpenAI Responses API") && e.contains("chat completions"),
        "{e}"
    );
}
