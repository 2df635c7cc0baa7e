//! Stream decoding throughput: a large Ollama NDJSON body and a large OpenAI
//! SSE body, decoded into `ChatChunk`s through the same stream adapters the
//! backends put on the HTTP body (`decode_ndjson`, `decode_sse`).
//!
//! Two ways of cutting the body into network pieces:
//! - `mixed`: sizes cycling 97, 1460, 4096, 16384 bytes — lines and events
//!   split anywhere, many per piece (a busy or buffered connection);
//! - `per_message`: one NDJSON line / SSE event per piece (token-by-token
//!   streaming, what a local server usually does).
//!
//! Run: `cargo bench --bench decode -- --warm-up-time 1 --measurement-time 3`
//! Results: docs/performance.md ("Stream decoding").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::{FutureExt, Stream, StreamExt};
use navi::llm::ndjson::decode_ndjson;
use navi::llm::sse::decode_sse;
use navi::llm::{ChatChunk, LlmError};
use serde_json::json;
use std::hint::black_box;

/// Content messages per body (plus the closing ones).
const MESSAGES: usize = 20_000;

const WORDS: [&str; 8] = [
    " the",
    " quick",
    " brown",
    " fox",
    " jumps",
    " over",
    " ünïcode",
    "\n",
];

fn ndjson_lines() -> Vec<String> {
    let mut lines = Vec::with_capacity(MESSAGES + 1);
    for i in 0..MESSAGES {
        let word = WORDS[i % WORDS.len()];
        let message = if i < MESSAGES / 5 {
            json!({"role": "assistant", "content": "", "thinking": word})
        } else {
            json!({"role": "assistant", "content": word})
        };
        let line = json!({"model": "qwen3:8b", "created_at": "2025-06-01T12:00:00.123456789Z",
                          "message": message, "done": false});
        lines.push(format!("{line}\n"));
    }
    let done = json!({"model": "qwen3:8b", "created_at": "2025-06-01T12:00:09.1Z",
        "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
        "total_duration": 9_000_000_000u64, "load_duration": 1_000_000, "prompt_eval_count": 1200,
        "prompt_eval_duration": 100_000_000, "eval_count": MESSAGES, "eval_duration": 8_000_000_000u64});
    lines.push(format!("{done}\n"));
    lines
}

fn sse_events() -> Vec<String> {
    let event = |delta: serde_json::Value, finish: serde_json::Value| {
        let v = json!({"id": "chatcmpl-9f2c", "object": "chat.completion.chunk", "created": 1_750_000_000,
            "model": "qwen3-8b-q4_k_m.gguf", "system_fingerprint": "b5000-abcdef",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let mut events = Vec::with_capacity(MESSAGES + 4);
    events.push(event(
        json!({"role": "assistant", "content": null}),
        json!(null),
    ));
    let calls = 50;
    for i in 0..MESSAGES - calls * 3 {
        let word = WORDS[i % WORDS.len()];
        let delta = if i < MESSAGES / 5 {
            json!({ "reasoning_content": word })
        } else {
            json!({ "content": word })
        };
        events.push(event(delta, json!(null)));
    }
    for c in 0..calls {
        events.push(event(
            json!({"tool_calls": [{"index": c, "id": format!("call_{c}"), "type": "function",
                                   "function": {"name": "read_file", "arguments": ""}}]}),
            json!(null),
        ));
        for piece in ["{\"path\": \"/src/", "main.rs\", \"lines\"", ": [1, 200]}"] {
            events.push(event(
                json!({"tool_calls": [{"index": c, "function": {"arguments": piece}}]}),
                json!(null),
            ));
        }
    }
    events.push(event(json!({}), json!("tool_calls")));
    events.push(format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-9f2c", "object": "chat.completion.chunk", "created": 1_750_000_000,
               "model": "qwen3-8b-q4_k_m.gguf", "choices": [],
               "usage": {"prompt_tokens": 1200, "completion_tokens": MESSAGES, "total_tokens": MESSAGES + 1200}})
    ));
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// The body cut at sizes cycling through typical network read sizes.
fn mixed_pieces(messages: &[String]) -> Vec<Vec<u8>> {
    let body: Vec<u8> = messages.concat().into_bytes();
    let sizes = [97, 1460, 4096, 16384];
    let mut pieces = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < body.len() {
        let end = (at + sizes[i % sizes.len()]).min(body.len());
        pieces.push(body[at..end].to_vec());
        at = end;
        i += 1;
    }
    pieces
}

fn per_message_pieces(messages: &[String]) -> Vec<Vec<u8>> {
    messages.iter().map(|m| m.clone().into_bytes()).collect()
}

/// Polls a stream over in-memory pieces to the end (never pending).
fn count<S: Stream<Item = Result<ChatChunk, LlmError>> + Unpin>(mut s: S) -> usize {
    let mut n = 0;
    while let Some(Some(item)) = s.next().now_or_never() {
        match item {
            Ok(chunk) => {
                black_box(&chunk);
                n += 1;
            }
            Err(e) => panic!("decode failed: {e}"),
        }
    }
    n
}

fn input(pieces: &[Vec<u8>]) -> impl Stream<Item = Result<&[u8], LlmError>> {
    futures_util::stream::iter(pieces.iter().map(|p| Ok(p.as_slice())))
}

fn bench(c: &mut Criterion) {
    let lines = ndjson_lines();
    let events = sse_events();
    let cases: [(&str, Vec<Vec<u8>>, bool); 4] = [
        ("ndjson/mixed", mixed_pieces(&lines), true),
        ("ndjson/per_message", per_message_pieces(&lines), true),
        ("sse/mixed", mixed_pieces(&events), false),
        ("sse/per_message", per_message_pieces(&events), false),
    ];
    let mut group = c.benchmark_group("decode");
    for (name, pieces, ndjson) in &cases {
        let decode = |p: &[Vec<u8>]| {
            if *ndjson {
                count(decode_ndjson(input(p)))
            } else {
                count(decode_sse(input(p)))
            }
        };
        let chunks = decode(pieces);
        let bytes: usize = pieces.iter().map(Vec::len).sum();
        eprintln!(
            "{name}: {chunks} chunks from {bytes} bytes in {} pieces",
            pieces.len()
        );
        group.throughput(Throughput::Elements(chunks as u64));
        group.bench_function(*name, |b| b.iter(|| decode(black_box(pieces))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
